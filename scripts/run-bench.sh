#!/usr/bin/env bash
# Runs attnprop's benchmarks (bench/, Google Benchmark) and prints a compact table of ratios
# attnprop / baseline with the budgets of design.md, plus the absolute seconds. Writes the table
# as CSV and the full Google Benchmark output next to the binary.
#
#   scripts/run-bench.sh [BUILD_DIR] [--full] [--quick] [--csv FILE] [-- benchmark flags...]
#
# BUILD_DIR defaults to build-bench (what `make bench` configures: Release, ATTNPROP_BUILD_BENCH).
# --full  also n = 4096 for the MPFR-256 and Arb-256 soft cases (adds about 7 minutes on 2 cores)
# --quick n = 256 only, one repetition (a smoke test, about 15 s)
# The default run takes about 5 minutes on 2 cores. Ratios use median CPU times, so other load
# on the machine disturbs them less than wall-clock times, but a quiet machine is still best.
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
