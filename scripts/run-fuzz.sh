#!/usr/bin/env bash
# Runs attnprop's libFuzzer targets (fuzz/) one after the other, each for SECONDS seconds (or
# FUZZ_RUNS executions, when that is set and comes first).
#   scripts/run-fuzz.sh BUILD_DIR SECONDS [TARGET...]      targets: json model formula case
#   FUZZ_RUNS=1000000 scripts/run-fuzz.sh build-asan 7200 case
# The seed corpora are assembled from the repository (models/, tests/golden/bad_inputs,
# fuzz/formulas.txt, the counterexample folders under tests/, and fuzz/regressions/TARGET/:
# inputs that once failed); what a run adds is kept in
# BUILD_DIR/fuzz-corpus/TARGET and reused by the next run. A crash, a leak or a timeout (a
# single input over 10 s) fails the run and leaves the input in BUILD_DIR/fuzz-artifacts/
# (reproduce: BUILD_DIR/bin/attnprop_fuzz_TARGET FILE). Logs: BUILD_DIR/fuzz-logs/TARGET.log.
set -euo pipefail
build=${1:?usage: run-fuzz.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: run-fuzz.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json model formula case)
src=$(cd "$(dirname "$0")/.." && pwd)

seeds="$build/fuzz-seeds"
rm -rf "$seeds"
mkdir -p "$seeds/json" "$seeds/model" "$seeds/formula" "$seeds/case" \
         "$build/fuzz-artifacts" "$build/fuzz-logs"
for f in "$src"/models/*.json "$src"/tests/golden/bad_inputs/*.json "$src"/tests/data/ffn-gelu*.json; do
  cp "$f" "$seeds/json/"
  cp "$f" "$seeds/model/"
done
k=0
while IFS= read -r line; do
  k=$((k + 1))
  printf '%s' "$line" > "$seeds/formula/formula-$k"
done < "$src/fuzz/formulas.txt"
k=0
while IFS= read -r -d '' f; do
  k=$((k + 1))
  cp "$f" "$seeds/case/case-$k.json"
  cp "$f" "$seeds/json/case-$k.json"
done < <(find "$src/tests" -name case.json -print0 | sort -z)

# Inputs that once failed (fixed since) stay seeds: fuzz/regressions/TARGET/.
for t in json model formula case; do
  if [ -d "$src/fuzz/regressions/$t" ]; then cp "$src/fuzz/regressions/$t"/* "$seeds/$t/"; fi
done

dict() {
  case "$1" in
    json|model) echo "$src/fuzz/model.dict" ;;
    formula) echo "$src/fuzz/formula.dict" ;;
    case) echo "$src/fuzz/case.dict" ;;
  esac
}

runs_flag=()
[ -z "${FUZZ_RUNS:-}" ] || runs_flag=(-runs="$FUZZ_RUNS")

status=0
for t in "${targets[@]}"; do
  bin="$build/bin/attnprop_fuzz_$t"
  [ -x "$bin" ] || { echo "run-fuzz: $bin is missing (make fuzz builds it)" >&2; exit 2; }
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  log="$build/fuzz-logs/$t.log"
  echo "run-fuzz: $t for ${seconds}s (log $log)"
  if "$bin" -max_total_time="$seconds" "${runs_flag[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -dict="$(dict "$t")" -artifact_prefix="$build/fuzz-artifacts/$t-" \
       "$corpus" "$seeds/$t" > "$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed 's/ *exec.*//')
    echo "run-fuzz: $t: ${runs:-?} executions, no crash ($last)"
  else
    status=1
    echo "run-fuzz: $t FAILED; the end of its log:" >&2
    tail -40 "$log" >&2
    ls -1 "$build/fuzz-artifacts/$t-"* 2>/dev/null | sed 's/^/run-fuzz: reproduce with '"${bin//\//\\/}"' /' >&2 || true
  fi
done
exit $status
