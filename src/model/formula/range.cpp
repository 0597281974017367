#include "model/formula/range.hpp"

#include <mpfr.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attnprop::model::formula {

namespace {

using numeric::mpfr_real;
using numeric::rational;

/// Raised when the analysis meets something it does not model (log of a non-positive range, a
/// division by an exact zero); the answer is then "no finite range".
struct give_up : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A closed interval with extended-real endpoints, rounded outward.
struct xint {
    mpfr_real lo, hi;
};

/// A value as a·i + b·n + r; `exact` when it is a known constant (then a = b = 0).
struct form {
    rational a = 0, b = 0;
    xint r;
    std::optional<rational> exact;
    bool pure() const { return a == 0 && b == 0; }
};

/// Interval arithmetic over MPFR at one precision.
class interval_ops {
public:
    explicit interval_ops(long prec) : prec_(prec) {}

    xint make() const { return {mpfr_real(prec_), mpfr_real(prec_)}; }
    xint whole() const {
        xint r = make();
        mpfr_set_inf(r.lo.raw(), -1);
        mpfr_set_inf(r.hi.raw(), 1);
        return r;
    }
    xint point(const rational& q) const {
        xint r = make();
        mpfr_set_q(r.lo.raw(), q.backend().data(), MPFR_RNDD);
        mpfr_set_q(r.hi.raw(), q.backend().data(), MPFR_RNDU);
        return r;
    }
    xint range(long lo_num, long hi_num, long den) const {
        xint r = make();
        mpfr_set_si(r.lo.raw(), lo_num, MPFR_RNDD);
        mpfr_div_si(r.lo.raw(), r.lo.raw(), den, MPFR_RNDD);
        mpfr_set_si(r.hi.raw(), hi_num, MPFR_RNDU);
        mpfr_div_si(r.hi.raw(), r.hi.raw(), den, MPFR_RNDU);
        return r;
    }
    /// [lo, +inf] or [-inf, hi] or [0, 0] for the sign of s times [1, inf) (from_one) or
    /// [0, inf).
    xint ray(const rational& s, bool from_one) const {
        xint r = make();
        if (s == 0) return r; // [0, 0]
        if (s > 0) {
            if (from_one) mpfr_set_q(r.lo.raw(), s.backend().data(), MPFR_RNDD);
            mpfr_set_inf(r.hi.raw(), 1);
        } else {
            mpfr_set_inf(r.lo.raw(), -1);
            if (from_one) mpfr_set_q(r.hi.raw(), s.backend().data(), MPFR_RNDU);
        }
        return r;
    }
    static bool finite(const xint& x) {
        return mpfr_number_p(x.lo.raw()) && mpfr_number_p(x.hi.raw());
    }
    static bool contains_zero(const xint& x) {
        return mpfr_sgn(x.lo.raw()) <= 0 && mpfr_sgn(x.hi.raw()) >= 0;
    }

