"""Attention: scores, masks, softmax, the weighted sum of values, nn.MultiheadAttention.

Scores are a Val of kind "scores" whose elements (one per batch or head index) are ScoreEntry
objects: the query and key as ir.Form objects over the streams they come from. Scaling them by a
constant multiplies `scale` (r, s) = r*sqrt(s); by a number computed from the length multiplies
`beta`; adding a mask records its predicate (a formula that is nonzero where a key is hidden).
softmax over the key axis gives "weights"; a product of weights with a stream over the key axis
gives one ir.Head per index, collected in an "attn" node.

Masks are decided on their formulas: one that is zero by construction hides nothing and is
accepted; a causal one (position i does not see the positions after it, at every length tried)
becomes the head's causal mask (the layer's "mask": "causal"); any other is refused with what
it hides, since attnprop's model format has no other mask. A mask is never dropped.
"""
import inspect
from fractions import Fraction

import numpy as np
import torch.nn.functional as F

from . import formula as fm
from . import ir
from . import values as vl
from .interp import Refuse, Scalar
from .ops import arg, handler, to_pos
from .ops_linear import fracs
from .values import Val, fresh_label


CAUSAL_MASK = "a causal mask (position i does not see the positions after it)"


class ScoreEntry:
    def __init__(self, q, k):
        self.q, self.k = q, k


def _sel_rows(ph_vector):
    return ir.selection_rows([int(x) for x in ph_vector])


def make_scores(I, op, a, b, out):
    """a @ b for streams a (..., n, d) and b (..., d, n): the scores of queries a, keys b."""
    if a.sel is not None or b.sel is not None:
        raise Refuse("attention scores from one position only")
    oa, ob = a.ph.shape[:-2], b.ph.shape[:-2]
    O = np.broadcast_shapes(oa, ob)
    A = np.broadcast_to(a.ph, O + a.ph.shape[-2:])
    B = np.broadcast_to(b.ph, O + b.ph.shape[-2:])
    ph = np.empty(O + (1, 1), dtype=object)
    for o in np.ndindex(*O):
        q = ir.Form(a.node, _sel_rows(A[o][0, :]))
        k = ir.Form(b.node, _sel_rows(B[o][:, 0]))
        ph[o + (0, 0)] = ScoreEntry(q, k)
    lead_a, lead_b = len(O) - len(oa), len(O) - len(ob)
    for k in range(len(O)):
        la = a.seq[k - lead_a] if k >= lead_a else None
        lb = b.seq[k - lead_b] if k >= lead_b else None
        if la is not None or lb is not None:
            raise Refuse("attention scores with another sequence axis")
    qlab, klab = fresh_label(), fresh_label()
    seq = [None] * len(O) + [qlab, klab]
    return Val("scores", ph, seq, qlab=qlab, klab=klab, scale=ir.ONE_SCALE, beta=None,
               masks=[], where=op)


def _check_structure(v):
    if v.masks and v.ph.ndim != len(v.seq):
        raise Refuse("reshaping masked attention scores")


def scores_binary(I, op, kind, a, b, out):
    s_first = isinstance(a, Val) and a.kind == "scores"
    s, c = (a, b) if s_first else (b, a)
    if isinstance(c, Val) and c.kind in ("scores", "weights", "stream", "tok", "opaque"):
        raise Refuse("attention scores combined with a value computed from the input (only "
                     "constants, masks and formulas in n may scale them)")
    if s.kind == "weights":
        raise Refuse("attention weights changed after the softmax (%s)" % kind)
    from .ops_nn import _scalar_like
    sc = _scalar_like(c) if c is not None else None
    if kind in ("mul", "div") and sc is not None and (kind == "mul" or s_first):
        if sc.f is None:
            raise Refuse("attention scores scaled by a number that is not finite")
        res = vl.with_ph(s, s.ph, s.seq)
        if not sc.const:
            f = sc.f if kind == "mul" else fm.div(fm.ONE, sc.f)
            res.beta = f if s.beta is None else fm.mul(s.beta, f)
            return res
        if sc.sqrt is not None:
            h = sc.sqrt if kind == "mul" else (1 / (sc.sqrt[0] * sc.sqrt[1]), sc.sqrt[1])
        elif sc.f.kind != "num":
            raise Refuse("attention scores scaled by an irrational constant that is not a "
                         "square root")
        else:
            v = sc.f.value
            if v == 0 and kind == "div":
                raise Refuse("attention scores divided by zero")
            h = (v if kind == "mul" else 1 / v, Fraction(1))
        res.scale = ir.scale_mul(s.scale, h)
        return res
    if kind in ("add", "sub") and isinstance(c, Val) and c.kind in ("pos", "const"):
        return _add_mask(I, op, s, to_pos(c), out, negate=(kind == "sub"))
    raise Refuse("attention scores in %s with %s: only scaling by constants and masks are "
                 "supported" % (kind, "a number" if sc is not None else "a tensor"))


