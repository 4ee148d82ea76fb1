# Shared helpers of the integration tests: one simulated fabric (ibsim) with the real OpenSM
# and libosmlaas.so, in its own network namespace, torn down opensm first.
# Environment (set by ctest): LAAS_PLUGIN_DIR, LAAS_AUDIT, LAAS_TOPOGEN, LAAS_WORK.
set -euo pipefail

UMAD2SIM=${UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}

# Re-runs the calling script inside a fresh network namespace (ibsim's control socket is an
# abstract name); without unshare, a per-test socket name keeps fabrics apart.
# LAAS_OWN_PIDS=1 (as root): in a PID namespace of its own too, the script its init: when it
# ends, however it ends (a failure, ctest's timeout killing unshare), the kernel kills every
# process it left (daemons a test starts, such as slurmctld, and their children); /proc is the
# namespace's, so pgrep sees only the test's processes.
laas_enter_namespace() {
  if [ -z "${LAAS_IN_NS:-}" ]; then
    # As root, a plain network namespace keeps real uids (tests switch to other users);
    # otherwise a user namespace makes unshare possible without privileges.
    if [ "$(id -u)" = 0 ] && [ "${LAAS_OWN_PIDS:-0}" = 1 ] &&
      unshare -n -p -f --mount-proc --kill-child true 2>/dev/null; then
      LAAS_IN_NS=1 LAAS_PID_NS=1 exec unshare -n -p -f --mount-proc --kill-child "$0" "$@"
    fi
    if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
      LAAS_IN_NS=1 exec unshare -n "$0" "$@"
    fi
    if unshare -rn true 2>/dev/null; then
      LAAS_IN_NS=1 exec unshare -rn "$0" "$@"
    fi
    export IBSIM_SOCKNAME="laas-test-$$"
    export LAAS_IN_NS=socket
  fi
}

log() { echo "[$(date +%T)] $*"; }
die() {
  echo "FAIL: $*" >&2
  exit 1
}

# laas_setup NAME: a clean work directory, cleanup on exit.
laas_setup() {
  WORK="${LAAS_WORK:-/tmp/laas-it}/$1"
  rm -rf "$WORK"
  mkdir -p "$WORK/state"
  cd "$WORK"
  SIM_PID=""
  OSM_PID=""
  trap laas_teardown EXIT
}

# stop_opensm: SIGTERM, then SIGKILL after 5 s (OpenSM can hang once its fabric is gone).
stop_opensm() {
  if [ -n "$OSM_PID" ] && kill -0 "$OSM_PID" 2>/dev/null; then
    kill -TERM "$OSM_PID" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$OSM_PID" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL "$OSM_PID" 2>/dev/null || true
    wait "$OSM_PID" 2>/dev/null || true
  fi
  OSM_PID=""
}

laas_teardown() {
  local rc=$?
  local pid
  # Helpers a test started in the background (LAAS_EXTRA_PIDS), e.g. a parser server.
  for pid in ${LAAS_EXTRA_PIDS:-}; do kill "$pid" 2>/dev/null || true; done
  stop_opensm
  if [ -n "$SIM_PID" ] && kill -0 "$SIM_PID" 2>/dev/null; then
    kill -TERM "$SIM_PID" 2>/dev/null || true
    sleep 0.5
    kill -KILL "$SIM_PID" 2>/dev/null || true
    wait "$SIM_PID" 2>/dev/null || true
  fi
  # Table dumps of big fabrics are large: keep them only when something failed.
  if [ $rc -eq 0 ] && [ -z "${LAAS_KEEP:-}" ]; then rm -f "$WORK"/lfts.* "$WORK"/paths.*; fi
  if [ $rc -ne 0 ] && [ -f "$WORK/osm.log" ]; then
    echo "---- last laas lines of $WORK/osm.log ----" >&2
    grep -E 'laas|ERR' "$WORK/osm.log" | tail -20 >&2 || true
  fi
  exit $rc
}

# start_fabric NETFILE [ibsim options]
# wait_ibsim_ready: until the ibsim started as $SIM_PID says it is ready (or dies).
wait_ibsim_ready() {
  for _ in $(seq 1 100); do
    grep -q 'simulator ready' ibsim.log 2>/dev/null && break
    kill -0 "$SIM_PID" 2>/dev/null || die "ibsim exited: $(tail -3 ibsim.log)"
    sleep 0.2
  done
  sleep 0.5
}

start_fabric() {
  local net=$1
  shift
  ibsim -s "$@" -n "$net" </dev/null >ibsim.log 2>&1 &
  SIM_PID=$!
  wait_ibsim_ready
}

