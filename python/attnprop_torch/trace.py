"""Recording what a module's forward does, one torch call at a time.

`record(module, ids)` runs `module(ids)` once under a `torch.overrides.TorchFunctionMode` and
returns the list of torch calls it made (functions, tensor methods, `torch.nn.functional` calls
such as `multi_head_attention_forward`, and indexing, which torch 1.13 does not route through the
mode and which is therefore wrapped for the duration), each with its arguments, its result, the
module it happened in (a path like `encoder.layers.0.self_attn`) and the line of the user's code
that made it. Calls made inside a recorded call are not recorded: an nn.MultiheadAttention is one
call, `multi_head_attention_forward`, with all its parameters as arguments.

The importer records the same module at several lengths and reads the calls side by side
(interp.py): what differs between the lengths is what depends on n.

`float64_forward(module, ids)` runs the module's own forward with every floating-point value in
float64: parameters, buffers and tensors the module keeps are converted (exactly) when a torch
call receives them, and float32 or float16 dtype arguments (`.to(torch.float)`, `.float()`,
`torch.arange(..., dtype=torch.float)`) become float64, so that positions a module computes in
float32 are computed in float64 too. This is the reference the importer is checked against.
"""
import os
import sys
import threading

import torch
from torch.overrides import TorchFunctionMode

__all__ = ["Op", "Trace", "record", "float64_forward", "location_override"]

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: Files of this package that hold model code (the export_encoder front end's module): calls
#: made there are located there.
_MODEL_FILES = {os.path.join(_OWN_DIR, "export.py")}
_state = threading.local()


class Op:
    """One recorded call."""

    __slots__ = ("index", "name", "func", "args", "kwargs", "result", "module", "where")

    def __init__(self, index, name, func, args, kwargs, result, module, where):
        self.index = index
        self.name = name          # canonical name: "add", "linear", "getitem", "getattr:T", ...
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.result = result
        self.module = module      # (path, class name) of the innermost module, or None
        self.where = where        # "file.py:123" of the user's code, or an ONNX node

    def describe(self):
        """`path (Class), file.py:12: name` for messages."""
        parts = []
        if self.module is not None:
            path, cls = self.module
            parts.append("%s (%s)" % (path or "the module", cls))
        if self.where:
            parts.append(self.where)
        return ", ".join(parts)


class Trace:
    """The calls of one forward at one length n (eos included)."""

    def __init__(self, n, ids, ops, output, names):
        self.n = n
        self.ids = ids
        self.ops = ops
        self.output = output
        self.names = names        # id(tensor) -> "parameter encoder.layers.0.linear1.weight"


def op_name(func):
    """A canonical name for a torch callable: torch.add and Tensor.add are both "add";
    property getters are "getattr:NAME"."""
    name = getattr(func, "__name__", None)
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        return "getattr:" + str(getattr(owner, "__name__", owner))
    if name is None:
        return str(func)
    if name.startswith("__") and name.endswith("__"):
        return name
    return name


def _user_location():
    """file:line of the innermost frame outside torch and attnprop_torch."""
    over = getattr(_state, "location", None)
    if over is not None:
        return over
    f = sys._getframe(2)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_TORCH_DIR) and (not fn.startswith(_OWN_DIR) or fn in _MODEL_FILES):
            return "%s:%d" % (os.path.basename(fn), f.f_lineno)
        f = f.f_back
    return None


class location_override:
    """Within this context, recorded calls are located at `text` (an ONNX node) instead of a
    line of Python."""

    def __init__(self, text):
        self.text = text

    def __enter__(self):
        self.saved = getattr(_state, "location", None)
        _state.location = self.text

    def __exit__(self, *exc):
        _state.location = self.saved


class _Recorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.ops = []
        self.stack = []
        self.inside = False       # within a wrapped __getitem__ / __setitem__

    def add(self, func, name, args, kwargs, result):
        module = self.stack[-1] if self.stack else None
        self.ops.append(Op(len(self.ops), name, func, args, kwargs, result, module,
                           _user_location()))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.inside:  # torch routes some indexing back through the mode: recorded once
            return func(*args, **kwargs)
        result = func(*args, **kwargs)
        self.add(func, op_name(func), args, kwargs, result)
        return result


