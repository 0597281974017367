"""Exactness of the export: every weight in the file is the float in the module, exactly; the
file read by attnprop and written back in canonical form (attnprop format) describes the same
model, and the canonical form is a fixed point. A negative control shows that the comparison
sees a change in the last bit of a float64 weight."""
import json
import unittest
from decimal import Decimal
from fractions import Fraction

import torch

from attnprop_torch import export_encoder
from attnprop_torch.exact import exact_decimal, number, parse_number
from attnprop_torch.modelfile import loads, normalise

import support


def no_floats(v):
    if isinstance(v, float):
        return False
    if isinstance(v, dict):
        return all(no_floats(x) for x in v.values())
    if isinstance(v, list):
        return all(no_floats(x) for x in v)
    return True


class RoundTrip(unittest.TestCase):
    def test_numbers_are_exact(self):
        for x in [0.1, -0.1, 1e-5, 2.0 ** -149, -(2.0 ** -1074), 3.0, -7.5, 2.0 ** 70, 1 / 3]:
            q = parse_number(number(Fraction(x)))
            self.assertEqual(q, Fraction(x), repr(x))
        # float32 0.1 has 27 exact decimals; float64 0.1 has 55 digits: written as p/q.
        self.assertEqual(number(Fraction(float(torch.tensor(0.1, dtype=torch.float32)))),
                         "0.100000001490116119384765625")
        self.assertEqual(number(Fraction(0.1)), "3602879701896397/36028797018963968")
        self.assertEqual(number(Fraction(-5, 2)), "-2.5")
        self.assertEqual(number(Fraction(6)), 6)
        self.assertEqual(exact_decimal(Fraction(1, 3)), None)
        self.assertEqual(exact_decimal(Fraction(1, 1000)), "0.001")

    def test_file_equals_modules_and_canonical_form(self):
        for label, build in support.configurations():
            with self.subTest(label):
                kwargs = build()
                doc = export_encoder(**kwargs)
                self.assertTrue(no_floats(doc), "a Python float would be written inexactly")
                # Weights are the module's floats, exactly.
                emb = kwargs["token_embedding"].weight.detach().to(torch.float64)
                tok = normalise(loads(json.dumps(doc)))["token_embedding"]
                for k, sym in enumerate(list(kwargs["alphabet"]) + [kwargs["eos"]]):
                    self.assertEqual(tok[sym], [Fraction(float(v)) for v in emb[k]])
                with support.TempDir() as tmp:
                    path = support.write_doc(doc, tmp)
                    code, out, err = support.run_attnprop("format", "--model", path)
                    self.assertEqual(code, 0, err)
                    # The canonical form is the same model, number by number.
                    self.assertEqual(normalise(loads(out)), normalise(loads(json.dumps(doc))))
                    # ... and a fixed point of attnprop's writer.
                    with open(tmp + "/canonical.json", "w") as f:
                        f.write(out)
                    code2, out2, err2 = support.run_attnprop("format", "--model", tmp + "/canonical.json")
                    self.assertEqual(code2, 0, err2)
                    self.assertEqual(out2, out)

    def test_negative_control_last_bit(self):
        label, build = support.configurations()[-1]  # the float64 module: p/q strings
        doc = export_encoder(**build())
        changed = json.loads(json.dumps(doc))
        w = changed["readout"]["W"][0][0]
        q = parse_number(w)
        changed["readout"]["W"][0][0] = number(q + Fraction(1, 2 ** 60))
        self.assertNotEqual(normalise(loads(json.dumps(changed))), normalise(loads(json.dumps(doc))))
        # Decimal-free parsing matters: reading a JSON float would lose the change.
        self.assertEqual(float(Decimal(str(float(q)))), float(q + Fraction(1, 2 ** 60)))


if __name__ == "__main__":
    unittest.main()
