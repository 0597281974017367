"""The command line: python3 -m attnprop_torch import / export / compare SCRIPT.py, and its
errors.

One test runs `python3 -m attnprop_torch` as a user would; the others call its main() in this
process (the same code after argument parsing), which saves an import of torch per case."""
import contextlib
import io
import json
import os
import subprocess
import sys
import textwrap
import unittest

from attnprop_torch.__main__ import main

import support

MODULE_SCRIPT = textwrap.dedent('''
    import math, torch, torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(5)
            self.emb = nn.Embedding(3, 4)
            self.layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0)
            self.out = nn.Linear(4, 1)

        def forward(self, w):
            pos = torch.arange(len(w)).float() / len(w)
            x = self.emb(w) + torch.stack([pos, torch.cos(pos * math.pi), pos, pos], dim=1)
            return self.out(self.layer(x.unsqueeze(1))[-1, 0])

    def build():
        return dict(module=Net(), alphabet=["0", "1"], eos="$", readout="logit", name="cli-net")
''')

SCRIPT = textwrap.dedent('''
    import torch, torch.nn as nn

    def build():
        torch.manual_seed(13)
        layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True)
        return dict(encoder=nn.TransformerEncoder(layer, 1), token_embedding=nn.Embedding(3, 4),
                    alphabet=["0", "1"], eos="$", positional="sinusoidal",
                    readout=nn.Linear(4, 1), name="cli-model")
''')


