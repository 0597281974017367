"""Reading traces of one module at several lengths side by side (trace.py records them).

The calls of the traces must match one for one (the same torch functions, in the same order, on
tensors made by the same earlier calls): a forward whose sequence of operations depends on n is
refused. Where a Python number differs between the traces it is a function of n, found in a small
catalogue (integers a*n + b; floats c*g(n) for g in n, 1/n, log n, 1/log n, sqrt n, 1/sqrt n,
n^2, 1/n^2) and confirmed at every traced length; the axis of a tensor whose size differs between
the traces is a sequence axis. The reference trace is then interpreted call by call (ops.py)
into values.Val objects and ir.Node objects.

Every refusal is collected with the call it comes from, and interpretation goes on with a poison
value, so that one run names every unsupported operation.
"""
import importlib
import math
from fractions import Fraction

import numpy as np
import torch

from . import formula as fm
from . import ir
from .values import POISON, Val, fresh_label

__all__ = ["Interp", "Refuse", "Scalar", "Shape"]


class Refuse(Exception):
    """An operation the importer cannot express; the message says what and why. `op`, when
    given, is the call to blame (a mask refused at the softmax is located at the mask)."""

    def __init__(self, message, op=None):
        super().__init__(message)
        self.op = op


class Scalar:
    """A Python number argument: its value in the reference trace, its formula (a constant or a
    function of n), and a hint when the constant is the float nearest to an irrational number
    the code evidently means (pi, sqrt(m), 1/sqrt(m)): `pi` (a formula) or `sqrt` (r, s) for
    r*sqrt(s)."""

    def __init__(self, value, f, const, pi=None, sqrt=None):
        self.value = value
        self.f = f
        self.const = const
        self.pi = pi
        self.sqrt = sqrt

    def __repr__(self):
        return "Scalar(%r)" % (self.value,)


class Shape:
    """A result tensor's shape in the reference trace, which axes are sequence axes, and their
    lengths as formulas in n."""

    def __init__(self, sizes, seq, lens, dtype):
        self.sizes = tuple(sizes)
        self.seq = tuple(seq)
        self.lens = tuple(lens)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.sizes)


_FLOAT_CATALOGUE = [
    ("n", lambda n: n, lambda: fm.N),
    ("1/n", lambda n: 1 / n, lambda: fm.div(fm.ONE, fm.N)),
    ("log(n)", lambda n: math.log(n), lambda: fm.func("log", fm.N)),
    ("1/log(n)", lambda n: 1 / math.log(n), lambda: fm.div(fm.ONE, fm.func("log", fm.N))),
    ("sqrt(n)", lambda n: math.sqrt(n), lambda: fm.func("sqrt", fm.N)),
    ("1/sqrt(n)", lambda n: 1 / math.sqrt(n), lambda: fm.div(fm.ONE, fm.func("sqrt", fm.N))),
    ("n^2", lambda n: float(n * n), lambda: fm.power(fm.N, fm.num(2))),
    ("1/n^2", lambda n: 1 / (n * n), lambda: fm.div(fm.ONE, fm.power(fm.N, fm.num(2)))),
]


def fit_int(values, lengths):
    """a*n + b (a formula) when the integers `values` at `lengths` are that, else None."""
    (v0, n0), (v1, n1) = (values[0], lengths[0]), (values[1], lengths[1])
    a = Fraction(v1 - v0, n1 - n0)
    b = v0 - a * n0
    if all(a * n + b == v for v, n in zip(values, lengths)):
        return fm.add(fm.mul(fm.num(a), fm.N), fm.num(b))
    return None


def fit_float(values, lengths):
    """c*g(n) (a formula) for g in the catalogue when `values` are that to a few units of
    float64 rounding at every length, else None."""
    for _, g, make in _FLOAT_CATALOGUE:
        g0 = g(lengths[0])
        if g0 == 0:
            continue
        c = values[0] / g0
        if all(abs(c * g(n) - v) <= 4e-16 * abs(v) + 1e-300 for v, n in zip(values, lengths)):
            near = round(c)
            if abs(c - near) <= 4e-16 * abs(c):
                c = near
            cf = Fraction(c)
            return make() if cf == 1 else fm.mul(fm.num(cf), make())
    return None


