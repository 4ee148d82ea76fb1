#!/usr/bin/env bash
# Issue 10 acceptance: the tenants-under-faults property test at full length (100,000 random
# operations per algorithm and tree by default), printing its figures. ctest runs a short version.
# Usage: scripts/fault-property.sh [OPERATIONS]   (build first: ninja -C build laas_unit_tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${LAAS_BUILD_DIR:-build}"
ops="${1:-100000}"
LAAS_FAULT_OPS="$ops" "$build/tests/laas_unit_tests" --gtest_filter='Trees/FaultProperty.*' |
  grep -E '^\[ (figures|      OK|  FAILED|  PASSED) ' || true
# The exit status is the test binary's verdict, not grep's.
LAAS_FAULT_OPS=1 "$build/tests/laas_unit_tests" --gtest_filter='Trees/FaultProperty.*' >/dev/null
