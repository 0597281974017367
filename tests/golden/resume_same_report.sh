#!/bin/sh
# resume_same_report.sh BIN WORKDIR
#
# A resumed influence sweep writes the same report as an uninterrupted one (docs/reports.md,
# "Resuming"): report.json, report.md, influence.csv, influence.svg and cross_entropy.svg are
# byte-identical once the fields that record the run rather than its results are taken out
# (the provenance, `reused`, `reused_rows`, the CSV's `reused` column and report.md's "(reused)"
# marks; no report file holds a wall time). Three interruptions: a run over a prefix of the
# lengths, a kill -9 once rows.json exists, and a hand-edited rows.json (its rows_sha256 no
# longer matches: every row is recomputed, and the run says so). POSIX sh.
set -u
if [ "$#" -ne 2 ]; then
    echo "usage: resume_same_report.sh BIN WORKDIR" >&2
    exit 64
fi
bin=$1
work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
status=0

# normal FILE: FILE without provenance and reuse marks.
normal() {
    case $1 in
        *.md) sed -e '/^## Provenance$/,$d' -e 's/ (reused)//' "$1" ;;
        *.csv) sed -E 's/,yes,([0-9]+,[^,]*)$/,no,\1/' "$1" ;;
        *.json) awk '
            skip == 0 && $0 ~ /^ *"provenance": \{$/ {
                skip = 1; pad = substr($0, 1, index($0, "\"") - 1); next
            }
            skip == 1 { if ($0 == pad "}" || $0 == pad "},") skip = 0; next }
            { print }' "$1" | sed -e 's/"reused": true/"reused": false/' -e 's/"reused_rows": [0-9]*/"reused_rows": 0/' ;;
        *) cat "$1" ;;
    esac
}

# same A B LABEL: every report file of A equals B's after normal.
same() {
    n=0
    for f in report.json report.md influence.csv influence.svg cross_entropy.svg; do
        [ -f "$1/$f" ] || continue
        n=$((n + 1))
        [ -f "$2/$f" ] || { echo "$3: $f missing after resuming"; status=1; continue; }
        normal "$1/$f" > "$work/x" && normal "$2/$f" > "$work/y"
        if ! cmp -s "$work/x" "$work/y"; then
            echo "$3: $f differs from the uninterrupted run's:"
            diff "$work/x" "$work/y" | head -10
            status=1
        fi
    done
    [ "$n" -ge 4 ] || { echo "$3: only $n files compared"; status=1; }
}

for sweep in "cc-first --n 8,16,32 --inputs 2" "cc-parity --n 6,8,10 --language parity --inputs 2"; do
    name=$(echo "$sweep" | cut -d' ' -f1)
    full="--model $sweep"
    # shellcheck disable=SC2086
    "$bin" influence $full --out "$work/$name-whole" >/dev/null 2>&1 || { echo "$name: the sweep failed"; exit 1; }

    # 1. Interrupted after the first two lengths (a run over a prefix leaves the same rows.json).
    prefix=$(echo "$full" | sed -E 's/--n ([0-9]+,[0-9]+)[0-9,]*/--n \1/')
    "$bin" influence $prefix --out "$work/$name-prefix" >/dev/null 2>&1 || { echo "$name: prefix failed"; exit 1; }
    out=$("$bin" influence $full --out "$work/$name-prefix" 2>&1) || { echo "$name: resume failed"; exit 1; }
    printf '%s\n' "$out" | grep -q "^reused 2 rows from" || { echo "$name: the resumed run reused no rows"; status=1; }
    same "$work/$name-whole" "$work/$name-prefix" "$name, resumed after a prefix"

    # 2. kill -9 once the checkpoint exists (at whatever row the run has reached).
    "$bin" influence $full --out "$work/$name-killed" >/dev/null 2>&1 &
    pid=$!
    k=0
    while [ ! -f "$work/$name-killed/rows.json" ] && [ $k -lt 200 ]; do sleep 0.01; k=$((k + 1)); done
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    "$bin" influence $full --out "$work/$name-killed" >/dev/null 2>&1 || { echo "$name: resume after kill failed"; exit 1; }
    same "$work/$name-whole" "$work/$name-killed" "$name, resumed after kill -9"

    # 3. A hand-edited checkpoint with a matching fingerprint: recomputed, never trusted.
    rows="$work/$name-prefix/rows.json"
    sed -E '0,/"max_influence": "[^"]+"/s//"max_influence": "0.5"/' "$rows" > "$work/edited" && mv "$work/edited" "$rows"
    out=$("$bin" influence $full --out "$work/$name-prefix" 2>&1) || { echo "$name: run over an edited rows.json failed"; exit 1; }
    printf '%s\n' "$out" | grep -q "were edited since attnprop wrote them (their SHA-256 is not the recorded rows_sha256): recomputing every row" ||
        { echo "$name: the edited rows.json was not named"; printf '%s\n' "$out" | head -3; status=1; }
    grep -q '"reused_rows": 0' "$work/$name-prefix/report.json" || { echo "$name: rows of the edited rows.json were reused"; status=1; }
    same "$work/$name-whole" "$work/$name-prefix" "$name, recomputed over an edited rows.json"
done
exit $status
