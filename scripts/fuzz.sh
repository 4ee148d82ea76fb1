#!/usr/bin/env bash
# Runs the libFuzzer targets (tests/fuzz) for a given time each and reports what they did.
#   scripts/fuzz.sh TARGET|all SECONDS
# Builds them first with clang, AddressSanitizer and UBSan into ${LAAS_FUZZ_BUILD:-build-fuzz}
# (configured there unless that directory is a fuzz-enabled build already).
# Each target starts from its seed corpus in tests/fuzz/corpus/<target>/ and grows a working
# corpus in the build directory (the seeds are not touched). A crash, a sanitizer finding, a
# leak or a hang (over 30 s on one input: generous, CI machines may be loaded) fails the run;
# the input is kept as
# <build>/fuzz-artifacts/<target>/crash-* (make it a regression test: see tests/fuzz/README.md).
# Targets run LAAS_FUZZ_JOBS at a time (default: one a core).
# Prints one line per target: executions, exec/s, coverage (edges), features, corpus size.
set -euo pipefail
cd "$(dirname "$0")/.."
targets_all=(socket_protocol laas_yaml tenants_yaml state_json ibnetdiscover partitions
  workload_swf workload_csv switch_dumps api_routes)
if [ $# -ne 2 ]; then
  echo "usage: $0 TARGET|all SECONDS (targets: ${targets_all[*]})" >&2
  exit 2
fi
what=$1 seconds=$2
if [ "$what" = all ]; then targets=("${targets_all[@]}"); else targets=("$what"); fi
build="${LAAS_FUZZ_BUILD:-build-fuzz}"
# A build directory configured with the fuzz targets already (scripts/test.sh's sanitizer
# build) is used as it is; any other is configured for fuzzing alone.
if ! grep -qs '^LAAS_BUILD_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLAAS_BUILD_FUZZ=ON -DLAAS_SANITIZE=address,undefined -DLAAS_BUILD_TESTS=OFF \
    -DLAAS_BUILD_BENCH=OFF -DLAAS_BUILD_PLUGIN=OFF >/dev/null
fi
ninja -C "$build" "${targets[@]/#/fuzz_}" >/dev/null
status=0
# Inputs that once crashed a target (tests/fuzz/regressions/<target>/) must run clean first.
for t in "${targets[@]}"; do
  regressions="tests/fuzz/regressions/$t"
  [ -d "$regressions" ] || continue
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build/tests/fuzz/fuzz_$t" \
    "$regressions"/* >"$build/fuzz-regressions-$t.log" 2>&1 ||
    { echo "fuzz: $t fails on a regression input: see $build/fuzz-regressions-$t.log" >&2; status=1; }
done
# One target a core at a time (LAAS_FUZZ_JOBS, default nproc): each runs for SECONDS, so the
# pass takes SECONDS per round of targets instead of per target.
jobs=${LAAS_FUZZ_JOBS:-$(nproc)}
fuzz_one() {
  local t=$1
  local work="$build/fuzz-corpus/$t" art="$build/fuzz-artifacts/$t" log="$build/fuzz-logs/$t.log"
  mkdir -p "$work" "$art" "$(dirname "$log")"
  local rc=0
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" "$work" "tests/fuzz/corpus/$t" \
    >"$log" 2>&1 || rc=$?
  echo "$rc" >"$log.rc"
}
running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
printf '%-16s %10s %8s %8s %9s %7s  %s\n' target execs exec/s cov features corpus result
for t in "${targets[@]}"; do
  log="$build/fuzz-logs/$t.log"
  art="$build/fuzz-artifacts/$t"
  rc=$(cat "$log.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=ok
  if [ "$rc" -ne 0 ]; then
    result="FAILED (exit $rc; see $log and $art)"
    status=1
  fi
  printf '%-16s %10s %8s %8s %9s %7s  %s\n' "$t" "${execs:-?}" "${speed:-?}" "${cov:-?}" \
    "${ft:-?}" "${corp:-?}" "$result"
done
exit "$status"
