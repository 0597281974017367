#pragma once
/// @file mpfr_real.hpp
/// MPFR real with an explicit per-value precision (RAII over mpfr_t). Rounded kind: every
/// operation rounds to nearest at the larger precision of its operands.

#include "numeric/context.hpp"
#include "numeric/order.hpp"
#include "numeric/rational.hpp"
#include "numeric/traits.hpp"

#include <mpfr.h>

#include <optional>
#include <string>
#include <utility>

namespace attnprop::numeric {

/// A real number rounded to `precision()` bits. Copy keeps the precision of the source.
/// A default-constructed value is 0 at 53 bits; kernels always build values from a context.
class mpfr_real {
public:
    mpfr_real() : mpfr_real(53) {}
    /// Zero at the given precision. Throws numeric_error for a precision outside the working
    /// range (require_working_precision).
    explicit mpfr_real(long precision_bits) {
        require_working_precision(precision_bits);
        mpfr_init2(v_, static_cast<mpfr_prec_t>(precision_bits));
        mpfr_set_zero(v_, 1);
    }
    mpfr_real(const mpfr_real& o) {
        mpfr_init2(v_, mpfr_get_prec(o.v_));
        mpfr_set(v_, o.v_, MPFR_RNDN);
    }
    mpfr_real(mpfr_real&& o) noexcept {
        mpfr_init2(v_, MPFR_PREC_MIN);
        mpfr_swap(v_, o.v_);
    }
    mpfr_real& operator=(const mpfr_real& o) {
        if (this != &o) {
            mpfr_set_prec(v_, mpfr_get_prec(o.v_));
            mpfr_set(v_, o.v_, MPFR_RNDN);
        }
        return *this;
    }
    mpfr_real& operator=(mpfr_real&& o) noexcept {
        mpfr_swap(v_, o.v_);
        return *this;
    }
    ~mpfr_real() { mpfr_clear(v_); }

    /// Nearest value to q at the context's precision.
    static mpfr_real from_rational(const rational& q, const context& ctx);
    /// Exact value of a double (precision max(53, ctx)).
    static mpfr_real from_double(double x, const context& ctx);

    long precision() const { return static_cast<long>(mpfr_get_prec(v_)); }
    mpfr_ptr raw() { return v_; }
    mpfr_srcptr raw() const { return v_; }

