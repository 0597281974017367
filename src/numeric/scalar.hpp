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
/// (its name, kind, conversions, and the hooks below) or in overloads declared in the kind's
/// own header (arithmetic, compare, the elementary functions, display); generic helpers here
/// are written against those hooks and never name a kind. Hooks of enclosure kinds:
/// `unit(ctx)` (the set [0, 1]), `hull(a, b)`, `nonnegative_part(x)`; of kinds with exp:
/// `pi(ctx)`; of rounded kinds: `nan(ctx)`; every kind says whether require_finite checks it
/// (`checks_finite`), whether exp is costly (`expensive_exp`) and how to make a value that
/// stands for "no value" in a trace (`no_value(ctx)`, an optional).

#include "numeric/arb_ball.hpp"
#include "numeric/context.hpp"
#include "numeric/diff_ball.hpp"
#include "numeric/dinterval.hpp"
#include "numeric/interval.hpp"
#include "numeric/mpfr_real.hpp"
#include "numeric/order.hpp"
#include "numeric/rational.hpp"

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

/// What a scalar's results mean.
enum class scalar_kind {
    exact,     ///< the value is the true value
    rounded,   ///< an approximation with no error bound
    enclosure  ///< a set guaranteed to contain the true value
};

/// "exact", "rounded" or "enclosure".
constexpr std::string_view to_string(scalar_kind k) {
    switch (k) {
    case scalar_kind::exact: return "exact";
    case scalar_kind::rounded: return "rounded";
    case scalar_kind::enclosure: return "enclosure";
    }
    return "?";
}

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

// --- rational --------------------------------------------------------------------------------
inline void fma_acc(rational& acc, const rational& a, const rational& b) { acc += a * b; }
inline rational abs(const rational& x) { return x < 0 ? rational(-x) : x; }
/// Largest integer <= x.
rational floor(const rational& x);
std::size_t repr_hash(const rational& x);
inline bool same_value(const rational& a, const rational& b) { return a == b; }

/// Per-type facts, conversions and hooks. Specialised for every scalar type (see the file
/// comment for the hooks each kind provides).
template <class S> struct scalar_traits;

template <> struct scalar_traits<rational> {
    static constexpr scalar_kind kind = scalar_kind::exact;
    static constexpr std::string_view name = "exact";
    /// Whether exp() is costly enough that repeated arguments are worth caching.
    static constexpr bool expensive_exp = false;
    /// Whether require_finite checks values of this kind (exact values are always finite).
    static constexpr bool checks_finite = false;
    static rational from_rational(const rational& q, const context&) { return q; }
    static rational from_long(long v, const context&) { return rational(v); }
    static long precision(const rational&) { return 0; }
};
template <> struct scalar_traits<double> {
    static constexpr scalar_kind kind = scalar_kind::rounded;
    static constexpr std::string_view name = "double";
    static constexpr bool expensive_exp = false;
    static constexpr bool checks_finite = true;
    static double from_rational(const rational& q, const context&) {
        // Numerator and denominator exact doubles: one IEEE division is the correctly rounded
        // quotient, i.e. to_double_nearest(q), without MPFR.
        mpq_srcptr v = q.backend().data();
        if (mpz_sizeinbase(mpq_numref(v), 2) <= 53 && mpz_sizeinbase(mpq_denref(v), 2) <= 53)
            return mpz_get_d(mpq_numref(v)) / mpz_get_d(mpq_denref(v));
        return to_double_nearest(q);
    }
    static double from_long(long v, const context&) { return static_cast<double>(v); }
    static long precision(double) { return 53; }
    static double pi(const context&) { return 3.141592653589793; }
    static double nan(const context&) { return std::numeric_limits<double>::quiet_NaN(); }
};
template <> struct scalar_traits<mpfr_real> {
    static constexpr scalar_kind kind = scalar_kind::rounded;
    static constexpr std::string_view name = "mpfr";
    static constexpr bool expensive_exp = true;
    static constexpr bool checks_finite = true;
    static mpfr_real from_rational(const rational& q, const context& ctx) {
        return mpfr_real::from_rational(q, ctx);
    }
    static mpfr_real from_long(long v, const context& ctx) {
        mpfr_real r(ctx.precision_bits);
        mpfr_set_si(r.raw(), v, MPFR_RNDN);
        return r;
    }
    static long precision(const mpfr_real& x) { return x.precision(); }
    static mpfr_real pi(const context& ctx) { return pi_mpfr(ctx); }
    static mpfr_real nan(const context& ctx) {
        mpfr_real r(ctx.precision_bits);
        mpfr_set_nan(r.raw());
        return r;
    }
};
template <> struct scalar_traits<arb_ball> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "ball";
    static constexpr bool expensive_exp = true;
    static constexpr bool checks_finite = true;
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
template <> struct scalar_traits<interval> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "filter-interval";
    static constexpr bool expensive_exp = false;
    /// The filter of the exact hard path may widen to the whole line legitimately: exact
    /// arithmetic decides what it cannot.
    static constexpr bool checks_finite = false;
    static interval from_rational(const rational& q, const context& ctx) {
        return interval::from_rational(q, ctx);
    }
    static interval from_long(long v, const context& ctx) {
        // |v| <= 2^53 is an exact double: the point (what from_rational gives, without GMP).
        if (v >= -(1L << 53) && v <= (1L << 53)) return interval(static_cast<double>(v));
        return interval::from_rational(rational(v), ctx);
    }
    static long precision(const interval&) { return 53; }
    static interval unit(const context&) { return interval(0.0, 1.0); }
    static interval hull(const interval& a, const interval& b) {
        return interval(std::min(a.lo(), b.lo()), std::max(a.hi(), b.hi()));
    }
    static interval nonnegative_part(const interval& x) {
        return interval(std::max(0.0, x.lo()), std::max(0.0, x.hi()));
    }
};
template <> struct scalar_traits<dinterval> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "interval";
    static constexpr bool expensive_exp = false;
    static constexpr bool checks_finite = true;
    static dinterval from_rational(const rational& q, const context& ctx) {
        return dinterval::from_rational(q, ctx);
    }
    static dinterval from_long(long v, const context& ctx) {
        return dinterval(scalar_traits<interval>::from_long(v, ctx));
    }
    static long precision(const dinterval&) { return 53; }
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

