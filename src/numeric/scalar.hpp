#pragma once
/// @file scalar.hpp
/// Scalar concepts by capability, scalar traits, and the generic helpers every kernel uses.
///
/// Five user-facing kinds: `rational` (exact), `double` and `mpfr_real` (rounded), `arb_ball`
/// and `dinterval` (enclosures); plus `interval`, the internal double-interval filter of the
/// exact hard path, and `diff_ball`, the differential enclosure of a pair of runs. Kernels are
/// written once, `template <Scalar S>`, and compare only through `compare()`.
///
/// Everything that differs between kinds lives in the kind's `scalar_traits` specialisation
/// (traits.hpp lists its members) or in overloads declared in the kind's own header
/// (arithmetic, compare, the elementary functions, display, representative, exact_of), as
/// Boost.Multiprecision's backends override its default operations: generic helpers here are
/// written against those hooks and never name a kind. Double, a built-in type, has its
/// overloads and traits here. kind_list.hpp includes every kind's header.

#include "numeric/context.hpp"
#include "numeric/kind_list.hpp"
#include "numeric/order.hpp"
#include "numeric/traits.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <concepts>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace attnprop::numeric {

// --- double: free functions so that kernels can call numeric::exp(x) for every kind ---------
/// Never unknown; a NaN operand is an undefined_error (the value it stands for does not exist).
inline order compare(double a, double b) {
    if (a < b) return order::less;
    if (a > b) return order::greater;
    if (a == b) return order::equal;
    throw undefined_error("NaN in a comparison (an operation without a value)");
}
/// acc += a * b with two roundings, as a plain C++ loop does: std::fma is a library call
/// unless the target has FMA instructions, and doubles are a rounded kind anyway. Deterministic
/// for a given build (the compiler may contract it into one fused operation when the target has
/// FMA).
inline void fma_acc(double& acc, double a, double b) { acc += a * b; }
inline double exp(double x) { return std::exp(x); }
inline double log(double x) { return std::log(x); }
inline double sqrt(double x) { return std::sqrt(x); }
inline double sqrt_nonneg(double x) { return std::sqrt(x); }
inline double tanh(double x) { return std::tanh(x); }
inline double sin(double x) { return std::sin(x); }
inline double cos(double x) { return std::cos(x); }
inline double erf(double x) { return std::erf(x); }
inline double erfc(double x) { return std::erfc(x); }
inline double abs(double x) { return std::fabs(x); }
inline double floor(double x) { return std::floor(x); }
inline std::size_t repr_hash(double x) { return std::hash<double>{}(x); }
inline bool same_value(double a, double b) { return a == b; }


template <> struct scalar_traits<double> {
    static constexpr scalar_kind kind = scalar_kind::rounded;
    static constexpr std::string_view name = "double";
    static constexpr bool expensive_exp = false;
    static constexpr bool checks_finite = true;
    static constexpr bool variable_precision = false;
    static constexpr long double value_bytes(long) { return 8; }
    /// 17 significant digits: what a double needs to round-trip.
    static constexpr int display_digits = 17;
    static double from_rational(const rational& q, const context&) {
        // Numerator and denominator exact doubles: one IEEE division is the correctly rounded
        // quotient, i.e. to_double_nearest(q), without MPFR.
        mpq_srcptr v = q.backend().data();
        if (mpz_sizeinbase(mpq_numref(v), 2) <= 53 && mpz_sizeinbase(mpq_denref(v), 2) <= 53)
            return mpz_get_d(mpq_numref(v)) / mpz_get_d(mpq_denref(v));
        return to_double_nearest(q);
    }
    static double from_long(long v, const context&) { return static_cast<double>(v); }
    /// p/q by one IEEE division when both fit in 53 bits (a correctly rounded division of
    /// exact operands), else from_rational.
    static double from_fraction(long long p, long long q, const context& ctx) {
        constexpr long long limit = 1LL << 53;
        if (p <= limit && p >= -limit && q <= limit)
            return static_cast<double>(p) / static_cast<double>(q);
        return from_rational(rational(p, q), ctx);
    }
    static long precision(double) { return 53; }
    static double pi(const context&) { return 3.141592653589793; }
    static double nan(const context&) { return std::numeric_limits<double>::quiet_NaN(); }
    /// Formula constants are worth caching (model/formula/real.hpp).
    static constexpr bool caches_constants = true;
    /// The double of exact_text(x): 16 hexadecimal digits of its bits.
    static double from_exact_text(const std::string& text);
};
/// The exact text of a double (exact_text.hpp): its bits as 16 hexadecimal digits.
std::string exact_text(double x);

