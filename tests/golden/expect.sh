#!/bin/sh
# expect.sh EXIT_CODE REGEX -- COMMAND [ARGS...]
#
# Runs COMMAND and succeeds (exit 0, silently) when its exit code is EXIT_CODE and its combined
# standard error and standard output contain a line matching the extended regular expression
# REGEX (grep -E). Otherwise prints what was expected and what happened, diff style, and exits 1.
# Exit 64 on bad usage. POSIX sh.

if [ "$#" -lt 4 ] || [ "$3" != "--" ]; then
    echo "usage: expect.sh EXIT_CODE REGEX -- COMMAND [ARGS...]" >&2
    exit 64
fi
want_code=$1
regex=$2
shift 3

case $want_code in
    '' | *[!0-9]*)
        echo "expect.sh: EXIT_CODE must be a non-negative integer, got '$want_code'" >&2
        exit 64
        ;;
esac

out=$("$@" 2>&1)
code=$?

code_ok=1
[ "$code" -eq "$want_code" ] || code_ok=0
match_ok=1
printf '%s\n' "$out" | grep -E -e "$regex" >/dev/null 2>&1
case $? in
    0) ;;
    1) match_ok=0 ;;
    *)
        echo "expect.sh: invalid extended regular expression: $regex" >&2
        exit 64
        ;;
esac

if [ "$code_ok" -eq 1 ] && [ "$match_ok" -eq 1 ]; then
    exit 0
fi

echo "FAILED: $*"
echo "--- expected"
echo "+++ actual"
if [ "$code_ok" -eq 1 ]; then
    echo " exit code $code"
else
    echo "-exit code $want_code"
    echo "+exit code $code"
fi
if [ "$match_ok" -eq 1 ]; then
    echo " output matching (ERE): $regex"
else
    echo "-a line matching (ERE): $regex"
    echo "+output (stderr and stdout, no line matches):"
fi
if [ -n "$out" ]; then
    printf '%s\n' "$out" | sed 's/^/+  | /'
else
    echo "+  (no output)"
fi
exit 1