    xint add(const xint& x, const xint& y) const {
        xint r = make();
        mpfr_add(r.lo.raw(), x.lo.raw(), y.lo.raw(), MPFR_RNDD);
        mpfr_add(r.hi.raw(), x.hi.raw(), y.hi.raw(), MPFR_RNDU);
        fix(r);
        return r;
    }
    xint neg(const xint& x) const {
        xint r = make();
        mpfr_neg(r.lo.raw(), x.hi.raw(), MPFR_RNDD);
        mpfr_neg(r.hi.raw(), x.lo.raw(), MPFR_RNDU);
        return r;
    }
    xint sub(const xint& x, const xint& y) const { return add(x, neg(y)); }
    xint mul(const xint& x, const xint& y) const {
        xint r = make();
        mpfr_real t(prec_);
        bool first = true;
        for (mpfr_srcptr p : {x.lo.raw(), x.hi.raw()}) {
            for (mpfr_srcptr q : {y.lo.raw(), y.hi.raw()}) {
                product(t.raw(), p, q, MPFR_RNDD);
                if (first || mpfr_less_p(t.raw(), r.lo.raw())) mpfr_set(r.lo.raw(), t.raw(), MPFR_RNDD);
                product(t.raw(), p, q, MPFR_RNDU);
                if (first || mpfr_greater_p(t.raw(), r.hi.raw()))
                    mpfr_set(r.hi.raw(), t.raw(), MPFR_RNDU);
                first = false;
            }
        }
        fix(r);
        return r;
    }
    /// 1/x; the whole line when x contains 0 (the quotient is unbounded near those points).
    xint recip(const xint& x) const {
        if (contains_zero(x)) return whole();
        xint r = make();
        mpfr_ui_div(r.lo.raw(), 1, x.hi.raw(), MPFR_RNDD);
        mpfr_ui_div(r.hi.raw(), 1, x.lo.raw(), MPFR_RNDU);
        return r;
    }
    xint div(const xint& x, const xint& y) const { return mul(x, recip(y)); }
    xint intersect(const xint& x, const xint& y) const {
        xint r = make();
        mpfr_max(r.lo.raw(), x.lo.raw(), y.lo.raw(), MPFR_RNDD);
        mpfr_min(r.hi.raw(), x.hi.raw(), y.hi.raw(), MPFR_RNDU);
        if (mpfr_greater_p(r.lo.raw(), r.hi.raw())) return x; // empty: keep one enclosure
        return r;
    }
    xint hull(const xint& x, const xint& y) const {
        xint r = make();
        mpfr_min(r.lo.raw(), x.lo.raw(), y.lo.raw(), MPFR_RNDD);
        mpfr_max(r.hi.raw(), x.hi.raw(), y.hi.raw(), MPFR_RNDU);
        return r;
    }
    xint abs(const xint& x) const {
        if (mpfr_sgn(x.lo.raw()) >= 0) return x;
        if (mpfr_sgn(x.hi.raw()) <= 0) return neg(x);
        xint r = make();
        mpfr_set_zero(r.lo.raw(), 1);
        mpfr_neg(r.hi.raw(), x.lo.raw(), MPFR_RNDU);
        mpfr_max(r.hi.raw(), r.hi.raw(), x.hi.raw(), MPFR_RNDU);
        return r;
    }
    xint floor(const xint& x) const {
        xint r = make();
        mpfr_floor(r.lo.raw(), x.lo.raw());
        mpfr_floor(r.hi.raw(), x.hi.raw());
        return r;
    }
    xint exp(const xint& x) const {
        xint r = make();
        mpfr_exp(r.lo.raw(), x.lo.raw(), MPFR_RNDD);
        mpfr_exp(r.hi.raw(), x.hi.raw(), MPFR_RNDU);
        return r;
    }
    /// log on the part of x where it is defined (x > 0).
    xint log(const xint& x) const {
        if (mpfr_sgn(x.hi.raw()) <= 0) throw give_up("log of a non-positive range");
        xint r = make();
        if (mpfr_sgn(x.lo.raw()) <= 0) mpfr_set_inf(r.lo.raw(), -1);
        else mpfr_log(r.lo.raw(), x.lo.raw(), MPFR_RNDD);
        mpfr_log(r.hi.raw(), x.hi.raw(), MPFR_RNDU);
        return r;
    }
    xint sqrt(const xint& x) const {
        if (mpfr_sgn(x.hi.raw()) < 0) throw give_up("square root of a negative range");
        xint r = make();
        if (mpfr_sgn(x.lo.raw()) <= 0) mpfr_set_zero(r.lo.raw(), 1);
        else mpfr_sqrt(r.lo.raw(), x.lo.raw(), MPFR_RNDD);
        mpfr_sqrt(r.hi.raw(), x.hi.raw(), MPFR_RNDU);
        return r;
    }
    xint trig(const xint& x, bool is_sin) const {
        xint unit = range(-1, 1, 1);
        if (!finite(x)) return unit;
        mpfr_real w(prec_);
        mpfr_sub(w.raw(), x.hi.raw(), x.lo.raw(), MPFR_RNDU);
        if (mpfr_cmp_si(w.raw(), 7) > 0) return unit;
        arb_t b;
        arb_init(b);
        arb_set_interval_mpfr(b, x.lo.raw(), x.hi.raw(), prec_);
        if (is_sin) arb_sin(b, b, prec_);
        else arb_cos(b, b, prec_);
        xint r = make();
        arb_get_interval_mpfr(r.lo.raw(), r.hi.raw(), b);
        arb_clear(b);
        return intersect(r, unit);
    }
    /// x^k for an integer k.
    xint pow_int(const xint& x, long k) const {
        if (k == 0) return range(1, 1, 1);
        if (k < 0) return recip(pow_int(x, -k));
        xint base = (k % 2 == 0) ? abs(x) : x;
        xint r = make();
        mpfr_pow_si(r.lo.raw(), base.lo.raw(), k, MPFR_RNDD);
        mpfr_pow_si(r.hi.raw(), base.hi.raw(), k, MPFR_RNDU);
        return r;
    }
    /// |x|^e as exp(e log|x|), then [-M, M] unless x >= 0 (a negative base only has values
    /// ±|x|^e, at integer exponents).
    xint pow_real(const xint& x, const xint& e) const {
        xint m = abs(x);
        if (mpfr_zero_p(m.hi.raw())) return range(0, 1, 1); // 0^e: 0, or 1 at e = 0
        xint p = exp(mul(e, log(m)));
        if (mpfr_sgn(x.lo.raw()) >= 0) return p;
        xint r = make();
        mpfr_neg(r.lo.raw(), p.hi.raw(), MPFR_RNDD);
        mpfr_set(r.hi.raw(), p.hi.raw(), MPFR_RNDU);
        return r;
    }
    long precision() const { return prec_; }

private:
    /// a*b with 0 * inf = 0 (the endpoints bound finite values).
    static void product(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_rnd_t rnd) {
        if ((mpfr_zero_p(a) && mpfr_inf_p(b)) || (mpfr_inf_p(a) && mpfr_zero_p(b))) {
            mpfr_set_zero(r, 1);
            return;
        }
        mpfr_mul(r, a, b, rnd);
    }
    /// NaN endpoints (inf - inf) become infinite.
    static void fix(xint& r) {
        if (mpfr_nan_p(r.lo.raw())) mpfr_set_inf(r.lo.raw(), -1);
        if (mpfr_nan_p(r.hi.raw())) mpfr_set_inf(r.hi.raw(), 1);
    }
    long prec_;
};

/// Exact q^k (k >= 0, or q != 0).
rational exact_pow(const rational& q, long k) {
    rational base = k < 0 ? rational(1) / q : q;
    unsigned long e = static_cast<unsigned long>(k < 0 ? -k : k);
    rational r = 1;
    while (e != 0) {
        if (e & 1UL) r *= base;
        e >>= 1;
        if (e != 0) base *= base;
    }
    return r;
}

/// The forms of a tree's nodes, bottom-up (a visitor for fold()).
class range_visitor {
public:
    explicit range_visitor(const interval_ops& ops) : ops_(ops) {}

