#include "numeric/arb_ball.hpp"
#include "numeric/exact_text.hpp"

#include <arb_hypgeom.h>
#include <flint/fmpq.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace attnprop::numeric {

namespace {

long joint(const arb_ball& a, const arb_ball& b) { return std::max(a.precision(), b.precision()); }

struct fmpq_holder {
    fmpq_t q;
    explicit fmpq_holder(const rational& r) {
        fmpq_init(q);
        fmpq_set_mpq(q, r.backend().data());
    }
    ~fmpq_holder() { fmpq_clear(q); }
    fmpq_holder(const fmpq_holder&) = delete;
    fmpq_holder& operator=(const fmpq_holder&) = delete;
};

template <class Op> arb_ball unary(const arb_ball& x, Op op) {
    arb_ball r(x.precision());
    op(r.raw(), x.raw(), x.precision());
    return r;
}

} // namespace

arb_ball arb_ball::from_rational(const rational& q, const context& ctx) {
    arb_ball r(ctx.precision_bits);
    fmpq_holder f(q);
    arb_set_fmpq(r.v_, f.q, ctx.precision_bits);
    return r;
}

arb_ball arb_ball::from_double(double x, const context& ctx) {
    arb_ball r(ctx.precision_bits);
    arb_set_d(r.v_, x);
    return r;
}

arb_ball& arb_ball::operator+=(const arb_ball& b) {
    prec_ = joint(*this, b);
    arb_add(v_, v_, b.v_, prec_);
    return *this;
}
arb_ball& arb_ball::operator-=(const arb_ball& b) {
    prec_ = joint(*this, b);
    arb_sub(v_, v_, b.v_, prec_);
    return *this;
}
arb_ball& arb_ball::operator*=(const arb_ball& b) {
    prec_ = joint(*this, b);
    arb_mul(v_, v_, b.v_, prec_);
    return *this;
}
arb_ball& arb_ball::operator/=(const arb_ball& b) {
    prec_ = joint(*this, b);
    arb_div(v_, v_, b.v_, prec_);
    return *this;
}

arb_ball operator+(const arb_ball& a, const arb_ball& b) {
    arb_ball r(joint(a, b));
    arb_add(r.raw(), a.raw(), b.raw(), r.precision());
    return r;
}
arb_ball operator-(const arb_ball& a, const arb_ball& b) {
    arb_ball r(joint(a, b));
    arb_sub(r.raw(), a.raw(), b.raw(), r.precision());
    return r;
}
arb_ball operator*(const arb_ball& a, const arb_ball& b) {
    arb_ball r(joint(a, b));
    arb_mul(r.raw(), a.raw(), b.raw(), r.precision());
    return r;
}
arb_ball operator/(const arb_ball& a, const arb_ball& b) {
    arb_ball r(joint(a, b));
    arb_div(r.raw(), a.raw(), b.raw(), r.precision());
    return r;
}
arb_ball operator-(const arb_ball& a) {
    arb_ball r(a.precision());
    arb_neg(r.raw(), a.raw());
    return r;
}

order compare(const arb_ball& a, const arb_ball& b) {
    if (arb_lt(a.raw(), b.raw())) return order::less;
    if (arb_gt(a.raw(), b.raw())) return order::greater;
    if (arb_eq(a.raw(), b.raw())) return order::equal;
    return order::unknown;
}

void fma_acc(arb_ball& acc, const arb_ball& a, const arb_ball& b) {
    long p = std::max(acc.precision(), joint(a, b));
    arb_addmul(acc.raw(), a.raw(), b.raw(), p);
    acc.set_precision(p);
}

arb_ball exp(const arb_ball& x) { return unary(x, arb_exp); }
arb_ball log(const arb_ball& x) { return unary(x, arb_log); }
arb_ball sqrt(const arb_ball& x) { return unary(x, arb_sqrt); }
arb_ball sqrt_nonneg(const arb_ball& x) { return unary(x, arb_sqrtpos); }
arb_ball tanh(const arb_ball& x) { return unary(x, arb_tanh); }
arb_ball sin(const arb_ball& x) { return unary(x, arb_sin); }
arb_ball cos(const arb_ball& x) { return unary(x, arb_cos); }
arb_ball erf(const arb_ball& x) { return unary(x, arb_hypgeom_erf); }
arb_ball erfc(const arb_ball& x) { return unary(x, arb_hypgeom_erfc); }
arb_ball abs(const arb_ball& x) {
    arb_ball r(x.precision());
    arb_abs(r.raw(), x.raw());
    return r;
}
arb_ball floor(const arb_ball& x) { return unary(x, arb_floor); }
arb_ball pi_ball(const context& ctx) {
    arb_ball r(ctx.precision_bits);
    arb_const_pi(r.raw(), ctx.precision_bits);
    return r;
}

bool is_exact(const arb_ball& x) { return arb_is_finite(x.raw()) && arb_is_exact(x.raw()); }
bool is_finite(const arb_ball& x) { return arb_is_finite(x.raw()); }

