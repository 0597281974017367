"""Symbolic formulas for what a module computes from positions and the length.

A formula is an immutable tree over exact rationals, pi, the length `n` and position variables
(the index along a sequence axis of a traced tensor, 0-based as torch counts). The importer builds
them while it follows a module's forward (`torch.arange(n) / n` is `p/n`), simplifies what it can
decide exactly (`cos(pi*p)` with an integer p is `(-1)^p`), evaluates them to confirm them against
the module's own values, and finally writes them in attnprop's formula syntax in i and n
(docs/model-format.md, "Positional embedding"), with p replaced by the 0-based position of the
attnprop position i.

Masks need two more things: a value -inf (`NEG_INF`, only ever tested, never written) and a
selection `where(c, a, b)` that does not multiply -inf by 0.
"""
import math
from fractions import Fraction

__all__ = ["F", "num", "var", "PI", "NEG_INF", "add", "sub", "mul", "div", "neg", "power",
           "func", "cmp", "where", "table", "subst", "evaluate", "render", "is_integer",
           "variables", "ZERO", "ONE", "N"]


class F:
    """A formula node. kind is one of num, var, pi, ninf, add, mul, div, pow, fn, cmp, where,
    table; args are child formulas (or, for num, var, fn, cmp and table, the extra data)."""

    __slots__ = ("kind", "args", "value", "name", "_key")

    def __init__(self, kind, args=(), value=None, name=None):
        self.kind = kind
        self.args = tuple(args)
        self.value = value      # num: Fraction; table: (table id, column)
        self.name = name        # var: its name; fn: the function; cmp: the relation
        self._key = None

    def key(self):
        """A hashable structural key (formulas with equal keys are the same formula)."""
        if self._key is None:
            self._key = (self.kind, self.value if self.kind != "table" else self.value[:2],
                         self.name, tuple(a.key() for a in self.args))
        return self._key

    def __eq__(self, other):
        return isinstance(other, F) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        try:
            return "F(%s)" % render(self)
        except ValueError:
            return "F(%s)" % self.kind

    def is_num(self, q=None):
        return self.kind == "num" and (q is None or self.value == q)


def num(q):
    return F("num", value=Fraction(q))


ZERO = num(0)
ONE = num(1)
PI = F("pi")
NEG_INF = F("ninf")


def var(name):
    return F("var", name=name)


N = var("n")


def _flatten(kind, items):
    out = []
    for it in items:
        if it.kind == kind:
            out.extend(it.args)
        else:
            out.append(it)
    return out


def add(*items):
    terms = _flatten("add", items)
    if any(t.kind == "ninf" for t in terms):
        return NEG_INF
    const = sum((t.value for t in terms if t.kind == "num"), Fraction(0))
    rest = [t for t in terms if t.kind != "num"]
    if const != 0 or not rest:
        rest.append(num(const))
    return rest[0] if len(rest) == 1 else F("add", rest)


def mul(*items):
    factors = _flatten("mul", items)
    const = Fraction(1)
    rest = []
    for f in factors:
        if f.kind == "num":
            const *= f.value
        else:
            rest.append(f)
    if any(f.kind == "ninf" for f in rest):
        raise ValueError("a product with -inf")
    if const == 0:
        return ZERO
    if not rest:
        return num(const)
    if const != 1:
        rest.insert(0, num(const))
    return rest[0] if len(rest) == 1 else F("mul", rest)


def neg(a):
    return mul(num(-1), a)


def sub(a, b):
    return add(a, neg(b))


def div(a, b):
    if b.kind == "num":
        if b.value == 0:
            return F("div", (a, b))  # undefined; kept so that evaluation reports it
        return mul(a, num(1 / b.value))
    if a.is_num(0):
        return ZERO
    return F("div", (a, b))


def power(a, b):
    if b.kind == "num":
        if b.value == 1:
            return a
        if b.value == 0:
            return ONE
        if a.kind == "num" and b.value.denominator == 1 and (a.value != 0 or b.value > 0):
            return num(a.value ** int(b.value))
    return F("pow", (a, b))


_FUNCS = ("sin", "cos", "exp", "log", "sqrt", "abs", "floor")


def _pi_multiple(a):
    """k when a is pi * k with a formula k (a product with the factor pi), else None."""
    if a.kind == "pi":
        return ONE
    if a.kind == "mul" and sum(1 for f in a.args if f.kind == "pi") == 1:
        return mul(*[f for f in a.args if f.kind != "pi"])
    return None


def func(name, a):
    """name(a) for one of attnprop's functions, folded where the value is exact."""
    if name not in _FUNCS:
        raise ValueError("unknown function %s" % name)
    if a.kind == "num":
        v = a.value
        if name == "abs":
            return num(abs(v))
        if name == "floor":
            return num(math.floor(v))
        if v == 0 and name in ("sin", "sqrt"):
            return ZERO
        if v == 0 and name in ("cos", "exp"):
            return ONE
        if v == 1 and name == "log":
            return ZERO
        if name == "sqrt" and v > 0:
            p, q = _exact_sqrt(v.numerator), _exact_sqrt(v.denominator)
            if p is not None and q is not None:
                return num(Fraction(p, q))
    if name in ("cos", "sin"):
        k = _pi_multiple(a)
        if k is not None and is_integer(k):
            return power(num(-1), k) if name == "cos" else ZERO
    if name == "floor" and is_integer(a):
        return a
    if name == "abs" and a.kind == "pow" and a.args[0].is_num(-1) and is_integer(a.args[1]):
        return ONE
    return F("fn", (a,), name=name)


