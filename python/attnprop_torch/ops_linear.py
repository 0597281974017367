"""Handlers for linear maps, products, sums, layer norm, softmax, dropout and embeddings."""
from fractions import Fraction

import numpy as np

from . import formula as fm
from . import ir
from . import values as vl
from .interp import Refuse, Scalar
from .ops import arg, const_int, handler, to_pos
from .values import Val, fresh_label


def _fr(x):
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (bool, np.bool_)):
        return Fraction(int(x))
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    return Fraction(float(x))


def fracs(v):
    """The const Val's entries as an object array of Fractions (cached on the Val)."""
    cached = getattr(v, "_fracs", None)
    if cached is not None:
        return cached
    arr = np.empty(v.ph.shape, dtype=object)
    flat = v.ph.ravel()
    out = arr.reshape(-1)
    for k in range(flat.size):
        out[k] = _fr(flat[k])
    v._fracs = arr
    return arr


def lookup(I, op, table, idx, out):
    """table[idx] along axis 0: token-indexed rows (an embedding: a "tok" leaf) or position-
    indexed rows (a positional table)."""
    rest = table.ph.shape[1:]
    if idx.kind == "tok":
        R = table.ph.shape[0]
        elems = idx.ph.ravel()
        flat_rest = table.ph.reshape(R, -1)
        per = [[] for _ in range(I.symbols)]
        for e in elems:
            for s in range(I.symbols):
                row = int(e[s])
                if not 0 <= row < R:
                    raise Refuse("the token embedding has %d rows; symbol index %d needs row %d"
                                 % (R, s, row))
                per[s].extend(_fr(x) for x in flat_rest[row])
        seq = list(idx.seq) + [None] * len(rest)
        return I.tok_leaf(per, idx.ph.shape + rest, seq, op)
    if idx.kind == "pos":
        if idx.dtype == "float":
            raise Refuse("a table indexed by a float")
        tid = len(I.tables)
        I.tables[tid] = table.ph.reshape(table.ph.shape[0], -1)
        cols = int(np.prod(rest)) if rest else 1
        ph = np.empty(idx.ph.shape + rest, dtype=object)
        for pidx in np.ndindex(*idx.ph.shape):
            row = idx.ph[pidx]
            for c in range(cols):
                ridx = np.unravel_index(c, rest) if rest else ()
                ph[pidx + tuple(ridx)] = fm.table(tid, c, row)
        return Val("pos", ph, list(idx.seq) + [None] * len(rest), table.dtype)
    raise Refuse("indexing a constant with a %s value" % idx.kind)


@handler("embedding")
def h_embedding(I, op, args, kwargs, out):
    idx = args[0]
    weight = arg(args, kwargs, 1, "weight")
    if arg(args, kwargs, 3, "max_norm") is not None:
        raise Refuse("an embedding with max_norm (renormalising rows at lookup) is not supported")
    if not isinstance(weight, Val) or weight.kind != "const":
        raise Refuse("an embedding whose weight is computed from the input")
    return lookup(I, op, weight, idx, out)


@handler("one_hot")
def h_one_hot(I, op, args, kwargs, out):
    idx = args[0]
    C = out.sizes[-1]
    if idx.kind == "tok":
        ph = np.empty(idx.ph.shape + (C,), dtype=object)
        for e in np.ndindex(*idx.ph.shape):
            for c in range(C):
                ph[e + (c,)] = tuple(int(s == c) for s in idx.ph[e])
        return Val("tok", ph, list(idx.seq) + [None], "int")
    if idx.kind == "pos":
        ph = np.empty(idx.ph.shape + (C,), dtype=object)
        for e in np.ndindex(*idx.ph.shape):
            for c in range(C):
                ph[e + (c,)] = fm.cmp("==", idx.ph[e], fm.num(c))
        return Val("pos", ph, list(idx.seq) + [None], "int")
    raise Refuse("one_hot() of a %s value" % idx.kind)


# --- linear maps and products -------------------------------------------------------------------

def _matmul_rows(A, B, stream_left):
    """Rows of a batched product A @ B where one side is a stream (index arrays) and the other
    constant Fractions; A (..., I, d), B (..., d, J). Returns (rows, bias None, result shape)."""
    oa, ob = A.shape[:-2], B.shape[:-2]
    O = np.broadcast_shapes(oa, ob)
    Ai = np.broadcast_to(A, O + A.shape[-2:])
    Bi = np.broadcast_to(B, O + B.shape[-2:])
    I_, d = A.shape[-2], A.shape[-1]
    J = B.shape[-1]
    rows = []
    for o in np.ndindex(*O):
        a, b = Ai[o], Bi[o]
        for i in range(I_):
            for j in range(J):
                row = {}
                for c in range(d):
                    if stream_left:
                        key, w = int(a[i, c]), b[c, j]
                    else:
                        key, w = int(b[c, j]), a[i, c]
                    if w:
                        v = row.get(key, Fraction(0)) + w
                        if v:
                            row[key] = v
                        else:
                            row.pop(key)
                rows.append(row)
    return rows, O + (I_, J)


