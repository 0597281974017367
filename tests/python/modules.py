"""Hand-written PyTorch modules for the importer's tests (test_import.py): custom forwards,
layers without norms, hand-written attention, positions computed from n, eos first (CLS),
one-logit and k-logit readouts, masks inside forward, tables that depend on n. Each is called as
module(ids) with ids the 1-D LongTensor of symbol indices (eos = len(alphabet)).

A line that a refusal must name carries a marker comment `# <name>`; test_import.py finds its
number with `line_of`, so the expected messages stay word for word when this file changes.
"""

import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

FILE = os.path.basename(__file__)


def line_of(marker):
    """`modules.py:N` of the line holding `# <marker>`."""
    with open(__file__) as f:
        for k, line in enumerate(f, 1):
            if line.rstrip().endswith("# <%s>" % marker):
                return "%s:%d" % (FILE, k)
    raise KeyError(marker)


def randomise(module, seed, std=0.5):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64) * std
            if name.endswith("weight") and p.dim() == 1:
                noise = noise + 1
            p.copy_(noise.to(p.dtype))
    return module


class LengthPositions(nn.Module):
    """Positional features from the length, as Chiang and Cholak compute them: pos/n,
    cos(pi pos), [pos == 1], zeros."""

    def __init__(self, d):
        super().__init__()
        self.d = d

    def forward(self, n):
        zero = torch.zeros(n)
        pos = torch.arange(0, n).to(torch.float)
        return torch.stack([pos / n, torch.cos(pos * math.pi), (pos == 1).float()] +
                           [zero] * (self.d - 3), dim=1)


class PostNormLayer(nn.TransformerEncoderLayer):
    """A layer subclass that overrides forward (optionally without its norms)."""

    def __init__(self, d, heads, ffn, norms=True, activation="relu"):
        super().__init__(d, heads, ffn, dropout=0.0, activation=activation)
        self.norms = norms

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        a, self.last_weights = self.self_attn(src, src, src, attn_mask=src_mask,
                                              key_padding_mask=src_key_padding_mask)
        src = src + self.dropout1(a)
        if self.norms:
            src = self.norm1(src)
        src = src + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(src)))))
        if self.norms:
            src = self.norm2(src)
        return src


class CustomLayers(nn.Module):
    """Token embedding from an indexed tensor, positions from n, two custom layers (the first
    with norms, the second without), a one-logit readout at the last position."""

    def __init__(self, seed=1):
        super().__init__()
        self.word_embedding = torch.eye(3, 6)
        self.pos = LengthPositions(6)
        self.layers = nn.ModuleList([PostNormLayer(6, 2, 5), PostNormLayer(6, 3, 4, norms=False)])
        self.out = nn.Linear(6, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.word_embedding[w] + self.pos(len(w))
        x = x.unsqueeze(1)
        for layer in self.layers:
            x = layer(x)
        return self.out(x.squeeze(1)[-1])


class HandAttention(nn.Module):
    """Hand-written attention: q @ k.T / sqrt(d), softmax, @ v; residual, gelu feed-forward,
    layer norm; k logits."""

    def __init__(self, d=4, symbols=3, seed=2):
        super().__init__()
        self.emb = nn.Embedding(symbols + 1, d)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, symbols)
        self.d = d
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w)
        scores = self.q(x) @ self.k(x).T / math.sqrt(self.d)
        x = x + F.softmax(scores, dim=-1) @ self.v(x)
        x = self.norm(x + self.ff2(F.gelu(self.ff1(x))))
        return self.out(x[-1])


class HandMultiHead(nn.Module):
    """Multi-head attention written with view / transpose / torch.bmm, a fused qkv projection
    split with chunk, tanh and sigmoid in the feed-forward block, learned positions."""

    def __init__(self, d=6, heads=3, seed=3):
        super().__init__()
        self.emb = nn.Embedding(3, d)
        self.pos = nn.Embedding(40, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d, bias=False)
        self.ff = nn.Linear(d, d)
        self.out = nn.Linear(d, 1)
        self.h = heads
        randomise(self, seed)

    def forward(self, w):
        n = w.shape[0]
        x = self.emb(w) + self.pos(torch.arange(n))
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(n, self.h, -1).transpose(0, 1) for t in (q, k, v))
        a = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * q.shape[-1] ** -0.5, dim=-1)
        y = torch.bmm(a, v).transpose(0, 1).reshape(n, -1)
        x = x + self.proj(y)
        x = x + torch.tanh(self.ff(x)) * 0.5 + torch.sigmoid(x)
        return self.out(x[n - 1])


