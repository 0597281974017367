#include "numeric/ball_bounds.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace attnprop::numeric {

arb_ball pos_inf(long precision_bits) {
    arb_ball r(precision_bits);
    arb_pos_inf(r.raw());
    return r;
}

arb_ball zero_point(long precision_bits) { return arb_ball(precision_bits); }

bool finite(const arb_ball& x) { return arb_is_finite(x.raw()) != 0; }

arb_ball upper(const arb_ball& x) {
    arb_ball r(x.precision());
    if (!arb_is_finite(x.raw())) {
        arb_pos_inf(r.raw());
        return r;
    }
    arf_t u;
    arf_init(u);
    arb_get_ubound_arf(u, x.raw(), x.precision());
    arb_set_arf(r.raw(), u);
    arf_clear(u);
    return r;
}

arb_ball lower(const arb_ball& x) {
    arb_ball r(x.precision());
    if (!arb_is_finite(x.raw())) {
        arb_neg_inf(r.raw());
        return r;
    }
    arf_t u;
    arf_init(u);
    arb_get_lbound_arf(u, x.raw(), x.precision());
    arb_set_arf(r.raw(), u);
    arf_clear(u);
    return r;
}

arb_ball max_upper(const arb_ball& a, const arb_ball& b) {
    arb_ball ua = upper(a), ub = upper(b);
    return arf_cmp(arb_midref(ua.raw()), arb_midref(ub.raw())) >= 0 ? ua : ub;
}

arb_ball min_upper(const arb_ball& a, const arb_ball& b) {
    arb_ball ua = upper(a), ub = upper(b);
    return arf_cmp(arb_midref(ua.raw()), arb_midref(ub.raw())) <= 0 ? ua : ub;
}

namespace {

/// The decimal of an endpoint `e` of a ball (upper(x) or lower(x)) with `digits` significant
/// digits, rounded away from the ball (`up`: the printed decimal is >= e, else <= e).
std::string endpoint_decimal(const arb_ball& e, int digits, bool up) {
    if (!finite(e)) return up ? "inf" : "-inf";
    if (arf_is_zero(arb_midref(e.raw()))) return "0";
    mpfr_t r;
    mpfr_init2(r, 64);
    arf_get_mpfr(r, arb_midref(e.raw()), up ? MPFR_RNDU : MPFR_RNDD);
    if (mpfr_inf_p(r)) {
        const bool positive = mpfr_sgn(r) > 0;
        mpfr_clear(r);
        return positive ? "inf" : "-inf";
    }
    char* buf = nullptr;
    const int d = std::clamp(digits, 1, 40);
    // %Rg with directed rounding: the printed decimal lies on the safe side of the endpoint.
    mpfr_asprintf(&buf, up ? "%.*RUg" : "%.*RDg", d, r);
    std::string out(buf);
    mpfr_free_str(buf);
    mpfr_clear(r);
    return out;
}

} // namespace

std::string upper_decimal(const arb_ball& x, int digits) { return endpoint_decimal(upper(x), digits, true); }

std::string lower_decimal(const arb_ball& x, int digits) { return endpoint_decimal(lower(x), digits, false); }

std::string bound_label(std::string_view decimal, bound_side side, bool unicode) {
    if (decimal.empty() || decimal == "-") return std::string(decimal);
    const char* mark = side == bound_side::upper ? (unicode ? "≤ " : "<= ") : (unicode ? "≥ " : ">= ");
    return mark + std::string(decimal);
}

std::string bound_display(const arb_ball& x, bound_side side, int digits) {
    return bound_label(side == bound_side::upper ? upper_decimal(x, digits) : lower_decimal(x, digits),
                       side);
}

std::string radius_around(const arb_ball& x, std::string_view midpoint) {
    if (!arb_is_finite(x.raw())) return "inf";
    const long prec = std::max(x.precision(), 64L) + 64;
    arb_ball m(prec);
    if (arb_set_str(m.raw(), std::string(midpoint).c_str(), prec) != 0) return "inf";
    arb_ball d(prec);
    arb_sub(d.raw(), x.raw(), m.raw(), prec);
    arb_ball far(prec);
    arb_get_abs_ubound_arf(arb_midref(far.raw()), d.raw(), prec);
    return upper_decimal(far, 4);
}

std::string rounded_display(const arb_ball& x, int digits) {
    if (!arb_is_finite(x.raw())) return "inf";
    if (arb_is_zero(x.raw())) return "0";
    // Around 0 no digit is shared that would not read as an exact 0: midpoint and radius.
    if (arb_contains_zero(x.raw())) return certified_string(x, std::max(1, digits));
    const long prec = std::max(x.precision(), 64L) + 64;
    for (int d = std::max(1, digits); d >= 1; --d) {
        const std::string s = midpoint_decimal_string(x, d);
        // s rounds every point of x when x lies in [s - u/2, s + u/2], u a unit of s's last
        // digit: |x - s| <= u/2, with u from the digits of s.
        const auto e = s.find_first_of("eE");
        const std::string mant = s.substr(0, e);
        const long exp10 = e == std::string::npos ? 0 : std::strtol(s.c_str() + e + 1, nullptr, 10);
        const auto dot = mant.find('.');
        const long decimals = dot == std::string::npos ? 0 : static_cast<long>(mant.size() - dot - 1);
        arb_ball m(prec), half(prec), d_ball(prec);
        if (arb_set_str(m.raw(), s.c_str(), prec) != 0) break;
        // half = 10^(exp10 - decimals) / 2, below the true half-unit (rounded down).
        const long k = exp10 - decimals;
        arb_ui_pow_ui(half.raw(), 10, static_cast<ulong>(k < 0 ? -k : k), prec);
        if (k < 0) arb_inv(half.raw(), half.raw(), prec);
        arb_mul_2exp_si(half.raw(), half.raw(), -1);
        arb_sub(d_ball.raw(), x.raw(), m.raw(), prec);
        arb_abs(d_ball.raw(), d_ball.raw());
        // Every point of |x - s| below every point of the half-unit, both enclosures.
        if (arb_lt(d_ball.raw(), half.raw())) return s;
    }
    return certified_string(x, std::max(1, digits));
}

int certified_digits(std::string_view text) {
    const auto pm = text.find("+/-");
    // The midpoint's significant digits: those after the leading zeros, up to the exponent.
    auto significant = [](std::string_view m) {
        int count = 0;
        bool leading = true, any = false;
        for (char c : m) {
            if (c == 'e' || c == 'E') break;
            if (!std::isdigit(static_cast<unsigned char>(c))) continue;
            any = true;
            if (leading && c == '0') continue;
            leading = false;
            ++count;
        }
        return any ? count : -1;
    };
    if (pm == std::string_view::npos) return significant(text) < 0 ? -1 : exact_digits;
    std::string_view mid = text.substr(0, pm);
    while (!mid.empty() && (mid.back() == ' ' || mid.front() == '[')) mid = mid.back() == ' ' ? mid.substr(0, mid.size() - 1) : mid.substr(1);
    if (!mid.empty()) return significant(mid);
    // "+/- r": the enclosure holds 0; r <= 10^-D pins D decimals.
    const std::string r(text.substr(pm + 3));
    char* end = nullptr;
    const double rad = std::strtod(r.c_str(), &end);
    if (end == r.c_str() || !(rad > 0) || !std::isfinite(rad)) return -1;
    return static_cast<int>(std::floor(-std::log10(rad)));
}

} // namespace attnprop::numeric