def linear_stream(I, op, s, W, bias, where=None):
    """F.linear(s, W, bias) for a stream s (last axis fixed) and Fractions W (out x in)."""
    if s.seq[-1] is not None:
        raise Refuse("a linear map over the sequence axis (mixing positions) is not supported")
    outer = s.ph.shape[:-1]
    cols = s.ph.reshape(-1, s.ph.shape[-1])
    rows, b = [], []
    for o in range(cols.shape[0]):
        for r in range(W.shape[0]):
            row = {}
            for c in range(W.shape[1]):
                w = W[r, c]
                if w:
                    key = int(cols[o, c])
                    v = row.get(key, Fraction(0)) + w
                    if v:
                        row[key] = v
                    else:
                        row.pop(key)
            rows.append(row)
            b.append(bias[r] if bias is not None else Fraction(0))
    node = ir.Node("linear", [s.node], len(rows), where or op, rows=rows,
                   bias=b if bias is not None else None)
    ph = np.arange(node.dim, dtype=np.int64).reshape(outer + (W.shape[0],))
    return Val("stream", ph, list(s.seq[:-1]) + [None], node=node, sel=s.sel)


@handler("linear")
def h_linear(I, op, args, kwargs, out):
    x = args[0]
    weight = arg(args, kwargs, 1, "weight")
    bias = arg(args, kwargs, 2, "bias")
    if not isinstance(weight, Val) or weight.kind != "const":
        raise Refuse("a linear map whose weight is computed from the input or the positions")
    if bias is not None and (not isinstance(bias, Val) or bias.kind != "const"):
        raise Refuse("a linear map whose bias is computed from the input or the positions")
    W = fracs(weight)
    squeeze = W.ndim == 1
    if squeeze:
        W = W.reshape(1, -1)
    bvec = list(fracs(bias).reshape(-1)) if bias is not None else None
    if bvec is not None and len(bvec) == 1 and W.shape[0] > 1:
        bvec = bvec * W.shape[0]
    if x.kind == "const":
        X = fracs(x)
        res = np.empty(X.shape[:-1] + (W.shape[0],), dtype=object)
        for idx in np.ndindex(*X.shape[:-1]):
            for r in range(W.shape[0]):
                res[idx + (r,)] = sum((W[r, c] * X[idx + (c,)] for c in range(W.shape[1])),
                                      bvec[r] if bvec else Fraction(0))
        from .ops_nn import _const_from_fracs
        return _const_from_fracs(res.reshape(out.sizes))
    s = I.as_stream(x, op)
    res = linear_stream(I, op, s, W, bvec)
    if squeeze:
        res = vl.with_ph(res, res.ph[..., 0], res.seq[:-1])
    return res


@handler("matmul", "__matmul__", "mm", "bmm", "__rmatmul__", "mv", "dot", "inner")
def h_matmul(I, op, args, kwargs, out):
    a, b = args[0], arg(args, kwargs, 1, "other", arg(args, kwargs, 1, "mat2"))
    if op.name == "__rmatmul__":
        a, b = b, a
    return matmul(I, op, a, b, out)


def _as_matrix(v, left):
    """(ph, squeeze axis) with a 1-D operand made 2-D the way torch.matmul does."""
    if v.ph.ndim == 1:
        if left:
            return vl.with_ph(v, v.ph[None, :], (None, v.seq[0])), -2
        return vl.with_ph(v, v.ph[:, None], (v.seq[0], None)), -1
    return v, None


