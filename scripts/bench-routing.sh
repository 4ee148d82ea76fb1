#!/usr/bin/env bash
# bench-routing.sh [SPEC] : on one simulated fabric (default: the 11,664-host
# xgft(3;18,18,36;1,18,18)), in one run:
#  - the full routing time of OpenSM's ftree and of laas (first sweep, no tenant), and ratio;
#  - the wall time of `laasctl tenant add` (request sent to reply, tables on the switches) for
#    tenants of LAAS_BENCH_SIZES hosts (default 10 500 3000, added one after the other), then
#    of `tenant remove` of each, split into stages from OpenSM's log, with the LFT blocks sent;
#    with managed partitions (applied by the plugin; or by a heavy sweep as before), and
#    without (LAAS_BENCH_ROUNDS);
#  - OpenSM's peak resident memory with ftree and with the plugin (the difference is the plugin's);
#  - a round named ROUND-check (e.g. "managed-check") is ROUND with the switch check on
#    (switch_check_interval LAAS_BENCH_CHECK_S, default 300; every other round has it off): its
#    tenant changes run while the check reads, and after them the check's read rate is sampled
#    for LAAS_BENCH_CHECK_SAMPLE_S seconds (default 60), giving a full pass's time;
#  - a round named ROUND-lids (e.g. "managed-lids") is ROUND with OpenSM started on the LIDs of
#    laas-lid-order (numbered leaf by leaf, from ibnetdiscover): "managed managed-lids" gives
#    the LFT blocks a change sends with OpenSM's numbering and with the leaf order;
#  - a round named ROUND-hops (e.g. "managed-hops") is ROUND with OpenSM's hop matrices filled
#    at every routing run (LAAS_FILL_HOP_MATRICES), as before the plugin left them unfilled
#    when OpenSM's routing dumps are off: "managed-hops managed" is before and after in one run;
#  - a round named ROUND-noenforce (e.g. "managed-lids-noenforce") is ROUND with OpenSM's
#    part_enforce off: under ibsim, which keeps no enforcement bit, the cost of a change on
#    switches that keep them (see the round loop below);
#  - with LAAS_BENCH_FAILOVER=1, then a failover on the same fabric: two OpenSMs with the plugin
#    (tests/integration/lib_ha.sh: a master at SW_L2_0, a standby at SW_L2_1, one state
#    directory), a tenant of the largest size added, kill -9 of the master; the time from the
#    kill to the standby's tables applied, whether the standby sent the master's tables, and
#    both SMs' peak memory. Skipped, saying so, when the free memory cannot hold a second SM.
#    Then (LAAS_BENCH_FAILOVER_FTREE=1, the default) the same with two OpenSMs routing with
#    ftree, no plugin, and both pairs side by side: kill -9 to OpenSM's "SWITCHES CONFIGURED FOR
#    UNICAST" (every LFT block acknowledged; the state manager's VERBOSE lines, through
#    per_module_logging_file) and the LFT blocks each new master wrote (OpenSM's "Writing FT
#    block", osm_ucast_mgr.c at DEBUG; LAAS_BENCH_FAILOVER_BLOCKS=0 leaves that line out).
#    The standby is paused across the kill (LAAS_BENCH_KILL_QUIESCE_S, default 2 s; see
#    lib_ha.sh's kill_sm: under ibsim a poll lost in the dying master would stall the standby
#    in DISCOVERING), and a standby idle in DISCOVERING for LAAS_BENCH_STALL_S (120 s) is
#    reported as "stalled", its stacks in failover-stall-gdb.txt.
# Figures, not a pass/fail test. Needs a build (LAAS_BUILD_DIR, default build/) with
# libosmlaas.so and laasctl, ibsim-utils and opensm. Runs in its own network namespace.
#
# Stages (OpenSM's log at -D 0x07, wall-clock timestamps; the request's own time from date):
#   service    request sent -> the service's "uid N added|removed" (placement, state.json and
#              partitions.conf written)
#   sweep      -> OpenSM's "building routing with 'laas'" (the sweep before routing: a heavy
#              one, rediscovering the fabric, in the "heavy" round)
#   hops       the plugin's "hop matrices filled in" (OpenSM's min-hop matrices)
#   plugin     the plugin's "routing done in" (recognize, place, compute, tables, save)
#   lft-queue  "routing done" -> "laas tables configured on all switches" (OpenSM queues blocks)
#   upload     -> "laas: forwarding tables applied" (every LFT block acknowledged, and with
#              managed partitions the P_Key tables set after them)
#   to-reply   -> laasctl returned
# A change can take more than one routing run (a partitions change asks for a heavy sweep as
# well as a re-route): the stages are those of the first run, "runs" counts them, and
# "blocks" sums the LFT blocks every run sent.
set -eEuo pipefail
# A command that fails under errexit without a word of its own (a grep that matched nothing in a
# pipeline, an assignment from one) still names itself.
trap 'echo "bench-routing: line $LINENO: \"$BASH_COMMAND\" failed (status $?)" >&2' ERR
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${LAAS_BUILD_DIR:-$ROOT/build}
SPEC=${1:-"xgft(3;18,18,36;1,18,18)"}
SIZES=${LAAS_BENCH_SIZES:-"10 500 3000"}
# Extra laas.yaml lines (LAAS_BENCH_YAML_EXTRA); LAAS_BENCH_ROUNDS "managed unmanaged" (the
# default) times the changes with the plugin managing partitions.conf, then without.
YAML_EXTRA=${LAAS_BENCH_YAML_EXTRA:-}
if [ -z "${LAAS_IN_NS:-}" ] && unshare -rn true 2>/dev/null; then
  LAAS_IN_NS=1 exec unshare -rn "$0" "$@"