template <> struct scalar_traits<diff_ball> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "diff";
    static constexpr bool expensive_exp = true;
    static constexpr bool checks_finite = false;
    /// The same enclosure of q in both runs (change the exact point 0).
    static diff_ball from_rational(const rational& q, const context& ctx) {
        return diff_ball::same(arb_ball::from_rational(q, ctx));
    }
    static diff_ball from_long(long v, const context& ctx) {
        return diff_ball::same(scalar_traits<arb_ball>::from_long(v, ctx));
    }
    static long precision(const diff_ball& x) { return x.precision(); }
    static diff_ball pi(const context& ctx) { return diff_ball::same(pi_ball(ctx)); }
    /// [0, 1] in each run, unrelated: the change is [-1, 1].
    static diff_ball unit(const context& ctx) {
        arb_ball u = scalar_traits<arb_ball>::unit(ctx);
        arb_ball d(ctx.precision_bits);
        arb_zero_pm_one(d.raw());
        return diff_ball(std::move(u), std::move(d));
    }
};

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

/// An exactly representable value near x: x itself, or the midpoint of an enclosure. Used as a
/// shift that must not widen enclosures (a softmax shift may be any value). Enclosure kinds
/// overload it (below, and diff_ball.hpp).
template <Scalar S> S representative(const S& x) { return x; }
inline arb_ball representative(const arb_ball& x) {
    arb_ball r(x.precision());
    arf_set(arb_midref(r.raw()), arb_midref(x.raw()));
    return r;
}
inline interval representative(const interval& x) { return interval(to_double(x)); }
inline dinterval representative(const dinterval& x) { return dinterval(to_double(x)); }

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

/// Maximum of a and b when decidable; for enclosures an undecided comparison returns a value
/// that encloses both (for balls, the union is not formed: use `max_upper` semantics only in
/// bounds code). For exact and rounded kinds this is the ordinary maximum.
template <Scalar S> S max_of(const S& a, const S& b) {
    return compare(a, b) == order::less ? b : a;
}

/// The exact rational value of x when it is known exactly: always for rational, double and
/// MPFR (their values are dyadic rationals); for enclosures only for exact points.
inline std::optional<rational> exact_of(const rational& x) { return x; }
inline std::optional<rational> exact_of(double x) {
    if (!std::isfinite(x)) return std::nullopt;
    return rational_from_double(x);
}
inline std::optional<rational> exact_of(const mpfr_real& x) {
    if (!mpfr_number_p(x.raw())) return std::nullopt;
    return to_rational(x);
}
inline std::optional<rational> exact_of(const arb_ball& x) { return exact_value(x); }
inline std::optional<rational> exact_of(const interval& x) { return exact_value(x); }
inline std::optional<rational> exact_of(const dinterval& x) { return exact_value(x); }

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
inline bool is_nan(const rational&) { return false; }
inline bool is_nan(double x) { return std::isnan(x); }
inline bool is_nan(const mpfr_real& x) { return mpfr_nan_p(x.raw()) != 0; }
inline bool is_nan(const arb_ball& x) { return arf_is_nan(arb_midref(x.raw())) != 0; }
inline bool is_nan(const interval&) { return false; }
// is_nan / is_finite of dinterval are declared in dinterval.hpp.

