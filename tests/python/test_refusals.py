"""Every refusal of the exporter, with its exact (golden) message: masks, key padding, causal
attention, unknown modules, activations and options attnprop cannot express, bad arguments."""
import unittest

import torch
import torch.nn as nn

from attnprop_torch import ExportError, export_encoder


def base(**changes):
    torch.manual_seed(3)
    kw = dict(encoder=nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, dim_feedforward=8), 1),
              token_embedding=nn.Embedding(3, 4), alphabet=["0", "1"], eos="$",
              positional="sinusoidal", readout=nn.Linear(4, 2), name="m")
    kw.update(changes)
    return kw


def layer(**changes):
    torch.manual_seed(4)
    l = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8)
    for k, v in changes.items():
        setattr(l, k, v)
    return l


class MyLayer(nn.TransformerEncoderLayer):
    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        return src


class MyEncoder(nn.TransformerEncoder):
    def forward(self, src, mask=None, src_key_padding_mask=None):
        return src


L1 = "layer 1 (nn.TransformerEncoderLayer)"

GOLDEN = [
    ("mask", lambda: base(mask=torch.zeros(3, 3)),
     "mask: masked attention (attn_mask / mask) is not supported: attnprop's attention is "
     "unmasked over all n positions"),
    ("is_causal", lambda: base(is_causal=True),
     "is_causal: causal attention is not supported: attnprop's attention is unmasked over all "
     "n positions"),
    ("key padding", lambda: base(src_key_padding_mask=torch.zeros(1, 3, dtype=torch.bool)),
     "src_key_padding_mask: key padding is not supported: attnprop evaluates one sequence "
     "without padding"),
    ("unknown layer module", lambda: base(encoder=[layer(), nn.Linear(4, 4)]),
     "layer 2 (nn.Linear): unsupported module; expected nn.TransformerEncoderLayer, "
     "nn.MultiheadAttention, nn.LayerNorm, nn.Dropout or nn.Identity"),
    ("unknown encoder", lambda: base(encoder=nn.LSTM(4, 4)),
     "encoder (nn.LSTM): unsupported module; expected nn.TransformerEncoder, a list of "
     "nn.TransformerEncoderLayer (or nn.MultiheadAttention, nn.LayerNorm), or one layer"),
    ("silu", lambda: base(encoder=[layer(activation=torch.nn.functional.silu)]),
     L1 + ": activation 'silu' is not supported (relu and the exact gelu are)"),
    ("module activation", lambda: base(encoder=[layer(activation=nn.Tanh())]),
     L1 + ": activation 'nn.Tanh' is not supported (relu and the exact gelu are)"),
    ("tanh gelu", lambda: base(encoder=[layer(activation=nn.GELU(approximate="tanh"))]),
     L1 + ": activation GELU(approximate='tanh') is not supported (only the exact gelu, "
     "approximate='none')"),
    ("add_bias_kv", lambda: base(encoder=[layer(self_attn=nn.MultiheadAttention(4, 2, add_bias_kv=True))]),
     L1 + " self_attn: add_bias_kv (the extra key and value bias_k, bias_v) is not supported"),
    ("add_zero_attn", lambda: base(encoder=[nn.MultiheadAttention(4, 2, add_zero_attn=True)]),
     "layer 1 (nn.MultiheadAttention): add_zero_attn (an extra zero key and value) is not supported"),
    ("kdim", lambda: base(encoder=[nn.MultiheadAttention(4, 2, kdim=3, vdim=3)]),
     "layer 1 (nn.MultiheadAttention): separate key/value dimensions (kdim=3, vdim=3) are not "
     "supported (self-attention reads one sequence of width embed_dim)"),
    ("embed_dim", lambda: base(encoder=[nn.MultiheadAttention(6, 2)]),
     "layer 1 (nn.MultiheadAttention): embed_dim 6 differs from the token embedding's dimension 4"),
    ("subclass forward", lambda: base(encoder=[MyLayer(4, 2)]),
     "layer 1 (MyLayer): a subclass of nn.TransformerEncoderLayer that overrides forward is not "
     "supported"),
    ("encoder subclass", lambda: base(encoder=MyEncoder(nn.TransformerEncoderLayer(4, 2), 1)),
     "encoder (MyEncoder): a subclass of nn.TransformerEncoder that overrides forward is not "
     "supported"),
    ("final norm shape", lambda: base(encoder=nn.TransformerEncoder(layer(), 1, norm=nn.LayerNorm([2, 2]))),
     "final norm (nn.LayerNorm): normalized_shape (2, 2) is not (4,): attnprop's layer norm "
     "normalises the d_model coordinates of one position"),
    ("final norm kind", lambda: base(encoder=nn.TransformerEncoder(layer(), 1, norm=nn.BatchNorm1d(4))),
     "final norm (nn.BatchNorm1d): expected nn.LayerNorm"),
    ("token embedding kind", lambda: base(token_embedding=nn.Linear(3, 4)),
     "token_embedding: expected nn.Embedding over the alphabet and eos, got nn.Linear"),
    ("token rows", lambda: base(token_embedding=nn.Embedding(4, 4)),
     "token_embedding: nn.Embedding has 4 rows; the alphabet ['0', '1'] and eos '$' need 3 (the "
     "symbols in order, eos last)"),
    ("token max_norm", lambda: base(token_embedding=nn.Embedding(3, 4, max_norm=1.0)),
     "token_embedding: max_norm (renormalising rows at lookup) is not supported"),
    ("positional string", lambda: base(positional="learned"),
     "positional: 'learned' is not supported (expected nn.Embedding, a 2-D tensor, 'sinusoidal' "
     "or None)"),
    ("positional dim", lambda: base(positional=nn.Embedding(10, 6)),
     "positional: nn.Embedding has dimension 6; d_model is 4"),
    ("positional tensor", lambda: base(positional=torch.zeros(5)),
     "positional: a tensor must be a table of shape (max_len, 4), got (5,)"),
    ("readout kind", lambda: base(readout=nn.Sequential(nn.Linear(4, 2))),
     "readout: expected nn.Linear on the last position, got nn.Sequential"),
    ("readout width", lambda: base(readout=nn.Linear(5, 2)),
     "readout: nn.Linear reads 5 features; d_model is 4"),
    ("readout outputs", lambda: base(readout=nn.Linear(4, 3)),
     "readout: nn.Linear has 3 outputs; give readout_symbols (the default, the alphabet, has 2)"),
    ("readout symbols", lambda: base(readout_symbols=["a", "b", "c"]),
     "readout_symbols: 3 names for 2 outputs"),
    ("threshold symbols", lambda: base(readout=nn.Linear(4, 1), readout_symbols=["a"]),
     "readout_symbols: a readout with one output is a threshold (accept iff its value > 0); it "
     "has no symbols"),
    ("alphabet symbol", lambda: base(alphabet=["0", "10"], token_embedding=nn.Embedding(3, 4)),
     "alphabet: symbol '10' must be exactly one printable ASCII character other than space"),
    ("alphabet star", lambda: base(alphabet=["0", "*"]),
     "alphabet: '*' is reserved (it marks free positions in restrictions)"),
    ("alphabet duplicate", lambda: base(alphabet=["0", "0"]),
     "alphabet: duplicate symbol '0'"),
    ("eos in alphabet", lambda: base(eos="1"), "eos: '1' is in the alphabet"),
    ("name", lambda: base(name=""), "name: expected a non-empty string, got ''"),
    ("non-finite weight", lambda: base(readout=_nan_linear()),
     "readout weight: entry [1, 2] is not finite (nan)"),
    ("ffn width", lambda: base(encoder=[layer(linear2=nn.Linear(8, 3))]),
     L1 + ": the feed-forward block maps 4 -> 3; it must map d_model = 4 to itself"),
]


def _nan_linear():
    lin = nn.Linear(4, 2)
    with torch.no_grad():
        lin.weight[1, 2] = float("nan")
    return lin


class Refusals(unittest.TestCase):
    def test_golden_messages(self):
        for label, make, message in GOLDEN:
            with self.subTest(label):
                kwargs = make()
                with self.assertRaises(ExportError) as cm:
                    export_encoder(**kwargs)
                self.assertEqual(str(cm.exception), message)

    def test_control_the_base_model_exports(self):
        # Negative control of the refusals: without the change, the same model is accepted.
        doc = export_encoder(**base())
        self.assertEqual(doc["format"], "attnprop-model")
        self.assertEqual(len(doc["layers"]), 1)


if __name__ == "__main__":
    unittest.main()
