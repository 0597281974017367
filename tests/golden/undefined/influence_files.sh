#!/bin/sh
# influence_files.sh ATTNPROP OUT_DIR: an influence sweep of soft-majority-ln0 over n = 3, 4, 6
# (undefined at n = 3) exits 4, and every report file marks the undefined row: no NaN or
# infinite coordinate in influence.svg, the marker there and the caption in report.md, the "undefined" column of
# influence.csv, the row field of rows.json. A second run reuses every row (undefined included).
bin=$1
out=$2
rm -rf "$out"
"$bin" influence --model soft-majority-ln0 --n 3,4,6 --inputs 2 --out "$out" >/dev/null 2>&1
code=$?
[ "$code" -eq 4 ] || { echo "exit code $code, expected 4"; exit 1; }
svg=$out/influence.svg
if grep -Eiq '(^|[=",[:space:]])[-+]?(nan|inf)([",[:space:]]|$)' "$svg"; then
    echo "influence.svg has a non-finite coordinate:"
    grep -Ein '(^|[=",[:space:]])[-+]?(nan|inf)([",[:space:]]|$)' "$svg"
    exit 1
fi
# The caption is in report.md (the figure carries none unless --figure-text).
grep -q '^- Undefined at n = 3 (marked on the axis; no value is drawn)\.$' "$out/report.md" ||
    { echo "report.md lacks the figure's undefined caption"; exit 1; }
grep -q '>undefined</text>' "$svg" || { echo "influence.svg lacks the undefined marker"; exit 1; }
head -1 "$out/influence.csv" | grep -q ',undefined$' || { echo "influence.csv lacks the undefined column"; exit 1; }
grep -q '^3,.*"undefined at layer 1, node '"'"'norm'"'"', position 3' "$out/influence.csv" ||
    { echo "influence.csv does not mark n = 3"; cat "$out/influence.csv"; exit 1; }
grep -q '"undefined": "undefined at layer 1' "$out/rows.json" || { echo "rows.json lacks the row field"; exit 1; }
again=$("$bin" influence --model soft-majority-ln0 --n 3,4,6 --inputs 2 --out "$out" 2>&1)
code=$?
[ "$code" -eq 4 ] || { echo "resumed run: exit code $code, expected 4"; exit 1; }
printf '%s\n' "$again" | grep -q 'reused 3 rows' || { echo "resumed run did not reuse 3 rows:"; printf '%s\n' "$again"; exit 1; }
printf '%s\n' "$again" | grep -q 'verdict: undefined (the model is undefined at n = 3' ||
    { echo "resumed run lost the verdict:"; printf '%s\n' "$again"; exit 1; }
exit 0
