#include "model/formula/real.hpp"

#include <algorithm>
#include <cmath>

namespace attnprop::model::formula {

double int_pow(double x, long k, const numeric::context&) {
    if (k < 0 && x == 0.0)
        throw numeric::undefined_error("zero raised to a negative power");
    return std::pow(x, static_cast<double>(k));
}

numeric::mpfr_real int_pow(const numeric::mpfr_real& x, long k, const numeric::context&) {
    if (k < 0 && mpfr_zero_p(x.raw()))
        throw numeric::undefined_error("zero raised to a negative power");
    numeric::mpfr_real r(x.precision());
    mpfr_pow_si(r.raw(), x.raw(), k, MPFR_RNDN);
    return r;
}

numeric::arb_ball int_pow(const numeric::arb_ball& x, long k, const numeric::context&) {
    numeric::arb_ball r(x.precision());
    arb_pow_ui(r.raw(), x.raw(), static_cast<ulong>(k < 0 ? -k : k), x.precision());
    if (k < 0)
        arb_inv(r.raw(), r.raw(), x.precision());
    return r;
}

double real_pow(double a, double b, const numeric::context&) {
    if (a == 0.0) {
        if (b > 0.0)
            return 0.0;
        throw numeric::undefined_error("zero raised to a non-positive power");
    }
    if (a < 0.0)
        throw numeric::undefined_error("non-integer power of a negative number");
    return std::pow(a, b);
}

numeric::mpfr_real real_pow(const numeric::mpfr_real& a, const numeric::mpfr_real& b,
                            const numeric::context&) {
    if (mpfr_nan_p(a.raw()) || mpfr_nan_p(b.raw()))
        throw numeric::undefined_error("NaN in a power");
    if (mpfr_zero_p(a.raw()) && mpfr_sgn(b.raw()) <= 0)
        throw numeric::undefined_error("zero raised to a non-positive power");
    if (mpfr_sgn(a.raw()) < 0)
        throw numeric::undefined_error("non-integer power of a negative number");
    numeric::mpfr_real r(std::max(a.precision(), b.precision()));
    mpfr_pow(r.raw(), a.raw(), b.raw(), MPFR_RNDN);
    return r;
}

numeric::arb_ball real_pow(const numeric::arb_ball& a, const numeric::arb_ball& b,
                           const numeric::context&) {
    long prec = std::max(a.precision(), b.precision());
    numeric::arb_ball r(prec);
    arb_pow(r.raw(), a.raw(), b.raw(), prec);
    return r;
}

void check_finite(double x) { numeric::require_finite(x); }

void check_finite(const numeric::mpfr_real& x) { numeric::require_finite(x); }

} // namespace attnprop::model::formula
