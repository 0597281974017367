#!/usr/bin/python3
"""StableMax, sparsemax, sigmoid, 1.5-entmax, softpick and linear attention against an
independent numpy float64 implementation (docs/theory.md, "The models" and §2.6).

For random StableMax, sparsemax, sigmoid, 1.5-entmax, softpick, linear-normalised and linear-sum
models (fixed seeds, one layer causally masked or not; sigmoid with random biases, constant or
-log(n) + c; sigmoid, softpick and linear with a head of constant scores; linear-normalised with
elu1 features, linear-sum with elu1 or relu) and the bundled witnesses sparsemax-first,
stablemax-first, sigmoid-const, sigmoid-logn, entmax15-first, softpick-any, linear-sum-count and
linear-elu1-first, on random inputs:
- `attnprop eval --scalar double` agrees with numpy's float64 forward pass to 1e-12 (relative
  to max(1, |y|));
- StableMax and sparsemax: `attnprop eval --scalar exact` (the exact rational p/q) lies within
  the enclosure of `--scalar ball --precision 256` widened by 1e-30 (the exact and certified
  values agree), and so do linear models whose layers all have relu features; 1.5-entmax (an
  irrational threshold), softpick and elu1 features (exp): `--scalar mpfr
  --precision 256` lies within that enclosure widened by 1e-30; sigmoid (no exact value: it needs exp): the midpoints
  of that enclosure agree with numpy to 1e-12.
1.5-entmax's numpy threshold is the sorted-cumulative-moments algorithm of Peters, Niculae and
Martins (2019), not attnprop's support rule. `--self-test` is the negative control: numpy's
sparsemax replaced by softmax, StableMax's g by x + 1 everywhere, sigmoid's weights normalised
(softmax), 1.5-entmax by sparsemax, and softpick shifted by the row's maximum (softmax's
stabilisation, which softpick does not allow), and linear attention's features taken of the
score q . k instead of the query and key vectors, must each make the double comparison fail.

Usage: normalisers_numpy.py ATTNPROP MODELS_DIR WORK_DIR [--self-test]
Exit 0 when every comparison passes, 1 with every failure listed (model, seed, input).
"""

import json
import math
import os
import re
import random
import subprocess
import sys
from fractions import Fraction

import numpy as np

sys.set_int_max_str_digits(0)  # exact values print as p/q with thousands of digits


def stablemax(z):
    g = np.where(z >= 0, z + 1.0, 1.0 / (1.0 - np.minimum(z, 0.0)))
    return g / g.sum()


def sparsemax(z):
    s = np.sort(z)[::-1]
    cum = np.cumsum(s)
    k = np.arange(1, len(z) + 1)
    support = 1.0 + k * s > cum
    kz = k[support][-1]
    tau = (cum[kz - 1] - 1.0) / kz
    return np.maximum(z - tau, 0.0)


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def entmax15(z):
    u = z / 2.0
    s = np.sort(u)[::-1]
    k = np.arange(1, len(z) + 1)
    mean = np.cumsum(s) / k
    mean_sq = np.cumsum(s * s) / k
    delta = (1.0 - k * (mean_sq - mean ** 2)) / k
    tau = mean - np.sqrt(np.maximum(delta, 0.0))
    support = int((tau <= s).sum())
    return np.maximum(u - tau[support - 1], 0.0) ** 2


def sigmoid(z):
    with np.errstate(over="ignore"):  # e^(-z) = inf for a very negative z: weight 0, the limit
        return 1.0 / (1.0 + np.exp(-z))


SOFTPICK_EPS = 1e-8


def softpick(z):
    """relu(e^z - 1) / (sum |e^z - 1| + eps), as defined (no shift by the maximum)."""
    t = np.exp(z) - 1.0
    return np.maximum(t, 0.0) / (np.abs(t).sum() + SOFTPICK_EPS)


def softpick_shifted(z):
    """The negative control: softpick after softmax's shift by the row's maximum."""
    return softpick(z - z.max())


FEATURES = {"elu1": lambda x: np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0))),
            "relu": lambda x: np.maximum(x, 0.0)}


def linear_normalised(q, k, phi):
    """phi(q) . phi(k_j) / sum_r phi(q) . phi(k_r), phi on the vectors' coordinates (unscaled)."""
    kern = phi(k) @ phi(q)
    assert kern.sum() > 0, "a normalised linear row of sum 0"
    return kern / kern.sum()


def linear_sum(q, k, phi):
    return phi(k) @ phi(q)


def linear_of_score(q, k, phi):
    """The negative control: the feature map applied to the score q . k."""
    kern = phi(k @ q)
    return kern / kern.sum()