fi
UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
WORK=${LAAS_BENCH_WORK:-/tmp/laas-bench}
rm -rf "$WORK"
mkdir -p "$WORK/state"
cd "$WORK"
SIM_PID="" OSM_PID=""
stop_osm() {
  [ -n "$OSM_PID" ] || return 0
  kill -TERM "$OSM_PID" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$OSM_PID" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$OSM_PID" 2>/dev/null || true
  wait "$OSM_PID" 2>/dev/null || true
  OSM_PID=""
}
cleanup() {
  stop_osm
  # The failover's two SMs (lib_ha.sh), if still running.
  for pid in ${OSM_PID_1:-} ${OSM_PID_2:-}; do kill -KILL "$pid" 2>/dev/null || true; done
  [ -z "$SIM_PID" ] || { kill "$SIM_PID" 2>/dev/null || true; wait "$SIM_PID" 2>/dev/null || true; }
}
trap cleanup EXIT
wait_for() { # PATTERN COUNT LOG TIMEOUT
  local deadline=$((SECONDS + $4)) n
  while :; do
    n=$(grep -c -- "$1" "$3" 2>/dev/null) || true
    [ "${n:-0}" -ge "$2" ] && return 0
    [ $SECONDS -lt $deadline ] || { echo "timeout waiting for $1" >&2; return 1; }
    sleep 0.5
  done
}
# seconds between the first lines matching two patterns (log timestamps are HH:MM:SS usec)
span() {
  awk -v a="$2" -v b="$3" '
    function t(line,  f) { split(line, f, " "); split(f[3], h, ":"); return h[1]*3600 + h[2]*60 + h[3] + f[4]/1e6 }
    index($0, a) && !s { s = t($0) } index($0, b) && s && !e { e = t($0) } END { printf "%.3f", e - s }' "$1"
}
now() { date +%H:%M:%S.%N | awk -F: '{ printf "%.6f", $1*3600 + $2*60 + $3 }'; }

