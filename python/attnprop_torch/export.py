"""export_encoder: the stock-module front end of import_model (docs/torch.md, "export_encoder").

It assembles the pieces it is given (a token embedding, a positional embedding, an encoder of
nn.TransformerEncoderLayer / nn.MultiheadAttention / nn.LayerNorm items, an nn.Linear readout
at the last position) into one module, EncoderModel, whose forward is what the pieces compute,
and imports that module: everything the importer refuses is refused here too, and everything it
writes is checked the same way.
"""
import torch
import torch.nn as nn

from .exact import ExportError
from .importer import import_model

__all__ = ["export_encoder", "EncoderModel", "encoder_model"]


class EncoderModel(nn.Module):
    """token embedding + positions -> encoder items -> readout at the last position (eos)."""

    def __init__(self, encoder, token_embedding, positional, readout, mask=None,
                 src_key_padding_mask=None, is_causal=False):
        super().__init__()
        self.is_causal = is_causal
        self.token_embedding = token_embedding
        if isinstance(encoder, (list, tuple)):
            encoder = nn.ModuleList(encoder)
        self.encoder = encoder
        self.readout = readout
        self.mask = mask
        self.src_key_padding_mask = src_key_padding_mask
        self.positional_kind = ("none" if positional is None else
                                "sinusoidal" if isinstance(positional, str) else
                                "embedding" if isinstance(positional, nn.Embedding) else "table")
        if self.positional_kind == "embedding":
            self.positional = positional
        elif self.positional_kind == "table":
            self.register_buffer("positional_table", positional.detach().clone())

    @staticmethod
    def _batch_first(m):
        if isinstance(m, nn.TransformerEncoder):
            return m.layers[0].self_attn.batch_first if len(m.layers) else True
        if isinstance(m, nn.TransformerEncoderLayer):
            return m.self_attn.batch_first
        if isinstance(m, nn.MultiheadAttention):
            return m.batch_first
        return True

    def _call(self, m, x):
        bf = self._batch_first(m)
        xb = x.unsqueeze(0) if bf else x.unsqueeze(1)
        kw = {}
        mask = self.mask
        if self.is_causal:
            # The causal mask at this length (what is_causal=True stands for, passed as the mask
            # itself: the flag is only a hint to torch); the importer reads it as attnprop's
            # "mask": "causal".
            n = x.shape[0]
            mask = torch.triu(torch.full((n, n), float("-inf"), dtype=x.dtype), diagonal=1)
        if mask is not None:
            kw["mask" if isinstance(m, nn.TransformerEncoder) else "src_mask"] = mask
        if self.src_key_padding_mask is not None:
            kw["src_key_padding_mask"] = self.src_key_padding_mask
        if isinstance(m, nn.MultiheadAttention):
            mkw = {"attn_mask": mask} if mask is not None else {}
            yb = xb + m(xb, xb, xb, need_weights=False, **mkw)[0]
        elif isinstance(m, (nn.TransformerEncoder, nn.TransformerEncoderLayer)):
            yb = m(xb, **kw)
        else:
            yb = m(xb)
        return yb[0] if bf else yb[:, 0]

    def forward(self, ids):
        x = self.token_embedding(ids)
        n = ids.shape[0]
        if self.positional_kind == "embedding":
            x = x + self.positional(torch.arange(n))
        elif self.positional_kind == "table":
            x = x + self.positional_table[:n].to(x.dtype)
        elif self.positional_kind == "sinusoidal":
            # PE(pos, 2k) = sin(pos / 10000^(2k/d)), PE(pos, 2k+1) = cos(...), pos = 0 .. n-1
            d = x.shape[-1]
            pos = torch.arange(n).to(x.dtype).unsqueeze(1)
            k2 = torch.arange(d) - torch.arange(d) % 2
            arg = pos / torch.pow(10000.0, k2 / d)
            x = x + torch.where(torch.arange(d) % 2 == 0, torch.sin(arg), torch.cos(arg))
        items = list(self.encoder) if isinstance(self.encoder, nn.ModuleList) or \
            type(self.encoder) is nn.Sequential else [self.encoder]
        for m in items:
            x = self._call(m, x)
        return self.readout(x[-1])


def encoder_model(encoder, token_embedding, *, alphabet, eos, positional=None, readout,
                  readout_symbols=None, name, description=None, mask=None,
                  src_key_padding_mask=None, is_causal=False):
    """(EncoderModel, import_model's keyword arguments) for export_encoder's arguments."""
    if is_causal and mask is not None:
        raise ExportError("is_causal: give is_causal=True or a mask, not both (with is_causal the "
                          "causal mask is built at every length)")
    if not isinstance(token_embedding, nn.Embedding):
        raise ExportError("token_embedding: expected nn.Embedding over the alphabet and eos, got %s"
                          % type(token_embedding).__name__)
    if not isinstance(readout, nn.Linear):
        raise ExportError("readout: expected nn.Linear on the last position, got %s" %
                          type(readout).__name__)
    if positional is not None and not isinstance(positional, (nn.Embedding, torch.Tensor)) and \
            positional != "sinusoidal":
        raise ExportError("positional: %r is not supported (expected nn.Embedding, a 2-D tensor, "
                          "'sinusoidal' or None)" % (positional,))
    k = readout.out_features
    if k == 1 and readout_symbols is not None:
        raise ExportError("readout_symbols: a readout with one output is a threshold (accept iff "
                          "its value > 0); it has no symbols")
    model = EncoderModel(encoder, token_embedding, positional, readout, mask,
                         src_key_padding_mask, is_causal)
    kw = dict(alphabet=alphabet, eos=eos, eos_position="last", name=name,
              description=description)
    if k == 1:
        kw["readout"] = "threshold"
    else:
        kw["readout"] = "logits"
        kw["readout_symbols"] = readout_symbols if readout_symbols is not None else None
        if readout_symbols is None and k != len(list(alphabet)):
            raise ExportError("readout: nn.Linear has %d outputs; give readout_symbols (the "
                              "default, the alphabet, has %d)" % (k, len(list(alphabet))))
    cap = None
    if isinstance(positional, nn.Embedding):
        cap = positional.num_embeddings
    elif isinstance(positional, torch.Tensor):
        cap = positional.shape[0]
    if cap is not None and cap < 8:
        kw["trace_lengths"] = tuple(range(max(2, cap - 2), cap + 1)) if cap >= 4 else None
    return model, kw


def export_encoder(encoder, token_embedding, *, alphabet, eos, positional=None, readout,
                   readout_symbols=None, name, description=None, mask=None,
                   src_key_padding_mask=None, is_causal=False):
    """The model document of an encoder given as pieces (docs/torch.md): encoder is an
    nn.TransformerEncoder, an nn.TransformerEncoderLayer, an nn.MultiheadAttention (with a
    residual, x + mha(x, x, x)) or a list of these and nn.LayerNorm / nn.Dropout / nn.Identity
    items; token_embedding an nn.Embedding over the alphabet then eos; positional an
    nn.Embedding or (max_len, d) tensor (a table), "sinusoidal" or None; readout an nn.Linear
    on the last position (one output: accept iff > 0; k outputs: a softmax over
    readout_symbols). Raises ExportError / ImportRefused."""
    model, kw = encoder_model(encoder, token_embedding, alphabet=alphabet, eos=eos,
                              positional=positional, readout=readout,
                              readout_symbols=readout_symbols, name=name,
                              description=description, mask=mask,
                              src_key_padding_mask=src_key_padding_mask, is_causal=is_causal)
    return import_model(model, **kw)

