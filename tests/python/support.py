"""Shared helpers of the attnprop_torch tests: the attnprop binary, random encoders of every
supported configuration (fixed seeds), and running attnprop."""
import json
import os
import subprocess
import tempfile

import torch
import torch.nn as nn

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


def load_json(path):
    with open(path) as f:
        return json.load(f)
