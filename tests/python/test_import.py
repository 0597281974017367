"""import_model on hand-written modules (modules.py): each imported one agrees with its own
forward in float64 to 1e-12 (attnprop's ball enclosure of the exact value) at lengths it was not
traced at, and its import has the expected form (positions as formulas in i and n, tables with
their cap, length scaling, the readout); each refused one is refused with its message, word for
word, naming every unsupported operation with its module path and source line. The controls: a
module that differs from an imported one in one respect (a query bias, a mask that hides
something) is refused, and a one-ulp change of an imported weight is seen."""
import json
import unittest
from fractions import Fraction

import torch

from attnprop_torch import ImportRefused, import_model
from attnprop_torch.compare import Original, compare, random_inputs, readout_kind
from attnprop_torch.exact import number, parse_number

import modules as M
import support

TOLERANCE = 1e-12
LENGTHS = [1, 2, 4, 9, 12]      # traced at 5, 6 and 8 (importer.DEFAULT_TRACE_LENGTHS)


def imported(cls, kw):
    kw = dict(kw)
    kw.setdefault("alphabet", ["0", "1"])
    module = cls()
    doc = import_model(module, eos="$", name=cls.__name__, **kw)
    return module, kw, doc


class Imported(unittest.TestCase):
    def agree(self, cls, kw, lengths=LENGTHS, seed=17):
        module, kw, doc = imported(cls, kw)
        original = Original(module, kw["alphabet"], kw.get("eos_position", "last"),
                            readout_kind(doc))
        inputs = random_inputs(kw["alphabet"], lengths, 2, seed)
        with support.TempDir() as tmp:
            path = support.write_doc(doc, tmp)
            rows, dtype = compare(original, doc, path, inputs, support.attnprop_bin(),
                                  precision=128)
        for r in rows:
            msg = "%s: n = %d, input %r (seed %d): exact %s, torch float64 %s" % (
                cls.__name__, r.n, r.text, seed, [float(v) for v in r.exact.values], r.float64)
            self.assertIsNone(r.exact.undefined, msg)
            self.assertLessEqual(r.diff64, TOLERANCE, msg)
            self.assertLess(r.radius, 1e-25, msg)
            if r.native is not None:
                self.assertLess(r.diff_native, 1e-4, msg)
        return doc

    def test_causal_masks_are_imported(self):
        # is_causal masks, triu masks (also a buffer sliced to the length) and masked_fill(-inf)
        # become "mask": "causal" on the layer (their agreement: the test above).
        for cls in M.CAUSAL:
            with self.subTest(cls.__name__):
                _, _, doc = imported(cls, dict(readout="logit"))
                self.assertTrue(doc["layers"])
                self.assertEqual({l.get("mask") for l in doc["layers"]}, {"causal"})

    def test_every_module_agrees_with_its_forward(self):
        for cls, kw in M.IMPORTED:
            with self.subTest(cls.__name__):
                self.agree(cls, kw)

    def test_positions_from_n_are_formulas(self):
        # pos/n, cos(pi pos) and [pos == 1] with pos = i - 1 (eos last)
        _, _, doc = imported(M.CustomLayers, dict(readout="logit"))
        self.assertEqual(doc["positional"], {"kind": "formula", "dim": 6, "coordinates": [
            "(i - 1)/n", "(-1)^(i - 1)", "[i==2]", 0, 0, 0]})
        # and the one-logit readout: a softmax over 0, 1 with logits (0, z)
        ro = doc["readout"]
        self.assertEqual(ro["symbols"], ["0", "1"])
        self.assertEqual(ro["c"][0], 0)
        self.assertEqual(readout_kind(doc), "logit")

    def test_eos_first_is_reindexed(self):
        # torch position pos of eos-first ids is i for i < n and 0 at eos (i = n)
        _, _, doc = imported(M.ClsFirst, dict(eos_position="first", readout="logit"))
        self.assertEqual(doc["positional"]["coordinates"][0], "[i*[i<n]==1]")
        # a learned table: rows 1 .. 11 shifted to attnprop's positions, a zero row for eos
        # (whose row 0 comes from the token embedding), so the cap stays 12
        _, _, doc = imported(M.LearnedClsFirst, dict(eos_position="first", readout="logits",
                                                     readout_symbols=["reject", "accept"]))
        self.assertEqual(doc["positional"]["kind"], "table")
        self.assertEqual(len(doc["positional"]["rows"]), 12)
        self.assertEqual(doc["positional"]["rows"][-1], [0, 0, 0, 0])

    def test_tables_keep_their_cap(self):
        _, _, doc = imported(M.TutorialTable, dict(readout="threshold"))
        self.assertEqual(len(doc["positional"]["rows"]), 16)
        self.assertEqual(doc["readout"]["kind"], "threshold")
        with support.TempDir() as tmp:
            path = support.write_doc(doc, tmp)
            code, _, err = support.run_attnprop("eval", "--model", path, "--input", "0" * 16)
            self.assertEqual(code, 2)
            self.assertIn("the model's positional table has 16 rows; an input of length n = 17 "
                          "needs 17", err)

    def test_length_scale_and_scalar_features(self):
        _, _, doc = imported(M.ScaledQuery, dict(readout="logit"))
        for head in doc["layers"][0]["heads"]:
            self.assertEqual(head["score"]["length_scale"], "log")
            self.assertNotIn("q_bias", head["score"])
        _, _, doc = imported(M.ConcatFeatures, dict(readout="logits"))
        self.assertEqual(doc["positional"]["coordinates"], ["(i - 1)/n", "1/n"])

    def test_the_import_is_exact(self):
        module, _, doc = imported(M.HandAttention, dict(alphabet=["a", "b", "c"],
                                                        readout="logits"))
        w = module.emb.weight.detach().to(torch.float64)
        for k, sym in enumerate(["a", "b", "c", "$"]):
            self.assertEqual([parse_number(x) for x in doc["token_embedding"][sym]],
                             [Fraction(float(x)) for x in w[k]])
        # no Python float anywhere: json.dump would write a rounded decimal
        self.assertTrue(support.no_floats(doc))
        self.assertEqual(json.loads(json.dumps(doc)), doc)

    def test_control_one_ulp_is_seen(self):
        module, kw, doc = imported(M.HandAttention, dict(alphabet=["a", "b", "c"],
                                                         readout="logits"))
        import numpy as np
        v = float(module.emb.weight[0, 0])
        doc["token_embedding"]["a"][0] = number(Fraction(float(np.nextafter(np.float32(v),
                                                                            np.float32(10)))))
        original = Original(module, kw["alphabet"], "last", "logits")
        with support.TempDir() as tmp:
            path = support.write_doc(doc, tmp)
            rows, _ = compare(original, doc, path, ["abcab"], support.attnprop_bin(), 128)
        self.assertGreater(rows[0].diff64, TOLERANCE)