    /// The form of a node from the forms of its children.
    form visit(const node& nd, const std::vector<form>& done) const {
        auto x = [&]() -> const form& { return done[nd.lhs]; };
        auto y = [&]() -> const form& { return done[nd.rhs]; };
        switch (nd.op) {
        case op::number:
            return constant(*nd.value);
        case op::var_i:
            return form{1, 0, ops_.point(0), std::nullopt};
        case op::var_n:
            return form{0, 1, ops_.point(0), std::nullopt};
        case op::pi: {
            xint r = ops_.make();
            mpfr_const_pi(r.lo.raw(), MPFR_RNDD);
            mpfr_const_pi(r.hi.raw(), MPFR_RNDU);
            return pure(std::move(r));
        }
        case op::neg:
            return negate(x());
        case op::add:
            return add(x(), y());
        case op::sub:
            return add(x(), negate(y()));
        case op::mul:
            return mul(x(), y());
        case op::div:
            return div(x(), y());
        case op::pow:
            return pow(x(), y());
        case op::sin:
            return pure(ops_.trig(collapse(x()), true));
        case op::cos:
            return pure(ops_.trig(collapse(x()), false));
        case op::exp:
            return pure(ops_.exp(collapse(x())));
        case op::log:
            return pure(ops_.log(collapse(x())));
        case op::sqrt:
            return pure(ops_.sqrt(collapse(x())));
        case op::abs:
            return abs(x());
        case op::floor:
            return floor(x());
        case op::eq:
        case op::ne:
        case op::lt:
        case op::le:
        case op::gt:
        case op::ge:
            return iverson(nd.op, x(), y());
        }
        throw give_up("unknown operation");
    }

