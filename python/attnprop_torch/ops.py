"""How each recorded torch call acts on the importer's values: dispatch, shapes and factories.

A handler receives the interpreter, the call (trace.Op), its arguments with tensors replaced by
values.Val and Python numbers by interp.Scalar, and the Shape of its result(s); it returns the
Val(s) of the result, or raises interp.Refuse with the reason. Arithmetic, linear algebra,
normalisation and attention are in ops_nn.py.
"""
from fractions import Fraction

import numpy as np

from . import formula as fm
from . import values as vl
from .interp import Refuse, Scalar
from .values import Val, fresh_label

HANDLERS = {}

#: Calls whose result is no tensor and tells nothing about the data: ignored.
NON_TENSOR = {"size", "dim", "__len__", "numel", "is_floating_point", "is_complex", "stride",
              "element_size", "get_device", "data_ptr", "is_contiguous", "__repr__", "__hash__",
              "__iter__", "__reversed__", "nelement", "ndimension", "has_names", "__dir__",
              "storage_offset", "is_same_size", "__format__", "_is_view", "is_shared",
              "is_pinned", "is_signed", "__array_priority__", "__reduce_ex__", "__deepcopy__"}
#: Calls whose result reveals values: refused on values computed from the input.
DATA_DEPENDENT = {"item", "tolist", "__bool__", "__int__", "__float__", "__index__", "numpy",
                  "__array__", "equal", "allclose", "__nonzero__"}


def handler(*names):
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco


def arg(args, kwargs, i, name, default=None):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def const_int(x, what):
    """The integer value of a constant Scalar, int or 0-d constant tensor."""
    if isinstance(x, Scalar):
        if not x.const:
            raise Refuse("%s depends on n" % what)
        return int(x.value)
    if isinstance(x, Val) and x.kind == "const" and x.ph.size == 1:
        return int(x.ph.reshape(-1)[0])
    if isinstance(x, (int, np.integer)):
        return int(x)
    raise Refuse("%s is not a constant integer" % what)


def dispatch(I, op, args, kwargs, out):
    h = HANDLERS.get(op.name)
    if h is not None:
        return h(I, op, args, kwargs, out)
    if op.name in NON_TENSOR or op.name.startswith("getattr:") and out is None:
        return None
    if op.name in DATA_DEPENDENT:
        if any(isinstance(a, Val) and a.kind in ("stream", "tok", "scores", "weights")
               for a in _flat(args)):
            raise Refuse("%s() of a value computed from the input: control flow or numbers that "
                         "depend on the input tokens are not supported" % op.name)
        return None
    if op.name.startswith("getattr:"):
        raise Refuse("the tensor attribute %s is not supported" % op.name[8:])
    if out is None and not any(isinstance(a, Val) and a.kind != "const" for a in _flat(args)):
        return None
    raise Refuse("%s is not supported" % _pretty(op.name))


def _pretty(name):
    return name + "()" if not name.startswith("__") else name


def _flat(x):
    if isinstance(x, (list, tuple)):
        for e in x:
            yield from _flat(e)
    elif isinstance(x, dict):
        for e in x.values():
            yield from _flat(e)
    else:
        yield x


def to_pos(v):
    """A const Val as a pos Val (constant formulas), for broadcasting over positions."""
    if v.kind == "pos":
        return v
    if v.kind != "const":
        raise Refuse("a %s value where a positional value is expected" % v.kind)
    ph = np.empty(v.ph.shape, dtype=object)
    for idx in np.ndindex(*v.ph.shape):
        x = v.ph[idx]
        ph[idx] = fm.num(x if isinstance(x, Fraction) else
                         (Fraction(float(x)) if v.dtype == "float" else int(x)))
    return Val("pos", ph, v.seq, v.dtype)


# --- identities and dtype conversions ----------------------------------------------------------

@handler("contiguous", "clone", "detach", "detach_", "requires_grad_", "cpu", "cuda",
         "getattr:data", "alias", "pin_memory", "coalesce", "share_memory_", "align_to",
         "rename", "refine_names", "__deepcopy__")
def h_identity(I, op, args, kwargs, out):
    return args[0]


@handler("to", "type", "type_as", "float", "double", "half", "bfloat16", "int", "long", "bool",
         "short", "byte", "char")
def h_convert(I, op, args, kwargs, out):
    v = args[0]
    if not isinstance(out, vl_shape_type()):
        return None
    return convert(v, out.dtype)


