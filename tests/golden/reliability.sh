#!/bin/sh
# reliability.sh ATTNPROP WORK_DIR: the regressions of the adversarial campaign
# (docs/reliability.md): a model of 25 000 layers (refused by the limit layers, and evaluated
# without a stack overflow when the limit is raised), a model of width 4096 from 25 KB of text
# (refused before any allocation), a beta that is not positive under check (exit 2, no
# counterexample folder), a symbolic link planted where a report's temporary file goes, a FIFO
# and a link to /dev/zero as a counterexample's model file, numbers like 1e-100000 in the
# canonical form, PNG temporaries of killed runs, a dangling --out link, decimal-only integer
# options and a repeated n. Each must fail on the code before the fixes. POSIX sh.
bin=$1
work=$2
rm -rf "$work"
mkdir -p "$work" || exit 1
# RELIABILITY_ALL=1: report every failed check and go on (to see each regression fail on
# code without its fix), exit 1 at the end.
failures=0
fail() {
    echo "FAILED: $*"
    [ -f "$work/out" ] && sed 's/^/  | /' "$work/out" | head -${RELIABILITY_LINES:-40}
    [ -n "${RELIABILITY_ALL:-}" ] || exit 1
    failures=$((failures + 1))
}
# run EXPECTED_CODE ARGS...: runs attnprop, output in $work/out; a run that hangs (a FIFO read
# for ever) is stopped after RELIABILITY_TIMEOUT seconds and fails (exit 124).
run() {
    want=$1
    shift
    timeout "${RELIABILITY_TIMEOUT:-120}" "$bin" "$@" >"$work/out" 2>&1
    code=$?
    [ "$code" -eq "$want" ] || fail "attnprop $* exited $code, expected $want"
}
has() { grep -Eq -e "$1" "$work/out" || fail "no line matching '$1'"; }
hasnt() { ! grep -Eq -e "$1" "$work/out" || fail "a line matches '$1'"; }

# --- A hard model of 25 000 layers: the exact pass used to recurse once per layer (SIGSEGV).
layer='{"heads":[{"score":{"kind":"dot","Q":[[0]],"K":[[1]]},"value":{"kind":"linear","V":[[1]]}}],"update":{"kind":"affine","W":[[0,1]]}}'
{
    printf '{"format":"attnprop-model","version":1,"name":"deep","attention":"hard","alphabet":["0","1"],'
    printf '"eos":"$","d":1,"token_embedding":{"0":[0],"1":[1],"$":[0]},'
    printf '"positional":{"kind":"formula","dim":1,"coordinates":[0]},"input":"add","layers":['
    k=0
    while [ $k -lt 25000 ]; do
        [ $k -gt 0 ] && printf ','
        printf '%s' "$layer"
        k=$((k + 1))
    done
    printf '],"readout":{"kind":"threshold","w":[1],"t":"1/2"}}\n'
} >"$work/deep.json"
run 2 eval --model "$work/deep.json" --input 1011
has "deep.json:[0-9]+:[0-9]+: error: the model has 25000 layers, above the limit layers = 1024 layers; raise it with --limit layers=N .* \(at /layers\)$"
run 0 eval --model "$work/deep.json" --input 1011 --limit layers=25000
has '^readout +accept$'
run 0 eval --model "$work/deep.json" --input 0011 --limit layers=25000 --trace
has '^readout +reject$'

# --- Width 4096 from 25 KB: three identities are 50 million numbers; refused at the first
# matrix past the budget, before it is allocated (it used to take 5.9 GB and 21 s in eval).
zeros=$(awk 'BEGIN { for (k = 1; k < 4096; k++) printf ",0" }')
cat >"$work/wide.json" <<EOF
{"format":"attnprop-model","version":1,"name":"wide","attention":"soft","alphabet":["0","1"],"eos":"\$","d":4096,
 "token_embedding":{"0":[0$zeros],"1":[1$zeros],"\$":[0$zeros]},
 "positional":{"kind":"formula","dim":4096,"coordinates":{"1":"[i==1]"}},"input":"add",
 "layers":[{"heads":[{"score":{"kind":"dot","Q":{"identity":4096},"K":{"identity":4096}},
                      "value":{"kind":"linear","V":{"identity":4096}}}],
            "update":{"kind":"graph","nodes":[{"id":"o","op":"slice","in":"y","from":0,"to":4096}],"output":"o"}}],
 "readout":{"kind":"map","map":{"kind":"graph","nodes":[{"id":"o","op":"slice","in":"y","from":0,"to":1}],"output":"o"}}}
