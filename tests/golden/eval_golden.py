#!/usr/bin/python3
"""Approved baselines of `attnprop eval --json` on the bundled models.

Usage:
  eval_golden.py ATTNPROP GOLDEN_DIR MODEL INPUT   compare one model's output with its baseline
  eval_golden.py ATTNPROP GOLDEN_DIR --coverage     every bundled model has a line in cases.txt

The baseline of MODEL is GOLDEN_DIR/MODEL.json: the standard output of
`attnprop eval --model MODEL --input INPUT --json` (default scalar and precision), byte for
byte, followed by a line "exit: CODE". The output holds no time, host, version or commit
(eval --json prints the evaluation only), so nothing is normalised. A difference fails the
test and prints a unified diff.

To approve a changed output after checking that the change is intended, run the tests with
APPROVE=1, which writes the baselines instead of comparing them:
    cd build && APPROVE=1 ctest -R 'golden: eval'
and commit the changed files under tests/golden/eval/ with the change that caused them.
A new bundled model needs a line MODEL|INPUT in GOLDEN_DIR/cases.txt and an approved baseline.
"""
import difflib
import json
import os
import subprocess
import sys


def cases(golden_dir):
    out = {}
    with open(os.path.join(golden_dir, "cases.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                model, _, text = line.partition("|")
                out[model] = text
    return out


def coverage(attnprop, golden_dir):
    listed = json.loads(subprocess.run([attnprop, "models", "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    names = sorted(m["name"] for m in listed)
    have = cases(golden_dir)
    problems = [f"bundled model {n} has no line in cases.txt" for n in names if n not in have]
    problems += [f"cases.txt names {n}, which is no bundled model" for n in have
                 if n not in names]
    problems += [f"bundled model {n} has no approved baseline {n}.json" for n in names
                 if not os.path.isfile(os.path.join(golden_dir, n + ".json"))]
    for p in problems:
        print(p)
    if not problems:
        print(f"every bundled model ({len(names)}) has an approved eval baseline")
    return 1 if problems else 0


def compare(attnprop, golden_dir, model, text):
    run = subprocess.run([attnprop, "eval", "--model", model, "--input", text, "--json"],
                         capture_output=True, text=True)
    got = run.stdout + f"exit: {run.returncode}\n"
    path = os.path.join(golden_dir, model + ".json")
    if os.environ.get("APPROVE") == "1":
        with open(path, "w", encoding="utf-8") as f:
            f.write(got)
        print(f"approved {path}")
        return 0
    if run.stderr:
        print("standard error:\n" + run.stderr)
    if not os.path.isfile(path):
        print(f"no approved baseline {path}; approve with APPROVE=1 (see this script's header)")
        print(got)
        return 1
    with open(path, encoding="utf-8") as f:
        want = f.read()
    if got == want:
        return 0
    sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                               path, "attnprop eval --json"))
    print(f"\nthe output differs from the approved baseline {path}; if the change is intended,"
          " approve it with APPROVE=1 (see this script's header)")
    return 1


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[2] == "--coverage":
        return coverage(args[0], args[1])
    if len(args) == 4:
        return compare(*args)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
