#include "numeric/scalar.hpp"

#include <cmath>
#include <cstdio>
#include <functional>

namespace attnprop::numeric {

rational floor(const rational& x) {
    integer q = boost::multiprecision::numerator(x) / boost::multiprecision::denominator(x);
    rational r(q); // truncated toward zero
    if (r > x) r -= 1;
    return r;
}

std::size_t repr_hash(const rational& x) {
    std::size_t h = std::hash<std::string>{}(boost::multiprecision::numerator(x).str(16));
    return h ^ (std::hash<std::string>{}(boost::multiprecision::denominator(x).str(16)) + (h << 6));
}

undefined_error non_finite_error(double x) {
    return undefined_error(std::isnan(x) ? "NaN (an operation without a value)"
                                         : "overflow to infinity (double)");
}
undefined_error non_finite_error(const mpfr_real& x) {
    return undefined_error(mpfr_nan_p(x.raw()) ? "NaN (an operation without a value)"
                                               : "overflow to infinity (MPFR)");
}
undefined_error non_finite_error(const arb_ball& x) {
    return undefined_error("the enclosure is not finite at " + std::to_string(x.precision()) +
                               " bits (a pole of the model, or a value not resolved at this "
                               "precision)",
                           {}, true);
}
undefined_error non_finite_error(const dinterval&) {
    return undefined_error("the enclosure is not finite in double intervals (a pole of the "
                           "model, an overflow, or a value not resolved at 53 bits)",
                           {}, true);
}

std::string to_display_string(const rational& x, int) { return to_exact_string(x); }
std::string to_display_string(double x, int digits) { return to_decimal(x, digits); }
std::string to_display_string(const mpfr_real& x, int digits) { return to_decimal(x, digits); }
std::string to_display_string(const arb_ball& x, int digits) { return to_decimal(x, digits); }
std::string to_display_string(const interval& x, int digits) { return to_decimal(x, digits); }
std::string to_display_string(const dinterval& x, int digits) { return to_decimal(x, digits); }

std::string to_certified_display(const rational& x, int, bool) { return to_exact_string(x); }
std::string to_certified_display(double x, int digits, bool) { return to_decimal(x, digits); }
std::string to_certified_display(const mpfr_real& x, int digits, bool) {
    return to_decimal(x, digits);
}
std::string to_certified_display(const arb_ball& x, int digits, bool force_digits) {
    return certified_string(x, digits, force_digits);
}
std::string to_certified_display(const dinterval& x, int digits, bool force_digits) {
    return to_certified_display(to_ball(x), digits, force_digits);
}
std::string to_certified_display(const interval& x, int digits, bool force_digits) {
    if (!std::isfinite(x.lo()) || !std::isfinite(x.hi())) return "undefined";
    arb_ball b(64);
    arf_t lo, hi;
    arf_init(lo);
    arf_init(hi);
    arf_set_d(lo, x.lo());
    arf_set_d(hi, x.hi());
    arb_set_interval_arf(b.raw(), lo, hi, 64);
    arf_clear(lo);
    arf_clear(hi);
    return certified_string(b, digits, force_digits);
}

std::string to_decimal(const rational& x, int digits) { return to_decimal_string(x, digits); }
std::string to_decimal(double x, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", std::clamp(digits, 1, 17), x);
    return buf;
}
std::string to_decimal(const mpfr_real& x, int digits) { return to_decimal_string(x, digits); }
std::string to_decimal(const arb_ball& x, int digits) {
    return midpoint_decimal_string(x, digits);
}
std::string to_decimal(const interval& x, int digits) { return to_decimal(to_double(x), digits); }
// A certified interval prints like the ball with the same reals (midpoint and radius).
std::string to_decimal(const dinterval& x, int digits) { return to_decimal(to_ball(x), digits); }

std::string radius_string(const rational&) { return "0"; }
std::string radius_string(double) { return "0"; }
std::string radius_string(const mpfr_real&) { return "0"; }
std::string radius_string(const arb_ball& x) { return radius_decimal_string(x); }
std::string radius_string(const dinterval& x) { return radius_string(to_ball(x)); }
std::string radius_string(const interval& x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3e", (x.hi() - x.lo()) / 2);
    return buf;
}

} // namespace attnprop::numeric
