#include "numeric/interval.hpp"

#include <mpfr.h>

#include <algorithm>
#include <functional>

namespace attnprop::numeric {

namespace {

using interval_detail::inf;
using interval_detail::next_down;
using interval_detail::next_up;

// Quotient rounded down / up, using the exact remainder a - q*b.
double div_down(double a, double b) {
    double q = a / b;
    if (!std::isfinite(q)) return std::isnan(q) ? -inf : q;
    if (a == 0) return 0.0;
    double r = std::fma(-q, b, a); // a - q b, exact
    if (std::fabs(q) < 1e-290) return next_down(q);
    bool below = (r > 0) != (b > 0); // true value a/b = q + r/b
    return (r != 0 && below) ? next_down(q) : q;
}
double div_up(double a, double b) {
    double q = a / b;
    if (!std::isfinite(q)) return std::isnan(q) ? inf : q;
    if (a == 0) return 0.0;
    double r = std::fma(-q, b, a);
    if (std::fabs(q) < 1e-290) return next_up(q);
    bool above = (r > 0) == (b > 0);
    return (r != 0 && above) ? next_up(q) : q;
}

} // namespace

interval interval::from_rational(const rational& q, const context&) {
    mpq_srcptr v = q.backend().data();
    // Fast path: numerator and denominator are exact doubles. The quotient is rounded to
    // nearest and its remainder p - x d is exact (fma), so its sign says which side q is on.
    if (mpz_sizeinbase(mpq_numref(v), 2) <= 53 && mpz_sizeinbase(mpq_denref(v), 2) <= 53) {
        const double p = mpz_get_d(mpq_numref(v)), d = mpz_get_d(mpq_denref(v)); // d > 0
        const double x = p / d;
        const double r = std::fma(-x, d, p);
        if (r == 0) return interval(x);
        return r > 0 ? interval(x, next_up(x)) : interval(next_down(x), x);
    }
    mpfr_t x;
    mpfr_init2(x, 53);
    mpfr_set_q(x, v, MPFR_RNDD);
    double lo = mpfr_get_d(x, MPFR_RNDD);
    mpfr_set_q(x, v, MPFR_RNDU);
    double hi = mpfr_get_d(x, MPFR_RNDU);
    mpfr_clear(x);
    return {lo, hi};
}

interval operator/(const interval& a, const interval& b) {
    if (b.lo() <= 0 && b.hi() >= 0) return interval::entire();
    double c[4][2] = {{a.lo(), b.lo()}, {a.lo(), b.hi()}, {a.hi(), b.lo()}, {a.hi(), b.hi()}};
    double lo = inf, hi = -inf;
    for (auto& p : c) {
        lo = std::min(lo, div_down(p[0], p[1]));
        hi = std::max(hi, div_up(p[0], p[1]));
    }
    return interval_detail::normalise(lo, hi);
}

interval& interval::operator/=(const interval& b) { return *this = *this / b; }

interval abs(const interval& x) {
    if (x.lo() >= 0) return x;
    if (x.hi() <= 0) return -x;
    return {0.0, std::max(-x.lo(), x.hi())};
}

interval floor(const interval& x) { return {std::floor(x.lo()), std::floor(x.hi())}; }

std::optional<rational> exact_value(const interval& x) {
    if (!x.is_point() || !std::isfinite(x.lo())) return std::nullopt;
    return rational_from_double(x.lo());
}

bool contains(const interval& x, const rational& q) {
    if (std::isfinite(x.lo()) && q < rational_from_double(x.lo())) return false;
    if (std::isfinite(x.hi()) && q > rational_from_double(x.hi())) return false;
    return true;
}

double to_double(const interval& x) {
    if (x.is_point()) return x.lo();
    return x.lo() / 2 + x.hi() / 2;
}

std::string to_string(const interval& x) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "[%.17g, %.17g]", x.lo(), x.hi());
    return buf;
}

std::size_t repr_hash(const interval& x) {
    std::size_t h = std::hash<double>{}(x.lo());
    return h ^ (std::hash<double>{}(x.hi()) + 0x9e3779b97f4a7c15ULL + (h << 6));
}