def matmul(I, op, a, b, out):
    from .ops_attn import make_scores, apply_weights
    ka, kb = a.kind, b.kind
    if "opaque" in (ka, kb):
        raise Refuse("the attention weights nn.MultiheadAttention returns are used")
    if ka == "scores" or kb == "scores":
        raise Refuse("attention scores used in a product without a softmax")
    if kb == "weights":
        raise Refuse("attention weights on the right of a product")
    if ka == "weights":
        return apply_weights(I, op, a, I.as_stream(b, op), out)
    a, sq_a = _as_matrix(a, True)
    b, sq_b = _as_matrix(b, False)
    if ka == "const" and kb == "const":
        A, B = fracs(a), fracs(b)
        res = np.matmul(A, B) if A.size * B.shape[-1] <= 1 << 22 else None
        if res is None:
            raise Refuse("a product of two large constants inside forward")
        for ax in (sq_a, sq_b):
            if ax is not None:
                res = np.squeeze(res, axis=ax)
        from .ops_nn import _const_from_fracs
        return _const_from_fracs(np.asarray(res, dtype=object).reshape(out.sizes))
    if ka != "const" and kb != "const":
        sa, sb = I.as_stream(a, op), I.as_stream(b, op)
        if sa.seq[-1] is None and sa.seq[-2] is not None and sb.seq[-1] is not None and \
                sb.seq[-2] is None:
            res = make_scores(I, op, sa, sb, out)
        else:
            raise Refuse("a product of two values computed from the input that is not attention "
                         "scores (q @ k^T, contracting the features of two sequences)")
    elif kb == "const":
        s = I.as_stream(a, op)
        if s.seq[-1] is not None:
            raise Refuse("a product over the sequence axis (mixing positions) is not supported")
        rows, shape = _matmul_rows(s.ph, fracs(b), True)
        node = ir.Node("linear", [s.node], len(rows), op, rows=rows, bias=None)
        seq = _seq_of(s, shape, left=True)
        res = Val("stream", np.arange(node.dim, dtype=np.int64).reshape(shape), seq, node=node,
                  sel=s.sel)
    else:
        s = I.as_stream(b, op)
        if s.seq[-2] is not None:
            raise Refuse("a product over the sequence axis (mixing positions) is not supported")
        rows, shape = _matmul_rows(fracs(a), s.ph, False)
        node = ir.Node("linear", [s.node], len(rows), op, rows=rows, bias=None)
        seq = _seq_of(s, shape, left=False)
        res = Val("stream", np.arange(node.dim, dtype=np.int64).reshape(shape), seq, node=node,
                  sel=s.sel)
    for ax in (sq_a, sq_b):
        if ax is not None:
            res = vl.with_ph(res, np.squeeze(res.ph, axis=ax),
                             [s for k, s in enumerate(res.seq) if k != res.ph.ndim + ax])
    return res


def _seq_of(s, shape, left):
    """Labels of a product's result: the stream's batch axes (aligned right), then its row (or
    column) axis."""
    nd = len(shape)
    seq = [None] * nd
    lead = nd - s.ph.ndim
    for k in range(s.ph.ndim - 2):
        seq[k + lead] = s.seq[k]
    if left:
        seq[-2] = s.seq[-2]
    else:
        seq[-1] = s.seq[-1]
    return seq


# --- reductions -------------------------------------------------------------------------------

def _dims(v, dim):
    if dim is None:
        return list(range(v.ph.ndim))
    if isinstance(dim, (list, tuple)):
        return sorted({const_int(d, "a dimension") % v.ph.ndim for d in dim})
    return [const_int(dim, "a dimension") % v.ph.ndim]


@handler("sum", "mean", "nansum", "nanmean")
def h_reduce(I, op, args, kwargs, out):
    v = args[0]
    dim = arg(args, kwargs, 1, "dim")
    if isinstance(dim, bool) or (op.name == "sum" and dim is not None and
                                 not isinstance(dim, (Scalar, list, tuple))):
        dim = None
    keep = bool(arg(args, kwargs, 2, "keepdim", False))
    dims = _dims(v, dim)
    if v.kind in ("scores", "weights", "opaque"):
        raise Refuse("a sum of attention scores or weights")
    if any(v.seq[d] is not None for d in dims):
        raise Refuse("a %s over positions (pooling) is not supported: attnprop reads one "
                     "position (the eos position)" % op.name)
    mean = "mean" in op.name
    rest = [d for d in range(v.ph.ndim) if d not in dims]
    moved = np.transpose(v.ph, rest + dims)
    count = int(np.prod([v.ph.shape[d] for d in dims])) if dims else 1
    groups = moved.reshape(-1, count)
    kept_shape = tuple(v.ph.shape[d] for d in rest)
    seq = [v.seq[d] for d in rest]
    if keep:
        kept_shape = tuple(1 if d in dims else v.ph.shape[d] for d in range(v.ph.ndim))
        seq = [None if d in dims else v.seq[d] for d in range(v.ph.ndim)]
    w = Fraction(1, count) if mean else Fraction(1)
    if v.kind == "const" or v.kind == "pos":
        p = to_pos(v)
        g = np.transpose(p.ph, rest + dims).reshape(-1, count)
        ph = np.empty(g.shape[0], dtype=object)
        for k in range(g.shape[0]):
            ph[k] = fm.mul(fm.num(w), fm.add(*g[k]))
        res = Val("pos", ph.reshape(kept_shape), seq, out.dtype)
        if v.kind == "const":
            from .ops_nn import _fold_const
            return _fold_const(res, v, op.name, out)
        return res
    s = I.as_stream(v, op)
    rows = []
    for k in range(groups.shape[0]):
        row = {}
        for e in groups[k]:
            row[int(e)] = row.get(int(e), Fraction(0)) + w
        rows.append(row)
    node = ir.Node("linear", [s.node], len(rows), op, rows=rows, bias=None)
    return Val("stream", np.arange(node.dim, dtype=np.int64).reshape(kept_shape), seq, node=node,
               sel=s.sel)


