#!/bin/sh
# same_report.sh BIN WORKDIR
#
# The same seed and options give the same report: runs `check` (the controls, so that
# counterexample folders are written) and `influence` twice each into two folders under a fresh
# WORKDIR and compares every report.json, report.md, case.json and rows.json byte for byte,
# after removing the provenance (docs/reports.md: the fields that vary are the command line,
# the --out option and the build's commit). A third `influence` runs with the fold's baseline
# kernels (ATTNPROP_FOLD_KERNELS=baseline) at every position in certified double intervals,
# against the same run with the kernels this processor picks. POSIX sh.
set -u
if [ "$#" -ne 2 ]; then
    echo "usage: same_report.sh BIN WORKDIR" >&2
    exit 64
fi
bin=$1
work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1

# strip FILE: FILE without its provenance (a JSON member spanning lines, or the Markdown section).
strip() {
    case $1 in
        *.md) sed '/^## Provenance$/,$d' "$1" ;;
        *) awk '
            skip == 0 && $0 ~ /^ *"provenance": \{$/ {
                skip = 1; pad = substr($0, 1, index($0, "\"") - 1); next
            }
            skip == 1 { if ($0 == pad "}" || $0 == pad "},") skip = 0; next }
            { print }' "$1" ;;
    esac
}

for d in a b; do
    "$bin" check --suite controls --tests 20 --max-n 16 --seed 3 --out "$work/check-$d" >/dev/null 2>&1
    [ $? -eq 1 ] || { echo "check --suite controls did not exit 1"; exit 1; }
    "$bin" influence --model cc-first --n 8,16 --out "$work/influence-$d" >/dev/null 2>&1 ||
        { echo "influence failed"; exit 1; }
    ATTNPROP_FOLD_KERNELS=$([ $d = a ] && echo baseline || echo "") "$bin" influence \
        --model cc-parity --n 64,100 --inputs 2 --positions all --scalar interval \
        --out "$work/kernels-$d" >/dev/null 2>&1 ||
        { echo "influence --scalar interval failed"; exit 1; }
done

status=0
compared=0
for kind in check influence kernels; do
    for f in $(cd "$work/$kind-a" && find . -type f \( -name report.json -o -name report.md -o -name case.json -o -name rows.json \) | sort); do
        compared=$((compared + 1))
        a="$work/$kind-a/$f"
        b="$work/$kind-b/$f"
        [ -f "$b" ] || { echo "only in $kind-a: $f"; status=1; continue; }
        grep -q '"provenance"\|^## Provenance$' "$a" || { echo "$kind-a/$f records no provenance"; status=1; }
        strip "$a" > "$work/x" && strip "$b" > "$work/y"
        if ! cmp -s "$work/x" "$work/y"; then
            echo "$kind/$f differs beyond its provenance:"
            diff "$work/x" "$work/y" | head -20
            status=1
        fi
    done
done
[ "$compared" -ge 10 ] || { echo "only $compared files compared"; status=1; }
exit $status