# sim CMD...: a diagnostic tool attached to the simulated fabric at $SIM_HOST.
sim() { LD_PRELOAD="$UMAD2SIM" "$@"; }

# node_port_guid NODE: the port GUID an SM on NODE runs on (a switch: its port 0), read from the
# node itself over a directed route of length zero.
node_port_guid() {
  SIM_HOST="$1" LD_PRELOAD="$UMAD2SIM" smpquery -D nodeinfo 0 2>/dev/null |
    sed -n 's/^PortGuid:\.*//p' | head -1
}

# start_opensm [extra opensm.conf lines]: OpenSM with the plugin, routing laas then ftree.
# QOS=1 adds `qos TRUE` (OpenSM programs the SL2VL tables: the first-hop drop) and makes
# audit_layout read them back and audit them.
start_opensm() {
  if [ "${QOS:-0}" = 1 ]; then
    [ -n "${LAAS_SL2VL_DUMP:-}" ] || die "QOS=1 needs LAAS_SL2VL_DUMP"
    export AUDIT_SL2VL=1
    set -- "$@" "qos TRUE"
  fi
  cat >laas.yaml <<EOC
state_dir: $WORK/state
socket: ${LAAS_SOCKET_PATH:-$WORK/laas.sock}
socket_group: ""
socket_read_group: "${LAAS_READ_GROUP:-}"
tenants_poll_ms: ${POLL_MS:-300}
${LAAS_YAML_EXTRA:-}
EOC
  {
    echo "event_plugin_name osmlaas"
    echo "event_plugin_options $WORK/laas.yaml"
    echo "routing_engine laas,ftree"
    echo "force_log_flush TRUE"
    echo "sweep_interval 0"
    # The plugin manages partitions by default: never let a test reach /etc/opensm's file.
    echo "partition_config_file $WORK/partitions.conf"
    for line in "$@"; do echo "$line"; done
  } >opensm.conf
  # OpenSM's own cache (guid2lid: which LID each port had) per test: a shared
  # /var/cache/opensm lets a test running alongside rewrite it, and a restarted OpenSM then gives
  # ports other LIDs -- the tables of a restart differ for a reason that is not the plugin's.
  mkdir -p "$WORK/osm.cache" "$WORK/osm.tmp"
  OSM_CACHE_DIR="$WORK/osm.cache" OSM_TMP_DIR="$WORK/osm.tmp" \
    LD_LIBRARY_PATH="$LAAS_PLUGIN_DIR" LD_PRELOAD="$UMAD2SIM" \
    opensm -F "$WORK/opensm.conf" -f "$WORK/osm.log" </dev/null >opensm.out 2>&1 &
  OSM_PID=$!
}

# start_file_sm: a plain upstream OpenSM, no plugin, routing with its `file` engine what
# laas-sdn (or laas-sdn-plan) writes: lfts_file $WORK/sdn.lfts, partition_config_file
# $WORK/sdn.partitions (named sdn.*: the teardown drops lfts.* of passing runs). no_fallback:
# when the file is missing or rejected, no other engine routes (minhop would route every host
# to every other); the switches keep the tables they have. Its pid in OSM_PID and osm.pid.
start_file_sm() {
  {
    echo "routing_engine file,no_fallback"
    echo "lfts_file $WORK/sdn.lfts"
    echo "partition_config_file $WORK/sdn.partitions"
    echo "force_log_flush TRUE"
    echo "sweep_interval 0"
  } >opensm.conf
  mkdir -p osm.cache osm.tmp
  OSM_CACHE_DIR="$WORK/osm.cache" OSM_TMP_DIR="$WORK/osm.tmp" LD_PRELOAD="$UMAD2SIM" \
    opensm -F "$WORK/opensm.conf" -f "$WORK/osm.log" </dev/null >>opensm.out 2>&1 &
  OSM_PID=$!
  echo "$OSM_PID" >osm.pid
}

# start_tenant_sm NAME HOST [opensm.conf lines...]: a tenant's root runs its own OpenSM (no
# plugin, sweep_interval 0) on HOST's port, with its own cache, tmp directory and log
# ($WORK/NAME.log); its pid in TENANT_SM_PID, killed at teardown too.
start_tenant_sm() {
  local name=$1 host=$2
  shift 2
  mkdir -p "$WORK/$name.tmp" "$WORK/$name.cache"
  {
    for line in "$@"; do echo "$line"; done
    echo "force_log_flush TRUE"
    echo "sweep_interval 0"
  } >"$WORK/$name.conf"
  OSM_TMP_DIR="$WORK/$name.tmp" OSM_CACHE_DIR="$WORK/$name.cache" SIM_HOST="$host" \
    LD_PRELOAD="$UMAD2SIM" opensm -F "$WORK/$name.conf" -f "$WORK/$name.log" </dev/null \
    >"$WORK/$name.out" 2>&1 &
  TENANT_SM_PID=$!
  LAAS_EXTRA_PIDS="${LAAS_EXTRA_PIDS:-} $TENANT_SM_PID"
}

