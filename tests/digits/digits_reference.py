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

`check`: a counterexample's numbers against the same folder replayed at 512 bits, the
distribution lines against report.json's exact counts. Figures (influence, simulate, drawn with
--figure-text, and `attnprop plot --caption` of each folder): the numbers of every <text> and
of the plot's report.md against the reference run's.

Excluded, said here so that nothing is skipped silently: the least-squares slopes of log
influence against log n (statistics of doubles, labelled as measurements), the lines naming
the scalar, the report's folder and the fingerprint, and what is not a number in a
counterexample (inputs compare as integers; formulas in n are skipped).

Usage: digits_reference.py ATTNPROP MODELS_DIR WORK_DIR [--only eval|influence|simulate|bound|restrict|check] [--models a,b]
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
import decimal
from decimal import Decimal, localcontext

NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
TOKEN = re.compile(
    r"(?<![\w.^/])(?:(?P<bnd>≤|<=|≥|>=)\s*)?(?:(?P<mid>" + NUM + r")(?![\w.]))?"
    r"(?:\s*(?:\+/-|±)\s*(?P<rad>" + NUM + r"))?")


HUGE = 1000  # beyond 10^±HUGE a number stays a Decimal (Hahn's K may be 3.6e+8642061875507)
# Decimal arithmetic on such numbers: 200 digits (printed numbers have at most ~40), no overflow.
decimal.getcontext().prec = 200
decimal.getcontext().Emax = decimal.MAX_EMAX
decimal.getcontext().Emin = decimal.MIN_EMIN


def frac(s):
    d = Decimal(s)
    return Fraction(d) if d.is_zero() or abs(d.adjusted()) <= HUGE else d


def unit(s):
    """The unit of the last digit of the decimal s."""
    m = re.fullmatch(r"[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", s)
    decimals = len(m.group(2) or "")
    exp = int(m.group(3) or 0)
    if abs(exp - decimals) > HUGE:
        return Decimal(1).scaleb(exp - decimals)
    return Fraction(10) ** (exp - decimals)


def as_decimal(x):
    return x if isinstance(x, Decimal) else Decimal(x.numerator) / Decimal(x.denominator)


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
        if isinstance(m, Decimal) or isinstance(r, Decimal):
            m, r = as_decimal(m), as_decimal(r)
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
        a, b = (as_decimal(r.a), as_decimal(r.b)) if Decimal in (type(r.a), type(r.b)) else (r.a, r.b)
        return (a - b, a + b)
    return None


def check(c, r):
    """None when the printed c is true to the reference r, else the reason."""
    R = reference_interval(r)
    if R is None or c is None:
        return None
    lo, hi = R
    vals = [lo, hi, c.a] + ([c.b] if c.b is not None else [])
    if any(isinstance(v, Decimal) for v in vals) and not all(isinstance(v, Decimal) for v in vals):
        # A number beyond 10^±HUGE: all in Decimal.
        return check(num(c.kind, as_decimal(c.a), None if c.b is None else as_decimal(c.b), c.text),
                     num("ball", as_decimal(lo), as_decimal(hi), r.text))
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
        self.not_applicable = []  # "command model": the command refuses the model's kind

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
    if rc == 2 and f"error: {command} needs a" in err:
        ck.not_applicable.append(f"{command} {model}")
        return None
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


def svg_texts(path):
    """The texts of a figure, one line per <text> element (its tspans joined)."""
    import xml.etree.ElementTree as ET
    return "\n".join("".join(e.itertext()) for e in ET.parse(path).iter() if e.tag.endswith("}text") or e.tag == "text")


def figures_pair(ck, where, cand_dir, ref_dir):
    """Every figure's labels (drawn with --figure-text, so the captions are in the image too)
    against the reference run's same figure."""
    figs = sorted(f for f in os.listdir(cand_dir) if f.endswith(".svg"))
    if not figs:
        ck.failures.append(f"{where}: no figure written")
    for f in figs:
        if not os.path.exists(os.path.join(ref_dir, f)):
            ck.failures.append(f"{where}: the reference run wrote no {f}")
            continue
        # One text, not line by line: a caption wraps where its numbers' widths put the breaks.
        a, b = (MEASURED.sub("", " ".join(svg_texts(os.path.join(d, f)).splitlines()))
                for d in (cand_dir, ref_dir))
        ck.texts(f"{where} ({f})", a, b)


