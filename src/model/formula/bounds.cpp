#include "model/formula/bounds.hpp"

#include <gmp.h>

#include <algorithm>
#include <vector>

namespace attnprop::model::formula {

using numeric::rational;

namespace {

// Domain: integers 1 <= i <= n, n >= 1. For every node the analysis computes
//
//   up           k with |f| <= C n^k wherever f is defined (C a constant); "bounded" is up <= 0
//   low          m with |f| >= c n^m (c > 0) wherever f is defined and nonzero
//   unbounded    |f| is unbounded on every cofinite part of the domain where the subterms
//                are defined (valid as stated once `total` holds for f)
//   nonvanishing f has only finitely many zeros in the domain
//   affine       f = a i + b n + c exactly, with rational a, b, c
//   total        f is defined at all but finitely many points of the domain: its subterms
//                are, divisors are nonvanishing, log and non-integer powers take affine
//                arguments that are eventually positive (or exp(...)), sqrt takes eventually
//                nonnegative affine arguments (or abs/exp), negative integer powers take
//                nonvanishing bases, c^b with c < 0 needs an integer-valued b
//
// Rules (each one sound on its own; anything not covered stays unknown):
//   * A subtree free of i and n is a constant: bounded. Folded rational constants c also have
//     low 0 and are nonvanishing when c != 0.
//   * i, n, and +, -, unary -, products by constants and quotients by nonzero constants of them
//     give affine forms f = a i + b n + c. f is unbounded unless a = b = 0 (take i = n or i = 1
//     with n large); up = 1. Because the coefficients are rational, a nonzero value of f is at
//     least 1/D in magnitude (D the common denominator), so low = 0; low = 1 when a i + b n
//     cannot vanish on the cone 0 < i/n <= 1 (b and a + b nonzero with equal signs).
//     sup f = +inf iff b > 0 or a + b > 0; inf f = -inf iff b < 0 or a + b < 0.
//   * pi, [a relop b]: bounded (up 0; low 0, since a nonzero bracket is 1). sin, cos: bounded.
//   * a + b, a - b: up = max; unbounded when one side is unbounded and the other bounded.
//   * a * b: a product with a zero constant is 0; up and low add; unbounded when one side is
//     unbounded and the other has low >= 0 and finitely many zeros (a nonzero constant, n, i).
//   * a / b: up = up(a) - low(b), low = low(a) - up(b) (so i/n, (i-1)/n, (n-i)/n, c/i, 1/n,
//     1/(i+c) are bounded); unbounded when a is unbounded and b bounded, or, for affine
//     a = p_i i + p_n n + p_c and b = q_i i + q_n n + q_c (b not identically zero), along
//     i fixed, n -> inf when q_n = 0 and p_n != 0 (n/i), or along i = n - k, n -> inf when
//     q_i + q_n = 0 and p_i + p_n != 0 (i/(n-i+1)).
//   * a ^ b with constant base c: |c| = 1 or c = 0 bounded ((-1)^i); otherwise bounded when
//     b is bounded, and for affine b decided by whether b is unbounded above (|c| > 1) or
//     below (|c| < 1).
//   * a ^ k with a constant integer k: k > 0 multiplies up and low by k and keeps unbounded
//     (i^2); k < 0 gives up = k low(a), low = k up(a). A constant non-integer exponent e
//     scales the same way with outward rounding; a^e (e > 0) is unbounded when a is affine and
//     unbounded above.
//   * exp(a): bounded when a is bounded or affine and bounded above; unbounded when a is
//     affine and unbounded above. log(a): unbounded when a is affine and unbounded above;
//     bounded when a is bounded with low >= 0; up = 1 when up and low are known.
//     sqrt(a): halves up and low; unbounded when a is affine and unbounded above.
//   * abs(a): as a. floor(a): up = max(up(a), 0), low = 0, unbounded as a.
//   * Any f with low >= 1 and finitely many zeros is unbounded (n^3/n^2).
//   * The formula is reported unbounded when so proven and total, bounded when up <= 0 (a
//     statement about the points where it is defined), else unknown. So "i/[n==3]" (defined
//     only for n = 3) and "i/sin(i)" (sin(i) is not known to be nonvanishing) are unknown.

struct affine {
    rational a, b, c; // a i + b n + c