def _wrap_indexing(recorder):
    """Routes Tensor.__getitem__ / __setitem__ through the recorder (torch 1.13's function mode
    does not see them). Returns a function that restores the originals."""
    get = torch.Tensor.__getitem__
    put = torch.Tensor.__setitem__

    def getitem(self, index):
        if recorder.inside:
            return get(self, index)
        recorder.inside = True
        try:
            result = get(self, index)
        finally:
            recorder.inside = False
        recorder.add(get, "getitem", (self, index), {}, result)
        return result

    def setitem(self, index, value):
        if recorder.inside:
            return put(self, index, value)
        recorder.inside = True
        try:
            put(self, index, value)
        finally:
            recorder.inside = False
        recorder.add(put, "setitem", (self, index, value), {}, self)

    torch.Tensor.__getitem__ = getitem
    torch.Tensor.__setitem__ = setitem

    def restore():
        del torch.Tensor.__getitem__
        del torch.Tensor.__setitem__
        if torch.Tensor.__getitem__ is not get:  # pragma: no cover - a defensive check
            torch.Tensor.__getitem__ = get
            torch.Tensor.__setitem__ = put

    return restore


def _tensor_names(module):
    names = {}
    for name, p in module.named_parameters():
        names.setdefault(id(p), "parameter " + name)
    for name, b in module.named_buffers():
        names.setdefault(id(b), "buffer " + name)
    for path, m in module.named_modules():
        for attr, v in vars(m).items():
            if isinstance(v, torch.Tensor) and id(v) not in names:
                names[id(v)] = "tensor %s" % ((path + "." if path else "") + attr)
    return names


def record(module, ids):
    """The Trace of module(ids) (ids: a 1-D LongTensor), in eval mode. The module's training
    flags are restored afterwards; exceptions of the forward propagate."""
    rec = _Recorder()
    handles = []
    for path, m in module.named_modules():
        cls = type(m)
        shown = ("nn." + cls.__name__) if cls.__module__.startswith("torch.nn") else cls.__name__

        def pre(mod, inputs, path=path, shown=shown):
            rec.stack.append((path, shown))

        def post(mod, inputs, output):
            if rec.stack:
                rec.stack.pop()

        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    flags = {m: m.training for m in module.modules()}
    module.eval()
    restore = _wrap_indexing(rec)
    try:
        with rec:
            out = module(ids)
    finally:
        restore()
        for h in handles:
            h.remove()
        for m, t in flags.items():
            m.training = t
    return Trace(int(ids.shape[0]), ids, rec.ops, out, _tensor_names(module))


# --- float64 reference --------------------------------------------------------------------------

_LOW = (torch.float32, torch.float16, torch.bfloat16)


def _up(v):
    if isinstance(v, torch.Tensor):
        return v.to(torch.float64) if v.dtype in _LOW else v
    if isinstance(v, torch.dtype):
        return torch.float64 if v in _LOW else v
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        return type(v)(_up(x) for x in v)
    if isinstance(v, dict):
        return {k: _up(x) for k, x in v.items()}
    return v


class _Float64(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in ("float", "half", "bfloat16") and args and isinstance(args[0], torch.Tensor):
            return _up(args[0]).clone() if args[0].dtype in _LOW else args[0].to(torch.float64)
        return func(*_up(args), **_up(kwargs))


def float64_forward(module, ids):
    """module(ids) with every floating-point computation in float64 (see the file comment), in
    eval mode; the module is not changed."""
    flags = {m: m.training for m in module.modules()}
    module.eval()
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    promote = getattr(module, "float64_constants", None)  # an ONNX graph's float32 constants
    try:
        if promote is not None:
            promote(True)
        with _Float64():
            out = module(ids)
    finally:
        if promote is not None:
            promote(False)
        torch.set_default_dtype(old)
        for m, t in flags.items():
            m.training = t
    return out
