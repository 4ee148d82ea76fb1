#!/usr/bin/env bash
# bench-etcd-chaos.sh [FAILOVERS [REPORT]] : the chaos run of issue 46's acceptance with the
# shared state in a three-member etcd and nothing else shared. Two real OpenSMs with the plugin
# on one ibsim fabric (the demo tree, qos TRUE), FAILOVERS kill -9s of the master (default 10)
# and, before each, a kill -9 of an etcd member chosen at random (so 2 x FAILOVERS kills: 20 by
# default), random tenant changes in between, handovers back at random
# (tests/integration/failover_chaos.sh with ETCD=1; CI runs its short version,
# integration.etcd_chaos). After every change of master: every acknowledged tenant kept (listed,
# in etcd's state and in its record of the tenants last routed), the tables read back audited
# and bit-identical when the tenants are the same; at the end both SMs hold the same state.
# Appends the figures (kill -9 to the new master's tables applied, each failover, PASS or the
# failure) to REPORT (default bench/etcd_chaos_results.md). Takes a few minutes; needs a build
# (LAAS_BUILD_DIR, default build/) with libosmlaas.so, laasctl, laas-audit, laas-sl2vl-dump,
# and etcd (scripts/deps.sh). SEED fixes the random choices.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib-bench.sh
source "$ROOT/scripts/lib-bench.sh"
bench_chaos_env bench-etcd-chaos
command -v etcd >/dev/null || { echo "bench-etcd-chaos: no etcd (scripts/deps.sh)" >&2; exit 2; }
FAILOVERS=${1:-10}
REPORT=${2:-$ROOT/bench/etcd_chaos_results.md}
export ETCD=1 FAILOVERS
echo "bench-etcd-chaos: $FAILOVERS master kills and $FAILOVERS etcd member kills, work in $out"
# The commit measured (with "+changes" when the tree differs from it), before the report grows.
rev=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo '+changes')
t0=$SECONDS
rc=0
"$ROOT/tests/integration/failover_chaos.sh" bench >"$out/run.log" 2>&1 || rc=$?
took=$((SECONDS - t0))
grep -E '^\[.*(failover [0-9]+:|etcd member|PASS)|^(kill|handover|tenants at)|^FAIL' "$out/run.log" || true
summary=$out/bench/failover_chaos.summary
[ -d "$out/bench" ] || summary=$(find "$out" -name failover_chaos.summary | head -1)
{
  echo
  echo "## $(date -u +%F) at $rev: FAILOVERS=$FAILOVERS"
  echo
  echo "\`scripts/bench-etcd-chaos.sh $FAILOVERS\`: $(grep -m1 -o 'seed [0-9]*' "$out/run.log" || echo 'seed ?'), $took s wall clock," \
    "$(nproc) cores shared with other work (load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)."
  echo
  if [ $rc -eq 0 ]; then
    echo "**PASS**: $(grep -o 'PASS failover_chaos.*' "$out/run.log" | sed 's/^PASS failover_chaos //')."
  else
    echo "**FAIL** (exit $rc): $(grep -m1 '^FAIL' "$out/run.log" | head -c 400)"
  fi
  echo
  [ -n "$summary" ] && [ -s "$summary" ] && sed 's/^/- /' "$summary"
  echo
  echo "| event | figures |"
  echo "|---|---|"
  grep -E '^\[.*\] (failover [0-9]+:|etcd member [0-9] killed|  SM [12] back)' "$out/run.log" |
    sed -E 's/^\[[0-9:]+\] +//; s/\|/\//g' |
    awk '{ split($0, a, ":"); ev = a[1]; rest = substr($0, length(ev) + 2); gsub(/^ +/, "", rest); printf "| %s | %s |\n", ev, rest }' ||
    true
} >>"$REPORT"
echo "bench-etcd-chaos: appended to $REPORT (log: $out/run.log)"
exit $rc
