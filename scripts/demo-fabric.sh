#!/usr/bin/env bash
# The walkthrough on a simulated fabric: ibsim plays xgft(2;4,8;1,4) (32 hosts comp-1..32),
# the real OpenSM loads libosmlaas.so and routes with engine laas, and laasctl does the paper
# appendix's steps through the plugin's control socket. Uses the build in ./build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${LAAS_BUILD_DIR:-$root/build}"
export LAASCTL="$build/laasctl/laasctl" LAAS_PLUGIN_DIR="$build/opensm_plugin"
export LAAS_AUDIT="$build/tools/laas-audit" LAAS_TOPOGEN="$build/topology/laas-topogen"
export LAAS_WORK="${LAAS_WORK:-${TMPDIR:-/tmp}/laas-demo}"
export PATH="/usr/sbin:$PATH"
# The same fabric plumbing as the integration tests: a private network namespace for ibsim's
# socket, OpenSM stopped before ibsim on exit.
source "$root/tests/integration/lib.sh"
laas_enter_namespace "$@"
laas_setup walkthrough
export SIM_HOST=SW_L2_0  # OpenSM runs as the embedded SM of a spine: every host is a tenant host

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
ctl() {
  say "laasctl $*"
  "$LAASCTL" -s "$WORK/laas.sock" --timeout 30 "$@"
}

"$LAAS_TOPOGEN" "xgft(2;4,8;1,4)" -o fabric.net
log "fabric: xgft(2;4,8;1,4), 32 hosts, 8 leaves, 4 spines (ibsim); work directory $WORK"
start_fabric fabric.net
start_opensm "partition_config_file $WORK/partitions.conf"
wait_log 'laas: forwarding tables applied' 1 60
wait_log 'SUBNET UP' 1 60
log "OpenSM is up with routing engine laas: $(grep -m1 'laas tables configured' osm.log | cut -d'>' -f2)"

ctl status
ctl tenant add 4 --hosts 10
ctl tenant add 1 --hosts 10
ctl tenant list
ctl tenant show 1
ctl topology show
rc=0
ctl tenant add 2 --hosts 13 || rc=$?
[ "$rc" = 1 ] || die "the 13-host request should be refused (exit 1), got $rc"
echo "(refused as expected: exit status $rc)"
ctl tenant remove 1
ctl tenant add 2 --hosts 13
ctl topology show
ctl audit | tee audit.json | tail -n 12
grep -q '"violations": 0' audit.json || die "the audit found violations"
say "laas-audit on the forwarding tables read back from the switches (dump_fts)"
snapshot final
ctl export partitions --tenant 2
log "done: zero isolation violations. OpenSM's log: $WORK/osm.log"
