# Two subnet managers on one simulated fabric: helpers sourced after lib.sh.
# SM N (1 or 2) is an OpenSM with the plugin attached at its own node (SIM_HOST), with its own
# opensmN.conf, laasN.yaml, osmN.log, OSM_TMP_DIR/OSM_CACHE_DIR (tmpN/, cacheN/), control socket
# $WORK/smN.sock and partitions file; both share the state directory $WORK/state.
# The diagnostics (sim, snapshot, audit_layout) attach at $SIM_HOST, which ha_setup sets to
# DIAG_HOST (default SW_L2_0; any node works, whether an SM runs there or not).
# Environment: HA_SWEEP (sweep_interval of both SMs, default 0), HA_POLL_MS (sminfo_polling_timeout,
# default 1000), HA_RETRIES (polling_retry_number, default 2), QOS=1 (qos TRUE on both),
# LAAS_YAML_EXTRA (lines added to both laasN.yaml; LAAS_YAML_EXTRA_N: to SM N's instead), POLL_MS (tenants_poll_ms, default 300),
# HA_OWN_STATE_DIR=1 (each SM its own state_dir, $WORK/stateN: shared through etcd),
# PLUGIN_DIR_N (the directory of SM N's libosmlaas.so, default LAAS_PLUGIN_DIR: another release's),
# HA_ENGINE (routing_engine, default laas,ftree; one without laas runs OpenSM without the plugin),
# HA_APPLIED (the log line wait_master waits for after "Entering MASTER state"),
# HA_KILL_QUIESCE_S (how long kill_sm pauses the other SM before the kill: see ha_quiesce).
# Per SM N (read through eval): OSM_PID_N, SM_FROM_N (osmN.log's line count when SM N was last
# started: OpenSM appends to its log across restarts), SM_NODE_N, SM_PRIO_N (its sm_priority).
# shellcheck disable=SC2034
OSM_PID_1="" OSM_PID_2="" SM_FROM_1=0 SM_FROM_2=0

# ha_setup NAME: laas_setup, then a teardown that ends both OpenSMs before ibsim.
ha_setup() {
  laas_setup "$1"
  export SIM_HOST=${DIAG_HOST:-SW_L2_0}
  trap ha_teardown EXIT
}

ha_teardown() {
  local rc=$? n
  # An SM paused by ha_quiesce ends on SIGTERM like the other.
  case $HA_QUIESCED in "" | none) ;; *) kill -CONT "$HA_QUIESCED" 2>/dev/null || true ;; esac
  stop_sm 1
  stop_sm 2
  if [ $rc -ne 0 ]; then
    for n in 1 2; do
      [ -f "$WORK/osm$n.log" ] || continue
      echo "---- last SM-state and laas lines of $WORK/osm$n.log ----" >&2
      grep -E 'laas|ERR|Entering|state' "$WORK/osm$n.log" | tail -15 >&2 || true
    done
  fi
  # laas_teardown ends ibsim and keeps or drops the table dumps; it reads the exit status
  # (set +e: under errexit, `(exit 1)` would end this trap before ibsim is stopped).
  set +e
  (exit $rc)
  laas_teardown
}

sm_pid() { eval "echo \"\${OSM_PID_$1:-}\""; }
log_lines() { if [ -f "$WORK/osm$1.log" ]; then wc -l <"$WORK/osm$1.log"; else echo 0; fi; }

