#pragma once
/// @file arb_ball.hpp
/// Arb ball (midpoint-radius enclosure) with an explicit per-value working precision.
/// Enclosure kind: every operation returns a ball that contains the exact result of the
/// operation applied to every point of the operand balls. Comparisons answer `unknown` when the
/// balls overlap and are not the same exact point.

#include "numeric/context.hpp"
#include "numeric/mpfr_real.hpp"
#include "numeric/order.hpp"
#include "numeric/rational.hpp"
#include "numeric/traits.hpp"

#include <arb.h>

#include <optional>
#include <string>

namespace attnprop::numeric {

/// A rigorous enclosure of a real number; operations work at the larger `precision()` of their
/// operands. A default-constructed ball is the exact point 0 at 53 bits.
class arb_ball {
public:
    arb_ball() : arb_ball(53) {}
    /// The exact point 0 with the given working precision.
    /// Throws numeric_error for a precision outside the working range (require_working_precision).
    explicit arb_ball(long precision_bits) : prec_(precision_bits) {
        require_working_precision(precision_bits);
        arb_init(v_);
    }
    arb_ball(const arb_ball& o) : prec_(o.prec_) {
        arb_init(v_);
        arb_set(v_, o.v_);
    }
    arb_ball(arb_ball&& o) noexcept : prec_(o.prec_) {
        arb_init(v_);
        arb_swap(v_, o.v_);
    }
    arb_ball& operator=(const arb_ball& o) {
        arb_set(v_, o.v_);
        prec_ = o.prec_;
        return *this;
    }
    arb_ball& operator=(arb_ball&& o) noexcept {
        arb_swap(v_, o.v_);
        prec_ = o.prec_;
        return *this;
    }
    ~arb_ball() { arb_clear(v_); }

    /// The tightest ball at the context's precision that contains q.
    static arb_ball from_rational(const rational& q, const context& ctx);
    /// The exact point x.
    static arb_ball from_double(double x, const context& ctx);

    long precision() const { return prec_; }
    /// Sets the working precision used by later operations on this value.
    void set_precision(long precision_bits) {
        require_working_precision(precision_bits);
        prec_ = precision_bits;
    }
    arb_ptr raw() { return v_; }
    arb_srcptr raw() const { return v_; }