count_log() {
  local n
  n=$(grep -c -- "$1" osm.log 2>/dev/null) || true
  echo "${n:-0}"
}

# wait_log PATTERN COUNT TIMEOUT_S
wait_log() {
  local deadline=$((SECONDS + $3))
  while [ "$(count_log "$1")" -lt "$2" ]; do
    [ $SECONDS -lt $deadline ] || die "timed out waiting for '$1' (x$2) in osm.log"
    kill -0 "$OSM_PID" 2>/dev/null || die "opensm exited: $(tail -5 opensm.out)"
    sleep 0.3
  done
}

# set_tenants "A:10" "B:6" ...: rewrites tenants.yaml atomically, waits for the re-route
# to reach the switches (noticed by the plugin's watcher, or SIGHUP when POLL_MS=0).
set_tenants() {
  local before_applied
  before_applied=$(count_log 'laas: forwarding tables applied')
  {
    for t in "$@"; do printf -- '- name: %s\n  hosts: %s\n' "${t%%:*}" "${t##*:}"; done
  } >state/tenants.yaml.new
  mv state/tenants.yaml.new state/tenants.yaml
  # Without the plugin's watcher (POLL_MS=0), SIGHUP makes OpenSM heavy-sweep and re-route.
  if [ "${POLL_MS:-300}" = 0 ]; then kill -HUP "$OSM_PID"; fi
  wait_log 'laas: forwarding tables applied' $((before_applied + 1)) "${WAIT_S:-45}"
}

# start_demo [opensm.conf lines]: the paper's demo tree xgft(2;4,8;1,4) under ibsim, OpenSM
# with the plugin attached at SW_L2_0, until the first tables are in the switches.
# PUBLIC_SOCKET=1 puts the socket in a fresh 0755 directory under /tmp ($SOCKDIR, exported as
# LAAS_SOCKET_PATH): tests acting as other uids reach it even when the work directory is private.
# Its read-only group (LAAS_READ_GROUP) is then gid 65534's: a uid acting with --regid=65534
# may read.
start_demo() {
  export SIM_HOST=SW_L2_0
  "$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
  start_fabric fabric.net
  if [ "${PUBLIC_SOCKET:-0}" = 1 ]; then
    SOCKDIR=$(mktemp -d /tmp/laas-socket.XXXXXX)
    chmod 0755 "$SOCKDIR"
    export LAAS_SOCKET_PATH="$SOCKDIR/laas.sock"
    LAAS_READ_GROUP=${LAAS_READ_GROUP:-$(getent group 65534 | cut -d: -f1)}
    export LAAS_READ_GROUP
  fi
  start_opensm "$@"
  wait_log 'laas: forwarding tables applied' 1 45
}

# snapshot TAG: read the fabric and the tables back from the switches, audit them.
snapshot() {
  local tag=$1
  sim ibnetdiscover >"disc.$tag" 2>"disc.$tag.err" || die "ibnetdiscover failed"
  sim dump_fts >"lfts.$tag" 2>"lfts.$tag.err" || die "dump_fts failed"
  cp state/allocations.json "alloc.$tag.json"
  local rc=0
  "$LAAS_AUDIT" --fabric "disc.$tag" --lfts "lfts.$tag" --allocations "alloc.$tag.json" \
    >"audit.$tag" 2>&1 || rc=$?
  tail -n 8 "audit.$tag"
  [ $rc -eq 0 ] || die "laas-audit ($tag) exit $rc: $(grep -E 'VIOLATION|laas-audit' "audit.$tag" | head -5)"
  check_balance "$tag"
}

# check_balance TAG: in audit.TAG, every tenant's worst shift-permutation link load equals its
# private tree's.
check_balance() {
  awk '/^balance / { if ($(NF) != $8) { print; bad = 1 } } END { exit bad }' "audit.$1" ||
    die "a tenant's balance differs from its private tree ($1)"
}