# --- layer norm, softmax, dropout ---------------------------------------------------------------

@handler("layer_norm")
def h_layer_norm(I, op, args, kwargs, out):
    x = args[0]
    shape = arg(args, kwargs, 1, "normalized_shape")
    weight = arg(args, kwargs, 2, "weight")
    bias = arg(args, kwargs, 3, "bias")
    eps = arg(args, kwargs, 4, "eps", Scalar(1e-5, fm.num(Fraction(1e-5)), True))
    k = len(shape) if isinstance(shape, (list, tuple)) else 1
    if not isinstance(eps, Scalar) or not eps.const:
        raise Refuse("a layer norm whose eps is not a constant")
    for t in (weight, bias):
        if t is not None and (not isinstance(t, Val) or t.kind != "const"):
            raise Refuse("a layer norm whose weight or bias is computed inside forward")
    s = I.as_stream(x, op)
    if any(sq is not None for sq in s.seq[-k:]):
        raise Refuse("a layer norm over the sequence axis")
    outer = s.ph.shape[:-k]
    size = int(np.prod(s.ph.shape[-k:]))
    groups = s.ph.reshape(-1, size)
    gamma = list(fracs(weight).reshape(-1)) if weight is not None else None
    beta = list(fracs(bias).reshape(-1)) if bias is not None else None
    from .ops_nn import gathered
    parts = []
    for g in range(groups.shape[0]):
        src = gathered(I, s, groups[g], op)
        parts.append(ir.Node("layer_norm", [src], size, op, eps=Fraction(eps.value),
                             gamma=gamma, beta=beta))
    node = parts[0] if len(parts) == 1 else ir.Node("concat", parts, size * len(parts), op)
    return Val("stream", np.arange(node.dim, dtype=np.int64).reshape(outer + s.ph.shape[-k:]),
               s.seq, node=node, sel=s.sel)


@handler("softmax", "_softmax", "log_softmax", "_log_softmax")
def h_softmax(I, op, args, kwargs, out):
    from .ops_attn import softmax_scores
    v = args[0]
    dim = arg(args, kwargs, 1, "dim")
    if dim is None:
        raise Refuse("softmax() without dim")
    d = const_int(dim, "the softmax dimension") % v.ph.ndim
    if v.kind == "scores":
        if "log" in op.name:
            raise Refuse("log_softmax of attention scores")
        return softmax_scores(I, op, v, d, out)
    if v.kind in ("weights", "opaque"):
        raise Refuse("a softmax of attention weights")
    s = I.as_stream(v, op)
    if s.seq[d] is not None:
        raise Refuse("a softmax over positions that is not attention")
    node = ir.Node("softmax_out", [s.node], s.node.dim, op, log="log" in op.name, axis=d)
    res = Val("stream", s.ph, s.seq, node=node, sel=s.sel)
    res.pre_softmax = (s, d, "log" in op.name)
    return res


@handler("dropout", "dropout_", "alpha_dropout", "feature_alpha_dropout", "dropout1d",
         "dropout2d", "dropout3d", "feature_dropout")
def h_dropout(I, op, args, kwargs, out):
    v = args[0]
    p = arg(args, kwargs, 1, "p", Scalar(0.5, fm.num(Fraction(1, 2)), True))
    training = arg(args, kwargs, 2, "training", True)
    pv = p.value if isinstance(p, Scalar) else p
    if training and pv:
        raise Refuse("dropout with training=True randomises the output (F.dropout's default is "
                     "training=True; pass training=self.training)")
    return v


__all__ = ["lookup", "linear_stream", "matmul", "fracs", "fresh_label"]


# --- einsum -----------------------------------------------------------------------------------

