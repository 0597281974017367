#!/bin/sh
# interrupt.sh ATTNPROP WORK_DIR: SIGINT stops influence, restrict and check cleanly. Each run
# has a short first unit of work and a long second one; the test waits until the first is
# finished (its output appears), sends SIGINT, and expects exit code 130 within seconds, a
# report that holds the finished work only, and a note on standard error. Then SIGKILL in the
# middle of an influence sweep: the rerun reuses every finished row of rows.json, once. The
# journal of restrict keeps its finished length; check journals no interrupted property. POSIX sh.
bin=$1
work=$2
rm -rf "$work"
mkdir -p "$work" || exit 1
fail() {
    echo "FAILED: $*"
    for f in "$work"/*.err "$work"/*.out; do
        [ -f "$f" ] && { echo "--- $f"; sed 's/^/  | /' "$f"; }
    done
    exit 1
}
# wait_for FILE PATTERN PID: polls until FILE has a line matching PATTERN (60 s at most) while
# PID runs.
wait_for() {
    k=0
    while ! grep -Eq -e "$2" "$1" 2>/dev/null; do
        kill -0 "$3" 2>/dev/null || fail "attnprop ended before '$2' appeared in $1"
        k=$((k + 1))
        [ "$k" -le 600 ] || fail "'$2' did not appear in $1 within 60 s"
        sleep 0.1
    done
}
# interrupt PID NAME: SIGINT, then the exit code must be 130 within 30 s.
interrupt() {
    kill -INT "$1"
    k=0
    while kill -0 "$1" 2>/dev/null; do
        k=$((k + 1))
        [ "$k" -le 300 ] || { kill -KILL "$1"; fail "$2 did not stop within 30 s of SIGINT"; }
        sleep 0.1
    done
    wait "$1"
    code=$?
    [ "$code" -eq 130 ] || fail "$2 exited $code after SIGINT, expected 130"
}

# influence: n = 8 is done at once, n = 32768 takes minutes; rows.json is written after n = 8.
"$bin" influence --model cc-first --n 8,32768 --inputs 2 --positions 4 --threads 1 \
    --out "$work/influence" >"$work/influence.out" 2>"$work/influence.err" &
pid=$!
wait_for "$work/influence/rows.json" '"n": 8' "$pid"
interrupt "$pid" influence
grep -q 'influence: interrupted; the report holds the 1 lengths finished' "$work/influence.err" ||
    fail "influence: no note on standard error"
grep -q '"n": 8,' "$work/influence/report.json" || fail "influence: report.json lacks n = 8"
grep -q '"n": 32768' "$work/influence/report.json" && fail "influence: report.json has the interrupted n"
grep -q 'interrupted: n = 32768 not measured' "$work/influence/report.json" ||
    fail "influence: report.json does not say what was not measured"
# The rerun resumes from the checkpoint (n = 8 reused) and measures only what is left.
"$bin" influence --model cc-first --n 8 --inputs 2 --positions 4 --threads 1 \
    --out "$work/influence" >"$work/influence.out" 2>"$work/influence.err" ||
    fail "influence: the rerun failed"
grep -q 'reused 1 rows' "$work/influence.out" || fail "influence: the rerun did not reuse n = 8"

# kill -9 while n = 32768 is measured: rows.json (written atomically after every n) keeps n = 8
# and 16; the rerun reuses both, measures n = 32 and lists every n once.
"$bin" influence --model cc-first --n 8,16,32768 --inputs 2 --positions 4 --threads 1 \
    --out "$work/killed" >"$work/killed.out" 2>"$work/killed.err" &
pid=$!
wait_for "$work/killed/rows.json" '"n": 16' "$pid"
kill -KILL "$pid"
wait "$pid"
"$bin" influence --model cc-first --n 8,16,32 --inputs 2 --positions 4 --threads 1 \
    --out "$work/killed" >"$work/killed.out" 2>"$work/killed.err" || fail "influence after kill -9: the rerun failed"
grep -q 'reused 2 rows' "$work/killed.out" || fail "influence after kill -9: the rerun did not reuse n = 8 and 16"
for n in 8 16 32; do
    [ "$(grep -c "\"n\": $n," "$work/killed/rows.json")" -eq 1 ] || fail "rows.json does not hold n = $n once"
done

# restrict: n = 16 at once, n = 65536 for a minute.
"$bin" restrict --model hard-parity-attempt --n 16,65536 --threads 1 --out "$work/restrict" \
    >"$work/restrict.out" 2>"$work/restrict.err" &
pid=$!
wait_for "$work/restrict.err" 'restrict: n = 16 done' "$pid"
interrupt "$pid" restrict
grep -q 'restrict: interrupted; n = 65536 not computed' "$work/restrict.err" ||
    fail "restrict: no note on standard error"
grep -q '"n": 16' "$work/restrict/report.json" || fail "restrict: report.json lacks n = 16"
grep -q '"n": 65536' "$work/restrict/report.json" && fail "restrict: report.json has the interrupted n"
# The journal keeps n = 16 for a rerun (the report is not complete).
[ -f "$work/restrict/units.journal" ] || fail "restrict: no units.journal after the interrupt"

# check: stopped among the cases of its first property; the second never starts.
"$bin" check --property semantics/leftmost-tie-rule --property semantics/model-file-round-trip \
    --tests 1000000 --max-n 64 --seed 3 --out "$work/check" >"$work/check.out" 2>"$work/check.err" &
pid=$!
sleep 2
interrupt "$pid" check
grep -q 'check: interrupted; the report holds the 1 of 2 properties run' "$work/check.err" ||
    fail "check: no note on standard error"
grep -q '"status": "interrupted"' "$work/check/report.json" || fail "check: the property is not marked interrupted"
grep -q "\"name\": \"model-file-round-trip\"" "$work/check/report.json" && fail "check: the second property ran"
# The interrupted property ran part of its cases: it is not journaled, so a rerun runs it whole.
[ -f "$work/check/units.journal" ] && fail "check: the interrupted property was journaled"
exit 0