LINEAR = ("linear-normalised", "linear-sum")

WEIGHTS = {"stablemax": stablemax, "sparsemax": sparsemax, "sigmoid": sigmoid, "entmax15": entmax15,
           "softpick": softpick, "linear-normalised": linear_normalised, "linear-sum": linear_sum}


def bias_at(layer, n):
    """A layer's sigmoid_bias at n: a number, or a formula of the forms the tests write."""
    b = layer.get("sigmoid_bias", 0)
    if not isinstance(b, str):
        return float(b)
    text = re.sub(r"\bn\b", str(n), b)
    return float(eval(text, {"__builtins__": {}}, {"log": math.log}))


def num(v):
    return float(Fraction(v)) if isinstance(v, str) else float(v)


def mat(a):
    return np.array([[num(v) for v in row] for row in a], dtype=np.float64)


def forward(model, symbols, weights):
    """y_n^(L) in float64 for the subset of the format these models use."""
    n = len(symbols) + 1
    toks = list(symbols) + [model["eos"]]
    d = model["d"]
    coords = model["positional"]["coordinates"]
    y = []
    for i, t in enumerate(toks, start=1):
        v = np.array([num(c) for c in model["token_embedding"][t]], dtype=np.float64)
        p = np.array([float(Fraction(str(c).replace("i", str(i)).replace("n", str(n))))
                      if isinstance(c, str) else float(c) for c in coords], dtype=np.float64)
        y.append(v + p)
    y = np.array(y)
    for layer in model["layers"]:
        causal = layer.get("mask") == "causal"
        bias = bias_at(layer, n)  # 0 but for sigmoid
        outs = []
        for head in layer["heads"]:
            Q, K, V = mat(head["score"]["Q"]), mat(head["score"]["K"]), mat(head["value"]["V"])
            scale = head["score"].get("scale", "default")
            scale = 1.0 / np.sqrt(Q.shape[0]) if scale == "default" else num(scale)
            q, k, v = y @ Q.T, y @ K.T, y @ V.T
            b = np.zeros((n, V.shape[0]))
            for i in range(n):
                end = i + 1 if causal else n
                if model["attention"] in LINEAR:  # no scale: phi(q) . phi(k) of the vectors
                    b[i] = weights(q[i], k[:end], FEATURES[layer.get("feature_map", "elu1")]) @ v[:end]
                    continue
                s = scale * (k[:end] @ q[i]) + bias
                b[i] = weights(s) @ v[:end]
            outs.append(b)
        W = mat(layer["update"]["W"])
        y = np.concatenate([y] + outs, axis=1) @ W.T
    assert y.shape[1] == d
    return y[-1]


def random_model(rng, kind):
    def r():
        return f"{rng.randint(-3, 3)}/{rng.randint(1, 4)}"

    def m(rows, cols):
        return [[r() for _ in range(cols)] for _ in range(rows)]

    layers = []
    for k in range(2):
        heads = [{"score": {"kind": "dot", "Q": m(2, 2), "K": m(2, 2), "scale": "1/2"},
                  "value": {"kind": "linear", "V": m(2, 2)}} for _ in range(2)]
        layer = {"heads": heads, "update": {"kind": "affine", "W": m(2, 6)}}
        if kind in LINEAR:
            for h in heads:
                del h["score"]["scale"]  # linear attention is not scaled
            # relu rows of linear-normalised may sum to 0 (undefined): elu1 there.
            layer["feature_map"] = "elu1" if kind == "linear-normalised" else rng.choice(["elu1", "relu"])
        if k == 0 and rng.random() < 0.5:
            layer["mask"] = "causal"
        if kind == "sigmoid":
            b = rng.choice([None, 0, "1/2", "-log(n)", "1 - log(n)"])
            if b is not None:
                layer["sigmoid_bias"] = b
        if kind in ("sigmoid", "softpick") + LINEAR:
            if k == 0 and rng.random() < 0.5:
                heads[0]["score"]["Q"] = [[0, 0], [0, 0]]  # constant scores: no mean shortcut
        layers.append(layer)
    return {"format": "attnprop-model", "version": 1, "name": f"random-{kind}", "attention": kind,
            "alphabet": ["0", "1"], "eos": "$", "d": 2,
            "token_embedding": {"0": [r(), r()], "1": [r(), r()], "$": [r(), r()]},
            "positional": {"kind": "formula", "dim": 2, "coordinates": ["1/i", "0"]},
            "input": "add", "layers": layers,
            "readout": {"kind": "threshold", "w": [1, 0], "t": 0}}


