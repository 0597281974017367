"""A float64 evaluator of the model documents the importer writes, to confirm an import against
the module itself without the attnprop binary (docs/model-format.md is the specification; this
covers the parts the importer writes: token embeddings, formula, sinusoidal and table positions,
"add",
"concat" and graph input maps, dot-product heads with scales, beta and length_scale, linear
values, affine and graph updates, softmax and threshold readouts).

`attnprop eval` remains the reference: compare.py runs it with rigorous Arb balls.
"""
import math
from fractions import Fraction

import numpy as np

from . import formula as fm
from .exact import parse_number

__all__ = ["parse_formula", "ModelEvaluator"]


# --- attnprop formula text ---------------------------------------------------------------------

class _Parser:
    """Recursive descent over docs/model-format.md's formula grammar (src/model/expr.hpp)."""

    def __init__(self, text):
        self.s = text
        self.k = 0

    def peek(self):
        while self.k < len(self.s) and self.s[self.k].isspace():
            self.k += 1
        return self.s[self.k] if self.k < len(self.s) else ""

    def take(self, c):
        if self.peek() != c:
            raise ValueError("expected %r at %d in %r" % (c, self.k, self.s))
        self.k += 1

    def expr(self):
        f = self.term()
        while self.peek() in ("+", "-"):
            op = self.s[self.k]
            self.k += 1
            g = self.term()
            f = fm.add(f, g) if op == "+" else fm.sub(f, g)
        return f

    def term(self):
        f = self.unary()
        while self.peek() in ("*", "/"):
            op = self.s[self.k]
            self.k += 1
            g = self.unary()
            f = fm.mul(f, g) if op == "*" else fm.div(f, g)
        return f

    def unary(self):
        if self.peek() == "-":
            self.k += 1
            return fm.neg(self.unary())
        return self.power()

    def power(self):
        a = self.atom()
        if self.peek() == "^":
            self.k += 1
            return fm.power(a, self.unary())
        return a

    def atom(self):
        c = self.peek()
        if c == "(":
            self.k += 1
            f = self.expr()
            self.take(")")
            return f
        if c == "[":
            self.k += 1
            a = self.expr()
            rel = None
            for r in ("==", "!=", "<=", ">=", "<", ">"):
                if self.s.startswith(r, self.k):
                    rel = r
                    break
            if rel is None:
                raise ValueError("expected a relation in %r" % self.s)
            self.k += len(rel)
            b = self.expr()
            self.take("]")
            return fm.cmp(rel, a, b)
        if c.isdigit() or c == ".":
            j = self.k
            while j < len(self.s) and (self.s[j].isdigit() or self.s[j] == "."):
                j += 1
            if j < len(self.s) and self.s[j] in "eE":
                j2 = j + 1
                if j2 < len(self.s) and self.s[j2] in "+-":
                    j2 += 1
                if j2 < len(self.s) and self.s[j2].isdigit():
                    j = j2
                    while j < len(self.s) and self.s[j].isdigit():
                        j += 1
            from decimal import Decimal
            text = self.s[self.k:j]
            self.k = j
            return fm.num(Fraction(Decimal(text)))
        j = self.k
        while j < len(self.s) and self.s[j].isalpha():
            j += 1
        word = self.s[self.k:j]
        self.k = j
        if word in ("i", "n"):
            return fm.var(word)
        if word == "pi":
            return fm.PI
        if word in ("sin", "cos", "exp", "log", "sqrt", "abs", "floor"):
            self.take("(")
            a = self.expr()
            self.take(")")
            return fm.func(word, a)
        raise ValueError("unexpected %r in %r" % (word or c, self.s))


def parse_formula(text):
    p = _Parser(text)
    f = p.expr()
    if p.peek():
        raise ValueError("trailing text in %r" % text)
    return f


# --- the model ---------------------------------------------------------------------------------

