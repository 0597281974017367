"""The Python module attnprop (python/binding, docs/python.md) against the command line: the
same values with their meaning kept (Fraction, Interval, float), the same reports, the same
located messages; undefined values as results; Ctrl-C, the GIL and the progress callback."""
import json
import os
import signal
import threading
import time
import unittest
from fractions import Fraction

import numpy

import attnprop
import support


def cli_json(*args):
    code, out, err = support.run_attnprop(*args)
    return code, (json.loads(out) if out.strip().startswith("{") else None), err


def cli_message(*args):
    """The message of a refused command (or of an undefined result), without the "attnprop: "
    or "attnprop: error: " prefix."""
    code, out, err = support.run_attnprop(*args)
    text = (err.strip() or out.strip())
    for prefix in ("attnprop: error: ", "attnprop: "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return code, text


class Values(unittest.TestCase):
    def test_exact_values_are_fractions_equal_to_the_cli(self):
        r = attnprop.load("hard-first").eval("1011")
        self.assertEqual(r.scalar, "exact")
        self.assertEqual(r.n, 5)
        self.assertTrue(all(isinstance(v, Fraction) for v in r.y))
        code, doc, _ = cli_json("eval", "--model", "hard-first", "--input", "1011", "--json")
        self.assertEqual(code, 0)
        self.assertEqual(list(r.y), [Fraction(v) for v in doc["y"]])
        self.assertEqual(r.accept, "accept" if doc["accept"] else "reject")

    def test_ball_contains_the_exact_value_and_a_moved_ball_does_not(self):
        m = attnprop.load("hard-parity-attempt")
        exact = m.eval("1101", scalar="exact")
        ball = m.eval("1101", scalar="ball", precision=64)
        self.assertEqual(ball.scalar, "ball")
        for e, b in zip(exact.y, ball.y):
            self.assertIsInstance(b, attnprop.Interval)
            self.assertIn(e, b)
            # negative control: the same ball moved by more than its width excludes the value
            moved = attnprop.Interval(b.mid + 2 * b.rad + Fraction(1, 10**30), b.rad)
            self.assertNotIn(e, moved)

    def test_soft_model_ball_agrees_with_the_cli_and_encloses_sqrt10(self):
        m = attnprop.load("cc-parity-ln0")
        r = m.eval("0110", scalar="ball")
        self.assertEqual(r.output_symbols, ["0", "1"])
        self.assertTrue(all(isinstance(v, attnprop.Interval) for v in r.probabilities))
        code, doc, _ = cli_json("eval", "--model", "cc-parity-ln0", "--input", "0110", "--json")
        self.assertEqual(code, 0)
        for s, p in zip(r.output_symbols, r.probabilities):
            # the CLI's rounded midpoint lies within the exact ball's radius
            self.assertLessEqual(abs(Fraction(doc["probabilities"][s]) - p.mid),
                                 p.rad + Fraction(doc["probabilities_radius"][s]))
        # the logit of cc-parity-ln0 is exactly +-sqrt(10) (README): |z|^2 brackets 10
        z = attnprop.Interval(r.logits[1].mid - r.logits[0].mid, r.logits[1].rad + r.logits[0].rad)
        lo, hi = sorted((abs(z.lower), abs(z.upper)))
        self.assertLessEqual(lo * lo, 10)
        self.assertGreaterEqual(hi * hi, 10)
        self.assertIn("+/-", str(r.probabilities[0]))

    def test_double_is_a_float64_array_equal_to_the_cli(self):
        r = attnprop.load("cc-parity").eval("0110", scalar="double")
        self.assertEqual(r.y.dtype, numpy.float64)
        code, doc, _ = cli_json("eval", "--model", "cc-parity", "--input", "0110", "--scalar", "double", "--json")
        self.assertEqual(code, 0)
        self.assertEqual([float(v) for v in doc["y"]], list(r.y))

    def test_every_scalar_kind(self):
        m = attnprop.load("cc-parity")
        for k in attnprop.scalars():
            if k == "exact":
                with self.assertRaises(attnprop.Error):
                    m.eval("01", scalar=k)  # softmax needs exp: refused, as on the command line
                continue
            r = m.eval("01", scalar=k)
            self.assertEqual(len(r.y), m.d)
            self.assertIsNone(r.undefined)

    def test_model_from_a_dict_and_a_file(self):
        m = attnprop.load("cc-parity")
        doc = m.to_dict()
        from_dict = attnprop.load(doc)
        a, b = m.eval("0110"), from_dict.eval("0110")
        self.assertEqual(list(a.y), list(b.y))
        from_file = attnprop.load(m.source)
        self.assertEqual(from_file.name, "cc-parity")
        self.assertIn("cc-parity", attnprop.models())
        self.assertIn("soft attention", repr(m))

    def test_str_is_readable(self):
        s = str(attnprop.load("cc-parity").eval("0110", scalar="ball"))
        self.assertIn("cc-parity on '0110' (n = 5, ball, 256 bits)", s)
        self.assertIn("probabilities: 0:", s)


class Errors(unittest.TestCase):
    def test_unknown_model(self):
        with self.assertRaises(attnprop.Error) as cm:
            attnprop.load("no-such-model")
        self.assertIn("no model file or bundled model named 'no-such-model'", str(cm.exception))

    def test_bad_input_has_the_cli_message(self):
        with self.assertRaises(attnprop.Error) as cm:
            attnprop.load("cc-parity").eval("01x0")
        code, msg = cli_message("eval", "--model", "cc-parity", "--input", "01x0")
        self.assertEqual(code, 2)
        self.assertEqual(str(cm.exception), msg)

    def test_bad_model_file_is_located(self):
        with support.TempDir() as tmp:
            path = os.path.join(tmp, "bad.json")
            with open(path, "w") as f:
                f.write('{"format": "attnprop-model", "version": 1, "name": 3}\n')
            with self.assertRaises(attnprop.Error) as cm:
                attnprop.load(path)
            code, msg = cli_message("eval", "--model", path, "--input", "0")
        self.assertEqual(code, 2)
        self.assertEqual(str(cm.exception), msg)
        self.assertIn(path, str(cm.exception))

    def test_undefined_is_a_result_with_the_cli_message(self):
        r = attnprop.load("soft-majority-ln0").eval("0110")
        self.assertIsNotNone(r.undefined)
        self.assertEqual(len(r.y), 0)
        self.assertIn("undefined:", str(r))
        code, msg = cli_message("eval", "--model", "soft-majority-ln0", "--input", "0110")
        self.assertEqual(code, 4)
        self.assertIn(r.undefined, msg)

    def test_unknown_scalar(self):
        with self.assertRaises(ValueError):
            attnprop.load("cc-parity").eval("01", scalar="float128")


class Reports(unittest.TestCase):
    def test_bound_is_the_cli_document(self):
        m = attnprop.load("cc-parity")
        rep = m.bound(n=[64], every_n=False)
        code, doc, _ = cli_json("bound", "--model", "cc-parity", "--n", "64", "--no-every-n", "--json")
        self.assertEqual(code, 0)
        self.assertEqual(dict(rep), doc)
        self.assertTrue(rep.verdict.startswith("Lemma 5 applies"))
        self.assertIn("hypotheses of Lemma 5", rep.text)
        self.assertIn("<pre>", rep._repr_html_())

    def test_bound_negative_control(self):
        rep = attnprop.load("cc-parity-ln0").bound(every_n=False)
        self.assertTrue(rep.verdict.startswith("Lemma 5 does not apply"))
        self.assertIsNone(rep["K"])

    def test_influence_rows_equal_the_cli_and_progress_is_called(self):
        m = attnprop.load("cc-parity")
        seen = []
        rep = m.influence([16, 64], inputs=2, positions=2, language="parity", seed=3,
                          progress=lambda row: seen.append(row["n"]))
        self.assertEqual(seen, [16, 64])
        self.assertEqual(rep.verdict, "passed")
        with support.TempDir() as tmp:
            code, doc, err = cli_json("influence", "--model", "cc-parity", "--n", "16,64", "--inputs", "2",
                                      "--positions", "2", "--language", "parity", "--seed", "3",
                                      "--json", "--out", os.path.join(tmp, "out"))
        self.assertEqual(code, 0, err)
        self.assertEqual(rep.rows, doc["rows"])
        a = rep.arrays()
        self.assertEqual(list(a["n"]), [16, 64])
        self.assertTrue(numpy.all(a["n_max_influence"] > 0))
        self.assertIn("<table>", rep._repr_html_())

    def test_influence_refuses_a_hard_model(self):
        with self.assertRaises(attnprop.Error) as cm:
            attnprop.load("hard-first").influence([16])
        self.assertIn("influence needs attention that weighs every key", str(cm.exception))

    def test_influence_writes_its_report_folder(self):
        with support.TempDir() as tmp:
            out = os.path.join(tmp, "sweep")
            attnprop.load("cc-parity").influence([16, 32], inputs=1, positions=2, out=out)
            for f in ("report.json", "report.md", "influence.csv", "influence.svg"):
                self.assertTrue(os.path.isfile(os.path.join(out, f)), f)

    def test_an_exception_in_the_progress_callback_stops_the_sweep(self):
        class Stop(Exception):
            pass

        def progress(row):
            raise Stop("at n = %d" % row["n"])

        with self.assertRaises(Stop) as cm:
            attnprop.load("cc-parity").influence([16, 32, 64], inputs=1, positions=2, progress=progress)
        self.assertEqual(str(cm.exception), "at n = 16")


class Simulate(unittest.TestCase):
    def test_simulate_is_the_cli_document(self):
        seen = []
        rep = attnprop.load("hard-first-one-position").simulate("100", [16, 64], progress=seen.append)
        self.assertEqual(seen, [16, 64])
        self.assertEqual(rep["findings"], 0)
        with support.TempDir() as tmp:
            code, doc, err = cli_json("simulate", "--model", "hard-first-one-position", "--beta", "100",
                                      "--n", "16,64", "--json", "--out", os.path.join(tmp, "s"))
        self.assertEqual(code, 0, err)
        for key in ("provenance", "report_dir"):
            doc.pop(key, None)
        self.assertEqual(dict(rep), doc)

    def test_simulate_refusals_have_the_cli_messages(self):
        with self.assertRaises(attnprop.Error) as cm:
            attnprop.load("cc-first").simulate("4", [16])
        self.assertIn("simulate needs a hard or average-hard model", str(cm.exception))
        with self.assertRaises(attnprop.Error) as cm:
            attnprop.load("hard-contains-one").simulate("log(n)-1", [2, 16])
        code, msg = cli_message("simulate", "--model", "hard-contains-one", "--beta", "log(n)-1", "--n", "2,16")
        self.assertEqual(code, 2)
        self.assertEqual(str(cm.exception), msg)


class Restrict(unittest.TestCase):
    def test_restrict_runs_are_the_cli_documents(self):
        rep = attnprop.load("hard-parity-attempt").restrict([16, 32], language="parity", samples=8)
        self.assertEqual([r["n"] for r in rep["runs"]], [16, 32])
        for run in rep["runs"]:
            with support.TempDir() as tmp:
                code, doc, err = cli_json("restrict", "--model", "hard-parity-attempt", "--n", str(run["n"]),
                                          "--language", "parity", "--samples", "8", "--json",
                                          "--out", os.path.join(tmp, "r"))
            self.assertIn(code, (0, 1), err)
            doc.pop("report_dir", None)
            self.assertEqual(run, doc)

    def test_restrict_refuses_a_soft_model(self):
        with self.assertRaises(attnprop.Error) as cm:
            attnprop.load("cc-parity").restrict([16])
        code, msg = cli_message("restrict", "--model", "cc-parity", "--n", "16")
        self.assertEqual(code, 2)
        self.assertEqual(str(cm.exception), msg)


class Importer(unittest.TestCase):
    def test_compare_reaches_attnprop_through_the_module(self):
        from attnprop_torch import compare as cmp
        where = cmp.find_attnprop()
        self.assertTrue(os.path.isdir(where), where)  # the module, not the binary
        self.assertEqual(cmp.find_attnprop(support.attnprop_bin()), support.attnprop_bin())
        path = attnprop.load("cc-parity").source
        doc = attnprop.load("cc-parity").to_dict()
        for text in ("", "0110", "1" * 9):
            via_module = cmp.attnprop_eval(where, path, text, doc, precision=128)
            via_binary = cmp.attnprop_eval(support.attnprop_bin(), path, text, doc, precision=128)
            self.assertIsNone(via_module.undefined)
            for vm, rm, vb, rb in zip(via_module.values, via_module.radii, via_binary.values, via_binary.radii):
                self.assertLessEqual(abs(vm - vb), rm + rb)   # the two enclosures meet
                self.assertLessEqual(rm, rb)                  # no decimal rounding in the module's
        with self.assertRaises(cmp.AttnpropError):
            cmp.attnprop_value(where, path, "01x", precision=128)


class Runtime(unittest.TestCase):
    LONG = dict(n=[256, 512, 1024, 2048, 4096], inputs=8, positions="all", threads=1)

    def test_ctrl_c_interrupts_and_the_next_call_works(self):
        m = attnprop.load("cc-parity")
        timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                m.influence(**self.LONG)
        finally:
            timer.cancel()
        self.assertLess(time.monotonic() - start, 60)
        # the stop request was withdrawn: the next computation runs to its end
        self.assertEqual(m.influence([16], inputs=1, positions=1).rows[0]["n"], 16)
        # and Python's own handler is back
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)

    def test_the_gil_is_released_during_a_computation(self):
        m = attnprop.load("cc-parity")
        ticks = []
        done = threading.Event()

        def work():
            m.influence([512, 1024], inputs=2, positions=4, threads=1)
            done.set()

        t = threading.Thread(target=work)
        t.start()
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)
        t.join()
        # the main thread kept running Python while the other computed
        self.assertGreater(len(ticks), 5)


if __name__ == "__main__":
    unittest.main()
