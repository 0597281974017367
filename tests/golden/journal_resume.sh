#!/bin/sh
# journal_resume.sh BIN WORK check|restrict|damaged
#
# check and restrict journal every finished unit in units.journal (docs/reports.md, "Journals"):
# a run killed after its first unit (ATTNPROP_KILL_AFTER_UNITS=1: SIGKILL once the record is on
# the disk) and run again with the same command reuses that unit, computes the others once, and
# writes the report folder of an uninterrupted run byte for byte (each run in its own working
# folder with the same relative --out, so that even the provenance is equal); the journal is
# gone once the report is complete.
#   check     three properties, the first a failing control whose counterexample folder must be
#             re-created from the record; other options are refused on a killed run's folder
#   restrict  two lengths, the first with a language counterexample
#   damaged   a journal whose last record is cut short or has a byte changed: that record is
#             ignored (and said), the one before it reused
# POSIX sh.
set -u
if [ "$#" -ne 3 ]; then
    echo "usage: journal_resume.sh BIN WORK check|restrict|damaged" >&2
    exit 64
fi
bin=$1
work=$2
mode=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
status=0

fail() {
    echo "FAILED ($mode): $*"
    status=1
}

# run NAME ARGS...: runs attnprop ARGS --out rep in $work/NAME (created), standard output and
# error to NAME/out and NAME/err; sets $code.
run() {
    name=$1
    shift
    mkdir -p "$work/$name"
    (cd "$work/$name" && exec "$bin" "$@" --out rep >out 2>err)
    code=$?
}

# killed NAME K ARGS...: the run killed after its K-th journal record.
killed() {
    name=$1
    k=$2
    shift 2
    mkdir -p "$work/$name"
    (cd "$work/$name" && ATTNPROP_KILL_AFTER_UNITS=$k exec "$bin" "$@" --out rep >out 2>err)
    code=$?
    [ "$code" -eq 137 ] || fail "$name: the run killed after $k units exited $code, not 137 (SIGKILL)"
    [ -f "$work/$name/rep/units.journal" ] || fail "$name: no units.journal after the kill"
    [ -f "$work/$name/rep/report.json" ] && fail "$name: a report was written before the kill"
}

# same NAME: NAME's report folder and standard output are those of the uninterrupted run.
same() {
    if ! diff -r "$work/whole/rep" "$work/$1/rep" >"$work/diff" 2>&1; then
        fail "$1: the report folder differs from the uninterrupted run's:"
        head -20 "$work/diff"
    fi
    cmp -s "$work/whole/out" "$work/$1/out" || fail "$1: standard output differs from the uninterrupted run's"
}

# said NAME TEXT: NAME's standard error holds TEXT.
said() {
    grep -qF -- "$2" "$work/$1/err" || {
        fail "$1: standard error lacks '$2':"
        sed 's/^/  | /' "$work/$1/err"
    }
}

