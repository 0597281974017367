#!/usr/bin/python3
"""Every document a comment or a document cites exists in the repository.

Usage: cited_documents.py SOURCE_DIR
       cited_documents.py --self-test   (its negative control: a tree with broken citations)

Scans the text files under src/, props/, tests/, bench/, fuzz/, python/ and docs/, and
README.md, for citations of Markdown documents: a path such as docs/<name>.md, a bare
`<name>.md`, a relative link (../docs/<name>.md#anchor). A citation resolves when the file
exists relative to the repository root, to the citing file's folder, or (bare names) in docs/.
report.md is the name of the report every command writes into its output folder, not a
document of the repository, and is not checked; nor are URLs. Prints every citation that does
not resolve as FILE:LINE: NAME and exits 1; exits 0 when every citation resolves.
"""
import os
import re
import sys

SCANNED_DIRS = ["src", "props", "tests", "bench", "fuzz", "python", "docs"]
SCANNED_FILES = ["README.md"]
# Written by attnprop into its output folders (docs/reports.md), never a repository file.
GENERATED = {"report.md"}
SKIPPED_DIRS = {"__pycache__", ".git"}
MAX_BYTES = 2_000_000

CITATION = re.compile(r"[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md(?![A-Za-z0-9_])")
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+")


def text_files(root):
    for d in SCANNED_DIRS:
        top = os.path.join(root, d)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(n for n in dirnames if n not in SKIPPED_DIRS)
            for f in sorted(filenames):
                yield os.path.join(dirpath, f)
    for f in SCANNED_FILES:
        p = os.path.join(root, f)
        if os.path.exists(p):
            yield p


def resolves(root, citing_file, name):
    here = os.path.dirname(citing_file)
    candidates = [os.path.join(root, name.lstrip("/")), os.path.join(here, name)]
    if "/" not in name:
        candidates.append(os.path.join(root, "docs", name))
    return any(os.path.isfile(os.path.normpath(c)) for c in candidates)


def missing_citations(root):
    missing = []
    for path in text_files(root):
        if os.path.getsize(path) > MAX_BYTES:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError:
            continue  # binary (a PNG, a model checkpoint)
        rel = os.path.relpath(path, root)
        for number, line in enumerate(lines, 1):
            for m in CITATION.finditer(URL.sub(" ", line)):
                name = m.group(0)
                if os.path.basename(name) in GENERATED:
                    continue
                if not resolves(root, path, name):
                    missing.append(f"{rel}:{number}: {name}")
    return missing


def self_test():
    """The check finds the broken citations of a small tree, and only those. (The names of the
    tree are spelt with MD, so that this file cites nothing itself.)"""
    import tempfile
    MD = ".md"
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "src", "model"))
        with open(os.path.join(root, "docs", f"present{MD}"), "w") as f:
            f.write("# Present\n")
        with open(os.path.join(root, "src", "model", "x.hpp"), "w") as f:
            f.write(f"/// see docs/present{MD} and `present{MD}`\n"
                    f"/// see docs/absent{MD}\n"
                    f"/// (`gone{MD}`, \"Section\")\n"
                    f"/// https://example.org/docs/README{MD} and out/report{MD}\n"
                    f"/// [a link](../../docs/present{MD}#present), [another](../nowhere{MD})\n")
        got = missing_citations(root)
    want = [f"src/model/x.hpp:2: docs/absent{MD}", f"src/model/x.hpp:3: gone{MD}",
            f"src/model/x.hpp:5: ../nowhere{MD}"]
    if got != want:
        print(f"self-test: found {got}, expected {want}")
        return 1
    print("self-test: the broken citations of the test tree are found, and only those")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    missing = missing_citations(root)
    for m in missing:
        print(f"{m} (cited, but no such file in the repository)")
    if missing:
        print(f"{len(missing)} citation(s) of documents that do not exist")
        return 1
    print("every cited document exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
