"""Handlers for arithmetic, linear algebra, normalisation, embeddings and attention.

Values computed from the input (streams) become ir.Node objects with exact matrices; values of
the positions stay formulas until they meet a stream (then they are positional features, "pos"
nodes); constants are computed exactly (Fractions). Attention is recognised as a product of two
streams over their feature axis (the scores, with the sequence axis of the first as queries and
of the second as keys), scaled by constants (or a formula in n), softmax over the keys, and a
product with a third stream over the keys: each index of the other axes (batch, heads) is one
attnprop head. nn.MultiheadAttention arrives as one call, multi_head_attention_forward.
"""
from fractions import Fraction

import numpy as np

from . import formula as fm
from . import ir
from . import values as vl
from .interp import Refuse, Scalar
from .ops import HANDLERS, arg, handler, to_pos, convert
from .values import Val, fresh_label

_MAX_CONST = 1 << 20


def _frac(x):
    return x if isinstance(x, Fraction) else (Fraction(float(x)) if isinstance(x, (float, np.floating))
                                              else Fraction(int(x)))


def _frac_array(v):
    """The elements of a const Val as an object array of Fractions."""
    if v.ph.size > _MAX_CONST:
        raise Refuse("a constant of %d entries computed inside forward (at most %d are computed "
                     "exactly)" % (v.ph.size, _MAX_CONST))
    out = np.empty(v.ph.shape, dtype=object)
    for idx in np.ndindex(*v.ph.shape):
        out[idx] = _frac(v.ph[idx])
    return out


def _const_from_fracs(arr, dtype="float"):
    if dtype == "float" and all(Fraction(float(q)) == q for q in arr.ravel()):
        return Val("const", arr.astype(np.float64), dtype="float")
    return Val("const", arr, dtype=dtype)


# --- streams: gathers and new nodes -------------------------------------------------------------

def gathered(I, v, ph, where):
    """(node, ph) with ph's elements numbering the new node's coordinates in order: the stream's
    node itself when ph already is 0 .. dim-1 in order, else a selection node."""
    flat = np.asarray(ph).ravel()
    if flat.size == v.node.dim and np.array_equal(flat, np.arange(v.node.dim)):
        return v.node
    key = ("gather", v.node.id, tuple(int(x) for x in flat))
    node = I._leaf_cache.get(key)
    if node is None:
        node = ir.Node("linear", [v.node], flat.size, where, rows=ir.selection_rows(flat),
                       bias=None)
        I._leaf_cache[key] = node
    return node


def stream_val(node, shape, seq, sel):
    ph = np.arange(node.dim, dtype=np.int64).reshape(shape)
    return Val("stream", ph, seq, node=node, sel=sel)


def _sel_of(vals):
    seqs = [v for v in vals if v.kind == "stream" and v.sel is None]
    sels = {v.sel for v in vals if v.kind == "stream" and v.sel not in (None, "any")}
    if len(sels) > 1 or (sels and seqs):
        raise Refuse("combining the eos position's value with another position's")
    if seqs:
        return None
    return sels.pop() if sels else "any"


def _align_streams(I, vals, out, where):
    """Broadcast streams: ([node per operand], placeholder shape, seq, sel)."""
    sel = _sel_of(vals)
    try:
        phs, labels = vl.align(vals, out.sizes, out.seq)
    except vl.ShapeError as e:
        raise Refuse(str(e))
    nodes = [gathered(I, v, ph, where) for v, ph in zip(vals, phs)]
    return nodes, phs[0].shape, labels, sel


def streams_concat(I, op, streams, dim, out):
    sel = _sel_of(streams)
    nodes = []
    for s in streams:
        if all(s.node is not n for n in nodes):
            nodes.append(s.node)
    offset, node = {}, nodes[0]
    if len(nodes) > 1:
        node = ir.Node("concat", nodes, sum(n.dim for n in nodes), op)
        k = 0
        for n in nodes:
            offset[n.id] = k
            k += n.dim
    phs = [s.ph + offset.get(s.node.id, 0) for s in streams]
    ph = np.concatenate(phs, axis=dim)
    seq = [fresh_label() if s else None for s in out.seq]
    return Val("stream", ph, seq, node=node, sel=sel)


