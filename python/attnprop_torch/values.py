"""What the importer knows about each tensor of a traced forward.

Every tensor becomes a Val of one kind:

- const   independent of the input and of n: parameters, buffers, constants (exact numbers)
- pos     a function of the positions and n only: one formula per element (formula.py)
- tok     a function of the input token alone (the ids, comparisons of them): per-symbol values
- stream  computed from the input: a view of an ir.Node (one node coordinate per element)
- scores  attention scores q_i . k_j (two sequence axes), before the softmax
- weights the softmax of scores, waiting to be applied to values
- opaque  something that may be ignored but not used (attention weights nn.MultiheadAttention
          returns)
- poison  the result of an operation already refused (no second message)

Shapes. A sequence axis (length n, or an affine function of n) is an axis whose size differs
between the traced lengths. Vals store their elements in `ph`, a numpy array of the tensor's shape
with every sequence axis replaced by a placeholder of size 1, and `seq`, one entry per axis:
None for a fixed axis, else the axis' label (pos formulas use the label as the variable of that
axis' index). Reshapes, permutations, indexing and broadcasting of fixed axes are done on `ph`
by numpy, whatever the element type.
"""
import itertools

import numpy as np

from . import formula as fm

_labels = itertools.count()


def fresh_label():
    return "s%d" % next(_labels)


class Val:
    def __init__(self, kind, ph=None, seq=None, dtype="float", **attrs):
        self.kind = kind
        self.ph = ph
        self.seq = tuple(seq) if seq is not None else (tuple([None] * ph.ndim) if ph is not None
                                                        else ())
        self.dtype = dtype        # "float", "int" or "bool" (const, pos, tok)
        self.__dict__.update(attrs)

    @property
    def ndim(self):
        return self.ph.ndim

    def seq_axes(self):
        return [a for a, s in enumerate(self.seq) if s is not None]

    def __repr__(self):
        return "Val(%s, ph=%s, seq=%s)" % (self.kind, None if self.ph is None else self.ph.shape,
                                           self.seq)


POISON = Val("poison")


def obj_array(shape, fill=None):
    a = np.empty(shape, dtype=object)
    if fill is not None:
        for idx in np.ndindex(*shape):
            a[idx] = fill
    return a


def obj_map(fn, *arrays):
    """fn applied elementwise to broadcast arrays, as an object array."""
    arrays = np.broadcast_arrays(*arrays) if len(arrays) > 1 else arrays
    out = obj_array(arrays[0].shape)
    for idx in np.ndindex(*arrays[0].shape):
        out[idx] = fn(*[a[idx] for a in arrays])
    return out


def relabel(val, mapping):
    """A pos Val with its formulas' axis variables renamed (old label -> new label)."""
    if val.kind != "pos" or not mapping:
        return val.ph
    sub = {old: fm.var(new) for old, new in mapping.items() if old != new}
    if not sub:
        return val.ph
    return obj_map(lambda f: fm.subst(f, sub), val.ph)


def with_ph(val, ph, seq):
    """A Val like `val` with other elements and axes."""
    out = Val(val.kind, ph, seq, val.dtype)
    for k, v in val.__dict__.items():
        if k not in ("kind", "ph", "seq", "dtype"):
            out.__dict__[k] = v
    return out


class ShapeError(ValueError):
    pass


def placeholder(shape, seqflags):
    return tuple(1 if s else int(d) for d, s in zip(shape, seqflags))


def reshape(val, in_shape, out_shape, out_seq):
    """val reshaped from the real shape in_shape (trace 0) to out_shape whose sequence axes are
    out_seq (booleans). Each sequence axis must stay an axis of its own with the same number of
    elements before it and after it within the fixed axes; ShapeError otherwise."""
    in_seq = [s is not None for s in val.seq]
    chunks_in = _chunks(in_shape, in_seq)
    chunks_out = _chunks(out_shape, out_seq)
    if len(chunks_in) != len(chunks_out) or any(
            int(np.prod(a)) != int(np.prod(b)) for a, b in zip(chunks_in, chunks_out)):
        raise ShapeError("a reshape from %s to %s mixes the sequence axis with other axes" %
                         (tuple(in_shape), tuple(out_shape)))
    labels = [s for s in val.seq if s is not None]
    ph = val.ph.reshape(placeholder(out_shape, out_seq))
    it = iter(labels)
    seq = [next(it) if s else None for s in out_seq]
    return with_ph(val, ph, seq)


def _chunks(shape, seqflags):
    chunks, cur = [], []
    for d, s in zip(shape, seqflags):
        if s:
            chunks.append(cur)
            cur = []
        else:
            cur.append(int(d))
    chunks.append(cur)
    return chunks


def permute(val, perm):
    perm = [p % val.ndim for p in perm]
    return with_ph(val, val.ph.transpose(perm), [val.seq[p] for p in perm])


def broadcast_to(val, out_shape, out_seq):
    """val broadcast (numpy rules, aligned right) to out_shape; new sequence axes get fresh
    labels."""
    ph_shape = placeholder(out_shape, out_seq)
    lead = len(out_shape) - val.ndim
    seq = []
    mapping = {}
    for a, s in enumerate(out_seq):
        src = a - lead
        old = val.seq[src] if src >= 0 else None
        if s:
            lab = old if old is not None else fresh_label()
            seq.append(lab)
        else:
            if old is not None:
                raise ShapeError("a sequence axis is broadcast to a fixed size")
            seq.append(None)
    ph = np.broadcast_to(val.ph, ph_shape)
    return with_ph(val, ph, seq) if not mapping else with_ph(val, relabel(val, mapping), seq)


def align(vals, out_shape, out_seq):
    """The elements of several Vals broadcast to the result shape, with their sequence axes
    given common labels: (list of ph arrays, result seq)."""
    ph_shape = placeholder(out_shape, out_seq)
    labels = [fresh_label() if s else None for s in out_seq]
    phs = []
    for v in vals:
        lead = len(out_shape) - v.ndim
        mapping = {}
        for a in range(v.ndim):
            lab = v.seq[a]
            if lab is not None:
                if labels[a + lead] is None:
                    raise ShapeError("a sequence axis meets a fixed axis")
                mapping[lab] = labels[a + lead]
        ph = relabel(v, mapping) if v.kind == "pos" else v.ph
        phs.append(np.broadcast_to(ph, ph_shape))
    return phs, labels


def concat(vals, axis, out_seq):
    """Concatenation along a fixed axis (numpy); the other axes line up."""
    ndim = vals[0].ndim
    axis %= ndim
    labels = [fresh_label() if s else None for s in out_seq]
    phs = []
    for v in vals:
        if v.seq[axis] is not None:
            raise ShapeError("concatenation along the sequence axis")
        mapping = {v.seq[a]: labels[a] for a in range(ndim) if v.seq[a] is not None}
        phs.append(relabel(v, mapping) if v.kind == "pos" else v.ph)
    return np.concatenate(phs, axis=axis), labels
