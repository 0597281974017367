#!/usr/bin/env bash
# `make run`: evaluates every bundled model on a few inputs drawn from its own alphabet (2DYCK
# prefixes for bracket models), draws the figures of two short sweeps (the influence and
# cross-entropy of cc-parity on PARITY inputs, Lemma 5; the restrictions of hard-parity-attempt,
# Theorem 1), then runs the default property suites (`attnprop check`) and writes the report.
# Budget: a few minutes on 2 cores at the defaults.
#   ATTNPROP_OUT    report folder (default out/run)
#   ATTNPROP_TESTS  cases per property (default 1000)
#   ATTNPROP_MAX_N  largest n the suites draw (default 1024)
#   ATTNPROP_SEED   base seed (default 1)
# Exit status: that of `attnprop check` (0 every property held, 1 a property failed, 4 a case
# was undefined), or else that of a sweep that did not exit 0; a model evaluation that is
# undefined is printed as such and does not stop it. The figures are SVG, and PNG beside them
# when rsvg-convert (Debian package librsvg2-bin) is installed.
set -uo pipefail
bin=${1:-build/bin/attnprop}
out=${ATTNPROP_OUT:-out/run}
tests=${ATTNPROP_TESTS:-1000}
max_n=${ATTNPROP_MAX_N:-1024}
seed=${ATTNPROP_SEED:-1}
mkdir -p "$out" || exit 2
summary="$out/models.txt"
: > "$summary"
echo "== bundled models" | tee -a "$summary"
"$bin" models | tee -a "$summary" || exit 3
echo | tee -a "$summary"

# name<TAB>symbol symbol ... for every bundled model, from `attnprop models --json`.
listing=$("$bin" models --json | awk '
  /^    "name": / { s = $0; sub(/^ *"name": "/, "", s); sub(/",?$/, "", s); name = s }
  /^    "alphabet": / {
    s = $0; sub(/^ *"alphabet": \[/, "", s); sub(/\],?$/, "", s); gsub(/"/, "", s); gsub(/, /, " ", s)
    print name "\t" s
  }
') || exit 3

# Inputs for an alphabet: its first symbols alone and two mixed words of length 4 (0, 1, 0110,
# 1011 over {0, 1}); unbalanced 2DYCK prefixes over ( ) [ ].
inputs_for() {
  local syms=("$@")
  if [ "${syms[*]}" = "( ) [ ]" ]; then
    printf '%s\n' "(" "[" "([" "[(()"
    return
  fi
  local a=${syms[0]} b=${syms[1]:-${syms[0]}}
  printf '%s\n' "$a" "$b" "$a$b$b$a" "$b$a$b$b"
}

while IFS=$'\t' read -r name syms; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086
  for input in $(inputs_for $syms); do
    line=$("$bin" eval --model "$name" --input "$input" --json --digits 8 2>&1 | tr -d '\n' | sed -e 's/  */ /g')
    verdict=$(printf '%s' "$line" | sed -n 's/.*"accept": \([a-z]*\).*/accept=\1/p')
    [ -n "$verdict" ] || verdict=$(printf '%s' "$line" | sed -n 's/.*"probabilities": {\([^}]*\)}.*/P(next) {\1}/p')
    [ -n "$verdict" ] || verdict=$(printf '%s' "$line" | sed -n 's/.*"message": "\(undefined at [^"]*\)".*/\1/p')
    [ -n "$verdict" ] || verdict=$(printf '%s' "$line" | sed -n 's/.*"undefined": "\([^"]*\)".*/undefined: \1/p')
    [ -n "$verdict" ] || verdict="error: $line"
    printf '%-22s %-6s %s\n' "$name" "$input" "$verdict" | tee -a "$summary"
  done
done <<< "$listing"

echo
echo "== figures: influence and cross-entropy of cc-parity, restrictions of hard-parity-attempt"
sweep_status=0
# The folders belong to `make run`: a run with other options replaces them.
"$bin" influence --model cc-parity --n 16,64,256,1024 --inputs 4 --positions 4 --language parity \
  --seed "$seed" --out "$out/influence-cc-parity" --force > "$out/influence-cc-parity.txt" 2>&1 ||
  sweep_status=$?
tail -n 1 "$out/influence-cc-parity.txt"
"$bin" restrict --model hard-parity-attempt --n 8:1024:x2 --language parity --samples 8 \
  --seed "$seed" --out "$out/restrict-hard-parity-attempt" --force > "$out/restrict-hard-parity-attempt.txt" 2>&1 ||
  sweep_status=$?
tail -n 1 "$out/restrict-hard-parity-attempt.txt"

echo
echo "== property suites (seed $seed, $tests cases per property, n <= $max_n)"
status=0
# The folder belongs to `make run`: a run with other budgets replaces it.
"$bin" check --seed "$seed" --tests "$tests" --max-n "$max_n" --out "$out/check" --force || status=$?
echo
echo "model evaluations: $summary"
echo "check report:      $out/check/report.md (and report.json)"
for f in influence-cc-parity/influence influence-cc-parity/cross_entropy restrict-hard-parity-attempt/restrict; do
  if [ -f "$out/$f.png" ]; then echo "figure:            $out/$f.svg (and .png)"
  elif [ -f "$out/$f.svg" ]; then echo "figure:            $out/$f.svg (no PNG: see its report.md)"
  fi
done
[ "$status" -ne 0 ] || status=$sweep_status
exit $status
