"""The PyTorch side of a comparison: the user's modules themselves, run on one input in a given
dtype, in eval mode, read at the last position (the eos token).

The modules are deep-copied and cast, so the caller's model is never changed. Gradients stay
enabled during the run: that keeps PyTorch on the modules' documented Python path (the fused
inference path of torch 1.13 does the same arithmetic, but rejects layers without biases), and
the outputs are detached.
"""
import copy

import torch
import torch.nn as nn

from .export import check_spec


def sinusoidal_table(n, d, dtype):
    """PE(pos, 2k) = sin(pos / 10000^(2k/d)), PE(pos, 2k+1) = cos(...), pos = 0 .. n-1: the
    sinusoids of Vaswani et al. (the PyTorch tutorial's PositionalEncoding), computed in float64
    and rounded to dtype."""
    pe = torch.zeros(n, d, dtype=torch.float64)
    pos = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    for c in range(d):
        k2 = c - (c % 2)
        arg = pos[:, 0] / (10000.0 ** (k2 / d))
        pe[:, c] = torch.sin(arg) if c % 2 == 0 else torch.cos(arg)
    return pe.to(dtype)


class TorchModel:
    """The modules of one export, copied and cast to `dtype`, ready to run on input strings."""

    def __init__(self, kwargs, dtype=torch.float64):
        self.dtype = dtype
        kw = dict(kwargs)
        spec = check_spec(kw.pop("encoder"), kw.pop("token_embedding"), kw.pop("alphabet"),
                          kw.pop("eos"), kw.pop("positional", None), kw.pop("readout", None),
                          kw.pop("readout_symbols", None), kw.pop("name", None),
                          kw.pop("description", None), kw.pop("mask", None),
                          kw.pop("src_key_padding_mask", None), kw.pop("is_causal", False))
        if kw:
            raise TypeError("unexpected arguments: %s" % ", ".join(sorted(kw)))
        self.spec = spec
        self.alphabet = spec.alphabet
        self.eos = spec.eos
        self.threshold = spec.readout.out_features == 1
        self.symbols = spec.readout_symbols

        def prep(m):
            m = copy.deepcopy(m).to(dtype)
            m.eval()
            for p in m.parameters():
                p.requires_grad_(True)
            return m

        self.token = prep(spec.token_embedding)
        if spec.encoder is not None:
            self.encoder = prep(spec.encoder)
            self.items = None
        else:
            self.encoder = None
            self.items = [prep(m) for _, m in spec.items]
        self.readout = prep(spec.readout)
        pos = spec.positional
        self.pos_kind = "none" if pos is None else "sinusoidal" if isinstance(pos, str) else "table"
        if self.pos_kind == "table":
            table = pos.weight if isinstance(pos, nn.Embedding) else pos
            self.pos_table = table.detach().to(dtype).clone()

    @staticmethod
    def _batch_first(module):
        if isinstance(module, nn.TransformerEncoder):
            return module.layers[0].self_attn.batch_first if len(module.layers) else True
        if isinstance(module, nn.TransformerEncoderLayer):
            return module.self_attn.batch_first
        if isinstance(module, nn.MultiheadAttention):
            return module.batch_first
        return True

    @staticmethod
    def _call(module, x):
        """Runs one module on the sequence x (n x d) with its own batch layout."""
        bf = TorchModel._batch_first(module)
        xb = x.unsqueeze(0) if bf else x.unsqueeze(1)
        if isinstance(module, nn.MultiheadAttention):
            yb = xb + module(xb, xb, xb, need_weights=False)[0]
        else:
            yb = module(xb)
        return yb[0] if bf else yb[:, 0]

    def run(self, text):
        """The readout on input `text` (eos appended): the logit (threshold readouts) or the
        probabilities (softmax readouts) as a list of Python floats of the run's dtype."""
        ids = [self.alphabet.index(c) for c in text] + [len(self.alphabet)]
        n = len(ids)
        with torch.enable_grad():
            x = self.token(torch.tensor(ids, dtype=torch.long))
            if self.pos_kind == "table":
                if n > self.pos_table.shape[0]:
                    raise ValueError("the positional table has %d rows; n = %d needs %d" %
                                     (self.pos_table.shape[0], n, n))
                x = x + self.pos_table[:n]
            elif self.pos_kind == "sinusoidal":
                x = x + sinusoidal_table(n, x.shape[1], self.dtype)
            if self.encoder is not None:
                x = self._call(self.encoder, x)
            else:
                for m in self.items:
                    x = self._call(m, x)
            logits = self.readout(x[-1])
            if self.threshold:
                return [float(logits.detach()[0])]
            return [float(p) for p in torch.softmax(logits, dim=-1).detach()]


def native_dtype(kwargs):
    """The dtype of the model's parameters (the first floating parameter found)."""
    for key in ("encoder", "token_embedding", "readout"):
        m = kwargs.get(key)
        mods = m if isinstance(m, (list, tuple)) else [m]
        for mod in mods:
            if isinstance(mod, nn.Module):
                for p in mod.parameters():
                    if torch.is_floating_point(p):
                        return p.dtype
    return torch.float32
