"""import_model: any PyTorch module called as module(ids) -> logits, as an attnprop model file.

The module's own forward is recorded at several lengths (trace.py), read side by side into
exact nodes (interp.py and the ops_* handlers), cut into attnprop layers (emit.py), and the
result is confirmed: the module is run in float64 at lengths it was not traced at and compared
with a float64 evaluation of the written model (evaluate.py). Everything it cannot express is
refused at once, each operation with its module path and source line. docs/torch.md describes
the contract.
"""
import math
import random

import numpy as np
import torch

from . import emit
from . import formula as fm
from . import ir
from .evaluate import ModelEvaluator
from .exact import ExportError, number
from .interp import Interp
from .patterns import rewrite_layer_norms
from .trace import float64_forward, record

__all__ = ["import_model", "ImportRefused", "DEFAULT_TRACE_LENGTHS", "DEFAULT_CHECK_LENGTHS"]

DEFAULT_TRACE_LENGTHS = (5, 6, 8)
#: The importer holds every weight as an exact Fraction: a budget, refused beyond.
DEFAULT_MAX_WEIGHTS = 20_000_000
DEFAULT_CHECK_LENGTHS = (2, 3, 7, 11, 17, 33)
READOUTS = ("logit", "logits", "threshold")


class ImportRefused(ExportError):
    """The module cannot be imported. `refusals` lists one message per unsupported operation
    (its module path, source line, operation and reason); str() lists them all."""

    def __init__(self, what, refusals):
        self.refusals = list(refusals)
        if len(self.refusals) == 1:
            text = "%s: %s" % (what, self.refusals[0])
        else:
            text = "%s: %d unsupported operations:\n%s" % (
                what, len(self.refusals), "\n".join("  - " + r for r in self.refusals))
        super().__init__(text)


def check_alphabet(alphabet, eos):
    if isinstance(alphabet, str) or not hasattr(alphabet, "__iter__"):
        raise ExportError("alphabet: expected a list of one-character strings, got %r" %
                          (alphabet,))
    alphabet = list(alphabet)
    if not alphabet:
        raise ExportError("alphabet: must not be empty")
    seen = set()
    for s in alphabet:
        if not isinstance(s, str) or len(s) != 1 or not (0x21 <= ord(s) <= 0x7e):
            raise ExportError("alphabet: symbol %r must be exactly one printable ASCII character "
                              "other than space" % (s,))
        if s == "*":
            raise ExportError("alphabet: '*' is reserved (it marks free positions in "
                              "restrictions)")
        if s in seen:
            raise ExportError("alphabet: duplicate symbol %r" % (s,))
        seen.add(s)
    if not isinstance(eos, str) or not eos:
        raise ExportError("eos: expected a non-empty string, got %r" % (eos,))
    if eos in seen:
        raise ExportError("eos: %r is in the alphabet" % (eos,))
    return alphabet


def token_ids(text, alphabet, eos_position):
    """The LongTensor fed to the module for an input string: the symbols' indices, eos as
    len(alphabet), at the end or at the front."""
    ids = [alphabet.index(c) for c in text]
    ids = ids + [len(alphabet)] if eos_position == "last" else [len(alphabet)] + ids
    return torch.tensor(ids, dtype=torch.long)