class HandEinsum(nn.Module):
    """Attention written with torch.einsum: per-head projections by 3-D weights, q-k scores,
    weights times values; heads merged by reshape."""

    def __init__(self, seed=18):
        super().__init__()
        self.emb = nn.Embedding(3, 6)
        self.wq = nn.Parameter(torch.zeros(6, 2, 3))
        self.wk = nn.Parameter(torch.zeros(6, 2, 3))
        self.wv = nn.Parameter(torch.zeros(6, 2, 3))
        self.out = nn.Linear(6, 2)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w)
        q, k, v = (torch.einsum("nd,dhk->nhk", x, p) for p in (self.wq, self.wk, self.wv))
        a = torch.einsum("ihk,jhk->hij", q, k).div(math.sqrt(3)).softmax(-1)
        y = torch.einsum("hij,jhk->ihk", a, v).reshape(w.shape[0], 6)
        return self.out((x + y)[-1])


class HandLayerNorm(nn.Module):
    """A layer norm written out: (x - mean) / sqrt(var + eps) over the features of 2x + 1, and
    (x - mean) * rsqrt(var + eps) over two halves."""

    def __init__(self, seed=19):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.gain = nn.Parameter(torch.zeros(4))
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w) * 2 + 1
        m = x.mean(-1, keepdim=True)
        v = ((x - m) ** 2).mean(-1, keepdim=True)
        y = (x - m) / torch.sqrt(v + 1e-5) * self.gain
        h = y.view(-1, 2, 2)
        m2 = h.mean(-1, keepdim=True)
        h = (h - m2) * torch.rsqrt(((h - m2) ** 2).mean(-1, keepdim=True) + 1e-3)
        return self.out(h.reshape(-1, 4)[-1])


class NotALayerNorm(nn.Module):
    """(x - mean) / sqrt(mean(x^2) + eps): not a layer norm, refused."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, w):
        x = self.emb(w)
        y = (x - x.mean(-1, keepdim=True)) / torch.sqrt((x ** 2).mean(-1, keepdim=True) + 1e-5)  # <notln>
        return self.out(y[-1])


class ClsFirst(nn.Module):
    """eos (CLS) at the front, read at y[0]; positions [pos == 1] from n; a stock post-norm
    encoder layer; one logit."""

    def __init__(self, seed=4):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        pos = torch.arange(len(w))
        first = (pos == 1).float().unsqueeze(1) * torch.tensor([1.0, -1.0, 0.5, 0.0])
        y = self.layer((self.emb(w) + first).unsqueeze(1))
        return self.out(y[0, 0])


class LearnedClsFirst(nn.Module):
    """eos first with a learned positional table (nn.Embedding of 12 rows): the table is
    re-indexed for attnprop's eos-last positions; pre-norm encoder with a final norm."""

    def __init__(self, seed=5):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.pos = nn.Embedding(12, 4)
        layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4))
        self.out = nn.Linear(4, 2)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w) + self.pos(torch.arange(w.shape[0]))
        return self.out(self.enc(x.unsqueeze(0))[0, 0])


class TutorialTable(nn.Module):
    """The PyTorch tutorial's positional buffer (max_len, 1, d), sliced pe[:n] in forward: a
    table, with its length cap (16 rows)."""

    def __init__(self, seed=6):
        super().__init__()
        d, max_len = 4, 16
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, 1, d)
        pe[:, 0, 0::2] = torch.sin(position * div)
        pe[:, 0, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe)
        self.emb = nn.Embedding(3, d)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 1, 8, dropout=0.0), 1)
        self.out = nn.Linear(d, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w).unsqueeze(1) * math.sqrt(4) + self.pe[:w.size(0)]
        return self.out(self.enc(x)[-1, 0])


class ConcatFeatures(nn.Module):
    """Token one-hot concatenated with positional features (not added); an n-dependent scalar
    feature 1/n; k logits returned as log-probabilities."""

    def __init__(self, seed=7):
        super().__init__()
        self.attn = nn.MultiheadAttention(5, 1)
        self.out = nn.Linear(5, 2)
        randomise(self, seed)

    def forward(self, w):
        n = w.shape[0]
        pos = torch.arange(n, dtype=torch.float).unsqueeze(1)
        x = torch.cat([F.one_hot(w, 3).float(), pos / n, torch.full((n, 1), 1.0 / n)], dim=1)
        y = x + self.attn(x.unsqueeze(1), x.unsqueeze(1), x.unsqueeze(1))[0].squeeze(1)
        return F.log_softmax(self.out(y[-1]), dim=-1)