case $mode in
check)
    args="check --property controls/hard-output-ignores-x1 --property semantics/leftmost-tie-rule
          --property semantics/model-file-round-trip --tests 10 --max-n 16 --seed 7"
    # shellcheck disable=SC2086
    run whole $args
    whole=$code
    [ "$whole" -eq 1 ] || fail "the uninterrupted run exited $whole, expected 1 (a control fails)"
    [ -d "$work/whole/rep/counterexamples/controls-hard-output-ignores-x1" ] ||
        fail "the uninterrupted run wrote no counterexample folder for the control"
    # Negative control of the comparison: another seed gives another report.
    # shellcheck disable=SC2086
    run other $(echo "$args" | sed 's/--seed 7/--seed 8/')
    diff -r -q "$work/whole/rep" "$work/other/rep" >/dev/null 2>&1 &&
        fail "the reports of --seed 7 and --seed 8 compare equal: the comparison cannot fail"

    # shellcheck disable=SC2086
    killed resumed 1 $args
    # Other options on the killed run's folder: refused before any work, as for a report.
    # shellcheck disable=SC2086
    (cd "$work/resumed" && exec "$bin" $(echo "$args" | sed 's/--seed 7/--seed 8/') --out rep >refused.out 2>refused.err)
    [ $? -eq 2 ] || fail "other options on a killed run's folder were not refused"
    grep -qF "rep holds a report made with --seed 7; this run has --seed 8: use --out DIR or --force to replace it" \
        "$work/resumed/refused.err" || fail "the refusal does not name the journal's options"
    # shellcheck disable=SC2086
    run resumed $args
    [ "$code" -eq "$whole" ] || fail "the resumed run exited $code, the uninterrupted one $whole"
    said resumed "check: reused 1 of 3 properties from rep/units.journal"
    grep -qE "controls/hard-output-ignores-x1: failed \(.*, reused\)" "$work/resumed/err" ||
        fail "the resumed run does not list the control as reused"
    grep -q "semantics/leftmost-tie-rule" "$work/resumed/err" || fail "the resumed run did not run the second property"
    same resumed
    [ -f "$work/resumed/rep/units.journal" ] && fail "units.journal is left beside the complete report"
    # A complete report has no journal: the same command runs every property again.
    # shellcheck disable=SC2086
    run resumed $args
    grep -q "reused" "$work/resumed/err" && fail "a run over a complete report reused properties"
    same resumed
    ;;
restrict)
    args="restrict --model hard-parity-attempt --n 10,12 --language parity --threads 1 --seed 2"
    # shellcheck disable=SC2086
    run whole $args
    whole=$code
    [ -d "$work/whole/rep/language-counterexample-n10" ] ||
        fail "the uninterrupted run wrote no language counterexample at n = 10"
    # shellcheck disable=SC2086
    killed resumed 1 $args
    # shellcheck disable=SC2086
    run resumed $args
    [ "$code" -eq "$whole" ] || fail "the resumed run exited $code, the uninterrupted one $whole"
    said resumed "restrict: reused 1 of 2 lengths from rep/units.journal"
    said resumed "restrict: n = 10 reused"
    said resumed "restrict: n = 12 done in"
    same resumed
    [ -f "$work/resumed/rep/units.journal" ] && fail "units.journal is left beside the complete report"
    ;;
damaged)
    args="check --property semantics/leftmost-tie-rule --property semantics/model-file-round-trip
          --property semantics/trace-last-row --tests 5 --max-n 16 --seed 3"
    # shellcheck disable=SC2086
    run whole $args
    # Cut short: the last 3 bytes of the second record are missing.
    # shellcheck disable=SC2086
    killed torn 2 $args
    j="$work/torn/rep/units.journal"
    size=$(wc -c <"$j")
    head -c $((size - 3)) "$j" >"$work/cut" && mv "$work/cut" "$j"
    # shellcheck disable=SC2086
    run torn $args
    said torn "check: rep/units.journal: the last record is incomplete"
    said torn "check: reused 1 of 3 properties"
    same torn
    # One byte changed in the second record's last byte (its result).
    # shellcheck disable=SC2086
    killed flipped 2 $args
    j="$work/flipped/rep/units.journal"
    size=$(wc -c <"$j")
    last=$(tail -c 1 "$j" | od -An -tu1 | tr -d ' ')
    head -c $((size - 1)) "$j" >"$work/cut"
    printf "\\$(printf '%03o' $(((last + 1) % 256)))" >>"$work/cut"
    mv "$work/cut" "$j"
    [ "$(wc -c <"$j")" -eq "$size" ] || fail "the changed journal has another size"
    # shellcheck disable=SC2086
    run flipped $args
    said flipped "does not match its SHA-256"
    said flipped "check: reused 1 of 3 properties"
    same flipped
    ;;
*)
    echo "journal_resume.sh: unknown mode $mode" >&2
    exit 64
    ;;
esac
[ "$status" -eq 0 ] && echo "journal_resume ($mode): every check held"
exit $status
