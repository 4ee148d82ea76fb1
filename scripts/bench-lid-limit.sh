#!/usr/bin/env bash
# bench-lid-limit.sh [SPEC] : link-isolated routing at the unicast LID limit. Unicast LIDs end
# at 0xBFFF (49,151); with 8 HCAs a server the default SPEC, xgft(3;16,16,128;1,16,16) with
# --rails 8, is 4,096 servers (32,768 HCAs) plus their switches, the largest such tree below it.
# One run of scripts/bench-routing.sh on one ibsim fabric (--rails LAAS_LID_RAILS, default 8):
#  - the LIDs the fabric needs (one per HCA port and per switch), checked below 0xBFFF;
#  - full routing time of ftree and of laas and laas/ftree (the aim: 0.10 or less);
#  - `laasctl tenant add` of LAAS_LID_SIZES servers (default "8 64 512") and their removes: request
#    to reply, the plugin's own time, LFT blocks sent (a small and a larger tenant: the work
#    of a change follows what changed, not the fabric);
#  - a failover (LAAS_BENCH_FAILOVER=1 of bench-routing.sh): kill -9 of the master OpenSM to
#    the standby's tables applied, and whether they are the master's; then the same with a pair
#    of ftree SMs (LAAS_BENCH_FAILOVER_FTREE=1) and both side by side: kill -9 to every LFT
#    block acknowledged, the LFT blocks each new master wrote;
#  - OpenSM's peak memory (VmHWM) with ftree and with laas;
#  - the switch check (LAAS_LID_CHECK=1, the default): the same tenant changes again with the
#    check on (switch_check_interval LAAS_BENCH_CHECK_S, default 300) in a second OpenSM run on
#    the same fabric, then its read rate over LAAS_BENCH_CHECK_SAMPLE_S seconds (default 60)
#    and the time of a full pass over every LFT block at that rate.
# Exits non-zero when the fabric needs more LIDs than there are, when the run gives no
# routing figures, when laas routes nothing or a change sends no LFT block, or when the
# failover's tables differ: a check of the run, not of its times. ctest runs it on a small
# rail fabric (integration.bench_lid_limit). Needs a build (LAAS_BUILD_DIR, default build/)
# with libosmlaas.so, laasctl and laas-topogen, ibsim-utils, opensm and python3.
set -eEuo pipefail
# A command that fails under errexit without a word of its own (a grep that matched nothing in a
# pipeline, an assignment from one) still names itself.
trap 'echo "bench-lid-limit: line $LINENO: \"$BASH_COMMAND\" failed (status $?)" >&2' ERR
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${LAAS_BUILD_DIR:-$ROOT/build}
SPEC=${1:-"xgft(3;16,16,128;1,16,16)"}
RAILS=${LAAS_LID_RAILS:-8}
SIZES=${LAAS_LID_SIZES:-"8 64 512"}
export LAAS_BENCH_WORK=${LAAS_BENCH_WORK:-/tmp/laas-bench-lid}
OUT=${LAAS_LID_OUT:-$LAAS_BENCH_WORK.out}
mkdir -p "$(dirname "$OUT")"
fail() {
  echo "bench-lid-limit: FAIL: $*" >&2
  exit 1
}

# The LIDs the fabric takes at LMC 0: one per HCA port, one per switch (its port 0).
mkdir -p "$LAAS_BENCH_WORK.lids"
"$BUILD/topology/laas-topogen" "$SPEC" --rails "$RAILS" -o "$LAAS_BENCH_WORK.lids/fabric.net"
LIDS=$(awk '/^Hca/ { n += $2 } /^Switch/ { n++ } END { print n + 0 }' "$LAAS_BENCH_WORK.lids/fabric.net")
rm -rf "$LAAS_BENCH_WORK.lids"
LIMIT=$((0xBFFF))
echo "bench-lid-limit: $SPEC --rails $RAILS needs $LIDS unicast LIDs of $LIMIT (0x0001-0xBFFF)," \
  "$((LIMIT - LIDS)) to spare"
[ "$LIDS" -gt 0 ] || fail "laas-topogen made no fabric of $SPEC"
[ "$LIDS" -le "$LIMIT" ] || fail "$SPEC needs $LIDS LIDs, more than the $LIMIT unicast LIDs"

ROUNDS=managed
[ "${LAAS_LID_CHECK:-1}" = 0 ] || ROUNDS="managed managed-check"
# LAAS_LID_ROUNDS: other rounds of bench-routing.sh ("managed-hops managed": the hop matrices
# filled at every run, as before, then not).
ROUNDS=${LAAS_LID_ROUNDS:-$ROUNDS}
LAAS_BENCH_TOPOGEN_ARGS="--rails $RAILS" LAAS_BENCH_SIZES="$SIZES" LAAS_BENCH_ROUNDS="$ROUNDS" \
  LAAS_BENCH_FAILOVER=${LAAS_LID_FAILOVER:-1} "$ROOT/scripts/bench-routing.sh" "$SPEC" | tee "$OUT"