def vl_shape_type():
    from .interp import Shape
    return Shape


def convert(v, dtype):
    """v as a tensor of dtype "float", "int" or "bool"."""
    if v.dtype == dtype or v.kind in ("scores", "weights", "opaque"):
        return v
    if v.kind == "const":
        if dtype == "float":
            ph = v.ph.astype(object) if v.ph.dtype == object else v.ph.astype(np.float64)
        elif dtype == "bool":
            ph = (v.ph != 0)
        else:
            ph = np.trunc(v.ph.astype(np.float64)).astype(np.int64) if v.ph.dtype != object \
                else np.vectorize(lambda q: int(q), otypes=[np.int64])(v.ph)
        return Val("const", ph, v.seq, dtype, name=getattr(v, "name", None),
                   f32=getattr(v, "f32", False))
    if v.kind == "pos":
        if dtype == "bool":
            ph = vl.obj_map(lambda f: fm.cmp("!=", f, fm.ZERO), v.ph)
        elif dtype == "int" and v.dtype == "float":
            def trunc(f):
                if fm.is_integer(f):
                    return f
                return fm.where(fm.cmp(">=", f, fm.ZERO), fm.func("floor", f),
                                fm.neg(fm.func("floor", fm.neg(f))))
            ph = vl.obj_map(trunc, v.ph)
        else:
            ph = v.ph
        return Val("pos", ph, v.seq, dtype)
    if v.kind == "tok":
        if dtype == "bool":
            ph = vl.obj_map(lambda t: tuple(int(x != 0) for x in t), v.ph)
        elif dtype == "int":
            ph = vl.obj_map(lambda t: tuple(int(x) for x in t), v.ph)
        else:
            ph = v.ph
        return Val("tok", ph, v.seq, dtype)
    if v.kind == "stream":
        if dtype == "float":
            return v
        raise Refuse("converting a value computed from the input to %s (rounding or a test of "
                     "the data) is not supported" % dtype)
    return v


# --- reshapes, permutations, broadcasting -------------------------------------------------------

def in_shape(op, i=0):
    return tuple(op.args[i].shape)


def reshape_to(v, shape_in, out):
    if v.kind == "const" and not any(out.seq):
        return vl.with_ph(v, v.ph.reshape(out.sizes), [None] * out.ndim)
    try:
        return vl.reshape(v, shape_in, out.sizes, out.seq)
    except vl.ShapeError as e:
        raise Refuse(str(e))


@handler("view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "squeeze",
         "squeeze_", "unsqueeze", "unsqueeze_", "ravel", "atleast_1d", "atleast_2d")
def h_reshape(I, op, args, kwargs, out):
    v = args[0]
    if op.name in ("view", "reshape") and len(args) > 1 and isinstance(args[1], str):
        raise Refuse("view(dtype) is not supported")
    res = reshape_to(v, in_shape(op), out)
    if op.name.endswith("_"):
        I.env[id(op.args[0])] = res
    return res


