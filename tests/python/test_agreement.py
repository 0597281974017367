"""Every supported configuration, exported and compared with PyTorch in float64 on random
inputs up to n = 256: the readout (probabilities, or the threshold value) agrees with attnprop's
ball enclosure of the exact value to 1e-12 relative. A negative control shows that the check
catches a wrong export (one weight changed by one float32 ulp).

Two families: five hand-built configurations (support.configurations) at n = 1, 2, 9, 64, 256,
two inputs each, and one random encoder for each of the 16 combinations of norm_first, relu /
gelu, batch_first and biases present / absent (support.random_configuration, the rest drawn from
a fixed seed) at n = 1, 3 and 256."""
import unittest

from attnprop_torch import import_model
from attnprop_torch.compare import Original, compare, random_inputs, readout_kind
from attnprop_torch.exact import number
from attnprop_torch.export import encoder_model

import support

TOLERANCE = 1e-12
LENGTHS = [1, 2, 9, 64, 256]
RANDOM_LENGTHS = [1, 3, 256]
RANDOM_SEED = 2000


class Agreement(unittest.TestCase):
    def check_configuration(self, label, build, seed, lengths=LENGTHS, samples=2):
        kwargs = build()
        model, kw = encoder_model(kwargs.pop("encoder"), kwargs.pop("token_embedding"), **kwargs)
        doc = import_model(model, **kw)
        original = Original(model, kw["alphabet"], "last", readout_kind(doc))
        inputs = random_inputs(list(kw["alphabet"]), lengths, samples, seed)
        with support.TempDir() as tmp:
            path = support.write_doc(doc, tmp)
            rows, _ = compare(original, doc, path, inputs, support.attnprop_bin(), precision=128)
        for r in rows:
            msg = "%s: n = %d, input %r (seed %d): exact %s, torch float64 %s" % (
                label, r.n, r.text, seed, [float(v) for v in r.exact.values], r.float64)
            self.assertIsNone(r.exact.undefined, msg)
            self.assertLessEqual(r.diff64, TOLERANCE, msg)
            # The enclosure is far tighter than the difference it certifies.
            self.assertLess(r.radius, 1e-25, msg)
            if r.native is not None:
                # float32 is a different computation: close to the exact value, not equal.
                self.assertLess(r.diff_native, 1e-3, msg)
        return rows

    def test_every_configuration(self):
        for k, (label, build) in enumerate(support.configurations()):
            with self.subTest(label):
                self.check_configuration(label, build, 1000 + k)

    def test_random_encoders_of_every_switch_combination(self):
        for k, switches in enumerate(support.SWITCHES):
            label, kwargs = support.random_configuration(RANDOM_SEED + k, *switches)
            with self.subTest(label):
                self.check_configuration(label, lambda: kwargs, RANDOM_SEED + k, RANDOM_LENGTHS, 1)

    def causal_encoder(self):
        import torch
        import torch.nn as nn
        torch.manual_seed(41)
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, dim_feedforward=8,
                                                               dropout=0.0), 2)
        return dict(encoder=enc, token_embedding=nn.Embedding(3, 4), alphabet=["0", "1"],
                    eos="$", positional="sinusoidal", readout=nn.Linear(4, 2), name="causal",
                    is_causal=True)

    def test_causal_encoder_up_to_1024(self):
        # is_causal=True: every layer imported with "mask": "causal", agreeing with torch's
        # masked forward in float64 up to n = 1024.
        rows = self.check_configuration("causal encoder", self.causal_encoder, 4100,
                                        [1, 2, 9, 64, 1024], 1)
        self.assertEqual(len(rows), 5)

    def test_negative_control_causal_mask_dropped_is_caught(self):
        kwargs = self.causal_encoder()
        model, kw = encoder_model(kwargs.pop("encoder"), kwargs.pop("token_embedding"), **kwargs)
        doc = import_model(model, **kw)
        self.assertEqual([l.get("mask") for l in doc["layers"]], ["causal", "causal"])
        for l in doc["layers"]:
            del l["mask"]  # the file without its masks: the unmasked encoder
        with support.TempDir() as tmp:
            path = support.write_doc(doc, tmp)
            rows, _ = compare(Original(model, kw["alphabet"], "last", readout_kind(doc)), doc, path,
                              ["0110101"], support.attnprop_bin(), precision=128)
        self.assertGreater(rows[0].diff64, TOLERANCE, "a dropped causal mask must be seen")

    def test_negative_control_one_ulp_is_caught(self):
        label, build = support.configurations()[0]
        kwargs = build()
        emb = kwargs["token_embedding"]
        model, kw = encoder_model(kwargs.pop("encoder"), kwargs.pop("token_embedding"), **kwargs)
        doc = import_model(model, **kw)
        kwargs["token_embedding"] = emb
        # Move the first token embedding entry by one float32 ulp in the file only.
        from fractions import Fraction
        import numpy as np
        v = float(kwargs["token_embedding"].weight[0, 0])
        doc["token_embedding"]["0"][0] = number(Fraction(float(np.nextafter(np.float32(v), np.float32(10)))))
        with support.TempDir() as tmp:
            path = support.write_doc(doc, tmp)
            rows, _ = compare(Original(model, kw["alphabet"], "last", readout_kind(doc)), doc, path,
                              ["0110101"], support.attnprop_bin(), precision=128)
        self.assertGreater(rows[0].diff64, TOLERANCE,
                           "a one-ulp change of a weight must exceed the tolerance")


if __name__ == "__main__":
    unittest.main()
