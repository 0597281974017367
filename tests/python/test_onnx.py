"""ONNX files through the importer (import_onnx): encoders exported by torch.onnx.export with a
dynamic sequence axis (opsets 13 and 17) import and agree with the torch module they came from to
1e-12 (its own forward in float64, against attnprop's ball enclosure), and the Chiang-Cholak-
shaped networks equal the bundled cc-* models (1e-30; 1e-15 with layer norm). Decomposed
attention (MatMul / Transpose / Softmax / MatMul) becomes heads, Shape / Range arithmetic
positional formulas, the decomposed layer norm and gelu what they decompose. What the importer
refuses in a module it refuses in its ONNX file (a mask other than causal, sigmoid attention), located at
the node; a length fixed in the graph, an unknown operation and an old opset are refused too."""
import unittest
import warnings
from decimal import Decimal

import torch

try:
    import onnx  # noqa: F401
except ImportError:  # pragma: no cover - run.py skips when onnx is missing
    onnx = None

from attnprop_torch import ImportRefused, import_onnx, import_model
from attnprop_torch.compare import Original, compare, random_inputs, readout_kind
from attnprop_torch.exact import ExportError
from attnprop_torch.importer import token_ids

import cc_shapes
import modules as M
import support
from test_cc_shapes import NETWORKS, inputs, probabilities

TOLERANCE = 1e-12


def export(module, alphabet, eos_position, path, opset):
    ids = token_ids("0110"[:4] if len(alphabet) == 2 else "abca", alphabet, eos_position)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module.eval(), (ids,), path, input_names=["ids"], output_names=["z"],
                          dynamic_axes={"ids": {0: "n"}}, opset_version=opset)
    return path


