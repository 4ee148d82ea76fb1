#!/usr/bin/env bash
# The long laas-sim experiments behind docs/simulation.md (not run in CI: tens of minutes on
# two cores). Writes CSV, PNG and a markdown table under docs/figures/.
#
#   scripts/sim-sweep.sh [all|reference|exp8|juropa|swf|sweep|backfill-sweep]...
#
# Environment: LAAS_BUILD_DIR (default build), JOBS (sweep threads, default 1), SEEDS (sweep
# seeds per point, default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${LAAS_BUILD_DIR:-build}
JOBS=${JOBS:-1}
SEEDS=${SEEDS:-3}
OUT=docs/figures
SIM=$BUILD/sim/laas-sim
TREE='xgft(3;18,18,36;1,18,18)'
REF=../shared/reference/release-exp8-10000-tenants.csv
TRACES=../shared/traces
[ -f "$REF" ] || REF=/work/shared/reference/release-exp8-10000-tenants.csv
[ -d "$TRACES" ] || TRACES=/work/shared/traces
mkdir -p "$OUT" "$OUT/work"

if [ ! -x "$SIM" ]; then
  cmake -S . -B "$BUILD" -G Ninja >/dev/null
  ninja -C "$BUILD" -j2 laas-sim
fi

run() {  # run SUMMARY LABEL args...: one laas-sim run appended to a summary CSV
  local summary=$1 label=$2
  shift 2
  echo "== $label: $*" >&2
  "$SIM" "$@" --summary "$summary" --label "$label" >/dev/null
}

reference() {  # the paper release's exact workload file
  local s=$OUT/reference.csv
  rm -f "$s"
  for a in laas simple unconstrained; do
    run "$s" "release-file" --topology "$TREE" --workload "$REF" --algorithm "$a" --policy fifo
  done
  run "$s" "release-file" --topology "$TREE" --workload "$REF" --algorithm laas --policy backfill
  run "$s" "release-file" --topology "$TREE" --workload "$REF" --algorithm unconstrained \
    --policy backfill
  # One fully checked run (check_all after every ADD/REM) with its log audited offline.
  run "$s" "release-file-checked" --topology "$TREE" --workload "$REF" --algorithm laas \
    --policy fifo --check --log "$OUT/work/release-laas.log"
  "$SIM" audit --topology "$TREE" --log "$OUT/work/release-laas.log" --check-every 100 \
    > "$OUT/reference-audit.txt"
  rm -f "$OUT/work/release-laas.log"  # ~20 MB; regenerate with this script
}

exp8() {  # the acceptance point: exponential mean 8, 5 seeds, both generators
  local s=$OUT/exp8.csv
  rm -f "$s"
  for gen in exp-release exp; do
    for seed in 1 2 3 4 5; do
      local w=$OUT/work/$gen-8-s$seed.csv
      "$SIM" gen --topology "$TREE" --dist "$gen" --mean 8 -n 10000 -r 20:3000 --seed "$seed" -o "$w"
      for a in laas simple unconstrained; do
        run "$s" "$gen-8-s$seed" --topology "$TREE" --workload "$w" --algorithm "$a" --policy fifo
      done
      run "$s" "$gen-8-s$seed" --topology "$TREE" --workload "$w" --algorithm laas --policy backfill
    done
  done
}

juropa() {  # approximate JUROPA size PDF (see sim/data/juropa-approx.pdf)
  local s=$OUT/juropa.csv
  rm -f "$s"
  for seed in 1 2 3; do
    local w=$OUT/work/juropa-s$seed.csv
    "$SIM" gen --topology "$TREE" --dist pdf --pdf sim/data/juropa-approx.pdf -n 10000 \
      -r 20:3000 --seed "$seed" -o "$w"
    for a in laas simple unconstrained; do
      run "$s" "juropa-s$seed" --topology "$TREE" --workload "$w" --algorithm "$a" --policy fifo
    done
    run "$s" "juropa-s$seed" --topology "$TREE" --workload "$w" --algorithm laas --policy backfill
  done
  # Links that could be powered off versus instantaneous utilization, LaaS FIFO, seed 1.
  "$SIM" --topology "$TREE" --workload "$OUT/work/juropa-s1.csv" --algorithm laas \
    --timeline "$OUT/work/juropa-timeline.csv" >/dev/null
  gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced
set output '$OUT/links-off-juropa.png'
set datafile separator ','
set title 'LaaS, approximate JUROPA sizes: up-links no tenant holds vs. host utilization (every event)'
set xlabel 'host utilization (%)'; set ylabel 'up-links that could be powered off (%)'; set grid
set key off
plot '$OUT/work/juropa-timeline.csv' every 5 using (\$2/11664.0*100):((1-(\$4+\$5)/23328.0)*100) with dots lc rgb '#1f77b4'
GP
}