# tenant_paths TAG TENANT: the tenant's traced paths in snapshot TAG.
tenant_paths() {
  "$LAAS_AUDIT" --fabric "disc.$1" --lfts "lfts.$1" --allocations "alloc.$1.json" --paths "$2" \
    >"paths.$2.$1"
  ! grep -q UNREACHABLE "paths.$2.$1" || die "tenant $2 has unreachable pairs in $1"
}

# lft_entries LIDFILE LFTS: "switch-GUID lid port" for every LID of LIDFILE (decimal, one a
# line) in dump_fts output LFTS, sorted: the entries two snapshots must agree on.
lft_entries() {
  awk 'NR == FNR { want[sprintf("0x%04x", $1)] = 1; next }
    /^Unicast lids/ { for (i = 1; i < NF; i++) if ($i == "guid") sw = $(i + 1); next }
    /^0x/ { if (tolower($1) in want) print sw, tolower($1), $2 }' "$1" "$2" | sort
}

# host_lid DISCFILE NAME: a CA's LID from ibnetdiscover output.
host_lid() {
  awk -v want="\"$2\"" '/^Ca/ { found = ($NF == want); next }
    found && /# lid / { for (i = 1; i < NF; i++) if ($i == "lid") { print $(i + 1); exit } }' "$1"
}

# start_fabric_console NETFILE: ibsim with its console (no -n) on a FIFO this shell holds
# open read-write on fd 7, so writes never block and ibsim never sees end-of-file. Faults
# are then injected with `console 'Unlink "node"[port]'` (ReLink, Clear: see ibsim's help).
start_fabric_console() {
  mkfifo sim.in
  exec 7<>sim.in
  ibsim -s -N 16384 -S 2048 -P 65536 "$1" <&7 >ibsim.log 2>&1 &
  SIM_PID=$!
  wait_ibsim_ready
}
console() {
  echo "$*" >&7
  sleep 0.3
}

# heavy_sweep WHAT: SIGHUP (a heavy sweep), wait for the tables to reach the switches, and
# check that the laas engine, not a fallback, configured them. Only osm.log's lines after the
# signal count: a sweep a fault's trap started may be between "laas tables configured" and
# "forwarding tables applied" when the signal goes, and its "applied" alone is not this sweep's.
heavy_sweep() {
  local from deadline others='(minhop|updn|ftree|dnup|lash|dor|torus-2QoS|nue) tables configured'
  from=$(wc -l <osm.log)
  kill -HUP "$OSM_PID"
  deadline=$((SECONDS + ${WAIT_S:-45}))
  until tail -n +"$((from + 1))" osm.log | awk '/laas tables configured on all switches/ { c = 1 }
      c && /laas: forwarding tables applied/ { found = 1; exit } END { exit !found }'; do
    ! tail -n +"$((from + 1))" osm.log | grep -q -E "$others" || die "a fallback engine routed after '$1'"
    ! tail -n +"$((from + 1))" osm.log | grep -q 'cannot build fwd tables' ||
      die "laas refused to route after '$1'"
    [ $SECONDS -lt $deadline ] ||
      die "the heavy sweep after '$1' was not routed by laas (no 'laas tables configured' then 'forwarding tables applied' within ${WAIT_S:-45} s)"
    kill -0 "$OSM_PID" 2>/dev/null || die "opensm exited: $(tail -5 opensm.out)"
    sleep 0.3
  done
  sleep 0.5
  ! tail -n +"$((from + 1))" osm.log | grep -q -E "$others" || die "a fallback engine routed after '$1'"
  ! grep -q 'cannot build fwd tables' osm.log || die "laas refused to route after '$1'"
}

# held_hosts: the name of every host a tenant holds, one a line, from the service's own view
# (`tenant show` of every placed tenant). Checks built on it need it non-empty to mean anything.
held_hosts() {
  local sock=${LAAS_SOCKET_PATH:-$WORK/laas.sock} t
  "$LAASCTL" -s "$sock" --timeout 30 --json tenant list >held.list.json ||
    die "tenant list failed: $(head -c 300 held.list.json)"
  for t in $(jq -r '.[] | select(.state != "not placed") | .name' held.list.json); do
    "$LAASCTL" -s "$sock" --timeout 30 --json tenant show "$t" | jq -r '.hosts[].name' ||
      die "tenant show $t failed"
  done | sort -u
}