/// The operations of the formula grammar where double arithmetic would give NaN or infinity
/// without saying why: a division by zero, log of a number <= 0, the square root of a negative
/// number, are undefined_errors with that reason (the generic forms below for other kinds, whose
/// arithmetic says so itself or widens).
inline double checked_div(double a, double b) {
    if (b == 0.0) throw undefined_error("division by zero");
    return a / b;
}
inline double checked_log(double a) {
    if (!(a > 0.0)) throw undefined_error("log of a non-positive number");
    return std::log(a);
}
inline double checked_sqrt(double a) {
    if (!(a >= 0.0)) throw undefined_error("square root of a negative number");
    return std::sqrt(a);
}
/// x^k for an integer k (std::pow); 0^negative is an undefined_error.
double int_pow(double x, long k, const context& ctx);
/// a^b for a real exponent b (std::pow); a negative base, or a zero base with an exponent that
/// is not positive, is an undefined_error.
double real_pow(double a, double b, const context& ctx);
/// Arithmetic plus a comparison that may say `unknown`. What every kernel needs.
/// Division by a value that is exactly zero has no value: MPFR throws undefined_error, doubles
/// give NaN or infinity (caught by require_finite at map outputs and by compare), enclosures
/// return an unbounded set (caught by require_finite). Kernels that divide by a quantity that
/// may be zero (layer norm) test it first and throw undefined_error themselves.
template <class S>
concept Scalar = std::copyable<S> && requires(const S a, const S b, S& m, const rational& q,
                                              const context& ctx) {
    { scalar_traits<S>::kind } -> std::convertible_to<scalar_kind>;
    { scalar_traits<S>::from_rational(q, ctx) } -> std::same_as<S>;
    { scalar_traits<S>::from_long(1L, ctx) } -> std::same_as<S>;
    { a + b } -> std::same_as<S>;
    { a - b } -> std::same_as<S>;
    { a * b } -> std::same_as<S>;
    { a / b } -> std::same_as<S>;
    { -a } -> std::same_as<S>;
    { compare(a, b) } -> std::same_as<order>;
    fma_acc(m, a, b);
    { abs(a) } -> std::same_as<S>;
    { floor(a) } -> std::same_as<S>;
};

/// Adds the transcendental functions the soft model and real-valued maps need. Exact
/// rationals do not model it, so soft attention over rationals does not compile.
template <class S>
concept ExpScalar = Scalar<S> && requires(const S a) {
    { exp(a) } -> std::same_as<S>;
    { log(a) } -> std::same_as<S>;
    { sqrt(a) } -> std::same_as<S>;
    { tanh(a) } -> std::same_as<S>;
    { sin(a) } -> std::same_as<S>;
    { cos(a) } -> std::same_as<S>;
    { erf(a) } -> std::same_as<S>;
    { erfc(a) } -> std::same_as<S>;
};

static_assert(Scalar<rational> && Scalar<double> && Scalar<mpfr_real> && Scalar<arb_ball> &&
              Scalar<interval> && Scalar<dinterval>);
static_assert(!ExpScalar<rational> && !ExpScalar<interval>);
static_assert(ExpScalar<double> && ExpScalar<mpfr_real> && ExpScalar<arb_ball> &&
              ExpScalar<diff_ball> && ExpScalar<dinterval>);

/// Converts an exact rational to S: exact, nearest, or enclosing depending on S.
template <Scalar S> S from_rational(const rational& q, const context& ctx) {
    return scalar_traits<S>::from_rational(q, ctx);
}
template <Scalar S> S from_int(long v, const context& ctx) {
    return scalar_traits<S>::from_long(v, ctx);
}
template <Scalar S> S zero(const context& ctx) { return from_int<S>(0, ctx); }
template <Scalar S> S one(const context& ctx) { return from_int<S>(1, ctx); }