std::optional<rational> exact_value(const arb_ball& x) {
    if (!is_exact(x)) return std::nullopt;
    fmpq_t q;
    fmpq_init(q);
    arf_get_fmpq(q, arb_midref(x.raw()));
    rational r;
    fmpq_get_mpq(r.backend().data(), q);
    fmpq_clear(q);
    return r;
}

bool contains(const arb_ball& x, const rational& q) {
    fmpq_holder f(q);
    return arb_contains_fmpq(x.raw(), f.q) != 0;
}
bool contains(const arb_ball& x, const mpfr_real& y) {
    return arb_contains_mpfr(x.raw(), y.raw()) != 0;
}

std::string midpoint_decimal_string(const arb_ball& x, int digits) {
    arb_t m;
    arb_init(m);
    arb_get_mid_arb(m, x.raw());
    char* s = arb_get_str(m, std::max(1, digits), ARB_STR_NO_RADIUS);
    std::string out(s);
    flint_free(s);
    arb_clear(m);
    return out;
}

std::string radius_decimal_string(const arb_ball& x) {
    if (!arb_is_finite(x.raw())) return "inf";
    if (mag_is_zero(arb_radref(x.raw()))) return "0";
    mpfr_t r;
    mpfr_init2(r, 64);
    arf_t a;
    arf_init(a);
    arf_set_mag(a, arb_radref(x.raw()));
    arf_get_mpfr(r, a, MPFR_RNDU);
    char* buf = nullptr;
    mpfr_asprintf(&buf, "%.3RUe", r);
    std::string out(buf);
    mpfr_free_str(buf);
    arf_clear(a);
    mpfr_clear(r);
    return out;
}

namespace {

/// "0.500000" -> "0.5", "1.2500e-10" -> "1.25e-10", "100.000" -> "100": an exact decimal's
/// trailing zeros after the point say nothing.
std::string trim_exact_decimal(std::string s) {
    const auto e = s.find_first_of("eE");
    std::string mant = s.substr(0, e), ex = e == std::string::npos ? "" : s.substr(e);
    if (mant.find('.') != std::string::npos) {
        while (!mant.empty() && mant.back() == '0') mant.pop_back();
        if (!mant.empty() && mant.back() == '.') mant.pop_back();
    }
    return mant + ex;
}

} // namespace

std::string certified_string(const arb_ball& x, int max_digits, bool force_digits) {
    if (!arb_is_finite(x.raw())) return "undefined";
    char* raw = arb_get_str(x.raw(), std::max(1, max_digits), force_digits ? ARB_STR_MORE : 0);
    std::string s(raw);
    flint_free(raw);
    if (s.size() >= 2 && s.front() == '[' && s.back() == ']') return s.substr(1, s.size() - 2);
    return trim_exact_decimal(s); // Arb prints an exact value without brackets
}

std::string certified_string(const rational& lo, const rational& hi, int max_digits) {
    // Both ends exactly as balls at a precision that holds them, then their union.
    const long prec = 256;
    fmpq_holder a(lo), b(hi);
    arb_ball l(prec), h(prec);
    arb_set_fmpq(l.raw(), a.q, prec);
    arb_set_fmpq(h.raw(), b.q, prec);
    arb_ball u(prec);
    arb_union(u.raw(), l.raw(), h.raw(), prec);
    return certified_string(u, max_digits);
}

double to_double(const arb_ball& x) { return arf_get_d(arb_midref(x.raw()), ARF_RND_NEAR); }

double radius_as_double(const arb_ball& x) {
    if (!arb_is_finite(x.raw())) return INFINITY;
    return mag_get_d(arb_radref(x.raw()));
}

std::size_t repr_hash(const arb_ball& x) {
    // Hash through the nearest double of the midpoint and radius: equal representations hash
    // equally; distinct ones that collide are told apart by same_value.
    std::size_t h = std::hash<double>{}(to_double(x));
    return h ^ (std::hash<double>{}(radius_as_double(x)) + 0x9e3779b97f4a7c15ULL + (h << 6));
}

bool same_value(const arb_ball& a, const arb_ball& b) { return arb_equal(a.raw(), b.raw()) != 0; }

std::string exact_text(const arb_ball& x) {
    char* s = arb_dump_str(x.raw());
    std::string dump(s);
    flint_free(s);
    return std::to_string(x.precision()) + " " + dump;
}

arb_ball scalar_traits<arb_ball>::from_exact_text(const std::string& text) {
    const auto [prec, rest] = exact_text_detail::split_precision(text);
    arb_ball x(prec);
    if (arb_load_str(x.raw(), rest.c_str()) != 0) exact_text_detail::malformed(text);
    return x;
}

arb_ball int_pow(const arb_ball& x, long k, const context&) {
    arb_ball r(x.precision());
    arb_pow_ui(r.raw(), x.raw(), static_cast<ulong>(k < 0 ? -k : k), x.precision());
    if (k < 0)
        arb_inv(r.raw(), r.raw(), x.precision());
    return r;
}

arb_ball real_pow(const arb_ball& a, const arb_ball& b, const context&) {
    long prec = std::max(a.precision(), b.precision());
    arb_ball r(prec);
    arb_pow(r.raw(), a.raw(), b.raw(), prec);
    return r;
}

} // namespace attnprop::numeric
