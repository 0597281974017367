#pragma once
/// @file dinterval.hpp
/// The certified double kind (`--scalar interval`): an interval [lo, hi] of doubles that is
/// guaranteed to contain the exact value, at the cost of double arithmetic. Enclosure kind,
/// like Arb balls but at a fixed 53-bit working precision: every operation rounds outward
/// (numeric::interval), exp / log / sqrt / tanh / erf are the certified functions of
/// elementary.hpp, and the soft-attention rows have their own kernel with a-priori error bounds
/// (attention::soft_rows<dinterval>). When an interval is too wide to decide something, the
/// answer is `unknown` (a comparison) or undefined with precision_may_resolve (an enclosure
/// that is not finite, a variance that may be 0): the caller retries with Arb balls.
///
/// It differs from numeric::interval, the internal filter of the exact hard-attention path, in
/// two ways: it has the transcendental functions (it models ExpScalar), and a value that is
/// not finite is an undefined result (numeric::require_finite checks it), where the filter
/// legitimately widens to the whole line and lets exact arithmetic decide.

#include "numeric/arb_ball.hpp"
#include "numeric/elementary.hpp"
#include "numeric/interval.hpp"
#include "numeric/traits.hpp"

#include <optional>
#include <string>

namespace attnprop::numeric {

class dinterval {
public:
    /// The point 0.
    constexpr dinterval() = default;
    constexpr explicit dinterval(interval v) : v_(v) {}
    constexpr explicit dinterval(double x) : v_(x) {}
    constexpr dinterval(double lo, double hi) : v_(lo, hi) {}

    /// The tightest interval of doubles containing q.
    static dinterval from_rational(const rational& q, const context& ctx) {
        return dinterval(interval::from_rational(q, ctx));
    }
    static dinterval entire() { return dinterval(interval::entire()); }

    constexpr const interval& value() const { return v_; }
    constexpr double lo() const { return v_.lo(); }
    constexpr double hi() const { return v_.hi(); }
    constexpr bool is_point() const { return v_.is_point(); }
    long precision() const { return 53; }