    arb_ball& operator+=(const arb_ball& b);
    arb_ball& operator-=(const arb_ball& b);
    arb_ball& operator*=(const arb_ball& b);
    arb_ball& operator/=(const arb_ball& b);

private:
    arb_t v_;
    long prec_ = 53;
};

arb_ball operator+(const arb_ball& a, const arb_ball& b);
arb_ball operator-(const arb_ball& a, const arb_ball& b);
arb_ball operator*(const arb_ball& a, const arb_ball& b);
/// Division; a divisor ball containing 0 gives an indeterminate (infinite) ball.
arb_ball operator/(const arb_ball& a, const arb_ball& b);
arb_ball operator-(const arb_ball& a);

/// less/greater when proved for every pair of points, equal when both are the same exact point,
/// unknown otherwise.
order compare(const arb_ball& a, const arb_ball& b);
/// acc += a * b, rigorously.
void fma_acc(arb_ball& acc, const arb_ball& a, const arb_ball& b);

arb_ball exp(const arb_ball& x);
arb_ball log(const arb_ball& x);
arb_ball sqrt(const arb_ball& x);
/// Square root of the non-negative part of x (Arb's arb_sqrtpos): for a quantity known to be
/// >= 0, such as a sum of squares whose ball reaches below 0.
arb_ball sqrt_nonneg(const arb_ball& x);
arb_ball tanh(const arb_ball& x);
arb_ball sin(const arb_ball& x);
arb_ball cos(const arb_ball& x);
/// The error function erf x and its complement erfc x = 1 - erf x (Arb's arb_hypgeom_erf,
/// arb_hypgeom_erfc; erfc keeps its relative accuracy where erf x is close to -1 or 1).
arb_ball erf(const arb_ball& x);
arb_ball erfc(const arb_ball& x);
arb_ball abs(const arb_ball& x);
arb_ball floor(const arb_ball& x);
arb_ball pi_ball(const context& ctx);

/// True when the ball is finite and its radius is zero.
bool is_exact(const arb_ball& x);
/// True when every operand is finite (no NaN midpoint, no infinite radius).
bool is_finite(const arb_ball& x);
/// The exact value of an exact ball; std::nullopt when the radius is nonzero or not finite.
std::optional<rational> exact_value(const arb_ball& x);
/// Whether the ball contains the rational / the MPFR value.
bool contains(const arb_ball& x, const rational& q);
bool contains(const arb_ball& x, const mpfr_real& y);
/// Midpoint as a decimal with `digits` significant digits.
std::string midpoint_decimal_string(const arb_ball& x, int digits);
/// Radius (an upper bound) as a decimal with 3 significant digits, rounded up.
std::string radius_decimal_string(const arb_ball& x);

/// The ball for people, by Arb's own rule (arb_get_str, as arb_printn prints): the midpoint
/// rounded to the digits the radius certifies (at most `max_digits` significant ones), then
/// " +/- " and a radius of at most 3 significant digits, rounded up, that also covers the
/// rounding of the midpoint, so the printed ball contains the value. "0.333 +/- 3.34e-4";
/// "+/- 1.01e-73" when not even the leading digit is certified (a ball around 0, or one wider
/// than its value); an exact value that has at most `max_digits` digits prints as its exact
/// decimal without trailing zeros and without a radius ("0", "0.5", "-1024"). With
/// `force_digits` the midpoint gets `max_digits` significant digits whether certified or not
/// (a user's --digits). A ball that is not finite prints "undefined". Precondition:
/// max_digits >= 1.
std::string certified_string(const arb_ball& x, int max_digits, bool force_digits = false);

/// certified_string of a ball that contains the interval [lo, hi] (lo <= hi; the ball is
/// [lo, hi] itself, up to rounding outward at 256 bits): the digits two certified bounds pin
/// down.
std::string certified_string(const rational& lo, const rational& hi, int max_digits);
/// Midpoint rounded to the nearest double.
double to_double(const arb_ball& x);
/// Radius, rounded up to a double.
double radius_as_double(const arb_ball& x);
/// Hash and equality of the representation (midpoint and radius).
std::size_t repr_hash(const arb_ball& x);
bool same_value(const arb_ball& a, const arb_ball& b);

// The hooks of scalar.hpp's generic helpers (display, exact values, finiteness).
inline arb_ball representative(const arb_ball& x) {
    arb_ball r(x.precision());
    arf_set(arb_midref(r.raw()), arb_midref(x.raw()));
    return r;
}
inline std::optional<rational> exact_of(const arb_ball& x) { return exact_value(x); }
/// The ball itself (to_ball of the other enclosure kinds gives the ball of the same reals).
inline const arb_ball& to_ball(const arb_ball& x) { return x; }
inline bool is_nan(const arb_ball& x) { return arf_is_nan(arb_midref(x.raw())) != 0; }
undefined_error non_finite_error(const arb_ball& x);
std::string to_display_string(const arb_ball& x, int digits);
std::string to_certified_display(const arb_ball& x, int digits, bool force_digits = false);
std::string to_decimal(const arb_ball& x, int digits);
std::string radius_string(const arb_ball& x);
inline double approx_double(const arb_ball& x) { return to_double(x); }
/// The exact text of a ball (exact_text.hpp): its precision, then Arb's exact dump.
std::string exact_text(const arb_ball& x);
/// x^k for an integer k (arb_pow_ui, and arb_inv for k < 0: 0^negative is not finite).
arb_ball int_pow(const arb_ball& x, long k, const context& ctx);
/// a^b for a real exponent b (arb_pow at the larger precision; an indeterminate ball where the
/// power does not exist).
arb_ball real_pow(const arb_ball& a, const arb_ball& b, const context& ctx);

template <> struct scalar_traits<arb_ball> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "ball";
    static constexpr bool expensive_exp = true;
    static constexpr bool checks_finite = true;
    static constexpr bool variable_precision = true;
    /// The arb_t (midpoint and radius) and the midpoint's limbs.
    static constexpr long double value_bytes(long precision_bits) {
        return 48 + static_cast<long double>(precision_bits) / 8;
    }
    /// The ball itself (the enclosure kinds' conversion from balls).
    static arb_ball from_ball(const arb_ball& b) { return b; }
    static arb_ball from_rational(const rational& q, const context& ctx) {
        return arb_ball::from_rational(q, ctx);
    }
    static arb_ball from_long(long v, const context& ctx) {
        arb_ball r(ctx.precision_bits);
        arb_set_si(r.raw(), v);
        arb_set_round(r.raw(), r.raw(), ctx.precision_bits);
        return r;
    }
    static long precision(const arb_ball& x) { return x.precision(); }
    /// Formula constants are worth caching (model/formula/real.hpp).
    static constexpr bool caches_constants = true;
    /// The ball of exact_text(x), at its precision.
    static arb_ball from_exact_text(const std::string& text);
    static arb_ball pi(const context& ctx) { return pi_ball(ctx); }
    static arb_ball unit(const context& ctx) {
        arb_ball r(ctx.precision_bits);
        arb_unit_interval(r.raw());
        return r;
    }
    static arb_ball hull(const arb_ball& a, const arb_ball& b) {
        arb_ball r(std::max(a.precision(), b.precision()));
        arb_union(r.raw(), a.raw(), b.raw(), r.precision());
        return r;
    }
    static arb_ball nonnegative_part(const arb_ball& x) {
        arb_ball r(x.precision());
        arb_nonnegative_part(r.raw(), x.raw());
        return r;
    }
    /// An indeterminate ball: a trace entry whose value does not exist.
    static std::optional<arb_ball> no_value(const context& ctx) {
        arb_ball b(ctx.precision_bits);
        arb_indeterminate(b.raw());
        return b;
    }
};

} // namespace attnprop::numeric
