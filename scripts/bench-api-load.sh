#!/usr/bin/env bash
# bench-api-load.sh [CLIENTS [REQUESTS]] : laas-api under load, the figures of issue 47's
# acceptance (200 concurrent HTTPS clients with client certificates, 10,000 requests): requests
# per second, latency p50/p90/p99/max, errors, laas-api's resident memory before and after.
# The real OpenSM with the plugin on the demo fabric (tests/integration/api_load.sh, which CI
# runs in a short version). Needs a build (LAAS_BUILD_DIR, default build/) with libosmlaas.so,
# laasctl and laas-api. API_OPTIONS passes laas-api options (e.g. "--threads 4").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${LAAS_BUILD_DIR:-$ROOT/build}
for f in opensm_plugin/libosmlaas.so laasctl/laasctl api/laas-api topology/laas-topogen; do
  [ -e "$BUILD/$f" ] || { echo "bench-api-load: $BUILD/$f is missing: build first (scripts/build.sh)" >&2; exit 2; }
done
out=$(mktemp -d /tmp/laas-bench-api.XXXXXX)
export LAASCTL=$BUILD/laasctl/laasctl LAAS_PLUGIN_DIR=$BUILD/opensm_plugin LAAS_API=$BUILD/api/laas-api
export LAAS_TOPOGEN=$BUILD/topology/laas-topogen LAAS_AUDIT=$BUILD/tools/laas-audit LAAS_WORK=$out
export CLIENTS=${1:-200} REQUESTS=${2:-10000}
echo "bench-api-load: $CLIENTS clients, $REQUESTS requests, work in $out"
"$ROOT/tests/integration/api_load.sh" bench
