#!/usr/bin/env bash
# check-scale.sh [SPEC] [SIZES...]: tenant changes on a large simulated tree, each checked on
# the tables read back from the switches (tests/integration/scale_changes.sh: audit, SA path
# records within tenants and none across them). Default: the 1,728-host
# xgft(3;12,12,12;1,12,12) with tenants of 10, 300 and 600 hosts; QOS=1 audits the SL2VL
# tables too. Needs a build (LAAS_BUILD_DIR, default build/), ibsim-utils, opensm,
# infiniband-diags and jq. Minutes of work: a script that reports, not part of CI.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${LAAS_BUILD_DIR:-$ROOT/build}" && pwd)
for f in laasctl/laasctl opensm_plugin/libosmlaas.so tools/laas-audit topology/laas-topogen; do
  [ -e "$BUILD/$f" ] || { echo "check-scale.sh: $BUILD/$f missing (build first: scripts/build.sh)" >&2; exit 2; }
done
export LAASCTL=$BUILD/laasctl/laasctl LAAS_PLUGIN_DIR=$BUILD/opensm_plugin
export LAAS_AUDIT=$BUILD/tools/laas-audit LAAS_TOPOGEN=$BUILD/topology/laas-topogen
export LAAS_SL2VL_DUMP=$BUILD/tools/laas-sl2vl-dump LAAS_WORK=${LAAS_WORK:-/tmp/laas-scale}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec bash "$ROOT/tests/integration/scale_changes.sh" "$@"