def pi_hint(c, float32=False):
    """q*pi when the float c is the double (or float32) nearest to q*pi for a simple rational
    q (denominator at most 12, |q| <= 64), else None."""
    if c == 0 or not math.isfinite(c):
        return None
    q = Fraction(c / math.pi).limit_denominator(12)
    if q == 0 or abs(q) > 64:
        return None
    exact = float(q) * math.pi
    tol = 2.4e-7 if float32 else 4.5e-16
    if abs(exact - c) <= tol * abs(exact):
        return fm.mul(fm.num(q), fm.PI)
    return None


def sqrt_hint(c, float32=False):
    """(r, s) with r*sqrt(s) = sqrt(m) or 1/sqrt(m) when c is the float nearest to it for an
    integer 2 <= m <= 65536 that is not a square, else None."""
    if not math.isfinite(c) or c <= 0:
        return None
    tol = 2.4e-7 if float32 else 4.5e-16
    for inverse in (False, True):
        m = round(1 / (c * c)) if inverse else round(c * c)
        if m < 2 or m > 65536 or math.isqrt(m) ** 2 == m:
            continue
        exact = 1 / math.sqrt(m) if inverse else math.sqrt(m)
        if abs(exact - c) <= tol * exact:
            return (Fraction(1, m), Fraction(m)) if inverse else (Fraction(1), Fraction(m))
    return None


def _key(x):
    return "tensor" if isinstance(x, torch.Tensor) else type(x).__name__


