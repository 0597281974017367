// Differential enclosures (diff_ball.hpp).
#include "numeric/diff_ball.hpp"

#include "numeric/scalar.hpp"

#include <algorithm>
#include <functional>

namespace attnprop::numeric {

namespace {

long prec_of(const arb_ball& a, const arb_ball& b) { return std::max(a.precision(), b.precision()); }

bool is_exact_zero(const arb_ball& x) { return arb_is_zero(x.raw()) != 0; }

arb_ball zero_ball(long prec) { return arb_ball(prec); }

/// x intersected with [lo, hi] given as the hull of two balls' endpoints; x itself when the
/// intersection is empty (it cannot be for correct enclosures, but never produce an empty set).
arb_ball clamp_into(const arb_ball& x, const arb_ball& range) {
    arb_ball r(prec_of(x, range));
    if (!arb_intersection(r.raw(), x.raw(), range.raw(), r.precision())) return x;
    return r;
}

/// The ball containing [min(0, d), max(0, d)] for every point of d.
arb_ball between_zero_and(const arb_ball& d) {
    arb_ball z(d.precision());
    arb_ball r(d.precision());
    arb_union(r.raw(), z.raw(), d.raw(), r.precision());
    return r;
}

/// The ball [-m, m] with m an upper bound of |a| and |b|.
arb_ball symmetric_bound(const arb_ball& a, const arb_ball& b) {
    arb_ball r(prec_of(a, b));
    arf_t ua, ub;
    arf_init(ua);
    arf_init(ub);
    arb_get_abs_ubound_arf(ua, a.raw(), r.precision());
    arb_get_abs_ubound_arf(ub, b.raw(), r.precision());
    arf_max(ua, ua, ub);
    arb_zero(r.raw());
    arb_add_error_arf(r.raw(), ua);
    arf_clear(ua);
    arf_clear(ub);
    return r;
}

} // namespace

/// d intersected with the ball y - x: both enclose the change, so the intersection does too.
static arb_ball tightened(const arb_ball& x, const arb_ball& y, const arb_ball& d) {
    return clamp_into(d, y - x);
}

diff_ball::diff_ball(arb_ball x, arb_ball d) : x_(std::move(x)), y_(x_ + d), d_(std::move(d)) {}

diff_ball::diff_ball(arb_ball x, arb_ball y, arb_ball d)
    : x_(std::move(x)), y_(std::move(y)), d_(tightened(x_, y_, d)) {}

diff_ball diff_ball::same(arb_ball x) {
    diff_ball r(x.precision());
    r.y_ = x;
    r.x_ = std::move(x);
    return r;
}

bool diff_ball::unchanged() const { return is_exact_zero(d_); }

diff_ball& diff_ball::operator+=(const diff_ball& b) {
    const bool same_runs = unchanged() && b.unchanged();
    x_ += b.x_;
    if (same_runs) {
        y_ = x_;
        return *this;
    }
    y_ += b.y_;
    if (!b.unchanged()) d_ += b.d_;
    return *this;
}
diff_ball& diff_ball::operator-=(const diff_ball& b) {
    const bool same_runs = unchanged() && b.unchanged();
    x_ -= b.x_;
    if (same_runs) {
        y_ = x_;
        return *this;
    }
    y_ -= b.y_;
    if (!b.unchanged()) d_ -= b.d_;
    return *this;
}
diff_ball& diff_ball::operator*=(const diff_ball& b) { return *this = *this * b; }
diff_ball& diff_ball::operator/=(const diff_ball& b) { return *this = *this / b; }

diff_ball operator+(const diff_ball& a, const diff_ball& b) {
    diff_ball r = a;
    r += b;
    return r;
}
diff_ball operator-(const diff_ball& a, const diff_ball& b) {
    diff_ball r = a;
    r -= b;
    return r;
}
diff_ball operator-(const diff_ball& a) {
    if (a.unchanged()) return diff_ball::same(-a.first());
    return diff_ball(-a.first(), -a.second(), -a.change());
}

diff_ball operator*(const diff_ball& a, const diff_ball& b) {
    arb_ball x = a.first() * b.first();
    const bool ua = a.unchanged(), ub = b.unchanged();
    if (ua && ub) return diff_ball::same(std::move(x));
    arb_ball y = a.second() * b.second();
    // x' y' - x y = x dy + dx y': two products, no cancellation for small changes.
    arb_ball d(x.precision());
    if (ua) d = a.first() * b.change();
    else if (ub) d = a.change() * b.first();
    else d = a.first() * b.change() + a.change() * b.second();
    return diff_ball(std::move(x), std::move(y), std::move(d));
}

diff_ball operator/(const diff_ball& a, const diff_ball& b) {
    arb_ball x = a.first() / b.first();
    if (a.unchanged() && b.unchanged()) return diff_ball::same(std::move(x));
    arb_ball y = a.second() / b.second();
    // x'/y' - x/y = (dx y - x dy) / (y y').
    arb_ball num = a.change() * b.first();
    if (!b.unchanged()) num -= a.first() * b.change();
    arb_ball d = num / (b.first() * b.second());
    return diff_ball(std::move(x), std::move(y), std::move(d));
}

order compare(const diff_ball& a, const diff_ball& b) {
    const order o1 = compare(a.first(), b.first());
    if (o1 == order::unknown) return o1;
    if (a.unchanged() && b.unchanged()) return o1;
    const order o2 = compare(a.second(), b.second());
    return o1 == o2 ? o1 : order::unknown;
}

void fma_acc(diff_ball& acc, const diff_ball& a, const diff_ball& b) { acc += a * b; }

diff_ball exp(const diff_ball& x) {
    arb_ball e = exp(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(e));
    arb_ball m(x.precision());
    arb_expm1(m.raw(), x.change().raw(), m.precision());
    arb_ball d = e * m;
    return diff_ball(std::move(e), exp(x.second()), std::move(d));
}

diff_ball log(const diff_ball& x) {
    arb_ball l = log(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(l));
    // log(x + d) - log(x) = log1p(d / x).
    arb_ball q = x.change() / x.first();
    arb_ball d(x.precision());
    arb_log1p(d.raw(), q.raw(), d.precision());
    return diff_ball(std::move(l), log(x.second()), std::move(d));
}

diff_ball sqrt(const diff_ball& x) {
    arb_ball s = sqrt(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(s));
    // sqrt(x + d) - sqrt(x) = d / (sqrt(x + d) + sqrt(x)).
    arb_ball s2 = sqrt(x.second());
    arb_ball d = x.change() / (s + s2);
    return diff_ball(std::move(s), std::move(s2), std::move(d));
}

diff_ball sqrt_nonneg(const diff_ball& x) {
    arb_ball s = sqrt_nonneg(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(s));
    arb_ball s2 = sqrt_nonneg(x.second());
    arb_ball sum = s + s2;
    arb_ball d = compare(sum, zero_ball(x.precision())) == order::greater ? x.change() / sum : s2 - s;
    return diff_ball(std::move(s), std::move(s2), std::move(d));
}

diff_ball tanh(const diff_ball& x) {
    arb_ball t = tanh(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(t));
    // tanh(x + d) - tanh(x) = tanh(d) (1 - tanh(x) tanh(x + d)).
    arb_ball t2 = tanh(x.second());
    arb_ball one(x.precision());
    arb_one(one.raw());
    arb_ball d = tanh(x.change()) * (one - t * t2);
    return diff_ball(std::move(t), std::move(t2), std::move(d));
}

namespace {

/// sin(d / 2) and the midpoint argument x + d / 2.
void half_change(const diff_ball& x, arb_ball& sin_half, arb_ball& mid) {
    arb_ball half(x.precision());
    arb_mul_2exp_si(half.raw(), x.change().raw(), -1);
    sin_half = sin(half);
    mid = x.first() + half;
}

arb_ball twice(const arb_ball& a) {
    arb_ball r(a.precision());
    arb_mul_2exp_si(r.raw(), a.raw(), 1);
    return r;
}

} // namespace

diff_ball sin(const diff_ball& x) {
    arb_ball s = sin(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(s));
    // sin(x + d) - sin(x) = 2 cos(x + d/2) sin(d/2).
    arb_ball sh, mid;
    half_change(x, sh, mid);
    arb_ball d = twice(cos(mid) * sh);
    return diff_ball(std::move(s), sin(x.second()), std::move(d));
}

diff_ball cos(const diff_ball& x) {
    arb_ball c = cos(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(c));
    // cos(x + d) - cos(x) = -2 sin(x + d/2) sin(d/2).
    arb_ball sh, mid;
    half_change(x, sh, mid);
    arb_ball d = -twice(sin(mid) * sh);
    return diff_ball(std::move(c), cos(x.second()), std::move(d));
}

namespace {

/// Every value of erf'(t) = (2/sqrt(pi)) e^(-t^2) for t between the two runs' values: the ball
/// hull of (2/sqrt(pi)) e^(-M^2) and (2/sqrt(pi)) e^(-m^2), m <= |t| <= M on the hull of both.
arb_ball erf_slope_between(const diff_ball& x) {
    const long p = x.precision();
    arb_ball h(p);
    arb_union(h.raw(), x.first().raw(), x.second().raw(), p);
    arf_t m, big_m;
    arf_init(m);
    arf_init(big_m);
    arb_get_abs_lbound_arf(m, h.raw(), p);
    arb_get_abs_ubound_arf(big_m, h.raw(), p);
    arb_ball c(p);
    arb_const_sqrt_pi(c.raw(), p);
    arb_ui_div(c.raw(), 2, c.raw(), p);
    auto slope = [&](const arf_t t) {
        arb_ball v(p);
        arb_set_arf(v.raw(), t);
        arb_sqr(v.raw(), v.raw(), p);
        arb_neg(v.raw(), v.raw());
        arb_exp(v.raw(), v.raw(), p);
        return c * v;
    };
    arb_ball lo = slope(big_m), hi = slope(m);
    arf_clear(m);
    arf_clear(big_m);
    arb_ball r(p);
    arb_union(r.raw(), lo.raw(), hi.raw(), p);
    return r;
}

} // namespace

diff_ball erf(const diff_ball& x) {
    arb_ball e = erf(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(e));
    // erf(x + d) - erf(x) = d erf'(t) for some t between x and x + d (mean value theorem).
    arb_ball d = x.change() * erf_slope_between(x);
    return diff_ball(std::move(e), erf(x.second()), std::move(d));
}

diff_ball erfc(const diff_ball& x) {
    arb_ball e = erfc(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(e));
    arb_ball d = -(x.change() * erf_slope_between(x));
    return diff_ball(std::move(e), erfc(x.second()), std::move(d));
}

diff_ball abs(const diff_ball& x) {
    arb_ball a = abs(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(a));
    const arb_ball z = zero_ball(x.precision());
    const order s1 = compare(x.first(), z);
    const order s2 = compare(x.second(), z);
    if (s1 == s2 && (s1 == order::greater || s1 == order::less))
        return diff_ball(a, abs(x.second()), s1 == order::greater ? x.change() : -x.change());
    // | |x + d| - |x| | <= |d|.
    arb_ball a2 = abs(x.second());
    return diff_ball(std::move(a), std::move(a2), symmetric_bound(x.change(), x.change()));
}

diff_ball floor(const diff_ball& x) {
    arb_ball f = floor(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(f));
    arb_ball f2 = floor(x.second());
    arb_ball d = f2 - f;
    return diff_ball(std::move(f), std::move(f2), std::move(d));
}

diff_ball relu(const diff_ball& x, const context&) {
    const arb_ball z = zero_ball(x.precision());
    const order s1 = compare(x.first(), z);
    auto part = [](const arb_ball& v) {
        arb_ball r(v.precision());
        arb_nonnegative_part(r.raw(), v.raw());
        return r;
    };
    if (x.unchanged()) {
        if (s1 == order::greater || s1 == order::equal) return x;
        if (s1 == order::less) return diff_ball(z.precision());
        return diff_ball::same(part(x.first()));
    }
    const order s2 = compare(x.second(), z);
    if ((s1 == order::greater || s1 == order::equal) && (s2 == order::greater || s2 == order::equal))
        return x;
    if ((s1 == order::less || s1 == order::equal) && (s2 == order::less || s2 == order::equal))
        return diff_ball(z.precision());
    // relu is monotone and 1-Lipschitz: relu(x + d) - relu(x) lies between 0 and d.
    arb_ball r1 = part(x.first());
    return diff_ball(std::move(r1), part(x.second()), between_zero_and(x.change()));
}

diff_ball step(const diff_ball& x, const context&) {
    const arb_ball z = zero_ball(x.precision());
    auto heaviside = [&](const arb_ball& v) {
        const order s = compare(v, z);
        arb_ball r(v.precision());
        if (s == order::greater) arb_one(r.raw());
        else if (s != order::less && s != order::equal) arb_unit_interval(r.raw());
        return r;
    };
    arb_ball s1 = heaviside(x.first());
    if (x.unchanged()) return diff_ball::same(std::move(s1));
    arb_ball s2 = heaviside(x.second());
    arb_ball d = s2 - s1;
    return diff_ball(std::move(s1), std::move(s2), std::move(d));
}

diff_ball max_of(const diff_ball& a, const diff_ball& b) {
    const order o = compare(a, b);
    if (o == order::greater || o == order::equal) return a;
    if (o == order::less) return b;
    arb_ball m1(prec_of(a.first(), b.first()));
    arb_max(m1.raw(), a.first().raw(), b.first().raw(), m1.precision());
    if (a.unchanged() && b.unchanged()) return diff_ball::same(std::move(m1));
    arb_ball m2(m1.precision());
    arb_ball a2 = a.second(), b2 = b.second();
    arb_max(m2.raw(), a2.raw(), b2.raw(), m2.precision());
    // max is 1-Lipschitz in the maximum norm.
    return diff_ball(std::move(m1), std::move(m2), symmetric_bound(a.change(), b.change()));
}

diff_ball representative(const diff_ball& x) {
    // A softmax shift may be any value in each run: the midpoints of x and x', exact points.
    arb_ball v(x.precision()), w(x.precision());
    arf_set(arb_midref(v.raw()), arb_midref(x.first().raw()));
    if (x.unchanged()) return diff_ball::same(std::move(v));
    arf_set(arb_midref(w.raw()), arb_midref(x.second().raw()));
    arb_ball d = w - v;
    return diff_ball(std::move(v), std::move(w), std::move(d));
}

diff_ball hull(const diff_ball& a, const diff_ball& b) {
    arb_ball h1(prec_of(a.first(), b.first()));
    arb_union(h1.raw(), a.first().raw(), b.first().raw(), h1.precision());
    if (a.unchanged() && b.unchanged() && same_value(a.first(), b.first()))
        return diff_ball::same(std::move(h1));
    arb_ball h2(h1.precision());
    arb_ball a2 = a.second(), b2 = b.second();
    arb_union(h2.raw(), a2.raw(), b2.raw(), h2.precision());
    arb_ball d = h2 - h1;
    return diff_ball(std::move(h1), std::move(h2), std::move(d));
}

bool is_nan(const diff_ball& x) { return is_nan(x.first()) || is_nan(x.second()); }
bool is_finite(const diff_ball& x) { return is_finite(x.first()) && is_finite(x.second()); }

std::optional<rational> exact_of(const diff_ball& x) {
    if (!x.unchanged()) return std::nullopt;
    return exact_value(x.first());
}

std::size_t repr_hash(const diff_ball& x) {
    return (repr_hash(x.first()) * 1000003u ^ repr_hash(x.second())) * 1000003u ^ repr_hash(x.change());
}
bool same_value(const diff_ball& a, const diff_ball& b) {
    return same_value(a.first(), b.first()) && same_value(a.second(), b.second()) &&
           same_value(a.change(), b.change());
}

std::string to_display_string(const diff_ball& x, int digits) {
    return midpoint_decimal_string(x.first(), digits);
}
std::string to_decimal(const diff_ball& x, int digits) {
    return midpoint_decimal_string(x.first(), digits);
}
std::string radius_string(const diff_ball& x) { return radius_decimal_string(x.first()); }
std::string to_certified_display(const diff_ball& x, int digits, bool force_digits) {
    return certified_string(x.first(), digits, force_digits);
}
double approx_double(const diff_ball& x) { return to_double(x.first()); }

} // namespace attnprop::numeric
