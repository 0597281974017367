"""export_encoder: a PyTorch transformer encoder as an attnprop model file (docs/torch.md).

The mapping, in attnprop's terms (docs/model-format.md):

- The sequence fed to torch is x_1 ... x_{n-1} eos: token ids are the alphabet indices, eos the
  last row of the token embedding; attnprop appends eos itself, and its readout reads y_n, the
  state at the eos position, which is torch's last position.
- y^(0) = token embedding + positional embedding (a table, the sinusoids, or zero).
- Each nn.TransformerEncoderLayer (or nn.MultiheadAttention with a residual) is one attnprop
  layer: one dot-product head per attention head, Q, K and V the blocks of in_proj_weight with
  the blocks of in_proj_bias as q_bias, k_bias and the value bias, and the default scale
  1/sqrt(head_dim); the update is a graph: out_proj, the residual, the layer norms (eps as the
  module has it) and the feed-forward block (linear1, relu or the exact gelu, linear2).
- A pre-norm layer (norm_first=True) attends to norm1(x), which is not a linear map of x: the
  state then carries both, y = (x, norm1_next(x)) with d = 2 d_model, each update computing the
  next layer's attention input (and the input map the first one's). Scores, values and the
  readout read the half they need through zero columns.
- Dropout is the identity (eval mode). A final nn.LayerNorm (nn.TransformerEncoder's norm) ends
  the last update. The readout is an nn.Linear on the last position: one output is a threshold
  readout (accept iff w . y + b > 0, i.e. w . y > -b), k outputs a softmax readout.

Every number is the exact value of the float in the module (exact.py).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from .exact import ExportError, fraction_of_float, number, tensor_values

__all__ = ["export_encoder", "ExportError"]

_LAYER_KINDS = ("nn.TransformerEncoderLayer, nn.MultiheadAttention, nn.LayerNorm, nn.Dropout "
                "or nn.Identity")


def _qualname(obj):
    t = obj if isinstance(obj, type) else type(obj)
    if t.__module__.startswith("torch.nn"):
        return "nn." + t.__name__
    return t.__name__


def _overrides(obj, base, methods):
    """The first of `methods` that type(obj) defines differently from `base`, or None."""
    for m in methods:
        if getattr(type(obj), m, None) is not getattr(base, m, None):
            return m
    return None


class _Stage:
    """One attnprop layer: an attention block and what follows it up to the next one."""

    def __init__(self, where, kind, module, mha, pre_norm, act=None):
        self.where = where          # "layer 2 (nn.TransformerEncoderLayer)"
        self.kind = kind            # "encoder" or "mha"
        self.module = module
        self.mha = mha
        self.pre_norm = pre_norm    # the LayerNorm applied to the state before attention, or None
        self.act = act              # "relu" or "gelu" (encoder layers)
        self.after = []             # (where, nn.LayerNorm) applied after the block


class _Spec:
    """The checked pieces of an export: what export_encoder and the reference forward share."""

    def __init__(self):
        self.items = []        # (where, module) in order, for the reference forward
        self.encoder = None    # nn.TransformerEncoder, when one was given
        self.stages = []
        self.leading = []      # (where, nn.LayerNorm) before the first attention block
        self.d_model = 0
        self.alphabet = []
        self.eos = ""
        self.token_embedding = None
        self.positional = None
        self.readout = None
        self.readout_symbols = None
        self.name = ""
        self.description = None


def _check_alphabet(alphabet, eos):
    if isinstance(alphabet, str) or not hasattr(alphabet, "__iter__"):
        raise ExportError("alphabet: expected a list of one-character strings, got %r" % (alphabet,))
    alphabet = list(alphabet)
    if not alphabet:
        raise ExportError("alphabet: must not be empty")
    seen = set()
    for s in alphabet:
        if not isinstance(s, str) or len(s) != 1 or not (0x21 <= ord(s) <= 0x7e):
            raise ExportError("alphabet: symbol %r must be exactly one printable ASCII character "
                              "other than space" % (s,))
        if s == "*":
            raise ExportError("alphabet: '*' is reserved (it marks free positions in restrictions)")
        if s in seen:
            raise ExportError("alphabet: duplicate symbol %r" % (s,))
        seen.add(s)
    if not isinstance(eos, str) or not eos:
        raise ExportError("eos: expected a non-empty string, got %r" % (eos,))
    if eos in seen:
        raise ExportError("eos: %r is in the alphabet" % (eos,))
    return alphabet


def _check_layer_norm(where, ln, d_model):
    if _overrides(ln, nn.LayerNorm, ("forward",)):
        raise ExportError("%s: a subclass of nn.LayerNorm that overrides forward is not supported"
                          % where)
    if tuple(ln.normalized_shape) != (d_model,):
        raise ExportError("%s: normalized_shape %s is not (%d,): attnprop's layer norm normalises "
                          "the d_model coordinates of one position" %
                          (where, tuple(ln.normalized_shape), d_model))


def _check_mha(where, mha, d_model):
    if _overrides(mha, nn.MultiheadAttention, ("forward",)):
        raise ExportError("%s: a subclass of nn.MultiheadAttention that overrides forward is not "
                          "supported" % where)
    if mha.embed_dim != d_model:
        raise ExportError("%s: embed_dim %d differs from the token embedding's dimension %d" %
                          (where, mha.embed_dim, d_model))
    if not mha._qkv_same_embed_dim:
        raise ExportError("%s: separate key/value dimensions (kdim=%s, vdim=%s) are not supported "
                          "(self-attention reads one sequence of width embed_dim)" %
                          (where, mha.kdim, mha.vdim))
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ExportError("%s: add_bias_kv (the extra key and value bias_k, bias_v) is not "
                          "supported" % where)
    if mha.add_zero_attn:
        raise ExportError("%s: add_zero_attn (an extra zero key and value) is not supported" % where)


def _activation(where, layer):
    act = layer.activation
    if act is F.relu or isinstance(act, nn.ReLU):
        return "relu"
    if act is F.gelu:
        return "gelu"
    if isinstance(act, nn.GELU):
        if getattr(act, "approximate", "none") != "none":
            raise ExportError("%s: activation GELU(approximate=%r) is not supported (only the exact "
                              "gelu, approximate='none')" % (where, act.approximate))
        return "gelu"
    name = getattr(act, "__name__", None) or _qualname(act)
    raise ExportError("%s: activation %r is not supported (relu and the exact gelu are)" %
                      (where, name))


def _layers_of(encoder):
    """(items, final norm, encoder or None) of what `encoder` describes."""
    if isinstance(encoder, nn.TransformerEncoder):
        if _overrides(encoder, nn.TransformerEncoder, ("forward",)):
            raise ExportError("encoder (%s): a subclass of nn.TransformerEncoder that overrides "
                              "forward is not supported" % _qualname(encoder))
        return list(encoder.layers), encoder.norm, encoder
    if isinstance(encoder, (nn.TransformerEncoderLayer, nn.MultiheadAttention)):
        return [encoder], None, None
    if isinstance(encoder, (list, tuple, nn.ModuleList, nn.Sequential)):
        if isinstance(encoder, nn.Sequential) and _overrides(encoder, nn.Sequential, ("forward",)):
            raise ExportError("encoder (%s): a subclass of nn.Sequential that overrides forward is "
                              "not supported" % _qualname(encoder))
        return list(encoder), None, None
    raise ExportError("encoder (%s): unsupported module; expected nn.TransformerEncoder, a list of "
                      "nn.TransformerEncoderLayer (or nn.MultiheadAttention, nn.LayerNorm), or one "
                      "layer" % _qualname(encoder))


def check_spec(encoder, token_embedding, alphabet, eos, positional=None, readout=None,
               readout_symbols=None, name=None, description=None, mask=None,
               src_key_padding_mask=None, is_causal=False):
    """Checks every argument of export_encoder and returns the _Spec; ExportError otherwise."""
    if mask is not None:
        raise ExportError("mask: masked attention (attn_mask / mask) is not supported: attnprop's "
                          "attention is unmasked over all n positions")
    if is_causal:
        raise ExportError("is_causal: causal attention is not supported: attnprop's attention is "
                          "unmasked over all n positions")
    if src_key_padding_mask is not None:
        raise ExportError("src_key_padding_mask: key padding is not supported: attnprop evaluates "
                          "one sequence without padding")
    spec = _Spec()
    if not isinstance(name, str) or not name:
        raise ExportError("name: expected a non-empty string, got %r" % (name,))
    spec.name = name
    if description is not None and not isinstance(description, str):
        raise ExportError("description: expected a string, got %r" % (description,))
    spec.description = description
    spec.alphabet = _check_alphabet(alphabet, eos)
    spec.eos = eos

    # Token embedding: the alphabet, then eos.
    if not isinstance(token_embedding, nn.Embedding):
        raise ExportError("token_embedding: expected nn.Embedding over the alphabet and eos, got %s"
                          % _qualname(token_embedding))
    if token_embedding.max_norm is not None:
        raise ExportError("token_embedding: max_norm (renormalising rows at lookup) is not supported")
    need = len(spec.alphabet) + 1
    if token_embedding.num_embeddings != need:
        raise ExportError("token_embedding: nn.Embedding has %d rows; the alphabet %s and eos %r need "
                          "%d (the symbols in order, eos last)" %
                          (token_embedding.num_embeddings, spec.alphabet, eos, need))
    spec.token_embedding = token_embedding
    E = spec.d_model = token_embedding.embedding_dim

    items, final, spec.encoder = _layers_of(encoder)
    for k, item in enumerate(items):
        where = "layer %d (%s)" % (k + 1, _qualname(item))
        spec.items.append((where, item))
        if isinstance(item, nn.TransformerEncoderLayer):
            m = _overrides(item, nn.TransformerEncoderLayer, ("forward", "_sa_block", "_ff_block"))
            if m:
                raise ExportError("%s: a subclass of nn.TransformerEncoderLayer that overrides %s is "
                                  "not supported" % (where, m))
            _check_mha(where + " self_attn", item.self_attn, E)
            for part in ("norm1", "norm2"):
                _check_layer_norm("%s %s" % (where, part), getattr(item, part), E)
            for part in ("linear1", "linear2"):
                lin = getattr(item, part)
                if type(lin) is not nn.Linear:
                    raise ExportError("%s %s: expected nn.Linear, got %s" % (where, part, _qualname(lin)))
            if item.linear1.in_features != E or item.linear2.out_features != E:
                raise ExportError("%s: the feed-forward block maps %d -> %d; it must map d_model = %d "
                                  "to itself" % (where, item.linear1.in_features,
                                                 item.linear2.out_features, E))
            act = _activation(where, item)
            spec.stages.append(_Stage(where, "encoder", item, item.self_attn,
                                      item.norm1 if item.norm_first else None, act))
        elif isinstance(item, nn.MultiheadAttention):
            _check_mha(where, item, E)
            spec.stages.append(_Stage(where, "mha", item, item, None))
        elif isinstance(item, nn.LayerNorm):
            _check_layer_norm(where, item, E)
            (spec.stages[-1].after if spec.stages else spec.leading).append((where, item))
        elif isinstance(item, (nn.Dropout, nn.Identity)):
            pass  # the identity in eval mode
        else:
            raise ExportError("%s: unsupported module; expected %s" % (where, _LAYER_KINDS))
    if final is not None:
        where = "final norm (%s)" % _qualname(final)
        if not isinstance(final, nn.LayerNorm):
            raise ExportError("%s: expected nn.LayerNorm" % where)
        _check_layer_norm(where, final, E)
        (spec.stages[-1].after if spec.stages else spec.leading).append((where, final))

    # Positional embedding.
    if positional is None or (isinstance(positional, str) and positional == "sinusoidal"):
        spec.positional = positional
    elif isinstance(positional, nn.Embedding):
        if positional.max_norm is not None:
            raise ExportError("positional: max_norm (renormalising rows at lookup) is not supported")
        if positional.embedding_dim != E:
            raise ExportError("positional: nn.Embedding has dimension %d; d_model is %d" %
                              (positional.embedding_dim, E))
        spec.positional = positional
    elif isinstance(positional, torch.Tensor):
        if positional.dim() != 2 or positional.shape[1] != E or positional.shape[0] < 1:
            raise ExportError("positional: a tensor must be a table of shape (max_len, %d), got %s" %
                              (E, tuple(positional.shape)))
        spec.positional = positional
    else:
        raise ExportError("positional: %r is not supported (expected nn.Embedding, a 2-D tensor, "
                          "'sinusoidal' or None)" % (positional if isinstance(positional, str)
                                                     else _qualname(positional)))

    # Readout.
    if type(readout) is not nn.Linear:
        raise ExportError("readout: expected nn.Linear on the last position, got %s" %
                          _qualname(readout))
    if readout.in_features != E:
        raise ExportError("readout: nn.Linear reads %d features; d_model is %d" %
                          (readout.in_features, E))
    k = readout.out_features
    if k > 1:
        if readout_symbols is None:
            if k != len(spec.alphabet):
                raise ExportError("readout: nn.Linear has %d outputs; give readout_symbols (the "
                                  "default, the alphabet, has %d)" % (k, len(spec.alphabet)))
            readout_symbols = list(spec.alphabet)
        readout_symbols = list(readout_symbols)
        if len(readout_symbols) != k:
            raise ExportError("readout_symbols: %d names for %d outputs" % (len(readout_symbols), k))
        if any(not isinstance(s, str) or not s for s in readout_symbols) or \
                len(set(readout_symbols)) != k:
            raise ExportError("readout_symbols: expected %d distinct non-empty strings, got %r" %
                              (k, readout_symbols))
    elif readout_symbols is not None:
        raise ExportError("readout_symbols: a readout with one output is a threshold (accept iff "
                          "its value > 0); it has no symbols")
    spec.readout = readout
    spec.readout_symbols = readout_symbols
    return spec


# --- writing --------------------------------------------------------------------------------

def _vec(values):
    return [number(v) for v in values]


def _matrix(rows):
    return [_vec(r) for r in rows]


def _padded(rows, offset, d):
    """Rows placed at columns [offset, offset + len) of width d, zeros elsewhere."""
    return [[0] * offset + list(r) + [0] * (d - offset - len(r)) for r in rows]


def _values(t, where):
    return tensor_values(t, where)


def _layer_norm_node(node_id, arg, where, ln):
    node = {"id": node_id, "op": "layer_norm", "in": arg,
            "eps": number(fraction_of_float(ln.eps, where + " eps"))}
    if getattr(ln, "weight", None) is not None:
        node["gamma"] = _vec(_values(ln.weight, where + " weight"))
    if getattr(ln, "bias", None) is not None:
        node["beta"] = _vec(_values(ln.bias, where + " bias"))
    return node


def _linear_node(node_id, arg, where, lin):
    node = {"id": node_id, "op": "linear", "in": arg,
            "W": _matrix(_values(lin.weight, where + " weight"))}
    if lin.bias is not None:
        node["b"] = _vec(_values(lin.bias, where + " bias"))
    return node


def _heads(stage, E, d, offset):
    mha = stage.mha
    H = mha.num_heads
    hd = E // H
    where = stage.where if stage.kind == "mha" else stage.where + " self_attn"
    W = _values(mha.in_proj_weight, where + " in_proj_weight")
    b = _values(mha.in_proj_bias, where + " in_proj_bias") if mha.in_proj_bias is not None else None
    heads = []
    for h in range(H):
        rows = slice(h * hd, (h + 1) * hd)
        blocks = [W[part * E:(part + 1) * E][rows] for part in range(3)]
        biases = [b[part * E:(part + 1) * E][rows] for part in range(3)] if b is not None else None
        score = {"kind": "dot",
                 "Q": _matrix(_padded(blocks[0], offset, d)),
                 "K": _matrix(_padded(blocks[1], offset, d))}
        value = {"kind": "linear", "V": _matrix(_padded(blocks[2], offset, d))}
        if biases is not None:
            score["q_bias"] = _vec(biases[0])
            score["k_bias"] = _vec(biases[1])
            value["bias"] = _vec(biases[2])
        heads.append({"score": score, "value": value})
    return heads


def _state_nodes(nodes, out, next_stage, augmented, E):
    """Appends the nodes that form the state (x, a) from x = `out` when the state is augmented;
    returns the output id."""
    if not augmented:
        return out
    if next_stage is not None and next_stage.pre_norm is not None:
        nodes.append(_layer_norm_node("next_norm1", out, next_stage.where + " norm1",
                                      next_stage.pre_norm))
        a = "next_norm1"
    else:
        a = out
    nodes.append({"id": "state", "op": "concat", "in": [out, a]})
    return "state"


def _positionwise(nodes, arg, after):
    """Layer norms applied in order; returns the last id."""
    for t, (where, ln) in enumerate(after):
        node_id = "final_norm" if where.startswith("final norm") else "layer_norm_%d" % (t + 1)
        nodes.append(_layer_norm_node(node_id, arg, where, ln))
        arg = node_id
    return arg


def _describe(spec):
    parts = []
    for where, item in spec.items:
        if isinstance(item, nn.TransformerEncoderLayer):
            parts.append("TransformerEncoderLayer(d_model=%d, nhead=%d, dim_feedforward=%d, %s, %s)" %
                         (spec.d_model, item.self_attn.num_heads, item.linear1.out_features,
                          _activation(where, item), "pre-norm" if item.norm_first else "post-norm"))
        elif isinstance(item, nn.MultiheadAttention):
            parts.append("MultiheadAttention(embed_dim=%d, num_heads=%d) + residual" %
                         (item.embed_dim, item.num_heads))
        elif isinstance(item, nn.LayerNorm):
            parts.append("LayerNorm")
    if spec.encoder is not None and spec.encoder.norm is not None:
        parts.append("final LayerNorm")
    pos = ("no positional embedding" if spec.positional is None else
           "sinusoidal positions" if isinstance(spec.positional, str) else "a positional table")
    out = ("threshold readout" if spec.readout.out_features == 1 else
           "softmax readout over %s" % ", ".join(spec.readout_symbols))
    return ("PyTorch encoder exported by attnprop_torch: %s; %s; %s. The eos token is the last "
            "position fed to torch; the readout reads it." %
            ("; ".join(parts) if parts else "no layers", pos, out))


def export_encoder(encoder, token_embedding, *, alphabet, eos, positional=None, readout,
                   readout_symbols=None, name, description=None, mask=None,
                   src_key_padding_mask=None, is_causal=False):
    """An attnprop model document (a dict for json.dump) computing exactly what `encoder` computes
    in eval mode on token ids x_1 .. x_{n-1}, eos, read at the last position (docs/torch.md).

    encoder: nn.TransformerEncoder (its layers and final norm), a list (or nn.ModuleList /
    nn.Sequential) of nn.TransformerEncoderLayer, nn.MultiheadAttention (self-attention plus a
    residual: x + mha(x, x, x)), nn.LayerNorm, nn.Dropout or nn.Identity, or one layer.
    token_embedding: nn.Embedding with one row per alphabet symbol, in order, then eos.
    positional: nn.Embedding or a (max_len, d_model) tensor (a table: row i - 1 is added at
    position i; inputs are limited to n <= max_len), "sinusoidal" (Vaswani et al., as in the
    PyTorch tutorial's PositionalEncoding without its dropout), or None.
    readout: nn.Linear; one output is a threshold readout (accept iff its value > 0), k outputs
    a softmax readout named readout_symbols (default: the alphabet).
    mask, src_key_padding_mask, is_causal: what the model is called with; anything but the
    default is refused (attnprop's attention is unmasked).

    Raises ExportError naming the module and what is unsupported."""
    spec = check_spec(encoder, token_embedding, alphabet, eos, positional, readout, readout_symbols,
                      name, description, mask, src_key_padding_mask, is_causal)
    return _document(spec)


def _document(spec):
    E = spec.d_model
    augmented = any(s.pre_norm is not None for s in spec.stages)
    d = 2 * E if augmented else E
    offset = E if augmented else 0  # where heads read the attention input

    tokens = _values(spec.token_embedding.weight, "token_embedding weight")
    token_json = {s: _vec(tokens[k]) for k, s in enumerate(spec.alphabet)}
    token_json[spec.eos] = _vec(tokens[len(spec.alphabet)])

    if spec.positional is None:
        positional = {"kind": "formula", "dim": E, "coordinates": [0] if E == 1 else {}}
    elif isinstance(spec.positional, str):
        positional = {"kind": "sinusoidal", "dim": E}
    else:
        table = spec.positional.weight if isinstance(spec.positional, nn.Embedding) else spec.positional
        positional = {"kind": "table", "rows": _matrix(_values(table, "positional"))}

    first = spec.stages[0] if spec.stages else None
    if not augmented and not spec.leading:
        input_json = "add"
    else:
        nodes = [{"id": "e", "op": "add", "in": ["v", "p"]}]
        x = _positionwise(nodes, "e", spec.leading)
        out = _state_nodes(nodes, x, first, augmented, E)
        input_json = {"kind": "map", "map": {"kind": "graph", "nodes": nodes, "output": out}}

    layers = []
    for k, stage in enumerate(spec.stages):
        nxt = spec.stages[k + 1] if k + 1 < len(spec.stages) else None
        nodes = []
        x = "y"
        if augmented:
            nodes.append({"id": "x", "op": "slice", "in": "y", "from": 0, "to": E})
            x = "x"
        where = stage.where if stage.kind == "mha" else stage.where + " self_attn"
        nodes.append(_linear_node("attn", "b", where + " out_proj", stage.mha.out_proj))
        if stage.kind == "mha":
            nodes.append({"id": "res", "op": "add", "in": [x, "attn"]})
            out = "res"
        else:
            m = stage.module
            nodes.append({"id": "res1", "op": "add", "in": [x, "attn"]})
            if m.norm_first:
                nodes.append(_layer_norm_node("norm2", "res1", stage.where + " norm2", m.norm2))
                ff_in, ff_res = "norm2", "res1"
            else:
                nodes.append(_layer_norm_node("norm1", "res1", stage.where + " norm1", m.norm1))
                ff_in, ff_res = "norm1", "norm1"
            nodes.append(_linear_node("linear1", ff_in, stage.where + " linear1", m.linear1))
            nodes.append({"id": "activation", "op": stage.act, "in": "linear1"})
            nodes.append(_linear_node("linear2", "activation", stage.where + " linear2", m.linear2))
            nodes.append({"id": "res2", "op": "add", "in": [ff_res, "linear2"]})
            out = "res2"
            if not m.norm_first:
                nodes.append(_layer_norm_node("norm2", "res2", stage.where + " norm2", m.norm2))
                out = "norm2"
        out = _positionwise(nodes, out, stage.after)
        out = _state_nodes(nodes, out, nxt, augmented, E)
        layers.append({"heads": _heads(stage, E, d, offset),
                       "update": {"kind": "graph", "nodes": nodes, "output": out}})

    W = _values(spec.readout.weight, "readout weight")
    bias = _values(spec.readout.bias, "readout bias") if spec.readout.bias is not None else None
    if spec.readout.out_features == 1:
        readout = {"kind": "threshold", "w": _vec(_padded(W, 0, d)[0]),
                   "t": number(-bias[0]) if bias is not None else 0}
    else:
        readout = {"kind": "softmax", "symbols": list(spec.readout_symbols),
                   "W": _matrix(_padded(W, 0, d))}
        if bias is not None:
            readout["c"] = _vec(bias)

    doc = {"format": "attnprop-model", "version": 1, "name": spec.name,
           "description": spec.description if spec.description is not None else _describe(spec),
           "source": "attnprop_torch (PyTorch %s)" % torch.__version__,
           "attention": "soft", "alphabet": list(spec.alphabet), "eos": spec.eos, "d": d,
           "token_embedding": token_json, "positional": positional, "input": input_json,
           "layers": layers, "readout": readout}
    return doc
