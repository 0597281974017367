#include "numeric/mpfr_real.hpp"
#include "numeric/exact_text.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace attnprop::numeric {

namespace {

mpfr_prec_t joint(const mpfr_real& a, const mpfr_real& b) {
    return std::max(mpfr_get_prec(a.raw()), mpfr_get_prec(b.raw()));
}

void check_not_nan(const mpfr_real& x, const char* what) {
    if (mpfr_nan_p(x.raw()))
        throw undefined_error(std::string("NaN in a ") + what + " (an operation without a value)");
}

template <class Op> mpfr_real unary(const mpfr_real& x, Op op) {
    mpfr_real r(x.precision());
    op(r.raw(), x.raw(), MPFR_RNDN);
    return r;
}

} // namespace

mpfr_real mpfr_real::from_rational(const rational& q, const context& ctx) {
    mpfr_real r(ctx.precision_bits);
    mpfr_set_q(r.v_, q.backend().data(), MPFR_RNDN);
    return r;
}

mpfr_real mpfr_real::from_double(double x, const context& ctx) {
    mpfr_real r(std::max(53L, ctx.precision_bits));
    mpfr_set_d(r.v_, x, MPFR_RNDN);
    return r;
}

mpfr_real& mpfr_real::operator+=(const mpfr_real& b) {
    if (mpfr_get_prec(b.v_) > mpfr_get_prec(v_)) mpfr_prec_round(v_, mpfr_get_prec(b.v_), MPFR_RNDN);
    mpfr_add(v_, v_, b.v_, MPFR_RNDN);
    return *this;
}
mpfr_real& mpfr_real::operator-=(const mpfr_real& b) {
    if (mpfr_get_prec(b.v_) > mpfr_get_prec(v_)) mpfr_prec_round(v_, mpfr_get_prec(b.v_), MPFR_RNDN);
    mpfr_sub(v_, v_, b.v_, MPFR_RNDN);
    return *this;
}
mpfr_real& mpfr_real::operator*=(const mpfr_real& b) {
    if (mpfr_get_prec(b.v_) > mpfr_get_prec(v_)) mpfr_prec_round(v_, mpfr_get_prec(b.v_), MPFR_RNDN);
    mpfr_mul(v_, v_, b.v_, MPFR_RNDN);
    return *this;
}
mpfr_real& mpfr_real::operator/=(const mpfr_real& b) {
    if (mpfr_zero_p(b.v_)) throw undefined_error("division by zero");
    if (mpfr_get_prec(b.v_) > mpfr_get_prec(v_)) mpfr_prec_round(v_, mpfr_get_prec(b.v_), MPFR_RNDN);
    mpfr_div(v_, v_, b.v_, MPFR_RNDN);
    return *this;
}

mpfr_real operator+(const mpfr_real& a, const mpfr_real& b) {
    mpfr_real r(joint(a, b));
    mpfr_add(r.raw(), a.raw(), b.raw(), MPFR_RNDN);
    return r;
}
mpfr_real operator-(const mpfr_real& a, const mpfr_real& b) {
    mpfr_real r(joint(a, b));
    mpfr_sub(r.raw(), a.raw(), b.raw(), MPFR_RNDN);
    return r;
}
mpfr_real operator*(const mpfr_real& a, const mpfr_real& b) {
    mpfr_real r(joint(a, b));
    mpfr_mul(r.raw(), a.raw(), b.raw(), MPFR_RNDN);
    return r;
}
mpfr_real operator/(const mpfr_real& a, const mpfr_real& b) {
    if (mpfr_zero_p(b.raw())) throw undefined_error("division by zero");
    mpfr_real r(joint(a, b));
    mpfr_div(r.raw(), a.raw(), b.raw(), MPFR_RNDN);
    return r;
}
mpfr_real operator-(const mpfr_real& a) { return unary(a, mpfr_neg); }

order compare(const mpfr_real& a, const mpfr_real& b) {
    check_not_nan(a, "comparison");
    check_not_nan(b, "comparison");
    int c = mpfr_cmp(a.raw(), b.raw());
    return c < 0 ? order::less : (c > 0 ? order::greater : order::equal);
}

void fma_acc(mpfr_real& acc, const mpfr_real& a, const mpfr_real& b) {
    mpfr_prec_t p = std::max(joint(a, b), mpfr_get_prec(acc.raw()));
    if (p > mpfr_get_prec(acc.raw())) mpfr_prec_round(acc.raw(), p, MPFR_RNDN);
    mpfr_fma(acc.raw(), a.raw(), b.raw(), acc.raw(), MPFR_RNDN);
}

mpfr_real exp(const mpfr_real& x) { return unary(x, mpfr_exp); }
mpfr_real log(const mpfr_real& x) {
    if (mpfr_nan_p(x.raw()) || mpfr_sgn(x.raw()) <= 0)
        throw undefined_error("log of a non-positive number");
    return unary(x, mpfr_log);
}
mpfr_real sqrt(const mpfr_real& x) {
    if (mpfr_nan_p(x.raw()) || mpfr_sgn(x.raw()) < 0)
        throw undefined_error("square root of a negative number");
    return unary(x, mpfr_sqrt);
}
mpfr_real tanh(const mpfr_real& x) { return unary(x, mpfr_tanh); }
mpfr_real sin(const mpfr_real& x) { return unary(x, mpfr_sin); }
mpfr_real cos(const mpfr_real& x) { return unary(x, mpfr_cos); }
mpfr_real erf(const mpfr_real& x) { return unary(x, mpfr_erf); }
mpfr_real erfc(const mpfr_real& x) { return unary(x, mpfr_erfc); }
mpfr_real abs(const mpfr_real& x) { return unary(x, mpfr_abs); }
mpfr_real floor(const mpfr_real& x) {
    mpfr_real r(x.precision());
    mpfr_floor(r.raw(), x.raw());
    return r;
}
mpfr_real pi_mpfr(const context& ctx) {
    mpfr_real r(ctx.precision_bits);
    mpfr_const_pi(r.raw(), MPFR_RNDN);
    return r;
}

