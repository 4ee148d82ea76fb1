#!/usr/bin/env bash
# The test command: installs dependencies, builds with warnings as errors and runs every test
# (unit, property, simulator, integration against the real OpenSM + ibsim, the Debian package)
# through ctest; then rebuilds with AddressSanitizer and UBSan and runs the tests that need no
# fabric again (LAAS_SKIP_SANITIZERS=1 skips that second pass); then rebuilds the unit tests
# with ThreadSanitizer and runs the suites whose code has threads -- the control socket and its
# workers, the service under concurrent requests, failover, metrics, the routing engine beside
# live audits and multicast trees (LAAS_SKIP_TSAN=1 skips that third pass); last, every
# libFuzzer target runs for LAAS_FUZZ_SECONDS (default 15) from its seed corpus
# (LAAS_SKIP_FUZZ=1 skips it; scripts/fuzz.sh runs them longer).
set -euo pipefail
cd "$(dirname "$0")/.."
# How long each pass took, for whoever keeps CI under its time budget, and the processor time
# its processes used (user + system, from bash's `times`): a pass that keeps both cores busy
# shows about twice its wall time, one that waits shows less.
children_cpu_s() { times | awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } printf "%d", s }'; }
started=$SECONDS
started_cpu=$(children_cpu_s)
total_wall=0
phase() {
  local wall=$((SECONDS - started)) cpu
  cpu=$(($(children_cpu_s) - started_cpu))
  total_wall=$((total_wall + wall))
  echo "test.sh: $1 took $wall s (processor time $cpu s; passes so far $total_wall s)" >&2
  started=$SECONDS
  started_cpu=$(children_cpu_s)
}
bash scripts/deps.sh
phase "installing the dependencies"
# Line tables only (-g1): backtraces and sanitizer reports keep their file:line, and the
# compiler spends a third less time on the test files than with full debug information.
# Unity builds (cmake/laas.cmake's LAAS_UNITY_BUILD): each header parsed once for eight files.
# The unit tests' own files at -O1 (LAAS_TEST_FILE_FLAGS; the code they test stays at -O2): a
# fifth less time on the largest target, and gcc's flow warnings (-Wmaybe-uninitialized) kept.
bash scripts/build.sh -DLAAS_WERROR=ON -DLAAS_UNITY_BUILD=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -DLAAS_TEST_FILE_FLAGS=-O1
phase "the build"
# The previous release, for the upgrade test (built here, before the tests, so that its
# compilation does not slow the fabric tests running beside it).
rc=0
bash scripts/build-previous-release.sh "${LAAS_BUILD_DIR:-build}/previous-release" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
phase "the previous release's build"
# Two at a time. Four fabric tests at a time (tried: 77 integration tests in 331 s against about
# 510 s) broke deadlines in a fresh-clone run: integration.switch_check's repair within two
# check intervals and integration.etcd_chaos's lease keepalive within 1,000 ms.
(cd "${LAAS_BUILD_DIR:-build}" && ctest --output-on-failure --timeout 1200 -j2 "$@")
phase "every test"
asan="${LAAS_BUILD_DIR:-build}-sanitize"
if [ -z "${LAAS_SKIP_SANITIZERS:-}" ]; then
  # clang, so that the libFuzzer targets come from this same build (the fuzzing pass below
  # runs them) instead of a second one. -O1: the speed ASan's authors advise, with line
  # tables; the unit tests' files too (at -O0 they compiled 35 s sooner, but the property tests,
  # which run the inline code of the headers they include, took 361 s instead of 189). No vptr
  # check: clang's reports a false positive in std::thread when a test has used up its file
  # descriptors (the check tests memory through a pipe); gcc's pass never had it.
  # Only what this pass and the fuzzing pass run: the unit tests, laas-sim (labels sim and
  # e2e) and the fuzz targets; the other programs run in the fabric tests only, on the first
  # build.
  CC=clang CXX=clang++ LAAS_BUILD_DIR="$asan" LAAS_BUILD_TARGETS="laas_unit_tests laas-sim fuzz_all" \
    bash scripts/build.sh -DLAAS_WERROR=ON -DLAAS_UNITY_BUILD=ON \
    -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g1 -O1" -DLAAS_NO_SANITIZE=vptr \
    -DLAAS_SANITIZE=address,undefined -DLAAS_BUILD_FUZZ=ON -DLAAS_BUILD_BENCH=OFF \
    -DLAAS_BUILD_PLUGIN=OFF
  (cd "$asan" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure --timeout 1200 -j2 -L 'unit|sim|e2e')
  phase "AddressSanitizer and UBSan pass"
fi
if [ -z "${LAAS_SKIP_TSAN:-}" ]; then
  # Only the unit tests, with only the files whose code has threads (the socket's workers,
  # concurrent requests, resume checks, failover, metrics, the routing's threads, the core's
  # engine beside live audits and multicast trees). The rest is single-threaded and ran twice
  # already.
  tsan="${LAAS_BUILD_DIR:-build}-tsan"
  threaded="service;ticker;socket_hardening;resume_check;host_states;failover;metrics;routing_threads;state_io;core_adapter;core_controller;core_multicast;core_tenants_file"
  LAAS_BUILD_DIR="$tsan" LAAS_BUILD_TARGETS="laas_unit_tests" \
    bash scripts/build.sh -DLAAS_WERROR=ON -DLAAS_UNITY_BUILD=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DLAAS_SANITIZE=thread -DLAAS_BUILD_BENCH=OFF -DLAAS_BUILD_PLUGIN=OFF \
    "-DLAAS_UNIT_TESTS_ONLY=$threaded"
  supp="$PWD/tests/tsan.supp"  # known false positives, each explained in the file
  (cd "$tsan" && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$supp" \
    ctest --output-on-failure --timeout 1200 -j2 -L unit)
  phase "ThreadSanitizer pass"
fi
if [ -z "${LAAS_SKIP_FUZZ:-}" ]; then
  # The sanitizer pass's build when it ran (it holds the fuzz targets), else fuzz.sh's own.
  if [ -z "${LAAS_SKIP_SANITIZERS:-}" ]; then export LAAS_FUZZ_BUILD="$asan"; fi
  bash scripts/fuzz.sh all "${LAAS_FUZZ_SECONDS:-15}"
  phase "fuzzing"
fi
echo "test.sh: the sum of the passes: $total_wall s" >&2