swf() {  # the two Parallel Workloads Archive traces, on trees the size of their machines
  local s=$OUT/swf.csv
  rm -f "$s"
  local kth=$TRACES/KTH-SP2-1996-2.1-cln.swf.gz nasa=$TRACES/NASA-iPSC-1993-3.1-cln.swf.gz
  local kth_tree='xgft(2;10,10;1,10)' nasa_tree='xgft(2;16,8;1,16)'  # 100 and 128 hosts
  for pair in "kth|$kth|$kth_tree" "nasa|$nasa|$nasa_tree"; do
    IFS='|' read -r name trace tree <<<"$pair"
    for a in laas simple unconstrained; do
      for p in fifo backfill; do
        run "$s" "$name-trace" --topology "$tree" --workload "$trace" --algorithm "$a" --policy "$p"
      done
    done
    # Saturated variant: the trace's sizes and runtimes, everyone queued at time 0.
    local w=$OUT/work/$name-zero.csv
    "$SIM" gen --topology "$tree" --dist swf --swf "$trace" -n 0 --zero-arrival -o "$w" 2>/dev/null
    for a in laas simple unconstrained; do
      for p in fifo backfill; do
        run "$s" "$name-zero-arrival" --topology "$tree" --workload "$w" --algorithm "$a" --policy "$p"
      done
    done
  done
}

sweep() {  # the paper's figures: utilization versus average tenant size, FIFO
  mkdir -p "$OUT/sweep-fifo"
  "$SIM" sweep --topology "$TREE" --dists exp,gauss,uniform \
    --means 2,4,8,12,16,20,24,32,48,64,96,128,192,256,320,384,512 --seeds "$SEEDS" \
    --algorithms laas,simple,unconstrained --policies fifo -j "$JOBS" --out "$OUT/sweep-fifo" --plot
}

backfill_sweep() {  # LaaS and bare metal with EASY backfilling, exponential and Gaussian sizes
  mkdir -p "$OUT/sweep-backfill"
  "$SIM" sweep --topology "$TREE" --dists exp,gauss --means "${BACKFILL_MEANS:-4,8,32,128,512}" \
    --seeds "${BACKFILL_SEEDS:-1}" \
    --algorithms laas,unconstrained --policies fifo,backfill -j "$JOBS" \
    --out "$OUT/sweep-backfill" --plot
}

table() {  # markdown digest of the summary CSVs
  {
    echo "# laas-sim results (generated by scripts/sim-sweep.sh)"
    for f in reference exp8 juropa swf; do
      [ -f "$OUT/$f.csv" ] || continue
      echo
      echo "## $f"
      echo
      echo "| run | topology | algorithm | policy | host util % | L1 % | L2 % | links off % | whole-run host % | placed | rejected | placer CPU p50/p99/max us | CPU s | wall s |"
      echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
      awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %d | %.0f / %.0f / %.0f | %.2f | %.2f |\n",
        $1, $3, $4, $5, $7*100, $9*100, $10*100, $11*100, $12*100, $15, $16, $23, $24, $25, $22, $21 }' "$OUT/$f.csv"
    done
    if [ -f "$OUT/exp8.csv" ]; then
      echo
      echo "## exp8: mean over seeds"
      echo
      echo "| generator | algorithm | policy | runs | host util % (mean) | min | max | L1 % | L2 % |"
      echo "|---|---|---|---|---|---|---|---|---|"
      awk -F, 'NR > 1 { split($1, g, "-8-"); k = g[1] "|" $4 "|" $5; n[k]++; u[k] += $7; l1[k] += $9; l2[k] += $10;
          if (!(k in lo) || $7 < lo[k]) lo[k] = $7; if ($7 > hi[k]) hi[k] = $7 }
        END { for (k in n) { split(k, p, "|"); printf "| %s | %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
          p[1], p[2], p[3], n[k], u[k]/n[k]*100, lo[k]*100, hi[k]*100, l1[k]/n[k]*100, l2[k]/n[k]*100 } }' \
        "$OUT/exp8.csv" | sort
    fi
  } > "$OUT/results.md"
  echo "wrote $OUT/results.md" >&2
}

[ $# -gt 0 ] || set -- all
for what in "$@"; do
  case $what in
    all) reference; exp8; juropa; swf; sweep; backfill_sweep ;;
    reference) reference ;;
    exp8) exp8 ;;
    juropa) juropa ;;
    swf) swf ;;
    sweep) sweep ;;
    backfill-sweep) backfill_sweep ;;
    table) ;;
    *) echo "unknown experiment $what" >&2; exit 2 ;;
  esac
done
table
rm -rf "$OUT/work"
