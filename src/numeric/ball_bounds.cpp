#include "numeric/ball_bounds.hpp"

#include <mpfr.h>

#include <algorithm>

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

std::string upper_decimal(const arb_ball& x, int digits) {
    arb_ball u = upper(x);
    if (!finite(u)) return "inf";
    if (arf_is_zero(arb_midref(u.raw()))) return "0";
    mpfr_t r;
    mpfr_init2(r, 64);
    arf_get_mpfr(r, arb_midref(u.raw()), MPFR_RNDU);
    if (mpfr_inf_p(r)) {
        const bool positive = mpfr_sgn(r) > 0;
        mpfr_clear(r);
        return positive ? "inf" : "-inf";
    }
    char* buf = nullptr;
    const int d = std::clamp(digits, 1, 40);
    // %Rg with upward rounding: the printed decimal is >= the value.
    mpfr_asprintf(&buf, "%.*RUg", d, r);
    std::string out(buf);
    mpfr_free_str(buf);
    mpfr_clear(r);
    return out;
}

std::string lower_decimal(const arb_ball& x, int digits) {
    arb_ball l = lower(x);
    if (!finite(l)) return "-inf";
    if (arf_is_zero(arb_midref(l.raw()))) return "0";
    mpfr_t r;
    mpfr_init2(r, 64);
    arf_get_mpfr(r, arb_midref(l.raw()), MPFR_RNDD);
    if (mpfr_inf_p(r)) {
        const bool positive = mpfr_sgn(r) > 0;
        mpfr_clear(r);
        return positive ? "inf" : "-inf";
    }
    char* buf = nullptr;
    const int d = std::clamp(digits, 1, 40);
    mpfr_asprintf(&buf, "%.*RDg", d, r);
    std::string out(buf);
    mpfr_free_str(buf);
    mpfr_clear(r);
    return out;
}

} // namespace attnprop::numeric