def agree(test, module, doc, kw, lengths, seed):
    original = Original(module, kw["alphabet"], kw.get("eos_position", "last"),
                        readout_kind(doc))
    texts = random_inputs(kw["alphabet"], lengths, 2, seed)
    with support.TempDir() as tmp:
        path = support.write_doc(doc, tmp)
        rows, _ = compare(original, doc, path, texts, support.attnprop_bin(), 128)
    for r in rows:
        msg = "%s: n = %d, input %r (seed %d)" % (doc["name"], r.n, r.text, seed)
        test.assertIsNone(r.exact.undefined, msg)
        test.assertLessEqual(r.diff64, TOLERANCE, msg)


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class Onnx(unittest.TestCase):
    def test_chiang_cholak_shapes(self):
        for k, (model, tol) in enumerate(NETWORKS):
            opset = 13 if k % 2 == 0 else 17
            with self.subTest(model=model, opset=opset):
                net, kw = cc_shapes.network(model, dynamic=True)
                with support.TempDir() as tmp:
                    path = export(net, kw["alphabet"], kw["eos_position"], tmp + "/m.onnx",
                                  opset)
                    doc = import_onnx(path, **kw)
                    # the same function as the bundled model
                    mine = support.write_doc(doc, tmp)
                    bundled = "%s/%s.json" % (cc_shapes.MODELS, model)
                    worst = max(max(abs(a - b) for a, b in zip(probabilities(mine, t),
                                                                probabilities(bundled, t)))
                                for t in inputs(60 + k))
                self.assertLessEqual(worst, tol, "%s (opset %d): |dP| %s" % (model, opset, worst))
                # the same width as the bundled model: nothing carried twice
                self.assertEqual(doc["d"], support.load_json(bundled)["d"])
                self.assertEqual(doc["positional"]["coordinates"],
                                 {"3": "(i - 1)/n", "4": "(-1)^(i - 1)"} if "parity" in model
                                 else {"3": "[i*[i<n]==1]"})
                # and the torch module it was exported from (the logit z, relative; at n = 5 and
                # 17 float64 keeps it to ~1e-15: it is a difference of averages near 1)
                original = Original(net, kw["alphabet"], kw["eos_position"], "logit")
                with support.TempDir() as tmp:
                    path = support.write_doc(doc, tmp)
                    rows, _ = compare(original, doc, path, ["0110", "1" * 16],
                                      support.attnprop_bin(), 128)
                for r in rows:
                    self.assertLessEqual(r.diff64, TOLERANCE, "%s: %r" % (model, r.text))

    def test_hand_written_modules(self):
        cases = [(M.HandAttention, dict(alphabet=["a", "b", "c"], readout="logits"), 13),
                 (M.HandMultiHead, dict(readout="logit"), 14),
                 (M.LearnedClsFirst, dict(eos_position="first", readout="logits",
                                          readout_symbols=["reject", "accept"]), 17),
                 (M.TutorialTable, dict(readout="threshold"), 13),
                 (M.ConcatFeatures, dict(readout="logits"), 13),
                 (M.ZeroPaddingMask, dict(readout="logit"), 13)]
        for k, (cls, kw, opset) in enumerate(cases):
            kw = dict(kw)
            kw.setdefault("alphabet", ["0", "1"])
            with self.subTest(cls.__name__):
                module = cls()
                with support.TempDir() as tmp:
                    path = export(module, kw["alphabet"], kw.get("eos_position", "last"),
                                  tmp + "/m.onnx", opset)
                    doc = import_onnx(path, eos="$", name=cls.__name__, **kw)
                agree(self, module, doc, kw, [1, 2, 4, 9, 12], 70 + k)

    def test_the_onnx_import_is_the_torch_import(self):
        # decomposed layer norm and gelu (opset 13) read back exactly: the same numbers
        module = M.HandAttention()
        kw = dict(alphabet=["a", "b", "c"], eos="$", readout="logits", name="h")
        direct = import_model(module, **kw)
        with support.TempDir() as tmp:
            doc = import_onnx(export(module, kw["alphabet"], "last", tmp + "/m.onnx", 13), **kw)
            a = support.write_doc(direct, tmp, "a.json")
            b = support.write_doc(doc, tmp, "b.json")
            for text in ["", "abc", "cabbacab"]:
                pa = probabilities_of(a, text)
                pb = probabilities_of(b, text)
                self.assertLessEqual(max(abs(x - y) for x, y in zip(pa, pb)), Decimal("1e-60"))

    def test_refusals_are_located_at_nodes(self):
        with support.TempDir() as tmp:
            path = export(M.SigmoidAttention(), ["0", "1"], "last", tmp + "/s.onnx", 13)
            with self.assertRaises(ImportRefused) as cm:
                import_onnx(path, alphabet=["0", "1"], eos="$", name="s")
            self.assertEqual(str(cm.exception), "cannot import OnnxGraph: the module (OnnxGraph), "
                             "node /Sigmoid (Sigmoid): sigmoid: sigmoid attention (a sigmoid of "
                             "attention scores in place of the softmax) is not supported: "
                             "attnprop's model format has no sigmoid attention yet; the module "
                             "is not imported as softmax attention")
            path = export(M.AntiCausal(), ["0", "1"], "last", tmp + "/c.onnx", 14)
            with self.assertRaises(ImportRefused) as cm:
                import_onnx(path, alphabet=["0", "1"], eos="$", name="c")
            self.assertRegex(str(cm.exception), r"^cannot import OnnxGraph: the module "
                             r"\(OnnxGraph\), node /\w+ \(Where\): where: an attention mask is "
                             r"not supported: attnprop's model format has causal masks only")
            # A causal mask built from the length in the graph is imported as the layer's mask.
            path = export(M.DynamicCausal(), ["0", "1"], "last", tmp + "/d.onnx", 14)
            doc = import_onnx(path, alphabet=["0", "1"], eos="$", name="d")
            self.assertEqual({l.get("mask") for l in doc["layers"]}, {"causal"})
            path = export(M.CumulativeSum(), ["0", "1"], "last", tmp + "/u.onnx", 13)
            with self.assertRaises(ImportRefused) as cm:
                import_onnx(path, alphabet=["0", "1"], eos="$", name="u")
            self.assertRegex(str(cm.exception), r"^cannot import OnnxGraph: node /CumSum "
                             r"\(CumSum\): no ONNX operation CumSum in attnprop_torch's reader$")

    def test_a_length_fixed_in_the_graph(self):
        # len(w) is a constant in the exported graph: the graph runs only at that length
        net, kw = cc_shapes.network("cc-parity")
        with support.TempDir() as tmp:
            path = export(net, kw["alphabet"], "last", tmp + "/f.onnx", 13)
            with self.assertRaises(ImportRefused) as cm:
                import_onnx(path, **kw)
        self.assertIn("the module fails at n = 6: RuntimeError: ", str(cm.exception))
        self.assertIn("(is a length fixed in the graph? torch.onnx.export records len(x) and "
                      "other Python numbers as constants; x.shape[0] stays dynamic)",
                      str(cm.exception))

    def test_old_opset(self):
        net, kw = cc_shapes.network("cc-first", dynamic=True)
        with support.TempDir() as tmp:
            path = export(net, kw["alphabet"], "first", tmp + "/o.onnx", 11)
            with self.assertRaises(ExportError) as cm:
                import_onnx(path, **kw)
        self.assertEqual(str(cm.exception), "o.onnx: opset 11; the importer reads opset 13 or "
                         "later (what torch.onnx.export writes with opset_version >= 13)")


def probabilities_of(path, text):
    from attnprop_torch.compare import attnprop_value
    out = attnprop_value(support.attnprop_bin(), path, text, precision=256)
    return [Decimal(v) for v in out["probabilities"].values()]


if __name__ == "__main__":
    unittest.main()
