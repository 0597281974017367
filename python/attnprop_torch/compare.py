"""Cross-check of an export: the torch modules (float64, and their own dtype) against attnprop's
rigorous evaluation of the exported file (`attnprop eval --scalar ball`), readout by readout.

The readout compared is what the model outputs at the eos position: the probabilities of a
softmax readout, or the value w . y_n + b of a threshold readout (accept iff > 0). attnprop's
ball contains the exact value of the exported model, which is the exact value of the torch
model (every weight is written exactly); its radius is reported beside the differences.
"""
import json
import os
import random
import shutil
import subprocess
from decimal import Decimal
from fractions import Fraction

import torch

from .modelfile import normalise
from .reference import TorchModel, native_dtype


class AttnpropError(RuntimeError):
    """attnprop could not be run, or refused the model or input (its message is included)."""


def find_attnprop(explicit=None):
    """The attnprop binary: `explicit`, $ATTNPROP, the build of this checkout
    (build/bin/attnprop), the installation this package belongs to (PREFIX/bin/attnprop), or
    attnprop on PATH."""
    if explicit:
        return explicit
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
    return Fraction(Decimal(text))


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


def attnprop_eval(binary, model_path, text, doc, precision=256, scalar="ball"):
    """Runs `attnprop eval --json` on one input and returns the ExactReadout of the readout of
    `doc` (the exported document, for a threshold readout's w and t)."""
    cmd = [binary, "eval", "--model", model_path, "--input=" + text, "--scalar", scalar,
           "--precision", str(precision), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 4):
        raise AttnpropError("%s exited with %d: %s" % (" ".join(cmd[:3]), proc.returncode,
                                                        (proc.stderr or proc.stdout).strip()))
    out = json.loads(proc.stdout)
    if out.get("undefined"):
        return ExactReadout(undefined=out["undefined"]["message"])
    ro = doc["readout"]
    if ro["kind"] == "softmax":
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


def compare(kwargs, doc, model_path, inputs, binary, precision=256):
    """Compares torch (float64 and the native dtype) with attnprop on every input string."""
    f64 = TorchModel(kwargs, torch.float64)
    dtype = native_dtype(kwargs)
    nat = TorchModel(kwargs, dtype) if dtype != torch.float64 else None
    rows = []
    for text in inputs:
        row = Row(text, len(text) + 1)
        row.exact = attnprop_eval(binary, model_path, text, doc, precision)
        row.float64 = f64.run(text)
        if nat is not None:
            row.native = nat.run(text)
        if row.exact.undefined is None:
            row.diff64 = relative_difference(row.float64, row.exact.values)
            if nat is not None:
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