def _perm_of(op, args, kwargs, ndim):
    name = op.name
    if name in ("transpose", "swapaxes", "swapdims", "transpose_"):
        a = const_int(arg(args, kwargs, 1, "dim0"), "a dimension") % ndim
        b = const_int(arg(args, kwargs, 2, "dim1"), "a dimension") % ndim
        perm = list(range(ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return perm
    if name in ("t", "getattr:T", "numpy_T"):
        return list(reversed(range(ndim)))
    if name == "getattr:mT":
        perm = list(range(ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return perm
    if name == "permute":
        dims = args[1:] if len(args) > 2 or not isinstance(args[1], (list, tuple)) else args[1]
        if "dims" in kwargs:
            dims = kwargs["dims"]
        return [const_int(d, "a dimension") % ndim for d in dims]
    if name == "movedim":
        src = arg(args, kwargs, 1, "source")
        dst = arg(args, kwargs, 2, "destination")
        src = [src] if not isinstance(src, (list, tuple)) else list(src)
        dst = [dst] if not isinstance(dst, (list, tuple)) else list(dst)
        src = [const_int(s, "a dimension") % ndim for s in src]
        dst = [const_int(s, "a dimension") % ndim for s in dst]
        order = [d for d in range(ndim) if d not in src]
        perm = [None] * ndim
        for s, d in zip(src, dst):
            perm[d] = s
        it = iter(order)
        return [p if p is not None else next(it) for p in perm]
    raise Refuse("%s is not supported" % name)


@handler("transpose", "swapaxes", "swapdims", "t", "getattr:T", "getattr:mT", "permute",
         "movedim", "transpose_")
def h_permute(I, op, args, kwargs, out):
    v = args[0]
    perm = _perm_of(op, args, kwargs, v.ph.ndim)
    return vl.permute(v, perm)  # scores and weights find their axes by label


@handler("expand", "expand_as", "broadcast_to")
def h_expand(I, op, args, kwargs, out):
    v = args[0]
    if v.kind == "const" and any(out.seq):
        v = to_pos(v)
    if v.kind == "const":
        return vl.with_ph(v, np.broadcast_to(v.ph, out.sizes), [None] * out.ndim)
    try:
        return vl.broadcast_to(v, out.sizes, out.seq)
    except vl.ShapeError as e:
        raise Refuse(str(e))


@handler("repeat")
def h_repeat(I, op, args, kwargs, out):
    v = args[0]
    if v.kind == "const" and any(out.seq):
        v = to_pos(v)
    lead = out.ndim - v.ph.ndim
    ph = v.ph.reshape((1,) * lead + v.ph.shape)
    seq = [None] * lead + list(v.seq)
    reps = []
    for a in range(out.ndim):
        if out.seq[a]:
            if seq[a] is None:
                if ph.shape[a] != 1:
                    raise Refuse("repeat() along the sequence axis")
                seq[a] = fresh_label()
            reps.append(1)
        else:
            if seq[a] is not None:
                raise Refuse("repeat() of the sequence axis")
            reps.append(out.sizes[a] // ph.shape[a])
    return vl.with_ph(v, np.tile(ph, reps), seq)


# --- indexing ---------------------------------------------------------------------------------

def _norm_index(index, ndim):
    items = list(index) if isinstance(index, tuple) else [index]
    if any(isinstance(x, list) for x in items):
        raise Refuse("indexing with a Python list is not supported")
    count = sum(1 for x in items if x is not None and x is not Ellipsis and not
                (isinstance(x, Val) and x.dtype == "bool"))
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (ndim - count)
    else:
        items += [slice(None)] * (ndim - count)
    return items


def _scalar_f(x):
    if isinstance(x, Scalar):
        return x.f
    if isinstance(x, (int, np.integer)):
        return fm.num(int(x))
    if isinstance(x, Val) and x.kind == "const" and x.ph.size == 1 and x.dtype == "int":
        return fm.num(int(x.ph.reshape(-1)[0]))
    if isinstance(x, Val) and x.kind == "pos" and x.ph.size == 1 and not x.seq_axes():
        return x.ph.reshape(-1)[0]
    raise Refuse("an index that is not an integer")


def _is_full(sl, length):
    if sl.step is not None and _scalar_f(sl.step) != fm.ONE:
        return False
    if sl.start is not None and _scalar_f(sl.start) != fm.ZERO:
        return False
    if sl.stop is None:
        return True
    stop = _scalar_f(sl.stop)
    return stop == length or (stop.kind == "num" and stop.value >= 2 ** 62)


def _position(f, length):
    """The 0-based index formula of an integer index f on an axis of `length` (negative counts
    from the end)."""
    if f.kind == "num" and f.value < 0:
        return fm.add(length, f)
    return f


@handler("getitem")
def h_getitem(I, op, args, kwargs, out):
    return getitem(I, op, args[0], args[1], out, tuple(op.args[0].shape))


def getitem(I, op, v, index, out, shape):
    items = _norm_index(index, v.ph.ndim)
    tensors = [x for x in items if isinstance(x, Val)]
    if tensors:
        return _advanced(I, op, v, items, out)
    if v.kind == "const" and any(out.seq):
        return _const_rows(I, op, v, items, out)
    ph_index = []
    seq = []
    subst = {}
    sel = None
    axis = 0
    for x in items:
        if x is None:
            ph_index.append(None)
            seq.append(None)
            continue
        lab = v.seq[axis]
        if lab is None:
            if isinstance(x, slice):
                ph_index.append(slice(*[None if e is None else const_int(e, "a slice bound")
                                        for e in (x.start, x.stop, x.step)]))
                seq.append(None)
            else:
                ph_index.append(const_int(x, "an index"))
        else:
            length = _seq_len(I, op, axis)
            if isinstance(x, slice):
                if _is_full(x, length):
                    ph_index.append(slice(None))
                    seq.append(lab)
                else:
                    start = fm.ZERO if x.start is None else _position(_scalar_f(x.start), length)
                    step = fm.ONE if x.step is None else _scalar_f(x.step)
                    if v.kind == "stream":
                        keep = _stream_select(v, start, length, out, axis, len(seq))
                        if keep is None:
                            raise Refuse("a slice of the sequence axis (only the whole sequence, "
                                         "one position or the eos position can be taken)")
                        sel = keep
                        ph_index.append(slice(None))
                        seq.append(None)
                    elif v.kind == "pos":
                        new = fresh_label()
                        subst[lab] = fm.add(start, fm.mul(step, fm.var(new)))
                        ph_index.append(slice(None))
                        seq.append(new if out.seq[len(seq)] else None)
                        if not out.seq[len(seq) - 1]:
                            subst[lab] = start
                    else:
                        raise Refuse("a slice of the sequence axis of a %s value" % v.kind)
            else:
                pos = _position(_scalar_f(x), length)
                if v.kind == "pos":
                    subst[lab] = pos
                elif v.kind == "stream":
                    sel = _which(pos, length)
                    if sel is None:
                        raise Refuse("reading one position of the sequence other than the eos "
                                     "position (index %s of %s)" % (_txt(pos), _txt(length)))
                elif v.kind == "tok":
                    raise Refuse("reading the input token at one position: values (or control "
                                 "flow) that depend on the token at another position are not "
                                 "supported")
                else:
                    raise Refuse("indexing the sequence axis of a %s value" % v.kind)
                ph_index.append(0)
        axis += 1
    ph = v.ph[tuple(ph_index) + (Ellipsis,)]  # an array even when every index is an int
    if v.kind == "pos" and subst:
        ph = vl.obj_map(lambda f: fm.subst(f, subst), ph)
    res = vl.with_ph(v, ph, seq)
    if sel is not None:
        res.sel = sel
    return res


def _const_rows(I, op, v, items, out):
    """A constant table sliced by bounds that depend on n (pe[:n], pe[:, :n], a mask buffer
    bias[:, :, :n, :n]): a positional value reading the table at rows start + step * position
    of each such axis."""
    if any(x is None or not isinstance(x, slice) for x in items):
        raise Refuse("a constant indexed by a bound that depends on n together with integer "
                     "indices")
    axes = [a for a, x in enumerate(items) if any(isinstance(e, Scalar) and not e.const
                                                  for e in (x.start, x.stop, x.step))]
    others = [a for a in range(len(items)) if a not in axes]
    table = np.transpose(v.ph, axes + others)
    rest_index = tuple(slice(*[None if e is None else const_int(e, "a slice bound")
                               for e in (items[a].start, items[a].stop, items[a].step)])
                       for a in others)
    table = table[(slice(None),) * len(axes) + rest_index]
    lead = table.shape[:len(axes)]
    rest = table.shape[len(axes):]
    tid = len(I.tables)
    I.tables[tid] = table.reshape(lead + (-1,))
    labs, rows = [], []
    for a in axes:
        sl = items[a]
        start = fm.ZERO if sl.start is None else _scalar_f(sl.start)
        step = fm.ONE if sl.step is None else _scalar_f(sl.step)
        lab = fresh_label()
        labs.append(lab)
        rows.append(fm.add(start, fm.mul(step, fm.var(lab))))
    ph = np.empty((1,) * len(axes) + rest, dtype=object)
    for c, ridx in enumerate(np.ndindex(*rest)):
        ph[(0,) * len(axes) + ridx] = fm.table(tid, c, *rows)
    order = axes + others
    ph = np.transpose(ph, [order.index(a) for a in range(len(items))])
    seq = [None] * ph.ndim
    for a, lab in zip(axes, labs):
        seq[a] = lab
    return Val("pos", ph, seq, v.dtype)


def _seq_len(I, op, axis):
    """The length formula of axis `axis` of the indexed tensor (a sequence axis)."""
    sh = I.shapes([t.ops[op.index].args[0] for t in I.traces])
    return sh.lens[axis]


def _which(pos, length):
    """"last" when the index formula is length - 1 for every n, "first" when 0, else None."""
    if pos == fm.ZERO:
        return "first"
    if pos == fm.sub(length, fm.ONE):
        return "last"
    return None


def _stream_select(v, start, length, out, axis, out_axis):
    if out.seq[out_axis] or out.sizes[out_axis] != 1:
        return None
    return _which(start, length)


def _txt(f):
    try:
        return fm.render(fm.subst(f, {}))
    except ValueError:
        return repr(f)


def _advanced(I, op, v, items, out):
    """Indexing with a tensor: rows of a constant table picked by the tokens (an embedding) or by
    the positions (a positional table), or constant indices on a fixed axis."""
    ts = [k for k, x in enumerate(items) if isinstance(x, Val)]
    if len(ts) != 1 or any(not (isinstance(x, slice) and x == slice(None)) for k, x in
                           enumerate(items) if k != ts[0]):
        raise Refuse("indexing with several tensors, or a tensor with other indices, is not "
                     "supported")
    axis = ts[0]
    return take(I, op, v, items[axis], axis, out)


def take(I, op, v, idx, axis, out):
    """v indexed along `axis` by the integer tensor idx (torch's v[..., idx, ...])."""
    from .ops_nn import lookup
    if idx.dtype == "bool":
        raise Refuse("boolean mask indexing is not supported")
    if idx.kind == "const":
        if v.seq[axis] is not None:
            raise Refuse("constant indices on the sequence axis")
        ph = np.take(v.ph, idx.ph.astype(np.int64), axis=axis)
        seq = list(v.seq[:axis]) + [None] * idx.ph.ndim + list(v.seq[axis + 1:])
        return vl.with_ph(v, ph, seq)
    if v.kind != "const" or axis != 0:
        raise Refuse("indexing a %s value with a tensor computed from the %s" %
                     (v.kind, "input" if idx.kind in ("tok", "stream") else "positions"))
    return lookup(I, op, v, idx, out)


@handler("select")
def h_select(I, op, args, kwargs, out):
    v = args[0]
    dim = const_int(arg(args, kwargs, 1, "dim"), "a dimension") % v.ph.ndim
    index = arg(args, kwargs, 2, "index")
    items = [slice(None)] * dim + [index]
    return getitem(I, op, v, tuple(items), out, tuple(op.args[0].shape))


@handler("narrow")
def h_narrow(I, op, args, kwargs, out):
    v = args[0]
    dim = const_int(arg(args, kwargs, 1, "dim"), "a dimension") % v.ph.ndim
    start = arg(args, kwargs, 2, "start")
    length = arg(args, kwargs, 3, "length")
    stop = Scalar(None, fm.add(_scalar_f(start), _scalar_f(length)),
                  isinstance(start, Scalar) and start.const and length.const)
    if stop.const:
        stop.value = const_int(start, "start") + const_int(length, "length")
    items = [slice(None)] * dim + [slice(start, stop)]
    return getitem(I, op, v, tuple(items), out, tuple(op.args[0].shape))


@handler("index_select")
def h_index_select(I, op, args, kwargs, out):
    v = args[0]
    dim = const_int(arg(args, kwargs, 1, "dim"), "a dimension") % v.ph.ndim
    idx = arg(args, kwargs, 2, "index")
    return take(I, op, v, idx, dim, out)


def _pieces(I, op, v, dim, sizes):
    res, start = [], 0
    for k, size in enumerate(sizes):
        items = [slice(None)] * dim + [slice(Scalar(start, fm.num(start), True),
                                             Scalar(start + size, fm.num(start + size), True))]
        res.append(getitem(I, op, v, tuple(items), _OutLike(v, dim, size),
                           tuple(op.args[0].shape)))
        start += size
    return tuple(res)


class _OutLike:
    """The Shape of a piece of v along a fixed axis (for chunk and split)."""

    def __init__(self, v, dim, size):
        self.seq = tuple(s is not None for s in v.seq)
        self.sizes = tuple(size if a == dim else d for a, d in enumerate(v.ph.shape))


@handler("chunk", "split", "tensor_split", "unsafe_split", "unsafe_chunk", "split_with_sizes")
def h_split(I, op, args, kwargs, out):
    v = args[0]
    dim = const_int(arg(args, kwargs, 2, "dim", 0), "a dimension") % v.ph.ndim
    if v.seq[dim] is not None:
        raise Refuse("%s() along the sequence axis" % op.name)
    return _pieces(I, op, v, dim, [o.sizes[dim] for o in out])


@handler("unbind")
def h_unbind(I, op, args, kwargs, out):
    v = args[0]
    dim = const_int(arg(args, kwargs, 1, "dim", 0), "a dimension") % v.ph.ndim
    if v.seq[dim] is not None:
        raise Refuse("unbind() along the sequence axis")
    res = []
    for k in range(len(out)):
        items = [slice(None)] * dim + [Scalar(k, fm.num(k), True)]
        res.append(getitem(I, op, v, tuple(items), out[k], tuple(op.args[0].shape)))
    return tuple(res)


@handler("cat", "concat", "concatenate", "stack", "hstack", "vstack")
def h_cat(I, op, args, kwargs, out):
    from .ops_nn import streams_concat
    vals = list(arg(args, kwargs, 0, "tensors"))
    dim = const_int(arg(args, kwargs, 1, "dim", 0), "a dimension")
    if op.name == "hstack":
        dim = 1 if vals[0].ph.ndim > 1 else 0
    if op.name == "vstack":
        dim = 0
    if op.name == "stack":
        nd = vals[0].ph.ndim + 1
        dim %= nd
        vals = [vl.with_ph(v, np.expand_dims(v.ph, dim), list(v.seq[:dim]) + [None] +
                           list(v.seq[dim:])) for v in vals]
    kinds = {v.kind for v in vals}
    if kinds & {"scores", "weights", "opaque"}:
        raise Refuse("concatenating attention scores or weights is not supported")
    dim %= vals[0].ph.ndim
    if vals[0].seq[dim] is not None or out.seq[dim]:
        raise Refuse("concatenation along the sequence axis (adding positions inside the model) "
                     "is not supported")
    if "stream" in kinds or "tok" in kinds and kinds != {"tok"}:
        return streams_concat(I, op, [I.as_stream(v, op) for v in vals], dim, out)
    if kinds == {"const"}:
        arrs = [v.ph for v in vals]
        if any(a.dtype == object for a in arrs):
            arrs = [a.astype(object) for a in arrs]
        dtype = "float" if any(v.dtype == "float" for v in vals) else vals[0].dtype
        return Val("const", np.concatenate(arrs, axis=dim), dtype=dtype)
    if kinds == {"tok"}:
        ph, seq = vl.concat(vals, dim, out.seq)
        return Val("tok", ph, seq, vals[0].dtype)
    vals = [to_pos(v) for v in vals]
    ph, seq = vl.concat(vals, dim, out.seq)
    return Val("pos", ph, seq, "float" if any(v.dtype == "float" for v in vals) else
               vals[0].dtype)


@handler("flip")
def h_flip(I, op, args, kwargs, out):
    v = args[0]
    dims = arg(args, kwargs, 1, "dims")
    dims = [const_int(d, "a dimension") % v.ph.ndim for d in dims]
    subst = {}
    for d in dims:
        if v.seq[d] is not None:
            if v.kind != "pos":
                raise Refuse("flip() of the sequence axis of a %s value" % v.kind)
            length = _seq_len(I, op, d)
            subst[v.seq[d]] = fm.sub(fm.sub(length, fm.ONE), fm.var(v.seq[d]))
    ph = np.flip(v.ph, [d for d in dims if v.seq[d] is None]) if dims else v.ph
    if subst:
        ph = vl.obj_map(lambda f: fm.subst(f, subst), ph)
    return vl.with_ph(v, ph, v.seq)


# --- factories --------------------------------------------------------------------------------

def _fill(out, f, dtype):
    """A Val of the result's shape filled with the formula f (const when it has no sequence
    axes and f is a number)."""
    if not any(out.seq) and f.kind == "num":
        value = f.value if dtype == "float" else int(f.value)
        arr = np.full(out.sizes, float(value) if dtype == "float" and value == float(value)
                      else value, dtype=np.float64 if dtype == "float" and
                      Fraction(float(value)) == value else object if dtype == "float"
                      else (bool if dtype == "bool" else np.int64))
        return Val("const", arr, dtype=dtype)
    ph = vl.obj_array(vl.placeholder(out.sizes, out.seq), f)
    return Val("pos", ph, [fresh_label() if s else None for s in out.seq], dtype)


def _value_f(x):
    if isinstance(x, Scalar):
        if x.f is None:
            raise Refuse("a fill value that is not a number (nan or +inf)")
        return x.f
    if isinstance(x, bool):
        return fm.ONE if x else fm.ZERO
    if isinstance(x, Val) and x.ph.size == 1:
        if x.kind == "const":
            return fm.num(Fraction(float(x.ph.reshape(-1)[0])))
        if x.kind == "pos" and not x.seq_axes():
            return x.ph.reshape(-1)[0]
    raise Refuse("a fill value that is not a number")


@handler("zeros", "ones", "zeros_like", "ones_like", "new_zeros", "new_ones")
def h_zeros(I, op, args, kwargs, out):
    return _fill(out, fm.ONE if "ones" in op.name else fm.ZERO, out.dtype)


@handler("full", "full_like", "new_full")
def h_full(I, op, args, kwargs, out):
    value = arg(args, kwargs, 1, "fill_value")
    return _fill(out, _value_f(value), out.dtype)


@handler("empty", "empty_like", "new_empty", "rand", "randn", "randint", "rand_like",
         "randn_like", "normal", "bernoulli", "multinomial", "randperm", "uniform_", "normal_")
def h_random(I, op, args, kwargs, out):
    raise Refuse("%s() gives values that are random or undefined" % op.name)


@handler("tensor", "as_tensor", "new_tensor", "asarray", "from_numpy", "scalar_tensor")
def h_tensor(I, op, args, kwargs, out):
    data = args[1] if op.name == "new_tensor" else arg(args, kwargs, 0, "data")
    if isinstance(data, Val):
        return convert(data, out.dtype)
    if out is None:
        return None
    fs = np.empty(out.sizes, dtype=object)

    def fill(d, idx):
        if isinstance(d, (list, tuple)):
            for k, e in enumerate(d):
                fill(e, idx + (k,))
        else:
            fs[idx] = _value_f(d) if not isinstance(d, Val) else _value_f(d)

    fill(data, ())
    if any(out.seq):
        raise Refuse("a tensor built from Python data has a length that depends on n")
    if all(f.kind == "num" for f in fs.ravel()):
        dtype = out.dtype
        if dtype == "float":
            arr = np.empty(out.sizes, dtype=object)
            for idx in np.ndindex(*out.sizes):
                arr[idx] = fs[idx].value
            if all(Fraction(float(q)) == q for q in arr.ravel()):
                arr = arr.astype(np.float64)
        else:
            arr = np.vectorize(lambda f: int(f.value), otypes=[np.int64])(fs) if fs.size else \
                np.zeros(out.sizes, dtype=np.int64)
            if dtype == "bool":
                arr = arr != 0
        return Val("const", arr, dtype=dtype)
    return Val("pos", fs, [None] * out.ndim, out.dtype)


@handler("arange")
def h_arange(I, op, args, kwargs, out):
    nums = [a for a in args if isinstance(a, Scalar)]
    if "end" in kwargs:
        nums = ([kwargs.get("start", Scalar(0, fm.ZERO, True))] if "start" in kwargs else []) + \
            [kwargs["end"]] + ([kwargs["step"]] if "step" in kwargs else [])
    if len(nums) == 1:
        start, step = fm.ZERO, fm.ONE
    else:
        start = nums[0].f
        step = nums[2].f if len(nums) > 2 else fm.ONE
    if any(x.f is None for x in nums):
        raise Refuse("arange() with a bound that is not a number")
    if not out.seq[0]:
        if start.kind != "num" or step.kind != "num":
            raise Refuse("arange() of a fixed length with bounds that depend on n")
        vals = [start.value + k * step.value for k in range(out.sizes[0])]
        if out.dtype == "float":
            arr = np.array([float(q) for q in vals]) if all(Fraction(float(q)) == q for q in vals)\
                else np.array(vals, dtype=object)
        else:
            arr = np.array([int(q) for q in vals], dtype=np.int64)
        return Val("const", arr, dtype=out.dtype)
    lab = fresh_label()
    ph = vl.obj_array((1,), fm.add(start, fm.mul(step, fm.var(lab))))
    return Val("pos", ph, [lab], out.dtype)


@handler("eye")
def h_eye(I, op, args, kwargs, out):
    if not any(out.seq):
        return Val("const", np.eye(*out.sizes) if out.dtype == "float" else
                   np.eye(*out.sizes).astype(np.int64 if out.dtype == "int" else bool),
                   dtype=out.dtype)
    labs = [fresh_label() if s else None for s in out.seq]
    ph = np.empty(vl.placeholder(out.sizes, out.seq), dtype=object)
    for idx in np.ndindex(*ph.shape):
        a = fm.var(labs[0]) if labs[0] else fm.num(idx[0])
        b = fm.var(labs[1]) if labs[1] else fm.num(idx[1])
        ph[idx] = fm.cmp("==", a, b)
    return Val("pos", ph, labs, out.dtype)


@handler("triu", "tril", "triu_", "tril_")
def h_tri(I, op, args, kwargs, out):
    v = args[0]
    d = const_int(arg(args, kwargs, 1, "diagonal", 0), "the diagonal")
    if v.kind == "const":
        res = Val("const", (np.triu if "triu" in op.name else np.tril)(v.ph, d), dtype=v.dtype)
    else:
        if v.kind != "pos":
            raise Refuse("%s() of a %s value" % (op.name, v.kind))
        nd = v.ph.ndim
        labs = v.seq
        ph = np.empty(v.ph.shape, dtype=object)
        for idx in np.ndindex(*v.ph.shape):
            r = fm.var(labs[nd - 2]) if labs[nd - 2] else fm.num(idx[nd - 2])
            c = fm.var(labs[nd - 1]) if labs[nd - 1] else fm.num(idx[nd - 1])
            keep = fm.cmp(">=" if "triu" in op.name else "<=", fm.sub(c, r), fm.num(d))
            zero = fm.ZERO if v.dtype != "bool" else fm.ZERO
            ph[idx] = fm.where(keep, v.ph[idx], zero)
        res = Val("pos", ph, v.seq, v.dtype)
    if op.name.endswith("_"):
        I.env[id(op.args[0])] = res
    return res


@handler("setitem")
def h_setitem(I, op, args, kwargs, out):
    """t[index] = value on a positional or constant tensor t that no other tensor views."""
    v, index, value = args[0], args[1], args[2]
    t = op.args[0]
    if t._base is not None or id(t) in I.viewed:
        raise Refuse("an assignment t[...] = ... to a tensor that shares memory with another")
    if v.kind not in ("pos", "const"):
        raise Refuse("an assignment t[...] = ... to a %s value" % v.kind)
    if isinstance(value, Scalar):
        value = _fill_val(value)
    if not isinstance(value, Val) or value.kind not in ("pos", "const"):
        raise Refuse("assigning a value computed from the input into a tensor")
    v = to_pos(v)
    value = to_pos(value)
    shape = tuple(t.shape)
    target = _index_map(I, op, v, index, shape)
    # target: object array (placeholder of the indexed part) of (ph index, label mapping)
    tgt_ph, tgt_seq = target
    vals, labels = vl.align([value], _shape_of(tgt_ph, tgt_seq, I, op), [s is not None for s in
                                                                         tgt_seq])
    ph = v.ph.copy()
    for idx in np.ndindex(*tgt_ph.shape):
        where_, mapping = tgt_ph[idx]
        f = vals[0][idx]
        sub = {lab: fm.var(src) for lab, src in zip(labels, tgt_seq) if lab is not None}
        ph[where_] = fm.subst(f, sub)
    res = Val("pos", ph, v.seq, v.dtype if v.dtype == "float" or value.dtype != "float"
              else "float")
    I.env[id(t)] = res
    return res


def _fill_val(s):
    ph = vl.obj_array((), s.f)
    return Val("pos", ph, (), "float" if isinstance(s.value, float) else "int")


def _shape_of(ph, seq, I, op):
    return tuple(1 if s is not None else d for d, s in zip(ph.shape, seq))


def _index_map(I, op, v, index, shape):
    """For t[index] with basic indices that keep the sequence axes whole: an object array over
    the indexed elements holding (index into v.ph, None), and the indexed part's labels."""
    items = _norm_index(index, v.ph.ndim)
    if any(isinstance(x, Val) for x in items) or any(x is None for x in items):
        raise Refuse("an assignment with tensor indices or None")
    coords = np.empty(v.ph.shape, dtype=object)
    for idx in np.ndindex(*v.ph.shape):
        coords[idx] = (idx, None)
    ph_index, seq = [], []
    for axis, x in enumerate(items):
        lab = v.seq[axis]
        if lab is not None:
            if not isinstance(x, slice) or not _is_full(x, _seq_len(I, op, axis)):
                raise Refuse("an assignment to part of the sequence axis")
            ph_index.append(slice(None))
            seq.append(lab)
        elif isinstance(x, slice):
            ph_index.append(slice(*[None if e is None else const_int(e, "a slice bound")
                                    for e in (x.start, x.stop, x.step)]))
            seq.append(None)
        else:
            ph_index.append(const_int(x, "an index"))
    return coords[tuple(ph_index)], seq
