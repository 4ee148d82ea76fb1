#!/usr/bin/env bash
# The demo: the paper appendix's walkthrough on xgft(2;4,8;1,4) (32 hosts comp-1..comp-32).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
build="${LAAS_BUILD_DIR:-build}"
echo
echo "== The paper's walkthrough, run by the LaaS allocator (laas-plan) =="
echo
# Step 5 is refused on purpose (13 hosts, 12 free): laas-plan exits 1 when a request is refused.
set +e
"$build/laasctl/laas-plan" --topology 'xgft(2;4,8;1,4)' \
  'add 4 10' 'add 1 10' 'list' 'show 1' 'add 2 13' 'remove 1' 'add 2 13' 'map'
rc=$?
set -e
[ "$rc" -le 1 ] || exit "$rc"
