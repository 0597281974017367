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
    if (!std::isfinite(q))
        return interval_detail::overflow_down(q, std::isfinite(a) && std::isfinite(b));
    if (a == 0) return 0.0;
    double r = std::fma(-q, b, a); // a - q b, exact
    if (std::fabs(q) < 1e-290) return next_down(q);
    bool below = (r > 0) != (b > 0); // true value a/b = q + r/b
    return (r != 0 && below) ? next_down(q) : q;
}
double div_up(double a, double b) {
    double q = a / b;
    if (!std::isfinite(q))
        return interval_detail::overflow_up(q, std::isfinite(a) && std::isfinite(b));
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

// --- dot_acc ---------------------------------------------------------------------------------
//
// Points only: the sequential tight operations (an exact result stays a point). Otherwise one
// pass in plain double arithmetic. Write [m_t, M_t] for the minimum and maximum of the four
// corner products of term t rounded to nearest; the exact extreme products differ from them by
// at most 2^-52 max(|m_t|, |M_t|) + eta (eta = 2^-1074). With L and H the sums of c_lo, m_1,
// ..., m_n and of c_hi, M_1, ..., M_n rounded to nearest (error at most gamma_n times the sum of
// the absolute values, gamma_n <= n 2^-52), c = max(|c_lo|, |c_hi|) and
// A = sum_t max(|m_t|, |M_t|), the exact set lies in [L - R, H + R] with
//     R = (n + 2) 2^-52 (c + A) + n eta.
// R is computed with rounding to nearest from nonnegative terms, so multiplying by 1 + 2^-20 and
// adding 2^-1000 covers its own rounding and underflow for n < 2^20; the endpoints are finally
// rounded outward. Infinite endpoints or overflow fall back to the sequential operations.

namespace {

template <class Index>
interval dot_acc_impl(interval acc, const interval* a, const interval* b, std::size_t count,
                      Index idx) {
    bool points = acc.is_point();
    for (std::size_t t = 0; points && t < count; ++t)
        points = a[idx(t)].is_point() && b[idx(t)].is_point();
    auto sequential = [&] {
        for (std::size_t t = 0; t < count; ++t) acc += a[idx(t)] * b[idx(t)];
        return acc;
    };
    if (points || count >= (std::size_t{1} << 20)) return sequential();
    double L = acc.lo(), H = acc.hi(), A = 0, nonfinite = 0;
    const double c = std::max(std::fabs(acc.lo()), std::fabs(acc.hi()));
    for (std::size_t t = 0; t < count; ++t) {
        const interval& x = a[idx(t)];
        const interval& y = b[idx(t)];
        const double al = x.lo(), ah = x.hi(), bl = y.lo(), bh = y.hi();
        const double p1 = al * bl, p2 = al * bh, p3 = ah * bl, p4 = ah * bh;
        // Every endpoint is a factor of p1 or p4: an infinite one (or an overflow) makes the
        // sum infinite or NaN for good (min / max below could drop a NaN).
        nonfinite += p1 + p4;
        const double m = std::min(std::min(p1, p2), std::min(p3, p4));
        const double M = std::max(std::max(p1, p2), std::max(p3, p4));
        L += m;
        H += M;
        A += std::max(std::fabs(m), std::fabs(M));
    }
    constexpr double max_finite = std::numeric_limits<double>::max();
    const bool finite = std::fabs(nonfinite) <= max_finite && std::fabs(L) <= max_finite &&
                        std::fabs(H) <= max_finite && A <= max_finite && c <= max_finite;
    if (!finite) return sequential();
    const double kappa = static_cast<double>(count + 2) * 0x1p-52;
    const double R = kappa * (c + A) * (1.0 + 0x1p-20) + 0x1p-1000;
    const double lo = L - R, hi = H + R;
    if (!(lo >= -max_finite && hi <= max_finite)) return sequential();
    return {next_down(lo), next_up(hi)};
}

} // namespace

interval dot_acc(interval acc, const interval* a, const interval* b, std::size_t len) {
    return dot_acc_impl(acc, a, b, len, [](std::size_t t) { return t; });
}

interval dot_acc(interval acc, const interval* a, const interval* b, const std::size_t* idx,
                 std::size_t count) {
    return dot_acc_impl(acc, a, b, count, [idx](std::size_t t) { return idx[t]; });
}

// --- dot_rows / dot_all / dot_argmax -------------------------------------------------------------
//
// Soundness. Write q = q_m + e, k = k_m + f with |e_t| <= r_t (the query's radii), |f_t| <= s_t.
// Then q.k - q_m.k_m = q_m.f + e.k_m + e.f, so |q.k - q_m.k_m| <= |q_m|_inf |s|_1 +
// |r|_inf |k_m|_1 + |r|_inf |s|_1. The double dot product of the midpoints has error at most
// gamma_w sum |q_m,t k_m,t| <= gamma_w |q_m|_inf |k_m|_1 (w terms, gamma_w >= w u / (1 - w u),
// whatever the evaluation order or contraction into fused multiply-adds; underflow adds at most
// 2w 2^-1075). So with A = gamma_w |k_m|_1 + |s|_1 and B = |k_m|_1 + |s|_1,
//     |q.k - fl(q_m.k_m)| <= |q_m|_inf A + |r|_inf B + 2w 2^-1075.
// The row terms are stored as slack * A and slack * B, slack = 1 + 2^-20. Every bound is a sum
// of products of nonnegative doubles rounded to nearest, so it is at least (1 - u)^(2w + 8)
// times its exact value (u = 2^-53; each underflowing operation costs at most 2^-1075 more);
// the slack covers the relative part for w < 2^20, and the added 2^-1000 the absolute part.
// The endpoints mid -/+ rad are finally rounded outward with next_down / next_up.

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

/// The double dot product of the midpoints, in four interleaved partial sums (the error bound
/// gamma_w holds for every summation order).
inline double mid_dot(const double* q, const double* k, std::size_t w) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    std::size_t t = 0;
    for (; t + 4 <= w; t += 4) {
        s0 += q[t] * k[t];
        s1 += q[t + 1] * k[t + 1];
        s2 += q[t + 2] * k[t + 2];
        s3 += q[t + 3] * k[t + 3];
    }
    for (; t < w; ++t) s0 += q[t] * k[t];
    return (s0 + s1) + (s2 + s3);
}

