#!/usr/bin/env bash
# api_load.sh: laas-api under load -- CLIENTS concurrent HTTPS clients (curl --parallel: one
# connection a client, kept alive, a new one when laas-api closes it, each new one resuming the
# TLS session of an earlier one as curl does) make REQUESTS reads (status, tenants, a tenant,
# hosts, links, SMs in turn) through laas-api, with its default bounds (8 threads, 64 waiting
# connections), to the plugin in the real OpenSM on the demo fabric. Reports requests/s, latency
# p50/p90/p99/max and the errors; fails on any error (an answer but 200, a transfer curl could not
# finish), a p99 over MAX_P99_MS (default 10000), laas-api's resident memory grown by more than
# MAX_RSS_GROWTH_KB (default 16384) over the second half of the run (the first warms it up), or
# a laas-api that does not stop cleanly on SIGTERM with no AddressSanitizer, LeakSanitizer or
# UBSan report: LAAS_API_ASAN (laas-api-asan, built with the sanitizer pass's flags) is the
# laas-api run when set. CLIENTS and REQUESTS default to 200 and 10,000
# (scripts/bench-api-load.sh); CI runs 200 and 2,000. The summary is in $WORK/summary.txt.
# Each of laas-api's three fixes undone in turn (200 clients, 2,000 requests, 2026-11-28): no TLS
# session ID context, 1,320 errors ("tlsv1 alert internal error" on resumed sessions); a listen
# backlog of 5, 35 connections reset and a p99 of 109 s; kept-alive clients never asked to
# close, a p99 of 28 s. bench/api_load_results.md has the figures.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_api.sh"
laas_enter_namespace "$@"
laas_setup "${1:-api_load}"
CLIENTS=${CLIENTS:-200} REQUESTS=${REQUESTS:-10000}
[ -n "${LAAS_API:-}" ] || die "LAAS_API (the laas-api binary) is not set"
if [ -n "${LAAS_API_ASAN:-}" ]; then
  LAAS_API=$LAAS_API_ASAN
  export ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=16 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
make_api_certs
start_demo
"$LAASCTL" -s "$WORK/laas.sock" --timeout 30 tenant add A --hosts 6 >/dev/null ||
  die "tenant add A failed"
start_api ${API_OPTIONS:-}
paths=(/v1/status /v1/tenants /v1/tenants/A /v1/hosts /v1/links /v1/sm)
for ((i = 0; i < REQUESTS; i++)); do
  printf 'url = "%s%s"\noutput = "/dev/null"\n' "$API_URL" "${paths[i % ${#paths[@]}]}"
done >urls.cfg
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$API_PID/status"; }
# load N: N of the requests of urls.cfg (from line $from), a line per request in results.txt.
load() {
  sed -n "$((from * 2 + 1)),$(((from + $1) * 2))p" urls.cfg >part.cfg
  from=$((from + $1))
  # 120 s a transfer: a client that waits for a worker waits; only that long is an error.
  curl -s --cacert ca.crt --cert monitor.crt --key monitor.key --parallel --parallel-max "$CLIENTS" \
    --parallel-immediate --max-time 120 -w '%{http_code} %{time_total} %{num_connects} %{errormsg}\n' \
    -K part.cfg >>results.txt || true
}
# Two halves: the first warms laas-api's allocator (and, built with AddressSanitizer, fills its
# quarantine of freed memory); the second must not grow it further (a leak of a connection's or a
# request's memory would, by its share of the half).
from=0
: >results.txt
rss_before=$(rss)
log "load: $CLIENTS concurrent clients, $REQUESTS requests, $(basename "$LAAS_API") (RSS ${rss_before} kB)"
start=$(date +%s.%N)
load $((REQUESTS / 2))
rss_half=$(rss)
load $((REQUESTS - REQUESTS / 2))
end=$(date +%s.%N)
rss_after=$(rss)
done_n=$(wc -l <results.txt)
errors=$(awk '$1 != 200' results.txt | wc -l)
errors=$((errors + REQUESTS - done_n))
connects=$(awk '{ n += $3 } END { print n + 0 }' results.txt)
sort -n -k2 results.txt | awk -v n="$done_n" -v s="$start" -v e="$end" -v c="$CLIENTS" \
  -v err="$errors" -v r0="$rss_before" -v r1="$rss_half" -v r2="$rss_after" -v conn="$connects" '
  { t[NR] = $2 }
  function at(q) { i = int(n * q); if (i < 1) i = 1; return t[i] * 1000 }
  END {
    printf "api load: %d clients, %d requests in %.1f s (%.0f/s), %d connections, errors %d\n", c, n, e - s, n / (e - s), conn, err
    printf "latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", at(0.5), at(0.9), at(0.99), t[n] * 1000
    printf "laas-api RSS: %d kB before, %d kB after the first half, %d kB after the second\n", r0, r1, r2
  }' | tee summary.txt
awk '$1 != 200 { $2 = ""; $3 = ""; print }' results.txt | sort | uniq -c | sort -rn | head -5
[ "$errors" -eq 0 ] || die "$errors request(s) failed (see $WORK/results.txt, api.log)"
# Every client waits its turn, none for long: without "Connection: close" while others wait,
# the clients behind kept-alive ones waited up to 30 s (p99 28 s; p99 1.4 s with it).
p99=$(sort -n -k2 results.txt | awk -v n="$done_n" '{ t[NR] = $2 } END { i = int(n * 0.99); if (i < 1) i = 1; printf "%d", t[i] * 1000 }')
[ "$p99" -le "${MAX_P99_MS:-10000}" ] || die "p99 latency ${p99} ms over ${MAX_P99_MS:-10000} ms"
[ $((rss_after - rss_half)) -le "${MAX_RSS_GROWTH_KB:-16384}" ] ||
  die "laas-api grew by $((rss_after - rss_half)) kB over the second half of the run"
kill -0 "$API_PID" || die "laas-api died under load"
# A clean stop; a sanitized laas-api reports leaks and errors here.
kill -TERM "$API_PID"
rc=0
wait "$API_PID" || rc=$?
[ "$rc" = 0 ] || die "laas-api exited $rc on SIGTERM: $(tail -20 api.log)"
! grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' api.log >sanitizer.txt ||
  die "laas-api: $(grep -m1 -A12 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' api.log)"
[ -z "${LAAS_API_ASAN:-}" ] || log "laas-api-asan stopped cleanly: no AddressSanitizer, LeakSanitizer or UBSan report"
log "PASS api_load"
