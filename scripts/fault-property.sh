#!/usr/bin/env bash
# The tenants-under-faults property test at full length (100,000 random
# operations per algorithm and tree by default), printing its figures. ctest runs a short version.
# Usage: scripts/fault-property.sh [OPERATIONS [AUDIT_EVERY]]   (build first: ninja -C build
# laas_unit_tests). AUDIT_EVERY (default 1) audits the routes after every that many operations.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${LAAS_BUILD_DIR:-build}"
ops="${1:-100000}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
LAAS_FAULT_OPS="$ops" LAAS_FAULT_AUDIT_EVERY="${2:-1}" "$build/tests/laas_unit_tests" --gtest_filter='Trees/FaultProperty.*' \
  >"$log" 2>&1 || status=$?
grep -E '^\[ +(figures|OK|FAILED|PASSED) +\]|Failure|^op ' "$log" || true
exit "$status"