/// The fraction p/q (q > 0) in S: from_rational, or the kind's faster form
/// (scalar_traits<S>::from_fraction; doubles divide directly when both fit in 53 bits).
template <Scalar S> S from_fraction(long long p, long long q, const context& ctx) {
    if constexpr (requires { scalar_traits<S>::from_fraction(p, q, ctx); })
        return scalar_traits<S>::from_fraction(p, q, ctx);
    else
        return from_rational<S>(rational(p, q), ctx);
}

/// The value of S written by exact_text(x) (the kind's overload): the very same value.
/// Throws std::runtime_error for a malformed text.
template <Scalar S> S from_exact_text(const std::string& text) {
    return scalar_traits<S>::from_exact_text(text);
}

/// The words a message names S by: scalar_traits<S>::display_name ("exact rationals"), or its
/// name.
template <class S> constexpr std::string_view display_name() {
    if constexpr (requires { scalar_traits<S>::display_name; })
        return scalar_traits<S>::display_name;
    else
        return scalar_traits<S>::name;
}

/// Whether constants of formulas computed in S are worth keeping (scalar_traits<S>::
/// caches_constants: double, MPFR, balls; model/formula/real.hpp's constant_cache).
template <class S> constexpr bool caches_constants() {
    if constexpr (requires { scalar_traits<S>::caches_constants; })
        return scalar_traits<S>::caches_constants;
    else
        return false;
}

/// Whether S's values are intervals [lo(), hi()] of doubles (scalar_traits<S>::
/// double_endpoints): code with a faster form in double arithmetic on midpoints and radii takes
/// it for such a kind (the a-posteriori bound's cache, soft_influence/posterior_interval.hpp).
template <class S>
inline constexpr bool has_double_endpoints = [] {
    if constexpr (requires { scalar_traits<S>::double_endpoints; })
        return scalar_traits<S>::double_endpoints;
    else
        return false;
}();

/// An exactly representable value near x: x itself, or the midpoint of an enclosure. Used as a
/// shift that must not widen enclosures (a softmax shift may be any value). Enclosure kinds
/// overload it in their headers.
template <Scalar S> S representative(const S& x) { return x; }

/// Pi in S (ExpScalar only).
template <ExpScalar S> S pi(const context& ctx) { return scalar_traits<S>::pi(ctx); }

/// PyTorch's exact GELU (approximate = 'none'), x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, as
/// (x / 2) erfc(-x / sqrt 2): the same function, without the cancellation of 1 + erf for
/// x < 0 (gelu(-30) ~ -3e-197 keeps its relative accuracy).
template <ExpScalar S> S gelu(const S& x, const context& ctx) {
    const S two = from_int<S>(2, ctx);
    return x * erfc(-(x / sqrt(two))) / two;
}

/// The sign of x as a comparison with zero.
template <Scalar S> order sign(const S& x, const context& ctx) { return compare(x, zero<S>(ctx)); }

/// a / b, log a, sqrt a in the formula grammar: the kind's own operations (a kind whose
/// arithmetic would not say why a value does not exist overloads them: double, above).
template <Scalar S> S checked_div(const S& a, const S& b) { return a / b; }
template <ExpScalar S> S checked_log(const S& a) { return log(a); }
template <ExpScalar S> S checked_sqrt(const S& a) { return sqrt(a); }

/// x^k for an integer k, in the arithmetic of x, by binary powering; 0^negative is an
/// undefined_error. Kinds with a power of their own overload it (double, MPFR, balls).
template <ExpScalar S> S int_pow(const S& x, long k, const context& ctx) {
    if (k < 0) {
        if (sign(x, ctx) == order::equal)
            throw undefined_error("zero raised to a negative power");
        return one<S>(ctx) / int_pow(x, -k, ctx);
    }
    S result = one<S>(ctx);
    S base = x;
    for (unsigned long e = static_cast<unsigned long>(k); e != 0; e >>= 1) {
        if (e & 1UL)
            result = result * base;
        if (e > 1)
            base = base * base;
    }
    return result;
}

/// a^b for a real exponent b: exp(b log a). Kinds with a power of their own overload it
/// (double, MPFR, balls).
template <ExpScalar S> S real_pow(const S& a, const S& b, const context&) {
    return exp(b * log(a));
}