    dinterval& operator+=(const dinterval& b) { v_ += b.v_; return *this; }
    dinterval& operator-=(const dinterval& b) { v_ -= b.v_; return *this; }
    dinterval& operator*=(const dinterval& b) { v_ *= b.v_; return *this; }
    dinterval& operator/=(const dinterval& b) { v_ /= b.v_; return *this; }

private:
    interval v_;
};

inline dinterval operator+(const dinterval& a, const dinterval& b) { return dinterval(a.value() + b.value()); }
inline dinterval operator-(const dinterval& a, const dinterval& b) { return dinterval(a.value() - b.value()); }
inline dinterval operator*(const dinterval& a, const dinterval& b) { return dinterval(a.value() * b.value()); }
/// Division; a divisor containing 0 gives the whole line.
inline dinterval operator/(const dinterval& a, const dinterval& b) { return dinterval(a.value() / b.value()); }
inline dinterval operator-(const dinterval& a) { return dinterval(-a.value()); }

/// less/greater when proved, equal when both are the same point, unknown otherwise.
inline order compare(const dinterval& a, const dinterval& b) { return compare(a.value(), b.value()); }
inline void fma_acc(dinterval& acc, const dinterval& a, const dinterval& b) { acc += a * b; }
/// acc + sum_t a[t] b[t] (numeric::dot_acc of intervals: points stay points).
dinterval dot_acc(dinterval acc, const dinterval* a, const dinterval* b, std::size_t len);
dinterval dot_acc(dinterval acc, const dinterval* a, const dinterval* b, const std::size_t* idx,
                  std::size_t count);

/// An enclosure of max(a, b) for every pair of values of a and b: [max lo, max hi] (exact).
inline dinterval max_of(const dinterval& a, const dinterval& b) {
    return dinterval(interval(std::max(a.lo(), b.lo()), std::max(a.hi(), b.hi())));
}
inline dinterval abs(const dinterval& x) { return dinterval(abs(x.value())); }
inline dinterval floor(const dinterval& x) { return dinterval(floor(x.value())); }

/// Monotone extensions of the certified functions of elementary.hpp. log and sqrt of an
/// interval that reaches below their domain give the whole line (not finite: undefined, and a
/// ball may resolve it).
dinterval exp(const dinterval& x);
dinterval log(const dinterval& x);
dinterval sqrt(const dinterval& x);
/// Square root of the nonnegative part of x (for a quantity known to be >= 0).
dinterval sqrt_nonneg(const dinterval& x);
dinterval tanh(const dinterval& x);
dinterval sin(const dinterval& x);
dinterval cos(const dinterval& x);
/// erf (increasing, in [-1, 1]) and erfc (decreasing, in [0, 2]) from their certified values
/// at the end points (elementary.hpp); an infinite end point gives the limit.
dinterval erf(const dinterval& x);
dinterval erfc(const dinterval& x);
/// Pi, enclosed.
dinterval pi_interval();

inline bool is_finite(const dinterval& x) { return std::isfinite(x.lo()) && std::isfinite(x.hi()); }
inline bool is_nan(const dinterval&) { return false; }
std::optional<rational> exact_value(const dinterval& x);
bool contains(const dinterval& x, const rational& q);
bool contains(const dinterval& x, const mpfr_real& y);
/// The Arb ball that contains exactly the same reals (at 128 bits; display and conversions).
arb_ball to_ball(const dinterval& x);
/// The interval of doubles enclosing a ball (outward); the whole line when it is not finite.
dinterval from_ball(const arb_ball& b);
inline double to_double(const dinterval& x) { return to_double(x.value()); }
/// Half the width, rounded up.
double radius_as_double(const dinterval& x);
inline std::size_t repr_hash(const dinterval& x) { return repr_hash(x.value()); }
inline bool same_value(const dinterval& a, const dinterval& b) { return same_value(a.value(), b.value()); }

// The hooks of scalar.hpp's generic helpers (display, exact values, finiteness).
inline dinterval representative(const dinterval& x) { return dinterval(to_double(x)); }
inline std::optional<rational> exact_of(const dinterval& x) { return exact_value(x); }
undefined_error non_finite_error(const dinterval& x);
std::string to_display_string(const dinterval& x, int digits);
std::string to_certified_display(const dinterval& x, int digits, bool force_digits = false);
std::string to_decimal(const dinterval& x, int digits);
std::string radius_string(const dinterval& x);
inline double approx_double(const dinterval& x) { return to_double(x); }
/// The exact text of an interval (exact_text.hpp): the bits of its ends, 32 hexadecimal digits.
std::string exact_text(const dinterval& x);

template <> struct scalar_traits<dinterval> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "interval";
    static constexpr std::string_view description = "certified double intervals";
    static constexpr bool expensive_exp = false;
    static constexpr bool checks_finite = true;
    static constexpr bool variable_precision = false;
    /// Two doubles.
    static constexpr long double value_bytes(long) { return 16; }
    /// The interval of doubles enclosing the ball (outward).
    static dinterval from_ball(const arb_ball& b) { return numeric::from_ball(b); }
    static dinterval from_rational(const rational& q, const context& ctx) {
        return dinterval::from_rational(q, ctx);
    }
    static dinterval from_long(long v, const context& ctx) {
        return dinterval(scalar_traits<interval>::from_long(v, ctx));
    }
    static long precision(const dinterval&) { return 53; }
    /// Values are [lo(), hi()] of doubles (numeric::has_double_endpoints).
    static constexpr bool double_endpoints = true;
    /// The interval of exact_text(x).
    static dinterval from_exact_text(const std::string& text);
    static dinterval pi(const context&) { return pi_interval(); }
    static dinterval unit(const context&) { return dinterval(0.0, 1.0); }
    static dinterval hull(const dinterval& a, const dinterval& b) {
        return dinterval(scalar_traits<interval>::hull(a.value(), b.value()));
    }
    static dinterval nonnegative_part(const dinterval& x) {
        return dinterval(scalar_traits<interval>::nonnegative_part(x.value()));
    }
    static std::optional<dinterval> no_value(const context&) { return dinterval::entire(); }
};

} // namespace attnprop::numeric