    bool is_constant() const { return a == 0 && b == 0; }
    bool sup_infinite() const { return b > 0 || a + b > 0; }
    bool inf_infinite() const { return b < 0 || a + b < 0; }
};

affine operator+(const affine& x, const affine& y) {
    return {x.a + y.a, x.b + y.b, x.c + y.c};
}
affine operator-(const affine& x, const affine& y) {
    return {x.a - y.a, x.b - y.b, x.c - y.c};
}
affine scaled(const affine& x, const rational& k) {
    return {x.a * k, x.b * k, x.c * k};
}

using degree = std::optional<long>;
constexpr long max_degree = 1000000;

degree make_degree(long v) {
    if (v > max_degree || v < -max_degree)
        return std::nullopt;
    return v;
}
degree add_degrees(degree x, degree y) {
    if (!x || !y)
        return std::nullopt;
    return make_degree(*x + *y);
}
degree sub_degrees(degree x, degree y) {
    if (!x || !y)
        return std::nullopt;
    return make_degree(*x - *y);
}
/// ceil(e * x) (round_up) or floor(e * x).
degree scale_degree(degree x, const rational& e, bool round_up) {
    if (!x)
        return std::nullopt;
    if (abs(e) > max_degree)
        return std::nullopt;
    rational v = e * *x;
    rational f = numeric::floor(v);
    if (round_up && f != v)
        f += 1;
    long k = 0;
    if (!small_integer(f, k))
        return std::nullopt;
    return make_degree(k);
}
bool at_most_zero(degree x) {
    return x && *x <= 0;
}
bool at_least_zero(degree x) {
    return x && *x >= 0;
}

struct growth {
    degree up;
    degree low;
    bool unbounded = false;
    bool nonvanishing = false;
    std::optional<affine> aff;
    /// Defined at all but finitely many points of the domain (see defined_almost_everywhere).
    bool total = false;
    /// An integer wherever defined.
    bool integer_valued = false;
    /// Defined at every point of the domain (see defined_everywhere).
    bool everywhere = false;
    /// Never zero on the domain (where defined), resp. > 0, >= 0 there.
    bool nonzero_everywhere = false;
    bool positive_everywhere = false;
    bool nonnegative_everywhere = false;
};

/// f > 0 (strict) or f >= 0 at every point 1 <= i <= n, n >= 1. f is linear in i for fixed n,
/// so its minimum over i is at i = 1 or i = n; along both lines it is linear in n >= 1.
bool positive_on_domain(const affine& f, bool strict) {
    const rational at_1 = f.a + f.b + f.c; // i = n = 1
    return (strict ? at_1 > 0 : at_1 >= 0) && f.b >= 0 && f.a + f.b >= 0;
}

/// f > 0 (strict) or f >= 0 at all but finitely many points 1 <= i <= n.
bool eventually_positive(const affine& f, bool strict) {
    auto ok = [strict](const rational& v) { return strict ? v > 0 : v >= 0; };
    if (f.is_constant())
        return ok(f.c);
    rational ab = f.a + f.b;
    if (f.b < 0 || ab < 0)
        return false;
    if (f.b > 0 && ab > 0)
        return true;
    if (f.b == 0) // f = a i + c with a > 0: smallest at i = 1, for infinitely many n
        return ok(f.a + f.c);
    return ok(f.c); // a + b = 0, b > 0: f = b (n - i) + c, smallest at i = n
}

bool is_integer(const rational& q) {
    return mpz_cmp_ui(mpq_denref(q.backend().data()), 1) == 0;
}

/// Whether f, with growth facts g already computed for it and its children, is defined at all
/// but finitely many points. Unboundedness is only reported for such formulas, so that every
/// witnessing sequence of points (which has infinitely many distinct points) stays inside the
/// domain of definition of every subterm.
bool defined_almost_everywhere(const node& nd, const std::vector<node>& nodes,
                               const std::vector<growth>& info) {
    const growth* a = nd.lhs != no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != no_child ? &info[nd.rhs] : nullptr;
    auto positive = [&](std::uint32_t idx, bool strict) {
        const growth& x = info[idx];
        if (x.aff)
            return eventually_positive(*x.aff, strict);
        return nodes[idx].op == op::exp || (!strict && nodes[idx].op == op::abs);
    };
    switch (nd.op) {
    case op::number:
    case op::var_i:
    case op::var_n:
    case op::pi:
        return true;
    case op::neg:
    case op::abs:
    case op::floor:
    case op::sin:
    case op::cos:
    case op::exp:
        return a->total;
    case op::add:
    case op::sub:
    case op::mul:
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge:
        return a->total && b->total;
    case op::div:
        return a->total && b->total && b->nonvanishing;
    case op::log:
        return a->total && positive(nd.lhs, true);
    case op::sqrt:
        return a->total && positive(nd.lhs, false);
    case op::pow: {
        const node& base = nodes[nd.lhs];
        const node& ex = nodes[nd.rhs];
        if (!a->total || !b->total)
            return false;
        if (ex.value) {
            const rational& e = *ex.value;
            if (is_integer(e))
                return e >= 0 || a->nonvanishing;
            return positive(nd.lhs, e < 0);
        }
        if (base.value) {
            if (*base.value > 0)
                return true;
            return *base.value != 0 && b->integer_valued;
        }
        return false;
    }
    }
    return false;
}

/// Whether f is proven defined at every point 1 <= i <= n, n >= 1 (not only almost everywhere,
/// as `total`): its subterms are, divisors never vanish there, log takes positive and sqrt
/// nonnegative arguments there, 0 is never raised to a negative power and a negative base only
/// to integer powers. A formula with a pole anywhere ("1/(i-2)", "(-1)^(1/2)") is not; a
/// formula the rules cannot prove is not either (the caller may look for a witness).
bool defined_everywhere(const node& nd, const std::vector<node>& nodes,
                        const std::vector<growth>& info) {
    const growth* a = nd.lhs != no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != no_child ? &info[nd.rhs] : nullptr;
    switch (nd.op) {
    case op::number:
    case op::var_i:
    case op::var_n:
    case op::pi:
        return true;
    case op::neg:
    case op::abs:
    case op::floor:
    case op::sin:
    case op::cos:
    case op::exp:
        return a->everywhere;
    case op::add:
    case op::sub:
    case op::mul:
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge:
        return a->everywhere && b->everywhere;
    case op::div:
        return a->everywhere && b->everywhere && b->nonzero_everywhere;
    case op::log:
        return a->everywhere && a->positive_everywhere;
    case op::sqrt:
        return a->everywhere && a->nonnegative_everywhere;
    case op::pow: {
        if (!a->everywhere || !b->everywhere)
            return false;
        const node& base = nodes[nd.lhs];
        const node& ex = nodes[nd.rhs];
        if (ex.value) {
            const rational& e = *ex.value;
            if (is_integer(e))
                return e >= 0 || a->nonzero_everywhere;
            return e > 0 ? a->nonnegative_everywhere : a->positive_everywhere;
        }
        if (base.value) {
            if (*base.value > 0)
                return true;
            if (*base.value == 0)
                return b->nonnegative_everywhere;
            return b->integer_valued;
        }
        // A variable base: positive everywhere takes any real power.
        return a->positive_everywhere;
    }
    }
    return false;
}

/// The sign facts of f on the whole domain, from its affine form, value or operation.
void sign_everywhere(growth& g, const node& nd, const std::vector<growth>& info) {
    const growth* a = nd.lhs != no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != no_child ? &info[nd.rhs] : nullptr;
    // Facts copied from a child by analyse() (g = *a for - and abs) are not this node's.
    g.positive_everywhere = g.nonnegative_everywhere = g.nonzero_everywhere = false;
    if (g.aff) {
        g.positive_everywhere = positive_on_domain(*g.aff, true);
        g.nonnegative_everywhere = positive_on_domain(*g.aff, false);
        g.nonzero_everywhere =
            g.positive_everywhere || positive_on_domain(scaled(*g.aff, -1), true);
        return;
    }
    switch (nd.op) {
    case op::pi:
    case op::exp:
        g.positive_everywhere = true;
        break;
    case op::abs:
        g.nonnegative_everywhere = true;
        g.positive_everywhere = a->nonzero_everywhere;
        break;
    case op::sqrt:
        g.nonnegative_everywhere = true;
        g.positive_everywhere = a->positive_everywhere;
        break;
    case op::neg:
        g.nonzero_everywhere = a->nonzero_everywhere;
        break;
    case op::mul:
        g.positive_everywhere = a->positive_everywhere && b->positive_everywhere;
        g.nonnegative_everywhere = a->nonnegative_everywhere && b->nonnegative_everywhere;
        g.nonzero_everywhere = a->nonzero_everywhere && b->nonzero_everywhere;
        break;
    case op::div:
        g.positive_everywhere = a->positive_everywhere && b->positive_everywhere;
        g.nonnegative_everywhere = a->nonnegative_everywhere && b->positive_everywhere;
        g.nonzero_everywhere = a->nonzero_everywhere;
        break;
    case op::add:
        g.positive_everywhere = (a->positive_everywhere && b->nonnegative_everywhere) ||
                                (a->nonnegative_everywhere && b->positive_everywhere);
        g.nonnegative_everywhere = a->nonnegative_everywhere && b->nonnegative_everywhere;
        break;
    case op::pow:
        g.positive_everywhere = a->positive_everywhere;
        g.nonnegative_everywhere = a->nonnegative_everywhere;
        g.nonzero_everywhere = a->nonzero_everywhere;
        break;
    default:
        break;
    }
    if (g.positive_everywhere) {
        g.nonnegative_everywhere = true;
        g.nonzero_everywhere = true;
    }
}

bool integer_valued(const node& nd, const std::vector<growth>& info) {
    const growth* a = nd.lhs != no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != no_child ? &info[nd.rhs] : nullptr;
    switch (nd.op) {
    case op::number:
        return is_integer(*nd.value);
    case op::var_i:
    case op::var_n:
    case op::floor:
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge:
        return true;
    case op::neg:
    case op::abs:
        return a->integer_valued;
    case op::add:
    case op::sub:
    case op::mul:
        return a->integer_valued && b->integer_valued;
    default:
        return nd.value && is_integer(*nd.value);
    }
}

bool is_nonneg_integer(const rational& q) {
    return q >= 0 && mpz_cmp_ui(mpq_denref(q.backend().data()), 1) == 0;
}

growth from_affine(const affine& f) {
    growth g;
    g.aff = f;
    if (f.is_constant()) {
        g.up = 0;
        if (f.c != 0) {
            g.low = 0;
            g.nonvanishing = true;
        }
        return g;
    }
    g.up = 1;
    g.unbounded = true;
    rational ab = f.a + f.b;
    bool cone_free = f.b != 0 && ab != 0 && ((f.b > 0) == (ab > 0));
    g.low = cone_free ? 1 : 0;
    if (cone_free)
        g.nonvanishing = true;
    else if (f.b == 0) // zeros at i = -c/a for every n >= i
        g.nonvanishing = !(is_nonneg_integer(-f.c / f.a) && -f.c / f.a >= 1);
    else if (ab == 0) // zeros at n - i = c/a
        g.nonvanishing = !is_nonneg_integer(f.c / f.a);
    return g;
}

growth analyse(const node& nd, const std::vector<node>& nodes,
               const std::vector<growth>& info) {
    growth g;
    const growth* a = nd.lhs != no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != no_child ? &info[nd.rhs] : nullptr;
    switch (nd.op) {
    case op::number:
        break; // handled by the constant rule
    case op::var_i:
        g = from_affine({1, 0, 0});
        break;
    case op::var_n:
        g = from_affine({0, 1, 0});
        break;
    case op::pi:
        g.up = 0;
        g.low = 0;
        g.nonvanishing = true;
        break;
    case op::neg:
        g = *a;
        if (g.aff)
            g.aff = scaled(*g.aff, -1);
        break;
    case op::add:
    case op::sub:
        if (a->aff && b->aff) {
            g = from_affine(nd.op == op::add ? *a->aff + *b->aff : *a->aff - *b->aff);
            break;
        }
        if (a->up && b->up)
            g.up = std::max(*a->up, *b->up);
        g.unbounded =
            (a->unbounded && at_most_zero(b->up)) || (b->unbounded && at_most_zero(a->up));
        break;
    case op::mul:
        if ((nodes[nd.lhs].value && *nodes[nd.lhs].value == 0) ||
            (nodes[nd.rhs].value && *nodes[nd.rhs].value == 0)) {
            g.up = 0; // identically zero
            break;
        }
        if (a->aff && b->aff && (a->aff->is_constant() || b->aff->is_constant())) {
            g = a->aff->is_constant() ? from_affine(scaled(*b->aff, a->aff->c))
                                      : from_affine(scaled(*a->aff, b->aff->c));
            break;
        }
        g.up = add_degrees(a->up, b->up);
        g.low = add_degrees(a->low, b->low);
        g.nonvanishing = a->nonvanishing && b->nonvanishing;
        g.unbounded = (a->unbounded && at_least_zero(b->low) && b->nonvanishing) ||
                      (b->unbounded && at_least_zero(a->low) && a->nonvanishing);
        break;
    case op::div: {
        const node& den = nodes[nd.rhs];
        if (den.value && *den.value == 0)
            break; // undefined everywhere
        if (b->aff && b->aff->is_constant() && b->aff->c == 0)
            break; // n - n: undefined everywhere
        if (a->aff && b->aff && b->aff->is_constant()) {
            g = from_affine(scaled(*a->aff, 1 / b->aff->c));
            break;
        }
        g.up = sub_degrees(a->up, b->low);
        g.low = sub_degrees(a->low, b->up);
        g.nonvanishing = a->nonvanishing;
        g.unbounded = a->unbounded && at_most_zero(b->up);
        if (a->aff && b->aff) {
            const affine& p = *a->aff;
            const affine& q = *b->aff;
            bool q_nonzero_somewhere = !(q.a == 0 && q.c == 0);
            if (q_nonzero_somewhere && q.b == 0 && p.b != 0)
                g.unbounded = true;
            if (q_nonzero_somewhere && q.a + q.b == 0 && p.a + p.b != 0)
                g.unbounded = true;
        }
        break;
    }
    case op::pow: {
        const node& base = nodes[nd.lhs];
        const node& ex = nodes[nd.rhs];
        if (base.value) {
            rational m = abs(*base.value);
            if (m == 1 || m == 0) {
                g.up = 0;
                g.low = 0;
                g.nonvanishing = m == 1;
            } else if (at_most_zero(b->up)) {
                g.up = 0;
                g.low = 0;
                g.nonvanishing = true;
            } else if (b->aff) {
                bool big = m > 1 ? b->aff->sup_infinite() : b->aff->inf_infinite();
                bool small = m > 1 ? b->aff->inf_infinite() : b->aff->sup_infinite();
                if (big)
                    g.unbounded = true;
                else
                    g.up = 0;
                if (!small)
                    g.low = 0;
                g.nonvanishing = true;
            }
            break;
        }
        if (!ex.value)
            break;
        const rational& e = *ex.value;
        long k = 0;
        if (small_integer(e, k)) {
            if (k == 0) {
                g.up = 0;
                g.low = 0;
                g.nonvanishing = true;
            } else if (k > 0) {
                g.up = scale_degree(a->up, e, true);
                g.low = scale_degree(a->low, e, false);
                g.unbounded = a->unbounded;
                g.nonvanishing = a->nonvanishing;
            } else {
                g.up = scale_degree(a->low, e, true);
                g.low = scale_degree(a->up, e, false);
                g.nonvanishing = true;
            }
        } else if (e > 0) {
            g.up = scale_degree(a->up, e, true);
            g.low = scale_degree(a->low, e, false);
            g.unbounded = a->aff && a->aff->sup_infinite();
            g.nonvanishing = a->nonvanishing;
        } else {
            g.up = scale_degree(a->low, e, true);
            g.low = scale_degree(a->up, e, false);
            g.nonvanishing = true;
        }
        break;
    }
    case op::sin:
    case op::cos:
        g.up = 0;
        break;
    case op::exp:
        g.nonvanishing = true;
        if (at_most_zero(a->up)) {
            g.up = 0;
            g.low = 0;
        } else if (a->aff) {
            if (a->aff->sup_infinite())
                g.unbounded = true;
            else
                g.up = 0;
            if (!a->aff->inf_infinite())
                g.low = 0;
        }
        break;
    case op::log:
        if (a->aff && !a->aff->is_constant() && a->aff->sup_infinite())
            g.unbounded = true;
        if (at_most_zero(a->up) && at_least_zero(a->low))
            g.up = 0;
        else if (a->up && a->low)
            g.up = 1;
        break;
    case op::sqrt:
        g.up = scale_degree(a->up, rational(1, 2), true);
        g.low = scale_degree(a->low, rational(1, 2), false);
        g.nonvanishing = a->nonvanishing;
        g.unbounded = a->aff && a->aff->sup_infinite();
        break;
    case op::abs:
        g = *a;
        g.aff.reset();
        break;
    case op::floor:
        if (a->up)
            g.up = std::max(*a->up, 0L);
        g.low = 0;
        g.unbounded = a->unbounded;
        break;
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge:
        g.up = 0;
        g.low = 0;
        break;
    }
    // |f| >= c n wherever f is nonzero, and f vanishes at finitely many points only.
    if (g.low && *g.low >= 1 && g.nonvanishing)
        g.unbounded = true;
    if (nd.constant) {
        g.up = 0;
        g.unbounded = false;
        if (nd.value)
            g = from_affine({0, 0, *nd.value});
    }
    g.total = defined_almost_everywhere(nd, nodes, info);
    g.integer_valued = integer_valued(nd, info);
    g.everywhere = defined_everywhere(nd, nodes, info);
    sign_everywhere(g, nd, info);
    return g;
}

} // namespace

bound_facts analyse_bounds(const tree& t) {
    const std::vector<growth> info =
        fold<growth>(t, [&t](std::uint32_t, const node& nd, const std::vector<growth>& done) {
            return analyse(nd, t.nodes, done);
        });
    const growth& g = info[t.root];
    bound_facts out;
    out.defined_everywhere = g.everywhere;
    if (g.unbounded && g.total)
        out.bounded = false;
    else if (at_most_zero(g.up))
        out.bounded = true;
    return out;
}

} // namespace attnprop::model::formula