# start_sm N PRIORITY SIM_HOST [extra opensm.conf lines]: SM N with sm_priority PRIORITY at node
# SIM_HOST (a switch: its port 0, or a host, which then is a management host).
start_sm() {
  local n=$1 prio=$2 node=$3 qos=()
  shift 3
  [ -z "$(sm_pid "$n")" ] || die "SM $n is already running"
  if [ "${QOS:-0}" = 1 ]; then
    [ -n "${LAAS_SL2VL_DUMP:-}" ] || die "QOS=1 needs LAAS_SL2VL_DUMP"
    export AUDIT_SL2VL=1
    qos=("qos TRUE")
  fi
  mkdir -p "$WORK/tmp$n" "$WORK/cache$n"
  # The pair's SMs are listed by port GUID, as docs/ha.md says: management on both SMs from
  # the start, so nothing moves at failover (HA_NODES: the nodes the pair's SMs run on).
  local trusted="" node_guid
  for node_name in ${HA_NODES:-}; do
    node_guid=$(node_port_guid "$node_name")
    [ -n "$node_guid" ] || die "no port GUID for SM node $node_name"
    trusted+="${trusted:+, }\"$node_guid\""
  done
  # HA_OWN_STATE_DIR=1: each SM its own state directory (stateN/: `state_store: etcd` shares
  # the state through etcd, nothing else).
  local state_dir="$WORK/state"
  [ "${HA_OWN_STATE_DIR:-0}" = 1 ] && state_dir="$WORK/state$n" && mkdir -p "$state_dir"
  # LAAS_YAML_EXTRA_N: SM N's own lines instead of LAAS_YAML_EXTRA.
  local own="LAAS_YAML_EXTRA_$n"
  local extra=${!own:-${LAAS_YAML_EXTRA:-}}
  cat >"$WORK/laas$n.yaml" <<EOC
state_dir: $state_dir
socket: $WORK/sm$n.sock
socket_group: ""
socket_read_group: ""
tenants_poll_ms: ${POLL_MS:-300}
${trusted:+subnet_managers: [$trusted]}
$extra
EOC
  {
    # HA_ENGINE (default laas,ftree): another engine alone (e.g. ftree) runs without the plugin.
    if [[ ${HA_ENGINE:-laas,ftree} == laas* ]]; then
      echo "event_plugin_name osmlaas"
      echo "event_plugin_options $WORK/laas$n.yaml"
    fi
    echo "routing_engine ${HA_ENGINE:-laas,ftree}"
    echo "force_log_flush TRUE"
    echo "sweep_interval ${HA_SWEEP:-0}"
    echo "sm_priority $prio"
    echo "sminfo_polling_timeout ${HA_POLL_MS:-1000}"
    echo "polling_retry_number ${HA_RETRIES:-2}"
    echo "partition_config_file $WORK/partitions$n.conf"
  } >"$WORK/opensm$n.conf"
  # Extra lines replace the defaults of the same key (OpenSM would apply both, in order).
  for line in "${qos[@]}" "$@"; do
    sed -i "/^${line%% *} /d" "$WORK/opensm$n.conf"
    echo "$line" >>"$WORK/opensm$n.conf"
  done
  eval "SM_FROM_$n=$(log_lines "$n")"
  eval "SM_NODE_$n=$node"
  eval "SM_PRIO_$n=$(awk '$1 == "sm_priority" { print $2 }' "$WORK/opensm$n.conf")"
  local plugin_dir
  plugin_dir=$(eval "echo \"\${PLUGIN_DIR_$n:-$LAAS_PLUGIN_DIR}\"")
  OSM_TMP_DIR="$WORK/tmp$n" OSM_CACHE_DIR="$WORK/cache$n" SIM_HOST="$node" \
    LD_LIBRARY_PATH="$plugin_dir" LD_PRELOAD="$UMAD2SIM" \
    opensm -F "$WORK/opensm$n.conf" -f "$WORK/osm$n.log" </dev/null >>"$WORK/opensm$n.out" 2>&1 &
  eval "OSM_PID_$n=$!"
}

# ha_pair_up: the demo tree in ibsim, SM 1 (priority 15, at SW_L2_0) master, SM 2 (priority 8,
# at SW_L2_1) standby.
ha_pair_up() {
  "$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
  start_fabric fabric.net
  start_sm 1 15 SW_L2_0
  wait_master 1 60
  start_sm 2 8 SW_L2_1
  wait_standby 2 60
}

