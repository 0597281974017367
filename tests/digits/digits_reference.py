#!/usr/bin/python3
"""Every printed digit certified (docs/reports.md, "Every printed digit"): runs attnprop's commands
on the bundled models and checks every number they print (text, report.md, CSV, JSON) against a
reference computed in Arb balls at 512 bits (or exactly).

The rule checked, for a printed number paired with the reference enclosure R of the same quantity:
- "m +/- r" (an enclosure): [m - r, m + r] meets R;
- a plain decimal x with d significant digits: x is the correct rounding (to nearest) of a number
  in R, i.e. [x - u/2, x + u/2] meets R, u the unit of x's last digit;
- "<= x" / "≤ x" (an upper bound): x >= min R; ">= x" / "≥ x" (a lower bound): x <= max R.
A reference printed as "m +/- r" is that enclosure (Arb's text contains the ball it prints); a
plain reference decimal (a midpoint of a 512-bit ball printed to d digits) stands for
[x - u, x + u]. A one-sided reference has no value to compare with and is skipped. Integers that
are counts, lengths or bits are compared the same way (they are exact in both).

Excluded, said here so that nothing is skipped silently: the least-squares slopes of log
influence against log n (statistics of doubles, labelled as measurements) and the lines naming
the scalar, the report's folder and the fingerprint.

Usage: digits_reference.py ATTNPROP MODELS_DIR WORK_DIR [--only eval|influence|simulate|bound|restrict] [--models a,b]
Exit 0 when every number passes, 1 with every failure listed (command, output, both numbers).
"""

import csv
import io
import json
import os
import re
import subprocess
import sys
from fractions import Fraction
from decimal import Decimal, localcontext

NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
TOKEN = re.compile(
    r"(?<![\w.^/])(?:(?P<bnd>≤|<=|≥|>=)\s*)?(?:(?P<mid>" + NUM + r")(?![\w.]))?"
    r"(?:\s*(?:\+/-|±)\s*(?P<rad>" + NUM + r"))?")


def frac(s):
    return Fraction(Decimal(s))