/// Whether x is a finite number: always for exact values; not NaN or infinite for double and
/// MPFR; a finite midpoint and radius for balls; finite end points for intervals.
inline bool is_finite(const rational&) { return true; }
inline bool is_finite(double x) { return std::isfinite(x); }
inline bool is_finite(const mpfr_real& x) { return mpfr_number_p(x.raw()) != 0; }
inline bool is_finite(const interval& x) { return std::isfinite(x.lo()) && std::isfinite(x.hi()); }
// is_finite(const arb_ball&) is declared in arb_ball.hpp.

/// The undefined_error for a value of the model that came out non-finite, without a place
/// (the caller's map or forward pass adds it). Double and MPFR: "NaN (an operation without a
/// value)" or "overflow to infinity"; balls: "the enclosure is not finite at P bits", with
/// precision_may_resolve (a wider divisor than the truth may be the cause).
undefined_error non_finite_error(double x);
undefined_error non_finite_error(const mpfr_real& x);
undefined_error non_finite_error(const arb_ball& x);
undefined_error non_finite_error(const dinterval& x);

/// Whether require_finite checks S (scalar_traits<S>::checks_finite): double, MPFR, balls and
/// certified intervals. Exact values are always finite; the interval filter of the exact hard
/// path may widen to the whole line legitimately.
template <class S> inline constexpr bool checks_finite = scalar_traits<S>::checks_finite;

/// Throws non_finite_error(x) when x is not finite (kinds of checks_finite only). For exact
/// rationals, which are always finite, checks their size instead (check_exact_size: a
/// limit_error beyond the limit exact-bits); no-op for the other kinds.
template <class S> void require_finite(const S& x) {
    if constexpr (checks_finite<S>) {
        if (!is_finite(x)) throw non_finite_error(x);
    } else if constexpr (std::is_same_v<S, rational>) {
        check_exact_size(x);
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
std::string to_display_string(const rational& x, int digits);
std::string to_display_string(double x, int digits);
std::string to_display_string(const mpfr_real& x, int digits);
std::string to_display_string(const arb_ball& x, int digits);
std::string to_display_string(const interval& x, int digits);
std::string to_display_string(const dinterval& x, int digits);

/// Text for people, with the digits that mean something: balls by certified_string (the digits
/// their radius certifies, at most `digits`, or exactly `digits` with `force_digits`, then the
/// radius); intervals likewise, as the ball [lo, hi]; exact rationals as p/q; rounded kinds
/// (double, MPFR) with `digits` significant digits, as to_display_string.
std::string to_certified_display(const rational& x, int digits, bool force_digits = false);
std::string to_certified_display(double x, int digits, bool force_digits = false);
std::string to_certified_display(const mpfr_real& x, int digits, bool force_digits = false);
std::string to_certified_display(const arb_ball& x, int digits, bool force_digits = false);
std::string to_certified_display(const interval& x, int digits, bool force_digits = false);
std::string to_certified_display(const dinterval& x, int digits, bool force_digits = false);

/// Decimal text with `digits` significant digits (also for rationals).
std::string to_decimal(const rational& x, int digits);
std::string to_decimal(double x, int digits);
std::string to_decimal(const mpfr_real& x, int digits);
std::string to_decimal(const arb_ball& x, int digits);
std::string to_decimal(const interval& x, int digits);
std::string to_decimal(const dinterval& x, int digits);

/// Radius text for enclosures ("0" for the other kinds).
std::string radius_string(const rational&);
std::string radius_string(double);
std::string radius_string(const mpfr_real&);
std::string radius_string(const arb_ball& x);
std::string radius_string(const interval& x);
std::string radius_string(const dinterval& x);

/// Nearest double of the value (midpoint for enclosures).
inline double approx_double(const rational& x) { return to_double_nearest(x); }
inline double approx_double(double x) { return x; }
inline double approx_double(const mpfr_real& x) { return to_double(x); }
inline double approx_double(const arb_ball& x) { return to_double(x); }
inline double approx_double(const interval& x) { return to_double(x); }
inline double approx_double(const dinterval& x) { return to_double(x); }

} // namespace attnprop::numeric
