"""The importer's intermediate representation: positionwise computation nodes and attention heads.

Every value a module computes from its input at each position becomes a Node holding a flat
vector of `dim` coordinates per position: the token embedding ("tok", one exact row per symbol),
the positional features ("pos", one formula per coordinate), linear maps with exact sparse
matrices, sums, products, activations, layer norms, concatenations, and attention ("attn": the
heads' outputs, concatenated). Tensors of any shape are views of a node (values.py keeps, for
each element, the coordinate of the node it is). emit.py cuts the nodes into attnprop's layers.

A Form is an affine map of one node, `M x + bias`, possibly scaled by a constant r*sqrt(s) and by
a formula in n (beta): what a head's query, key or value is. `canonical` moves it down through
linear maps and scalings to the node they start from, so that attnprop's heads read that node
from the state, as its score's Q, K and its value's V.

All numbers are exact Fractions; rows are dicts {column: Fraction} without zeros.
"""
import itertools
from fractions import Fraction

from . import formula as fm

_ids = itertools.count()


class Node:
    """One positionwise value (or attention output), `dim` coordinates per position."""

    def __init__(self, kind, inputs, dim, where=None, **attrs):
        self.id = next(_ids)
        self.kind = kind
        self.inputs = list(inputs)
        self.dim = int(dim)
        self.where = where        # the trace Op that made it (for messages)
        self.attrs = attrs

    def __getattr__(self, name):
        attrs = self.__dict__.get("attrs")
        if attrs is not None and name in attrs:
            return attrs[name]
        raise AttributeError(name)

    def __repr__(self):
        return "Node#%d(%s, dim=%d)" % (self.id, self.kind, self.dim)


#: Node kinds that attnprop's graph maps have (possibly as a few ops); the others exist only
#: until a rewrite turns them into these (layer norm from its parts) and are refused otherwise.
EMITTABLE = {"tok", "pos", "linear", "add", "sub", "mul", "scale", "relu", "tanh", "gelu", "erf",
             "step", "floor", "sigmoid", "layer_norm", "concat", "attn"}


# --- exact sparse linear algebra ---------------------------------------------------------------

def selection_rows(indices):
    """Rows selecting coordinates `indices` (a 0/1 matrix)."""
    return [{int(c): Fraction(1)} for c in indices]


def compose(outer, inner_rows, inner_bias):
    """(rows, bias) of outer o (inner_rows x + inner_bias): outer is a list of rows over the
    inner map's outputs."""
    rows, bias = [], []
    for row in outer:
        acc = {}
        b = Fraction(0)
        for c, w in row.items():
            for c2, w2 in inner_rows[c].items():
                v = acc.get(c2, Fraction(0)) + w * w2
                if v:
                    acc[c2] = v
                else:
                    acc.pop(c2, None)
            if inner_bias is not None:
                b += w * inner_bias[c]
        rows.append(acc)
        bias.append(b)
    return rows, bias


def is_identity(rows, dim):
    return len(rows) == dim and all(len(r) == 1 and r.get(k) == 1 for k, r in enumerate(rows))


def zero_bias(bias):
    return bias is None or all(b == 0 for b in bias)


# --- scales r * sqrt(s) -----------------------------------------------------------------------

def scale_mul(a, b):
    """(r1 sqrt(s1)) (r2 sqrt(s2)), normalised so that s has no square factor we can see."""
    r, s = a[0] * b[0], a[1] * b[1]
    return _normalise(r, s)


def _normalise(r, s):
    if s == 0 or r == 0:
        return (Fraction(0), Fraction(1))
    import math
    num, den = s.numerator, s.denominator
    rn, rd = math.isqrt(num), math.isqrt(den)
    if rn * rn == num and rd * rd == den:
        return (r * Fraction(rn, rd), Fraction(1))
    return (r, s)


ONE_SCALE = (Fraction(1), Fraction(1))


class Form:
    """scale * beta(n) * (M x + bias) for the node x = base; rows M over base.dim."""

    def __init__(self, base, rows, bias=None, scale=ONE_SCALE, beta=None, chain=()):
        self.base = base
        self.rows = rows
        self.bias = list(bias) if bias is not None else [Fraction(0)] * len(rows)
        self.scale = scale
        self.beta = beta
        #: (node, rows, bias) above `base` that give the same head (only linear maps between):
        #: a head may read one of them instead, when the state carries it anyway (emit.py)
        self.chain = list(chain)

    @property
    def dim(self):
        return len(self.rows)


class FormError(ValueError):
    """A query, key or value that attnprop's heads cannot read (with the node responsible)."""

    def __init__(self, message, node):
        super().__init__(message)
        self.node = node


def canonical(form, hints, through_nscale=True):
    """The form moved down through linear maps, constant scalings and scalings by beta(n), to
    the first node that is none of these. With hints, a scaling by a constant that stands for
    an irrational number (1/sqrt(m), read from the double nearest to it) contributes that number
    to form.scale; otherwise its exact value multiplies the rows. A scaling by beta(n) needs the
    affine part to have no bias there (beta (M x) + 0 = beta M x); FormError otherwise."""
    base, rows, bias = form.base, form.rows, list(form.bias)
    scale, beta = form.scale, form.beta
    chain = list(form.chain)
    while True:
        k = base.kind
        if k in ("linear", "scale", "nscale"):
            chain.append((base, rows, list(bias)))
        if k == "linear":
            rows, extra = compose(rows, base.rows, base.bias)
            bias = [b + e for b, e in zip(bias, extra)]
            base = base.inputs[0]
        elif k == "scale":
            if hints and base.hint is not None:
                scale = scale_mul(scale, base.hint)
                chain = []  # the nodes above do not carry this factor
            elif base.factor is None:
                raise FormError("a value scaled by an irrational constant is used where "
                                "attnprop needs exact numbers (only attention scores may be "
                                "scaled by square roots)", base)
            else:
                f = base.factor
                rows = [{c: w * f for c, w in r.items()} for r in rows]
            base = base.inputs[0]
        elif k == "nscale" and through_nscale:
            if not zero_bias(bias):
                raise FormError("the input is scaled by %s before a map with a nonzero bias "
                                "(beta (W x) + b is not beta times an affine map of x)" %
                                _shown(base.beta), base)
            beta = base.beta if beta is None else fm.mul(beta, base.beta)
            chain = []
            base = base.inputs[0]
        else:
            return Form(base, rows, bias, scale, beta, chain)


def _shown(f):
    try:
        return fm.render(f)
    except ValueError:
        return repr(f)


class Head:
    """One attention head: softmax over keys of scale * beta(n) * q_i . k_j, value v."""

    def __init__(self, q, k, v, scale, beta, where, causal=False):
        self.q, self.k, self.v = q, k, v
        self.scale = scale
        self.beta = beta
        self.where = where
        self.causal = causal  # position i attends to the keys j <= i alone


def topological(nodes):
    """The nodes reachable from `nodes` (through inputs and heads' forms), inputs first."""
    seen, order = set(), []

    def deps(x):
        out = list(x.inputs)
        if x.kind == "attn":
            for h in x.heads:
                out.extend([h.q.base, h.k.base, h.v.base])
        return out

    stack = [(x, False) for x in reversed(nodes)]
    while stack:
        x, done = stack.pop()
        if done:
            order.append(x)
            continue
        if x.id in seen:
            continue
        seen.add(x.id)
        stack.append((x, True))
        for d in reversed(deps(x)):
            if d.id not in seen:
                stack.append((d, False))
    return order