rational to_rational(const mpfr_real& x) {
    if (!mpfr_number_p(x.raw()))
        throw undefined_error(mpfr_nan_p(x.raw()) ? "NaN (an operation without a value)"
                                                  : "overflow to infinity (MPFR)");
    rational r;
    if (mpfr_zero_p(x.raw())) return r;
    mpz_t m;
    mpz_init(m);
    mpfr_exp_t e = mpfr_get_z_2exp(m, x.raw());
    integer mi;
    mpz_set(mi.backend().data(), m);
    mpz_clear(m);
    r = rational(mi);
    if (e > 0) {
        integer p;
        mpz_ui_pow_ui(p.backend().data(), 2, static_cast<unsigned long>(e));
        r *= rational(p);
    } else if (e < 0) {
        integer p;
        mpz_ui_pow_ui(p.backend().data(), 2, static_cast<unsigned long>(-e));
        r /= rational(p);
    }
    return r;
}

std::string mpfr_range_watch::reason() const {
    std::string s;
    if (underflow())
        s = "MPFR underflowed (a result below 2^" + std::to_string(mpfr_get_emin() - 1) +
            " was rounded, to 0 or the smallest number)";
    if (overflow())
        s += std::string(s.empty() ? "" : " and ") + "MPFR overflowed (a result above 2^" +
             std::to_string(mpfr_get_emax()) + " was rounded to infinity)";
    return s;
}

double to_double(const mpfr_real& x) { return mpfr_get_d(x.raw(), MPFR_RNDN); }

std::string to_decimal_string(const mpfr_real& x, int digits) {
    char* buf = nullptr;
    mpfr_asprintf(&buf, "%.*Rg", std::max(1, digits), x.raw());
    std::string s(buf);
    mpfr_free_str(buf);
    return s;
}

std::size_t repr_hash(const mpfr_real& x) {
    mpfr_srcptr p = x.raw();
    std::size_t h = std::hash<long>{}(static_cast<long>(mpfr_signbit(p))) * 31u;
    if (!mpfr_regular_p(p)) return h ^ static_cast<std::size_t>(mpfr_zero_p(p) ? 1 : 2);
    h ^= std::hash<long>{}(static_cast<long>(mpfr_get_exp(p))) + 0x9e3779b97f4a7c15ULL + (h << 6);
    std::size_t limbs = (static_cast<std::size_t>(mpfr_get_prec(p)) + GMP_NUMB_BITS - 1) / GMP_NUMB_BITS;
    for (std::size_t i = 0; i < limbs; ++i)
        h ^= std::hash<mp_limb_t>{}(p->_mpfr_d[i]) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

bool same_value(const mpfr_real& a, const mpfr_real& b) {
    if (mpfr_nan_p(a.raw()) || mpfr_nan_p(b.raw())) return false;
    return mpfr_equal_p(a.raw(), b.raw()) != 0 && mpfr_signbit(a.raw()) == mpfr_signbit(b.raw());
}

std::string exact_text(const mpfr_real& x) {
    const std::string prec = std::to_string(mpfr_get_prec(x.raw())) + " ";
    if (!mpfr_number_p(x.raw())) return prec + (mpfr_nan_p(x.raw()) ? "@NaN@" : mpfr_sgn(x.raw()) < 0 ? "-@Inf@" : "@Inf@");
    mpfr_exp_t e = 0;
    char* s = mpfr_get_str(nullptr, &e, 16, 0, x.raw(), MPFR_RNDN);
    std::string digits(s);
    mpfr_free_str(s);
    const bool negative = !digits.empty() && digits.front() == '-';
    return prec + (negative ? "-0." + digits.substr(1) : "0." + digits) + "@" + std::to_string(e);
}

mpfr_real scalar_traits<mpfr_real>::from_exact_text(const std::string& text) {
    const auto [prec, rest] = exact_text_detail::split_precision(text);
    mpfr_real x(prec);
    if (mpfr_set_str(x.raw(), rest.c_str(), 16, MPFR_RNDN) != 0) exact_text_detail::malformed(text);
    return x;
}

mpfr_real int_pow(const mpfr_real& x, long k, const context&) {
    if (k < 0 && mpfr_zero_p(x.raw()))
        throw undefined_error("zero raised to a negative power");
    mpfr_real r(x.precision());
    mpfr_pow_si(r.raw(), x.raw(), k, MPFR_RNDN);
    return r;
}

mpfr_real real_pow(const mpfr_real& a, const mpfr_real& b, const context&) {
    if (mpfr_nan_p(a.raw()) || mpfr_nan_p(b.raw()))
        throw undefined_error("NaN in a power");
    if (mpfr_zero_p(a.raw()) && mpfr_sgn(b.raw()) <= 0)
        throw undefined_error("zero raised to a non-positive power");
    if (mpfr_sgn(a.raw()) < 0)
        throw undefined_error("non-integer power of a negative number");
    mpfr_real r(std::max(a.precision(), b.precision()));
    mpfr_pow(r.raw(), a.raw(), b.raw(), MPFR_RNDN);
    return r;
}

} // namespace attnprop::numeric