# The figures of bench-routing.sh's report.
read -r FTREE LAAS < <(sed -n 's/^  ftree \([0-9.]*\) s, laas \([0-9.]*\) s, ratio.*/\1 \2/p' "$OUT") || true
if [ -z "${FTREE:-}" ] || [ -z "${LAAS:-}" ]; then fail "no routing figures in $OUT"; fi
# LAAS_BENCH_FTREE=0 (bench-routing.sh) leaves ftree out: its figures are then 0 by design.
WITH_FTREE=${LAAS_BENCH_FTREE:-1}
awk -v f="$FTREE" -v l="$LAAS" -v w="$WITH_FTREE" 'BEGIN { exit !((f > 0 || w == 0) && l > 0) }' ||
  fail "a full routing took no time (ftree $FTREE s, laas $LAAS s): nothing was routed"
FIRST_BLOCKS=$(sed -n 's/^  laas plugin, first run: .*; \([0-9]*\) LFT blocks to send.*/\1/p' "$OUT")
[ "${FIRST_BLOCKS:-0}" -gt 0 ] || fail "laas's first run sent no LFT block: it routed nothing"
# Change rows: "add N (managed)  wall service sweep hops plugin lft-queue upload to-reply runs blocks".
ROWS=$(grep -E '^(add|remove) [0-9]+ \(managed(-check)?(-hops)?(-lids)?\)' "$OUT" || true)
[ "$(grep -c . <<<"$ROWS")" -eq $((2 * $(wc -w <<<"$SIZES") * $(wc -w <<<"$ROUNDS"))) ] ||
  fail "expected an add and a remove row per size ($SIZES) and round ($ROUNDS): $(grep -E '^(add|remove) ' "$OUT")"
if [ "${LAAS_LID_CHECK:-1}" != 0 ]; then
  CHECK=$(sed -n 's/^switch check, managed-check: //p' "$OUT")
  [ -n "$CHECK" ] || fail "no switch check figures in $OUT"
  case $CHECK in
    *"no reads"*) fail "the switch check read nothing: $CHECK" ;;
    *"mismatches 0") ;;
    *) fail "the switch check found mismatches on a fabric nobody else wrote: $CHECK" ;;
  esac
fi
! grep -q FAILED <<<"$ROWS" || fail "a tenant change failed: $(grep FAILED <<<"$ROWS")"
awk '$NF <= 0 { exit 1 }' <<<"$ROWS" || fail "a tenant change sent no LFT block"
if [ "${LAAS_LID_FAILOVER:-1}" = 1 ]; then
  FO=$(sed -n 's/^failover: //p' "$OUT")
  [ -n "$FO" ] || fail "no failover figures in $OUT"
  case $FO in
    "not run:"*) echo "bench-lid-limit: the failover did not fit on this fabric: $FO" ;;
    "stalled:"*) fail "the laas pair's failover $FO" ;;
    *"tables identical: yes"*) ;;
    *) fail "the standby's tables differ from the master's: $FO" ;;
  esac
  # The ftree pair's (LAAS_BENCH_FAILOVER_FTREE=1, bench-routing.sh's default).
  FO_FTREE=$(sed -n 's/^failover ftree: //p' "$OUT")
  case $FO_FTREE in
    "stalled:"*) fail "the ftree pair's failover $FO_FTREE" ;;
  esac
  FO_VS=$(sed -n 's/^failover laas vs ftree: //p' "$OUT")
fi

echo "== bench-lid-limit summary: $SPEC --rails $RAILS, $LIDS LIDs of $LIMIT"
if [ "$WITH_FTREE" = 0 ]; then
  echo "full routing: laas $LAAS s (ftree not run: LAAS_BENCH_FTREE=0)"
else
  awk -v f="$FTREE" -v l="$LAAS" 'BEGIN { printf "full routing: ftree %.2f s, laas %.2f s, laas/ftree %.3f (aim <= 0.10)\n", f, l, l / f }'
fi
FIRST_SWITCHES=$(sed -n 's/^  laas plugin, first run: .* LFT blocks to send to \([0-9]*\) switches.*/\1/p' "$OUT")
echo "laas first run: $FIRST_BLOCKS LFT blocks to ${FIRST_SWITCHES:-?} switches" \
  "($((FIRST_BLOCKS / ${FIRST_SWITCHES:-1})) blocks of 64 LIDs a switch)"
awk '{ n = NF; printf "%-8s %5s servers %-15s %6.0f ms request to reply, plugin %5.0f ms, %7d LFT blocks\n",
  $1, $2, $3, $4, $8, $n }' <<<"$ROWS"
grep -E '^OpenSM peak resident memory' "$OUT" || true
[ -z "${CHECK:-}" ] || echo "switch check: $CHECK"
[ -z "${FO:-}" ] || echo "failover: $FO"
[ -z "${FO_FTREE:-}" ] || echo "failover ftree: $FO_FTREE"
[ -z "${FO_VS:-}" ] || echo "failover laas vs ftree: $FO_VS"