class Interp:
    """Interprets aligned traces (trace 0 is the reference)."""

    def __init__(self, traces, symbols, eos_position):
        self.traces = traces
        self.ref = traces[0]
        self.lengths = [t.n for t in traces]
        self.symbols = symbols            # len(alphabet) + 1: ids 0 .. symbols-1
        self.eos_position = eos_position  # "last" or "first"
        self.env = {}
        self.errors = []                  # (op or None, message)
        self.tables = {}                  # table id -> numpy array (positional tables)
        self.viewed = set()
        self._leaf_cache = {}
        self._producers = [self._producer_map(t) for t in traces]

    # --- errors ---------------------------------------------------------------------------

    def error(self, op, message):
        key = (op.where if op is not None else None, message)
        if all((o.where if o is not None else None, m) != key for o, m in self.errors):
            self.errors.append((op, message))

    # --- alignment ------------------------------------------------------------------------

    @staticmethod
    def _producer_map(trace):
        prod = {id(trace.ids): ("input",)}

        def walk(x, path, j):
            if isinstance(x, torch.Tensor):
                prod[id(x)] = ("op", j, path)
            elif isinstance(x, (list, tuple)):
                for k, e in enumerate(x):
                    walk(e, path + (k,), j)

        for j, op in enumerate(trace.ops):
            if op.name == "setitem" or op.name.endswith("_") and not op.name.startswith("__"):
                continue  # in place: the tensor keeps its producer
            walk(op.result, (), j)
        return prod

    def check_alignment(self):
        """None, or a message saying where the traces take different paths."""
        ref = self.ref
        for t, tr in enumerate(self.traces[1:], 1):
            for j in range(min(len(ref.ops), len(tr.ops))):
                a, b = ref.ops[j], tr.ops[j]
                if a.name != b.name:
                    return ("the forward runs different operations at n = %d and n = %d "
                            "(operation %d: %s at %s, and %s at %s): control flow that depends "
                            "on the length is not supported" %
                            (ref.n, tr.n, j + 1, a.name, a.where, b.name, b.where))
            if len(ref.ops) != len(tr.ops):
                return ("the forward runs %d torch operations at n = %d and %d at n = %d: control "
                        "flow that depends on the length is not supported" %
                        (len(ref.ops), ref.n, len(tr.ops), tr.n))
        return None

    # --- arguments ------------------------------------------------------------------------

    def resolve(self, objs, op):
        """The interpreted value of one argument given its objects in every trace."""
        o = objs[0]
        if isinstance(o, torch.Tensor):
            keys = [p.get(id(x), ("ext", id(x))) for p, x in zip(self._producers, objs)]
            if any(k != keys[0] for k in keys[1:]):
                if keys[0][0] == "ext" and all(k[0] == "ext" for k in keys):
                    if not all(x.shape == o.shape and torch.equal(x, o) for x in objs[1:]):
                        raise Refuse("a tensor made outside torch's operations (from Python "
                                     "data or numpy) differs between lengths: its values depend "
                                     "on n and have no formula")
                else:
                    raise Refuse("the forward uses different tensors at different lengths")
            v = self.env.get(id(o))
            if v is None:
                v = self.external(o)
            return v
        if isinstance(o, bool) or o is None or isinstance(o, (str, torch.dtype, torch.device,
                                                              type(Ellipsis))):
            if any(x != o for x in objs[1:]):
                raise Refuse("an argument (%r) differs between lengths" % (o,))
            return o
        if isinstance(o, (int, float, np.integer, np.floating)):
            return self.scalar([x.item() if hasattr(x, "item") else x for x in objs])
        if isinstance(o, slice):
            parts = [[getattr(x, f) for x in objs] for f in ("start", "stop", "step")]
            return slice(*[self.resolve(p, op) for p in parts])
        if isinstance(o, (list, tuple)):
            if any(not isinstance(x, (list, tuple)) or len(x) != len(o) for x in objs[1:]):
                raise Refuse("an argument's length differs between lengths of the input: %s" %
                             _short(o))
            out = [self.resolve([x[k] for x in objs], op) for k in range(len(o))]
            return tuple(out) if isinstance(o, tuple) else out
        if isinstance(o, dict):
            return {k: self.resolve([x[k] for x in objs], op) for k in o}
        return o

    def scalar(self, values):
        v0 = values[0]
        if all(v == v0 for v in values[1:]):
            if isinstance(v0, (int, np.integer)):
                return Scalar(int(v0), fm.num(int(v0)), True)
            v0 = float(v0)
            if math.isnan(v0):
                return Scalar(v0, None, True)
            if math.isinf(v0):
                return Scalar(v0, fm.NEG_INF if v0 < 0 else None, True)
            return Scalar(v0, fm.num(Fraction(v0)), True, pi=pi_hint(v0), sqrt=sqrt_hint(v0))
        if all(isinstance(v, (int, np.integer)) for v in values):
            f = fit_int([int(v) for v in values], self.lengths)
        else:
            f = fit_float([float(v) for v in values], self.lengths)
        if f is None:
            raise Refuse("a number computed from the length has no formula (%s at n = %s)" %
                         (", ".join("%r" % v for v in values),
                          ", ".join(str(n) for n in self.lengths)))
        return Scalar(v0, f, False)

    def external(self, t):
        """A tensor no recorded call made: a parameter, buffer or constant of the module."""
        if t.is_complex():
            raise Refuse("complex tensors are not supported")
        if torch.is_floating_point(t):
            arr = t.detach().cpu().to(torch.float64).numpy()
            if not np.all(np.isfinite(arr)):
                if np.any(np.isnan(arr)) or np.any(arr == np.inf):
                    raise Refuse("%s has an entry that is not finite" %
                                 self.ref.names.get(id(t), "a constant tensor"))
                # -inf entries (masks): constant formulas, where -inf is a value
                ph = np.empty(arr.shape, dtype=object)
                for idx in np.ndindex(*arr.shape):
                    ph[idx] = fm.NEG_INF if arr[idx] == -np.inf else fm.num(Fraction(arr[idx]))
                v = Val("pos", ph, dtype="float")
                self.env[id(t)] = v
                return v
            dtype = "float"
        else:
            arr = t.detach().cpu().numpy()
            dtype = "bool" if t.dtype == torch.bool else "int"
        v = Val("const", np.array(arr), dtype=dtype, name=self.ref.names.get(id(t)),
                f32=t.dtype != torch.float64)
        self.env[id(t)] = v
        return v

    # --- shapes ---------------------------------------------------------------------------

    def shapes(self, results):
        """Shape (or a tuple of them) of a result across the traces; None for non-tensors."""
        r = results[0]
        if isinstance(r, torch.Tensor):
            sizes = [tuple(x.shape) for x in results]
            if any(len(s) != len(sizes[0]) for s in sizes):
                raise Refuse("the number of dimensions of a result depends on n")
            seq, lens = [], []
            for a in range(len(sizes[0])):
                vals = [s[a] for s in sizes]
                if all(v == vals[0] for v in vals):
                    seq.append(False)
                    lens.append(None)
                else:
                    f = fit_int(vals, self.lengths)
                    if f is None:
                        raise Refuse("an axis has sizes %s at n = %s, not a function a*n + b" %
                                     (vals, self.lengths))
                    seq.append(True)
                    lens.append(f)
            dtype = "bool" if r.dtype == torch.bool else (
                "float" if torch.is_floating_point(r) else "int")
            return Shape(sizes[0], seq, lens, dtype)
        if isinstance(r, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in r):
            return tuple(self.shapes([x[k] for x in results]) for k in range(len(r)))
        return None

    # --- leaves ---------------------------------------------------------------------------

    def tok_leaf(self, per_symbol, shape_ph, seq, where):
        """A stream over a new "tok" node: per_symbol[s] is the flat list of exact values of
        the elements for symbol s."""
        key = ("tok", tuple(tuple(r) for r in per_symbol))
        node = self._leaf_cache.get(key)
        if node is None:
            node = ir.Node("tok", [], len(per_symbol[0]), where,
                           rows=[[Fraction(x) for x in r] for r in per_symbol])
            self._leaf_cache[key] = node
        ph = np.arange(node.dim, dtype=np.int64).reshape(shape_ph)
        return Val("stream", ph, seq, node=node, sel=None if any(s is not None for s in seq)
                   else "any")

    def pos_leaf(self, val, where):
        """A stream over a "pos" node holding the formulas of the pos (or const) Val `val`,
        whose only sequence axis (if any) is the stream's positions."""
        if val.kind == "const":
            ph = np.empty(val.ph.shape, dtype=object)
            for idx in np.ndindex(*val.ph.shape):
                ph[idx] = fm.num(Fraction(float(val.ph[idx])) if val.dtype == "float"
                                 else int(val.ph[idx]))
            val = Val("pos", ph, val.seq, val.dtype)
        axes = val.seq_axes()
        if len(axes) > 1:
            raise Refuse("a tensor with two sequence axes (n x n) is used as a positional "
                         "feature")
        mapping = {val.seq[axes[0]]: fm.var("p")} if axes else {}
        elems = [fm.subst(f, mapping) for f in val.ph.ravel()]
        for f in elems:
            if fm.has_neg_inf(f):
                raise Refuse("-inf in a positional feature")
        seq = list(val.seq)
        if axes:
            seq[axes[0]] = fresh_label()
        key = ("pos", tuple(f.key() for f in elems))
        node = self._leaf_cache.get(key)
        if node is None:
            node = self._pos_node(elems, where)
            self._leaf_cache[key] = node
        ph = np.arange(len(elems), dtype=np.int64).reshape(val.ph.shape)
        return Val("stream", ph, seq, node=node, sel=None if axes else "any")

    def _pos_node(self, elems, where):
        if self.eos_position == "first" and any(fm.uses_table(f) for f in elems):
            return self._eos_first_table(elems, where)
        return ir.Node("pos", [], len(elems), where, elems=elems, pad_row=False,
                       mapping=self.eos_position)

    def _eos_first_table(self, elems, where):
        """Positional tables with eos first. attnprop gives table row i-1 to position i and puts
        eos last; torch gave row 0 to eos (position 0) and row i to x_i. So the positional node
        reads rows shifted by one, and at the eos position (told by the token) the row-0 values
        replace it: p' = p - e*p + e*p0, with e = [token is eos] and p0 = row 0 for eos, 0 for
        the other tokens (both token features, exact)."""
        shifted = [fm.subst(f, {"p": fm.add(fm.var("p"), fm.ONE)}) for f in elems]
        pnode = ir.Node("pos", [], len(elems), where, elems=shifted, pad_row=True, mapping="last")
        eos = self.symbols - 1
        first = [fm.evaluate(f, {"p": 0, "n": 0}, self.tables, exact=True)
                 if not (fm.variables(f) - {"p"}) else None for f in elems]
        if any(v is None for v in first):
            raise Refuse("a positional table combined with a formula in n, with eos first")
        e_rows = [[Fraction(1 if s == eos else 0)] * len(elems) for s in range(self.symbols)]
        p0_rows = [[v if s == eos else Fraction(0) for v in first] for s in range(self.symbols)]
        e = ir.Node("tok", [], len(elems), where, rows=e_rows)
        p0 = ir.Node("tok", [], len(elems), where, rows=p0_rows)
        ep = ir.Node("mul", [e, pnode], len(elems), where)
        diff = ir.Node("sub", [pnode, ep], len(elems), where)
        return ir.Node("add", [diff, p0], len(elems), where)

    def as_stream(self, v, where):
        """A stream Val for a stream, pos, const or float tok operand."""
        if v.kind == "stream":
            return v
        if v.kind in ("pos", "const"):
            return self.pos_leaf(v, where)
        if v.kind == "tok":
            per = [[el[s] for el in v.ph.ravel()] for s in range(self.symbols)]
            return self.tok_leaf(per, v.ph.shape, v.seq, where)
        raise Refuse("a %s value cannot be used here" % v.kind)

    # --- running --------------------------------------------------------------------------

    def run(self):
        from .ops import dispatch
        importlib.import_module(".ops_nn", __package__)  # registers the remaining handlers
        msg = self.check_alignment()
        if msg:
            self.error(None, msg)
            return POISON
        ids_label = fresh_label()
        ids_ph = np.empty((1,), dtype=object)
        ids_ph[0] = tuple(range(self.symbols))
        self.env[id(self.ref.ids)] = Val("tok", ids_ph, (ids_label,), "int")
        for j, op in enumerate(self.ref.ops):
            ops = [t.ops[j] for t in self.traces]
            try:
                args = self.resolve([o.args for o in ops], op)
                kwargs = self.resolve([o.kwargs for o in ops], op)
                out = self.shapes([o.result for o in ops])
            except Refuse as e:
                msg = str(e)
                if op.name in _FROM_DATA:
                    msg = ("a tensor built from Python data has a length or values that depend "
                           "on n, with no formula: compute positions from torch.arange(n) (they "
                           "become formulas in i and n) or index a fixed table (a buffer) with "
                           "it, which stays a table")
                self.error(op, msg)
                self._bind(op.result, None, poison=True)
                continue
            if _poisoned(args) or _poisoned(kwargs):
                self._bind(op.result, None, poison=True)
                continue
            try:
                res = dispatch(self, op, args, kwargs, out)
            except Refuse as e:
                self.error(e.op or op, str(e))
                res = None
                self._bind(op.result, None, poison=True)
                if op.name == "setitem" or (op.name.endswith("_") and not op.name.startswith("__")):
                    self.env[id(op.args[0])] = POISON
                continue
            except ir.FormError as e:
                self.error(op, str(e))
                self._bind(op.result, None, poison=True)
                continue
            self._bind(op.result, res)
            self._note_views(op)
        try:
            return self.resolve([t.output for t in self.traces], None)
        except Refuse as e:
            self.error(None, "the output: %s" % e)
            return POISON

    def _bind(self, result, val, poison=False):
        if isinstance(result, torch.Tensor):
            if poison or val is None:
                self.env[id(result)] = POISON
            else:
                self.env[id(result)] = val
        elif isinstance(result, (list, tuple)):
            for k, r in enumerate(result):
                sub = None if poison or val is None else val[k]
                self._bind(r, sub, poison or val is None)

    def _note_views(self, op):
        def mark(r):
            if isinstance(r, torch.Tensor) and r._base is not None:
                self.viewed.add(id(r._base))
            elif isinstance(r, (list, tuple)):
                for x in r:
                    mark(x)
        mark(op.result)


_FROM_DATA = {"tensor", "as_tensor", "asarray", "from_numpy", "new_tensor"}


def _poisoned(x):
    if isinstance(x, Val):
        return x.kind == "poison"
    if isinstance(x, (list, tuple)):
        return any(_poisoned(e) for e in x)
    if isinstance(x, dict):
        return any(_poisoned(e) for e in x.values())
    if isinstance(x, slice):
        return any(_poisoned(e) for e in (x.start, x.stop, x.step))
    return False


def _short(o):
    s = repr(o)
    return s if len(s) < 60 else s[:57] + "..."