def unit(s):
    """The unit of the last digit of the decimal s."""
    m = re.fullmatch(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", s)
    decimals = len(m.group(2) or "")
    exp = int(m.group(3) or 0)
    return Fraction(10) ** (exp - decimals)


class num:
    """A printed number: kind 'ball' (lo, hi), 'plain' (x, u), 'upper' / 'lower' (x)."""

    def __init__(self, kind, a, b=None, text=""):
        self.kind, self.a, self.b, self.text = kind, a, b, text

    def __repr__(self):
        return self.text


def parse_token(bnd, mid, rad, text):
    if bnd:
        if mid is None:
            return None
        return num("upper" if bnd in ("≤", "<=") else "lower", frac(mid), text=text)
    if rad is not None:
        m = frac(mid) if mid else Fraction(0)
        r = frac(rad)
        return num("ball", m - r, m + r, text)
    if mid is None:
        return None
    return num("plain", frac(mid), unit(mid), text)


def parse_text(s):
    """The numbers of one printed value ("0.33 +/- 1e-3", "≤ 2.1", "0.5", "1/2")."""
    s = s.strip()
    if re.fullmatch(r"-?\d+/\d+", s):
        return num("ball", Fraction(s), Fraction(s), s)
    m = TOKEN.fullmatch(s)
    if not m:
        return None
    return parse_token(m.group("bnd"), m.group("mid"), m.group("rad"), s)


def tokens(text):
    out = []
    for m in TOKEN.finditer(text):
        if not m.group(0).strip() or (m.group("mid") is None and m.group("rad") is None):
            continue
        t = parse_token(m.group("bnd"), m.group("mid"), m.group("rad"), m.group(0).strip())
        if t:
            out.append(t)
    return out


def reference_interval(r):
    """The enclosure a reference number stands for, or None (a one-sided reference)."""
    if r.kind == "ball":
        return (r.a, r.b)
    if r.kind == "plain":
        return (r.a - r.b, r.a + r.b)
    return None


def check(c, r):
    """None when the printed c is true to the reference r, else the reason."""
    R = reference_interval(r)
    if R is None or c is None:
        return None
    lo, hi = R
    if c.kind == "ball":
        ok = c.a <= hi and c.b >= lo
        why = "the printed enclosure misses the reference"
    elif c.kind == "plain":
        ok = c.a - c.b / 2 <= hi and c.a + c.b / 2 >= lo
        why = "a printed digit is wrong (not the rounding of a value in the reference)"
    elif c.kind == "upper":
        ok = c.a >= lo
        why = "an upper bound below the true value"
    else:
        ok = c.a <= hi
        why = "a lower bound above the true value"
    return None if ok else why


class checker:
    def __init__(self):
        self.failures = []
        self.checked = 0

    def pair(self, where, c, r):
        self.checked += 1
        why = check(c, r)
        if why:
            self.failures.append(f"{where}: printed {c.text!r}, reference {r.text!r}: {why}")

    def texts(self, where, cand, ref):
        """Two outputs of the same shape, number by number, line by line."""
        cl, rl = normalise(cand), normalise(ref)
        if len(cl) != len(rl):
            self.failures.append(f"{where}: {len(cl)} lines against the reference's {len(rl)}")
            return
        for i, (a, b) in enumerate(zip(cl, rl)):
            ta, tb = tokens(a), tokens(b)
            if len(ta) != len(tb):
                self.failures.append(f"{where}, line {i + 1}: {len(ta)} numbers against the "
                                     f"reference's {len(tb)}:\n    {a}\n    {b}")
                continue
            for x, y in zip(ta, tb):
                self.pair(f"{where}, line {i + 1} ({a.strip()[:60]})", x, y)


SKIP_LINE = re.compile(r"^\s*(scalar|measured in|report:|slope|note|- command:|- options:|- attnprop )|"
                       r"fingerprint|^\s*\(auto|generated|provenance", re.I)
MEASURED = re.compile(r"\((?:reused, )?(?:interval|ball|mpfr|double)(?:, \d+ bits)?\)|\(\d+ bits\)|"
                      r"rate \(a measurement\)[^;)]*|slope [^;)]*|"
                      r"(?<![\d.])(?:16|32|53|64|128|256|512|1024|2048|4096) bits")


def normalise(text):
    out = []
    for line in text.splitlines():
        if SKIP_LINE.search(line):
            continue
        out.append(MEASURED.sub("", line))
    return out


def run(args, cwd=None):
    p = subprocess.run(args, capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


# ---------------------------------------------------------------------------------------------
# eval

EVAL_INPUTS = {"01": "0110", "()[]": "([])", "(": "(()"}


def model_alphabet(path):
    with open(path) as f:
        m = json.load(f)
    return m


def eval_case(ck, bin_, model, inp, n_long):
    # The reference: balls at 512 bits, their JSON midpoints with their radii (or exact values).
    ref_args = [bin_, "eval", "--model", model, "--input", inp, "--json"]
    rc, out, err = run(ref_args + ["--scalar", "ball", "--precision", "512"])
    if rc == 2:
        rc, out, err = run(ref_args + ["--scalar", "exact"])
    if rc not in (0, 4):
        ck.failures.append(f"eval {model} {inp[:16]}: the reference failed: {err.strip()}")
        return
    ref = json.loads(out)
    if ref.get("y") is None:
        return

    def ref_num(mid, rad):
        if rad is None or "/" in mid:
            return parse_text(mid)
        m = frac(mid)
        r = frac(rad) + unit(mid)
        return num("ball", m - r, m + r, f"{mid} +/- {rad}")

    def ref_list(key):
        vals = ref[key]
        rads = ref.get(key + "_radius")
        if isinstance(vals, dict):
            keys = list(vals)
            return [ref_num(vals[k], rads[k] if rads else None) for k in keys]
        return [ref_num(v, rads[i] if rads else None) for i, v in enumerate(vals)]

    refs = {k: ref_list(k) for k in ("y", "logits", "probabilities") if k in ref}
    for scalar, digits in (("auto", None), ("interval", None), ("ball", None), ("exact", None),
                           ("auto", "12"), ("ball", "12")):
        args = [bin_, "eval", "--model", model, "--input", inp, "--scalar", scalar]
        if digits:
            args += ["--digits", digits]
        rc, out, err = run(args)
        if rc == 2:
            continue  # the kind does not evaluate this model (exact on a soft model)
        where = (f"eval --model {model} --input {inp[:16]}{'...' if len(inp) > 16 else ''} --scalar {scalar}"
                 + (f" --digits {digits}" if digits else ""))
        # text: y_n^(L) [a, b], logits s: v, P(next) s: v
        for line in out.splitlines():
            key = {"y_n^(L)": "y", "logits": "logits", "P(next)": "probabilities"}.get(line.split(" ")[0])
            if not key or key not in refs:
                continue
            body = line[len(line.split(" ")[0]):].strip()
            if key == "y":
                vals = [v for v in body.strip("[]").split(", ")]
            else:
                vals = [v.split(": ", 1)[1] for v in body.split(", ")]
            if len(vals) != len(refs[key]):
                ck.failures.append(f"{where} (text): {len(vals)} values of {key} against {len(refs[key])}")
                continue
            for v, r in zip(vals, refs[key]):
                ck.pair(f"{where} (text) {key}", parse_text(v), r)
        rc, out, err = run(args + ["--json"])
        j = json.loads(out)
        for key in refs:
            for field in (key, key + "_text"):
                if field not in j or j[field] is None:
                    continue
                vals = list(j[field].values()) if isinstance(j[field], dict) else j[field]
                rads = j.get(key + "_radius") if field == key else None
                if isinstance(rads, dict):
                    rads = list(rads.values())
                for i, (v, r) in enumerate(zip(vals, refs[key])):
                    c = parse_text(v)
                    if rads is not None and c is not None and c.kind == "plain":
                        m, rr = frac(v), frac(rads[i])
                        c = num("ball", m - rr, m + rr, f"{v} (radius {rads[i]})")
                    ck.pair(f"{where} (json {field})", c, r)


# ---------------------------------------------------------------------------------------------
# influence

VALUE_FIELDS = ["max_influence", "mean_influence", "n_max_influence", "bound", "max_prob_change",
                "prob_bound"]
CE_VALUE_FIELDS = ["mean_ce_bits", "accuracy", "eta", "floor_bits"]
ONE_SIDED = {"n_max_influence_lower": ("lower", "n_max_influence"),
             "n_max_influence_upper": ("upper", "n_max_influence")}


def field_num(v):
    if v is None or v == "":
        return None
    return parse_text(v)


def command_pair(ck, bin_, command, model, extra, cand_dir, ref_dir, reference):
    """Runs `command` on the model as the user would (report in cand_dir) and again with the
    reference options (report in ref_dir), and checks the text and report.md of the first against
    the second. Returns the place's name for further checks, or None when a run failed (recorded)."""
    base = [bin_, command, "--model", model] + extra
    rc, cand_text, err = run(base + ["--out", cand_dir, "--force"])
    if rc not in (0, 1, 4):
        ck.failures.append(f"{command} {model}: {err.strip()}")
        return None
    rc, ref_text, err = run(base + reference + ["--out", ref_dir, "--force"])
    if rc not in (0, 1, 4):
        ck.failures.append(f"{command} {model} (reference): {err.strip()}")
        return None
    where = f"{command} --model {model} {' '.join(extra)}"
    ck.texts(where + " (text)", cand_text, ref_text)
    with open(os.path.join(cand_dir, "report.md")) as a, open(os.path.join(ref_dir, "report.md")) as b:
        ck.texts(where + " (report.md)", a.read(), b.read())
    return where


def influence_case(ck, bin_, model, work, extra):
    cand_dir, ref_dir = os.path.join(work, model + "-auto"), os.path.join(work, model + "-ref")
    where = command_pair(ck, bin_, "influence", model, extra, cand_dir, ref_dir,
                         ["--scalar", "ball", "--precision", "512", "--precision-cap", "512"])
    if where is None:
        return
    with open(os.path.join(cand_dir, "report.json")) as a, open(os.path.join(ref_dir, "report.json")) as b:
        cj, rj = json.load(a), json.load(b)
    for cr, rr in zip(cj["rows"], rj["rows"]):
        w = f"{where} (report.json, n = {cr['n']})"
        for f in VALUE_FIELDS:
            c, r = field_num(cr.get(f)), field_num(rr.get(f))
            if c and r:
                ck.pair(f"{w} {f}", c, r)
        for f, (side, of) in ONE_SIDED.items():
            if cr.get(f) and rr.get(of):
                ck.pair(f"{w} {f}", num(side, frac(cr[f]), text=cr[f]), field_num(rr[of]))
        cc, rc_ = cr.get("cross_entropy"), rr.get("cross_entropy")
        if cc and rc_:
            for f in CE_VALUE_FIELDS:
                c, r = field_num(cc.get(f)), field_num(rc_.get(f))
                if c and r:
                    ck.pair(f"{w} cross_entropy.{f}", c, r)
    with open(os.path.join(cand_dir, "influence.csv")) as a, open(os.path.join(ref_dir, "influence.csv")) as b:
        ca, rb = list(csv.DictReader(a)), list(csv.DictReader(b))
    for cr, rr in zip(ca, rb):
        w = f"{where} (influence.csv, n = {cr['n']})"
        for f in VALUE_FIELDS + ["mean_ce_bits", "accuracy", "eta", "ce_floor_bits"]:
            c, r = field_num(cr.get(f)), field_num(rr.get(f))
            if c and r:
                ck.pair(f"{w} {f}", c, r)


def simulate_case(ck, bin_, model, work, extra):
    cand_dir, ref_dir = os.path.join(work, model + "-sim"), os.path.join(work, model + "-sim-ref")
    where = command_pair(ck, bin_, "simulate", model, extra, cand_dir, ref_dir,
                         ["--precision", "512", "--precision-cap", "512"])
    if where is None:
        return
    with open(os.path.join(cand_dir, "simulate.csv")) as a, open(os.path.join(ref_dir, "simulate.csv")) as b:
        ck.texts(where + " (simulate.csv)", a.read().replace(",", " , "), b.read().replace(",", " , "))


def dec_unit(s):
    """The unit of the last digit of the decimal s, as a Decimal (exponents of any size)."""
    m = re.fullmatch(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", s)
    return Decimal(1).scaleb(int(m.group(3) or 0) - len(m.group(2) or ""))


def rounded_bound(side, printed, value):
    """None when the printed decimal is the given value rounded in the bound's safe direction to
    the printed digits (side 'upper': value <= x < value + u; 'lower': value - u < x <= value),
    else the reason. value is a decimal string (a certified bound at more digits, or exact);
    Decimal, not Fraction: a bound may be 1e+8642061875507."""
    with localcontext() as c:
        c.prec, c.Emax, c.Emin = 200, 10 ** 17, -10 ** 17
        x, u, v = Decimal(printed), dec_unit(printed), Decimal(value)
        if side == "upper":
            if x < v:
                return "an upper bound printed below the bound it rounds"
            if x - u >= v:
                return "an upper bound printed more than one unit above the bound it rounds"
        else:
            if x > v:
                return "a lower bound printed above the bound it rounds"
            if x + u <= v:
                return "a lower bound printed more than one unit below the bound it rounds"
    return None


def finite(s):
    return s is not None and s != "" and re.fullmatch(NUM, s) is not None


class bound_checker:
    """`bound`'s numbers: every number is a bound (the header says so), printed rounded in its
    safe direction; the text's digits against the JSON's (12 digits, rounded the same way), and the
    JSON's Hahn constants (Arb balls at the working precision) against a run at 512 bits."""

    def __init__(self, ck, where):
        self.ck, self.where = ck, where

    def bound(self, what, side, printed, value):
        self.ck.checked += 1
        if not finite(printed) or not finite(value):
            if (printed in (None, "inf", "none", "-")) != (value in (None, "inf", "none", "-")):
                self.ck.failures.append(f"{self.where} {what}: printed {printed!r}, the JSON's {value!r}")
            return
        why = rounded_bound(side, printed, value)
        if why:
            self.ck.failures.append(f"{self.where} {what}: printed {printed!r}, bound {value!r}: {why}")

    def against_reference(self, what, value, ref):
        """A bound at the working precision against the same bound at 512 bits: the former is
        the latter rounded up (never below it, within one unit of its 12 digits)."""
        self.ck.checked += 1
        if not finite(value) or not finite(ref):
            if finite(value) != finite(ref):
                self.ck.failures.append(f"{self.where} {what}: {value!r}, at 512 bits {ref!r}")
            return
        with localcontext() as c:
            c.prec, c.Emax, c.Emin = 200, 10 ** 17, -10 ** 17
            v, r, u, uv = Decimal(value), Decimal(ref), dec_unit(ref), dec_unit(value)
            below, above = v < r - u, v > r + 2 * uv
        if below:
            self.ck.failures.append(f"{self.where} {what}: {value!r} is below the 512-bit bound {ref!r}")
        elif above:
            self.ck.failures.append(f"{self.where} {what}: {value!r} is more than two units above the "
                                    f"512-bit bound {ref!r}")


LAYER_FIELDS = ["F", "A", "E", "L", "mu", "nu", "c", "alpha", "beta", "Delta", "term"]
EVERY_INPUT_FIELDS = [("influence", "upper"), ("n_influence", "upper"), ("prob", "upper"),
                      ("ce_floor_bits", "lower"), ("hahn_bound", "upper")]


def bound_case(ck, bin_, model, n):
    base = [bin_, "bound", "--model", model, "--n", str(n)]
    rc, text, err = run(base)
    rc2, cand, err2 = run(base + ["--json"])
    rc3, ref, err3 = run(base + ["--json", "--precision", "512", "--no-every-n"])
    if rc or rc2 or rc3:
        ck.failures.append(f"bound {model}: {(err or err2 or err3).strip()}")
        return
    j, r = json.loads(cand), json.loads(ref)
    bc = bound_checker(ck, f"bound --model {model} --n {n}")
    # The JSON's Hahn constants against 512 bits.
    for f in ["K", "K_at_n", "bound_at_n", "F0", "Delta0"]:
        bc.against_reference(f, j.get(f), r.get(f))
    for lj, lr in zip(j.get("layers") or [], r.get("layers") or []):
        for f in LAYER_FIELDS + ["delta"]:
            bc.against_reference(f"layer {lj['k']} {f}", lj.get(f), lr.get(f))
    if j.get("probability") and r.get("probability"):
        for f in ["factor", "K", "bound_at_n"]:
            bc.against_reference(f"probability {f}", j["probability"].get(f), r["probability"].get(f))
    # The text's digits against the JSON's.
    lines = text.splitlines()
    in_layers = in_every = False
    layers = {str(l["k"]): l for l in j.get("layers") or []}
    per_n = {str(e["n"]): e for e in (j.get("every_input") or {}).get("per_n") or []}
    seen = set()
    for line in lines:
        m = re.match(r"initial states: F_0 = (\S+), Delta_0 = (\S+)$", line)
        if m:
            bc.bound("F_0", "upper", m.group(1), j.get("F0"))
            bc.bound("Delta_0", "upper", m.group(2), j.get("Delta0"))
            seen.add("initial")
        if line.startswith("per layer"):
            in_layers = True
            continue
        if line.startswith("bounds over every input"):
            in_every = True
            continue
        if not line.strip():
            in_layers = in_every = False
            continue
        cols = line.split()
        if in_layers and cols[0] in layers:
            if len(cols) != 1 + len(LAYER_FIELDS):
                ck.failures.append(f"{bc.where}: a layer row of {len(cols)} columns: {line}")
                continue
            for f, x in zip(LAYER_FIELDS, cols[1:]):
                bc.bound(f"layer {cols[0]} {f}", "upper", x, layers[cols[0]].get(f))
            seen.add("layer " + cols[0])
        if in_every and cols[0] in per_n and per_n[cols[0]].get("applies") and len(cols) == 7:
            e = per_n[cols[0]]
            for (f, side), x in zip(EVERY_INPUT_FIELDS, cols[2:]):
                bc.bound(f"every input n = {cols[0]} {f}", side, x, e.get(f))
            seen.add("every input " + cols[0])
        m = re.match(r"K = (\S+)\s", line)
        if m:
            bc.bound("K", "upper", m.group(1), j.get("K"))
        m = re.search(r"at n = \d+: K\(n\) = (\S+), delta_L\(n\) = K\(n\)/n = (\S+)$", line)
        if m:
            bc.bound("K(n)", "upper", m.group(1), j.get("K_at_n"))
            bc.bound("K(n)/n", "upper", m.group(2), j.get("bound_at_n"))
        m = re.search(r"<= K\* = (\S+) for every n", line)
        if m:
            bc.bound("K*", "upper", m.group(1), j["every_input"]["every_n"].get("K_star"))
            seen.add("K*")
        m = re.search(r"with c\* = (\S+), so", line)
        if m:
            bc.bound("c*", "upper", m.group(1), j["every_input"]["every_n"].get("c_star"))
    if j.get("layers") and "initial" not in seen:
        ck.failures.append(f"{bc.where}: the text's initial states were not found")
    for k in layers:
        if layers[k].get("F") is not None and "layer " + k not in seen:
            ck.failures.append(f"{bc.where}: the text's row of layer {k} was not found")


def restrict_case(ck, bin_, model, work, ns):
    """`restrict`'s numbers are exact (counts, lengths, fractions): every decimal it prints is the
    correct rounding of the exact fraction in report.json."""
    out = os.path.join(work, model + "-restrict")
    rc, text, err = run([bin_, "restrict", "--model", model, "--n", ns, "--out", out, "--force"])
    if rc not in (0, 1):
        ck.failures.append(f"restrict {model}: {err.strip()}")
        return
    with open(os.path.join(out, "report.json")) as f:
        runs = {str(r["n"]): r for r in json.load(f)["runs"]}
    where = f"restrict --model {model} --n {ns}"

    def exact(printed, value, what):
        ck.pair(f"{where} {what}", parse_text(printed), num("ball", value, value, str(value)))

    current = None
    for line in text.splitlines():
        m = re.match(r"== n = (\d+)", line)
        if m:
            current = runs.get(m.group(1))
        m = re.match(r"free\s+(\d+) of \d+ inputs, fraction (\S+) of n", line)
        if m and current:
            exact(m.group(1), Fraction(current["free"]), "free")
            exact(m.group(2), Fraction(current["free_ratio"]), "fraction of n")
        cols = line.split()
        if len(cols) == 5 and cols[0] in runs and cols[4] in ("valid", "invalid", "incomplete"):
            r = runs[cols[0]]
            exact(cols[1], Fraction(r["free"]), "free (table)")
            exact(cols[2], Fraction(r["free_ratio"]), "free/n (table)")
            exact(cols[3], Fraction(r["c_obs"]), "c_obs (table)")
    with open(os.path.join(out, "restrict.csv")) as f:
        for row in csv.DictReader(f):
            r = runs[row["n"]]
            exact(row["free_ratio"], Fraction(r["free_ratio"]), f"restrict.csv n = {row['n']} free_ratio")
            exact(row["free"], Fraction(r["free"]), f"restrict.csv n = {row['n']} free")
            exact(row["c_obs"], Fraction(r["c_obs"]), f"restrict.csv n = {row['n']} c_obs")


SIMULATE_CASES = {
    "hard-contains-one": ["--beta", "3", "--beta", "2*log(n)", "--n", "8,16", "--inputs", "4"],
    "hard-first-one-position": ["--beta", "5", "--beta", "n", "--n", "8,16", "--inputs", "4"],
    "hard-parity-attempt": ["--beta", "4", "--n", "8", "--inputs", "4"],
}

RESTRICT_CASES = {
    "hard-parity-attempt": "8,16,24",
    "hard-first-one-position": "8,16",
    "hard-contains-one": "9,17",
}

INFLUENCE_CASES = {
    # The line of the request: eta and CE of a layer norm with eps = 0 (n small: a test).
    "cc-parity-ln0": ["--n", "16,64", "--inputs", "2", "--positions", "4", "--language", "parity"],
    "cc-parity": ["--n", "16,64", "--inputs", "2", "--positions", "2", "--language", "parity"],
    "cc-first": ["--n", "16,32", "--inputs", "2", "--positions", "2", "--language", "first"],
    "soft-recency-2dyck": ["--n", "16", "--inputs", "2", "--positions", "2", "--language", "2dyck"],
}


def self_test():
    """The negative control: the checker fails on wrong digits, including the line attnprop
    printed before every printed digit was certified (influence --model cc-parity-ln0 --n 4096
    --inputs 2 --positions 4 --language parity: eta from the upper end of an interval enclosure,
    CE wrong in the tenth digit, the floor from the inflated eta), and passes their certified form."""
    ref = ("  n = 4096: CE 0.0598110247386 +/- 4.54e-14, accuracy 1, eta 0.918779558653 +/- 2.51e-13, "
           "floor 0.0598110247386 +/- 4.54e-14; over every input eta <= 2.17944947178, so CE >= 0")
    old = ("  n = 4096: CE 0.0598110248058, accuracy 1.00000000000, eta 0.918834424887, floor "
           "0.0597697731072; over every input eta <= 2.17944947178, so CE >= 0")
    wrong = checker()
    wrong.texts("uncertified", old, ref)
    good = checker()
    good.texts("certified", ref, ref)
    problems = []
    if len(wrong.failures) != 3:
        problems.append(f"the uncertified line gave {len(wrong.failures)} failures, not 3 (CE, eta, "
                        f"floor): {wrong.failures}")
    if good.failures:
        problems.append(f"the certified line failed: {good.failures}")
    R = parse_text("0.918779558653 +/- 2.51e-13")
    cases = [("0.9188", True), ("0.9187", False), ("0.918779558653", True), ("0.918779558654", False),
             ("0.91878 +/- 1e-5", True), ("0.91890 +/- 1e-5", False), ("≤ 0.91878", True),
             ("≤ 0.91877", False), ("≥ 0.91877", True), (">= 0.91879", False), ("1/2", False)]
    for text, ok in cases:
        why = check(parse_text(text), R)
        if (why is None) != ok:
            problems.append(f"{text!r} against {R.text!r}: {'passed' if why is None else why}, "
                            f"expected {'pass' if ok else 'failure'}")
    # Bounds rounded in their safe direction (`bound`): an upper bound rounded down, or by more
    # than one unit, is caught; so is a lower bound rounded up; exponents beyond any float.
    bound_cases = [("upper", "545997", "545996.533772", True), ("upper", "545996", "545996.533772", False),
                   ("upper", "545998", "545996.533772", False), ("upper", "3.61e+8642061875507",
                                                                 "3.60036e+8642061875507", True),
                   ("upper", "3.6e+8642061875507", "3.60036e+8642061875507", False),
                   ("lower", "0.9674973", "0.9674973153", True), ("lower", "0.9674974", "0.9674973153", False),
                   ("lower", "0.9674972", "0.9674973153", False)]
    for side, printed, value, ok in bound_cases:
        why = rounded_bound(side, printed, value)
        if (why is None) != ok:
            problems.append(f"{side} bound {printed!r} of {value!r}: {'passed' if why is None else why}, "
                            f"expected {'pass' if ok else 'failure'}")
    for p in problems:
        print("SELF-TEST FAILED " + p)
    print(f"self-test: {len(cases) + len(bound_cases) + 2} cases, {len(problems)} wrong")
    sys.exit(1 if problems else 0)


def main():
    if sys.argv[1:2] == ["--self-test"]:
        self_test()
    bin_, models_dir, work = sys.argv[1:4]
    only = None
    pick = None
    rest = sys.argv[4:]
    while rest:
        if rest[0] == "--only":
            only, rest = rest[1], rest[2:]
        elif rest[0] == "--models":
            pick, rest = rest[1].split(","), rest[2:]
        else:
            sys.exit(f"unknown argument {rest[0]}")
    os.makedirs(work, exist_ok=True)
    ck = checker()
    models = sorted(f[:-5] for f in os.listdir(models_dir) if f.endswith(".json"))
    if pick:
        models = [m for m in models if m in pick]
    if only in (None, "eval"):
        for m in models:
            spec = model_alphabet(os.path.join(models_dir, m + ".json"))
            syms = "".join(spec["alphabet"])
            inp = EVAL_INPUTS.get(syms, (syms * 4)[:4])
            eval_case(ck, bin_, m, inp, False)
            # A longer input: the interval's radius grows with n.
            eval_case(ck, bin_, m, (inp * 16)[:63], True)
    if only in (None, "influence"):
        for m, extra in INFLUENCE_CASES.items():
            if pick and m not in pick:
                continue
            influence_case(ck, bin_, m, work, extra)
    if only in (None, "simulate"):
        for m, extra in SIMULATE_CASES.items():
            if pick and m not in pick:
                continue
            simulate_case(ck, bin_, m, work, extra)
    if only in (None, "bound"):
        for m in models:
            bound_case(ck, bin_, m, 16)
    if only in (None, "restrict"):
        for m, ns in RESTRICT_CASES.items():
            if pick and m not in pick:
                continue
            restrict_case(ck, bin_, m, work, ns)
    for f in ck.failures:
        print("FAILED " + f)
    print(f"{ck.checked} numbers checked, {len(ck.failures)} failures")
    sys.exit(1 if ck.failures else 0)


if __name__ == "__main__":
    main()
