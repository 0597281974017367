"""Cross-check of an import: the original module itself (its own forward, in float64 and in its
own dtype) against attnprop's rigorous evaluation of the written model (`attnprop eval --scalar
ball`), input by input.

The readout compared is what the model outputs at the eos position: the logit z of a one-logit
readout ("logit"), the probabilities of a k-logit softmax readout ("logits"), or the value of a
threshold readout. attnprop's ball contains the exact value of the written model, which is the
exact value of the module's computation with its weights as the exact numbers they are; its
radius is reported beside the differences. The float64 run is the module's own forward with
every floating-point value (parameters, tensors it keeps, positions it computes in float32)
carried in float64 (trace.float64_forward); the native run is the module as it is.

attnprop is reached in one place, `attnprop_value`: through its Python module `attnprop` when it
is importable (exact midpoints and radii, no process per input), else by running the attnprop
binary (`eval --json`); the enclosures are the same whichever way they are reached.
"""
import json
import math
import os
import random
import shutil
import subprocess
from decimal import Decimal
from fractions import Fraction

import torch

from .importer import token_ids
from .modelfile import normalise
from .trace import float64_forward


class AttnpropError(RuntimeError):
    """attnprop could not be run, or refused the model or input (its message is included)."""


def attnprop_module():
    """The Python module attnprop, or None when it is not importable (not built, or not on
    PYTHONPATH: docs/python.md)."""
    try:
        import attnprop
    except ImportError:
        return None
    return attnprop


def find_attnprop(explicit=None):
    """How attnprop is reached: `explicit` (a binary), else the folder of the Python module
    attnprop when it is importable, else the binary: $ATTNPROP, the build of this checkout
    (build/bin/attnprop), the installation this package belongs to (PREFIX/bin/attnprop), or
    attnprop on PATH. attnprop_value takes either."""
    if explicit:
        return explicit
    mod = attnprop_module()
    if mod is not None:
        return os.path.dirname(os.path.abspath(mod.__file__))
    if os.environ.get("ATTNPROP"):
        return os.environ["ATTNPROP"]
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.path.join(here, "..", "..", "build", "bin", "attnprop"),               # python/attnprop_torch
        os.path.join(here, "..", "..", "..", "..", "bin", "attnprop"),            # share/attnprop/python/attnprop_torch
    ]
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.normpath(c)
    found = shutil.which("attnprop")
    if found:
        return found
    raise AttnpropError("cannot find the attnprop binary: give --attnprop PATH or set ATTNPROP")


def _fraction(text):
    """A decimal ("0.25", "1.5e-3") or an exact rational ("1/4"), exactly."""
    return Fraction(text) if "/" in text else Fraction(Decimal(text))


def _decimal(q, digits=25):
    """q with `digits` significant digits, as text."""
    from decimal import localcontext
    with localcontext() as ctx:
        ctx.prec = digits
        return str(Decimal(q.numerator) / Decimal(q.denominator))


class ExactReadout:
    """attnprop's enclosure of one readout: midpoints and radii as Fractions, or the located
    message when the value is undefined."""

    def __init__(self, values=None, radii=None, undefined=None):
        self.values = values or []
        self.radii = radii or []
        self.undefined = undefined


_loaded = {}


def _module_value(mod, model_path, text, precision, scalar):
    """What `eval --json` prints, from the module: midpoints and radii as exact rationals."""
    key = (model_path, os.path.getmtime(model_path))
    try:
        if key not in _loaded:
            _loaded.clear()
            _loaded[key] = mod.load(model_path)
        r = _loaded[key].eval(text, scalar=scalar, precision=precision)
    except mod.Error as e:
        raise AttnpropError("attnprop refused %s on %r: %s" % (model_path, text, e))
    if r.undefined:
        return {"undefined": {"message": r.undefined}}

    def parts(values):
        mids, rads = [], []
        for v in values:
            if isinstance(v, mod.Interval):
                mids.append(str(v.mid))
                rads.append(str(v.rad))
            else:
                mids.append(str(Fraction(v)))
                rads.append("0")
        return mids, rads

    out = {}
    out["y"], out["y_radius"] = parts(r.y)
    if r.output_symbols:
        for name, values in (("logits", r.logits), ("probabilities", r.probabilities)):
            mids, rads = parts(values)
            out[name] = dict(zip(r.output_symbols, mids))
            out[name + "_radius"] = dict(zip(r.output_symbols, rads))
    return out


def attnprop_value(binary, model_path, text, precision=256, scalar="ball"):
    """The parsed JSON of `attnprop eval --json` on one input (exit 0 or 4, undefined), or its
    equivalent from the Python module when `binary` is the module's folder (find_attnprop)."""
    if os.path.isdir(binary):
        mod = attnprop_module()
        if mod is None:
            raise AttnpropError("the Python module attnprop is not importable from %s" % binary)
        return _module_value(mod, model_path, text, precision, scalar)
    cmd = [binary, "eval", "--model", model_path, "--input=" + text, "--scalar", scalar,
           "--precision", str(precision), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 4):
        raise AttnpropError("%s exited with %d: %s" % (" ".join(cmd[:3]), proc.returncode,
                                                        (proc.stderr or proc.stdout).strip()))
    return json.loads(proc.stdout)