def refusal(cls, **kw):
    try:
        import_model(cls(**kw), alphabet=["0", "1"], eos="$", name=cls.__name__)
    except ImportRefused as e:
        return str(e)
    raise AssertionError("%s was imported" % cls.__name__)


L = M.line_of
SIGMOID = ("sigmoid attention (a sigmoid of attention scores in place of the softmax) is not "
           "supported: attnprop's model format has no sigmoid attention yet; the module is not "
           "imported as softmax attention")


class Refused(unittest.TestCase):
    def expect(self, cls, text, **kw):
        self.assertEqual(refusal(cls, **kw), text)

    def test_a_mask_other_than_causal(self):
        self.expect(M.AntiCausal, "cannot import AntiCausal: the module (AntiCausal), %s: "
                    "masked_fill: an attention mask is not supported: attnprop's model format has "
                    "causal masks only, and the mask is not dropped" % L("anticausal"))

    def test_sigmoid_attention(self):
        self.expect(M.SigmoidAttention, "cannot import SigmoidAttention: the module "
                    "(SigmoidAttention), %s: sigmoid: %s" % (L("sigmoid"), SIGMOID))

    def test_scaled_query_with_a_bias(self):
        self.expect(M.ScaledQuery, "cannot import ScaledQuery: attn (nn.MultiheadAttention), "
                    "%s: multi_head_attention_forward: the query is scaled by log(n) before "
                    "in_proj, whose query bias is nonzero: log(n) (W_q x) + b_q is not log(n) "
                    "times a query, so it is not attnprop's length scaling of the score" %
                    L("scaled"), bias=True)

    def test_tables_with_no_formula(self):
        self.expect(M.PythonTable, "cannot import PythonTable: the module (PythonTable), %s: "
                    "tensor: a tensor built from Python data has a length or values that depend "
                    "on n, with no formula: compute positions from torch.arange(n) (they become "
                    "formulas in i and n) or index a fixed table (a buffer) with it, which stays "
                    "a table" % L("pytable"))
        self.expect(M.FrozenLength, "cannot import FrozenLength: the module fails at n = 5: "
                    "RuntimeError: The size of tensor a (5) must match the size of tensor b (8) "
                    "at non-singleton dimension 0 (it is traced at n = 5, 6, 8, eos included; "
                    "give trace_lengths= and check_lengths= within the lengths it accepts)")

    def test_control_flow(self):
        self.expect(M.TokenBranch, "cannot import TokenBranch: the module (TokenBranch), %s: "
                    "getitem: reading the input token at one position: values (or control flow) "
                    "that depend on the token at another position are not supported" %
                    L("tokbranch"))
        self.expect(M.LengthBranch, "cannot import LengthBranch: the forward runs different "
                    "operations at n = 5 and n = 6 (operation 3: getitem at %s, and mul at %s): "
                    "control flow that depends on the length is not supported" %
                    (L("lenbranch1"), L("lenbranch")))

    def test_readout_position_and_pooling(self):
        self.expect(M.MeanPooling, "cannot import MeanPooling: the module (MeanPooling), %s: "
                    "mean: a mean over positions (pooling) is not supported: attnprop reads one "
                    "position (the eos position)" % L("pool"))
        self.expect(M.ReadsFirstPosition, "cannot import ReadsFirstPosition: the module reads "
                    "position 0 (torch's y[0]) but eos_position is 'last': attnprop reads the eos "
                    "position")

    def test_other_operations(self):
        self.expect(M.TrainingDropout, "cannot import TrainingDropout: the module "
                    "(TrainingDropout), %s: dropout: dropout with training=True randomises the "
                    "output (F.dropout's default is training=True; pass training=self.training)"
                    % L("dropout"))
        self.expect(M.RelativeBias, "cannot import RelativeBias: the module (RelativeBias), %s: "
                    "sub: a position-dependent term added to the attention scores (a relative "
                    "position bias or an additive mask with finite values) is not supported" %
                    L("relbias"))
        self.expect(M.ApproximateGelu, "cannot import ApproximateGelu: the module "
                    "(ApproximateGelu), %s: gelu: gelu(approximate='tanh') is not supported "
                    "(only the exact gelu)" % L("tanhgelu"))

    def test_every_refusal_at_once(self):
        self.expect(M.ManyProblems, "cannot import ManyProblems: 2 unsupported operations:\n"
                    "  - sigmoid (SigmoidAttention), %s: sigmoid: %s\n"
                    "  - the module (ManyProblems), %s: exp: exp() of a value computed from the "
                    "input is not supported (attnprop's maps have relu, gelu, tanh, sigmoid, erf, "
                    "step, floor, layer norm and affine maps)" %
                    (L("sigmoid"), SIGMOID, L("exp")))

    def test_unknown_operations(self):
        self.expect(M.CumulativeSum, "cannot import CumulativeSum: the module (CumulativeSum), "
                    "%s: cumsum: cumsum() is not supported" % L("cumsum"))

    def test_not_a_layer_norm(self):
        self.expect(M.NotALayerNorm, "cannot import NotALayerNorm: 2 unsupported operations:\n"
                    "  - the module (NotALayerNorm), %s: sqrt: a square root of a value computed "
                    "from the input (only inside a layer norm)\n"
                    "  - the module (NotALayerNorm), %s: div: a division by a value computed from "
                    "the input (attnprop's maps have none; a layer norm written out is read only "
                    "in the form (x - mean) / sqrt(var + eps))" % (L("notln"), L("notln")))

    def test_every_refused_module_is_tested(self):
        names = {c.__name__ for c in M.REFUSED}
        tested = {n[len("cannot import "):].split(":")[0] for n in
                  [refusal(c) for c in M.REFUSED]}
        self.assertEqual(names, tested)

    def test_arguments(self):
        from attnprop_torch import ExportError
        for kw, text in [
                (dict(eos_position="middle"), "eos_position: expected 'last' or 'first', got "
                                              "'middle'"),
                (dict(readout="probability"), "readout: expected one of logit, logits, "
                                              "threshold, got 'probability'"),
                (dict(alphabet=["0"]), "readout 'logit' is a softmax over alphabet[0] and "
                                       "alphabet[1]; the alphabet has one symbol"),
                (dict(eos="1"), "eos: '1' is in the alphabet")]:
            args = dict(alphabet=["0", "1"], eos="$", name="m")
            args.update(kw)
            with self.assertRaises(ExportError) as cm:
                import_model(M.MeanPooling(), **args)
            self.assertEqual(str(cm.exception), text)


if __name__ == "__main__":
    unittest.main()