def plot_pair(ck, bin_, where, cand_dir, ref_dir):
    """`attnprop plot --caption` of the candidate's folder against the plot of the reference's:
    report.md and every figure's texts."""
    outs = []
    for d in (cand_dir, ref_dir):
        out = d + "-plot"
        subprocess.run(["rm", "-rf", out])
        rc, _, err = run([bin_, "plot", d, "--out", out, "--caption"])
        if rc != 0:
            ck.failures.append(f"plot {d}: exit {rc}: {err.strip()}")
            return
        outs.append(out)
    with open(os.path.join(outs[0], "report.md")) as a, open(os.path.join(outs[1], "report.md")) as b:
        ck.texts(f"plot of {where} (report.md)", a.read(), b.read())
    figures_pair(ck, f"plot of {where}", outs[0], outs[1])


def influence_case(ck, bin_, model, work, extra):
    cand_dir, ref_dir = os.path.join(work, model + "-auto"), os.path.join(work, model + "-ref")
    extra = extra + ["--figure-text"]
    where = command_pair(ck, bin_, "influence", model, extra, cand_dir, ref_dir,
                         ["--scalar", "ball", "--precision", "512", "--precision-cap", "512"])
    if where is None:
        return
    figures_pair(ck, where, cand_dir, ref_dir)
    plot_pair(ck, bin_, where, cand_dir, ref_dir)
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
    extra = extra + ["--figure-text"]
    where = command_pair(ck, bin_, "simulate", model, extra, cand_dir, ref_dir,
                         ["--precision", "512", "--precision-cap", "512"])
    if where is None:
        return
    figures_pair(ck, where, cand_dir, ref_dir)
    plot_pair(ck, bin_, where, cand_dir, ref_dir)
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

    def dashes(v, path):
        # A missing number is null in JSON, never the text's "-".
        if v == "-":
            ck.failures.append(f"bound --model {model} --json: {path} is \"-\", not null")
        for k, x in (v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else []):
            dashes(x, f"{path}.{k}")
    dashes(j, "$")
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
    if rc == 2 and "error: restrict needs a" in err:
        ck.not_applicable.append(f"restrict {model}")
        return
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


# ---------------------------------------------------------------------------------------------
# check

# The runs of `check` whose numbers are checked: the controls (every one fails on purpose, so
# every one writes a counterexample with its numbers) and a given soft model.
CHECK_RUNS = {
    "controls": ["--suite", "controls", "--tests", "5", "--seed", "1"],
    "cc-parity-ln0": ["--model", "cc-parity-ln0", "--tests", "5", "--seed", "1"],
}
EXPR = re.compile(r"(?P<p>\d+)/(?P<q>\d+)(?:\^(?P<k>\d+))?")


def case_number(key, v):
    """The numbers of one value of a counterexample's `numbers` (a number, `p/q^k`, or a list
    `[a, b]`), or None for what is not a number (an input, a formula in n, a name). A plain decimal
    under a key ending in `_bound` is an upper bound (the field's name says the side)."""
    v = v.strip()
    if v.startswith("[") and v.endswith("]"):
        items = [case_number(key, x) for x in v[1:-1].split(",")] if v[1:-1].strip() else []
        return items if all(isinstance(x, num) for x in items) else None
    m = EXPR.fullmatch(v)
    if m:
        x = Fraction(int(m["p"]), int(m["q"]) ** int(m["k"] or 1))
        return num("ball", x, x, v)
    c = parse_text(v)
    if c is not None and c.kind == "plain" and key.endswith("_bound"):
        return num("upper", c.a, text=v)
    return c


def case_numbers_pair(ck, where, cand, ref):
    """A counterexample's numbers against the same counterexample replayed at 512 bits."""
    for key, v in cand.items():
        if key not in ref:
            ck.failures.append(f"{where}: '{key}' is not in the reference's numbers")
            continue
        c, r = case_number(key, v), case_number(key, ref[key])
        if c is None or r is None:
            continue
        if isinstance(c, list) != isinstance(r, list) or (isinstance(c, list) and len(c) != len(r)):
            ck.failures.append(f"{where} {key}: printed {v!r}, reference {ref[key]!r}: not the same shape")
            continue
        for x, y in zip(c, r) if isinstance(c, list) else [(c, r)]:
            if y.kind == "upper":
                # A reference bound rounded up to the digits shown: the value is within one unit
                # below it, which is all a printed upper bound must not go under.
                a, u = y.a, unit(y.text.strip("≤<= "))
                if Decimal in (type(a), type(u)):
                    a, u = as_decimal(a), as_decimal(u)
                y = num("ball", a - u, a, y.text)
            ck.pair(f"{where} {key}", x, y)