    mpfr_real& operator+=(const mpfr_real& b);
    mpfr_real& operator-=(const mpfr_real& b);
    mpfr_real& operator*=(const mpfr_real& b);
    mpfr_real& operator/=(const mpfr_real& b);

private:
    mpfr_t v_;
};

/// Watches the MPFR computations of this thread, from its construction on, for results that
/// left MPFR's exponent range: an underflow (a value below 2^emin rounded to 0 or to the
/// smallest number, while an Arb ball, whose exponents are unbounded, holds the true value)
/// or an overflow (rounded to infinity). Such a result is MPFR's limit, not the model's: a
/// comparison with it decides nothing (docs/scalars.md, "MPFR's exponent range"). It reads
/// MPFR's underflow and overflow flags, clearing them first.
class mpfr_range_watch {
public:
    mpfr_range_watch() {
        mpfr_clear_underflow();
        mpfr_clear_overflow();
    }
    bool underflow() const { return mpfr_underflow_p() != 0; }
    bool overflow() const { return mpfr_overflow_p() != 0; }
    /// An underflow or an overflow happened since construction.
    bool left_range() const { return underflow() || overflow(); }
    /// "MPFR underflowed (a value below 2^-1073741823 was rounded)" or the overflow's sentence;
    /// "" when neither happened.
    std::string reason() const;
};

mpfr_real operator+(const mpfr_real& a, const mpfr_real& b);
mpfr_real operator-(const mpfr_real& a, const mpfr_real& b);
mpfr_real operator*(const mpfr_real& a, const mpfr_real& b);
/// Division; dividing by zero is an undefined_error.
mpfr_real operator/(const mpfr_real& a, const mpfr_real& b);
mpfr_real operator-(const mpfr_real& a);

/// Never unknown; NaN operands are an undefined_error.
order compare(const mpfr_real& a, const mpfr_real& b);
/// acc += a * b with one rounding.
void fma_acc(mpfr_real& acc, const mpfr_real& a, const mpfr_real& b);

mpfr_real exp(const mpfr_real& x);
/// Natural log; x <= 0 is an undefined_error.
mpfr_real log(const mpfr_real& x);
/// Square root; x < 0 is an undefined_error.
mpfr_real sqrt(const mpfr_real& x);
/// Square root of a value known to be >= 0 (rounded sums of squares are never negative).
inline mpfr_real sqrt_nonneg(const mpfr_real& x) { return sqrt(x); }
mpfr_real tanh(const mpfr_real& x);
mpfr_real sin(const mpfr_real& x);
mpfr_real cos(const mpfr_real& x);
/// erf x and erfc x = 1 - erf x (mpfr_erf, mpfr_erfc), correctly rounded.
mpfr_real erf(const mpfr_real& x);
mpfr_real erfc(const mpfr_real& x);
mpfr_real abs(const mpfr_real& x);
/// Largest integer <= x.
mpfr_real floor(const mpfr_real& x);
/// Pi at the context's precision.
mpfr_real pi_mpfr(const context& ctx);

/// The exact (dyadic) rational value; NaN/Inf are an undefined_error.
rational to_rational(const mpfr_real& x);
/// Nearest double.
double to_double(const mpfr_real& x);
/// Decimal text with `digits` significant digits.
std::string to_decimal_string(const mpfr_real& x, int digits);
/// Hash of the exact value (equal values at equal precision hash equally).
std::size_t repr_hash(const mpfr_real& x);
/// True when both hold the same number (regardless of precision).
bool same_value(const mpfr_real& a, const mpfr_real& b);

// The hooks of scalar.hpp's generic helpers (display, exact values, finiteness).
inline std::optional<rational> exact_of(const mpfr_real& x) {
    if (!mpfr_number_p(x.raw())) return std::nullopt;
    return to_rational(x);
}
inline bool is_nan(const mpfr_real& x) { return mpfr_nan_p(x.raw()) != 0; }
inline bool is_finite(const mpfr_real& x) { return mpfr_number_p(x.raw()) != 0; }
undefined_error non_finite_error(const mpfr_real& x);
std::string to_display_string(const mpfr_real& x, int digits);
std::string to_certified_display(const mpfr_real& x, int digits, bool force_digits = false);
std::string to_decimal(const mpfr_real& x, int digits);
std::string radius_string(const mpfr_real&);
inline double approx_double(const mpfr_real& x) { return to_double(x); }
/// The exact text of an MPFR number (exact_text.hpp): its precision, then hexadecimal with
/// every digit of its significand ("256 -0.8f3@1"; "@NaN@", "@Inf@", "-@Inf@").
std::string exact_text(const mpfr_real& x);
/// x^k for an integer k (mpfr_pow_si, at x's precision); 0^negative is an undefined_error.
mpfr_real int_pow(const mpfr_real& x, long k, const context& ctx);
/// a^b for a real exponent b (mpfr_pow, at the larger precision); NaN, a negative base, or a
/// zero base with an exponent that is not positive, is an undefined_error.
mpfr_real real_pow(const mpfr_real& a, const mpfr_real& b, const context& ctx);

template <> struct scalar_traits<mpfr_real> {
    static constexpr scalar_kind kind = scalar_kind::rounded;
    static constexpr std::string_view name = "mpfr";
    static constexpr bool expensive_exp = true;
    static constexpr bool checks_finite = true;
    static constexpr bool variable_precision = true;
    /// The mpfr_t and its limbs.
    static constexpr long double value_bytes(long precision_bits) {
        return 32 + static_cast<long double>(precision_bits) / 8;
    }
    static mpfr_real from_rational(const rational& q, const context& ctx) {
        return mpfr_real::from_rational(q, ctx);
    }
    static mpfr_real from_long(long v, const context& ctx) {
        mpfr_real r(ctx.precision_bits);
        mpfr_set_si(r.raw(), v, MPFR_RNDN);
        return r;
    }
    static long precision(const mpfr_real& x) { return x.precision(); }
    /// Formula constants are worth caching (model/formula/real.hpp).
    static constexpr bool caches_constants = true;
    /// The number of exact_text(x), at its precision.
    static mpfr_real from_exact_text(const std::string& text);
    static mpfr_real pi(const context& ctx) { return pi_mpfr(ctx); }
    static mpfr_real nan(const context& ctx) {
        mpfr_real r(ctx.precision_bits);
        mpfr_set_nan(r.raw());
        return r;
    }
};

} // namespace attnprop::numeric
