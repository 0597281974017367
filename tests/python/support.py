"""Shared helpers of the attnprop_torch tests: the attnprop binary, random encoders of every
supported configuration (fixed seeds), and running attnprop."""
import itertools
import json
import os
import random
import subprocess
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

from attnprop_torch.__main__ import dumps


def attnprop_bin():
    b = os.environ.get("ATTNPROP")
    if not b:
        here = os.path.dirname(os.path.abspath(__file__))
        b = os.path.join(here, "..", "..", "build", "bin", "attnprop")
    if not os.path.isfile(b):
        raise RuntimeError("attnprop binary not found at %s (set ATTNPROP)" % b)
    return b


def run_attnprop(*args):
    """(exit code, stdout, stderr) of attnprop with these arguments."""
    p = subprocess.run([attnprop_bin()] + [str(a) for a in args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def randomise(module, seed, std=0.4):
    """Every parameter of `module` drawn from N(0, std^2) (layer norm gains around 1), so that
    biases, gains and shifts are all exercised."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64) * std
            if name.endswith("weight") and p.dim() == 1:  # layer norm gamma
                noise = noise + 1
            p.copy_(noise.to(p.dtype))
    return module


def write_doc(doc, directory, name="model.json"):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(dumps(doc))
    return path


class TempDir:
    def __enter__(self):
        self._t = tempfile.TemporaryDirectory()
        return self._t.name

    def __exit__(self, *exc):
        self._t.cleanup()


def no_bias_mha(E, H, batch_first):
    return nn.MultiheadAttention(E, H, bias=False, batch_first=batch_first)


def configurations():
    """(label, build) for every supported configuration; build() returns export_encoder's
    keyword arguments for a random model (fixed seeds)."""
    def post_relu_seqfirst():
        torch.manual_seed(11)
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, activation="relu")
        enc = nn.TransformerEncoder(layer, 2)
        emb, lin = nn.Embedding(3, 8), nn.Linear(8, 2)
        for m in (enc, emb, lin):
            randomise(m, 101)
        return dict(encoder=enc, token_embedding=emb, alphabet=["0", "1"], eos="$",
                    positional="sinusoidal", readout=lin, name="post-relu-seqfirst")

    def pre_gelu_batchfirst_final_norm_threshold():
        torch.manual_seed(12)
        layer = nn.TransformerEncoderLayer(8, 4, dim_feedforward=12, activation="gelu",
                                           layer_norm_eps=1e-6, batch_first=True, norm_first=True)
        enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8, eps=1e-3))
        emb, pos, lin = nn.Embedding(3, 8), nn.Embedding(300, 8), nn.Linear(8, 1)
        for k, m in enumerate((enc, emb, pos, lin)):
            randomise(m, 200 + k)
        return dict(encoder=enc, token_embedding=emb, alphabet=["a", "b"], eos="<eos>",
                    positional=pos, readout=lin, name="pre-gelu-final-norm-threshold")

    def no_biases():
        torch.manual_seed(13)
        layers = []
        for k in range(2):
            layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=nn.GELU(),
                                               batch_first=bool(k))
            layer.self_attn = no_bias_mha(8, 2, bool(k))
            layer.linear1 = nn.Linear(8, 16, bias=False)
            layer.linear2 = nn.Linear(16, 8, bias=False)
            layer.norm1 = nn.LayerNorm(8, elementwise_affine=False)
            layer.norm2 = nn.LayerNorm(8, eps=1e-4, elementwise_affine=False)
            layers.append(layer)
        emb, lin = nn.Embedding(4, 8), nn.Linear(8, 3, bias=False)
        for k, m in enumerate(layers + [emb, lin]):
            randomise(m, 300 + k)
        return dict(encoder=layers, token_embedding=emb, alphabet=["(", ")", "x"], eos="$",
                    positional=None, readout=lin, name="no-biases")

    def mixed_list_mha_alone():
        torch.manual_seed(14)
        mha = nn.MultiheadAttention(8, 1, batch_first=True)
        ln = nn.LayerNorm(8)
        pre = nn.TransformerEncoderLayer(8, 2, dim_feedforward=8, activation=nn.ReLU(),
                                         norm_first=True)
        mha2 = nn.MultiheadAttention(8, 2)
        emb, lin = nn.Embedding(3, 8), nn.Linear(8, 2)
        table = torch.randn(260, 8, generator=torch.Generator().manual_seed(5)) * 0.5
        for k, m in enumerate((mha, ln, pre, mha2, emb, lin)):
            randomise(m, 400 + k)
        return dict(encoder=nn.ModuleList([mha, ln, nn.Dropout(0.2), pre, mha2, nn.Identity()]),
                    token_embedding=emb, alphabet=["0", "1"], eos="$", positional=table,
                    readout=lin, readout_symbols=["reject", "accept"], name="mixed-list")

    def float64_post_gelu():
        torch.manual_seed(15)
        layer = nn.TransformerEncoderLayer(6, 3, dim_feedforward=10, activation=torch.nn.functional.gelu,
                                           batch_first=True, dtype=torch.float64)
        enc = nn.TransformerEncoder(layer, 1, norm=nn.LayerNorm(6, dtype=torch.float64))
        emb = nn.Embedding(3, 6, dtype=torch.float64)
        lin = nn.Linear(6, 2, dtype=torch.float64)
        for k, m in enumerate((enc, emb, lin)):
            randomise(m, 500 + k)
        return dict(encoder=enc, token_embedding=emb, alphabet=["0", "1"], eos="$",
                    positional="sinusoidal", readout=lin, name="float64-post-gelu")

    return [("post-norm relu, seq-first, sinusoidal, softmax", post_relu_seqfirst),
            ("pre-norm gelu, batch-first, learned table, final norm, threshold",
             pre_gelu_batchfirst_final_norm_threshold),
            ("no biases anywhere, no affine layer norms, no positions, 3 outputs", no_biases),
            ("list: MHA alone, LayerNorm, dropout, pre-norm layer, MHA; tensor table", mixed_list_mha_alone),
            ("float64 module, post-norm gelu, final norm", float64_post_gelu)]


#: The four switches of an nn.TransformerEncoderLayer the exporter must get right: norm_first,
#: the activation, batch_first and whether biases are present. random_configuration draws the
#: rest (sizes, eps, the container, positions, readout, dtype) from its seed.
SWITCHES = list(itertools.product([False, True], ["relu", "gelu"], [False, True], [True, False]))


def random_configuration(seed, norm_first, activation, batch_first, bias):
    """export_encoder's keyword arguments for a random encoder with these switches (every layer
    has them); everything else is drawn from `seed`: d_model = heads x head width, 1 or 2
    layers, feed-forward width, layer norm eps, how the activation is given (string, function or
    module), the container (nn.TransformerEncoder with or without a final norm, a list,
    nn.ModuleList, nn.Sequential, one bare layer), an nn.MultiheadAttention-with-residual or
    nn.LayerNorm item in lists, the alphabet, the positional embedding (none, sinusoidal,
    nn.Embedding table, tensor table), the readout (threshold or softmax over 2-3 outputs) and
    the dtype (float32 or float64)."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    heads = rng.choice([1, 2, 3])
    E = heads * rng.choice([1, 2, 3])
    ffn = rng.randint(1, 12)
    dtype = rng.choice([torch.float32, torch.float64])
    count = rng.choice([1, 2])
    act_forms = {"relu": ["relu", F.relu, nn.ReLU()], "gelu": ["gelu", F.gelu, nn.GELU()]}

    def make_layer():
        layer = nn.TransformerEncoderLayer(E, heads, dim_feedforward=ffn,
                                           dropout=rng.choice([0.0, 0.1]),
                                           activation=rng.choice(act_forms[activation]),
                                           layer_norm_eps=rng.choice([1e-5, 1e-6, 1e-3, 0.25]),
                                           batch_first=batch_first, norm_first=norm_first)
        if not bias:
            layer.self_attn = nn.MultiheadAttention(E, heads, bias=False, batch_first=batch_first)
            layer.linear1 = nn.Linear(E, ffn, bias=False)
            layer.linear2 = nn.Linear(ffn, E, bias=False)
            eps = layer.norm1.eps
            layer.norm1 = nn.LayerNorm(E, eps=eps, elementwise_affine=False)
            layer.norm2 = nn.LayerNorm(E, eps=eps, elementwise_affine=False)
        return layer

    forms = ["encoder", "encoder+norm", "list", "ModuleList", "Sequential"]
    if count == 1:
        forms.append("layer")
    form = rng.choice(forms)
    extra = None
    if form.startswith("encoder"):
        final = nn.LayerNorm(E, eps=rng.choice([1e-5, 1e-2]), elementwise_affine=bias) \
            if form == "encoder+norm" else None
        encoder = nn.TransformerEncoder(make_layer(), count, norm=final)
    elif form == "layer":
        encoder = make_layer()
    else:
        items = [make_layer() for _ in range(count)]
        extra = rng.choice([None, "mha", "norm"])
        form += {None: "", "mha": " with an MHA item", "norm": " with a LayerNorm item"}[extra]
        if extra == "mha":
            items.insert(rng.randint(0, len(items)),
                         nn.MultiheadAttention(E, heads, bias=bias, batch_first=batch_first))
        elif extra == "norm":
            items.insert(rng.randint(0, len(items)), nn.LayerNorm(E, elementwise_affine=bias))
        encoder = {"list": list, "ModuleList": nn.ModuleList,
                   "Sequential": lambda m: nn.Sequential(*m)}[form.split()[0]](items)
    alphabet = rng.sample(["0", "1", "a", "(", ")"], rng.randint(1, 3))
    emb = nn.Embedding(len(alphabet) + 1, E)
    pos_kind = rng.choice(["none", "sinusoidal", "embedding", "tensor"])
    positional = {"none": None, "sinusoidal": "sinusoidal",
                  "embedding": nn.Embedding(300, E), "tensor": torch.randn(257, E) * 0.5}[pos_kind]
    k = rng.choice([1, 2, 3])
    readout = nn.Linear(E, k, bias=bias)
    symbols = None if k == 1 else ["r%d" % j for j in range(k)]
    modules = [encoder if isinstance(encoder, nn.Module) else nn.ModuleList(encoder), emb, readout]
    if isinstance(positional, nn.Embedding):
        modules.append(positional)
    for j, m in enumerate(modules):
        randomise(m, seed * 10 + j)
        m.to(dtype)
    if isinstance(positional, torch.Tensor):
        positional = positional.to(dtype)
    label = "seed %d: norm_first=%s %s batch_first=%s bias=%s; %s (%d layers), E=%d H=%d ffn=%d, %s, " \
            "positions %s, %d output%s" % (seed, norm_first, activation, batch_first, bias, form,
                                          count, E, heads, ffn, str(dtype)[6:], pos_kind, k,
                                          "" if k == 1 else "s")
    return label, dict(encoder=encoder, token_embedding=emb, alphabet=alphabet, eos="$",
                       positional=positional, readout=readout, readout_symbols=symbols,
                       name="random-%d" % seed)


def no_floats(v):
    """True when no Python float appears in v (a model document)."""
    if isinstance(v, float):
        return False
    if isinstance(v, dict):
        return all(no_floats(x) for x in v.values())
    if isinstance(v, list):
        return all(no_floats(x) for x in v)
    return True


def load_json(path):
    with open(path) as f:
        return json.load(f)