# LAAS_BENCH_TOPOGEN_ARGS: e.g. "--rails 8" for GPU servers with 8 HCAs on rail leaves (the
# sizes then count servers).
read -r -a TOPOGEN_ARGS <<<"${LAAS_BENCH_TOPOGEN_ARGS:-}"
"$BUILD/topology/laas-topogen" "$SPEC" "${TOPOGEN_ARGS[@]}" -o fabric.net
"$BUILD/topology/laas-topogen" "$SPEC" --summary
# ibsim's limits: nodes (hosts and switches), switches, ports (every node's, port 0 included).
SWITCHES=$(grep -c '^Switch' fabric.net)
NODES=$(($(grep -c '^Hca' fabric.net) + SWITCHES + 16))
PORTS=$(awk '/^(Switch|Hca)/ { p += $2 + 1 } END { print p + 1024 }' fabric.net)
# -L: a switch's LinearFDBCap (ibsim's default is 30,720 LIDs, 0x7800; a real switch holds
# 48K, every unicast LID up to 0xBFFF).
mkdir -p "$WORK/cache"
ibsim -s -L 49152 -N $((NODES > 16384 ? NODES : 16384)) -S $((SWITCHES + 16 > 4096 ? SWITCHES + 16 : 4096)) \
  -P $((PORTS > 131072 ? PORTS : 131072)) -n fabric.net </dev/null >ibsim.log 2>&1 &
SIM_PID=$!
wait_for 'simulator ready' 1 ibsim.log 300
export SIM_HOST=SW_L2_0

run_osm() { # LOGFILE ENGINE
  cat >laas.yaml <<EOC
state_dir: $WORK/state
socket: $WORK/laas.sock
socket_group: ""
$YAML_EXTRA
EOC
  printf 'event_plugin_name osmlaas\nevent_plugin_options %s/laas.yaml\nrouting_engine %s\nforce_log_flush TRUE\nsweep_interval 0\npartition_config_file %s/partitions.conf\n' \
    "$WORK" "$2" "$WORK" >opensm.conf
  [ -z "${OSM_CONF_EXTRA:-}" ] || echo "$OSM_CONF_EXTRA" >>opensm.conf
  # Its own guid2lid cache (the system's holds other fabrics' LIDs, sparse in this one).
  OSM_CACHE_DIR="$WORK/cache" LD_LIBRARY_PATH="$BUILD/opensm_plugin" LD_PRELOAD="$UMAD2SIM" \
    opensm -F "$WORK/opensm.conf" -D 0x07 -f "$WORK/$1" </dev/null >"$1.out" 2>&1 &
  OSM_PID=$!
}