/// Maximum of a and b when decidable; for enclosures an undecided comparison returns a value
/// that encloses both (for balls, the union is not formed: use `max_upper` semantics only in
/// bounds code). For exact and rounded kinds this is the ordinary maximum.
template <Scalar S> S max_of(const S& a, const S& b) {
    return compare(a, b) == order::less ? b : a;
}

/// The exact rational value of x when it is known exactly: always for rational, double and
/// MPFR (their values are dyadic rationals); for enclosures only for exact points.
inline std::optional<rational> exact_of(double x) {
    if (!std::isfinite(x)) return std::nullopt;
    return rational_from_double(x);
}

/// The set [0, 1] as an enclosure (for a step function whose argument straddles 0).
/// Only enclosure kinds can be asked: exact and rounded kinds always decide their comparisons.
template <Scalar S> S unit_enclosure(const context& ctx) {
    if constexpr (requires { scalar_traits<S>::unit(ctx); })
        return scalar_traits<S>::unit(ctx);
    else
        throw numeric_error("unit_enclosure requested for a non-enclosure scalar");
}

/// The smallest enclosure (of the kind's shape) containing both a and b. Enclosure kinds only.
template <Scalar S> S hull(const S& a, const S& b) {
    if constexpr (requires { scalar_traits<S>::hull(a, b); })
        return scalar_traits<S>::hull(a, b);
    else
        throw numeric_error("hull requested for a non-enclosure scalar");
}

/// max(x, 0), rigorous for enclosures (the part of the set at or above 0).
template <Scalar S> S relu(const S& x, const context& ctx) {
    order c = sign(x, ctx);
    if (c == order::greater || c == order::equal) return x;
    if (c == order::less) return zero<S>(ctx);
    if constexpr (requires { scalar_traits<S>::nonnegative_part(x); })
        return scalar_traits<S>::nonnegative_part(x);
    else
        throw numeric_error("undecided sign for a non-enclosure scalar");
}

/// Heaviside step: 1 if x > 0, else 0; the enclosure [0, 1] when the sign is unknown.
template <Scalar S> S step(const S& x, const context& ctx) {
    order c = sign(x, ctx);
    if (c == order::greater) return one<S>(ctx);
    if (c == order::less || c == order::equal) return zero<S>(ctx);
    return unit_enclosure<S>(ctx);
}

/// Whether x is NaN (rounded kinds only can be; exact values and enclosures never are --
/// an enclosure of an undefined value is the whole line).
inline bool is_nan(double x) { return std::isnan(x); }

/// Whether x is a finite number: always for exact values; not NaN or infinite for double and
/// MPFR; a finite midpoint and radius for balls; finite end points for intervals.
inline bool is_finite(double x) { return std::isfinite(x); }

/// The undefined_error for a value of the model that came out non-finite, without a place
/// (the caller's map or forward pass adds it). Double and MPFR: "NaN (an operation without a
/// value)" or "overflow to infinity"; balls: "the enclosure is not finite at P bits", with
/// precision_may_resolve (a wider divisor than the truth may be the cause).
undefined_error non_finite_error(double x);

/// Whether require_finite checks S (scalar_traits<S>::checks_finite): double, MPFR, balls and
/// certified intervals. Exact values are always finite; the interval filter of the exact hard
/// path may widen to the whole line legitimately.
template <class S> inline constexpr bool checks_finite = scalar_traits<S>::checks_finite;

/// Whether require_finite does anything for S: checks_finite, or the kind's check_value hook
/// (the size of exact values).
template <class S>
inline constexpr bool checks_values =
    checks_finite<S> || requires(const S& x) { scalar_traits<S>::check_value(x); };

/// Throws non_finite_error(x) when x is not finite (kinds of checks_finite only). Kinds that
/// are never non-finite may check something else (scalar_traits<S>::check_value: exact
/// rationals check their size, a limit_error beyond the limit exact-bits); no-op for the other
/// kinds.
template <class S> void require_finite(const S& x) {
    if constexpr (checks_finite<S>) {
        if (!is_finite(x)) throw non_finite_error(x);
    } else if constexpr (requires { scalar_traits<S>::check_value(x); }) {
        scalar_traits<S>::check_value(x);
    } else {
        (void)x;
    }
}