    /// The range of a form over 1 <= i <= n.
    xint collapse(const form& f) const {
        if (f.pure()) return f.r;
        xint t = ops_.add(ops_.ray(f.a + f.b, true), ops_.ray(f.b, false));
        return ops_.add(t, f.r);
    }

private:
    form constant(const rational& q) const {
        form f{0, 0, ops_.point(q), q};
        return f;
    }
    form pure(xint r) const { return form{0, 0, std::move(r), std::nullopt}; }

    /// [x rel y]: decided when both sides are exact or their ranges are ordered, else [0, 1].
    form iverson(op rel, const form& x, const form& y) const {
        if (x.exact && y.exact)
            return constant(relation_holds(rel, numeric::compare(*x.exact, *y.exact)) ? 1 : 0);
        xint a = collapse(x), b = collapse(y);
        // Decided when the ranges are ordered.
        const bool lt = mpfr_less_p(a.hi.raw(), b.lo.raw()) != 0;      // a < b everywhere
        const bool gt = mpfr_greater_p(a.lo.raw(), b.hi.raw()) != 0;   // a > b everywhere
        const bool le = mpfr_lessequal_p(a.hi.raw(), b.lo.raw()) != 0; // a <= b everywhere
        const bool ge = mpfr_greaterequal_p(a.lo.raw(), b.hi.raw()) != 0;
        std::optional<bool> v;
        switch (rel) {
        case op::eq: if (lt || gt) v = false; break;
        case op::ne: if (lt || gt) v = true; break;
        case op::le: if (le) v = true; else if (gt) v = false; break;
        case op::lt: if (lt) v = true; else if (ge) v = false; break;
        case op::ge: if (ge) v = true; else if (lt) v = false; break;
        case op::gt: if (gt) v = true; else if (le) v = false; break;
        default: break;
        }
        if (v) return constant(*v ? 1 : 0);
        return pure(ops_.range(0, 1, 1));
    }
    form abs(const form& x) const {
        if (x.exact) return constant(numeric::abs(*x.exact));
        return pure(ops_.abs(collapse(x)));
    }
    form floor(const form& x) const {
        if (x.exact) return constant(numeric::floor(*x.exact));
        form f = x;
        f.r = ops_.add(f.r, ops_.range(-1, 0, 1)); // x - 1 < floor(x) <= x
        return f;
    }

