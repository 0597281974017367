#!/usr/bin/python3
"""docs/properties.md lists exactly the registered properties.

Usage: properties_listed.py ATTNPROP DOCS_PROPERTIES_MD [--self-test]

With --self-test, its negative control: copies of the catalogue with a row dropped, a row
repeated, a row naming no property and a controls table headed as an ordinary one must each
fail, with the problem named.

The registered properties are what `attnprop check --list` prints: one "suite/name" line per
property, marked "(control)" for the deliberately false statements. The catalogue lists a
property as a table row whose first cell is its name in backquotes, under the heading
"## Suite `NAME`" of its suite; a table whose header says "(false on purpose)" lists controls,
which belong to the suite `controls` wherever the table stands (the soft-hard section lists its
own). Fails (exit 1) naming every property registered but not listed, listed but not
registered, listed twice, or listed as a control when it is not one (or the reverse).
"""
import os
import re
import subprocess
import sys

SUITE_HEADING = re.compile(r"^## Suite `([^`]+)`")
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


def registered(attnprop):
    out = subprocess.run([attnprop, "check", "--list"], check=True, capture_output=True,
                         text=True).stdout
    props = {}
    for line in out.splitlines():
        if not line or line.startswith(" "):
            continue  # the statement, indented under its property
        name, _, rest = line.partition(" ")
        props[name] = "(control)" in rest
    return props


def listed(path):
    """{suite/name: (line, is_control)}, and the problems found while reading."""
    props, problems = {}, []
    suite, controls_table = None, False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("## "):
                m = SUITE_HEADING.match(line)
                suite = m.group(1) if m else None
                controls_table = False
                continue
            if line.startswith("| property |"):
                controls_table = "(false on purpose)" in line
                continue
            m = ROW.match(line)
            if not m:
                if not line.startswith("|"):
                    controls_table = False  # a table ends at its first line that is no row
                continue
            if suite is None:
                continue  # other tables (verdicts, options) name no properties
            name = ("controls" if controls_table else suite) + "/" + m.group(1)
            if name in props:
                problems.append(f"{path}:{number}: {name} is listed twice "
                                f"(first at line {props[name][0]})")
                continue
            props[name] = (number, controls_table)
    return props, problems


def problems_of(reg, doc):
    docs, problems = listed(doc)
    if not reg:
        problems.append("attnprop check --list printed no property")
    for name in reg:
        if name not in docs:
            problems.append(f"{doc}: {name} is registered but not listed")
    for name, (line, control) in docs.items():
        if name not in reg:
            problems.append(f"{doc}:{line}: {name} is listed but not registered")
        elif control != reg[name]:
            what = "a control" if reg[name] else "not a control"
            problems.append(f"{doc}:{line}: {name} is {what} but listed as the opposite")
    return problems


def self_test(reg, doc):
    import tempfile
    with open(doc, encoding="utf-8") as f:
        lines = f.readlines()
    rows = [i for i, l in enumerate(lines) if ROW.match(l)]
    control_headers = [i for i, l in enumerate(lines)
                       if l.startswith("| property |") and "(false on purpose)" in l]
    ordinary = "| property | statement | kinds | negative control |\n"

    def headed_as_ordinary(i):
        return lines[:i] + [ordinary] + lines[i + 1:]
    variants = {
        "a row dropped": (lines[:rows[0]] + lines[rows[0] + 1:], "registered but not listed"),
        "a row repeated": (lines[:rows[0]] + [lines[rows[0]]] + lines[rows[0]:], "listed twice"),
        "an unknown row": (lines[:rows[0]] + ["| `no-such-property` | x | exact | x |\n"] +
                           lines[rows[0]:], "listed but not registered"),
        # In the suite controls: its rows are no longer marked as controls.
        "the controls table headed as ordinary": (headed_as_ordinary(control_headers[0]),
                                                  "listed as the opposite"),
        # In another suite's section: its rows name properties of that suite.
        "a suite's controls headed as ordinary": (headed_as_ordinary(control_headers[-1]),
                                                  "registered but not listed"),
    }
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, (text, expected) in variants.items():
            path = os.path.join(tmp, "properties.md")
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(text)
            problems = problems_of(reg, path)
            if not any(expected in p for p in problems):
                print(f"self-test: {what}: expected a problem '{expected}', got {problems}")
                failed += 1
    if not failed:
        print(f"self-test: each of the {len(variants)} broken catalogues fails")
    return 1 if failed else 0


def main():
    args = sys.argv[1:]
    test = args[2:] == ["--self-test"]
    if len(args) != 2 and not test:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    attnprop, doc = args[0], args[1]
    reg = registered(attnprop)
    if test:
        return self_test(reg, doc)
    problems = problems_of(reg, doc)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"docs/properties.md lists the {len(reg)} registered properties")
    return 0


if __name__ == "__main__":
    sys.exit(main())
