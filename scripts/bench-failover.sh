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
# shellcheck source=scripts/lib-bench.sh
source "$ROOT/scripts/lib-bench.sh"
bench_chaos_env bench-failover
export FAILOVERS=${1:-20}
echo "bench-failover: $FAILOVERS failovers, work in $out"
"$ROOT/tests/integration/failover_chaos.sh" bench | tee "$out/run.log" |
  grep -E '^\[.*failover [0-9]+:|^(kill|handover|tenants at|\[.*PASS)'