EOF
for cmd in "eval --input 01" "bound" "influence --n 4:8:x2 --out $work/wide-influence" "format"; do
    # shellcheck disable=SC2086
    run 2 $cmd --model "$work/wide.json"
    has "wide.json:[0-9]+:[0-9]+: error: the model holds more than 262144 numbers once read .* above the limit model-numbers = 1 x the file's bytes, and at least 2\^18 numbers; raise it with --limit model-numbers=N .* \(at /layers/0/heads/0/score/Q\)$"
done
run 2 eval --model "$work/wide.json" --input 01 --limit width=2048
has "error: d is 4096, above the limit width = 2048 coordinates; .* \(at /d\)$"
# A graph whose concatenations double a width node after node.
{
    printf '{"format":"attnprop-model","version":1,"name":"concat","attention":"hard","alphabet":["0","1"],'
    printf '"eos":"$","d":1,"token_embedding":{"0":[0],"1":[1],"$":[0]},'
    printf '"positional":{"kind":"formula","dim":1,"coordinates":[0]},"input":"add","layers":[{"heads":'
    printf '[{"score":{"kind":"dot","Q":[[0]],"K":[[1]]},"value":{"kind":"linear","V":[[1]]}}],'
    printf '"update":{"kind":"graph","nodes":[{"id":"c0","op":"concat","in":["y","y"]}'
    k=1
    while [ $k -lt 40 ]; do
        printf ',{"id":"c%d","op":"concat","in":["c%d","c%d"]}' $k $((k - 1)) $((k - 1))
        k=$((k + 1))
    done
    printf ',{"id":"o","op":"slice","in":"c39","from":0,"to":1}],"output":"o"}}],'
    printf '"readout":{"kind":"threshold","w":[1],"t":"1/2"}}\n'
} >"$work/concat.json"
run 2 eval --model "$work/concat.json" --input 01
has "error: node 'c14' has dimension 32768, above the limit width = 16384 coordinates; .* \(at /layers/0/update/nodes/14\)$"

# --- A beta that is not positive: eval refuses the model; check --model used to write four
# counterexample folders ("threw: ...") and exit 1.
printf '%s\n' '{"format":"attnprop-model","version":1,"name":"beta","attention":"hard","alphabet":["0","1"],"eos":"$","d":1,
 "token_embedding":{"0":[0],"1":[1],"$":[0]},"positional":{"kind":"formula","dim":1,"coordinates":[0]},"input":"add",
 "layers":[{"heads":[{"score":{"kind":"dot","Q":[[0]],"K":[[1]],"beta":-1},"value":{"kind":"linear","V":[[1]]}}],
            "update":{"kind":"affine","W":[[0,1]]}}],
 "readout":{"kind":"threshold","w":[1],"t":"1/2"}}' >"$work/beta.json"
run 2 eval --model "$work/beta.json" --input 101
has "beta.json: error: layer 1 head 1: hard attention ignores the inverse temperature beta only where it is positive, but beta\(n\) = '-1' at n = 4 is not positive \(-1\) \(at /layers/0/heads/0/score/beta\)$"
run 2 check --model "$work/beta.json" --tests 5 --out "$work/check-beta"
has "beta.json: error: layer 1 head 1: hard attention ignores the inverse temperature beta .* \(at /layers/0/heads/0/score/beta\)$"
hasnt "threw"
[ ! -d "$work/check-beta/counterexamples" ] || fail "check wrote counterexample folders for a refused model"

# --- A symbolic link planted where a report's temporary file goes: the report used to be
# written through it (the victim received it). The shell's pid is the command's (exec).
run 0 restrict --model hard-first --n 8,9 --out "$work/planted"
: >"$work/victim"
sh -c 'ln -s "$1" "$2/report.md.tmp$$"; ln -s "$1" "$2/report.json.tmp$$"; exec "$3" restrict --model hard-first --n 8,9 --out "$2"' \
    sh "$work/victim" "$work/planted" "$bin" >"$work/out" 2>&1 || fail "restrict with planted links exited $?"
[ -s "$work/victim" ] && fail "the report was written through a planted link"
[ -f "$work/planted/report.md" ] && [ ! -L "$work/planted/report.md" ] || fail "no report.md"
ls "$work/planted" | grep -q 'tmp' && fail "a temporary was left: $(ls "$work/planted")"
# The journal of a killed run, moved elsewhere and replaced by a link to it: the rerun used to
# continue it through the link (appending to the link's target). It is neither read nor
# appended through: the run starts afresh and the link is replaced.
ATTNPROP_KILL_AFTER_UNITS=1 "$bin" restrict --model hard-parity-attempt --n 8,9,10 --out "$work/journal" \
    >"$work/out" 2>&1
