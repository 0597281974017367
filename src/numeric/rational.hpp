#pragma once
/// @file rational.hpp
/// Exact rationals (GMP through Boost.Multiprecision), their exact text forms and parsing.

#include "numeric/context.hpp"
#include "numeric/limits.hpp"
#include "numeric/order.hpp"

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
/// expansion has at most `max_digits` digits; std::nullopt otherwise.
std::optional<std::string> exact_decimal(const rational& q, std::size_t max_digits = 60);

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

} // namespace attnprop::numeric
