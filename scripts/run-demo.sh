#!/usr/bin/env bash
# `make run`: evaluates the bundled models on a few inputs, then runs the default property
# suites (`attnprop check`) with a budget of a few minutes on 2 cores and writes the report.
set -euo pipefail
bin=${1:-build/bin/attnprop}
out=${ATTNPROP_OUT:-out/run}
tests=${ATTNPROP_TESTS:-1000}
max_n=${ATTNPROP_MAX_N:-1024}
seed=${ATTNPROP_SEED:-1}
mkdir -p "$out"
summary="$out/models.txt"
: > "$summary"
echo "== bundled models" | tee -a "$summary"
"$bin" models | tee -a "$summary"
echo | tee -a "$summary"
for name in $("$bin" models --json | sed -n 's/^ *"name": "\(.*\)",$/\1/p'); do
  for input in 0 1 0110 1011; do
    line=$("$bin" eval --model "$name" --input "$input" --json --digits 8 2>&1 \
      | tr -d '\n' | sed -e 's/  */ /g')
    verdict=$(printf '%s' "$line" | sed -n 's/.*"accept": \([a-z]*\).*/accept=\1/p')
    [ -n "$verdict" ] || verdict=$(printf '%s' "$line" | sed -n 's/.*"probabilities": {\([^}]*\)}.*/P(next) {\1}/p')
    printf '%-22s %-6s %s\n' "$name" "$input" "$verdict" | tee -a "$summary"
  done
done
echo
echo "== property suites (seed $seed, $tests cases per property, n <= $max_n)"
status=0
"$bin" check --seed "$seed" --tests "$tests" --max-n "$max_n" --out "$out/check" || status=$?
echo
echo "model evaluations: $summary"
echo "check report:      $out/check/report.md"
exit $status