# audit_layout TAG: fabric and tables read back, audited against the plugin's intended tree.
# AUDIT_SL2VL=1 (OpenSM with qos TRUE) adds every switch's SL2VL tables (laas-sl2vl-dump):
# every pair is traced through them and they must match the first-hop drop plan.
# AUDIT_MFTS=1 adds the multicast tables (dump_fts -M): each tenant's groups on its own links.
audit_layout() {
  local tag=$1 rc=0 try
  local args=(--fabric "disc.$tag" --lfts "lfts.$tag" --allocations "alloc.$tag.json"
    --layout state/layout.json)
  sim ibnetdiscover >"disc.$tag" 2>"disc.$tag.err" || die "ibnetdiscover failed ($tag)"
  sim dump_fts >"lfts.$tag" 2>"lfts.$tag.err" || die "dump_fts failed ($tag)"
  cp state/allocations.json "alloc.$tag.json"
  [ "${AUDIT_MFTS:-0}" = 1 ] && args+=(--mfts "mfts.$tag")
  [ "${AUDIT_SL2VL:-0}" = 1 ] && args+=(--sl2vl "sl2vl.$tag")
  # OpenSM sends SL2VL and multicast tables after the unicast ones: read again while they lag.
  for try in 1 2 3 4 5; do
    rc=0
    if [ "${AUDIT_MFTS:-0}" = 1 ]; then
      sim dump_fts -M >"mfts.$tag" 2>"mfts.$tag.err" || die "dump_fts -M failed ($tag)"
    fi
    if [ "${AUDIT_SL2VL:-0}" = 1 ]; then
      sim "$LAAS_SL2VL_DUMP" --fabric "disc.$tag" >"sl2vl.$tag" 2>"sl2vl.$tag.err" ||
        die "laas-sl2vl-dump failed ($tag): $(tail -3 "sl2vl.$tag.err")"
    fi
    "$LAAS_AUDIT" "${args[@]}" >"audit.$tag" 2>&1 || rc=$?
    [ $rc -eq 1 ] && [ $try -lt 5 ] && grep -qE '^  (sl2vl-mismatch|mcast-[a-z-]*):' "audit.$tag" ||
      break
    sleep 1
  done
  [ $rc -eq 0 ] || die "laas-audit ($tag) exit $rc: $(grep -E 'VIOLATION|laas-audit|fabric' "audit.$tag" | head -5)"
}

# start_lab_tenants: ibsim on ./fabric.net with its console, OpenSM with the plugin, `ctl`
# (laasctl on this test's socket), and tenants a (8 hosts) and b (10) placed -- the starting
# point of the tests that break the lab tree pgft(2;8,4;1,4;1,2) around two tenants.
start_lab_tenants() {
  start_fabric_console fabric.net
  start_opensm
  wait_log 'laas: forwarding tables applied' 1 45
  ctl() { "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"; }
  ctl tenant add a --hosts 8 >/dev/null || die "tenant add a failed"
  ctl tenant add b --hosts 10 >/dev/null || die "tenant add b failed"
}

# tamper_free_route DISC LAASCTL...: on tenant a's leaf, a route to a free host on another leaf
# (up-port 1, whose spine routes every host down), set behind the SM's back with laas-lft-set (a
# directed SMP Set, as a tenant's root could without an M_Key). DISC: an ibnetdiscover file of
# the fabric; LAASCTL...: the command that asks the SM (laasctl with its socket). Sets LEAF,
# FREE, LEAF_LID, FREE_LID; logs what it changed.
tamper_free_route() {
  local disc=$1 a_host
  shift
  [ -x "${LAAS_LFT_SET:-}" ] || die "LAAS_LFT_SET (laas-lft-set) is not set"
  a_host=$("$@" --json tenant show a | jq -r '.hosts[0].name')
  LEAF=$("$@" --json host show "$a_host" | jq -r .leaf)
  FREE=$("$@" --json host list --state free | jq -r --arg l "$LEAF" '[.[] | select(.leaf != $l)][-1].name')
  FREE_LID=$("$@" --json host show "$FREE" | jq -r .lid)
  LEAF_LID=$(awk -v n="\"$LEAF\"" '/^Switch/ && index($0, "# " n) { for (i = 1; i < NF; i++) if ($i == "lid") print $(i + 1) }' "$disc")
  [ -n "$LEAF_LID" ] && [ "$FREE_LID" -gt 0 ] || die "cannot find the LIDs of $LEAF and $FREE"
  sim "$LAAS_LFT_SET" "$LEAF_LID" "$FREE_LID" 1 >tamper.out 2>&1 || die "laas-lft-set failed: $(cat tamper.out)"
  log "tampered: $LEAF (LID $LEAF_LID) now routes $FREE (LID $FREE_LID) to port 1: $(cat tamper.out)"
}