def _exact_sqrt(m):
    if m < 0:
        return None
    r = math.isqrt(m)
    return r if r * r == m else None


_RELATIONS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
              "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def cmp(rel, a, b):
    """The Iverson bracket [a rel b]: 1 when it holds, 0 when not."""
    if rel not in _RELATIONS:
        raise ValueError("unknown relation %s" % rel)
    if a.kind == "num" and b.kind == "num":
        return ONE if _RELATIONS[rel](a.value, b.value) else ZERO
    if b.kind == "num" and a.kind == "add" and any(t.kind == "num" for t in a.args):
        # [x + c rel b] is [x rel b - c]
        c = sum((t.value for t in a.args if t.kind == "num"), Fraction(0))
        return cmp(rel, add(*[t for t in a.args if t.kind != "num"]), num(b.value - c))
    if a == b and a.kind != "ninf":
        return ONE if rel in ("==", "<=", ">=") else ZERO
    return F("cmp", (a, b), name=rel)


def where(c, a, b):
    """a where c is nonzero, else b."""
    if c.kind == "num":
        return a if c.value != 0 else b
    if a == b:
        return a
    return F("where", (c, a, b))


def table(tid, column, *rows):
    """Entry [rows..., column] of the constant table `tid` (a positional table: one row index;
    a mask buffer sliced by n on two axes: two)."""
    return F("table", rows, value=(tid, column, None))


def is_integer(f):
    """True when f has an integer value wherever it is defined (decided from its form)."""
    k = f.kind
    if k == "num":
        return f.value.denominator == 1
    if k == "var" or k == "cmp":
        return True
    if k in ("add", "mul"):
        return all(is_integer(a) for a in f.args)
    if k == "pow":
        a, b = f.args
        return is_integer(a) and b.kind == "num" and b.value.denominator == 1 and b.value >= 0 \
            or (a.is_num(-1) and is_integer(b))
    if k == "fn":
        return f.name == "floor" or (f.name == "abs" and is_integer(f.args[0]))
    if k == "where":
        return is_integer(f.args[1]) and is_integer(f.args[2])
    return False


def variables(f, out=None):
    """The set of variable names f uses (positions and n)."""
    out = set() if out is None else out
    if f.kind == "var":
        out.add(f.name)
    for a in f.args:
        variables(a, out)
    return out


def uses_table(f):
    return f.kind == "table" or any(uses_table(a) for a in f.args)


def has_neg_inf(f):
    return f.kind == "ninf" or any(has_neg_inf(a) for a in f.args)


def subst(f, mapping):
    """f with each variable in `mapping` (name -> formula) replaced, re-simplified."""
    k = f.kind
    if k == "var":
        return mapping.get(f.name, f)
    if k in ("num", "pi", "ninf"):
        return f
    args = [subst(a, mapping) for a in f.args]
    if k == "add":
        return add(*args)
    if k == "mul":
        return mul(*args)
    if k == "div":
        return div(*args)
    if k == "pow":
        return power(*args)
    if k == "fn":
        return func(f.name, args[0])
    if k == "cmp":
        return cmp(f.name, *args)
    if k == "where":
        return where(*args)
    if k == "table":
        return F("table", args, value=f.value)
    raise ValueError(k)


class Undefined(ArithmeticError):
    """A formula has no value at a point (division by zero, log of a non-positive number...)."""