def _mask_predicates(s, mask, out, additive):
    """The mask's predicate (nonzero where a key is hidden) per element of the scores, in the
    scores' own labels."""
    try:
        phs, labels = vl.align([s, mask], out.sizes, out.seq)
    except vl.ShapeError as e:
        raise Refuse("a mask of another shape: %s" % e)
    sub = {}
    for lab, own in zip(labels, s.seq):
        if lab is not None and own is not None:
            sub[lab] = fm.var(own)
    m = phs[1]
    res = np.empty(m.shape, dtype=object)
    for idx in np.ndindex(*m.shape):
        f = fm.subst(m[idx], sub)
        res[idx] = _hidden(f) if additive else fm.cmp("!=", f, fm.ZERO)
    return res


def _hidden(f):
    """For an additive mask entry f: the predicate "f is -inf"; Refuse for finite nonzero
    terms (position-dependent score terms are not masks)."""
    if f == fm.ZERO:
        return fm.ZERO
    if f.kind == "ninf":
        return fm.ONE
    if f.kind == "where":
        c, a, b = f.args
        pa, pb = _hidden(a), _hidden(b)
        return fm.where(c, pa, pb)
    raise Refuse("a position-dependent term added to the attention scores (a relative position "
                 "bias or an additive mask with finite values) is not supported")


def _add_mask(I, op, s, mask, out, negate=False):
    res = vl.with_ph(s, s.ph, s.seq)
    preds = _mask_predicates(s, mask, out, additive=True)
    res.masks = list(s.masks) + [(preds, op)]
    return res


def _scores_mask(I, op, s, mask, value, out):
    from .ops_nn import _scalar_like
    sc = _scalar_like(value)
    if sc is None or sc.f is None or sc.f.kind != "ninf":
        raise Refuse("masked_fill of attention scores with a value other than -inf")
    if mask.kind in ("tok", "stream"):
        raise Refuse("an attention mask computed from the input tokens (padding) is not "
                     "supported")
    res = vl.with_ph(s, s.ph, s.seq)
    res.masks = list(s.masks) + [(_mask_predicates(s, to_pos(mask), out, False), op)]
    return res


def _scores_where(I, op, cond, a, b, out):
    from .ops_nn import _scalar_like
    if isinstance(a, Val) and a.kind == "scores":
        other, s, invert = b, a, True
    else:
        other, s, invert = a, b, False
    sc = _scalar_like(other)
    if sc is None or sc.f is None or sc.f.kind != "ninf":
        raise Refuse("where() on attention scores with a value other than -inf")
    if cond.kind in ("tok", "stream"):
        raise Refuse("an attention mask computed from the input tokens (padding) is not "
                     "supported")
    preds = _mask_predicates(s, to_pos(cond), out, False)
    if invert:
        preds = vl.obj_map(lambda f: fm.cmp("==", f, fm.ZERO), preds)
    res = vl.with_ph(s, s.ph, s.seq)
    res.masks = list(s.masks) + [(preds, op)]
    return res


def describe_mask(pred, qlab, klab, tables=None):
    """None when the predicate is zero by construction, else what it hides (a phrase)."""
    f = fm.subst(pred, {qlab: fm.var("q"), klab: fm.var("k")})
    if f == fm.ZERO:
        return None
    hidden = set()
    shown = set()
    try:
        for n in range(1, 9):
            for q in range(n):
                for k in range(n):
                    (hidden if fm.evaluate(f, {"q": q, "k": k, "n": n}, tables) else
                     shown).add((n, q, k))
    except (ArithmeticError, KeyError, ValueError):
        return "an attention mask"
    causal = {(n, q, k) for n in range(1, 9) for q in range(n) for k in range(n) if k > q}
    if hidden == causal:
        return CAUSAL_MASK
    if not hidden:
        return "an attention mask that is not zero by construction"
    return "an attention mask"


