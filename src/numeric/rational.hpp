#pragma once
/// @file rational.hpp
/// Exact rationals (GMP through Boost.Multiprecision), their exact text forms and parsing.

#include "numeric/context.hpp"
#include "numeric/limits.hpp"
#include "numeric/order.hpp"
#include "numeric/traits.hpp"

#include <boost/multiprecision/gmp.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnprop::numeric {

/// Exact rational number. Expression templates are off so that `auto` is always a value.
using rational = boost::multiprecision::number<boost::multiprecision::gmp_rational,
                                               boost::multiprecision::et_off>;
/// Exact integer numerator/denominator type of `rational`.
using integer = boost::multiprecision::number<boost::multiprecision::gmp_int,
                                              boost::multiprecision::et_off>;

/// Parses an exact rational from text. Accepted forms: a decimal literal with optional sign,
/// fraction and exponent ("-1.25e-3", "7", "1E+400"), or "p/q" with integers p and q
/// ("-3/4"), optionally with surrounding whitespace. The value is the exact value of the
/// literal (never read through double). Returns std::nullopt with `error` set on bad text or a
/// zero denominator.
std::optional<rational> parse_rational(std::string_view text, std::string* error = nullptr);

/// Exact text: "p/q" in lowest terms with q > 1, or "p" for integers.
std::string to_exact_string(const rational& q);

/// Decimal text rounded to nearest with `digits` significant digits (scientific notation when
/// the exponent is large). Exact when the rational has a short decimal expansion.
std::string to_decimal_string(const rational& q, int digits);

/// Shortest plain decimal that is exactly equal to q, if q's denominator is 2^a 5^b and the
/// expansion has at most `max_digits` significant digits (an integer: all its digits);
/// std::nullopt otherwise. Linear in the text (1e-100000 gives 100 002 characters in about a
/// millisecond): callers that write numbers a user gave should prefer exact_scientific when the
/// plain text is long.
std::optional<std::string> exact_decimal(const rational& q, std::size_t max_digits = 60);

/// q as "<m>e<E>" (m an integer with at most `max_digits` digits and no trailing zero, e.g.
/// "1e-100000", "-25e30"), read back exactly by parse_rational when |E| <= 100000, if q's
/// denominator is 2^a 5^b; std::nullopt otherwise.
std::optional<std::string> exact_scientific(const rational& q, std::size_t max_digits = 60);

/// The larger of the bit lengths of q's numerator and denominator (0 for 0).
std::size_t exact_bits(const rational& q);

/// Throws limit_error when q's numerator or denominator has more bits than the limit
/// exact-bits (numeric/limits.hpp). Exact arithmetic can square its values layer after layer,
/// so their size grows doubly exponentially: kernels check the values they produce (every map
/// output and graph node, through require_finite), which stops such a model after one operation
/// past the limit instead of hanging or exhausting memory. Costs two loads when q is small.
inline void check_exact_size(const rational& q) {
    mpq_srcptr v = q.backend().data();
    const auto limbs = static_cast<std::uint64_t>(
        std::max(mpz_size(mpq_numref(v)), mpz_size(mpq_denref(v))));
    if (limbs * GMP_NUMB_BITS > limit_value(limit::exact_bits))
        check_limit(limit::exact_bits, exact_bits(q),
                    "exact evaluation produced a number of " + std::to_string(exact_bits(q)) +
                        " bits (numerator or denominator)");
}

/// Three-way exact comparison (never unknown).
order compare(const rational& a, const rational& b);

/// The exact rational value of a finite double.
rational rational_from_double(double x);

/// Nearest double (round to nearest even), correctly rounded.
double to_double_nearest(const rational& q);

// The hooks of scalar.hpp's generic helpers (display, exact values, finiteness).
inline void fma_acc(rational& acc, const rational& a, const rational& b) { acc += a * b; }
inline rational abs(const rational& x) { return x < 0 ? rational(-x) : x; }
rational floor(const rational& x);
std::size_t repr_hash(const rational& x);
inline bool same_value(const rational& a, const rational& b) { return a == b; }
inline std::optional<rational> exact_of(const rational& x) { return x; }
inline bool is_nan(const rational&) { return false; }
inline bool is_finite(const rational&) { return true; }
std::string to_display_string(const rational& x, int digits);
std::string to_certified_display(const rational& x, int digits, bool force_digits = false);
std::string to_decimal(const rational& x, int digits);
std::string radius_string(const rational&);
/// The exact text of a rational (exact_text.hpp): p/q, or the integer.
std::string exact_text(const rational& x);
inline double approx_double(const rational& x) { return to_double_nearest(x); }

template <> struct scalar_traits<rational> {
    static constexpr scalar_kind kind = scalar_kind::exact;
    static constexpr std::string_view name = "exact";
    /// What messages call the kind.
    static constexpr std::string_view display_name = "exact rationals";
    /// Whether exp() is costly enough that repeated arguments are worth caching.
    static constexpr bool expensive_exp = false;
    /// Whether require_finite checks values of this kind (exact values are always finite).
    static constexpr bool checks_finite = false;
    static constexpr bool variable_precision = false;
    /// A GMP rational and its limbs, assumed small.
    static constexpr long double value_bytes(long) { return 32 + 16; }
    /// require_finite checks the size instead (check_exact_size: a limit_error beyond the
    /// limit exact-bits).
    static void check_value(const rational& x) { check_exact_size(x); }
    static rational from_rational(const rational& q, const context&) { return q; }
    static rational from_long(long v, const context&) { return rational(v); }
    static long precision(const rational&) { return 0; }
    /// The rational of exact_text(x) (std::runtime_error when malformed).
    static rational from_exact_text(const std::string& text);
};

} // namespace attnprop::numeric
