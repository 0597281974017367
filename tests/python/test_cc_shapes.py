"""Networks of the shapes of Chiang and Cholak's exact PARITY and FIRST transformers (with and
without layer norm; cc_shapes.py), imported with import_model from their own forward: the import
equals the bundled cc-* model as a function (attnprop eval at 320 bits, n = 5, 17, 100, 1000:
the probabilities agree to 1e-30, or 1e-15 for the layer-norm networks, whose eps = 1e-5 is a
double in torch and the decimal 1e-5 in the bundled files), and agrees with the module's own
forward run in float64. Negative control: the same comparison sees a change of 2^-90 in the
readout's bias."""
import random
import unittest
from decimal import Decimal, getcontext
from fractions import Fraction

from attnprop_torch import import_model
from attnprop_torch.compare import Original, attnprop_value, compare
from attnprop_torch.exact import number, parse_number

import cc_shapes
import support

getcontext().prec = 150
NETWORKS = [("cc-parity", Decimal("1e-30")), ("cc-first", Decimal("1e-30")),
            ("cc-parity-ln5", Decimal("1e-15")), ("cc-first-ln5", Decimal("1e-15"))]
LENGTHS = [5, 17, 100, 1000]


def probabilities(path, text):
    out = attnprop_value(support.attnprop_bin(), path, text, precision=320)
    return [Decimal(out["probabilities"][s]) for s in ("0", "1")]


def inputs(seed):
    rng = random.Random(seed)
    return ["".join(rng.choice("01") for _ in range(n - 1)) for n in LENGTHS for _ in range(2)]


class ChiangCholakShapes(unittest.TestCase):
    def largest_difference(self, doc, model, seed):
        with support.TempDir() as tmp:
            path = support.write_doc(doc, tmp)
            bundled = "%s/%s.json" % (cc_shapes.MODELS, model)
            worst = Decimal(0)
            for text in inputs(seed):
                a, b = probabilities(path, text), probabilities(bundled, text)
                worst = max(worst, max(abs(x - y) for x, y in zip(a, b)))
        return worst

    def test_imports_equal_the_bundled_models(self):
        for k, (model, tol) in enumerate(NETWORKS):
            with self.subTest(model):
                net, kw = cc_shapes.network(model)
                doc = import_model(net, **kw)
                worst = self.largest_difference(doc, model, 40 + k)
                self.assertLessEqual(worst, tol, "%s: largest |dP| %s (seed %d)" %
                                     (model, worst, 40 + k))

    def test_imports_agree_with_their_own_forward(self):
        for k, (model, _) in enumerate(NETWORKS):
            with self.subTest(model):
                net, kw = cc_shapes.network(model)
                doc = import_model(net, **kw)
                original = Original(net, kw["alphabet"], kw["eos_position"], "logit")
                texts = [t for t in inputs(50 + k) if len(t) < 100]
                with support.TempDir() as tmp:
                    path = support.write_doc(doc, tmp)
                    rows, _ = compare(original, doc, path, texts, support.attnprop_bin(), 256)
                for r in rows:
                    msg = "%s: n = %d, input %r (seed %d)" % (model, r.n, r.text, 50 + k)
                    self.assertLessEqual(r.diff64, 1e-9, msg)   # z, relative: float64 rounding
                    self.assertLessEqual(r.diff_native, 1e-2, msg)  # float32 positions

    def test_control_a_tiny_change_is_seen(self):
        net, kw = cc_shapes.network("cc-parity")
        doc = import_model(net, **kw)
        c = doc["readout"]["c"]
        c[1] = number(parse_number(c[1]) + Fraction(1, 2 ** 90))
        worst = self.largest_difference(doc, "cc-parity", 40)
        self.assertGreater(worst, Decimal("1e-30"))


if __name__ == "__main__":
    unittest.main()
