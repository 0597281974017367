"""PyTorch modules of the shapes of Chiang and Cholak's exact PARITY and FIRST networks (2022;
their code is at github.com/ndnlp/parity), written for the importer's tests: the token embedding
is an indexed tensor (`eye`-like rows [w]), the positions a module computing pos / n and
cos(pos pi) (PARITY) or [pos == 1] (FIRST) from the length, the layers nn.TransformerEncoderLayer
subclasses that override forward (post-norm, or without norms), the encoder an
nn.TransformerEncoder subclass built without its __init__, the readout one logit at y[-1]
(PARITY, eos last) or y[0] (FIRST, eos/CLS first); the layer-norm versions feed (x, -x).

The weights are read from the bundled models (models/cc-*.json), so that the import can be
compared with them as functions.
"""
import math
import os

import torch
import torch.nn as nn

from attnprop_torch.modelfile import loads, normalise

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models")


def _tensor(rows):
    return torch.tensor([[float(x) for x in r] for r in rows], dtype=torch.float32)


class LengthFeatures(nn.Module):
    def __init__(self, width, task):
        super().__init__()
        self.width = width
        self.task = task

    def forward(self, n):
        zero = torch.zeros(n)
        pos = torch.arange(0, n).to(torch.float)
        cols = [zero] * self.width
        if self.task == "parity":
            cols = cols[:3] + [pos / n, torch.cos(pos * math.pi)] + cols[5:]
        else:
            cols = cols[:3] + [pos == 1] + cols[4:]
        return torch.stack(cols, dim=1)


class Layer(nn.TransformerEncoderLayer):
    def __init__(self, d, heads, ffn, norms):
        super().__init__(d, heads, ffn, dropout=0.0)
        self.norms = norms

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        out, self.last_weights = self.self_attn(src, src, src, attn_mask=src_mask,
                                                key_padding_mask=src_key_padding_mask)
        src = src + self.dropout1(out)
        if self.norms:
            src = self.norm1(src)
        src = src + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(src)))))
        if self.norms:
            src = self.norm2(src)
        return src


class Encoder(nn.TransformerEncoder):
    def __init__(self, layers):
        nn.Module.__init__(self)
        self.layers = nn.ModuleList(layers)
        self.num_layers = len(layers)
        self.norm = None


class Net(nn.Module):
    #: len(w) as Chiang and Cholak write it; the ONNX tests use w.shape[0], which
    #: torch.onnx.export keeps dynamic (it records len(w) as a constant)
    length = staticmethod(len)

    def __init__(self, embedding, positions, encoder, output, doubled, read):
        super().__init__()
        self.word_embedding = embedding
        self.pos_encoding = positions
        self.encoder = encoder
        self.output_layer = output
        self.doubled = doubled
        self.read = read

    def forward(self, w):
        x = self.word_embedding[w] + self.pos_encoding(self.length(w))
        if self.doubled:
            x = torch.cat([x, -x], dim=-1)
        y = self.encoder(x.unsqueeze(1)).squeeze(1)
        return self.output_layer(y[self.read])


def _layer(spec, d, norms):
    heads = spec["heads"]
    nodes = {n["id"]: n for n in spec["update"]["nodes"]}
    H = len(heads)
    Q = [r for h in heads for r in h["score"]["Q"]]
    K = [r for h in heads for r in h["score"]["K"]]
    V = [r for h in heads for r in h["value"]["V"]]
    if "h" in nodes:
        w1 = nodes["h"]["W"]
    elif "a" in nodes:              # relu(norm1) directly: linear1 is the identity
        w1 = [[1 if r == c else 0 for c in range(d)] for r in range(d)]
    else:                           # no feed-forward block: zero weights
        w1 = [[0] * d]
    w2 = nodes["f"]["W"] if "f" in nodes else [[0] * len(w1)] * d
    layer = Layer(d, H, len(w1), norms)

    def bias(node_id, size):
        b = nodes.get(node_id, {}).get("b")
        return _tensor([b])[0] if b is not None else torch.zeros(size)

    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(_tensor(Q + K + V))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(_tensor(nodes["att"]["W"]))
        layer.self_attn.out_proj.bias.copy_(bias("att", d))
        layer.linear1.weight.copy_(_tensor(w1))
        layer.linear1.bias.copy_(bias("h", len(w1)))
        layer.linear2.weight.copy_(_tensor(w2))
        layer.linear2.bias.copy_(bias("f", d))
    if norms:
        layer.norm1.eps = layer.norm2.eps = float(nodes["n1"]["eps"])
    return layer


class DynamicNet(Net):
    length = staticmethod(lambda w: w.shape[0])


def network(model, dynamic=False):
    """(module, import_model keyword arguments) of the C&C-shaped network whose weights are
    those of the bundled model `model` (cc-parity, cc-first, cc-parity-ln5, cc-first-ln5);
    dynamic: the length from w.shape[0] instead of len(w)."""
    with open(os.path.join(MODELS, model + ".json")) as f:
        doc = normalise(loads(f.read()))
    task = "parity" if "parity" in model else "first"
    norms = "-ln" in model
    d = doc["d"]
    width = len(doc["token_embedding"]["0"])
    emb = _tensor([doc["token_embedding"][s] for s in ("0", "1", "$")])
    layers = [_layer(spec, d, norms) for spec in doc["layers"]]
    out = nn.Linear(d, 1)
    with torch.no_grad():
        out.weight.copy_(_tensor([doc["readout"]["W"][1]]))
        out.bias.fill_(float(doc["readout"]["c"][1]))
    read = -1 if task == "parity" else 0
    net = (DynamicNet if dynamic else Net)(emb, LengthFeatures(width, task), Encoder(layers), out,
                                           norms, read)
    kwargs = dict(alphabet=["0", "1"], eos="$", readout="logit", name="torch-" + model,
                  eos_position="last" if task == "parity" else "first")
    return net, kwargs

