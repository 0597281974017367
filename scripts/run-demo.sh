#!/usr/bin/env bash
# `make run`: evaluates every bundled model on a few inputs and prints a short summary.
# (Once the property engine lands, this runs `attnprop check` with the default budget.)
set -euo pipefail
bin=${1:-build/bin/attnprop}
out=${ATTNPROP_OUT:-out/run}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
echo "attnprop: evaluating the bundled models" | tee -a "$summary"
"$bin" models | tee -a "$summary"
echo | tee -a "$summary"
for name in $("$bin" models --json | sed -n 's/^ *"name": "\(.*\)",$/\1/p'); do
  for input in 0 1 0110 1011 ; do
    line=$("$bin" eval --model "$name" --input "$input" --json --digits 8 2>&1 \
      | tr -d '\n' | sed -e 's/  */ /g')
    verdict=$(printf '%s' "$line" | sed -n 's/.*"accept": \([a-z]*\).*/accept=\1/p')
    [ -n "$verdict" ] || verdict=$(printf '%s' "$line" | sed -n 's/.*"probabilities": {\([^}]*\)}.*/P(next) {\1}/p')
    printf '%-22s %-6s %s\n' "$name" "$input" "$verdict" | tee -a "$summary"
  done
done
echo
echo "summary written to $summary"