class _Out:
    """A Shape for an intermediate product (sizes and sequence flags)."""

    def __init__(self, sizes, seq, dtype="float"):
        self.sizes = tuple(sizes)
        self.seq = tuple(seq)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.sizes)


def _expand_ellipsis(spec, ndim, pool):
    if "..." not in spec:
        return spec
    k = ndim - (len(spec) - 3)
    return spec.replace("...", "".join(pool[:k]))


@handler("einsum")
def h_einsum(I, op, args, kwargs, out):
    """Two-operand einsum as permutations, reshapes and one batched product: q-k scores
    ("...id,...jd->...ij"), weights times values, projections by constants."""
    eq = args[0]
    operands = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else \
        list(args[1:])
    tensors = list(op.args[1]) if len(op.args) == 2 and isinstance(op.args[1], (list, tuple)) \
        else list(op.args[1:])
    if len(operands) != 2 or "->" not in eq:
        raise Refuse("einsum() with %d operands or without '->' (two operands and an explicit "
                     "output are supported)" % len(operands))
    eq = eq.replace(" ", "")
    lhs, rhs = eq.split("->")
    sa, sb = lhs.split(",")
    pool = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
    a, b = operands
    sa = _expand_ellipsis(sa, a.ph.ndim, pool)
    sb = _expand_ellipsis(sb, b.ph.ndim, pool)
    ell = len(out.sizes) - (len(rhs) - 3) if "..." in rhs else 0
    so = rhs.replace("...", "".join(pool[:ell]))
    if len(set(sa)) != len(sa) or len(set(sb)) != len(sb) or len(sa) != a.ph.ndim or \
            len(sb) != b.ph.ndim:
        raise Refuse("einsum() with repeated or missing subscripts")
    K = [c for c in sa if c in sb and c not in so]
    B = [c for c in sa if c in sb and c in so]
    M = [c for c in sa if c not in sb]
    N = [c for c in sb if c not in sa]
    if any(c not in so for c in M + N) or any(c not in sa + sb for c in so):
        raise Refuse("einsum() summing over an axis of one operand only")
    shape_a = dict(zip(sa, tensors[0].shape))
    shape_b = dict(zip(sb, tensors[1].shape))
    size = dict(shape_a)
    size.update(shape_b)
    seq_a = dict(zip(sa, [s is not None for s in a.seq]))
    seq_b = dict(zip(sb, [s is not None for s in b.seq]))

    def arrange(v, spec, real, seqd, first, second):
        perm = [spec.index(c) for c in B + first + second]
        v = vl.permute(v, perm)
        shape_in = tuple(real[c] for c in B + first + second)
        groups = [[c] for c in B] + [first, second]
        sizes = [int(np.prod([real[c] for c in g])) if g else 1 for g in groups]
        flags = [len(g) == 1 and seqd[g[0]] for g in groups]
        if any(len(g) > 1 and any(seqd[c] for c in g) for g in groups):
            raise Refuse("einsum() merging the sequence axis with another axis")
        if v.kind == "const":
            return vl.with_ph(v, v.ph.reshape(sizes), [None] * len(sizes))
        try:
            return vl.reshape(v, shape_in, sizes, flags)
        except vl.ShapeError as e:
            raise Refuse(str(e))

    a2 = arrange(a, sa, shape_a, seq_a, M, K)
    b2 = arrange(b, sb, shape_b, seq_b, K, N)
    sizes = [size[c] for c in B] + [int(np.prod([size[c] for c in M])) if M else 1,
                                    int(np.prod([size[c] for c in N])) if N else 1]
    flags = [seq_a.get(c, False) or seq_b.get(c, False) for c in B] + \
        [len(M) == 1 and seq_a[M[0]], len(N) == 1 and seq_b[N[0]]]
    res = matmul(I, op, a2, b2, _Out(sizes, flags, out.dtype))
    # (B, M, N) back to the output's order
    real = tuple(size[c] for c in B + M + N)
    full = B + M + N
    res_flags = [seq_a.get(c, False) or seq_b.get(c, False) for c in full]
    if res.kind in ("stream", "pos"):
        try:
            res = vl.reshape(res, tuple(sizes), real, res_flags)
        except vl.ShapeError as e:
            raise Refuse(str(e))
    elif res.kind == "const":
        res = vl.with_ph(res, res.ph.reshape(real), [None] * len(real))
    else:
        if len(M) != 1 or len(N) != 1:
            raise Refuse("einsum() attention scores with several query or key axes")
    return vl.permute(res, [full.index(c) for c in so])
