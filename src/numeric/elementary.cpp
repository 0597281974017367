// Certified elementary functions in double (elementary.hpp). Every error bound used here is
// derived in docs/scalars.md, "The certified double kind"; the constants below name the
// section of that derivation they come from. u = 2^-53 is the unit roundoff.
#include "numeric/elementary.hpp"
#include "numeric/scalar.hpp"

#include <arb.h>
#include <arb_hypgeom.h>

#include <cfloat>
#include <cmath>
#include <limits>

namespace attnprop::numeric {

namespace {

using interval_detail::inf;
using interval_detail::next_down;
using interval_detail::next_up;
using namespace elementary_detail;

constexpr double u = 0x1p-53;

/// [v (1 - e), v (1 + e)] rounded outward, for v > 0 a normal double and 0 <= e < 1/2.
interval relative_ball(double v, double e) {
    return {next_down(v * (1.0 - e)), next_up(v * (1.0 + e))};
}

/// [v - e, v + e] rounded outward (e >= 0).
interval absolute_ball(double v, double e) {
    if (e == 0) return interval(v);
    return {next_down(v - e), next_up(v + e)};
}

/// The product of a nonnegative enclosure with itself.
interval square_nonneg(const interval& a) { return a * a; }

// --- expm1 on [-0.7, 0.7]: x q(x) with q(x) = sum_{i=0}^{17} x^i / (i + 1)! -----------------
// Relative error of the result below 4.8 u (docs/scalars.md, "expm1"); we use 8 u.
constexpr int expm1_degree = 17;
constexpr double expm1_rel_error = 8 * u;

double expm1_poly(double x) {
    // c_i = 1/(i+1)!, rounded: (i+1)! is exact in double for i + 1 <= 18.
    static const double c[expm1_degree + 1] = {
        1.0 / 1,
        1.0 / 2,
        1.0 / 6,
        1.0 / 24,
        1.0 / 120,
        1.0 / 720,
        1.0 / 5040,
        1.0 / 40320,
        1.0 / 362880,
        1.0 / 3628800,
        1.0 / 39916800,
        1.0 / 479001600,
        1.0 / 6227020800.0,
        1.0 / 87178291200.0,
        1.0 / 1307674368000.0,
        1.0 / 20922789888000.0,
        1.0 / 355687428096000.0,
        1.0 / 6402373705728000.0,
    };
    double q = c[expm1_degree];
    for (int i = expm1_degree - 1; i >= 0; --i) q = q * x + c[i];
    return x * q;
}

// --- log on m in [sqrt(1/2), sqrt(2)]: 2 s sum_{i=0}^{10} s^(2i) / (2i + 1), s = (m-1)/(m+1) --
// Relative error of L below 4.2 u (docs/scalars.md, "log").
constexpr int log_terms = 11;

double log_mantissa(double m) {
    static const double c[log_terms] = {1.0 / 1,  1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9, 1.0 / 11,
                                        1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21};
    const double s = (m - 1.0) / (m + 1.0);
    const double z = s * s;
    double q = c[log_terms - 1];
    for (int i = log_terms - 2; i >= 0; --i) q = q * z + c[i];
    return 2.0 * (s * q);
}

/// An interval of doubles enclosing the Arb ball b (outward), or the whole line.
interval from_arb(const arb_t b) {
    if (!arb_is_finite(b)) return interval::entire();
    arf_t lo, hi;
    arf_init(lo);
    arf_init(hi);
    arb_get_lbound_arf(lo, b, 64);
    arb_get_ubound_arf(hi, b, 64);
    const double l = arf_get_d(lo, ARF_RND_FLOOR), h = arf_get_d(hi, ARF_RND_CEIL);
    arf_clear(lo);
    arf_clear(hi);
    return interval_detail::normalise(l, h);
}

/// The ball containing [lo, hi] exactly (finite endpoints).
void to_arb(arb_t b, const interval& x) {
    arf_t lo, hi;
    arf_init(lo);
    arf_init(hi);
    arf_set_d(lo, x.lo());
    arf_set_d(hi, x.hi());
    arb_set_interval_arf(b, lo, hi, 128);
    arf_clear(lo);
    arf_clear(hi);
}

template <class F> interval arb_function(const interval& x, F&& f) {
    if (!std::isfinite(x.lo()) || !std::isfinite(x.hi())) return interval(-1.0, 1.0);
    arb_t b;
    arb_init(b);
    to_arb(b, x);
    f(b, b, 64);
    interval r = from_arb(b);
    arb_clear(b);
    // |sin|, |cos| <= 1 whatever the enclosure says.
    return {std::max(r.lo(), -1.0), std::min(r.hi(), 1.0)};
}

/// f at the exact double x in Arb at 64 bits, rounded outward and clamped to the function's
/// range [lo, hi] (a NaN argument gives the whole range).
template <class F> interval arb_point_function(double x, F&& f, double lo, double hi) {
    if (std::isnan(x)) return {lo, hi};
    arb_t b;
    arb_init(b);
    arb_set_d(b, x);
    f(b, b, 64);
    interval r = from_arb(b);
    arb_clear(b);
    if (!std::isfinite(r.lo()) || !std::isfinite(r.hi())) return {lo, hi};
    return {std::max(r.lo(), lo), std::min(r.hi(), hi)};
}

} // namespace

interval exp_enclosure(double x) {
    if (std::isnan(x)) return interval::entire();
    if (x == 0) return interval(1.0);
    if (x >= exp_fast_min && x <= exp_fast_max)
        return relative_ball(exp_fast(x), exp_fast_rel_error);
    if (x > 709.79) return {DBL_MAX, inf}; // ln(DBL_MAX) = 709.7827...
    if (x < -745.2) return {0.0, std::numeric_limits<double>::denorm_min()}; // e^x < 2^-1075
    // 709 < x <= 709.79 or -745.2 <= x < -707: e^x = (e^(x/2))^2, x/2 exact and in range.
    return square_nonneg(relative_ball(exp_fast(x / 2), exp_fast_rel_error));
}

interval expm1_enclosure(double x) {
    if (std::isnan(x)) return interval::entire();
    if (x == 0) return interval(0.0);
    if (std::fabs(x) <= 0.7) {
        const double v = expm1_poly(x);
        const double e = std::fabs(v) * expm1_rel_error;
        // |v| >= 0.49 |x| >= 2^-1075 * 0.49: e may underflow for subnormal x; widen by the
        // smallest subnormal then.
        const double tiny = std::numeric_limits<double>::denorm_min();
        return {next_down(v - e) - tiny, next_up(v + e) + tiny};
    }
    return exp_enclosure(x) - interval(1.0);
}

interval log_enclosure(double x) {
    if (std::isnan(x) || x <= 0) return interval::entire();
    if (x == inf) return {DBL_MAX, inf};
    if (x == 1.0) return interval(0.0);
    int e = 0;
    double m = std::frexp(x, &e); // x = m 2^e, m in [1/2, 1), exact (subnormals too)
    if (m < 0.70710678118654752) {
        m *= 2;
        --e;
    }
    const double L = log_mantissa(m);              // |L| <= 0.3466
    const double ed = static_cast<double>(e);      // |e| <= 1075
    const double hi_part = ed * ln2_hi;            // exact: 11 + 32 bits
    const double lo_part = ed * ln2_lo + L;
    const double res = hi_part + lo_part;
    // |res - ln x| <= 4.2 u |L| + u |e ln2_lo| + u |lo_part| + u |res| + |e| 2^-80; the bound
    // below is more than twice that and absorbs its own rounding.
    const double err = 8 * u * (std::fabs(L) + std::fabs(lo_part) + std::fabs(res)) +
                       std::fabs(ed) * 0x1p-79 + 0x1p-1070;
    return absolute_ball(res, err);
}

interval sqrt_enclosure(double x) {
    if (std::isnan(x) || x < 0) return interval::entire();
    if (x == 0 || x == inf) return interval(x);
    if (x < 0x1p-900) {
        // The residual s^2 - x below would underflow: scale by an even power of two (exact).
        const interval r = sqrt_enclosure(x * 0x1p1000);
        return {r.lo() * 0x1p-500, r.hi() * 0x1p-500};
    }
    const double s = std::sqrt(x); // correctly rounded
    const double r = std::fma(s, s, -x); // s^2 - x, exact
    if (r == 0) return interval(s);
    return r > 0 ? interval(next_down(s), s) : interval(s, next_up(s));
}

interval tanh_enclosure(double x) {
    if (std::isnan(x)) return interval::entire();
    if (x == 0) return interval(0.0);
    const double a = std::fabs(x);
    interval r;
    if (a >= 20) {
        r = {next_down(1.0), 1.0}; // 1 - tanh(20) < 1e-17 < 2^-53
    } else if (a <= 0.35) {
        // tanh a = E / (E + 2), E = expm1(2a) in (0, 1.014]: increasing in E.
        const interval E = expm1_enclosure(2 * a);
        const interval lo = interval(E.lo()) / (interval(E.lo()) + interval(2.0));
        const interval hi = interval(E.hi()) / (interval(E.hi()) + interval(2.0));
        r = {std::max(0.0, lo.lo()), hi.hi()};
    } else {
        // tanh a = (1 - F) / (1 + F), F = e^(-2a) in (0, 0.5): decreasing in F.
        const interval F = exp_enclosure(-2 * a);
        auto g = [](double f) { return (interval(1.0) - interval(f)) / (interval(1.0) + interval(f)); };
        r = {g(F.hi()).lo(), std::min(1.0, g(F.lo()).hi())};
    }
    return x > 0 ? r : -r;
}

interval sin_enclosure(const interval& x) { return arb_function(x, arb_sin); }
interval cos_enclosure(const interval& x) { return arb_function(x, arb_cos); }

interval erf_enclosure(double x) {
    if (x == 0) return interval(0.0);
    if (std::isinf(x)) return interval(x > 0 ? 1.0 : -1.0);
    return arb_point_function(x, arb_hypgeom_erf, -1.0, 1.0);
}

interval erfc_enclosure(double x) {
    if (x == 0) return interval(1.0);
    if (std::isinf(x)) return interval(x > 0 ? 0.0 : 2.0);
    return arb_point_function(x, arb_hypgeom_erfc, 0.0, 2.0);
}

// double's powers (scalar.hpp), as the formula grammar evaluates them.
double int_pow(double x, long k, const context&) {
    if (k < 0 && x == 0.0)
        throw undefined_error("zero raised to a negative power");
    return std::pow(x, static_cast<double>(k));
}

double real_pow(double a, double b, const context&) {
    if (a == 0.0) {
        if (b > 0.0)
            return 0.0;
        throw undefined_error("zero raised to a non-positive power");
    }
    if (a < 0.0)
        throw undefined_error("non-integer power of a negative number");
    return std::pow(a, b);
}

} // namespace attnprop::numeric