def _scalar_like(x):
    """A Scalar for a Scalar, a one-element float const (constants in ONNX files) or a
    one-element positional value without positions (a number computed from n, or an irrational
    constant such as 2^-0.5)."""
    if isinstance(x, Scalar):
        return x
    if isinstance(x, Val) and x.kind == "pos" and x.ph.size == 1 and not x.seq_axes():
        f = x.ph.reshape(-1)[0]
        if f.kind == "num":
            return Scalar(float(f.value), f, True)
        if f.kind == "ninf":
            return Scalar(float("-inf"), f, True)
        if "n" in fm.variables(f):
            if fm.variables(f) - {"n"}:
                return None
            return Scalar(None, f, False)
        if fm.variables(f):
            return None
        try:
            value = fm.evaluate(f, {})
        except (ArithmeticError, ValueError):
            return None
        hint = None
        if f.kind == "pow" and f.args[0].kind == "num" and f.args[1].kind == "num" and \
                abs(f.args[1].value) == Fraction(1, 2) and f.args[0].value > 0:
            base = f.args[0].value
            hint = (Fraction(1), base) if f.args[1].value > 0 else (1 / base, base)
        return Scalar(value, f, True, pi=f if f == fm.PI or fm._pi_multiple(f) is not None
                      else None, sqrt=hint)
    if isinstance(x, Val) and x.kind == "const" and x.ph.size == 1 and x.ph.ndim <= 1:
        from .interp import pi_hint, sqrt_hint
        v = x.ph.reshape(-1)[0]
        if isinstance(v, Fraction):
            return Scalar(float(v), fm.num(v), True)
        v = float(v)
        f32 = getattr(x, "f32", False)
        return Scalar(v, fm.num(Fraction(v)), True, pi=pi_hint(v, f32), sqrt=sqrt_hint(v, f32))
    return None


def _const_elems(c, vals, out):
    """A const operand's Fractions broadcast like the aligned operands."""
    arr = _frac_array(c)
    lead = len(out.sizes) - arr.ndim
    arr = arr.reshape((1,) * lead + arr.shape)
    shape = vl.placeholder(out.sizes, out.seq)
    return np.broadcast_to(arr, shape)


# --- elementwise ------------------------------------------------------------------------------

_SWAPPED = {"__radd__": "add", "__rsub__": "sub", "rsub": "sub", "__rmul__": "mul",
            "__rtruediv__": "div", "__rdiv__": "div", "__rpow__": "pow", "__rmod__": "mod",
            "__rfloordiv__": "floordiv"}
_CANON = {"add": "add", "__add__": "add", "add_": "add", "__iadd__": "add",
          "sub": "sub", "__sub__": "sub", "sub_": "sub", "__isub__": "sub", "subtract": "sub",
          "mul": "mul", "__mul__": "mul", "mul_": "mul", "__imul__": "mul", "multiply": "mul",
          "div": "div", "__truediv__": "div", "div_": "div", "__itruediv__": "div",
          "true_divide": "div", "divide": "div",
          "pow": "pow", "__pow__": "pow", "pow_": "pow", "float_power": "pow",
          "eq": "==", "__eq__": "==", "ne": "!=", "__ne__": "!=", "lt": "<", "__lt__": "<",
          "le": "<=", "__le__": "<=", "gt": ">", "__gt__": ">", "ge": ">=", "__ge__": ">=",
          "less": "<", "greater": ">", "less_equal": "<=", "greater_equal": ">=",
          "not_equal": "!=",
          "logical_and": "and", "__and__": "and", "bitwise_and": "and",
          "logical_or": "or", "__or__": "or", "bitwise_or": "or",
          "maximum": "max", "minimum": "min", "fmax": "max", "fmin": "min",
          "remainder": "mod", "__mod__": "mod", "floor_divide": "floordiv",
          "__floordiv__": "floordiv"}


@handler(*(list(_CANON) + list(_SWAPPED)))
def h_binary(I, op, args, kwargs, out):
    name = op.name
    a = args[0]
    b = arg(args, kwargs, 1, "other", kwargs.get("exponent"))
    if name in _SWAPPED:
        a, b = b, a
        kind = _SWAPPED[name]
    else:
        kind = _CANON[name]
    mode = kwargs.get("rounding_mode")
    if kind == "div" and mode is not None:
        if any(isinstance(x, Val) and x.kind not in ("const", "pos", "tok") for x in (a, b)):
            raise Refuse("division with rounding_mode=%r of a value computed from the input" %
                         mode)
        kind = {"floor": "floordiv", "trunc": "truncdiv"}.get(mode)
        if kind is None:
            raise Refuse("division with rounding_mode=%r" % mode)
    alpha = kwargs.get("alpha")
    if alpha is not None and not (isinstance(alpha, Scalar) and alpha.const and alpha.value == 1):
        raise Refuse("%s(alpha=...) is not supported" % name)
    res = binary(I, op, kind, a, b, out)
    if name.endswith("_") and not name.startswith("__") or name.startswith("__i"):
        if op.args[0]._base is not None or id(op.args[0]) in I.viewed:
            raise Refuse("an in-place operation on a tensor that shares memory with another")
        I.env[id(op.args[0])] = res
    return res


