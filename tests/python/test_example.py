"""The worked example of docs/torch.md: python/examples/parity.py trains a small encoder on
PARITY (fixed seed), the module is imported from its own forward (the sinusoidal positions it
computes from n are recognised as attnprop's sinusoidal kind), the import is checked against the module, and attnprop's
soft-attention tools run on it: bound (Lemma 5 applies), influence across n with the PARITY
cross-entropy corollary (every row defined, the verdict holds)."""
import json
import os
import runpy
import unittest

from attnprop_torch import import_model
from attnprop_torch.compare import Original, compare

import support

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "python", "examples", "parity.py")


class WorkedExample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        kwargs = runpy.run_path(EXAMPLE)["build"]()
        cls.module = kwargs.pop("module")
        cls.kwargs = kwargs
        cls.doc = import_model(cls.module, **kwargs)

    def test_import_agrees_with_torch(self):
        # the positions the forward computes from n are exactly attnprop's sinusoidal kind
        self.assertEqual(self.doc["positional"], {"kind": "sinusoidal", "dim": 16})
        original = Original(self.module, self.kwargs["alphabet"], "last", "logits")
        with support.TempDir() as tmp:
            path = support.write_doc(self.doc, tmp)
            rows, _ = compare(original, self.doc, path, ["", "1", "0110100111", "1" * 19],
                              support.attnprop_bin(), precision=128)
        for r in rows:
            self.assertLessEqual(r.diff64, 1e-12, "input %r" % r.text)
            self.assertLess(r.diff_native, 1e-5, "input %r" % r.text)

    def test_bound_influence_and_cross_entropy(self):
        with support.TempDir() as tmp:
            path = support.write_doc(self.doc, tmp)
            code, out, err = support.run_attnprop("bound", "--model", path, "--json")
            self.assertEqual(code, 0, err)
            b = json.loads(out)
            self.assertTrue(all(h["holds"] for h in b["hypotheses"].values()), out)
            self.assertTrue(b["verdict"].startswith("Lemma 5 applies"), b["verdict"])
            code, out, err = support.run_attnprop(
                "influence", "--model", path, "--n", "8,32", "--language", "parity",
                "--inputs", "4", "--positions", "3", "--precision", "128", "--threads", "2",
                "--out", os.path.join(tmp, "influence"), "--json")
            self.assertEqual(code, 0, err)
            rep = json.loads(out)
            self.assertEqual(rep["verdict"], "passed", out[:2000])
            rows = rep["rows"]
            self.assertEqual([r["n"] for r in rows], [8, 32])
            # The cube at n = 8 is enumerated: the corollary is a theorem there, decided.
            ce = rows[0]["cross_entropy"]
            self.assertTrue(ce["exhaustive"], ce)
            self.assertEqual(ce["inputs"], 128, ce)
            self.assertEqual(ce["check"], "passed", ce)
            # Every row is defined and below both bounds.
            for r in rows:
                self.assertIsNone(r["undefined"], r)
                self.assertEqual((r["below_bound"], r["below_posterior"]), ("passed", "passed"), r)


if __name__ == "__main__":
    unittest.main()