// --- dot_rows / dot_all ------------------------------------------------------------------------
//
// Soundness. Write q = q_m + e, k = k_m + f with |e_t| <= r_t (the query's radii), |f_t| <= s_t.
// Then q.k - q_m.k_m = q_m.f + e.k_m + e.f, so |q.k - q_m.k_m| <= |q_m|_inf |s|_1 +
// |r|_inf |k_m|_1 + |r|_inf |s|_1. The double dot product of the midpoints has error at most
// gamma_w sum |q_m,t k_m,t| <= gamma_w |q_m|_inf |k_m|_1 (w terms, no underflow; underflow adds
// at most 2w 2^-1075). Every bound below is a sum of products of nonnegative doubles computed
// with rounding to nearest, so it is at least (1 - u)^(2w + 6) times its exact value (u =
// 2^-53; underflow again costs at most 2^-1075 per operation); multiplying by 1 + 2^-20 and
// adding 2^-1000 covers all of that for w < 2^20. The endpoints mid -/+ rad are finally rounded
// outward with next_down / next_up.

namespace {

constexpr double slack = 1.0 + 0x1p-20;
constexpr double underflow_term = 0x1p-1000;
constexpr double max_finite = std::numeric_limits<double>::max();

/// A midpoint of [lo, hi] and a radius (rounded up) covering it; false if unbounded.
bool mid_rad(const interval& x, double& m, double& r) {
    const double lo = x.lo(), hi = x.hi();
    if (!(lo >= -max_finite && hi <= max_finite)) return false;
    if (lo == hi) {
        m = lo;
        r = 0;
        return true;
    }
    m = lo * 0.5 + hi * 0.5;
    if (m < lo) m = lo; // subnormal halving can round outside
    if (m > hi) m = hi;
    r = next_up(std::max(hi - m, m - lo));
    return r <= max_finite;
}

} // namespace

dot_rows::dot_rows(std::size_t width)
    : width_(width), gamma_(static_cast<double>(width + 1) * 0x1p-52) {}

void dot_rows::reserve(std::size_t rows) {
    mids_.reserve(rows * width_);
    mid_terms_.reserve(rows);
    rad_terms_.reserve(rows);
}

void dot_rows::push_back(const interval* v) {
    double m1 = 0, r1 = 0;
    bool bounded = true;
    for (std::size_t t = 0; t < width_; ++t) {
        double m = 0, r = 0;
        if (!mid_rad(v[t], m, r)) bounded = false;
        mids_.push_back(m);
        m1 += std::fabs(m);
        r1 += r;
    }
    if (!bounded || !(m1 + r1 <= max_finite)) {
        mid_terms_.push_back(inf);
        rad_terms_.push_back(inf);
        return;
    }
    mid_terms_.push_back(gamma_ * m1 + r1);
    rad_terms_.push_back(m1 + r1);
}

void dot_all(const interval* q, const dot_rows& rows, interval* out) {
    const std::size_t w = rows.width(), n = rows.size();
    double qm_stack[64];
    std::vector<double> qm_heap;
    double* qm = qm_stack;
    if (w > 64) {
        qm_heap.resize(w);
        qm = qm_heap.data();
    }
    double qm_inf = 0, qr_inf = 0;
    bool bounded = true;
    for (std::size_t t = 0; t < w; ++t) {
        double r = 0;
        if (!mid_rad(q[t], qm[t], r)) bounded = false;
        qm_inf = std::max(qm_inf, std::fabs(qm[t]));
        qr_inf = std::max(qr_inf, r);
    }
    if (!bounded) {
        for (std::size_t j = 0; j < n; ++j) out[j] = interval::entire();
        return;
    }
    for (std::size_t j = 0; j < n; ++j) {
        const double* k = rows.mid(j);
        double mid = 0;
        for (std::size_t t = 0; t < w; ++t) mid += qm[t] * k[t];
        const double rad =
            (qm_inf * rows.mid_term(j) + qr_inf * rows.rad_term(j)) * slack + underflow_term;
        const double lo = mid - rad, hi = mid + rad;
        // Also catches a NaN (0 * inf from an unbounded row) and overflow.
        if (!(lo >= -max_finite && hi <= max_finite)) {
            out[j] = interval::entire();
            continue;
        }
        out[j] = interval(next_down(lo), next_up(hi));
    }
}

} // namespace attnprop::numeric