def percent_pair(ck, where, text, prop):
    """`(median M, P% at n >= Q)` of a property's line against report.json's exact counts."""
    d = prop.get("n_drawn")
    if not d or not d["cases"]:
        return
    m = re.search(r"\(median (\d+), (" + NUM + r")% at n >= (\d+)\)", text)
    if not m:
        ck.failures.append(f"{where}: no '(median M, P% at n >= Q)' for {prop['suite']}/{prop['name']}")
        return
    exact = Fraction(100 * d["cases_at_least_quarter"], d["cases"])
    ck.pair(f"{where} median", parse_text(m[1]), num("ball", Fraction(d["median"]), Fraction(d["median"]), str(d["median"])))
    ck.pair(f"{where} percent at n >= {m[3]}", parse_text(m[2]), num("ball", exact, exact, str(exact)))
    ck.pair(f"{where} quarter of --max-n", parse_text(m[3]),
            num("ball", Fraction(d["quarter_max_n"]), Fraction(d["quarter_max_n"]), str(d["quarter_max_n"])))


def check_case(ck, bin_, name, work, extra):
    cand = os.path.join(work, "check-" + name)
    rc, text, err = run([bin_, "check"] + extra + ["--out", cand, "--force"])
    if rc not in (0, 1, 4, 5):
        ck.failures.append(f"check {name}: exit {rc}: {err.strip()}")
        return
    where = f"check {' '.join(extra)}"
    with open(os.path.join(cand, "report.json")) as f:
        rep = json.load(f)
    with open(os.path.join(cand, "report.md")) as f:
        md = f.read()
    lines = text.splitlines()
    for p in rep["properties"]:
        full = f"{p['suite']}/{p['name']}"
        # The terminal: the distribution line under the property's row; report.md: its statement.
        for i, line in enumerate(lines):
            if line.startswith(full + " ") and i + 1 < len(lines):
                percent_pair(ck, f"{where} (text, {full})", lines[i + 1], p)
                break
        else:
            ck.failures.append(f"{where} (text): no row for {full}")
        m = re.search(r"^- \*\*" + re.escape(full) + r"\*\*:.*\n(.*)$", md, re.M)
        if m:
            percent_pair(ck, f"{where} (report.md, {full})", m[1], p)
        cx = p.get("counterexample")
        if not cx:
            continue
        folder = os.path.join(cand, cx["folder"])
        with open(os.path.join(folder, "case.json")) as f:
            case = json.load(f)
        # The reference: the same case replayed at 512 bits.
        ref_folder = os.path.join(work, "check-ref-" + name, os.path.basename(folder))
        subprocess.run(["rm", "-rf", ref_folder])
        os.makedirs(os.path.dirname(ref_folder), exist_ok=True)
        subprocess.run(["cp", "-r", folder, ref_folder], check=True)
        case["precision"] = 512
        case["precision_cap"] = max(512, case.get("precision_cap", 512))
        with open(os.path.join(ref_folder, "case.json"), "w") as f:
            json.dump(case, f)
        rc, out, err = run([bin_, "replay", ref_folder, "--allow-edited", "--json"])
        if rc not in (0, 1, 5):
            ck.failures.append(f"{where} {full}: the 512-bit replay failed: {err.strip()}")
            continue
        ref = json.loads(out)
        if ref.get("precision") != 512:
            ck.failures.append(f"{where} {full}: the replay ran at {ref.get('precision')} bits, not 512")
            continue
        refn = ref.get("numbers", {})
        case_numbers_pair(ck, f"{where} ({cx['folder']}/case.json)", case["numbers"], refn)
        case_numbers_pair(ck, f"{where} (report.json, {full})", cx["numbers"], refn)
        # report.md's counterexample section: "- key = `value`" lines.
        sec = re.search(r"^### " + re.escape(full) + r"\b.*?(?=^### |\Z)", md, re.M | re.S)
        shown = dict(re.findall(r"^- ([a-z_0-9]+) = `([^`]*)`$", sec[0], re.M)) if sec else {}
        if not shown and cx["numbers"]:
            ck.failures.append(f"{where} (report.md): no numbers under {full}'s counterexample")
        case_numbers_pair(ck, f"{where} (report.md, {full})",
                          {k: v for k, v in shown.items() if k in cx["numbers"]}, refn)


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
    K = parse_text("3.60036e+8642061875507 +/- 1e+8642061875502")
    huge = [("≤ 3.61e+8642061875507", K, True), ("≤ 3.5e+8642061875507", K, False),
            ("3.6004e+8642061875507", K, True), ("3.601e+8642061875507", K, False),
            ("1.5e+1001", parse_text("1.5e+1001"), True), ("0.5", parse_text("1.5e+1001"), False)]
    for text, ref_, ok in huge:
        why = check(parse_text(text), ref_)
        if (why is None) != ok:
            problems.append(f"{text!r} against {ref_.text!r}: {'passed' if why is None else why}, "
                            f"expected {'pass' if ok else 'failure'}")
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
    # `check`'s counterexample numbers and distribution lines: an enclosure with a wrong digit, an
    # upper bound (a `_bound` field) below the value, a wrong `p/q^k` and a wrong percentage.
    ref_numbers = {"influence": "0.27453430407975862521 +/- 3.18e-21", "layer_1_delta_bound": "0.3333333334",
                   "bound_squared": "1/2^4", "y": "[0, 0.5]"}
    bad_numbers = {"influence": "0.27453430407985862521 +/- 3.18e-21", "layer_1_delta_bound": "0.3333333332",
                   "bound_squared": "1/2^3", "y": "[0, 0.7]"}
    same, bad = checker(), checker()
    case_numbers_pair(same, "check numbers", ref_numbers, ref_numbers)
    case_numbers_pair(bad, "check numbers", bad_numbers, ref_numbers)
    prop = {"suite": "s", "name": "p", "n_drawn": {"cases": 5, "median": 36, "quarter_max_n": 64,
                                                   "cases_at_least_quarter": 1}}
    percent_pair(same, "check distribution", "  lengths: n<=4: 1 (median 36, 20.0% at n >= 64)", prop)
    percent_pair(bad, "check distribution", "  lengths: n<=4: 1 (median 36, 20.1% at n >= 64)", prop)
    # A figure's caption, wrapped at another place in each run: a wrong digit in it is caught.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        svg = ('<svg xmlns="http://www.w3.org/2000/svg"><text>0.5</text><text>CE = {} bits at</text>'
               '<text>every n; eta {}</text></svg>')
        for d, ce, eta in (("ref", "0.0598110247386 +/- 4.54e-14", "0.918779558653 +/- 2.51e-13"),
                           ("good", "0.0598110247", "0.91877955865"), ("bad", "0.0598110248", "0.91883")):
            os.makedirs(os.path.join(tmp, d))
            with open(os.path.join(tmp, d, "f.svg"), "w") as f:
                f.write(svg.format(ce, eta))
        figures_pair(same, "figure", os.path.join(tmp, "good"), os.path.join(tmp, "ref"))
        figures_pair(bad, "figure", os.path.join(tmp, "bad"), os.path.join(tmp, "ref"))
    if same.failures:
        problems.append(f"check's certified numbers failed: {same.failures}")
    if len(bad.failures) != 7:
        problems.append(f"check's and the figure's wrong numbers gave {len(bad.failures)} failures, "
                        f"not 7: {bad.failures}")
    for p in problems:
        print("SELF-TEST FAILED " + p)
    print(f"self-test: {len(cases) + len(bound_cases) + len(huge) + 6} cases, {len(problems)} wrong")
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
    # influence, simulate and restrict on every bundled model the command takes (the others are
    # refused by kind, listed at the end); the cases above with their own options, the rest with
    # small ones.
    if only in (None, "influence"):
        for m in models:
            influence_case(ck, bin_, m, work, INFLUENCE_CASES.get(
                m, ["--n", "8,16", "--inputs", "2", "--positions", "2"]))
    if only in (None, "simulate"):
        for m in models:
            simulate_case(ck, bin_, m, work, SIMULATE_CASES.get(
                m, ["--beta", "4", "--beta", "log(n)", "--n", "8,16", "--inputs", "2"]))
    if only in (None, "bound"):
        for m in models:
            bound_case(ck, bin_, m, 16)
    if only in (None, "restrict"):
        for m in models:
            restrict_case(ck, bin_, m, work, RESTRICT_CASES.get(m, "8,16"))
    if only in (None, "check"):
        for name, extra in CHECK_RUNS.items():
            if pick and name != "controls" and name not in pick:
                continue
            check_case(ck, bin_, name, work, extra)
    if ck.not_applicable:
        print(f"not applicable (the command refuses the model's kind): {', '.join(ck.not_applicable)}")
    for f in ck.failures:
        print("FAILED " + f)
    print(f"{ck.checked} numbers checked, {len(ck.failures)} failures")
    sys.exit(1 if ck.failures else 0)


if __name__ == "__main__":
    main()
