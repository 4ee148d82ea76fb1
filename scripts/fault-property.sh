#!/usr/bin/env bash
# Issue 10 acceptance: the tenants-under-faults property test at full length (100,000 random
# operations per algorithm and tree by default), printing its figures. ctest runs a short version.
# Usage: scripts/fault-property.sh [OPERATIONS]   (build first: ninja -C build laas_unit_tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${LAAS_BUILD_DIR:-build}"
ops="${1:-100000}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
LAAS_FAULT_OPS="$ops" "$build/tests/laas_unit_tests" --gtest_filter='Trees/FaultProperty.*' \
  >"$log" 2>&1 || status=$?
grep -E '^\[ +(figures|OK|FAILED|PASSED) +\]|Failure|^op ' "$log" || true
exit "$status"