/// The query side: midpoints, |q_m|_inf and |r|_inf; false if unbounded.
struct query_form {
    double stack[64];
    std::vector<double> heap;
    double* mid = stack;
    double m_inf = 0, r_inf = 0;

    bool make(const interval* q, std::size_t w) {
        if (w > 64) {
            heap.resize(w);
            mid = heap.data();
        }
        bool bounded = true;
        for (std::size_t t = 0; t < w; ++t) {
            double r = 0;
            if (!mid_rad(q[t], mid[t], r)) bounded = false;
            m_inf = std::max(m_inf, std::fabs(mid[t]));
            r_inf = std::max(r_inf, r);
        }
        return bounded;
    }
};

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
    const double a = (gamma_ * m1 + r1) * slack, b = (m1 + r1) * slack;
    if (!bounded || !(b <= max_finite)) {
        mid_terms_.push_back(inf);
        rad_terms_.push_back(inf);
        return;
    }
    mid_terms_.push_back(a);
    rad_terms_.push_back(b);
}

void dot_all(const interval* q, const dot_rows& rows, interval* out, std::size_t end) {
    const std::size_t w = rows.width(), n = std::min(rows.size(), end);
    query_form f;
    if (!f.make(q, w)) {
        for (std::size_t j = 0; j < n; ++j) out[j] = interval::entire();
        return;
    }
    for (std::size_t j = 0; j < n; ++j) {
        const double mid = mid_dot(f.mid, rows.mid(j), w);
        const double rad = f.m_inf * rows.mid_term(j) + f.r_inf * rows.rad_term(j) + underflow_term;
        const double lo = mid - rad, hi = mid + rad;
        // Also catches a NaN (0 * inf from an unbounded row) and overflow.
        if (!(lo >= -max_finite && hi <= max_finite)) {
            out[j] = interval::entire();
            continue;
        }
        out[j] = interval(next_down(lo), next_up(hi));
    }
}

std::size_t dot_argmax(const interval* q, const dot_rows& rows, std::size_t end) {
    const std::size_t w = rows.width(), n = std::min(rows.size(), end);
    query_form f;
    if (n == 0 || !f.make(q, w)) return n;
    // The row with the largest lower bound, and the two largest upper bounds (with the index of
    // the largest), all with rounding to nearest; outward rounding is applied to the two
    // numbers that decide.
    std::size_t best = 0, top = 0;
    double best_lo = -inf, hi1 = -inf, hi2 = -inf;
    for (std::size_t j = 0; j < n; ++j) {
        const double mid = mid_dot(f.mid, rows.mid(j), w);
        const double rad = f.m_inf * rows.mid_term(j) + f.r_inf * rows.rad_term(j) + underflow_term;
        const double lo = mid - rad, hi = mid + rad;
        if (!(lo >= -max_finite && hi <= max_finite)) return n;
        if (lo > best_lo) best_lo = lo, best = j;
        if (hi > hi1) {
            hi2 = hi1;
            hi1 = hi, top = j;
        } else if (hi > hi2) {
            hi2 = hi;
        }
    }
    const double other_hi = top == best ? hi2 : hi1; // the largest upper bound of the others
    if (n == 1 || next_down(best_lo) > next_up(other_hi)) return best;
    return n;
}

} // namespace attnprop::numeric
