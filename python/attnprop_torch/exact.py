"""Exact numbers for attnprop model files.

A float16, bfloat16, float32 or float64 value is a dyadic rational p / 2^k. It is written as
that exact rational: a JSON integer when it is an integer, else a string holding its exact
decimal expansion when that has at most 40 digits (what attnprop's canonical writer does), else
a string "p/q". Never through a decimal approximation: json.dump of a Python float would write
the shortest decimal that rounds back to the float, which attnprop reads as a different number.
"""
import math
from fractions import Fraction

#: The digit limit of attnprop's canonical writer (numeric::exact_decimal(q, 40)).
MAX_DECIMAL_DIGITS = 40


class ExportError(ValueError):
    """A module, argument or value the exporter refuses, with a message naming it."""


def exact_decimal(q, max_digits=MAX_DECIMAL_DIGITS):
    """The exact decimal text of the rational q, or None when it has no finite decimal
    expansion or needs more than max_digits digits (the digits of q * 10^k, k the number of
    decimals), as in attnprop's numeric::exact_decimal."""
    num, den = q.numerator, q.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return None
    k = max(twos, fives)
    scaled = num * 2 ** (k - twos) * 5 ** (k - fives)
    neg = scaled < 0
    s = str(abs(scaled))
    if len(s) > max_digits:
        return None
    if k > 0:
        if len(s) <= k:
            s = "0" * (k - len(s) + 1) + s
        s = s[:-k] + "." + s[-k:]
    return ("-" if neg else "") + s


def number(q):
    """A JSON value for the exact rational q: an int, an exact decimal string or "p/q"."""
    q = Fraction(q)
    if q.denominator == 1:
        return int(q.numerator)
    d = exact_decimal(q)
    if d is not None:
        return d
    return "%d/%d" % (q.numerator, q.denominator)


def fraction_of_float(x, where):
    """The exact rational value of the float x; ExportError naming `where` when it is NaN or
    infinite."""
    x = float(x)
    if not math.isfinite(x):
        raise ExportError("%s is not finite (%r)" % (where, x))
    return Fraction(x)


def tensor_values(t, where):
    """The entries of a floating-point tensor as nested lists of exact Fractions (any float
    dtype converts to float64 exactly). ExportError for other dtypes and non-finite entries,
    naming `where` and the entry's index."""
    import torch

    if not torch.is_floating_point(t):
        raise ExportError("%s has dtype %s; expected a floating-point tensor" %
                          (where, str(t.dtype).replace("torch.", "")))
    values = t.detach().cpu().to(torch.float64).tolist()

    def convert(v, index):
        if isinstance(v, list):
            return [convert(e, index + [i]) for i, e in enumerate(v)]
        if not math.isfinite(v):
            raise ExportError("%s: entry %s is not finite (%r)" % (where, index, v))
        return Fraction(v)

    return convert(values, [])


def parse_number(v):
    """The exact rational a model-file NUMBER stands for: a JSON number (int, or a float
    holding the value of its literal only when parsed with parse_float=Fraction-like), a
    decimal string or "p/q"."""
    if isinstance(v, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(v, int):
        return Fraction(v)
    if isinstance(v, Fraction):
        return v
    if isinstance(v, str):
        s = v.strip()
        if "/" in s:
            p, q = s.split("/", 1)
            return Fraction(int(p), int(q))
        from decimal import Decimal
        return Fraction(Decimal(s))
    if isinstance(v, float):
        raise ValueError("a float is not exact; parse model files with parse_float=decimal.Decimal")
    from decimal import Decimal
    if isinstance(v, Decimal):
        return Fraction(v)
    raise ValueError("not a number: %r" % (v,))