def evaluate(f, env, tables=None, exact=False):
    """The value of f with variables from `env` (name -> int), in float64 (exact=False) or as
    an exact Fraction (exact=True: f must be rational; ValueError otherwise). Undefined raises
    Undefined. -inf evaluates to float('-inf')."""
    k = f.kind
    if k == "num":
        return f.value if exact else float(f.value)
    if k == "var":
        v = env[f.name]
        return Fraction(v) if exact else float(v)
    if k == "pi":
        if exact:
            raise ValueError("pi is not rational")
        return math.pi
    if k == "ninf":
        if exact:
            raise ValueError("-inf")
        return float("-inf")
    if k == "where":
        c = evaluate(f.args[0], env, tables, exact)
        return evaluate(f.args[1] if c != 0 else f.args[2], env, tables, exact)
    if k == "table":
        tid, col, _ = f.value
        t = tables[tid]
        index = []
        for axis, a in enumerate(f.args):
            row = evaluate(a, env, tables, True)
            if row.denominator != 1 or not 0 <= row < t.shape[axis]:
                raise Undefined("row %s of a table with %d rows" % (row, t.shape[axis]))
            index.append(int(row))
        v = t[tuple(index) + (col,)]
        return Fraction(v) if exact else float(v)
    args = [evaluate(a, env, tables, exact) for a in f.args]
    if k == "add":
        return sum(args[1:], args[0])
    if k == "mul":
        r = args[0]
        for a in args[1:]:
            r = r * a
        return r
    if k == "div":
        if args[1] == 0:
            raise Undefined("division by zero")
        return args[0] / args[1]
    if k == "pow":
        a, b = args
        if exact:
            if b.denominator != 1:
                raise ValueError("a non-integer power is not rational")
            if a == 0 and b < 0:
                raise Undefined("0 to a negative power")
            return a ** int(b)
        if a == 0 and b < 0:
            raise Undefined("0 to a negative power")
        if a < 0 and b != int(b):
            raise Undefined("a non-integer power of a negative number")
        return a ** (int(b) if b == int(b) else b)
    if k == "cmp":
        return type(args[0])(1 if _RELATIONS[f.name](args[0], args[1]) else 0) if exact else \
            (1.0 if _RELATIONS[f.name](args[0], args[1]) else 0.0)
    if k == "fn":
        a = args[0]
        name = f.name
        if name == "abs":
            return abs(a)
        if name == "floor":
            return Fraction(math.floor(a)) if exact else float(math.floor(a))
        if exact:
            raise ValueError("%s is not rational" % name)
        if name == "log" and a <= 0:
            raise Undefined("log of a non-positive number")
        if name == "sqrt" and a < 0:
            raise Undefined("square root of a negative number")
        return getattr(math, name)(a)
    raise ValueError(k)


def is_rational(f):
    k = f.kind
    if k in ("pi", "ninf"):
        return False
    if k == "fn" and f.name not in ("abs", "floor"):
        return False
    if k == "pow" and not (f.args[1].kind == "num" and f.args[1].value.denominator == 1):
        return False
    return all(is_rational(a) for a in f.args)


# --- attnprop syntax ---------------------------------------------------------------------------

_PREC = {"add": 1, "mul": 2, "div": 2, "neg": 3, "pow": 4}


def _number_text(q):
    from .exact import exact_decimal
    d = exact_decimal(abs(q), 80)
    body = d if d is not None else "%d/%d" % (abs(q.numerator), q.denominator)
    return body, q < 0, d is None


def render(f):
    """f in attnprop's formula syntax (variables must be i and n by now)."""
    text, _ = _render(f)
    return text


def _wrap(part, prec, need):
    text, p = part
    return "(%s)" % text if p < need else text


def _render(f):
    """(text, precedence of its top operator; 9 for atoms)."""
    k = f.kind
    if k == "num":
        body, negative, is_fraction = _number_text(f.value)
        if negative:
            return "-" + (("(%s)" % body) if is_fraction else body), 3
        return body, 2 if is_fraction else 9
    if k == "var":
        if f.name not in ("i", "n"):
            raise ValueError("variable %s is not i or n" % f.name)
        return f.name, 9
    if k == "pi":
        return "pi", 9
    if k == "ninf":
        raise ValueError("-inf has no formula")
    if k == "table":
        raise ValueError("a table entry has no formula")
    if k == "add":
        parts = []
        for t, a in enumerate(f.args):
            sign, body = _split_sign(a)
            if t == 0:
                parts.append("-" + _wrap(_render(body), 9, 2) if sign else _wrap(_render(a), 9, 2))
            else:
                parts.append((" - " if sign else " + ") + _wrap(_render(body), 9, 2))
        return "".join(parts), 1
    if k == "mul":
        sign, body = _split_sign(f)
        if sign:
            return "-" + _wrap(_render(body), 9, 2), 3
        return "*".join(_wrap(_render(a), 9, 2) for a in f.args), 2
    if k == "div":
        return "%s/%s" % (_wrap(_render(f.args[0]), 9, 2), _wrap(_render(f.args[1]), 9, 3)), 2
    if k == "pow":
        base = _render(f.args[0])
        base_text = base[0] if base[1] == 9 else "(%s)" % base[0]
        return "%s^%s" % (base_text, _wrap(_render(f.args[1]), 9, 9)), 4
    if k == "fn":
        return "%s(%s)" % (f.name, _render(f.args[0])[0]), 9
    if k == "cmp":
        return "[%s%s%s]" % (_render(f.args[0])[0], f.name, _render(f.args[1])[0]), 9
    if k == "where":
        c, a, b = f.args
        if has_neg_inf(a) or has_neg_inf(b):
            raise ValueError("-inf has no formula")
        return _render(add(mul(c, a), mul(sub(ONE, c), b)))
    raise ValueError(k)


def _split_sign(f):
    """(True, -f) when f reads as a negation (a negative number or leading factor), else
    (False, f)."""
    if f.kind == "num" and f.value < 0:
        return True, num(-f.value)
    if f.kind == "mul" and f.args[0].kind == "num" and f.args[0].value < 0:
        return True, mul(num(-f.args[0].value), *f.args[1:])
    return False, f
