#!/usr/bin/env bash
# Runs attnprop's benchmarks (bench/, Google Benchmark) and prints a compact table of ratios
# attnprop / baseline with the budgets of design.md, plus the absolute seconds. Writes the table
# as CSV and the full Google Benchmark output next to the binary.
#
#   scripts/run-bench.sh [BUILD_DIR] [--full] [--quick] [--csv FILE] [-- benchmark flags...]
#
# BUILD_DIR defaults to build-bench (what `make bench` configures: Release, ATTNPROP_BUILD_BENCH).
# --full  also n = 4096 for the MPFR-256 and Arb-256 soft cases (adds 7-15 minutes on 2 cores) and
#         for the influence profile (adds about 16 minutes: a forward pass, the whole profile, 1 naive pass)
# --quick n = 256 only, few pairs (a smoke test, about 10 s)
# The default run takes 4-6 minutes on 2 cores (the influence profile at n = 1024 is about 1.5 of
# them). attnprop and each baseline run alternately and
# are timed by CPU clock (bench/paired.hpp), so load on a shared machine disturbs the ratios
# little; absolute times still grow with the load.
set -euo pipefail

build=build-bench
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build=$1
  shift
fi
csv=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --full|--quick) args+=("$1") ;;
    --csv) csv=$2; shift ;;
    --) shift; args+=("$@"); break ;;
    *) args+=("$1") ;;
  esac
  shift
done
bin="$build/bin/attnprop_bench"
if [ ! -x "$bin" ]; then
  echo "run-bench: $bin not found; build it with: make bench (or cmake -DATTNPROP_BUILD_BENCH=ON)" >&2
  exit 2
fi
[ -n "$csv" ] || csv="$build/bench-ratios.csv"
raw="$build/bench-raw.json"

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
echo "attnprop benchmarks: $(date -u '+%Y-%m-%d %H:%M UTC'), ${cpu:-unknown CPU}, $(nproc) cores," \
     "load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "binary: $bin; per-case progress below, then the table (CSV: $csv, raw: $raw)"
"$bin" --quiet --csv="$csv" --benchmark_out="$raw" --benchmark_out_format=json ${args[@]+"${args[@]}"}
