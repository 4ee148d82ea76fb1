#!/usr/bin/env bash
# bench-api-load.sh [CLIENTS [REQUESTS]] : laas-api under load, the figures of issue 47's
# acceptance (200 concurrent HTTPS clients with client certificates, 10,000 requests): requests
# per second, latency p50/p90/p99/max, errors, connections, laas-api's resident memory before and
# after, and its clean stop. The real OpenSM with the plugin on the demo fabric
# (tests/integration/api_load.sh, which CI runs as integration.api_load with 2,000 requests).
# Needs a build (LAAS_BUILD_DIR, default build/) with libosmlaas.so, laasctl and laas-api; runs
# laas-api-asan (AddressSanitizer, LeakSanitizer, UBSan: the leak check) when it was built,
# else laas-api (LAAS_API_PLAIN=1 asks for that one: the figures without the sanitizers' cost).
# API_OPTIONS passes laas-api options (e.g. "--threads 4"). Prints a markdown table row for
# bench/api_load_results.md. Use the CPU lock on a shared machine (flock /tmp/laas-cpu.lock).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${LAAS_BUILD_DIR:-$ROOT/build}
for f in opensm_plugin/libosmlaas.so laasctl/laasctl api/laas-api topology/laas-topogen; do
  [ -e "$BUILD/$f" ] || { echo "bench-api-load: $BUILD/$f is missing: build first (scripts/build.sh)" >&2; exit 2; }
done
out=$(mktemp -d /tmp/laas-bench-api.XXXXXX)
export LAASCTL=$BUILD/laasctl/laasctl LAAS_PLUGIN_DIR=$BUILD/opensm_plugin LAAS_API=$BUILD/api/laas-api
export LAAS_TOPOGEN=$BUILD/topology/laas-topogen LAAS_AUDIT=$BUILD/tools/laas-audit LAAS_WORK=$out
if [ -x "$BUILD/api/laas-api-asan" ] && [ -z "${LAAS_API_PLAIN:-}" ]; then
  export LAAS_API_ASAN=$BUILD/api/laas-api-asan
fi
export CLIENTS=${1:-200} REQUESTS=${2:-10000}
echo "bench-api-load: $CLIENTS clients, $REQUESTS requests, work in $out"
rc=0
"$ROOT/tests/integration/api_load.sh" bench || rc=$?
summary=$out/bench/summary.txt
[ -f "$summary" ] || { echo "bench-api-load: no summary (exit $rc)" >&2; exit 1; }
binary=$([ -n "${LAAS_API_ASAN:-}" ] && echo "laas-api-asan" || echo "laas-api")
awk -v when="$(date -u '+%Y-%m-%d %H:%M')" -v bin="$binary" -v opts="${API_OPTIONS:-defaults}" -v rc="$rc" '
  /^api load:/ { clients = $3; requests = $5; secs = $8; rate = $10; conns = $11; errors = $NF }
  /^latency ms:/ { p50 = $4; p90 = $6; p99 = $8; max = $10 }
  /^laas-api RSS:/ { rss = $3 " / " $6 " / " $12 " kB" }
  END {
    gsub(/[(\/s),]/, "", rate)
    printf "| %s | %s (%s) | %s | %s | %s s | %s/s | %s | %s | %s | %s | %s | %s | %s |\n",
      when, bin, opts, clients, requests, secs, rate, conns, errors, p50, p99, max, rss,
      rc == 0 ? "pass" : "FAIL"
  }' "$summary"
exit "$rc"
