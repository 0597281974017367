"""The worked example python/examples/influence_figure.py: model -> influence across n -> one
figure overlaying two models, written as PDF, SVG and PNG."""
import os
import re
import runpy
import unittest

import support

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "python", "examples", "influence_figure.py")


class Example(unittest.TestCase):
    def test_the_example_draws_both_models(self):
        run = runpy.run_path(EXAMPLE)["run"]
        lines = []
        with support.TempDir() as tmp:
            reports, files = run(os.path.join(tmp, "ex"), log=lines.append)
            self.assertEqual(reports["cc-parity"].verdict, "passed")
            self.assertEqual(reports["cc-parity-ln0"].verdict, "not-applicable")
            # cc-parity: n·Δ(n) stays at 1 (README); cc-parity-ln0: it grows with n
            nd = reports["cc-parity"].arrays()["n_max_influence"]
            self.assertTrue(all(0.5 < v < 2 for v in nd), nd)
            nd0 = reports["cc-parity-ln0"].arrays()["n_max_influence"]
            self.assertGreater(nd0[-1], 4 * nd0[0])
            names = sorted(os.path.basename(f) for f in files)
            self.assertEqual(names, ["influence.pdf", "influence.png", "influence.svg"])
            figure = os.path.join(tmp, "ex", "figure")
            with open(os.path.join(figure, "influence.pdf"), "rb") as f:
                self.assertEqual(f.read(5), b"%PDF-")
            with open(os.path.join(figure, "influence.svg")) as f:
                svg = f.read()
            with open(os.path.join(figure, "report.md")) as f:
                md = f.read()
        # both models in the legend, no title or verdict in the image, the verdicts in report.md
        self.assertIn(">cc-parity<", svg)
        self.assertIn(">cc-parity-ln0<", svg)
        self.assertNotIn("passed", svg)
        self.assertNotIn("Verdict", svg)
        self.assertNotIn("log scale", svg)
        self.assertIn("cc-parity: passed", md)
        self.assertIn("cc-parity-ln0: not-applicable", md)
        self.assertIn("1 − CE (bits)", svg)
        self.assertIn("∝ 1/n (reference)", svg)
        self.assertFalse(re.search(r"\b(nan|inf)\b", svg, re.I))
        self.assertTrue(any("progress" in l or "done" in l for l in lines))


if __name__ == "__main__":
    unittest.main()