# kill_sm N: kill -9 (sets KILL_AT, the time of the kill, date +%s.%N), with the other SM paused
# around it (ha_quiesce, unless the caller did that already) and resumed once N is gone (reaped:
# its sockets closed), so that none of the other SM's requests is inside N when N dies. Under
# ibsim a request delivered to an SM that is then killed is never answered (umad2sim emulates no
# send timeout, where the kernel's MAD layer would time it out), and OpenSM waits for every
# outstanding SMP before it goes on with a sweep: a standby whose SMInfo poll was inside the
# killed master enters DISCOVERING and waits there forever (bench/plugin_routing_results.md,
# "DISCOVERING stall"; a fresh-clone CI run met it in integration.etcd_chaos when the pause was
# off by default). Such a poll is one the master had not answered yet, or one sent after the
# kill while the master was still exiting (a process killed with SIGKILL frees its memory before
# it closes its sockets: 0.3 s for 4 GiB).
# No fork between the caller's last step and the kill (a caller may time the kill to the
# microsecond): the PIDs are read by indirection, the time from bash's own clock.
kill_sm() {
  local var="OSM_PID_$1" pid
  pid=${!var}
  [ -n "$pid" ] || die "SM $1 is not running"
  [ -n "$HA_QUIESCED" ] || ha_quiesce "$1"
  # shellcheck disable=SC2034 # for the caller
  KILL_AT=$EPOCHREALTIME
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [ "$HA_QUIESCED" != none ]; then
    # (not a child of this shell: until it is gone)
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    kill -CONT "$HA_QUIESCED" 2>/dev/null || true
  fi
  HA_QUIESCED=""
  eval "OSM_PID_$1=''"
}

# ha_quiesce N: before a kill_sm N whose moment the caller times (a kill in the middle of a
# request): pauses the other SM (SIGSTOP) and waits HA_KILL_QUIESCE_S seconds (default 0.5; it
# must cover the time N takes to answer a poll; 0: no pause, to show the stall) so that N answers
# the polls it holds. kill_sm resumes it.
HA_QUIESCED=""
ha_quiesce() {
  local other_var="OSM_PID_$((3 - $1))" other
  other=${!other_var}
  HA_QUIESCED=none
  [ "${HA_KILL_QUIESCE_S:-0.5}" != 0 ] && [ -n "$other" ] || return 0
  kill -STOP "$other" 2>/dev/null || return 0
  HA_QUIESCED=$other
  sleep "${HA_KILL_QUIESCE_S:-0.5}"
}

# stop_sm N: SIGTERM, SIGKILL after 5 s (lib.sh's stop_opensm for SM N).
stop_sm() {
  local pid
  pid=$(sm_pid "$1")
  if [ -n "$pid" ]; then
    OSM_PID=$pid stop_opensm
    eval "OSM_PID_$1=''"
  fi
}

# check_sm N: SM N is running and loaded the plugin (OpenSM carries on without it, routing
# with the next engine, and a test would only time out).
check_sm() {
  local pid from
  pid=$(sm_pid "$1")
  from=$(eval "echo \$SM_FROM_$1")
  if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
    die "opensm $1 exited: $(tail -5 "$WORK/opensm$1.out")"
  fi
  if tail -n +$((from + 1)) "$WORK/osm$1.log" 2>/dev/null | grep >/dev/null 'cannot load plugin'; then
    die "opensm $1 did not load the plugin: $(grep -m1 'Failed to open event plugin' "$WORK/osm$1.log")"
  fi
}

# count_sm_log N PATTERN [FROM_LINE]: matching lines of osmN.log after line FROM_LINE (default 0).
count_sm_log() {
  local n
  n=$(tail -n +$((${3:-0} + 1)) "$WORK/osm$1.log" 2>/dev/null | grep -c -- "$2") || true
  echo "${n:-0}"
}

