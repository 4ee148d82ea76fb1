#!/usr/bin/env bash
# bench-routing.sh [SPEC] : routing-engine time of OpenSM's ftree vs. LaaS on one simulated
# fabric (default: the 11,664-host xgft(3;18,18,36;1,18,18)), and LaaS's re-route time after
# one tenant change. Figures, not a pass/fail test. Needs a build (LAAS_BUILD_DIR, default
# build/) with libosmlaas.so, ibsim-utils and opensm. Runs in its own network namespace.
#
# Timings come from OpenSM's log: "building routing with '<engine>'" (VERBOSE) to
# "<engine> tables configured on all switches" is the engine's time including OpenSM's hop
# matrices; the plugin's own "routing done in" line splits the LaaS part.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${LAAS_BUILD_DIR:-$ROOT/build}
SPEC=${1:-"xgft(3;18,18,36;1,18,18)"}
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

"$BUILD/topology/laas-topogen" "$SPEC" -o fabric.net
"$BUILD/topology/laas-topogen" "$SPEC" --summary
ibsim -s -N 16384 -S 4096 -P 131072 -n fabric.net </dev/null >ibsim.log 2>&1 &
SIM_PID=$!
wait_for 'simulator ready' 1 ibsim.log 300
export SIM_HOST=SW_L2_0

run_osm() { # LOGFILE ENGINE
  cat >laas.yaml <<EOC
state_dir: $WORK/state
tenants_poll_ms: 500
EOC
  printf 'event_plugin_name osmlaas\nevent_plugin_options %s/laas.yaml\nrouting_engine %s\nforce_log_flush TRUE\nsweep_interval 0\n' \
    "$WORK" "$2" >opensm.conf
  LD_LIBRARY_PATH="$BUILD/opensm_plugin" LD_PRELOAD="$UMAD2SIM" \
    opensm -F "$WORK/opensm.conf" -D 0x07 -f "$WORK/$1" </dev/null >"$1.out" 2>&1 &
  OSM_PID=$!
}

echo "== ftree"
run_osm ftree.log ftree
wait_for 'SUBNET UP' 1 ftree.log 900
FTREE=$(span ftree.log "building routing with 'ftree'" "ftree tables configured")
SWEEP_F=$(span ftree.log "Entering DISCOVERING state" "SUBNET UP")
stop_osm

echo "== laas"
printf -- '- name: A\n  hosts: 1000\n- name: B\n  hosts: 3000\n' >state/tenants.yaml
run_osm laas.log laas,ftree
wait_for 'SUBNET UP' 1 laas.log 900
LAAS=$(span laas.log "building routing with 'laas'" "laas tables configured")
SWEEP_L=$(span laas.log "Entering DISCOVERING state" "SUBNET UP")
FIRST=$(grep -m1 'laas: routing done' laas.log | sed 's/.*laas: //')
echo "== re-route after adding tenant C (500 hosts)"
printf -- '- name: A\n  hosts: 1000\n- name: B\n  hosts: 3000\n- name: C\n  hosts: 500\n' >state/tenants.yaml.new
mv state/tenants.yaml.new state/tenants.yaml
wait_for 'laas: forwarding tables applied' 2 laas.log 600
REROUTE=$(grep 'laas: routing done' laas.log | sed -n 2p | sed 's/.*laas: //')
REROUTE_WALL=$(awk '/tenants file changed/ { s = 1 } s' laas.log | span /dev/stdin "tenants file changed" "laas: forwarding tables applied")
grep -E 'laas: tenant' laas.log
stop_osm

cat <<EOR
== results for $SPEC
ftree engine (incl. hop matrices):            ${FTREE} s   (first sweep to SUBNET UP: ${SWEEP_F} s)
laas engine  (incl. hop matrices, 2 tenants): ${LAAS} s   (first sweep to SUBNET UP: ${SWEEP_L} s)
laas plugin, first run:  ${FIRST}
laas plugin, re-route after adding C: ${REROUTE}
re-route wall time, tenants file change seen -> tables on the switches: ${REROUTE_WALL} s
EOR
