"""export_encoder, the stock-module front end of import_model: its refusals with their exact
(golden) messages (arguments it checks itself, and what the importer refuses in the assembled
module, located in the front end's forward), and the stock modules the old exporter refused that
the importer now follows (subclasses overriding forward, other activations, positionwise items).
"""
import re
import unittest

import torch
import torch.nn as nn

from attnprop_torch import ExportError, export_encoder
import attnprop_torch.export as front


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
        return self.norm1(src + self.self_attn(src, src, src)[0])


class MyEncoder(nn.TransformerEncoder):
    def forward(self, src, mask=None, src_key_padding_mask=None):
        return 2 * src


def _line(pattern):
    """export.py:N of the front end's line matching `pattern`."""
    with open(front.__file__) as f:
        for k, text in enumerate(f, 1):
            if re.search(pattern, text):
                return "export.py:%d" % k
    raise KeyError(pattern)


CALL = _line(r"yb = m\(xb, \*\*kw\)")
MHA = _line(r"yb = xb \+ m\(xb, xb, xb")
OTHER = _line(r"yb = m\(xb\)$")
IMPORT = "cannot import EncoderModel: "

GOLDEN = [
    ("is_causal with a mask", lambda: base(is_causal=True, mask=torch.zeros(5, 5)),
     "is_causal: give is_causal=True or a mask, not both (with is_causal the causal mask is "
     "built at every length)"),
    ("unknown encoder", lambda: base(encoder=nn.LSTM(4, 4)),
     IMPORT + "encoder (nn.LSTM), %s: lstm: lstm() is not supported" % OTHER),
    ("silu", lambda: base(encoder=[layer(activation=torch.nn.functional.silu)]),
     IMPORT + "encoder.0 (nn.TransformerEncoderLayer), %s: silu: silu() of a value computed "
     "from the input is not supported (attnprop's maps have relu, gelu, tanh, sigmoid, erf, "
     "step, floor, layer norm and affine maps)" % CALL),
    ("tanh gelu", lambda: base(encoder=[layer(activation=nn.GELU(approximate="tanh"))]),
     IMPORT + "encoder.0.activation (nn.GELU), %s: gelu: gelu(approximate='tanh') is not "
     "supported (only the exact gelu)" % CALL),
    ("add_bias_kv", lambda: base(encoder=[layer(self_attn=nn.MultiheadAttention(4, 2, add_bias_kv=True))]),
     IMPORT + "encoder.0.self_attn (nn.MultiheadAttention), %s: multi_head_attention_forward: "
     "add_bias_kv (the extra key and value bias_k, bias_v) is not supported" % CALL),
    ("add_zero_attn", lambda: base(encoder=[nn.MultiheadAttention(4, 2, add_zero_attn=True)]),
     IMPORT + "encoder.0 (nn.MultiheadAttention), %s: multi_head_attention_forward: "
     "add_zero_attn (an extra zero key and value) is not supported" % MHA),
    ("token embedding kind", lambda: base(token_embedding=nn.Linear(3, 4)),
     "token_embedding: expected nn.Embedding over the alphabet and eos, got Linear"),
    ("token max_norm", lambda: base(token_embedding=nn.Embedding(3, 4, max_norm=1.0)),
     IMPORT + "token_embedding (nn.Embedding), %s: embedding: an embedding with max_norm "
     "(renormalising rows at lookup) is not supported" % _line(r"x = self.token_embedding\(ids\)")),
    ("positional string", lambda: base(positional="learned"),
     "positional: 'learned' is not supported (expected nn.Embedding, a 2-D tensor, 'sinusoidal' "
     "or None)"),
    ("readout kind", lambda: base(readout=nn.Sequential(nn.Linear(4, 2))),
     "readout: expected nn.Linear on the last position, got Sequential"),
    ("readout outputs", lambda: base(readout=nn.Linear(4, 3)),
     "readout: nn.Linear has 3 outputs; give readout_symbols (the default, the alphabet, has 2)"),
    ("readout symbols", lambda: base(readout_symbols=["a", "b", "c"]),
     IMPORT + "the module's output has 2 numbers; readout='logits' needs 3"),
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
     IMPORT + "readout (nn.Linear), %s: linear: parameter readout.weight has an entry that is "
     "not finite" % _line(r"return self.readout\(x\[-1\]\)")),
    ("a mask of another length", lambda: base(mask=torch.zeros(3, 3)),
     IMPORT + "the module fails at n = 5: RuntimeError: The shape of the 2D attn_mask is "
     "torch.Size([3, 3]), but should be (5, 5). (it is traced at n = 5, 6, 8, eos included; give "
     "trace_lengths= and check_lengths= within the lengths it accepts)"),
]

#: What the old stock-module exporter refused and the importer follows.
NOW_IMPORTED = [
    ("subclass overriding forward", lambda: base(encoder=[MyLayer(4, 2)])),
    ("encoder subclass overriding forward",
     lambda: base(encoder=MyEncoder(nn.TransformerEncoderLayer(4, 2), 1))),
    ("an activation module", lambda: base(encoder=[layer(activation=nn.Tanh())])),
    ("a positionwise item", lambda: base(encoder=[layer(), nn.Linear(4, 4), nn.ReLU()])),
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

    def test_now_imported(self):
        for label, make in NOW_IMPORTED:
            with self.subTest(label):
                doc = export_encoder(**make())
                self.assertEqual(doc["format"], "attnprop-model")

    def test_control_the_base_model_exports(self):
        # Negative control of the refusals: without the change, the same model is accepted.
        doc = export_encoder(**base())
        self.assertEqual(doc["format"], "attnprop-model")
        self.assertEqual(len(doc["layers"]), 1)


if __name__ == "__main__":
    unittest.main()
