#!/bin/sh
# readme_tour.sh README BIN WORKDIR
#
# Runs every `build/bin/attnprop ...` command line of README, in order, with BIN as the binary,
# in a fresh WORKDIR, with small budgets (check: --tests 5 --max-n 16; influence: --inputs 2
# --positions 2 --posterior-max-n 64) so that the whole tour takes seconds. Each command must
# exit with the code its comment names ("exit 1"), else 0; so a command that refuses another's
# report folder (exit 2) fails the test. At the end every report that a check, influence or
# restrict --out command wrote must still be there, recorded with that command's line: no later
# command replaced it. POSIX sh.
set -u
if [ "$#" -ne 3 ]; then
    echo "usage: readme_tour.sh README BIN WORKDIR" >&2
    exit 64
fi
readme=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
bin=$2
work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1

# set_budget ARGS OPTION VALUE: ARGS with OPTION's value replaced, or OPTION VALUE appended.
set_budget() {
    case " $1 " in
        *" $2 "*) printf '%s\n' "$1" | sed "s/ $2 [^ ]*/ $2 $3/" ;;
        *) printf '%s %s %s\n' "$1" "$2" "$3" ;;
    esac
}

failures=0
count=0
made=""
tab=$(printf '\t')
lines=$(grep '^build/bin/attnprop ' "$readme")
[ -n "$lines" ] || { echo "no build/bin/attnprop command lines in $readme"; exit 1; }
old_ifs=$IFS
IFS='
'
for line in $lines; do
    IFS=$old_ifs
    comment=$(printf '%s\n' "$line" | sed -n 's/^[^#]*#//p')
    args=$(printf '%s\n' "$line" | sed -e 's/[[:space:]]*#.*$//' -e 's/^build\/bin\/attnprop //' | tr -s ' ')
    want=$(printf '%s\n' "$comment" | sed -n 's/.*exit \([0-9]\).*/\1/p')
    [ -n "$want" ] || want=0
    case $args in
        check*)
            args=$(set_budget "$args" --tests 5)
            args=$(set_budget "$args" --max-n 16)
            ;;
        influence*)
            args=$(set_budget "$args" --inputs 2)
            args=$(set_budget "$args" --positions 2)
            args=$(set_budget "$args" --posterior-max-n 64)
            ;;
    esac
    count=$((count + 1))
    eval "set -- $args"
    out=$("$bin" "$@" 2>&1)
    code=$?
    if [ "$code" -ne "$want" ]; then
        echo "FAILED: attnprop $args: exit $code, expected $want"
        printf '%s\n' "$out" | tail -5 | sed 's/^/  | /'
        failures=$((failures + 1))
    fi
    case $args in
        check* | influence* | "restrict "*--out*) made="$made$args$tab" ;;
    esac
    IFS='
'
done
IFS=$old_ifs

# Every report is still the one its command made.
rest=$made
while [ -n "$rest" ]; do
    args=${rest%%"$tab"*}
    rest=${rest#*"$tab"}
    if ! grep -rqF --include=report.json "\"command_line\": \"$bin $args\"" out; then
        echo "FAILED: no report.json records 'attnprop $args' (replaced by a later command?)"
        failures=$((failures + 1))
    fi
done

if [ "$failures" -ne 0 ]; then
    echo "$failures of $count README commands failed"
    exit 1
fi
exit 0