def check_masks(I, v, op):
    """True when the scores carry a causal mask (and no other), False when no mask hides
    anything; refuses any other mask."""
    causal = False
    for preds, where in v.masks:
        for f in preds.ravel():
            what = describe_mask(f, v.qlab, v.klab, I.tables)
            if what == CAUSAL_MASK:
                causal = True
            elif what is not None:
                raise Refuse("%s is not supported: attnprop's model format has causal masks "
                             "only, and the mask is not dropped" % what, op=where)
    return causal


def softmax_scores(I, op, v, dim, out):
    if v.seq[dim] != v.klab:
        raise Refuse("a softmax of attention scores over the queries (not the keys)")
    causal = check_masks(I, v, op)
    res = vl.with_ph(v, v.ph, v.seq)
    res.kind = "weights"
    res.causal = causal
    return res


def apply_weights(I, op, w, v, out):
    """weights @ values: one head per index of the other axes."""
    if v.sel is not None:
        raise Refuse("attention to one position only")
    if w.seq[-1] != w.klab or w.seq[-2] != w.qlab:
        raise Refuse("attention weights with the key axis not last")
    if v.seq[-2] is None or v.seq[-1] is not None:
        raise Refuse("attention values without the sequence axis before the features")
    ow, ov = w.ph.shape[:-2], v.ph.shape[:-2]
    O = np.broadcast_shapes(ow, ov)
    W = np.broadcast_to(w.ph, O + w.ph.shape[-2:])
    V = np.broadcast_to(v.ph, O + v.ph.shape[-2:])
    heads = []
    for o in np.ndindex(*O):
        e = W[o][0, 0]
        vform = ir.canonical(ir.Form(v.node, _sel_rows(V[o][0, :])), hints=False)
        heads.append(_head(e.q, e.k, vform, w.scale, w.beta, op, getattr(w, "causal", False)))
    dv = v.ph.shape[-1]
    node = ir.Node("attn", [], len(heads) * dv, op, heads=heads)
    ph = np.arange(node.dim, dtype=np.int64).reshape(O + (1, dv))
    seq = [None] * len(O) + [fresh_label(), None]
    return Val("stream", ph, seq, node=node, sel=None)


def _head(q, k, v, scale, beta, op, causal=False):
    q = ir.canonical(q, hints=True)
    k = ir.canonical(k, hints=True)
    for f in (q, k):
        scale = ir.scale_mul(scale, f.scale)
        if f.beta is not None:
            beta = f.beta if beta is None else fm.mul(beta, f.beta)
    q = ir.Form(q.base, q.rows, q.bias, chain=q.chain)
    k = ir.Form(k.base, k.rows, k.bias, chain=k.chain)
    if v.beta is not None or v.scale != ir.ONE_SCALE:
        raise Refuse("attention values scaled by a number computed from the length")
    return ir.Head(q, k, v, scale, beta, op, causal)


# --- nn.MultiheadAttention --------------------------------------------------------------------

_MHA_PARAMS = list(inspect.signature(F.multi_head_attention_forward).parameters)


