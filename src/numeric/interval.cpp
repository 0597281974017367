#include "numeric/interval.hpp"

#include <mpfr.h>

#include <algorithm>
#include <functional>

namespace attnprop::numeric {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

double next_down(double x) { return std::nextafter(x, -inf); }
double next_up(double x) { return std::nextafter(x, inf); }

// Sum rounded down / up, using the exact error term of TwoSum to stay tight when exact.
double add_down(double a, double b) {
    double s = a + b;
    if (!std::isfinite(s)) return std::isnan(s) ? -inf : s;
    double bb = s - a;
    double err = (a - (s - bb)) + (b - bb);
    return err < 0 ? next_down(s) : s;
}
double add_up(double a, double b) {
    double s = a + b;
    if (!std::isfinite(s)) return std::isnan(s) ? inf : s;
    double bb = s - a;
    double err = (a - (s - bb)) + (b - bb);
    return err > 0 ? next_up(s) : s;
}
// Product rounded down / up, using the exact error term of the fused multiply-add.
double mul_down(double a, double b) {
    if (a == 0 || b == 0) return 0.0;
    double p = a * b;
    if (!std::isfinite(p)) return std::isnan(p) ? -inf : p;
    if (std::fabs(p) < 1e-290) return next_down(p); // error term may underflow: widen
    double err = std::fma(a, b, -p);
    return err < 0 ? next_down(p) : p;
}
double mul_up(double a, double b) {
    if (a == 0 || b == 0) return 0.0;
    double p = a * b;
    if (!std::isfinite(p)) return std::isnan(p) ? inf : p;
    if (std::fabs(p) < 1e-290) return next_up(p);
    double err = std::fma(a, b, -p);
    return err > 0 ? next_up(p) : p;
}
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

interval normalise(double lo, double hi) {
    if (std::isnan(lo) || std::isnan(hi) || lo > hi) return interval::entire();
    return {lo, hi};
}

} // namespace

interval interval::from_rational(const rational& q, const context&) {
    mpfr_t x;
    mpfr_init2(x, 53);
    mpfr_set_q(x, q.backend().data(), MPFR_RNDD);
    double lo = mpfr_get_d(x, MPFR_RNDD);
    mpfr_set_q(x, q.backend().data(), MPFR_RNDU);
    double hi = mpfr_get_d(x, MPFR_RNDU);
    mpfr_clear(x);
    return {lo, hi};
}

interval operator+(const interval& a, const interval& b) {
    return normalise(add_down(a.lo(), b.lo()), add_up(a.hi(), b.hi()));
}
interval operator-(const interval& a, const interval& b) {
    return normalise(add_down(a.lo(), -b.hi()), add_up(a.hi(), -b.lo()));
}
interval operator*(const interval& a, const interval& b) {
    if (a.is_point() && b.is_point())
        return normalise(mul_down(a.lo(), b.lo()), mul_up(a.lo(), b.lo()));
    double c[4][2] = {{a.lo(), b.lo()}, {a.lo(), b.hi()}, {a.hi(), b.lo()}, {a.hi(), b.hi()}};
    double lo = inf, hi = -inf;
    for (auto& p : c) {
        // 0 * inf counts as 0 for the bound (the point 0 times any finite number is 0).
        lo = std::min(lo, mul_down(p[0], p[1]));
        hi = std::max(hi, mul_up(p[0], p[1]));
    }
    return normalise(lo, hi);
}
interval operator/(const interval& a, const interval& b) {
    if (b.lo() <= 0 && b.hi() >= 0) return interval::entire();
    double c[4][2] = {{a.lo(), b.lo()}, {a.lo(), b.hi()}, {a.hi(), b.lo()}, {a.hi(), b.hi()}};
    double lo = inf, hi = -inf;
    for (auto& p : c) {
        lo = std::min(lo, div_down(p[0], p[1]));
        hi = std::max(hi, div_up(p[0], p[1]));
    }
    return normalise(lo, hi);
}

interval& interval::operator+=(const interval& b) { return *this = *this + b; }
interval& interval::operator-=(const interval& b) { return *this = *this - b; }
interval& interval::operator*=(const interval& b) { return *this = *this * b; }
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

} // namespace attnprop::numeric
