"""ONNX files through the same importer: the graph is executed by torch operations, node by node,
inside an nn.Module (OnnxGraph), which import_model then follows like any module.

The file must have one integer input of token ids with a dynamic sequence axis (shape [n], or
[1, n] / [n, 1]), as torch.onnx.export writes with dynamic_axes, opset 13 or later, and one
output: the logit(s) at the eos position. Initializers become the module's buffers (their exact
float values); every call made for a node is located at that node ("node
/encoder/layers.0/self_attn/MatMul (MatMul)"). Shape arithmetic (Shape, Gather, Range, Reshape
targets, ConstantOfShape) runs on ordinary tensors, so that what depends on n is found exactly
as in a torch module: by comparing the traces at several lengths.

Two patterns of torch's exporter are read back as what they decompose, because their parts are
not attnprop operations or their constants are rounded to float32: a layer norm (ReduceMean,
Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div) and the exact gelu (Div by sqrt 2, Erf, Add 1,
Mul x, Mul 0.5). Everything else is executed as written. Constants the file rounded to float32
are read as what they round: a layer norm's eps nearest to a one-digit decimal is that decimal
(as the double torch holds), and the float32 nearest to pi or sqrt(m) is that number (the same
reading as the importer's for Python floats; the float64 reference run uses it too).
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .exact import ExportError
from .trace import location_override

__all__ = ["OnnxGraph", "OnnxModule", "import_onnx"]

_DTYPES = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32,
           7: torch.int64, 9: torch.bool, 10: torch.float16, 11: torch.float64,
           16: torch.bfloat16}


def _onnx():
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError as e:  # pragma: no cover - install-deps.sh installs python3-onnx
        raise ExportError("reading ONNX files needs the Python package onnx (Debian's "
                          "python3-onnx; scripts/install-deps.sh installs it): %s" % e)
    return onnx, numpy_helper


def _attrs(node):
    onnx, numpy_helper = _onnx()
    out = {}
    for a in node.attribute:
        if a.type == onnx.AttributeProto.TENSOR:
            out[a.name] = torch.from_numpy(np.array(numpy_helper.to_array(a.t)))
        else:
            out[a.name] = onnx.helper.get_attribute_value(a)
    return out


def _ints(t):
    return [int(x) for x in (t.tolist() if isinstance(t, torch.Tensor) else t)]


class OnnxGraph(nn.Module):
    """An ONNX graph as a module: forward(ids) runs its nodes with torch operations."""

    def __init__(self, model, source="model.onnx"):
        super().__init__()
        onnx, numpy_helper = _onnx()
        g = model.graph
        self.source = source
        self.opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                         default=0)
        if self.opset < 13:
            raise ExportError("%s: opset %d; the importer reads opset 13 or later (what "
                              "torch.onnx.export writes with opset_version >= 13)" %
                              (source, self.opset))
        inits = {i.name for i in g.initializer}
        inputs = [i for i in g.input if i.name not in inits]
        if len(inputs) != 1:
            raise ExportError("%s: the graph has %d inputs; expected one (the token ids)" %
                              (source, len(inputs)))
        self.input_name = inputs[0].name
        dims = inputs[0].type.tensor_type.shape.dim
        self.input_rank = len(dims)
        self.input_dtype = _DTYPES.get(inputs[0].type.tensor_type.elem_type, torch.int64)
        if self.input_rank not in (1, 2) or self.input_dtype.is_floating_point:
            raise ExportError("%s: the input %r must be integer token ids of shape [n] (or "
                              "[1, n]); it has rank %d" % (source, self.input_name,
                                                            self.input_rank))
        self.batch_axis = None
        if self.input_rank == 2:
            fixed = [k for k, d in enumerate(dims) if d.HasField("dim_value") and d.dim_value == 1]
            self.batch_axis = fixed[0] if fixed else 0
        if len(g.output) < 1:
            raise ExportError("%s: the graph has no output" % source)
        self.output_name = g.output[0].name
        self.names = {}
        for k, init in enumerate(g.initializer):
            arr = np.array(numpy_helper.to_array(init))
            attr = "init_%d" % k
            self.register_buffer(attr, torch.from_numpy(arr.copy()))
            self.names[init.name] = attr
        self.nodes = list(g.node)
        self.attrs = [_attrs(n) for n in self.nodes]
        self.consumers = {}
        for n in self.nodes:
            for name in n.input:
                self.consumers.setdefault(name, []).append(n)
        self.producer = {o: n for n in self.nodes for o in n.output}
        self._promote = False
        self._promoted = {}
        for k, (n, at) in enumerate(zip(self.nodes, self.attrs)):
            v = at.get("value") if n.op_type == "Constant" else None
            if v is not None and v.dtype == torch.float32 and v.numel() == 1:
                exact = _intended(float(v.reshape(-1)[0]))
                if exact is not None:
                    self._promoted[k] = torch.tensor(exact, dtype=torch.float64).reshape(v.shape)
        self._patterns = {}
        for k, n in enumerate(self.nodes):
            p = self._layer_norm_at(n) or self._gelu_at(n)
            if p is not None:
                self._patterns[k] = p
        self.unknown = [n for n in self.nodes if n.op_type not in _OPS]
        self.failure_hint = (" (is a length fixed in the graph? torch.onnx.export records "
                             "len(x) and other Python numbers as constants; x.shape[0] stays "
                             "dynamic)")

    def refusals(self):
        """One message per node whose operation this reader does not execute."""
        return ["node %s (%s): no ONNX operation %s in attnprop_torch's reader" %
                (n.name, n.op_type, n.op_type) for n in self.unknown]

    def float64_constants(self, on):
        """In the float64 reference run (trace.float64_forward), a float32 constant that the
        importer reads as pi or sqrt(m) (the float32 nearest to it) is that number in float64,
        so that the reference computes what the import means."""
        self._promote = bool(on)

    # --- patterns of torch's exporter ---------------------------------------------------------

    def _const_value(self, name):
        """The value of a tensor defined by a Constant node or an initializer, else None."""
        if name in self.names:
            return getattr(self, self.names[name])
        n = self.producer.get(name)
        if n is not None and n.op_type == "Constant":
            return _attrs(n).get("value")
        return None

    def _made_by(self, name, op):
        n = self.producer.get(name)
        return n if n is not None and n.op_type == op else None

    def _layer_norm_at(self, div):
        """(x name, eps) when Div is the end of ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt."""
        if div.op_type != "Div":
            return None
        sub = self._made_by(div.input[0], "Sub")
        sqrt = self._made_by(div.input[1], "Sqrt")
        if sub is None or sqrt is None:
            return None
        add = self._made_by(sqrt.input[0], "Add")
        if add is None:
            return None
        eps = self._const_value(add.input[1])
        mean2 = self._made_by(add.input[0], "ReduceMean")
        mean1 = self._made_by(sub.input[1], "ReduceMean")
        if eps is None or mean2 is None or mean1 is None or eps.numel() != 1:
            return None
        pow_ = self._made_by(mean2.input[0], "Pow")
        if pow_ is None or pow_.input[0] != sub.output[0]:
            return None
        two = self._const_value(pow_.input[1])
        if two is None or two.numel() != 1 or float(two) != 2.0:
            return None
        if mean1.input[0] != sub.input[0]:
            return None
        for m in (mean1, mean2):
            a = _attrs(m)
            axes = a.get("axes")
            if axes is None and len(m.input) > 1:
                axes = self._const_value(m.input[1])
            if axes is None or _ints(axes) != [-1] or a.get("keepdims", 1) != 1:
                return None
        return ("layer_norm", sub.input[0], _eps(float(eps.reshape(-1)[0])))

    def _gelu_at(self, mul):
        """x when Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5) ends here."""
        if mul.op_type != "Mul":
            return None
        half = self._const_value(mul.input[1])
        inner = self._made_by(mul.input[0], "Mul")
        if half is None or inner is None or half.numel() != 1 or float(half) != 0.5:
            return None
        x = inner.input[0]
        add = self._made_by(inner.input[1], "Add")
        if add is None:
            return None
        one = self._const_value(add.input[1])
        erf = self._made_by(add.input[0], "Erf")
        if one is None or one.numel() != 1 or float(one) != 1.0 or erf is None:
            return None
        div = self._made_by(erf.input[0], "Div")
        if div is None or div.input[0] != x:
            return None
        root = self._const_value(div.input[1])
        if root is None or root.numel() != 1 or abs(float(root) - math.sqrt(2)) > 2e-7:
            return None
        return ("gelu", x)

    # --- running ------------------------------------------------------------------------------

    def forward(self, ids):
        if self.unknown:
            raise ExportError("%s: %s" % (self.source, "; ".join(self.refusals())))
        if self.input_rank == 2:
            ids = ids.unsqueeze(self.batch_axis)
        env = {self.input_name: ids.to(self.input_dtype)}
        for name, attr in self.names.items():
            env[name] = getattr(self, attr)
        for k, node in enumerate(self.nodes):
            with location_override("node %s (%s)" % (node.name or "#%d" % k, node.op_type)):
                args = [env[i] if i else None for i in node.input]
                pattern = self._patterns.get(k)
                if pattern is not None and pattern[0] == "layer_norm":
                    x = env[pattern[1]]
                    outs = [F.layer_norm(x, (x.shape[-1],), None, None, pattern[2])]
                elif pattern is not None:
                    outs = [F.gelu(env[pattern[1]])]
                elif self._promote and k in self._promoted:
                    outs = [self._promoted[k]]
                else:
                    outs = _OPS[node.op_type](self, node, self.attrs[k], args)
                    if not isinstance(outs, (list, tuple)):
                        outs = [outs]
            for name, v in zip(node.output, outs):
                env[name] = v
        out = env[self.output_name]
        return out


OnnxModule = OnnxGraph


def _eps(c):
    """A layer norm's eps: ONNX stores it as float32; the float32 nearest to a one-digit decimal
    (1e-5, 1e-6, 5e-4, ...) is that decimal as a Python float, which is what a torch module
    holds (torch.onnx.export rounded it)."""
    f = np.float32(c)
    for k in range(1, 31):
        for d in range(1, 10):
            v = float("%de-%d" % (d, k))
            if np.float32(v) == f:
                return v
    return float(c)


def _intended(c):
    """The float64 value of pi*q, sqrt(m) or 1/sqrt(m) when the float32 c is nearest to it."""
    from .interp import pi_hint, sqrt_hint
    from . import formula as fm
    p = pi_hint(c, float32=True)
    if p is not None:
        return fm.evaluate(p, {})
    s = sqrt_hint(c, float32=True)
    if s is not None:
        return float(s[0]) * math.sqrt(s[1])
    return None


def _load(path):
    onnx, _ = _onnx()
    try:
        return onnx.load(path)
    except Exception as e:
        raise ExportError("%s: not an ONNX model: %s" % (path, e))


def _from_path(path):
    import os
    return OnnxGraph(_load(path), os.path.basename(path))


OnnxGraph.load = staticmethod(_from_path)


def import_onnx(path, **kwargs):
    """import_model of the ONNX file at `path` (same keyword arguments)."""
    from .importer import import_model
    return import_model(_from_path(path), **kwargs)


# --- operations ---------------------------------------------------------------------------------

def _axis(a, rank):
    return a + rank if a < 0 else a


def _gather(m, node, at, args):
    data, idx = args
    axis = _axis(at.get("axis", 0), data.dim())
    if idx.dim() == 0:
        return torch.select(data, axis, int(idx))
    if m._const_value(node.input[1]) is not None:  # negative constant indices count from the end
        size = data.shape[axis]
        idx = torch.tensor([v + size if v < 0 else v for v in _ints(idx.reshape(-1))],
                           dtype=torch.int64).reshape(idx.shape)
    flat = torch.index_select(data, axis, idx.reshape(-1))
    shape = list(data.shape[:axis]) + list(idx.shape) + list(data.shape[axis + 1:])
    return flat.reshape(shape)


def _unsqueeze(m, node, at, args):
    x = args[0]
    axes = _ints(args[1]) if len(args) > 1 and args[1] is not None else at["axes"]
    rank = x.dim() + len(axes)
    for a in sorted(_axis(a, rank) for a in axes):
        x = x.unsqueeze(a)
    return x


def _squeeze(m, node, at, args):
    x = args[0]
    axes = _ints(args[1]) if len(args) > 1 and args[1] is not None else at.get("axes")
    if axes is None:
        return x.squeeze()
    for a in sorted((_axis(a, x.dim()) for a in axes), reverse=True):
        x = x.squeeze(a)
    return x


def _reshape(m, node, at, args):
    x, shape = args
    target = _ints(shape)
    if not at.get("allowzero", 0):
        target = [x.shape[k] if v == 0 else v for k, v in enumerate(target)]
    return x.reshape(target)


def _slice(m, node, at, args):
    x = args[0]
    starts, ends = _ints(args[1]), _ints(args[2])
    axes = _ints(args[3]) if len(args) > 3 and args[3] is not None else list(range(len(starts)))
    steps = _ints(args[4]) if len(args) > 4 and args[4] is not None else [1] * len(starts)
    index = [slice(None)] * x.dim()
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[_axis(a, x.dim())] = slice(s, None if e >= 2 ** 62 else e, st)
    return x[tuple(index)]


def _binary(fn):
    return lambda m, node, at, args: fn(args[0], args[1])


def _div(a, b):
    if not a.is_floating_point() and not b.is_floating_point():
        return torch.div(a, b, rounding_mode="trunc")
    return torch.div(a, b)


def _gemm(m, node, at, args):
    a, b = args[0], args[1]
    if at.get("transA", 0):
        a = a.t()
    if at.get("transB", 0):
        b = b.t()
    y = torch.matmul(a, b)
    alpha = at.get("alpha", 1.0)
    if alpha != 1.0:
        y = y * alpha
    if len(args) > 2 and args[2] is not None:
        beta = at.get("beta", 1.0)
        y = y + (args[2] if beta == 1.0 else args[2] * beta)
    return y


def _reduce_mean(m, node, at, args):
    x = args[0]
    axes = at.get("axes")
    if axes is None and len(args) > 1 and args[1] is not None:
        axes = _ints(args[1])
    keep = bool(at.get("keepdims", 1))
    if axes is None:
        return x.mean() if not keep else x.mean(dim=list(range(x.dim())), keepdim=True)
    return x.mean(dim=[_axis(a, x.dim()) for a in axes], keepdim=keep)


def _constant_of_shape(m, node, at, args):
    value = at.get("value")
    shape = _ints(args[0])
    if value is None:
        return torch.zeros(shape)
    return torch.full(shape, value.reshape(-1)[0].item(), dtype=value.dtype)


def _range(m, node, at, args):
    start, limit, delta = (a.item() for a in args)
    return torch.arange(start, limit, delta, dtype=args[0].dtype)


def _constant(m, node, at, args):
    for key in ("value", "value_float", "value_int", "value_floats", "value_ints"):
        if key in at:
            v = at[key]
            if key == "value":
                return v
            return torch.tensor(v, dtype=torch.float32 if "float" in key else torch.int64)
    raise ExportError("Constant node %s: no supported value" % node.name)


def _layer_norm(m, node, at, args):
    x, scale = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    axis = _axis(at.get("axis", -1), x.dim())
    return F.layer_norm(x, tuple(x.shape[axis:]), scale, bias, _eps(at.get("epsilon", 1e-5)))


def _expand(m, node, at, args):
    x, shape = args
    target = torch.broadcast_shapes(tuple(x.shape), tuple(_ints(shape)))
    return x.expand(target)


def _trilu(m, node, at, args):
    k = int(args[1]) if len(args) > 1 and args[1] is not None else 0
    return torch.triu(args[0], k) if at.get("upper", 1) else torch.tril(args[0], k)


def _split(m, node, at, args):
    x = args[0]
    axis = at.get("axis", 0)
    sizes = _ints(args[1]) if len(args) > 1 and args[1] is not None else at.get("split")
    if sizes is None:
        k = len(node.output)
        return torch.chunk(x, k, dim=axis)
    return torch.split(x, sizes, dim=axis)


def _one_hot(m, node, at, args):
    idx, depth, values = args
    if at.get("axis", -1) != -1:
        raise ExportError("OneHot node %s: axis %d (only the last axis)" % (node.name,
                                                                             at["axis"]))
    off, on = values.tolist()
    hot = F.one_hot(idx, int(depth.reshape(-1)[0]))
    if (off, on) == (0, 1):
        return hot.to(values.dtype)
    return hot.to(values.dtype) * (on - off) + off


_OPS = {
    "Identity": lambda m, n, at, a: a[0],
    "Constant": _constant,
    "Shape": lambda m, n, at, a: torch.tensor(list(a[0].shape), dtype=torch.int64),
    "Gather": _gather,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Concat": lambda m, n, at, a: torch.cat(list(a), dim=at["axis"]),
    "ConstantOfShape": _constant_of_shape,
    "Cast": lambda m, n, at, a: a[0].to(_DTYPES[at["to"]]),
    "Range": _range,
    "Reshape": _reshape,
    "Transpose": lambda m, n, at, a: a[0].permute(*(at.get("perm") or
                                                    list(reversed(range(a[0].dim()))))),
    "Slice": _slice,
    "Flatten": lambda m, n, at, a: a[0].reshape(
        int(np.prod(a[0].shape[:at.get("axis", 1)])), -1),
    "Expand": _expand,
    "Split": _split,
    "Add": _binary(torch.add),
    "Sub": _binary(torch.sub),
    "Mul": _binary(torch.mul),
    "Div": _binary(_div),
    "Pow": _binary(torch.pow),
    "Equal": _binary(torch.eq),
    "Less": _binary(torch.lt),
    "Greater": _binary(torch.gt),
    "LessOrEqual": _binary(torch.le),
    "GreaterOrEqual": _binary(torch.ge),
    "And": _binary(torch.logical_and),
    "Or": _binary(torch.logical_or),
    "Not": lambda m, n, at, a: torch.logical_not(a[0]),
    "Where": lambda m, n, at, a: torch.where(a[0], a[1], a[2]),
    "Neg": lambda m, n, at, a: torch.neg(a[0]),
    "Abs": lambda m, n, at, a: torch.abs(a[0]),
    "Sqrt": lambda m, n, at, a: torch.sqrt(a[0]),
    "Exp": lambda m, n, at, a: torch.exp(a[0]),
    "Log": lambda m, n, at, a: torch.log(a[0]),
    "Cos": lambda m, n, at, a: torch.cos(a[0]),
    "Sin": lambda m, n, at, a: torch.sin(a[0]),
    "Floor": lambda m, n, at, a: torch.floor(a[0]),
    "Relu": lambda m, n, at, a: torch.relu(a[0]),
    "Tanh": lambda m, n, at, a: torch.tanh(a[0]),
    "Sigmoid": lambda m, n, at, a: torch.sigmoid(a[0]),
    "Erf": lambda m, n, at, a: torch.erf(a[0]),
    "Softmax": lambda m, n, at, a: torch.softmax(a[0], dim=at.get("axis", -1)),
    "LogSoftmax": lambda m, n, at, a: torch.log_softmax(a[0], dim=at.get("axis", -1)),
    "MatMul": _binary(torch.matmul),
    "Gemm": _gemm,
    "ReduceMean": _reduce_mean,
    "ReduceSum": lambda m, n, at, a: a[0].sum(
        dim=_ints(a[1]) if len(a) > 1 and a[1] is not None else list(range(a[0].dim())),
        keepdim=bool(at.get("keepdims", 1))),
    "LayerNormalization": _layer_norm,
    "Trilu": _trilu,
    "Dropout": lambda m, n, at, a: (a[0], torch.ones_like(a[0], dtype=torch.bool)),
    "Reciprocal": lambda m, n, at, a: torch.reciprocal(a[0]),
    "OneHot": _one_hot,
}
