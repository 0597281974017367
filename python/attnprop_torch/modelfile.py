"""Reading attnprop model files exactly, for comparisons: every NUMBER becomes a Fraction and
every MATRIX (dense rows, sparse entries or a scaled identity) a dense list of rows, so that two
files describing the same model compare equal whatever forms they use (docs/model-format.md).
"""
import json
from decimal import Decimal
from fractions import Fraction

from .exact import parse_number

_MATRIX_KEYS = {"Q", "K", "V", "W"}
_VECTOR_KEYS = {"q_bias", "k_bias", "bias", "b", "gamma", "beta", "w", "c", "default"}
_SCALAR_KEYS = {"eps", "factor", "t", "base", "inv_sqrt"}


def loads(text):
    """Parses model-file text with every JSON number read exactly (decimal.Decimal)."""
    return json.loads(text, parse_float=Decimal, parse_int=int)


def dense_matrix(m):
    """The dense rows (Fractions) of a MATRIX in any of its three forms."""
    if isinstance(m, list):
        return [[parse_number(v) for v in row] for row in m]
    if "identity" in m:
        n = int(m["identity"])
        s = parse_number(m.get("scale", 1))
        return [[s if r == c else Fraction(0) for c in range(n)] for r in range(n)]
    rows, cols = int(m["rows"]), int(m["cols"])
    out = [[Fraction(0)] * cols for _ in range(rows)]
    for r, c, v in m["entries"]:
        out[int(r)][int(c)] = parse_number(v)
    return out


def normalise(doc):
    """A copy of a parsed model document with exact numbers and dense matrices, the optional
    keys with their defaults removed, and graph arguments as lists."""
    def walk(v, key=None):
        if key in _MATRIX_KEYS:
            return dense_matrix(v)
        if key in _VECTOR_KEYS and isinstance(v, list):
            return [parse_number(x) for x in v]
        if key in _SCALAR_KEYS:
            return parse_number(v)
        if key == "scale" and not isinstance(v, dict):
            return None if v == "default" else parse_number(v)
        if key == "token_embedding":
            return {s: [parse_number(x) for x in vec] for s, vec in v.items()}
        if key == "rows" and isinstance(v, list):
            return [[parse_number(x) for x in row] for row in v]
        if key == "in" and isinstance(v, str):
            return [v]
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                w = walk(x, k)
                if w is None and k == "scale":
                    continue
                out[k] = w
            if out.get("kind") == "formula":
                coords = v["coordinates"]
                dim = int(v["dim"])
                full = [Fraction(0)] * dim
                items = coords.items() if isinstance(coords, dict) else enumerate(coords)
                for i, c in items:
                    full[int(i)] = c if isinstance(c, str) else parse_number(c)
                out["coordinates"] = full
            if out.get("kind") == "sinusoidal" and "base" not in out:
                out["base"] = Fraction(10000)
            for k in ("description", "source"):
                if out.get(k) == "":
                    del out[k]
            return out
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(doc)