    form add(const form& x, const form& y) const {
        form f{x.a + y.a, x.b + y.b, ops_.add(x.r, y.r), std::nullopt};
        if (x.exact && y.exact) f.exact = *x.exact + *y.exact;
        return f;
    }
    form negate(const form& x) const {
        form f{-x.a, -x.b, ops_.neg(x.r), std::nullopt};
        if (x.exact) f.exact = -*x.exact;
        return f;
    }
    form scale(const form& x, const rational& c) const {
        if (c == 0) return constant(0);
        form f{x.a * c, x.b * c, ops_.mul(x.r, ops_.point(c)), std::nullopt};
        if (x.exact) f.exact = *x.exact * c;
        return f;
    }
    form mul(const form& x, const form& y) const {
        if (x.exact) return scale(y, *x.exact);
        if (y.exact) return scale(x, *y.exact);
        return pure(ops_.mul(collapse(x), collapse(y)));
    }
    form div(const form& x, const form& y) const {
        if (y.exact) {
            if (*y.exact == 0) throw give_up("division by zero");
            return scale(x, rational(1) / *y.exact);
        }
        xint q = ops_.div(collapse(x), collapse(y));
        if (!(x.pure() && y.pure())) q = ops_.intersect(q, tu_quotient(x, y));
        return pure(std::move(q));
    }
    /// (a1 t + b1 + R1 u) / (a2 t + b2 + R2 u) over 0 < u <= t <= 1 on a grid of boxes.
    xint tu_quotient(const form& x, const form& y) const {
        constexpr long grid = 32;
        const xint a1 = ops_.point(x.a), b1 = ops_.point(x.b);
        const xint a2 = ops_.point(y.a), b2 = ops_.point(y.b);
        std::optional<xint> out;
        for (long ti = 0; ti < grid; ++ti) {
            const xint t = ops_.range(ti, ti + 1, grid);
            for (long ui = 0; ui <= ti; ++ui) { // boxes with t_hi < u_lo are empty
                const xint u = ops_.range(ui, ui + 1, grid);
                xint num = ops_.add(ops_.add(ops_.mul(a1, t), b1), ops_.mul(x.r, u));
                xint den = ops_.add(ops_.add(ops_.mul(a2, t), b2), ops_.mul(y.r, u));
                xint q = ops_.div(num, den);
                if (!interval_ops::finite(q)) return ops_.whole();
                out = out ? ops_.hull(*out, q) : q;
            }
        }
        return *out;
    }
    form pow(const form& x, const form& y) const {
        if (y.exact) {
            const rational& q = *y.exact;
            if (boost::multiprecision::denominator(q) == 1 && numeric::abs(q) <= 1000000) {
                const long k = boost::multiprecision::numerator(q).convert_to<long>();
                if (k == 0) return constant(1);
                if (k == 1) return x;
                if (x.exact && (k > 0 || *x.exact != 0) && k >= -4096 && k <= 4096)
                    return constant(exact_pow(*x.exact, k));
                return pure(ops_.pow_int(collapse(x), k));
            }
            return pure(ops_.pow_real(collapse(x), ops_.point(q)));
        }
        if (x.exact) {
            const rational& c = *x.exact;
            if (c == 1) return constant(1);
            if (c == 0) return pure(ops_.range(0, 1, 1));
            if (c == -1) return pure(ops_.range(-1, 1, 1));
        }
        return pure(ops_.pow_real(collapse(x), collapse(y)));
    }

    const interval_ops& ops_;
};

numeric::arb_ball to_point(const mpfr_real& x, long prec) {
    numeric::arb_ball r(prec);
    arf_set_mpfr(arb_midref(r.raw()), x.raw());
    return r;
}

} // namespace

std::optional<value_range> range_over_domain(const tree& t, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    interval_ops ops(prec);
    try {
        const range_visitor v(ops);
        const std::vector<form> forms =
            fold<form>(t, [&v](std::uint32_t, const node& nd, const std::vector<form>& done) {
                return v.visit(nd, done);
            });
        xint r = v.collapse(forms[t.root]);
        if (!interval_ops::finite(r)) return std::nullopt;
        return value_range{to_point(r.lo, prec), to_point(r.hi, prec)};
    } catch (const give_up&) {
        return std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace attnprop::model::formula