# wait_sm_log N PATTERN COUNT TIMEOUT_S [FROM_LINE]: until osmN.log has COUNT matching lines
# (after line FROM_LINE); fails when SM N exits.
wait_sm_log() {
  local deadline=$((SECONDS + $4))
  while [ "$(count_sm_log "$1" "$2" "${5:-0}")" -lt "$3" ]; do
    [ $SECONDS -lt $deadline ] || die "timed out waiting for '$2' (x$3) in osm$1.log"
    check_sm "$1"
    sleep 0.2
  done
}

# last_line_of N PATTERN [FROM_LINE]: the number of the last matching line of osmN.log after
# FROM_LINE, 0 if none.
last_line_of() {
  awk -v from="${3:-0}" -v pat="$2" 'NR > from && index($0, pat) { last = NR } END { print last + 0 }' \
    "$WORK/osm$1.log" 2>/dev/null || echo 0
}

# first_line_of N PATTERN [FROM_LINE]: the number of the first matching line of osmN.log after
# FROM_LINE, 0 if none.
first_line_of() {
  awk -v from="${3:-0}" -v pat="$2" 'NR > from && index($0, pat) { print NR; found = 1; exit }
    END { if (!found) print 0 }' "$WORK/osm$1.log" 2>/dev/null || echo 0
}

# wait_master N [TIMEOUT_S] [FROM_LINE]: until SM N's log shows "Entering MASTER state" and,
# after that line, "laas: forwarding tables applied" (HA_APPLIED: another line, e.g. for an SM
# without the plugin) (both after FROM_LINE, default: the line count when SM N was started).
# Sets MASTER_LINE and APPLIED_LINE (line numbers in osmN.log).
wait_master() {
  local n=$1 timeout=${2:-60} from deadline
  from=${3:-$(eval "echo \$SM_FROM_$n")}
  deadline=$((SECONDS + timeout))
  while :; do
    MASTER_LINE=$(last_line_of "$n" 'Entering MASTER state' "$from")
    if [ "$MASTER_LINE" -gt 0 ]; then
      APPLIED_LINE=$(last_line_of "$n" "${HA_APPLIED:-laas: forwarding tables applied}" "$MASTER_LINE")
      [ "$APPLIED_LINE" -gt 0 ] && break
    fi
    [ $SECONDS -lt $deadline ] || die "SM $n did not become master and apply tables in ${timeout}s"
    check_sm "$n"
    sleep 0.1
  done
}

# wait_standby N [TIMEOUT_S] [FROM_LINE]: until SM N's log shows "Entering STANDBY state".
wait_standby() {
  local from
  from=${3:-$(eval "echo \$SM_FROM_$1")}
  wait_sm_log "$1" 'Entering STANDBY state' 1 "${2:-60}" "$from"
}

# log_time N LINE: OpenSM's timestamp of line LINE of osmN.log ("Mon DD HH:MM:SS usec ..."),
# as seconds since the epoch with microseconds.
log_time() {
  local line sec mon day hms usec
  line=$(sed -n "$2p" "$WORK/osm$1.log")
  read -r mon day hms usec _ <<<"$line"
  sec=$(date -d "$mon $day $hms" +%s) || die "no timestamp in line $2 of osm$1.log: $line"
  echo "$sec.$usec"
}

# ctl N ARGS...: laasctl at SM N's socket.
ctl() {
  local n=$1
  shift
  "$LAASCTL" -s "$WORK/sm$n.sock" --timeout 30 "$@"
}

# tenant_names N: the sorted names SM N's `tenant list` gives, space-separated.
tenant_names() {
  ctl "$1" --json tenant list | jq -r '.[].name' | sort | tr '\n' ' '
}

