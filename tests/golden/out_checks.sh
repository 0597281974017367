#!/bin/sh
# out_checks.sh BIN WORKDIR
#
# --out is tested before the work (docs/cli.md, "--out and --force"): for check, restrict and
# influence, an existing file, /dev/null, a path under a file and a read-only folder (and a
# folder under one) are refused with exit 2 before anything is computed (no progress line). A
# run whose report cannot be written after the work still prints its results and keeps its exit
# code (1 for a failed claim), with one error line. The read-only cases run as an unprivileged
# user (setpriv as nobody) when the tests run as root, who may write anywhere; exit 77 (skipped)
# when that is impossible. POSIX sh.
set -u
if [ "$#" -ne 2 ]; then
    echo "usage: out_checks.sh BIN WORKDIR" >&2
    exit 64
fi
bin=$1
work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
chmod 755 "$work"

as_user=""
if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null 2>&1 || { echo "root without setpriv: cannot test a read-only folder"; exit 77; }
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi

status=0
# expect CODE REGEX COMMAND...: the exit code, a line matching REGEX, and no line of work.
expect() {
    want=$1
    regex=$2
    shift 2
    out=$("$@" 2>&1)
    code=$?
    if [ "$code" -ne "$want" ] || ! printf '%s\n' "$out" | grep -E -q -e "$regex"; then
        echo "FAILED (exit $code, wanted $want and /$regex/): $*"
        printf '%s\n' "$out" | sed 's/^/  | /' | head -20
        status=1
    fi
    LAST_OUT=$out
}
no_work() {
    if printf '%s\n' "$LAST_OUT" | grep -E -q '^\[1/|^restrict: n = |^influence: n = |^verdict'; then
        echo "FAILED: work was done before the refusal: $*"
        status=1
    fi
}

touch "$work/a-file"
mkdir "$work/read-only"
chmod 555 "$work/read-only"
check="check --suite controls --tests 5 --max-n 8"
restrict="restrict --model hard-parity-attempt --n 64 --language parity"
influence="influence --model cc-first --n 8,16 --bound-divisor 1000000000"
for cmd in "$check" "$restrict" "$influence"; do
    # shellcheck disable=SC2086
    expect 2 "a-file exists and is not a folder: use another --out DIR" "$bin" $cmd --out "$work/a-file"
    no_work "$cmd --out a-file"
    expect 2 "^attnprop: error: /dev/null exists and is not a folder" "$bin" $cmd --out /dev/null
    no_work "$cmd --out /dev/null"
    expect 2 "cannot create .*a-file/sub: Not a directory: use another --out DIR" "$bin" $cmd --out "$work/a-file/sub"
    no_work "$cmd --out a-file/sub"
    expect 2 "cannot write into .*read-only: Permission denied: use another --out DIR" $as_user "$bin" $cmd --out "$work/read-only"
    no_work "$cmd --out read-only"
    expect 2 "cannot create .*read-only/sub: Permission denied: use another --out DIR" $as_user "$bin" $cmd --out "$work/read-only/sub"
    no_work "$cmd --out read-only/sub"
done
# restrict with one length and no --out writes out/restrict-...-n64 only for a counterexample:
# the default folder is checked without being created.
mkdir "$work/cwd" && touch "$work/cwd/out"
(cd "$work/cwd" && expect 2 "cannot create out/restrict-hard-parity-attempt-1-n64: .*/out is not a folder" "$bin" $restrict && no_work "restrict default out" && exit $status) || status=1

# Writing fails after the work: the results are printed and the exit code is kept.
mkdir "$work/inf" && touch "$work/inf/counterexample-n8"
# shellcheck disable=SC2086
expect 1 "^attnprop: error: the report could not be written: .*counterexample-n8.* \(the results are printed above\)$" "$bin" $influence --force --out "$work/inf"
printf '%s\n' "$LAST_OUT" | grep -q '^verdict: failed' || { echo "FAILED: influence did not print its verdict"; status=1; }
mkdir "$work/res" && touch "$work/res/language-counterexample-n64"
expect 2 "^attnprop: error: the report could not be written: .*language-counterexample-n64" "$bin" $restrict --force --out "$work/res"
printf '%s\n' "$LAST_OUT" | grep -q 'parity: counterexample found' || { echo "FAILED: restrict did not print its results"; status=1; }
# check: a counterexamples/ folder it may not remove (owned by another user).
mkdir -p "$work/chk/counterexamples/kept" && touch "$work/chk/counterexamples/kept/file"
if [ -n "$as_user" ]; then
    chown 65534 "$work/chk"
    expect 1 "^attnprop: error: the report could not be written: cannot remove .*counterexamples" $as_user "$bin" $check --force --out "$work/chk"
    printf '%s\n' "$LAST_OUT" | grep -q 'controls/hard-output-ignores-x1 *failed' || { echo "FAILED: check did not print its table"; status=1; }
fi
chmod -R u+w "$work" 2>/dev/null
exit $status