def _num(v):
    """The float64 nearest to a NUMBER (float() of a decimal text is correctly rounded)."""
    if isinstance(v, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(v, int):
        return float(v)
    if isinstance(v, str) and "/" not in v:
        return float(v)
    return float(parse_number(v))


def _vec(v):
    return np.array([_num(x) for x in v], dtype=np.float64)


def _mat(m):
    if isinstance(m, list):
        return np.array([[_num(x) for x in row] for row in m], dtype=np.float64)
    if "identity" in m:
        return np.eye(int(m["identity"])) * _num(m.get("scale", 1))
    out = np.zeros((int(m["rows"]), int(m["cols"])))
    for r, c, v in m["entries"]:
        out[int(r), int(c)] = _num(v)
    return out


def _gelu(x):
    return 0.5 * x * np.vectorize(math.erfc)(-x / math.sqrt(2))


class ModelEvaluator:
    """doc (a dict) evaluated in float64 on one input."""

    def __init__(self, doc):
        self.doc = doc
        self._cache = {}
        self.d = int(doc["d"])
        self.tokens = {s: _vec(v) for s, v in doc["token_embedding"].items()}
        pos = doc["positional"]
        self.pos = pos
        if pos["kind"] == "formula":
            dim = int(pos["dim"])
            coords = pos["coordinates"]
            items = coords.items() if isinstance(coords, dict) else enumerate(coords)
            self.coords = [fm.ZERO] * dim
            for j, c in items:
                self.coords[int(j)] = parse_formula(c) if isinstance(c, str) else fm.num(
                    parse_number(c))
        elif pos["kind"] == "table":
            self.table = _mat(pos["rows"])
        self.layers = []
        for layer in doc["layers"]:
            heads = []
            for h in layer["heads"]:
                sc = h["score"]
                Q, K = _mat(sc["Q"]), _mat(sc["K"])
                qb = _vec(sc["q_bias"]) if "q_bias" in sc else np.zeros(Q.shape[0])
                kb = _vec(sc["k_bias"]) if "k_bias" in sc else np.zeros(K.shape[0])
                s = sc.get("scale", "default")
                if s == "default":
                    scale = 1 / math.sqrt(Q.shape[0])
                elif isinstance(s, dict):
                    scale = _num(s["factor"]) / math.sqrt(_num(s["inv_sqrt"]))
                else:
                    scale = _num(s)
                beta = None
                if sc.get("length_scale") == "log":
                    beta = fm.func("log", fm.N)
                elif "beta" in sc:
                    b = sc["beta"]
                    beta = parse_formula(b) if isinstance(b, str) else fm.num(parse_number(b))
                val = h["value"]
                V = _mat(val["V"])
                vb = _vec(val["bias"]) if "bias" in val else np.zeros(V.shape[0])
                heads.append((Q, qb, K, kb, scale, beta, V, vb))
            self.layers.append((heads, layer["update"], layer.get("mask", "none") == "causal"))

    def positions(self, n):
        if self.pos["kind"] == "formula":
            return np.array([[fm.evaluate(f, {"i": i, "n": n}) for f in self.coords]
                             for i in range(1, n + 1)])
        if self.pos["kind"] == "sinusoidal":
            dim = int(self.pos["dim"])
            base = _num(self.pos.get("base", 10000))
            out = np.zeros((n, dim))
            for c in range(dim):
                w = base ** (-(2 * (c // 2)) / dim)
                out[:, c] = (np.sin if c % 2 == 0 else np.cos)(np.arange(n) * w)
            return out
        if self.pos["kind"] == "table":
            if n > self.table.shape[0]:
                raise ValueError("the positional table has %d rows; n = %d" %
                                 (self.table.shape[0], n))
            return self.table[:n]
        raise ValueError("positional kind %s" % self.pos["kind"])

    def run(self, text):
        """y_n^(L) and the readout's logits (softmax) or value w.y - t (threshold) for the
        input string `text` (eos appended)."""
        doc = self.doc
        symbols = list(text) + [doc["eos"]]
        n = len(symbols)
        v = np.array([self.tokens[s] for s in symbols])
        p = self.positions(n)
        inp = doc["input"]
        if inp == "add":
            y = v + p
        elif inp == "concat":
            y = np.concatenate([v, p], axis=1)
        else:
            y = np.array([self.map(inp["map"], {"v": v[i], "p": p[i]}) for i in range(n)])
        for heads, update, causal in self.layers:
            bs = []
            for Q, qb, K, kb, scale, beta, V, vb in heads:
                q = y @ Q.T + qb
                k = y @ K.T + kb
                a = scale * (q @ k.T)
                if beta is not None:
                    a = a * fm.evaluate(beta, {"n": n})
                if causal:  # row i attends to the keys j <= i
                    a = np.where(np.triu(np.ones((n, n), dtype=bool), 1), -np.inf, a)
                a = a - a.max(axis=1, keepdims=True)
                w = np.exp(a)
                w = w / w.sum(axis=1, keepdims=True)
                bs.append(w @ (y @ V.T + vb))
            new = []
            for i in range(n):
                env = {"y": y[i]}
                for h, b in enumerate(bs):
                    env["b%d" % (h + 1)] = b[i]
                env["b"] = np.concatenate([b[i] for b in bs]) if bs else np.zeros(0)
                new.append(self.map(update, env))
            y = np.array(new)
        ro = doc["readout"]
        last = y[-1]
        if ro["kind"] == "softmax":
            W = _mat(ro["W"])
            c = _vec(ro["c"]) if "c" in ro else np.zeros(W.shape[0])
            return last, W @ last + c
        if ro["kind"] == "threshold":
            return last, np.array([_vec(ro["w"]) @ last - _num(ro["t"])])
        raise ValueError("readout kind %s" % ro["kind"])

    def _compiled(self, m):
        """The map with its matrices and vectors parsed once (keyed by the map object)."""
        key = id(m)
        c = self._cache.get(key)
        if c is None:
            if m["kind"] == "affine":
                c = ("affine", _mat(m["W"]), _vec(m["b"]) if "b" in m else 0)
            else:
                nodes = []
                for node in m["nodes"]:
                    p = {}
                    if "W" in node:
                        p["W"] = _mat(node["W"])
                    for k in ("b", "gamma", "beta"):
                        if k in node:
                            p[k] = _vec(node[k])
                    for k in ("factor", "eps"):
                        if k in node:
                            p[k] = _num(node[k])
                    nodes.append((node, p))
                c = ("graph", nodes, m["output"])
            self._cache[key] = (m, c)  # keeps m alive, so that id(m) stays its key
        else:
            c = c[1]
        return c

    def map(self, m, env):
        kind = m["kind"]
        c = self._compiled(m)
        if c[0] == "affine":
            order = [k for k in ("v", "p", "y") if k in env]
            x = np.concatenate([env[k] for k in order] + ([env["b"]] if "b" in env else []))
            return c[1] @ x + c[2]
        if kind != "graph":
            raise ValueError("map kind %s" % kind)
        vals = dict(env)
        for node, p in c[1]:
            ins = node["in"] if isinstance(node["in"], list) else [node["in"]]
            args = [vals[a] for a in ins]
            op = node["op"]
            if op == "linear":
                r = p["W"] @ args[0] + (p["b"] if "b" in p else 0)
            elif op == "add":
                r = sum(args[1:], args[0])
            elif op == "sub":
                r = args[0] - args[1]
            elif op == "mul":
                r = args[0] * args[1]
            elif op == "concat":
                r = np.concatenate(args)
            elif op == "relu":
                r = np.maximum(args[0], 0)
            elif op == "tanh":
                r = np.tanh(args[0])
            elif op == "gelu":
                r = _gelu(args[0])
            elif op == "erf":
                r = np.vectorize(math.erf)(args[0])
            elif op == "step":
                r = (args[0] > 0).astype(np.float64)
            elif op == "floor":
                r = np.floor(args[0])
            elif op == "scale":
                r = p["factor"] * args[0]
            elif op == "slice":
                r = args[0][int(node["from"]):int(node["to"])]
            elif op == "layer_norm":
                xx = args[0]
                mu = xx.mean()
                var = ((xx - mu) ** 2).mean()
                if var + p["eps"] == 0:
                    raise ZeroDivisionError("layer norm at zero variance")
                r = (xx - mu) / math.sqrt(var + p["eps"])
                if "gamma" in p:
                    r = r * p["gamma"]
                if "beta" in p:
                    r = r + p["beta"]
            else:
                raise ValueError("graph op %s" % op)
            vals[node["id"]] = r
        return vals[c[2]]
