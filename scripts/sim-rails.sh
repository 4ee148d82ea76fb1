#!/usr/bin/env bash
# The utilization study on a rail-optimized tree: the allocator benchmark's nine
# workload classes (sizes in servers, truncated at the tree's servers), each run with laas-sim
# --rails R for LaaS and for Unconstrained (whole servers anywhere, no link isolation), FIFO,
# one seed; prints one markdown table. Figures, not a pass/fail test.
#
#   scripts/sim-rails.sh [TREE] [RAILS]     (default xgft(3;16,16,32;1,16,16) and 8: 1,024
#                                            servers with 8 HCAs each, 2 rail groups a pod)
# Environment: LAAS_BUILD_DIR (default build), SEED (1), TENANTS (2000), CLASSES (subset),
# REPACK=1: also laas-repack (FIFO with the allocator re-placing every running tenant at each
# event: a link-isolating allocator that moves tenants, at most the bound; about 100 s a class).
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
# "window whole-run" host utilization % of one run (a run's JSON and a repacking run's differ).
util() {
  "$SIM" --topology "$TREE" --rails "$RAILS" --workload "$1" --algorithm "$2" --json |
    jq -r '[.host_utilization, (.whole_run.host_utilization // .whole_host_utilization)] | map(. * 10000 | round / 100) | join(" ")'
}
echo "$TREE, $RAILS rails: $servers servers of $RAILS ports; $TENANTS tenants a class, seed $SEED, FIFO"
echo
if [ "${REPACK:-0}" = 1 ]; then
  echo "| class | LaaS host util. % | Unconstrained % | LaaS - Unconstrained | laas-repack % | LaaS - laas-repack | whole run: LaaS / laas-repack % |"
  echo "|---|---|---|---|---|---|---|"
else
  echo "| class | LaaS host util. % | Unconstrained % | LaaS - Unconstrained |"
  echo "|---|---|---|---|"
fi
for c in $CLASSES; do
  # shellcheck disable=SC2046 # the arguments are words
  "$SIM" gen $(gen_args "$c") -n "$TENANTS" --max-size "$servers" --seed "$SEED" -o "$OUT/$c.csv"
  read -r l lw < <(util "$OUT/$c.csv" laas)
  read -r u _ < <(util "$OUT/$c.csv" unconstrained)
  row="| $c | $l | $u | $(awk -v l="$l" -v u="$u" 'BEGIN { printf "%+.2f", l - u }') |"
  if [ "${REPACK:-0}" = 1 ]; then
    read -r r rw < <(util "$OUT/$c.csv" laas-repack)
    row="$row $r | $(awk -v l="$l" -v r="$r" 'BEGIN { printf "%+.2f", l - r }') | $lw / $rw |"
  fi
  echo "$row"
done