@handler("multi_head_attention_forward")
def h_mha(I, op, args, kwargs, out):
    p = dict(zip(_MHA_PARAMS, args))
    p.update(kwargs)
    for key, what in (("bias_k", "add_bias_kv (the extra key and value bias_k, bias_v)"),
                      ("static_k", "static_k"), ("static_v", "static_v")):
        if p.get(key) is not None:
            raise Refuse("%s is not supported" % what)
    if p.get("add_zero_attn"):
        raise Refuse("add_zero_attn (an extra zero key and value) is not supported")
    if p.get("training") and _num(p.get("dropout_p")):
        raise Refuse("attention dropout in training mode")
    causal = False
    for key in ("attn_mask", "key_padding_mask"):
        m = p.get(key)
        if m is not None:
            causal = _mha_mask(I, op, key, m) or causal
    q_in, k_in, v_in = (I.as_stream(p[x], op) for x in ("query", "key", "value"))
    H = int(p["num_heads"].value)
    if p.get("use_separate_proj_weight"):
        ws = [fracs(p[x]) for x in ("q_proj_weight", "k_proj_weight", "v_proj_weight")]
    else:
        W = fracs(p["in_proj_weight"])
        E = W.shape[1]
        ws = [W[0:E], W[E:2 * E], W[2 * E:3 * E]]
    E = ws[0].shape[0]
    bias = p.get("in_proj_bias")
    bs = None
    if bias is not None:
        B = list(fracs(bias).reshape(-1))
        bs = [B[0:E], B[E:2 * E], B[2 * E:3 * E]]
    hd = E // H
    cols = []
    for x in (q_in, k_in, v_in):
        if x.sel is not None or x.seq[0] is None or any(s is not None for s in x.seq[1:]):
            raise Refuse("the query, key and value must be sequences (L, N, E)")
        if x.ph.ndim == 3 and x.ph.shape[1] != 1:
            raise Refuse("a batch of %d sequences (attnprop evaluates one)" % x.ph.shape[1])
        cols.append([int(c) for c in x.ph.reshape(-1)])
    heads = []
    for h in range(H):
        forms = []
        for part, x in enumerate((q_in, k_in, v_in)):
            rows = []
            for r in range(h * hd, (h + 1) * hd):
                row = {}
                for c, w in enumerate(ws[part][r]):
                    if w:
                        key = cols[part][c]
                        row[key] = row.get(key, Fraction(0)) + w
                rows.append({k: w for k, w in row.items() if w})
            b = bs[part][h * hd:(h + 1) * hd] if bs is not None else None
            form = ir.Form(x.node, rows, b)
            try:
                forms.append(ir.canonical(form, hints=part < 2))
            except ir.FormError as e:
                if part == 0 and e.node.kind == "nscale":
                    raise Refuse("the query is scaled by %s before in_proj, whose query bias is "
                                 "nonzero: %s (W_q x) + b_q is not %s times a query, so it is "
                                 "not attnprop's length scaling of the score" %
                                 ((ir._shown(e.node.beta),) * 3))
                raise
        heads.append(_head(forms[0], forms[1], forms[2], (Fraction(1), Fraction(1, hd)), None,
                           op, causal))
    attn = ir.Node("attn", [], E, op, heads=heads)
    Wo = fracs(p["out_proj_weight"])
    bo = p.get("out_proj_bias")
    bo = list(fracs(bo).reshape(-1)) if bo is not None else None
    rows = [{c: w for c, w in enumerate(Wo[r]) if w} for r in range(Wo.shape[0])]
    node = ir.Node("linear", [attn], Wo.shape[0], op, rows=rows, bias=bo)
    shape = q_in.ph.shape[:-1] + (Wo.shape[0],)
    res = Val("stream", np.arange(node.dim, dtype=np.int64).reshape(shape), q_in.seq, node=node,
              sel=None)
    weights = Val("opaque") if isinstance(out, tuple) and out[1] is not None else None
    return (res, weights) if isinstance(out, tuple) else res


def _num(x):
    return x.value if isinstance(x, Scalar) else x


def _mha_mask(I, op, key, m):
    """True for a causal attn_mask, False for a mask that hides nothing; refuses others."""
    causal = False
    if m.kind in ("tok", "stream"):
        raise Refuse("a %s computed from the input tokens (padding) is not supported" % key)
    mp = to_pos(m)
    seq = mp.seq
    axes = [a for a, s in enumerate(seq) if s is not None]
    for idx in np.ndindex(*mp.ph.shape):
        f = mp.ph[idx]
        if m.dtype == "bool":
            pred = fm.cmp("!=", f, fm.ZERO)
        else:
            pred = _hidden(f)
        if key == "key_padding_mask":
            labs = {seq[axes[-1]]: fm.var("k")} if axes else {}
            pred = fm.subst(pred, labs)
            what = describe_mask(pred, "q", "k", I.tables)
        else:
            if len(axes) == 2:
                what = describe_mask(pred, seq[axes[0]], seq[axes[1]], I.tables)
            else:
                what = describe_mask(pred, seq[axes[0]] if axes else "q", "k", I.tables)
        if what == CAUSAL_MASK and key == "attn_mask":
            causal = True
        elif what is not None:
            raise Refuse("%s (%s=) is not supported: attnprop's model format has causal masks "
                         "only, and the mask is not dropped" % (what, key))
    return causal


__all__ = ["make_scores", "apply_weights", "softmax_scores", "scores_binary", "h_mha",
           "handler", "arg"]