def readout_kind(doc):
    """"logit", "logits" or "threshold" for a model document: a two-symbol softmax whose first
    row and bias are zero is a one-logit readout."""
    ro = normalise({"readout": doc["readout"]})["readout"]
    if ro["kind"] == "threshold":
        return "threshold"
    if ro["kind"] == "softmax" and len(ro["symbols"]) == 2 and all(w == 0 for w in ro["W"][0]) \
            and (not ro.get("c") or ro["c"][0] == 0):
        return "logit"
    return "logits"


def attnprop_eval(binary, model_path, text, doc, precision=256, scalar="ball"):
    """attnprop's ExactReadout of the readout of `doc` on one input."""
    out = attnprop_value(binary, model_path, text, precision, scalar)
    if out.get("undefined"):
        return ExactReadout(undefined=out["undefined"]["message"])
    ro = doc["readout"]
    kind = readout_kind(doc)
    if kind == "logit":
        s = ro["symbols"][1]
        return ExactReadout([_fraction(out["logits"][s])],
                            [_fraction(out.get("logits_radius", {}).get(s, "0"))])
    if kind == "logits":
        probs = out["probabilities"]
        rad = out.get("probabilities_radius", {})
        return ExactReadout([_fraction(probs[s]) for s in ro["symbols"]],
                            [_fraction(rad.get(s, "0")) for s in ro["symbols"]])
    n = normalise({"readout": ro})["readout"]
    y = [_fraction(v) for v in out["y"]]
    ry = [_fraction(v) for v in out.get("y_radius", ["0"] * len(y))]
    value = sum(w * v for w, v in zip(n["w"], y)) - n["t"]
    radius = sum(abs(w) * r for w, r in zip(n["w"], ry))
    return ExactReadout([value], [radius])


def relative_difference(approx, exact):
    """max_i |approx_i - exact_i| / |exact_i| as a float (the absolute difference where
    exact_i = 0; inf when approx_i is not finite)."""
    worst = 0.0
    for a, e in zip(approx, exact):
        if a != a or a in (float("inf"), float("-inf")):
            return float("inf")
        diff = abs(Fraction(a) - e)
        worst = max(worst, float(diff / abs(e)) if e != 0 else float(diff))
    return worst


class Original:
    """The module an import came from, run on input strings as the model's readout sees it."""

    def __init__(self, module, alphabet, eos_position, kind):
        self.module = module
        self.alphabet = list(alphabet)
        self.eos_position = eos_position
        self.kind = kind

    def _readout(self, out):
        z = out.detach().to(torch.float64).reshape(-1)
        if self.kind == "logits":
            return [float(p) for p in torch.softmax(z, dim=0)]
        return [float(z[0])]

    def run64(self, text):
        return self._readout(float64_forward(self.module, token_ids(text, self.alphabet,
                                                                     self.eos_position)))

    def run_native(self, text):
        flags = {m: m.training for m in self.module.modules()}
        self.module.eval()
        try:
            out = self.module(token_ids(text, self.alphabet, self.eos_position))
        finally:
            for m, t in flags.items():
                m.training = t
        z = out.detach().reshape(-1)
        if self.kind == "logits":
            return [float(p) for p in torch.softmax(z, dim=0)]
        return [float(z[0])]


def native_dtype(module):
    """The dtype of the module's floating-point parameters (float32 when it has none)."""
    for p in list(module.parameters()) + list(module.buffers()):
        if torch.is_floating_point(p):
            return p.dtype
    return torch.float32


class Row:
    """One input's comparison."""

    def __init__(self, text, n):
        self.text = text
        self.n = n
        self.exact = None          # ExactReadout
        self.float64 = None        # torch values
        self.native = None         # torch values in the module's own dtype (when not float64)
        self.diff64 = None
        self.diff_native = None
        self.radius = None         # largest radius relative to the value

    def as_json(self):
        return {"input": self.text, "n": self.n,
                "undefined": self.exact.undefined if self.exact else None,
                "exact": [_decimal(v) for v in self.exact.values] if self.exact else None,
                "float64": self.float64, "native": self.native,
                "rel_diff_float64": self.diff64, "rel_diff_native": self.diff_native,
                "rel_radius": self.radius}


def compare(original, doc, model_path, inputs, binary, precision=256):
    """Compares the original module (float64 and its native dtype) with attnprop on every input
    string; returns (rows, native dtype)."""
    dtype = native_dtype(original.module)
    rows = []
    for text in inputs:
        row = Row(text, len(text) + 1)
        row.exact = attnprop_eval(binary, model_path, text, doc, precision)
        row.float64 = original.run64(text)
        if dtype != torch.float64:
            row.native = original.run_native(text)
        if row.exact.undefined is None:
            row.diff64 = relative_difference(row.float64, row.exact.values)
            if row.native is not None:
                row.diff_native = relative_difference(row.native, row.exact.values)
            row.radius = max((float(r / abs(v)) if v != 0 else float(r)
                              for r, v in zip(row.exact.radii, row.exact.values)), default=0.0)
        rows.append(row)
    return rows, dtype


def random_inputs(alphabet, lengths, samples, seed):
    """`samples` random strings over the alphabet for each n in `lengths` (length n - 1)."""
    rng = random.Random(seed)
    out = []
    for n in lengths:
        for _ in range(samples):
            out.append("".join(rng.choice(alphabet) for _ in range(n - 1)))
    return out


__all__ = ["AttnpropError", "attnprop_module", "find_attnprop", "attnprop_value", "attnprop_eval", "compare",
           "Original", "Row", "random_inputs", "relative_difference", "readout_kind", "math"]