def binary(I, op, kind, a, b, out):
    vals = [x for x in (a, b) if isinstance(x, Val)]
    kinds = {v.kind for v in vals}
    if kinds & {"scores", "weights"}:
        return scores_binary(I, op, kind, a, b, out)
    if kinds & {"opaque"}:
        raise Refuse("the attention weights nn.MultiheadAttention returns are used")
    if "stream" in kinds:
        return stream_binary(I, op, kind, a, b, out)
    if "tok" in kinds:
        if "pos" in kinds or out.dtype == "float" and kind not in ("==", "!=", "<", "<=", ">",
                                                                   ">=", "and", "or"):
            return stream_binary(I, op, kind, *[I.as_stream(x, op) if isinstance(x, Val) else x
                                                for x in (a, b)], out)
        return tok_binary(I, op, kind, a, b, out)
    if "pos" in kinds or any(isinstance(x, Scalar) and not x.const for x in (a, b)):
        return pos_binary(I, op, kind, a, b, out)
    return const_binary(I, op, kind, a, b, out)


def _formula_of(x, pi=True):
    if isinstance(x, Scalar):
        if x.f is None:
            raise Refuse("a number that is not finite (%r)" % x.value)
        return x.pi if pi and x.pi is not None else x.f
    if isinstance(x, bool):
        return fm.ONE if x else fm.ZERO
    raise Refuse("an operand that is not a number")


def _fop(kind, p, q):
    if kind == "add":
        return fm.add(p, q)
    if kind == "sub":
        return fm.sub(p, q)
    if kind == "mul":
        if p.kind == "ninf" or q.kind == "ninf":
            raise Refuse("-inf times a number")
        return fm.mul(p, q)
    if kind == "div":
        return fm.div(p, q)
    if kind == "pow":
        return fm.power(p, q)
    if kind in ("==", "!=", "<", "<=", ">", ">="):
        return fm.cmp(kind, p, q)
    if kind == "and":
        return fm.mul(fm.cmp("!=", p, fm.ZERO), fm.cmp("!=", q, fm.ZERO))
    if kind == "or":
        return fm.cmp("!=", fm.add(fm.cmp("!=", p, fm.ZERO), fm.cmp("!=", q, fm.ZERO)), fm.ZERO)
    if kind == "mod":
        return fm.sub(p, fm.mul(q, fm.func("floor", fm.div(p, q))))
    if kind == "floordiv":
        return fm.func("floor", fm.div(p, q))
    if kind == "truncdiv":
        r = fm.div(p, q)
        return fm.where(fm.cmp(">=", r, fm.ZERO), fm.func("floor", r),
                        fm.neg(fm.func("floor", fm.neg(r))))
    if kind == "max":
        return fm.where(fm.cmp(">=", p, q), p, q)
    if kind == "min":
        return fm.where(fm.cmp("<=", p, q), p, q)
    raise Refuse(kind)


def pos_binary(I, op, kind, a, b, out):
    operands = []
    for x in (a, b):
        if isinstance(x, Val):
            sc = _scalar_like(x)
            operands.append(sc if sc is not None else to_pos(x))
        else:
            operands.append(x)
    vals = [x for x in operands if isinstance(x, Val)]
    phs, labels = vl.align(vals, out.sizes, out.seq) if vals else ([], [None] * len(out.sizes))
    it = iter(phs)
    arrays = [next(it) if isinstance(x, Val) else
              vl.obj_array(vl.placeholder(out.sizes, out.seq), _formula_of(x)) for x in operands]
    ph = vl.obj_map(lambda p, q: _fop(kind, p, q), *arrays)
    return Val("pos", ph, labels, out.dtype)