/// NaN in a rounded kind (the result of an operation the precision cannot resolve, such as
/// 0/0). Other kinds throw: exact values are never NaN, enclosures widen instead.
template <Scalar S> S not_a_number(const context& ctx) {
    if constexpr (requires { scalar_traits<S>::nan(ctx); })
        return scalar_traits<S>::nan(ctx);
    else
        throw numeric_error("NaN requested for a scalar kind that has none");
}

/// d values standing for "no value" in a trace row whose value does not exist but that the
/// output does not read (a row of the last layer other than n): NaN for rounded kinds, an
/// indeterminate enclosure where the kind has one (scalar_traits<S>::no_value); std::nullopt
/// for other kinds (the caller then throws the undefined_error).
template <Scalar S> std::optional<std::vector<S>> no_value_vector(std::size_t d, const context& ctx) {
    if constexpr (requires { scalar_traits<S>::nan(ctx); }) {
        return std::vector<S>(d, scalar_traits<S>::nan(ctx));
    } else if constexpr (requires { scalar_traits<S>::no_value(ctx); }) {
        if (auto v = scalar_traits<S>::no_value(ctx)) return std::vector<S>(d, *v);
        return std::nullopt;
    } else {
        return std::nullopt;
    }
}

/// The generic dot product acc + a[0] b[0] + ... (repeated fma_acc); kinds with a faster
/// rigorous one overload dot_acc (interval.hpp, dinterval.hpp).
template <Scalar S> S dot_acc(S acc, const S* a, const S* b, std::size_t len) {
    for (std::size_t t = 0; t < len; ++t) fma_acc(acc, a[t], b[t]);
    return acc;
}
/// The same over the terms idx[0 .. count) (a sparse row).
template <Scalar S>
S dot_acc(S acc, const S* a, const S* b, const std::size_t* idx, std::size_t count) {
    for (std::size_t t = 0; t < count; ++t) fma_acc(acc, a[idx[t]], b[idx[t]]);
    return acc;
}

/// Human-readable decimal text for S with `digits` significant digits (midpoint for
/// enclosures). Exact rationals print exactly as p/q.
std::string to_display_string(double x, int digits);

/// Text for people, with the digits that mean something: balls by certified_string (the digits
/// their radius certifies, at most `digits`, or exactly `digits` with `force_digits`, then the
/// radius); intervals likewise, as the ball [lo, hi]; exact rationals as p/q; rounded kinds
/// (double, MPFR) with `digits` significant digits, as to_display_string.
std::string to_certified_display(double x, int digits, bool force_digits = false);

/// Decimal text with `digits` significant digits (also for rationals).
std::string to_decimal(double x, int digits);

/// Radius text for enclosures ("0" for the other kinds).
std::string radius_string(double);

/// Nearest double of the value (midpoint for enclosures).
inline double approx_double(double x) { return x; }

/// The significant decimal digits `precision_bits` bits support (rounded up).
inline int digits_of_precision(long precision_bits) {
    return static_cast<int>(std::ceil(static_cast<double>(precision_bits) * 0.30102999566398120));
}

/// The significant digits a value of S prints by default with `precision_bits` of precision:
/// what the precision supports, or the kind's display_digits (doubles: 17, to round-trip).
template <class S> int default_digits(long precision_bits) {
    if constexpr (requires { scalar_traits<S>::display_digits; })
        return scalar_traits<S>::display_digits;
    else
        return digits_of_precision(precision_bits);
}

/// A ball that holds x: x for balls, the ball of the same reals for the other enclosure kinds
/// (their to_ball), the exact value of a rounded number otherwise (compared as if exact; a
/// non-finite one is its non_finite_error).
template <Scalar S> arb_ball enclosing_ball(const S& x, const context& ctx) {
    if constexpr (scalar_traits<S>::kind == scalar_kind::enclosure) {
        return to_ball(x);
    } else {
        auto q = exact_of(x);
        if (!q) throw non_finite_error(x);
        return from_rational<arb_ball>(*q, ctx);
    }
}

/// The enclosure kind S of a ball (scalar_traits<S>::from_ball: the ball itself, or the
/// interval of doubles around it).
template <Scalar S> S from_ball_as(const arb_ball& b) { return scalar_traits<S>::from_ball(b); }

} // namespace attnprop::numeric