def eval_json(attnprop, path, inp, *args):
    out = subprocess.run([attnprop, "eval", "--model", path, "--input=" + inp, "--json", *args],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"eval {path} {inp} {args}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def cases(models_dir, work):
    """(label, path, model, inputs) for the random and the bundled models."""
    out = []
    for kind in ("stablemax", "sparsemax", "sigmoid", "entmax15", "softpick") + LINEAR:
        for seed in range(1, 9):
            rng = random.Random(seed)
            model = random_model(rng, kind)
            path = os.path.join(work, f"{kind}-{seed}.json")
            with open(path, "w") as f:
                json.dump(model, f)
            inputs = ["".join(rng.choice("01") for _ in range(rng.randint(1, 20))) for _ in range(2)]
            out.append((f"random {kind} model, seed {seed}", path, model, inputs))
        for name in {"sigmoid": ("sigmoid-const", "sigmoid-logn"),
                     "softpick": ("softpick-any",), "linear-normalised": ("linear-elu1-first",),
                     "linear-sum": ("linear-sum-count",)}.get(kind, (f"{kind}-first",)):
            path = os.path.join(models_dir, f"{name}.json")
            with open(path) as f:
                model = json.load(f)
            rng = random.Random(99)
            inputs = ["1" + "0" * 30, "0" * 63, "".join(rng.choice("01") for _ in range(200))]
            out.append((f"bundled {name}", path, model, inputs))
    return out


def run(attnprop, models_dir, work, weights, exact_too=True):
    failures = []
    for label, path, model, inputs in cases(models_dir, work):
        w = weights[model["attention"]]
        for inp in inputs:
            where = f"{label}, input '{inp}'"
            ref = forward(model, inp, w)
            dbl = [float(v) for v in eval_json(attnprop, path, inp, "--scalar", "double")["y"]]
            for c, (a, b) in enumerate(zip(dbl, ref)):
                if not abs(a - b) <= 1e-12 * max(1.0, abs(b)):
                    failures.append(f"{where}: y[{c}] double {a!r} against numpy {b!r}")
            if not exact_too:
                continue
            ball = eval_json(attnprop, path, inp, "--scalar", "ball", "--precision", "256",
                             "--digits", "45")
            if model["attention"] == "sigmoid":  # no exact value: exp
                for c, (a, b) in enumerate(zip(ball["y"], ref)):
                    if not abs(float(Fraction(a)) - b) <= 1e-12 * max(1.0, abs(b)):
                        failures.append(f"{where}: y[{c}] ball {a} against numpy {b!r}")
                continue
            exact = model["attention"] not in ("entmax15", "softpick")  # a square root, exp
            if model["attention"] in LINEAR:  # elu1 needs exp
                exact = all(l.get("feature_map", "elu1") == "relu" for l in model["layers"])
            ex = eval_json(attnprop, path, inp, *(["--scalar", "exact"] if exact else
                                                   ["--scalar", "mpfr", "--precision", "256",
                                                    "--digits", "60"]))
            name = "exact" if exact else "mpfr"
            for c, e in enumerate(ex["y"]):
                mid, rad = Fraction(ball["y"][c]), Fraction(ball["y_radius"][c])
                if abs(Fraction(e) - mid) > rad + Fraction(1, 10**30):
                    failures.append(f"{where}: y[{c}] {name} {e} outside ball {mid} +/- {rad}")
    return failures


def main():
    args = sys.argv[1:]
    self_test = "--self-test" in args
    args = [a for a in args if a != "--self-test"]
    if len(args) != 3:
        sys.exit(__doc__)
    attnprop, models_dir, work = args
    os.makedirs(work, exist_ok=True)
    if self_test:
        status = 0
        for broken, name in (({**WEIGHTS, "sparsemax": softmax}, "sparsemax as softmax"),
                             ({**WEIGHTS, "stablemax": lambda z: (z + 1) / (z + 1).sum()},
                              "StableMax's g as x + 1"),
                             ({**WEIGHTS, "sigmoid": softmax}, "sigmoid normalised (softmax)"),
                             ({**WEIGHTS, "entmax15": sparsemax}, "1.5-entmax as sparsemax"),
                             ({**WEIGHTS, "softpick": softpick_shifted},
                              "softpick shifted by the row's maximum"),
                             ({**WEIGHTS, "linear-normalised": linear_of_score,
                               "linear-sum": linear_of_score},
                              "linear attention's features of the score q . k")):
            f = run(attnprop, models_dir, work, broken, exact_too=False)
            if not f:
                print(f"self-test: the comparison passes with {name}")
                status = 1
            else:
                print(f"self-test: {name} fails as it must ({len(f)} failures)")
        sys.exit(status)
    failures = run(attnprop, models_dir, work, WEIGHTS)
    for f in failures:
        print("FAILED " + f)
    print(f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