def const_binary(I, op, kind, a, b, out):
    arrays = []
    for x in (a, b):
        if isinstance(x, Val):
            arrays.append(_frac_array(x))
        elif isinstance(x, Scalar):
            if x.f is None or x.f.kind != "num":
                raise Refuse("a constant computed with a number that is not finite")
            arrays.append(np.array(x.f.value, dtype=object))
        else:
            arrays.append(np.array(Fraction(int(x)), dtype=object))
    a1, b1 = np.broadcast_arrays(*arrays)
    res = np.empty(a1.shape, dtype=object)
    for idx in np.ndindex(*a1.shape):
        p, q = a1[idx], b1[idx]
        if kind == "add":
            r = p + q
        elif kind == "sub":
            r = p - q
        elif kind == "mul":
            r = p * q
        elif kind == "div":
            if q == 0:
                raise Refuse("a constant divided by zero")
            r = p / q
        elif kind == "pow":
            if q.denominator != 1:
                # irrational in general: a constant formula (n-free), like pi
                return pos_binary(I, op, kind, a, b, out)
            if p == 0 and q < 0:
                raise Refuse("0 to a negative power")
            r = p ** int(q)
        elif kind in ("==", "!=", "<", "<=", ">", ">="):
            r = Fraction(int(fm.cmp(kind, fm.num(p), fm.num(q)).value))
        elif kind == "and":
            r = Fraction(int(p != 0 and q != 0))
        elif kind == "or":
            r = Fraction(int(p != 0 or q != 0))
        elif kind in ("mod", "floordiv", "truncdiv"):
            if q == 0:
                raise Refuse("a constant divided by zero")
            r = p % q if kind == "mod" else Fraction(p // q) if kind == "floordiv" else \
                Fraction(int(p / q))
        elif kind == "max":
            r = max(p, q)
        else:
            r = min(p, q)
        res[idx] = r
    res = res.reshape(out.sizes)
    if out.dtype == "float":
        return _const_from_fracs(res)
    if out.dtype == "bool":
        return Val("const", np.vectorize(lambda q: q != 0, otypes=[bool])(res) if res.size
                   else np.zeros(out.sizes, bool), dtype="bool")
    return Val("const", np.vectorize(lambda q: int(q), otypes=[np.int64])(res) if res.size
               else np.zeros(out.sizes, np.int64), dtype="int")


def tok_binary(I, op, kind, a, b, out):
    arrays = []
    for x in (a, b):
        if isinstance(x, Val) and x.kind == "tok":
            arrays.append(x)
        elif isinstance(x, Val) and x.kind == "const":
            arrays.append(_frac_array(x))
        elif isinstance(x, Scalar):
            arrays.append(np.array(x.f.value if x.f is not None and x.f.kind == "num" else
                                   x.value, dtype=object))
        else:
            arrays.append(np.array(Fraction(int(x)), dtype=object))
    toks = [x for x in arrays if isinstance(x, Val)]
    phs, labels = vl.align(toks, out.sizes, out.seq)
    it = iter(phs)
    full = [next(it) if isinstance(x, Val) else x for x in arrays]
    shape = vl.placeholder(out.sizes, out.seq)
    full = [np.broadcast_to(x, shape) for x in full]
    symbols = I.symbols

    def per(p, q):
        ps = p if isinstance(p, tuple) else (p,) * symbols
        qs = q if isinstance(q, tuple) else (q,) * symbols
        return tuple(_fop(kind, fm.num(x), fm.num(y)).value for x, y in zip(ps, qs))

    ph = vl.obj_map(per, *full)
    return Val("tok", ph, labels, out.dtype)


def _scale_node(I, node, factor, hint, where):
    if factor == 1 and hint is None:
        return node
    return ir.Node("scale", [node], node.dim, where, factor=factor, hint=hint)


def stream_binary(I, op, kind, a, b, out):
    if kind in ("add", "sub"):
        cs = [_scalar_like(x) if not (isinstance(x, Val) and x.kind in ("stream", "pos", "tok"))
              else None for x in (a, b)]
        if any(c is not None and c.const for c in cs) or any(
                isinstance(x, Val) and x.kind == "const" and _scalar_like(x) is None
                for x in (a, b)):
            return _affine_const(I, op, kind, a, b, out)
        sa, sb = [I.as_stream(x, op) if isinstance(x, Val) else I.as_stream(_n_pos(x, out), op)
                  for x in (a, b)]
        nodes, shape, labels, sel = _align_streams(I, [sa, sb], out, op)
        node = ir.Node(kind, nodes, nodes[0].dim, op)
        return stream_val(node, shape, labels, sel)
    if kind in ("mul", "div"):
        stream_first = isinstance(a, Val) and a.kind == "stream"
        s, c = (a, b) if stream_first else (b, a)
        if kind == "div" and not stream_first:
            if isinstance(b, Val) and b.kind == "stream" and isinstance(a, Val) and \
                    a.kind == "stream":
                return _pattern(I, op, "div", [a, b], out)
            return _pattern(I, op, "recip", [b], out, scale=a)
        sc = _scalar_like(c)
        if sc is not None:
            if sc.f is None:
                raise Refuse("multiplying by a number that is not finite")
            if not sc.const:
                beta = sc.f if kind == "mul" else fm.div(fm.ONE, sc.f)
                node = ir.Node("nscale", [s.node], s.node.dim, op, beta=beta)
                return Val("stream", s.ph, s.seq, node=node, sel=s.sel)
            if sc.f.kind != "num":
                if sc.sqrt is None:
                    raise Refuse("a value computed from the input scaled by the irrational "
                                 "constant %s (only attention scores may be, by square roots)"
                                 % _shown_f(sc.f))
                hint = sc.sqrt if kind == "mul" else \
                    ir.scale_mul((Fraction(1), Fraction(1)), _inverse(sc.sqrt))
                node = ir.Node("scale", [s.node], s.node.dim, op, factor=None, hint=hint)
                return Val("stream", s.ph, s.seq, node=node, sel=s.sel)
            value = sc.f.value
            if kind == "div":
                if value == 0:
                    raise Refuse("division by zero")
                factor = 1 / value
                hint = ir.scale_mul((Fraction(1), Fraction(1)), _inverse(sc.sqrt)) \
                    if sc.sqrt else None
            else:
                factor, hint = value, sc.sqrt
            node = _scale_node(I, s.node, factor, hint, op)
            return Val("stream", s.ph, s.seq, node=node, sel=s.sel)
        if isinstance(c, Val) and c.kind == "const":
            consts = _const_elems(c, [s], out)
            nodes, shape, labels, sel = _align_streams(I, [s], out, op)
            rows = []
            for k, q in enumerate(consts.ravel()):
                if kind == "div":
                    if q == 0:
                        raise Refuse("division by zero")
                    q = 1 / q
                rows.append({k: q} if q else {})
            node = ir.Node("linear", [nodes[0]], len(rows), op, rows=rows, bias=None)
            return stream_val(node, shape, labels, sel)
        if kind == "div":
            if isinstance(c, Val) and c.kind == "stream":
                return _pattern(I, op, "div", [a, b], out)
            raise Refuse("dividing a value computed from the input by a positional value")
        sa, sb = I.as_stream(s, op), I.as_stream(c, op)
        nodes, shape, labels, sel = _align_streams(I, [sa, sb], out, op)
        node = ir.Node("mul", nodes, nodes[0].dim, op)
        return stream_val(node, shape, labels, sel)
    if kind == "pow":
        if not (isinstance(a, Val) and a.kind == "stream"):
            raise Refuse("a power with an exponent computed from the input")
        e = _scalar_like(b)
        if e is None or not e.const:
            raise Refuse("a power with an exponent that is not a constant")
        if e.f == fm.num(2):
            node = ir.Node("mul", [a.node, a.node], a.node.dim, op)
            return Val("stream", a.ph, a.seq, node=node, sel=a.sel)
        if e.f == fm.ONE:
            return a
        if e.f == fm.num(Fraction(1, 2)):
            return _pattern(I, op, "sqrt", [a], out)
        raise Refuse("a power x^%s of a value computed from the input" % e.value)
    if kind in (">", "<", ">=", "<="):
        return _compare(I, op, kind, a, b, out)
    raise Refuse("%s of a value computed from the input is not supported" %
                 {"==": "an equality test", "!=": "an inequality test", "and": "a logical and",
                  "or": "a logical or", "max": "maximum()", "min": "minimum()"}.get(kind, kind))


def _shown_f(f):
    try:
        return fm.render(f)
    except ValueError:
        return repr(f)


def _inverse(h):
    r, s = h
    return (1 / (r * s), s)


def _n_pos(x, out):
    """A Scalar that depends on n as a positional (n-only) value."""
    if isinstance(x, Scalar):
        return Val("pos", vl.obj_array((), _formula_of(x)), (), "float")
    return x


def _affine_const(I, op, kind, a, b, out):
    """stream +- constant (or constant - stream): a linear node with a bias."""
    s_first = isinstance(a, Val) and a.kind == "stream"
    s, c = (a, b) if s_first else (b, a)
    nodes, shape, labels, sel = _align_streams(I, [s], out, op)
    sc = _scalar_like(c)
    if sc is not None:
        consts = np.broadcast_to(np.array(sc.f.value, dtype=object), shape)
    else:
        consts = _const_elems(c, [s], out)
    sign_s = Fraction(1) if (kind == "add" or s_first) else Fraction(-1)
    sign_c = Fraction(1) if (kind == "add" or not s_first) else Fraction(-1)
    n = nodes[0].dim
    rows = [{k: sign_s} for k in range(n)]
    bias = [sign_c * q for q in consts.ravel()]
    node = ir.Node("linear", [nodes[0]], n, op, rows=rows, bias=bias)
    return stream_val(node, shape, labels, sel)


def _compare(I, op, kind, a, b, out):
    """x > c, x < c, x >= c, x <= c for a stream x and a constant c: the step [.. > 0]."""
    s_first = isinstance(a, Val) and a.kind == "stream"
    c = _scalar_like(b if s_first else a)
    if c is None or not c.const:
        raise Refuse("a comparison of a value computed from the input with a non-constant")
    if not s_first:
        kind = {">": "<", "<": ">", ">=": "<=", "<=": ">="}[kind]
    s = a if s_first else b
    value = c.f.value
    # [x > c] = step(x - c); [x < c] = step(c - x); [x >= c] = 1 - step(c - x); ...
    sign = Fraction(1) if kind in (">", "<=") else Fraction(-1)
    n = s.node.dim
    diff = ir.Node("linear", [s.node], n, op, rows=[{k: sign} for k in range(n)],
                   bias=[-sign * value] * n)
    step = ir.Node("step", [diff], n, op)
    if kind in (">=", "<="):
        step = ir.Node("linear", [step], n, op, rows=[{k: Fraction(-1)} for k in range(n)],
                       bias=[Fraction(1)] * n)
    return Val("stream", s.ph, s.seq, node=step, sel=s.sel)


def _pattern(I, op, kind, vals, out, scale=None):
    """A node attnprop's maps do not have, kept for the layer norm rewrite (a division by the
    square root of a variance); refused if it stays."""
    streams = [I.as_stream(v, op) for v in vals]
    nodes, shape, labels, sel = _align_streams(I, streams, out, op)
    node = ir.Node(kind, nodes, nodes[0].dim, op)
    if scale is not None:
        sc = _scalar_like(scale)
        if sc is None or not sc.const:
            raise Refuse("a constant divided by a value computed from the input")
        node = _scale_node(I, node, sc.f.value, None, op)
    return stream_val(node, shape, labels, sel)


# --- unary -----------------------------------------------------------------------------------

_UNARY = {"relu": "relu", "relu_": "relu", "tanh": "tanh", "tanh_": "tanh", "sigmoid": "sigmoid",
          "sigmoid_": "sigmoid", "gelu": "gelu", "erf": "erf", "erf_": "erf", "floor": "floor",
          "floor_": "floor", "neg": "neg", "__neg__": "neg", "negative": "neg", "neg_": "neg",
          "abs": "abs", "abs_": "abs", "absolute": "abs", "__abs__": "abs",
          "exp": "exp", "exp_": "exp", "log": "log", "log_": "log", "sqrt": "sqrt",
          "sqrt_": "sqrt", "rsqrt": "rsqrt", "rsqrt_": "rsqrt", "cos": "cos", "cos_": "cos",
          "sin": "sin", "sin_": "sin", "square": "square", "reciprocal": "recip",
          "logical_not": "not", "__invert__": "not", "bitwise_not": "not", "sign": "sign",
          "ceil": "ceil", "round": "round", "trunc": "trunc", "silu": "silu", "softplus": "softplus",
          "elu": "elu", "selu": "selu", "mish": "mish", "hardtanh": "hardtanh",
          "hardswish": "hardswish", "log_sigmoid": "log_sigmoid", "logsigmoid": "log_sigmoid",
          "leaky_relu": "leaky_relu", "relu6": "relu6", "tan": "tan", "atan": "atan"}


@handler(*_UNARY)
def h_unary(I, op, args, kwargs, out):
    kind = _UNARY[op.name]
    v = args[0]
    if kind == "gelu":
        approx = arg(args, kwargs, 1, "approximate", "none")
        if approx != "none":
            raise Refuse("gelu(approximate=%r) is not supported (only the exact gelu)" % approx)
    res = unary(I, op, kind, v, out, args, kwargs)
    if op.name.endswith("_") or kwargs.get("inplace"):
        I.env[id(op.args[0])] = res
    return res


_POS_FUNCS = {"exp", "log", "sqrt", "cos", "sin", "abs", "floor"}


def unary(I, op, kind, v, out, args=(), kwargs=None):
    kwargs = kwargs or {}
    if v.kind in ("scores", "weights"):
        if kind == "sigmoid":
            raise Refuse("sigmoid attention (a sigmoid of attention scores in place of the "
                         "softmax) is not supported: attnprop's model format has no sigmoid "
                         "attention yet; the module is not imported as softmax attention")
        raise Refuse("%s of attention scores: only softmax attention is supported" % kind)
    if v.kind == "opaque":
        raise Refuse("the attention weights nn.MultiheadAttention returns are used")
    if v.kind == "tok" and kind == "not":
        return Val("tok", vl.obj_map(lambda t: tuple(int(x == 0) for x in t), v.ph), v.seq,
                   "bool")
    if v.kind in ("pos", "const") and kind in _POS_FUNCS | {"neg", "relu", "not", "square",
                                                             "recip", "sign", "rsqrt"}:
        p = to_pos(v)

        def fn(f):
            if kind == "neg":
                return fm.neg(f)
            if kind == "relu":
                return fm.where(fm.cmp(">", f, fm.ZERO), f, fm.ZERO)
            if kind == "not":
                return fm.cmp("==", f, fm.ZERO)
            if kind == "square":
                return fm.mul(f, f)
            if kind == "recip":
                return fm.div(fm.ONE, f)
            if kind == "rsqrt":
                return fm.div(fm.ONE, fm.func("sqrt", f))
            if kind == "sign":
                return fm.sub(fm.cmp(">", f, fm.ZERO), fm.cmp("<", f, fm.ZERO))
            return fm.func(kind, f)

        res = Val("pos", vl.obj_map(fn, p.ph), p.seq, out.dtype)
        if v.kind == "const":
            return _fold_const(res, v, kind, out)
        return res
    s = I.as_stream(v, op)
    n = s.node.dim
    if kind in ("relu", "tanh", "gelu", "erf", "floor", "sigmoid"):
        node = ir.Node(kind, [s.node], n, op)
    elif kind == "neg":
        node = ir.Node("scale", [s.node], n, op, factor=Fraction(-1), hint=None)
    elif kind == "abs":
        # |x| = relu(x) + relu(-x)
        neg = ir.Node("scale", [s.node], n, op, factor=Fraction(-1), hint=None)
        node = ir.Node("add", [ir.Node("relu", [s.node], n, op), ir.Node("relu", [neg], n, op)],
                       n, op)
    elif kind == "square":
        node = ir.Node("mul", [s.node, s.node], n, op)
    elif kind == "leaky_relu":
        slope = _scalar_like(arg(args, kwargs, 1, "negative_slope", Scalar(0.01, fm.num(
            Fraction(0.01)), True)))
        neg = ir.Node("scale", [s.node], n, op, factor=Fraction(-1), hint=None)
        node = ir.Node("linear", [ir.Node("concat", [ir.Node("relu", [s.node], n, op),
                                                      ir.Node("relu", [neg], n, op)], 2 * n, op)],
                       n, op, rows=[{k: Fraction(1), n + k: -slope.f.value} for k in range(n)],
                       bias=None)
    elif kind in ("sqrt", "rsqrt", "recip"):
        node = ir.Node(kind, [s.node], n, op)
    else:
        raise Refuse("%s of a value computed from the input is not supported (attnprop's maps "
                     "have relu, gelu, tanh, sigmoid, erf, step, floor, layer norm and affine "
                     "maps)" % _display(kind))
    return Val("stream", s.ph, s.seq, node=node, sel=s.sel)


def _display(kind):
    return {"not": "a logical not", "exp": "exp()", "log": "log()", "cos": "cos()",
            "sin": "sin()"}.get(kind, kind + "()")


def _fold_const(res, v, kind, out):
    """A unary function of a constant: exact when the result is rational."""
    arr = np.empty(res.ph.shape, dtype=object)
    for idx in np.ndindex(*res.ph.shape):
        f = res.ph[idx]
        if f.kind != "num":
            return res  # irrational: it stays a constant formula
        arr[idx] = f.value
    if out.dtype == "float":
        return _const_from_fracs(arr)
    return Val("const", np.vectorize(lambda q: int(q), otypes=[np.int64])(arr) if arr.size else
               np.zeros(arr.shape, np.int64), dtype=out.dtype)


@handler("clamp", "clamp_min", "clamp_max", "clip", "clamp_", "clamp_min_")
def h_clamp(I, op, args, kwargs, out):
    v = args[0]
    lo = arg(args, kwargs, 1, "min") if op.name != "clamp_max" else None
    hi = arg(args, kwargs, 2, "max") if op.name not in ("clamp_min", "clamp_min_") else \
        None
    if op.name == "clamp_max":
        hi = arg(args, kwargs, 1, "max")
    res = v
    if lo is not None:
        res = binary(I, op, "max", res, lo, out) if res.kind != "stream" else \
            _clamp_stream(I, op, res, lo, True)
    if hi is not None:
        res = binary(I, op, "min", res, hi, out) if res.kind != "stream" else \
            _clamp_stream(I, op, res, hi, False)
    return res


def _clamp_stream(I, op, s, bound, lower):
    c = _scalar_like(bound)
    if c is None or not c.const:
        raise Refuse("clamp() of a value computed from the input with a non-constant bound")
    b = c.f.value
    n = s.node.dim
    # max(x, b) = relu(x - b) + b;  min(x, b) = b - relu(b - x)
    sign = Fraction(1) if lower else Fraction(-1)
    d = ir.Node("linear", [s.node], n, op, rows=[{k: sign} for k in range(n)], bias=[-sign * b] * n)
    r = ir.Node("relu", [d], n, op)
    node = ir.Node("linear", [r], n, op, rows=[{k: sign} for k in range(n)], bias=[b] * n)
    return Val("stream", s.ph, s.seq, node=node, sel=s.sel)


@handler("where")
def h_where(I, op, args, kwargs, out):
    cond, a, b = args[0], args[1], args[2]
    vals = [x for x in (cond, a, b) if isinstance(x, Val)]
    kinds = {v.kind for v in vals}
    if kinds & {"scores"}:
        return _scores_where(I, op, cond, a, b, out)
    if kinds & {"stream", "tok"}:
        if isinstance(cond, Val) and cond.kind == "stream":
            raise Refuse("where() with a condition computed from the input")
        # cond * a + (1 - cond) * b with the condition as a feature
        fa = binary(I, op, "mul", a, convert(cond, "float"), out)
        notc = unary(I, op, "not", cond, out)
        fb = binary(I, op, "mul", b, convert(notc, "float"), out)
        return binary(I, op, "add", fa, fb, out)
    ops_ = []
    for x in (cond, a, b):
        if isinstance(x, Val):
            sc = _scalar_like(x)
            ops_.append(sc if sc is not None else to_pos(x))
        else:
            ops_.append(x)
    vals = [x for x in ops_ if isinstance(x, Val)]
    phs, labels = vl.align(vals, out.sizes, out.seq) if vals else ([], [None] * len(out.sizes))
    it = iter(phs)
    arrays = [next(it) if isinstance(x, Val) else
              vl.obj_array(vl.placeholder(out.sizes, out.seq), _formula_of(x)) for x in ops_]
    ph = vl.obj_map(lambda c, p, q: fm.where(c, p, q), *arrays)
    res = Val("pos", ph, labels, out.dtype)
    if all(isinstance(x, Val) and x.kind == "const" or not isinstance(x, Val) for x in
           (cond, a, b)) and not any(out.seq):
        return _fold_const(res, None, "where", out)
    return res


@handler("masked_fill", "masked_fill_")
def h_masked_fill(I, op, args, kwargs, out):
    v, mask, value = args[0], args[1], args[2]
    if v.kind == "scores":
        return _scores_mask(I, op, v, mask, value, out)
    res = h_where(I, op, [mask, value, v], {}, out)
    if op.name.endswith("_"):
        I.env[id(op.args[0])] = res
    return res


from .ops_attn import scores_binary, _scores_mask, _scores_where  # noqa: E402
from . import ops_linear  # noqa: E402,F401  (registers its handlers)
from .ops_linear import lookup  # noqa: E402,F401

__all__ = ["binary", "unary", "gathered", "stream_val", "streams_concat", "lookup", "HANDLERS",
           "ops_linear"]
