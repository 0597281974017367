"""check and replay from the Python module attnprop (python/binding, docs/python.md; they run the
attnprop executable): the report document is the one `attnprop check` writes to report.json, a property that fails on a given
model yields a counterexample whose replay reproduces it (the failing control), and the refusals
are the command line's messages. The figures' titles in report.md (and in the image when asked),
and plot of simulate folders."""
import json
import os
import tempfile
import unittest
from fractions import Fraction

import attnprop
import support

# A hard model whose two keys, 1/3 and 1/3 + 10^-19, round to one double: exact arithmetic
# attends to the first 1, double to position 1 (the leftmost of what it sees as a tie). The
# property semantics/double-matches-exact fails on it wherever x_1 = 0 and a 1 follows.
_BASE = Fraction(1, 3)
_EPS = Fraction(1, 10**19)
NEAR_TIE = {
    "format": "attnprop-model", "version": 1, "name": "near-tie",
    "description": "keys 1/3 and 1/3 + 10^-19: one double, two rationals",
    "source": "attnprop tests (python: module_check)",
    "attention": "hard", "alphabet": ["0", "1"], "eos": "$", "d": 2,
    "token_embedding": {"0": [str(_BASE), "0"], "1": [str(_BASE + _EPS), "1"],
                        "$": [str(_BASE - 1), "0"]},
    "positional": {"kind": "formula", "dim": 2, "coordinates": [0, 0]},
    "input": "add",
    "layers": [{
        "heads": [{"score": {"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[1, 0]]},
                   "value": {"kind": "linear", "V": [[0, 1]]}}],
        "update": {"kind": "affine", "W": [[1, 0, 0], [0, 0, 1]]},
    }],
    "readout": {"kind": "threshold", "w": [0, 1], "t": "1/2"},
}

PROPERTY = "semantics/double-matches-exact"


def without_provenance(doc):
    doc = dict(doc)
    doc.pop("provenance", None)
    return doc


class Check(unittest.TestCase):
    def test_the_model_really_is_a_near_tie(self):
        self.assertNotEqual(_BASE, _BASE + _EPS)
        self.assertEqual(float(_BASE), float(_BASE + _EPS))

    def test_a_passing_property_on_a_bundled_model_matches_the_cli_report(self):
        with tempfile.TemporaryDirectory() as d:
            r = attnprop.check("hard-first", PROPERTY, tests=8, max_n=8, seed=3, search=0,
                               out=os.path.join(d, "py"))
            self.assertIsInstance(r, attnprop.CheckReport)
            self.assertEqual(r.verdict, "passed", r.text)
            self.assertEqual(r["summary"]["failed"], 0)
            self.assertEqual(r.counterexamples, [])
            [p] = r["properties"]
            self.assertEqual(p["suite"] + "/" + p["name"], PROPERTY)
            self.assertGreater(p["passed"], 0)
            with open(os.path.join(d, "py", "report.json")) as f:
                self.assertEqual(without_provenance(json.load(f)), without_provenance(r))
            code, out, err = support.run_attnprop(
                "check", "--model", "hard-first", "--property", PROPERTY, "--tests", "8",
                "--max-n", "8", "--seed", "3", "--search", "0", "--out", os.path.join(d, "cli"),
                "--json")
            self.assertEqual(code, 0, err)
            cli = without_provenance(json.loads(out))
            # The CLI names the model as given on its command line; the module as it was loaded.
            cli["model"].pop("file", None)
            mine = without_provenance(r)
            mine["model"].pop("file", None)
            self.assertEqual(mine, cli)

    def test_failing_control_yields_a_counterexample_whose_replay_reproduces_it(self):
        seen = []
        r = attnprop.check(NEAR_TIE, PROPERTY, tests=20, max_n=8, seed=1, search=0,
                           progress=seen.append)
        self.assertEqual(r.verdict, "failed", r.text)
        self.assertEqual(r["summary"]["failed"], 1)
        self.assertEqual([s["property"] for s in seen], [PROPERTY])
        self.assertEqual(seen[0]["status"], "failed")
        [cx] = r.counterexamples
        self.assertEqual(cx.property, PROPERTY)
        self.assertTrue(os.path.isfile(os.path.join(cx.folder, "case.json")), cx.folder)
        # The witness: an input where x_1 = 0 and a 1 follows (exact attends to the 1).
        [x] = cx.inputs
        self.assertTrue(x[0] == "0" and "1" in x, x)
        again = cx.replay()
        self.assertEqual(again["verdict"], "failed", again.text)
        self.assertEqual(again["recorded_verdict"], "failed")
        self.assertTrue(again["reproduced"])
        # The same folder through the command line: exit 1, the failure reproduced.
        code, out, err = support.run_attnprop("replay", cx.folder, "--json")
        self.assertEqual(code, 1, err)
        self.assertEqual(json.loads(out)["verdict"], "failed")
        # The report folder holds exactly this counterexample: replay takes the folder too.
        self.assertEqual(attnprop.replay(r.folder)["property"], PROPERTY)

    def test_an_edited_counterexample_is_refused_unless_allowed(self):
        with tempfile.TemporaryDirectory() as d:
            r = attnprop.check(NEAR_TIE, PROPERTY, tests=20, max_n=8, seed=1, search=0, out=d)
            [cx] = r.counterexamples
            # The fingerprint covers the model file's bytes: one more byte is an edit.
            with open(os.path.join(cx.folder, "model.json"), "a") as f:
                f.write("\n")
            with self.assertRaises(attnprop.Error) as e:
                attnprop.replay(cx.folder)
            self.assertIn("--allow-edited", str(e.exception))
            self.assertEqual(attnprop.replay(cx.folder, allow_edited=True)["fingerprint"], "edited")

    def test_refusals_are_the_cli_messages(self):
        with self.assertRaises(attnprop.Error) as e:
            attnprop.check("hard-first", "no-such-suite/nothing", tests=1)
        code, msg = 2, "unknown property 'no-such-suite/nothing' (see attnprop check --list)"
        self.assertEqual(str(e.exception), msg)
        with tempfile.TemporaryDirectory() as d:
            c, _, err = support.run_attnprop("check", "--model", "hard-first", "--property",
                                             "no-such-suite/nothing", "--out", d)
        self.assertEqual(c, code)
        self.assertIn(msg, err)
        with tempfile.TemporaryDirectory() as d, self.assertRaises(attnprop.Error) as e:
            attnprop.replay(d)
        self.assertIn("is not a counterexample folder", str(e.exception))
        # Never over another command's report (negative control: a check report is replaced).
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "report.json"), "w") as f:
                json.dump({"format": "attnprop-influence-report"}, f)
            with self.assertRaises(attnprop.Error) as e:
                attnprop.check("hard-first", PROPERTY, tests=2, max_n=4, search=0, out=d)
            self.assertIn("holds no attnprop check report", str(e.exception))
            with open(os.path.join(d, "report.json")) as f:
                self.assertEqual(json.load(f)["format"], "attnprop-influence-report")
        with tempfile.TemporaryDirectory() as d:
            for _ in range(2):
                r = attnprop.check("hard-first", PROPERTY, tests=2, max_n=4, search=0, out=d)
                self.assertEqual(r.verdict, "passed", r.text)

    def test_properties_lists_the_registry(self):
        ps = attnprop.properties()
        self.assertIn(PROPERTY, ps)
        self.assertTrue(any(k.startswith("controls/") for k in ps))


