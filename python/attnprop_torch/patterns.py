"""A layer norm written out in a module's forward, recognised as attnprop's layer_norm.

    m = x.mean(-1, keepdim=True); v = ((x - m) ** 2).mean(-1, keepdim=True)
    y = (x - m) / torch.sqrt(v + eps)          or   (x - m) * torch.rsqrt(v + eps)

becomes, node for node, a division (or product) by a square root (or reciprocal square root),
which attnprop's maps do not have. `rewrite_layer_norms` checks, exactly, that such a node is
that formula — every output is x_c minus the mean of a group of coordinates of x, divided by the
square root of eps plus the mean of the squares of the same centred group — and turns it into
layer_norm nodes over the groups (in place, so that every reference follows). Anything else
stays, and is refused with its operation when the model needs it.
"""
from fractions import Fraction

from . import ir


_AFFINE = ("linear", "scale", "add", "sub")


def affine(x, base=None):
    """(base, rows, bias): x as an affine function of the node `base` (or, when base is None,
    of the first node below x that is not a linear map, an exact scaling, or a sum or difference
    of affine functions of one node), through those; None when x is not one of `base`."""
    if base is not None and x is base:
        return x, [{c: Fraction(1)} for c in range(x.dim)], [Fraction(0)] * x.dim
    k = x.kind
    if k == "linear":
        inner = affine(x.inputs[0], base)
        if inner is None:
            return None
        rows, extra = ir.compose(x.rows, inner[1], inner[2])
        if x.bias is not None:
            extra = [e + b for e, b in zip(extra, x.bias)]
        return inner[0], rows, extra
    if k == "scale" and x.factor is not None:
        inner = affine(x.inputs[0], base)
        if inner is None:
            return None
        f = x.factor
        return inner[0], [{c: w * f for c, w in r.items()} for r in inner[1]], \
            [b * f for b in inner[2]]
    if k in ("add", "sub"):
        a, b = affine(x.inputs[0], base), affine(x.inputs[1], base)
        if a is not None and b is not None and a[0] is b[0]:
            sign = 1 if k == "add" else -1
            rows = []
            for ra, rb in zip(a[1], b[1]):
                r = dict(ra)
                for c, w in rb.items():
                    v = r.get(c, Fraction(0)) + sign * w
                    if v:
                        r[c] = v
                    else:
                        r.pop(c, None)
                rows.append(r)
            return a[0], rows, [p + sign * q for p, q in zip(a[2], b[2])]
    if base is not None:
        return None
    return x, [{c: Fraction(1)} for c in range(x.dim)], [Fraction(0)] * x.dim


def _candidates(x):
    """The nodes x is an affine function of, nearest first."""
    out, seen, todo = [], set(), [x]
    while todo:
        y = todo.pop(0)
        if y.id in seen:
            continue
        seen.add(y.id)
        out.append(y)
        if y.kind in _AFFINE and not (y.kind == "scale" and y.factor is None):
            todo.extend(y.inputs)
    return out


def _centred(row, bias):
    """(c, group, s) when row is s (e_c - mean over group), c in the group, with no bias; else
    None."""
    if bias != 0 or len(row) < 2:
        return None
    group = sorted(row)
    m = len(group)
    found = None
    for c in group:
        s = -min(w for k, w in row.items() if k != c) * m
        if s == 0:
            continue
        if row[c] == s - s / m and all(row[k] == -s / m for k in group if k != c):
            if s > 0:  # with two coordinates, e_1 - mean is also -(e_0 - mean): take s > 0
                return c, tuple(group), s
            found = (c, tuple(group), s)
    return found


def _matches(node, inverse):
    """The layer norm groups of a division x_c' / sqrt(...) (or product with rsqrt), as
    (base, [(c, group, eps, sign) per output]); None when it is not a layer norm. A centred
    value s (x_c - mean) over a variance s^2 var + eps is sign(s) times the layer norm of x
    with eps / s^2, exactly."""
    num, den = node.inputs
    root = "rsqrt" if inverse else "sqrt"
    if inverse and not _reads(den, root):
        num, den = den, num
    if den.kind == "linear" and den.bias is None and \
            all(len(r) == 1 and list(r.values())[0] == 1 for r in den.rows):
        pick = [next(iter(r)) for r in den.rows]
        den = den.inputs[0]
    else:
        pick = list(range(den.dim))
    if den.kind != root:
        return None
    mul, rows_t, bias_t = affine(den.inputs[0])
    if mul.kind != "mul":
        return None
    for base in _candidates(num):
        found = _groups(base, num, mul, rows_t, bias_t, pick)
        if found is not None:
            return base, found
    return None


def _groups(base, num, mul, rows_t, bias_t, pick):
    """[(c, group, eps, sign) per output] when num / sqrt(...) is a layer norm of `base`."""
    a = affine(num, base)
    p, q = affine(mul.inputs[0], base), affine(mul.inputs[1], base)
    if a is None or p is None or q is None or p[1] != q[1] or p[2] != q[2]:
        return None
    outs = []
    for r, b, k in zip(a[1], a[2], pick):
        cg = _centred(r, b)
        if cg is None:
            return None
        c, group, s = cg
        row, e = rows_t[k], bias_t[k]
        m = len(group)
        if e < 0 or len(row) != m or any(w != Fraction(1, m) for w in row.values()):
            return None
        squared = set()
        for j in row:
            cj = _centred(p[1][j], p[2][j])
            if cj is None or cj[1] != group or cj[2] not in (s, -s):
                return None
            squared.add(cj[0])
        if squared != set(group):
            return None
        outs.append((c, group, e / (s * s), 1 if s > 0 else -1))
    return outs


def _reads(x, kind):
    return x.kind == kind or (x.kind == "linear" and x.inputs and x.inputs[0].kind == kind)


def rewrite_layer_norms(root):
    """Turns every division / product node reachable from `root` that is a layer norm into
    layer_norm nodes (in place). Returns how many were rewritten."""
    count = 0
    for x in ir.topological([root]):
        if x.kind not in ("div", "mul") or len(x.inputs) != 2:
            continue
        if x.kind == "mul" and not any(_reads(i, "rsqrt") for i in x.inputs):
            continue
        found = _matches(x, inverse=x.kind == "mul")
        if found is None:
            continue
        base, outs = found
        groups = []
        for _, g, eps, _ in outs:
            if (g, eps) not in groups:
                groups.append((g, eps))
        parts = []
        for g, eps in groups:
            src = ir.Node("linear", [base], len(g), x.where, rows=ir.selection_rows(g), bias=None)
            parts.append(ir.Node("layer_norm", [src], len(g), x.where, eps=eps, gamma=None,
                                 beta=None))
        cat = parts[0] if len(parts) == 1 else ir.Node("concat", parts, sum(p.dim for p in parts),
                                                       x.where)
        offset, k = {}, 0
        for g, eps in groups:
            offset[(g, eps)] = k
            k += len(g)
        rows = [{offset[(g, eps)] + g.index(c): Fraction(sign)} for c, g, eps, sign in outs]
        x.kind = "linear"
        x.inputs = [cat]
        x.attrs = {"rows": rows, "bias": None}
        count += 1
    return count