# OpenSM's peak resident memory (VmHWM, MiB) so far: with ftree, then with the plugin loaded
# and every change of the round made; the difference is the plugin's (its model, tables, state).
peak_mib() { awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$OSM_PID/status" 2>/dev/null || echo "?"; }

FTREE=0 SWEEP_F=0 PEAK_F="?"
if [ "${LAAS_BENCH_FTREE:-1}" = 1 ]; then
  echo "== ftree"
  run_osm ftree.log ftree
  wait_for 'SUBNET UP' 1 ftree.log 1800
  FTREE=$(span ftree.log "building routing with 'ftree'" "ftree tables configured")
  SWEEP_F=$(span ftree.log "Entering DISCOVERING state" "SUBNET UP")
  PEAK_F=$(peak_mib)
  stop_osm
fi

ctl() { "$BUILD/laasctl/laasctl" -s "$WORK/laas.sock" --timeout 900 "$@"; }
# change LOG WHAT laasctl-args...: one timed request, its stages from the log lines it caused.
ROWS=()
change() {
  local log=$1 what=$2 from t0 t1 rc=0
  shift 2
  from=$(($(wc -l <"$log") + 1))
  sleep 1  # the previous change's trailing sweeps are over
  t0=$(now)
  ctl "$@" >ctl.out 2>&1 || rc=$?
  t1=$(now)
  [ $rc = 0 ] || { echo "laasctl $* failed ($rc): $(cat ctl.out)" >&2; ROWS+=("$what: FAILED ($rc)"); return 0; }
  sleep 3  # trailing routing runs (a heavy sweep after a partitions change) land in the log
  ROWS+=("$(tail -n +"$from" "$log" | awk -v what="$what" -v t0="$t0" -v t1="$t1" '
    function t(line,  f, h) { split(line, f, " "); split(f[3], h, ":"); return h[1]*3600 + h[2]*60 + h[3] + f[4]/1e6 }
    function ms(x) { return sprintf("%7.0f", x * 1000) }
    /laas: uid [0-9]+ (added|removed)/ && !u { u = t($0); next }
    !u { next }  # (a sweep of the previous change still finishing)
    /building routing with .laas./ { if (!b) b = t($0); runs++ }
    /laas: hop matrices filled in/ && !hm { for (i = 1; i <= NF; i++) if ($i == "in") { hm = $(i + 1); break } }
    /laas: routing done in/ { if (!r) r = t($0)
      for (i = 1; i <= NF; i++) { if ($i == "in" && !pm) pm = $(i + 1); if ($i == "LFT") blocks += $(i - 1) } }
    /laas tables configured on all switches/ && !c { c = t($0) }
    /laas: forwarding tables applied/ && !a { a = t($0) }
    END {
      printf "%-22s %7.0f %s %s %7.0f %7.0f %s %s %s %4d %8d", what, (t1 - t0) * 1000, ms(u - t0), ms(b - u), hm, pm,
        ms(c - r), ms(a - c), ms(t1 - a), runs, blocks }')")
}

# check_rate LOG SECONDS: the switch check's reads over SECONDS (laasctl status), its pace, a
# pass's blocks and the time a full pass takes at the rate measured; mismatches and reads
# unanswered (a clean fabric: both 0).
check_rate() {
  local s0 s1 t0 t1
  s0=$(ctl --json status) t0=$(now)
  sleep "$2"
  s1=$(ctl --json status) t1=$(now)
  jq -rn --argjson a "$s0" --argjson b "$s1" --arg t0 "$t0" --arg t1 "$t1" '
    (($t1 | tonumber) - ($t0 | tonumber)) as $dt
    | (($b.switch_check.reads - $a.switch_check.reads) / $dt) as $rate
    | ($b.switch_check.pass.blocks // 0) as $blocks
    | "\($rate | floor) reads/s measured over \($dt | floor) s (pace set \($b.switch_check.reads_per_second)/s, interval \($b.switch_check.interval_s) s); a pass: \($blocks) reads (LFT blocks and port tables), \(if $rate > 0 then ($blocks / $rate | floor | tostring) + " s at that rate" else "no reads" end); passes done \($b.switch_check.passes), unanswered \($b.switch_check.unanswered), mismatches \($b.switch_check.mismatches)"'
}

# Rounds: OpenSM with the plugin managing partitions.conf (the default: every tenant change
# changes it; the plugin applies it after the re-route), "heavy": the same the way it was
# before changes were applied without one (a heavy sweep per change, LAAS_PARTITIONS_HEAVY_SWEEP=1), "unmanaged":
# without managed partitions (a re-route only).
ROUNDS=${LAAS_BENCH_ROUNDS:-"managed heavy unmanaged"}
LAAS="" SWEEP_L="" HOPS_FIRST="" FIRST="" PEAKS=() CHECKS=()
for round in $ROUNDS; do
  [ "$round" != none ] || continue
  echo "== laas ($round partitions)"
  base_extra=$YAML_EXTRA
  # "-hops": the plugin fills OpenSM's hop matrices at every run, as it did before it left them
  # unfilled with OpenSM's routing dumps off (LAAS_FILL_HOP_MATRICES; the "before" beside a
  # round without it).
  # "-lids": OpenSM starts with laas-lid-order's guid2lid (the LIDs leaf by leaf) in its cache;
  # the guid2lid of OpenSM's own numbering comes back after the round.
  # "-noenforce" (the last suffix): OpenSM's part_enforce off. ibsim keeps no partition
  # enforcement bit a PortInfo Set gives a switch port, so with part_enforce on (OpenSM's
  # default) every partition run sets them again on every host-facing switch port, one SMP each
  # (the plugin's "partitions.conf applied" line counts them); a switch that keeps them gets
  # none after the first. Under ibsim this round is that switch's cost: ibsim filters no P_Key
  # either way.
  name=$round OSM_CONF_EXTRA=""
  if [ "${name%-noenforce}" != "$name" ]; then
    name=${name%-noenforce}
    OSM_CONF_EXTRA="part_enforce off"
  fi
  if [ "${name%-lids}" != "$name" ]; then
    name=${name%-lids}
    # (none before OpenSM's first start here: the later rounds then keep the leaf order too)
    [ -f cache/guid2lid.opensm ] || [ ! -f cache/guid2lid ] || cp cache/guid2lid cache/guid2lid.opensm
    SIM_HOST=$SIM_HOST LD_PRELOAD="$UMAD2SIM" ibnetdiscover >ibnetdiscover.out 2>ibnetdiscover.err ||
      { echo "ibnetdiscover failed: $(tail -3 ibnetdiscover.err)" >&2; exit 1; }
    "$BUILD/tools/laas-lid-order" ibnetdiscover.out -o cache/guid2lid
  elif [ -f cache/guid2lid.opensm ]; then
    mv cache/guid2lid.opensm cache/guid2lid
  fi
  if [ "${name%-hops}" != "$name" ]; then
    name=${name%-hops}
    export LAAS_FILL_HOP_MATRICES=1
  else
    unset LAAS_FILL_HOP_MATRICES
  fi
  mode=${name%-check} check=0
  [ "$mode" = "$name" ] || check=${LAAS_BENCH_CHECK_S:-300}
  YAML_EXTRA=$(printf '%s\nswitch_check_interval: %s' "$YAML_EXTRA" "$check")
  [ "$mode" != unmanaged ] || YAML_EXTRA=$(printf '%s\nmanage_partitions: false' "$YAML_EXTRA")
  if [ "$mode" = heavy ]; then export LAAS_PARTITIONS_HEAVY_SWEEP=1; else unset LAAS_PARTITIONS_HEAVY_SWEEP; fi
  run_osm "laas-$round.log" laas,ftree
  YAML_EXTRA=$base_extra
  log="laas-$round.log"
  wait_for 'SUBNET UP' 1 "$log" 1800
  wait_for 'laas: forwarding tables applied' 1 "$log" 600
  if [ -z "$LAAS" ]; then
    LAAS=$(span "$log" "building routing with 'laas'" "laas tables configured")
    SWEEP_L=$(span "$log" "Entering DISCOVERING state" "SUBNET UP")
    HOPS_FIRST=$(grep -m1 -E 'laas: hop matrices (not )?filled' "$log" | sed 's/.*laas: //' || true)
    FIRST=$(grep -m1 'laas: routing done' "$log" | sed 's/.*laas: //')
  fi
  echo "== tenant changes through laasctl (sizes: $SIZES)"
  for n in $SIZES; do change "$log" "add $n ($round)" tenant add "t$n" --hosts "$n"; done
  for n in $SIZES; do change "$log" "remove $n ($round)" tenant remove "t$n"; done
  grep -E 'laas: (uid|tenant)' "$log" | sed 's/.*laas: /  /' | head -20
  [ "$check" = 0 ] || CHECKS+=("$round: $(check_rate "$log" "${LAAS_BENCH_CHECK_SAMPLE_S:-60}")")
  PEAKS+=("$round $(peak_mib)")
  stop_osm
done

# tables_digest FILE: the tables an SM last sent (state/tables.bin, routing/saved_tables.h's
# format), by switch node GUID in GUID order: "SWITCHES sha256" (the file lists switches in
# the SM's own discovery order, which differs between two SMs).
tables_digest() {
  python3 - "$1" <<'EOP'
import hashlib, struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"LAASTBL2", "not a tables file"
(lids,) = struct.unpack_from("<I", d, 24)  # after the term and the write time
o = 28 + 19 * lids  # each LID: u16 LID, u64 port GUID, u64 switch GUID, u8 switch port
(n,), o, sw = struct.unpack_from("<I", d, o), o + 4, {}
for _ in range(n):
    guid, ln = struct.unpack_from("<QI", d, o); o += 12
    lft = d[o:o + ln]; o += ln
    (p,) = struct.unpack_from("<H", d, o); o += 2
    sw[guid] = lft + d[o:o + 2 * p * p]; o += 2 * p * p
h = hashlib.sha256()
for g in sorted(sw): h.update(struct.pack("<Q", g) + sw[g])
print(len(sw), h.hexdigest()[:16])
EOP
}

# cpu_ticks PID...: the CPU time (clock ticks) the processes have used, summed.
cpu_ticks() {
  local pid t=0 f
  for pid in "$@"; do
    read -r -a f <"/proc/$pid/stat" 2>/dev/null || continue
    t=$((t + f[13] + f[14]))
  done
  echo "$t"
}

# wait_takeover N FROM APPLIED: until SM N's log shows "Entering MASTER state" and then APPLIED
# (after line FROM); sets APPLIED_LINE. Returns 1 when SM N stalls: not master, and neither it
# nor ibsim used any CPU for LAAS_BENCH_STALL_S seconds (default 120), its threads' stacks
# then in failover-stall-gdb.txt.
wait_takeover() {
  local n=$1 from=$2 applied=$3 pid last_t now_t idle_since=$SECONDS master
  pid=$(sm_pid "$n")
  last_t=$(cpu_ticks "$pid" "$SIM_PID")
  while :; do
    master=$(last_line_of "$n" 'Entering MASTER state' "$from")
    if [ "$master" -gt 0 ]; then
      APPLIED_LINE=$(last_line_of "$n" "$applied" "$master")
      [ "$APPLIED_LINE" -eq 0 ] || return 0
    fi
    check_sm "$n"
    sleep 1
    now_t=$(cpu_ticks "$pid" "$SIM_PID")
    [ "$now_t" = "$last_t" ] || idle_since=$SECONDS
    last_t=$now_t
    if [ "$master" -eq 0 ] && [ $((SECONDS - idle_since)) -ge "${LAAS_BENCH_STALL_S:-120}" ]; then
      gdb -batch -p "$pid" -ex 'thread apply all bt' >failover-stall-gdb.txt 2>&1 || true
      return 1
    fi
  done
}

# stamp_time N LINE: the time of line LINE of osmN.log, or of the last stamped line before it
# (OpenSM's log boxes, such as "SWITCHES CONFIGURED FOR UNICAST", carry no timestamp).
stamp_time() {
  log_time "$1" "$(awk -v to="$2" 'NR <= to && /^[A-Z][a-z][a-z] +[0-9]+ [0-9:]+ [0-9]+ / { l = NR }
    END { print l + 0 }' "$WORK/osm$1.log")"
}

# failover_pair ENGINE: two OpenSMs routing with ENGINE (laas,ftree: with the plugin; ftree:
# OpenSM alone) at SW_L2_0 (master) and SW_L2_1 (standby), kill -9 of the master. Sets
# FO_TOOK (kill to the standby's tables applied, s), FO_LFT (kill to OpenSM's "SWITCHES
# CONFIGURED FOR UNICAST", every LFT block acknowledged, s), FO_BLOCKS (the LFT blocks the new
# master wrote: OpenSM's "Writing FT block" lines), FO_PEAKS, FO_SAME (laas: the tables the
# standby sent are the master's) and FO_NOTE (why it was not run, or stalled).
failover_pair() {
  local engine=$1 n applied=$FO_UNICAST_DONE from2 avail last
  FO_TOOK="" FO_LFT="" FO_BLOCKS="" FO_PEAKS="" FO_SAME="" FO_SENT="" FO_NOTE=""
  # Each pair its own logs (OpenSM appends across runs); the LIDs stay (cacheN/).
  for n in 1 2; do [ ! -f "osm$n.log" ] || mv "osm$n.log" "failover-$FO_LAST-osm$n.log"; done
  FO_LAST=${engine%%,*}
  export HA_ENGINE=$engine
  [ "$FO_LAST" != laas ] || applied='laas: forwarding tables applied'
  start_sm 1 15 SW_L2_0 "per_module_logging_file $WORK/per-module-logging.conf"
  HA_APPLIED=SUBNET\ UP wait_master 1 3600
  if [ "$FO_LAST" = laas ]; then
    last=${SIZES##* }
    "$LAASCTL" -s "$WORK/sm1.sock" --timeout 900 tenant add "ha$last" --hosts "$last" >/dev/null
  fi
  local peak1 peak2
  peak1=$(OSM_PID=$OSM_PID_1 peak_mib)
  avail=$(awk '/^MemAvailable/ { printf "%.0f", $2 / 1024 }' /proc/meminfo)
  if [ "$avail" -lt $((peak1 * 12 / 10)) ]; then
    FO_NOTE="not run: a standby needs about the master's ${peak1} MiB, ${avail} MiB available"
    stop_sm 1
    return 0
  fi
  start_sm 2 1 SW_L2_1 "per_module_logging_file $WORK/per-module-logging.conf"
  wait_standby 2 3600
  sleep 2
  local before after
  [ "$FO_LAST" != laas ] || before=$(tables_digest state/tables.bin)
  from2=$(log_lines 2)
  kill_sm 1
  if ! wait_takeover 2 "$from2" "$applied"; then
    FO_NOTE="stalled: the standby sat in DISCOVERING with it and ibsim idle for ${LAAS_BENCH_STALL_S:-120} s (a request lost in the killed master? see failover-stall-gdb.txt)"
    stop_sm 2
    return 0
  fi
  FO_TOOK=$(elapsed "$KILL_AT" "$(stamp_time 2 "$APPLIED_LINE")")
  local master lft
  master=$(last_line_of 2 'Entering MASTER state' "$from2")
  lft=$(first_line_of 2 "$FO_UNICAST_DONE" "$master")
  [ "$lft" -eq 0 ] || FO_LFT=$(elapsed "$KILL_AT" "$(stamp_time 2 "$lft")")
  [ "${LAAS_BENCH_FAILOVER_BLOCKS:-1}" = 0 ] ||
    FO_BLOCKS=$(count_sm_log 2 'Writing FT block' "$master")
  peak2=$(OSM_PID=$OSM_PID_2 peak_mib)
  FO_PEAKS="master ${peak1} MiB, standby ${peak2} MiB"
  if [ "$FO_LAST" = laas ]; then
    sleep 3 # the new master's tables.bin, written on the state directory's worker
    after=$(tables_digest state/tables.bin)
    FO_SAME=no
    [ "$before" != "$after" ] || FO_SAME=yes
    FO_SAME="$FO_SAME (${before%% *} switches; before ${before#* }, after ${after#* })"
    FO_SENT=$(awk -v from="$from2" 'NR >= from && /laas: routing done/ { sub(/.*; /, ""); print; exit }' osm2.log)
  fi
  stop_sm 2
}

FAILOVER="" FAILOVER_FTREE="" FAILOVER_VS=""
if [ "${LAAS_BENCH_FAILOVER:-0}" = 1 ]; then
  echo "== failover: two OpenSMs with the plugin, kill -9 of the master"
  # lib_ha.sh's SMs (its functions replace this script's ctl, whose changes are over).
  export LAAS_PLUGIN_DIR="$BUILD/opensm_plugin" LAASCTL="$BUILD/laasctl/laasctl"
  # shellcheck source=tests/integration/lib.sh
  source "$ROOT/tests/integration/lib.sh"
  # shellcheck source=tests/integration/lib_ha.sh
  source "$ROOT/tests/integration/lib_ha.sh"
  # Both SMs listed in laas.yaml as the pair's (management from the start, as docs/ha.md says).
  export HA_NODES="SW_L2_0 SW_L2_1"
  # The standby paused while the master answers its last SMInfo poll, then the kill: under
  # ibsim a poll inside a killed SM is never answered and the standby would wait for it in
  # DISCOVERING forever (lib_ha.sh's kill_sm; bench/plugin_routing_results.md).
  export HA_KILL_QUIESCE_S=${LAAS_BENCH_KILL_QUIESCE_S:-2}
  # OpenSM's own lines for both pairs: the state manager's VERBOSE box once every LFT block is
  # acknowledged, and (LAAS_BENCH_FAILOVER_BLOCKS=1, the default) a DEBUG line per LFT block.
  FO_UNICAST_DONE='SWITCHES CONFIGURED FOR UNICAST'
  {
    echo "osm_state_mgr.c 0x04"
    [ "${LAAS_BENCH_FAILOVER_BLOCKS:-1}" = 0 ] || echo "osm_ucast_mgr.c 0x08"
  } >per-module-logging.conf
  FO_LAST=""
  failover_pair laas,ftree
  if [ -n "$FO_NOTE" ]; then
    FAILOVER=$FO_NOTE
  else
    FAILOVER="kill -9 of the master to the standby's tables applied ${FO_TOOK} s; tables identical: ${FO_SAME}; new master's first run: ${FO_SENT}; LFT blocks it wrote (OpenSM's log): ${FO_BLOCKS:-not counted}; peak memory ${FO_PEAKS}"
  fi
  LAAS_FO=("$FO_LFT" "$FO_BLOCKS")
  # LAAS_BENCH_FAILOVER_FTREE=1 (the default): the same with a pair of ftree SMs.
  if [ "${LAAS_BENCH_FAILOVER_FTREE:-1}" = 1 ]; then
    echo "== failover: two OpenSMs with ftree (no plugin), kill -9 of the master"
    failover_pair ftree
    FAILOVER_FTREE=${FO_NOTE:-"kill -9 of the master to the standby's tables applied (${FO_UNICAST_DONE}) ${FO_TOOK} s; LFT blocks the new master wrote: ${FO_BLOCKS:-not counted}; peak memory ${FO_PEAKS}"}
    if [ -z "$FO_NOTE" ] && [ -n "${LAAS_FO[0]}" ]; then
      FAILOVER_VS=$(awk -v la="${LAAS_FO[0]}" -v fa="$FO_LFT" -v lb="${LAAS_FO[1]:-}" -v fb="$FO_BLOCKS" 'BEGIN {
        printf "kill -9 to every LFT block acknowledged (%s): laas %.3f s, ftree %.3f s, laas/ftree %.2f",
          "SWITCHES CONFIGURED FOR UNICAST", la, fa, (fa > 0 ? la / fa : 0)
        if (lb != "" && fb != "")
          printf "; LFT blocks the new master wrote: laas %d, ftree %d, laas/ftree %.3f", lb, fb, (fb > 0 ? lb / fb : 0) }')
    fi
  fi
fi

HOSTS=$("$BUILD/topology/laas-topogen" "$SPEC" --summary | head -1 | sed 's/^[^:]*: //')
cat <<EOR
== results for $SPEC ($HOSTS)${YAML_EXTRA:+, laas.yaml: $YAML_EXTRA}
full routing, first sweep (OpenSM's "building routing" -> "tables configured"):
  ftree ${FTREE} s, laas ${LAAS} s, ratio ftree/laas $(awk -v f="$FTREE" -v l="$LAAS" 'BEGIN { printf "%.1f", (l > 0 ? f / l : 0) }')
  first sweep to SUBNET UP: ftree ${SWEEP_F} s, laas ${SWEEP_L} s
  laas plugin, first run: ${HOPS_FIRST}; ${FIRST}
OpenSM peak resident memory (VmHWM): ftree ${PEAK_F} MiB; with laas, after the round's changes: ${PEAKS[*]/%/ MiB}
tenant changes (ms; stages as in the header of this script):
change                    wall service   sweep    hops  plugin lft-queue upload to-reply runs  blocks
EOR
[ ${#ROWS[@]} = 0 ] || printf '%s\n' "${ROWS[@]}"
[ ${#CHECKS[@]} = 0 ] || printf 'switch check, %s\n' "${CHECKS[@]}"
[ -z "$FAILOVER" ] || echo "failover: $FAILOVER"
[ -z "$FAILOVER_FTREE" ] || echo "failover ftree: $FAILOVER_FTREE"
[ -z "$FAILOVER_VS" ] || echo "failover laas vs ftree: $FAILOVER_VS"
EOR_AIM=$(awk -v f="$FTREE" 'BEGIN { printf "%.0f", f * 100 }')
echo "aim: a tenant change live within 10 % of ftree's full routing, i.e. under ${EOR_AIM} ms here"