class Figures(unittest.TestCase):
    def test_titles_go_to_report_md_unless_asked(self):
        m = attnprop.load("hard-parity-attempt")
        with tempfile.TemporaryDirectory() as d:
            plain, text = os.path.join(d, "plain"), os.path.join(d, "text")
            m.restrict([8, 16], samples=8, out=plain)
            m.restrict([8, 16], samples=8, out=text, figure_text=True)
            with open(os.path.join(plain, "restrict.svg")) as f:
                self.assertNotIn("restrictions keeping", f.read())
            with open(os.path.join(plain, "report.md")) as f:
                self.assertIn("Figure `restrict`: hard-parity-attempt: restrictions keeping", f.read())
            with open(os.path.join(text, "restrict.svg")) as f:
                self.assertIn("restrictions keeping", f.read())

    def test_plot_overlays_simulate_folders_and_refuses_two_commands(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            attnprop.load("hard-first-one-position").simulate("100", [8, 16], out=a)
            attnprop.load("hard-contains-one").simulate("100", [8, 16], out=b)
            files = attnprop.plot([a, b], os.path.join(d, "p"))
            svg = os.path.join(d, "p", "beta.svg")
            self.assertIn(svg, files)
            with open(svg) as f:
                text = f.read()
            for name in ("hard-first-one-position", "hard-contains-one"):
                self.assertIn(">%s" % name, text)  # a legend entry
            r = os.path.join(d, "r")
            attnprop.load("hard-parity-attempt").restrict([8], samples=8, out=r)
            with self.assertRaises(attnprop.Error) as e:
                attnprop.plot([a, r], os.path.join(d, "mixed"))
            self.assertIn("plot overlays the reports of one command", str(e.exception))


if __name__ == "__main__":
    unittest.main()