# elapsed FROM TO: TO - FROM in seconds, 3 decimals.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# set_priority N P: SM N's sm_priority becomes P at once: opensmN.conf rewritten, then SIGHUP
# (OpenSM re-reads sm_priority, an option it may change at run time, at the start of the heavy
# sweep SIGHUP makes; a master then hands over to a standby of higher priority after that sweep,
# before it routes). A master whose priority rises re-routes (a heavy sweep); a standby whose
# priority rises sends trap 144 to the master (see take_back for what that does under ibsim).
set_priority() {
  local pid
  pid=$(sm_pid "$1")
  [ -n "$pid" ] || die "SM $1 is not running"
  sed -i "s/^sm_priority .*/sm_priority $2/" "$WORK/opensm$1.conf"
  eval "SM_PRIO_$1=$2"
  kill -HUP "$pid"
}

# ensure_master_priority M MIN: raise master M's sm_priority to 8 when it is below MIN, and wait
# for the heavy sweep (and re-route) that follows.
ensure_master_priority() {
  local from
  [ "$(eval "echo \$SM_PRIO_$1")" -ge "$2" ] && return 0
  from=$(log_lines "$1")
  set_priority "$1" 8
  wait_sm_log "$1" 'laas: forwarding tables applied' 1 60 "$from"
}

# restart_standby N NODE: SM N (not running) comes back as a standby of master 3-N: priority 1,
# below the master's (equal priorities are ordered by port GUID, the lower one wins: a standby
# that outranks the master takes over).
restart_standby() {
  local m=$((3 - $1))
  ensure_master_priority "$m" 2
  start_sm "$1" 1 "$2"
  wait_standby "$1" 60
}

# take_back N NODE: SM N (not running) comes back and becomes master; master M = 3-N hands over
# and becomes standby. Sets HANDOVER_AT (when the handover was asked for), MASTER_LINE and
# APPLIED_LINE (in osmN.log).
# On a real fabric N would simply be restarted with a higher priority: it enters STANDBY, sends
# trap 144 to the master (on every SMInfo poll while it outranks the master), the master
# heavy-sweeps and hands over. Under ibsim 0.10 that trap is never answered (ibsim drops every
# TrapRepress, and umad2sim emulates no send timeout), so the new master's first sweep waits for
# it forever (wait_for_pending_transactions) and never routes. So here N comes back below the
# master and polling seldom (it never outranks a master it polls: no trap), then the master
# lowers its own priority (set_priority + SIGHUP) and hands over: OpenSM's handover either way.
# HA_DIRECT_RETURN=1 restarts N with priority 15 instead (for a simulator that answers traps).
take_back() {
  local n=$1 node=$2 m=$((3 - $1)) from_m
  from_m=$(log_lines "$m")
  if [ "${HA_DIRECT_RETURN:-0}" = 1 ]; then
    HANDOVER_AT=$(date +%s.%N)
    start_sm "$n" 15 "$node"
  else
    ensure_master_priority "$m" 2
    start_sm "$n" 1 "$node" "sminfo_polling_timeout 600000"
    wait_standby "$n" 60
    from_m=$(log_lines "$m")
    # shellcheck disable=SC2034 # for the caller
    HANDOVER_AT=$(date +%s.%N)
    set_priority "$m" 0
  fi
  wait_master "$n" 60
  wait_sm_log "$m" 'Entering STANDBY state' 1 30 "$from_m"
  # N polls normally again when it is next demoted (set_priority's SIGHUP re-reads the file).
  sed -i "s/^sminfo_polling_timeout 600000\$/sminfo_polling_timeout ${HA_POLL_MS:-1000}/" "$WORK/opensm$n.conf"
}

# sl2vl_diff A B: the entries of two laas-sl2vl-dump files that differ, with their switch's LID
# (at most 6 lines).
sl2vl_diff() {
  diff <(awk '/^# SL2VL table/ { t = $NF } /^ports:/ { print "LID " t ": " $0 }' "$1") \
    <(awk '/^# SL2VL table/ { t = $NF } /^ports:/ { print "LID " t ": " $0 }' "$2") |
    grep '^[<>]' | head -6 || true
}