class ScaledQuery(nn.Module):
    """Chiang and Cholak's log-length scaling: the query input is multiplied by log(len) and
    the query projection has no bias: attnprop's length_scale log."""

    def __init__(self, bias=False, seed=8):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.attn = nn.MultiheadAttention(4, 2)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)
        if not bias:
            with torch.no_grad():
                self.attn.in_proj_bias[:4] = 0

    def forward(self, w):
        x = (self.emb(w) + LengthPositions(4)(len(w))).unsqueeze(1)
        y = x + self.attn(x * math.log(len(x)), x, x)[0]  # <scaled>
        return self.out(y[-1, 0])


class ZeroPaddingMask(nn.Module):
    """A key padding mask that hides nothing by construction (torch.zeros): accepted."""

    def __init__(self, seed=9):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu")
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        pad = torch.zeros(1, w.shape[0], dtype=torch.bool)
        return self.out(self.layer(self.emb(w).unsqueeze(1), src_key_padding_mask=pad)[-1, 0])


# --- refused ------------------------------------------------------------------------------------

class AntiCausal(nn.Module):
    """A mask that hides the positions before i (not causal): refused, never dropped."""

    def __init__(self, seed=12):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w)
        n = w.shape[0]
        s = (x @ x.T).masked_fill(torch.ones(n, n).tril(-1) == 1, float("-inf"))  # <anticausal>
        return self.out((s.softmax(-1) @ x)[-1])


# --- causal masks (imported) --------------------------------------------------------------------

class CausalInForward(nn.Module):
    """A causal mask applied inside a custom forward (the old exporter dropped it)."""

    def __init__(self, seed=10):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.q, self.k = nn.Linear(4, 4), nn.Linear(4, 4)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w) + LengthPositions(4)(len(w))
        s = self.q(x) @ self.k(x).transpose(0, 1) / 2.0
        mask = torch.triu(torch.ones(len(w), len(w), dtype=torch.bool), diagonal=1)
        s = s.masked_fill(mask, float("-inf"))  # <causal>
        return self.out((x + s.softmax(-1) @ x)[-1])


class CausalSrcMask(nn.Module):
    """A stock layer called with nn.Transformer.generate_square_subsequent_mask."""

    def __init__(self, seed=11):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        mask = nn.Transformer.generate_square_subsequent_mask(len(w))
        return self.out(self.layer(self.emb(w).unsqueeze(1), src_mask=mask)[-1, 0])  # <srcmask>


class SigmoidAttention(nn.Module):
    """Chiang and Cholak's sigmoid attention shape: a sigmoid of the scores in place of the
    softmax."""

    def __init__(self, seed=12):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.in_proj = nn.Linear(4, 12)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        q, k, v = self.in_proj(self.emb(w)).chunk(3, dim=-1)
        a = torch.sigmoid(q @ k.T / math.sqrt(4))  # <sigmoid>
        return self.out((a @ v)[-1])


class PythonTable(nn.Module):
    """Positions built in Python from n at every call: no formula, refused."""

    def __init__(self, seed=13):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)
        randomise(self, seed)

    def forward(self, w):
        n = len(w)
        pe = torch.tensor([[math.sin(i / n), 1.0] for i in range(n)])  # <pytable>
        return self.out((self.emb(w) + pe)[-1])


class FrozenLength(nn.Module):
    """A table built for one length N = 8 and added whole: it only runs at n = 8."""

    def __init__(self, seed=14):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.register_buffer("pe", torch.arange(8.0).unsqueeze(1).repeat(1, 2) / 8)
        self.out = nn.Linear(2, 1)
        randomise(self, seed)

    def forward(self, w):
        return self.out((self.emb(w) + self.pe)[-1])


class TokenBranch(nn.Module):
    """Control flow on the input tokens."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)

    def forward(self, w):
        x = self.emb(w)
        if w[0] == 1:  # <tokbranch>
            x = -x
        return self.out(x[-1])


class LengthBranch(nn.Module):
    """Control flow on the length."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)

    def forward(self, w):
        x = self.emb(w)  # <lenbranch0>
        if len(w) > 5:
            x = x * 2  # <lenbranch>
        return self.out(x[-1])  # <lenbranch1>


