#!/usr/bin/env bash
# bench-failover.sh [FAILOVERS] : how long a fabric is without a subnet manager, and whether it
# is ever without tenant isolation, when the master OpenSM dies. Two real OpenSMs with the
# plugin on one ibsim fabric (the demo tree, qos TRUE), FAILOVERS kill -9s of the master
# (default 20) and handovers back, with random tenant changes in between
# (tests/integration/failover_chaos.sh). Reports, from the kill to the new master's tables in
# the switches and from a handover request to them: min, median, max; the tables are checked
# bit-identical and audited after each. Figures, not a pass/fail timing. Needs a build
# (LAAS_BUILD_DIR, default build/) with libosmlaas.so, laasctl, laas-audit, laas-sl2vl-dump.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${LAAS_BUILD_DIR:-$ROOT/build}
for f in opensm_plugin/libosmlaas.so laasctl/laasctl tools/laas-audit tools/laas-sl2vl-dump; do
  [ -e "$BUILD/$f" ] || { echo "bench-failover: $BUILD/$f is missing: build first (scripts/build.sh)" >&2; exit 2; }
done
out=$(mktemp -d /tmp/laas-bench-failover.XXXXXX)
export LAASCTL=$BUILD/laasctl/laasctl LAAS_PLUGIN_DIR=$BUILD/opensm_plugin
export LAAS_AUDIT=$BUILD/tools/laas-audit LAAS_SL2VL_DUMP=$BUILD/tools/laas-sl2vl-dump
export LAAS_TOPOGEN=$BUILD/topology/laas-topogen LAAS_WORK=$out QOS=1 FAILOVERS=${1:-20}
echo "bench-failover: $FAILOVERS failovers, work in $out"
"$ROOT/tests/integration/failover_chaos.sh" bench | tee "$out/run.log" |
  grep -E '^\[.*failover [0-9]+:|^(kill|handover|tenants at|\[.*PASS)'