[ -f "$work/journal/units.journal" ] || fail "the killed run left no journal"
mv "$work/journal/units.journal" "$work/journal-victim"
ln -s "$work/journal-victim" "$work/journal/units.journal"
cp "$work/journal-victim" "$work/journal-before"
run 0 restrict --model hard-parity-attempt --n 8,9,10 --out "$work/journal"
cmp -s "$work/journal-victim" "$work/journal-before" || fail "the journal was appended through a link"
has "units.journal is not a regular file \(a symbolic link\): not read, starting fresh"
[ -L "$work/journal/units.journal" ] && fail "the journal link is still there"

# --- Replay of a folder whose model file is a FIFO (used to block for ever) or a link to
# /dev/zero (used to grow its memory without bound).
run 1 check --suite controls --property controls/hard-output-ignores-x1 --tests 20 --out "$work/cx"
case_dir=$(ls -d "$work"/cx/counterexamples/*/ | head -n 1)
cp -r "$case_dir" "$work/fifo-case"
rm "$work/fifo-case/model.json"
mkfifo "$work/fifo-case/model.json"
run 2 replay "$work/fifo-case"
has "model file .*/fifo-case/model.json is a FIFO \(named pipe\), not a file"
cp -r "$case_dir" "$work/zero-case"
rm "$work/zero-case/model.json"
ln -s /dev/zero "$work/zero-case/model.json"
run 2 replay "$work/zero-case"
has "model file .*/zero-case/model.json is a character device, not a file"

# --- Exact decimals: 1e-100000 is written as such, not as 100 002 digits (2.2 s each).
printf '%s\n' '{"format":"attnprop-model","version":1,"name":"tiny","attention":"hard","alphabet":["0","1"],"eos":"$","d":1,
 "token_embedding":{"0":[0],"1":[1],"$":[0]},"positional":{"kind":"formula","dim":1,"coordinates":["1e-100000*i"]},"input":"add",
 "layers":[{"heads":[{"score":{"kind":"dot","Q":[[0]],"q_bias":["1e-100000"],"K":[[1]]},"value":{"kind":"linear","V":[["1e-99999"]],"bias":["1e100000"]}}],
            "update":{"kind":"affine","W":[[0,1]]}}],
 "readout":{"kind":"threshold","w":[1],"t":"-25e-100000"}}' >"$work/tiny.json"
run 0 format --model "$work/tiny.json"
has '"q_bias": \[1e-100000\]'
has '"t": -25e-100000'
has '1e100000'
has '"1e-100000\*i"'
[ "$(wc -c <"$work/out")" -lt 4000 ] || fail "the canonical form is $(wc -c <"$work/out") bytes"
cp "$work/out" "$work/tiny-canonical.json"
run 0 format --model "$work/tiny-canonical.json"
cmp -s "$work/out" "$work/tiny-canonical.json" || fail "the canonical form is not stable"

# --- PNG temporaries of a killed run are removed by the next run, and by --force.
mkdir -p "$work/png"
run 0 restrict --model hard-parity-attempt --n 8,16 --out "$work/png"
: >"$work/png/restrict.png.tmp999999999"
run 0 restrict --model hard-parity-attempt --n 8,16 --out "$work/png"
[ -e "$work/png/restrict.png.tmp999999999" ] && fail "a dead process's PNG temporary is left"
mkdir "$work/png/restrict.png.tmp1"
run 0 restrict --model hard-parity-attempt --n 8,16 --seed 2 --force --out "$work/png"
[ -e "$work/png/restrict.png.tmp1" ] && fail "--force left a PNG temporary"

# --- A dangling symbolic link as --out is named as such (it was "File exists").
ln -s "$work/nowhere/at/all" "$work/dangling"
run 2 restrict --model hard-first --n 8,9 --out "$work/dangling"
has "dangling is a symbolic link to .*/nowhere/at/all, which does not exist"

# --- Integer options are decimal: 020 is 20 (CLI11 read it as octal 16), 0x20 is refused.
run 0 eval --model cc-parity --input 01 --scalar mpfr --precision 020
has '^scalar +mpfr, 20 bits$'
run 2 eval --model cc-parity --input 01 --scalar mpfr --precision 0x20
has "0x20' is not a decimal integer"
run 0 check --suite controls --property controls/hard-output-ignores-x1 --tests 1 --seed 010 --list
run 1 check --suite controls --property controls/hard-output-ignores-x1 --tests 20 --seed 010 --out "$work/seed010"
grep -q '"seed": "10"' "$work/seed010/report.json" || fail "--seed 010 is not 10"

# --- The same n twice is refused, not measured twice.
run 2 influence --model cc-parity --n 4,4,4 --out "$work/dup"
has "n = 4 is listed twice"
[ "$failures" -eq 0 ] || { echo "reliability regressions: $failures failed"; exit 1; }
echo "reliability regressions: ok"
