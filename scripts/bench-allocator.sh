#!/usr/bin/env bash
# The allocator benchmark: nine workload classes generated with `laas-sim gen`
# (10,000 tenants, runtimes U[20,3000], all arriving at 0) on xgft(3;18,18,36;1,18,18), FIFO,
# several seeds; prints one markdown table (medians over seeds) and, if a baseline laas-sim is
# given, the same runs of the baseline interleaved with ours (run by run, so machine load hits
# both alike) and the ratios.
#
#   scripts/bench-allocator.sh [BASELINE_LAAS_SIM]
#
# Environment: LAAS_BUILD_DIR (default build), SEEDS (default "1 2 3"), TENANTS (10000),
# POLICY (fifo), CLASSES (subset of the names below), OUT (work directory, default
# build/bench-allocator), NICE (default 10), UNCONSTRAINED (1: also run the Unconstrained
# algorithm on the same workloads and print LaaS's distance to it).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${LAAS_BUILD_DIR:-build}
SIM=$BUILD/sim/laas-sim
BASE=${1:-}
SEEDS=${SEEDS:-1 2 3}
TENANTS=${TENANTS:-10000}
POLICY=${POLICY:-fifo}
OUT=${OUT:-$BUILD/bench-allocator}
NICE=${NICE:-10}
UNCONSTRAINED=${UNCONSTRAINED:-0}
TREE='xgft(3;18,18,36;1,18,18)'
# The workload classes of the issue's table: ALL_CLASSES and gen_args NAME.
source scripts/workload-classes.sh
CLASSES=${CLASSES:-$ALL_CLASSES}

[ -x "$SIM" ] || {
  echo "$SIM not built (ninja -C $BUILD laas-sim)" >&2
  exit 1
}
if [ -n "$BASE" ] && [ ! -x "$BASE" ]; then
  echo "baseline $BASE is not an executable" >&2
  exit 1
fi
mkdir -p "$OUT"
runs=$OUT/runs.jsonl
: >"$runs"

one() {  # one VERSION SIM CLASS SEED WORKLOAD [ALGORITHM]
  local json
  json=$(nice -n "$NICE" "$2" --topology "$TREE" --workload "$5" --algorithm "${6:-laas}" \
    --policy "$POLICY" --json | tr -d '\n')
  printf '{"version":"%s","class":"%s","seed":%s,"r":%s}\n' "$1" "$3" "$4" "$json" >>"$runs"
}

for seed in $SEEDS; do
  for c in $CLASSES; do
    w=$OUT/$c-s$seed.csv
    # shellcheck disable=SC2046  # gen_args is a word list on purpose
    "$SIM" gen --topology "$TREE" $(gen_args "$c") -n "$TENANTS" -r 20:3000 --seed "$seed" \
      -o "$w"
    echo "== $c seed $seed" >&2
    # Interleaved: baseline then ours on the same workload, back to back.
    if [ -n "$BASE" ]; then one base "$BASE" "$c" "$seed" "$w"; fi
    one new "$SIM" "$c" "$seed" "$w"
    if [ "$UNCONSTRAINED" = 1 ]; then one unconstrained "$SIM" "$c" "$seed" "$w" unconstrained; fi
  done
done

python3 - "$runs" "$CLASSES" "$POLICY" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
classes = sys.argv[2].split()
policy = sys.argv[3]
have_base = any(r["version"] == "base" for r in runs)

def med(version, cls, key):
    v = [r["r"].get(key, 0) for r in runs if r["version"] == version and r["class"] == cls]
    return statistics.median(v) if v else float("nan")

def fmt_us(x):
    return f"{x/1000:.2f} ms" if x >= 1000 else f"{x:.0f} us"

seeds = sorted({r["seed"] for r in runs})
print(f"policy {policy}, seeds {seeds}, medians over seeds; wall-clock per call (CPU in brackets)")
print()
cols = ["util %", "p50", "p99", "max", "whole run s", "calls", "budget cuts"]
if have_base:
    print("| class | " + " | ".join(f"{c} base / new" for c in cols) + " |")
else:
    print("| class | " + " | ".join(cols) + " |")
print("|---" * (len(cols) + 1) + "|")
for cls in classes:
    cells = []
    def pair(key, f):
        n = f(med("new", cls, key))
        return f"{f(med('base', cls, key))} / {n}" if have_base else n
    cells.append(pair("host_utilization", lambda x: f"{100*x:.2f}"))
    for k in ("alloc_us_p50", "alloc_us_p99", "alloc_us_max"):
        cpu = k.replace("alloc_us", "alloc_cpu_us")
        cells.append(pair(k, fmt_us) + f" ({pair(cpu, fmt_us)})")
    cells.append(pair("wall_s", lambda x: f"{x:.2f}") + f" (CPU {pair('cpu_s', lambda x: f'{x:.2f}')})")
    cells.append(pair("placer_calls", lambda x: f"{x:.0f}"))
    cells.append(pair("budget_cuts", lambda x: f"{x:.0f}"))
    print(f"| {cls} | " + " | ".join(cells) + " |")
if any(r["version"] == "unconstrained" for r in runs):
    print()
    print("LaaS against Unconstrained (same workloads, same policy; medians, util %)")
    print()
    print("| class | Unconstrained | LaaS | points below |")
    print("|---|---|---|---|")
    for cls in classes:
        u, n = med("unconstrained", cls, "host_utilization"), med("new", cls, "host_utilization")
        print(f"| {cls} | {100*u:.2f} | {100*n:.2f} | {100*(u-n):.2f} |")
if have_base:
    print()
    print("ratios new / base (medians): p50, p99, max, CPU of whole run")
    for cls in classes:
        rs = []
        for k in ("alloc_cpu_us_p50", "alloc_cpu_us_p99", "alloc_cpu_us_max", "cpu_s"):
            b = med("base", cls, k)
            rs.append(f"{med('new', cls, k)/b:.2f}" if b else "-")
        print(f"- {cls}: " + ", ".join(rs))
EOF