class MeanPooling(nn.Module):
    """The mean over positions (pooling) instead of the eos position."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)

    def forward(self, w):
        return self.out(self.emb(w).mean(dim=0))  # <pool>


class ReadsFirstPosition(nn.Module):
    """eos is last but the module reads y[0]."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)

    def forward(self, w):
        return self.out(self.emb(w)[0])


class TrainingDropout(nn.Module):
    """F.dropout without training=self.training (training=True by default)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)

    def forward(self, w):
        return self.out(F.dropout(self.emb(w), 0.1)[-1])  # <dropout>


class RelativeBias(nn.Module):
    """A relative position bias added to the scores."""

    def __init__(self, seed=15):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w)
        pos = torch.arange(len(w)).float()
        s = x @ x.T - (pos.unsqueeze(1) - pos.unsqueeze(0)).abs()  # <relbias>
        return self.out((s.softmax(-1) @ x)[-1])


class ApproximateGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)

    def forward(self, w):
        return self.out(F.gelu(self.emb(w), approximate="tanh")[-1])  # <tanhgelu>


class ManyProblems(nn.Module):
    """Unsupported operations in one forward (beside a causal mask, which is imported): all are
    named at once."""

    def __init__(self, seed=16):
        super().__init__()
        self.causal = CausalInForward(seed)
        self.sigmoid = SigmoidAttention(seed)
        self.emb = nn.Embedding(3, 1)

    def forward(self, w):
        z = self.causal(w) + self.sigmoid(w)
        return z + torch.exp(self.emb(w))[-1]  # <exp>


class DynamicCausal(nn.Module):
    """A causal mask built from the length as the sequence's shape (kept dynamic by
    torch.onnx.export): refused from the ONNX file too."""

    def __init__(self, seed=17):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w)
        n = w.shape[0]
        s = (x @ x.T).masked_fill(torch.ones(n, n).triu(1) == 1, float("-inf"))  # <dyncausal>
        return self.out((s.softmax(-1) @ x)[-1])


class BufferCausal(nn.Module):
    """A causal mask kept as a buffer and sliced to the length (as nanoGPT writes it)."""

    def __init__(self, seed=20):
        super().__init__()
        self.emb = nn.Embedding(3, 4)
        self.register_buffer("bias", torch.tril(torch.ones(64, 64)).view(1, 64, 64))
        self.out = nn.Linear(4, 1)
        randomise(self, seed)

    def forward(self, w):
        x = self.emb(w).unsqueeze(0)
        T = x.size(1)
        att = (x @ x.transpose(-2, -1)).masked_fill(self.bias[:, :T, :T] == 0, float("-inf"))  # <buffer>
        return self.out((att.softmax(-1) @ x)[0, -1])


class CumulativeSum(nn.Module):
    """An operation neither attnprop nor the ONNX reader has (CumSum)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 1)

    def forward(self, w):
        return self.out(torch.cumsum(self.emb(w), dim=0)[-1])  # <cumsum>


IMPORTED = [
    # (class, import_model keyword arguments)
    (CustomLayers, dict(readout="logit")),
    (HandAttention, dict(alphabet=["a", "b", "c"], readout="logits")),
    (HandMultiHead, dict(readout="logit")),
    (HandEinsum, dict(readout="logits")),
    (HandLayerNorm, dict(readout="logit")),
    (ClsFirst, dict(eos_position="first", readout="logit")),
    (LearnedClsFirst, dict(eos_position="first", readout="logits",
                           readout_symbols=["reject", "accept"])),
    (TutorialTable, dict(readout="threshold")),
    (ConcatFeatures, dict(readout="logits")),
    (ScaledQuery, dict(readout="logit")),
    (ZeroPaddingMask, dict(readout="logit")),
    # causal masks, imported as "mask": "causal"
    (CausalInForward, dict(readout="logit")),
    (CausalSrcMask, dict(readout="logit")),
    (DynamicCausal, dict(readout="logit")),
    (BufferCausal, dict(readout="logit")),
]

#: The modules above whose every layer is imported with a causal mask.
CAUSAL = [CausalInForward, CausalSrcMask, DynamicCausal, BufferCausal]

REFUSED = [AntiCausal, SigmoidAttention, PythonTable, FrozenLength,
           TokenBranch, LengthBranch, MeanPooling, ReadsFirstPosition, TrainingDropout,
           RelativeBias, ApproximateGelu, ManyProblems, CumulativeSum, NotALayerNorm]
