#!/usr/bin/python3
"""Every document a comment or a document cites exists, and so does every cited theory section.

Usage: cited_documents.py SOURCE_DIR
       cited_documents.py --self-test   (its negative control: a tree with broken citations)

Scans the text files under src/, props/, tests/, bench/, fuzz/, python/ and docs/, and
README.md, for citations of Markdown documents: a path such as docs/<name>.md, a bare
`<name>.md`, a relative link (../docs/<name>.md#anchor). A citation resolves when the file
exists relative to the repository root, to the citing file's folder, or (bare names) in docs/.
report.md is the name of the report every command writes into its output folder, not a
document of the repository, and is not checked; nor are URLs. Prints every citation that does
not resolve as FILE:LINE: NAME and exits 1; exits 0 when every citation resolves.

Sections of docs/theory.md are cited by number: "theory.md §2.2", and further numbers after
such a citation in the same sentence on the same line ("theory.md §1.3 and §7 H2–H4"); inside
docs/theory.md every "§N" is such a citation. A cited number must be the number of a heading
of docs/theory.md ("## 2. ..." or "### 2.2 ..."), and a check label cited with §7 ("§7 H2–H4",
"§7, checks S3–S5", "(theory.md §2.2, S5)") must be defined there as a list item "- **H2 ...".
Each cited number or label that does not exist is printed as FILE:LINE: theory.md §NUMBER.
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

THEORY = os.path.join("docs", "theory.md")
# "## 2. Title", "### 2.2 Title": the number of a section.
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s")
# "- **S3 (one-symbol influence).**": a check label defined by docs/theory.md.
LABEL_DEFINITION = re.compile(r"^\s*[-*]\s+\*\*([A-Z]\d+)\b")
THEORY_CITATION = re.compile(r"theory\.md\b")
SECTION = re.compile(r"§\s*(\d+(?:\.\d+)*)")
# A check label, or a range of them ("H2–H4", "S3-S5").
LABEL = re.compile(r"(?<![A-Za-z0-9_])([HST])(\d+)(?:\s*[–-]\s*(?:\1)?(\d+))?(?![A-Za-z0-9_])")
# The end of a sentence: a full stop, semicolon, question or exclamation mark followed by a
# space or the end of the line (so "§2.2" and "theory.md" do not end one).
SENTENCE_END = re.compile(r"[.;!?](?=\s|$)")


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


def text_lines(root):
    """(path, path relative to root, lines) of each readable text file of text_files(root)."""
    for path in text_files(root):
        if os.path.getsize(path) > MAX_BYTES:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError:
            continue  # binary (a PNG, a model checkpoint)
        yield path, os.path.relpath(path, root), lines


def resolves(root, citing_file, name):
    here = os.path.dirname(citing_file)
    candidates = [os.path.join(root, name.lstrip("/")), os.path.join(here, name)]
    if "/" not in name:
        candidates.append(os.path.join(root, "docs", name))
    return any(os.path.isfile(os.path.normpath(c)) for c in candidates)


def missing_citations(root):
    missing = []
    for path, rel, lines in text_lines(root):
        for number, line in enumerate(lines, 1):
            for m in CITATION.finditer(URL.sub(" ", line)):
                name = m.group(0)
                if os.path.basename(name) in GENERATED:
                    continue
                if not resolves(root, path, name):
                    missing.append(f"{rel}:{number}: {name}")
    return missing


def theory_sections(root):
    """The heading numbers and check labels of docs/theory.md, or None when it does not exist."""
    path = os.path.join(root, THEORY)
    if not os.path.isfile(path):
        return None
    numbers, labels = set(), set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = HEADING.match(line)
            if m:
                numbers.add(m.group(1))
            m = LABEL_DEFINITION.match(line)
            if m:
                labels.add(m.group(1))
    return numbers, labels


def cited_sections(line, in_theory):
    """The section numbers and check labels a line cites: after each "theory.md", up to the end
    of its sentence or the next citation of another document; in docs/theory.md itself, every
    "§N" of the line. Labels count only after a §7 in the same stretch."""
    line = URL.sub(" ", line)
    stretches = []
    if in_theory:
        stretches.append(line)
    else:
        for m in THEORY_CITATION.finditer(line):
            rest = line[m.end():]
            end = len(rest)
            e = SENTENCE_END.search(rest)
            if e:
                end = e.start()
            other = CITATION.search(rest)  # another document, or the next theory citation
            if other:
                end = min(end, other.start())
            stretches.append(rest[:end])
    numbers, labels = [], []
    for text in stretches:
        sections = list(SECTION.finditer(text))
        for i, m in enumerate(sections):
            numbers.append(m.group(1))
            if m.group(1) != "7" or in_theory:
                continue
            after = text[m.end():sections[i + 1].start() if i + 1 < len(sections) else len(text)]
            for lab in LABEL.finditer(after):
                first = int(lab.group(2))
                last = int(lab.group(3)) if lab.group(3) else first
                labels += [f"{lab.group(1)}{k}" for k in range(first, max(first, last) + 1)]
        if not in_theory and sections and not any(m.group(1) == "7" for m in sections):
            # "(theory.md §2.2, S5)": a label after another section still names a §7 check.
            tail = text[sections[-1].end():]
            for lab in LABEL.finditer(tail):
                first = int(lab.group(2))
                last = int(lab.group(3)) if lab.group(3) else first
                labels += [f"{lab.group(1)}{k}" for k in range(first, max(first, last) + 1)]
    return numbers, labels


def missing_sections(root):
    """Every cited section number or check label of docs/theory.md that does not exist."""
    known = theory_sections(root)
    if known is None:
        return []  # the missing document itself is reported by missing_citations
    numbers, labels = known
    theory_path = os.path.normpath(os.path.join(root, THEORY))
    missing = []
    for path, rel, lines in text_lines(root):
        in_theory = os.path.normpath(path) == theory_path
        for number, line in enumerate(lines, 1):
            cited, cited_labels = cited_sections(line, in_theory)
            for c in cited:
                if c not in numbers:
                    missing.append(f"{rel}:{number}: theory.md §{c}")
            for lab in cited_labels:
                if lab not in labels:
                    missing.append(f"{rel}:{number}: theory.md §7 {lab}")
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
    if section_self_test() != 0:
        return 1
    print("self-test: the broken citations of the test tree are found, and only those")
    return 0


def section_self_test():
    """The section check finds the cited numbers and labels that the test tree's theory
    document lacks, and only those."""
    import tempfile
    MD = ".md"
    theory = (f"# Theory\n## The models\n## 1. Hard\n### 1.3 Algorithm\nSee §1.3 and §4.\n"
              f"## 2. Soft\n### 2.2 Probabilities\n## 7. Checks\n- **S3 (influence).** x\n"
              f"- **S5 (entropy).** x\n- **H2 (restriction).** x\n")
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "src"))
        with open(os.path.join(root, "docs", f"theory{MD}"), "w") as f:
            f.write(theory)
        with open(os.path.join(root, "docs", f"other{MD}"), "w") as f:
            f.write("# Other\n")
        with open(os.path.join(root, "src", "x.hpp"), "w") as f:
            f.write(f"/// (theory{MD} §1.3 and §7 H2), (theory{MD} §2.2, S5)\n"
                    f"/// theory{MD} §1.2 is absent\n"
                    f"/// (docs/theory{MD} §2, §9) and theory{MD} §7, checks S3–S5\n"
                    f"/// theory{MD} §2.2. Then §6 starts another sentence; other{MD} §8\n"
                    f"/// see theory{MD}, \"The models\", and other{MD} §3 (theory{MD} §7 H2-H3)\n")
        got = missing_sections(root)
    want = [f"src/x.hpp:2: theory{MD} §1.2", f"src/x.hpp:3: theory{MD} §9",
            f"src/x.hpp:3: theory{MD} §7 S4", f"src/x.hpp:5: theory{MD} §7 H3",
            f"docs/theory{MD}:5: theory{MD} §4"]
    if sorted(got) != sorted(want):
        print(f"self-test: sections found {got}, expected {want}")
        return 1
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("\n".join(__doc__.strip().splitlines()[2:4]), file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    missing = missing_citations(root)
    for m in missing:
        print(f"{m} (cited, but no such file in the repository)")
    sections = missing_sections(root)
    for m in sections:
        print(f"{m} (cited, but docs/theory.md has no such section or check)")
    if missing or sections:
        print(f"{len(missing)} citation(s) of documents that do not exist, "
              f"{len(sections)} of theory sections or checks that do not exist")
        return 1
    print("every cited document and theory section exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