def _trace_text(n, alphabet):
    return "".join(alphabet[(3 * i + i // 2) % len(alphabet)] for i in range(n - 1))


def _class_name(module):
    cls = type(module)
    return ("nn." + cls.__name__) if cls.__module__.startswith("torch.nn") else cls.__name__


def _located(op, message):
    if op is None:
        return message
    where = op.describe()
    return "%s: %s: %s" % (where, op.name, message) if where else "%s: %s" % (op.name, message)


def import_model(module, *, alphabet, eos, eos_position="last", readout="logit",
                 readout_symbols=None, name, description=None, trace_lengths=None,
                 check_lengths=None, check=True, max_weights=DEFAULT_MAX_WEIGHTS):
    """An attnprop model document (a dict for json.dump, numbers exact) computing what
    module(ids) computes, for ids the 1-D LongTensor of the input's symbol indices with eos
    (index len(alphabet)) last or first (eos_position). readout: "logit" (one output z, a
    softmax over alphabet[0], alphabet[1] with logits 0, z), "logits" (k outputs, a softmax
    over readout_symbols, default the alphabet) or "threshold" (one output, accept iff > 0).
    Raises ImportRefused listing every unsupported operation, or ExportError for bad arguments.
    """
    alphabet = check_alphabet(alphabet, eos)
    if eos_position not in ("last", "first"):
        raise ExportError("eos_position: expected 'last' or 'first', got %r" % (eos_position,))
    if readout not in READOUTS:
        raise ExportError("readout: expected one of %s, got %r" % (", ".join(READOUTS), readout))
    if not isinstance(name, str) or not name:
        raise ExportError("name: expected a non-empty string, got %r" % (name,))
    if readout == "logit" and len(alphabet) < 2:
        raise ExportError("readout 'logit' is a softmax over alphabet[0] and alphabet[1]; the "
                          "alphabet has one symbol")
    if readout == "logits":
        readout_symbols = list(readout_symbols) if readout_symbols is not None else list(alphabet)
        if any(not isinstance(s, str) or not s for s in readout_symbols) or \
                len(set(readout_symbols)) != len(readout_symbols) or len(readout_symbols) < 2:
            raise ExportError("readout_symbols: expected at least 2 distinct non-empty strings, "
                              "got %r" % (readout_symbols,))
    elif readout_symbols is not None:
        raise ExportError("readout_symbols: only for readout='logits'")
    if not isinstance(module, torch.nn.Module):
        raise ExportError("module: expected an nn.Module, got %s" % type(module).__name__)
    weights = sum(t.numel() for t in list(module.parameters()) + list(module.buffers()))
    if weights > max_weights:
        raise ExportError("module: %d weights, above the importer's budget of %d (every weight "
                          "is held as an exact rational); raise it with max_weights=N" %
                          (weights, max_weights))
    refusals = getattr(module, "refusals", None)
    if callable(refusals) and refusals():
        raise ImportRefused("cannot import %s" % _class_name(module), refusals())
    lengths = tuple(trace_lengths or DEFAULT_TRACE_LENGTHS)
    if len(lengths) < 3 or len(set(lengths)) != len(lengths) or min(lengths) < 2:
        raise ExportError("trace_lengths: at least three distinct lengths >= 2, got %r" %
                          (lengths,))
    what = "cannot import %s" % _class_name(module)

    traces = []
    for n in lengths:
        ids = token_ids(_trace_text(n, alphabet), alphabet, eos_position)
        try:
            traces.append(record(module, ids))
        except Exception as e:  # the user's forward failed: report it, located
            hint = getattr(module, "failure_hint", None)
            if hint is None:
                hint = (" (it is traced at n = %s, eos included; give trace_lengths= and "
                        "check_lengths= within the lengths it accepts)" %
                        ", ".join(str(x) for x in lengths))
            raise ImportRefused(what, ["the module fails at n = %d: %s: %s%s" %
                                       (n, type(e).__name__, e, hint)])
    interp = Interp(traces, len(alphabet) + 1, eos_position)
    out = interp.run()
    errors = [_located(op, m) for op, m in interp.errors]
    doc = None
    if out is not None and out.kind != "poison":  # what the output needs, even beside errors
        meta = {"name": name, "alphabet": alphabet, "eos": eos, "eos_position": eos_position,
                "source": "attnprop_torch import_model (PyTorch %s)" % torch.__version__}
        try:
            base, ro = _readout(interp, out, readout, readout_symbols, alphabet, eos_position)
            rewrite_layer_norms(base)
            meta["description"] = description if description is not None else \
                _describe(module, eos_position, readout, readout_symbols)
            doc = emit.build(interp, base, ro, meta)
        except emit.EmitError as e:
            errors += [_located(op, m) for op, m in e.errors]
        except ir.FormError as e:
            errors.append(_located(e.node.where, str(e)))
        except ReadoutError as e:
            errors.append(str(e))
    elif out is not None and out.kind == "poison" and not errors:
        errors.append("the output could not be interpreted")
    if errors:
        raise ImportRefused(what, errors)
    if check:
        confirm(module, doc, alphabet, eos_position, readout,
                check_lengths or DEFAULT_CHECK_LENGTHS, lengths, what)
    return doc


class ReadoutError(ValueError):
    pass


def _readout(I, out, readout, symbols, alphabet, eos_position):
    """(base node, function (offset, d) -> readout object) for the module's output Val."""
    if out.kind in ("pos", "const", "tok"):
        out = I.as_stream(out, None)
    if out.kind != "stream":
        raise ReadoutError("the module's output is %s, not logits computed from the input" %
                           {"scores": "attention scores", "weights": "attention weights",
                            "opaque": "attention weights"}.get(out.kind, "not a tensor"))
    pre = getattr(out, "pre_softmax", None)
    if pre is not None:
        if readout != "logits":
            raise ReadoutError("the module's output is a softmax%s; with readout=%r return the "
                               "logit itself" % (" (log_softmax)" if pre[2] else "", readout))
        out = pre[0]
    if out.sel is None:
        raise ReadoutError("the module returns a value at every position; return the logits at "
                           "the eos position (y[-1] when eos is last, y[0] when it is first)")
    want = "last" if eos_position == "last" else "first"
    if out.sel not in ("any", want):
        raise ReadoutError("the module reads position %s (torch's y[%s]) but eos_position is %r: "
                           "attnprop reads the eos position" %
                           ("0" if out.sel == "first" else "n-1",
                            "0" if out.sel == "first" else "-1", eos_position))
    elems = [int(x) for x in np.asarray(out.ph).ravel()]
    k = 1 if readout in ("logit", "threshold") else len(symbols)
    if len(elems) != k:
        raise ReadoutError("the module's output has %d numbers; readout=%r needs %d" %
                           (len(elems), readout, k))
    form = ir.canonical(ir.Form(out.node, ir.selection_rows(elems)), hints=False,
                        through_nscale=False)
    base = form.base

    def doc(offset, d):
        rows = [{c + offset: w for c, w in r.items()} for r in form.rows]
        if readout == "threshold":
            return {"kind": "threshold", "w": [number(rows[0].get(c, 0)) for c in range(d)],
                    "t": number(-form.bias[0])}
        if readout == "logit":
            W = emit._matrix([{}] + rows, d)
            return {"kind": "softmax", "symbols": [alphabet[0], alphabet[1]], "W": W,
                    "c": [0, number(form.bias[0])]}
        return {"kind": "softmax", "symbols": list(symbols), "W": emit._matrix(rows, d),
                "c": [number(b) for b in form.bias]}

    return base, doc


def _describe(module, eos_position, readout, symbols):
    ro = {"logit": "one logit z: a softmax over the first two symbols with logits (0, z)",
          "logits": "a softmax over %s" % ", ".join(symbols or []),
          "threshold": "accept iff the output is > 0"}[readout]
    return ("%s imported by attnprop_torch from its forward (eos %s%s; readout: %s)." %
            (_class_name(module), eos_position,
             " in torch, re-indexed so that attnprop's eos is last" if eos_position == "first"
             else "", ro))


# --- confirmation -----------------------------------------------------------------------------

def torch_readout(out, readout):
    """The module's output as the readout compares it: z (logit, threshold) or the logits
    centred by their mean (a softmax does not see a common shift)."""
    z = out.detach().to(torch.float64).reshape(-1).tolist()
    if readout == "logits":
        m = sum(z) / len(z)
        return [x - m for x in z]
    return z


def model_readout(logits, readout):
    logits = list(map(float, logits))
    if readout == "logit":
        return [logits[1] - logits[0]]
    if readout == "logits":
        m = sum(logits) / len(logits)
        return [x - m for x in logits]
    return logits


def table_cap(doc):
    pos = doc["positional"]
    return len(pos["rows"]) if pos["kind"] == "table" else None


def confirm(module, doc, alphabet, eos_position, readout, lengths, traced, what,
            tolerance=1e-9, samples=2, seed=20260):
    """Runs the module in float64 and the written model (float64) on random inputs at
    `lengths`; ImportRefused when they differ by more than `tolerance` (relative to 1 + |z|)."""
    ev = ModelEvaluator(doc)
    cap = table_cap(doc)
    rng = random.Random(seed)
    for n in lengths:
        if cap is not None and n > cap:
            continue
        for _ in range(samples):
            text = "".join(rng.choice(alphabet) for _ in range(n - 1))
            ids = token_ids(text, alphabet, eos_position)
            try:
                out = float64_forward(module, ids)
            except Exception as e:
                raise ImportRefused(what, ["the module fails at n = %d: %s: %s" %
                                           (n, type(e).__name__, e)])
            t = torch_readout(out, readout)
            try:
                _, logits = ev.run(text)
            except (ZeroDivisionError, ArithmeticError, ValueError):
                if all(math.isfinite(x) for x in t):
                    raise
                continue
            m = model_readout(logits, readout)
            if not all(math.isfinite(x) for x in t):
                continue
            worst = max(abs(a - b) / (1 + abs(a)) for a, b in zip(t, m))
            if not worst <= tolerance:
                raise ImportRefused(what, [
                    "the import does not reproduce the module at n = %d%s (input %r: torch "
                    "float64 %s, the imported model %s): the forward depends on n or on the "
                    "input in a way the traces at n = %s did not show" %
                    (n, "" if n in traced else ", a length it was not traced at", text,
                     _fmt(t), _fmt(m), ", ".join(str(x) for x in traced))])


def _fmt(xs):
    return "[" + ", ".join("%.10g" % x for x in xs) + "]"


__all__ += ["token_ids", "check_alphabet", "fm"]