def run_module(*args):
    """(exit code, stdout, stderr) of `python3 -m attnprop_torch ARGS` in a new process."""
    env = dict(os.environ)
    env["ATTNPROP"] = support.attnprop_bin()
    p = subprocess.run([sys.executable, "-m", "attnprop_torch"] + list(args), capture_output=True,
                       text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def run(*args):
    """(exit code, stdout, stderr) of main(ARGS) in this process."""
    os.environ["ATTNPROP"] = support.attnprop_bin()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors
            code = e.code
    return code, out.getvalue(), err.getvalue()


class CommandLine(unittest.TestCase):
    def test_export_then_attnprop_reads_it(self):
        with support.TempDir() as tmp:
            script = os.path.join(tmp, "m.py")
            with open(script, "w") as f:
                f.write(SCRIPT)
            out = os.path.join(tmp, "m.json")
            code, stdout, stderr = run_module("export", script, "--out", out)
            self.assertEqual(code, 0, stderr)
            self.assertIn("wrote %s (d = 4, 1 layer, 2 heads, threshold readout)" % out, stdout)
            # attnprop's threshold decision is torch's sign of the output (accept iff > 0).
            import runpy
            from attnprop_torch.compare import Original
            from attnprop_torch.export import encoder_model
            kw = runpy.run_path(script)["build"]()
            model, _ = encoder_model(kw.pop("encoder"), kw.pop("token_embedding"), **kw)
            torch_model = Original(model, ["0", "1"], "last", "threshold")
            decisions = set()
            for text in ["", "0", "1", "0110", "1111", "10010"]:
                code, stdout, stderr = support.run_attnprop("eval", "--model", out, "--input=" + text)
                self.assertEqual(code, 0, stderr)
                expected = "accept" if torch_model.run64(text)[0] > 0 else "reject"
                self.assertRegex(stdout, r"readout +%s" % expected, "input %r" % text)
                decisions.add(expected)
            self.assertEqual(decisions, {"accept", "reject"}, "the inputs should show both decisions")
            code, stdout, stderr = support.run_attnprop("bound", "--model", out)
            self.assertEqual(code, 0, stderr)
            self.assertIn("Lemma 5 applies", stdout)

    def test_import_a_module(self):
        with support.TempDir() as tmp:
            script = os.path.join(tmp, "net.py")
            with open(script, "w") as f:
                f.write(MODULE_SCRIPT)
            out = os.path.join(tmp, "net.json")
            code, stdout, stderr = run_module("import", script, "--out", out)
            self.assertEqual(code, 0, stderr)
            self.assertIn("wrote %s (d = 4, 1 layer, 2 heads, softmax readout)" % out, stdout)
            doc = support.load_json(out)
            self.assertEqual(doc["positional"]["coordinates"][:2],
                             ["(i - 1)/n", "cos((i - 1)/n*pi)"])
            code, stdout, stderr = run("compare", script, "--n", "3,9,30", "--samples", "2",
                                       "--precision", "128", "--tolerance", "1e-12")
            self.assertEqual(code, 0, stdout + stderr)
            self.assertIn("readout: the logit z, P(1) = sigmoid(z)", stdout)

    def test_compare(self):
        with support.TempDir() as tmp:
            script = os.path.join(tmp, "m.py")
            with open(script, "w") as f:
                f.write(SCRIPT)
            code, stdout, stderr = run("compare", script, "--inputs", "", "0110", "--n", "12",
                                       "--samples", "2", "--precision", "128", "--tolerance", "1e-12")
            self.assertEqual(code, 0, stdout + stderr)
            self.assertIn("largest relative difference of the readout, torch float64 vs attnprop", stdout)
            self.assertIn("float32 vs the exact value, largest per n: n = 1:", stdout)
            self.assertEqual(stdout.count('"'), 8, stdout)  # four input rows, quoted
            # --json, and the negative control: a tolerance below float64's own rounding fails
            # (exit 1) with the report still printed.
            code, stdout, stderr = run("compare", script, "--inputs", "1", "--json", "--precision",
                                       "128", "--tolerance", "1e-300")
            self.assertEqual(code, 1, stdout + stderr)
            self.assertIn("exceeds --tolerance", stderr)
            rep = json.loads(stdout)
            self.assertEqual(rep["native_dtype"], "float32")
            self.assertLess(rep["max_rel_diff_float64"], 1e-12)
            self.assertGreater(rep["max_rel_diff_float64"], 1e-300)
            self.assertEqual(rep["rows"][0]["n"], 2)

    def test_errors(self):
        with support.TempDir() as tmp:
            bad = os.path.join(tmp, "bad.py")
            with open(bad, "w") as f:
                f.write("x = 1\n")
            code, _, stderr = run("export", bad, "--out", os.path.join(tmp, "o.json"))
            self.assertEqual(code, 2)
            self.assertIn("defines no build() function", stderr)
            with open(bad, "w") as f:
                f.write("def build():\n    return dict(encoder=None, bogus=1)\n")
            code, _, stderr = run("export", bad, "--out", os.path.join(tmp, "o.json"))
            self.assertEqual(code, 2)
            self.assertIn("build() returned unknown argument(s) 'bogus'", stderr)
            with open(bad, "w") as f:
                f.write(SCRIPT.replace('positional="sinusoidal"', 'positional="learned"'))
            code, _, stderr = run("export", bad, "--out", "-")
            self.assertEqual(code, 2)
            self.assertIn("attnprop_torch: error: positional: 'learned' is not supported", stderr)
            code, _, stderr = run("import", bad, "--out", "-")
            self.assertEqual(code, 2)
            code, _, stderr = run("export", os.path.join(tmp, "missing.py"), "--out", "-")
            self.assertEqual(code, 2)
            self.assertIn("missing.py: no such file", stderr)
            code, _, stderr = run("compare", bad.replace("bad", "missing"), "--inputs", "0")
            self.assertEqual(code, 2)
            # a refused module: exit 2, every refusal named
            with open(bad, "w") as f:
                f.write(MODULE_SCRIPT.replace("torch.cos(pos * math.pi)", "torch.exp(x0)")
                        .replace("x = self.emb(w)", "x0 = self.emb(w)[:, 0]; x = self.emb(w)"))
            code, _, stderr = run("import", bad, "--out", "-")
            self.assertEqual(code, 2, stderr)
            self.assertIn("attnprop_torch: error: cannot import Net: the module (Net), bad.py:", stderr)
            self.assertIn("exp: exp() of a value computed from the input is not supported", stderr)
            code, _, stderr = run("import", os.path.join(tmp, "m.onnx"), "--out", "-")
            self.assertEqual(code, 2)
            self.assertIn("m.onnx: an ONNX file needs --alphabet and --eos", stderr)


if __name__ == "__main__":
    unittest.main()
