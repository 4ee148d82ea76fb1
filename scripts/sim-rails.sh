#!/usr/bin/env bash
# The utilization study on a rail-optimized tree: the allocator benchmark's nine
# workload classes (sizes in servers, truncated at the tree's servers), each run with laas-sim
# --rails R for LaaS and for Unconstrained (whole servers anywhere, no link isolation), FIFO,
# one seed; prints one markdown table. Figures, not a pass/fail test.
#
#   scripts/sim-rails.sh [TREE] [RAILS]     (default xgft(3;16,16,32;1,16,16) and 8: 1,024
#                                            servers with 8 HCAs each, 2 rail groups a pod)
# Environment: LAAS_BUILD_DIR (default build), SEED (1), TENANTS (2000), CLASSES (subset).
set -euo pipefail
cd "$(dirname "$0")/.."
SIM=${LAAS_BUILD_DIR:-build}/sim/laas-sim
TREE=${1:-'xgft(3;16,16,32;1,16,16)'}
RAILS=${2:-8}
SEED=${SEED:-1}
TENANTS=${TENANTS:-2000}
CLASSES=${CLASSES:-"exp8 exp32 exp128 gauss16 gauss100 uni4-36 uni40-360"}
OUT=$(mktemp -d /tmp/laas-sim-rails.XXXXXX)
hosts=$("${LAAS_BUILD_DIR:-build}/topology/laas-topogen" "$TREE" --summary | sed -n 's/^[^:]*: \([0-9]*\) hosts.*/\1/p')
servers=$((hosts / RAILS))
source scripts/workload-classes.sh
util() { "$SIM" --topology "$TREE" --rails "$RAILS" --workload "$1" --algorithm "$2" --json | jq -r '.window.host_utilization * 10000 | round / 100'; }
echo "$TREE, $RAILS rails: $servers servers of $RAILS ports; $TENANTS tenants a class, seed $SEED, FIFO"
echo
echo "| class | LaaS host util. % | Unconstrained % | LaaS - Unconstrained |"
echo "|---|---|---|---|"
for c in $CLASSES; do
  # shellcheck disable=SC2046 # the arguments are words
  "$SIM" gen $(gen_args "$c") -n "$TENANTS" --max-size "$servers" --seed "$SEED" -o "$OUT/$c.csv"
  l=$(util "$OUT/$c.csv" laas)
  u=$(util "$OUT/$c.csv" unconstrained)
  echo "| $c | $l | $u | $(awk -v l="$l" -v u="$u" 'BEGIN { printf "%+.2f", l - u }') |"
done
