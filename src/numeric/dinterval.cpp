#include "numeric/dinterval.hpp"
#include "numeric/exact_text.hpp"

#include <cmath>

namespace attnprop::numeric {

dinterval dot_acc(dinterval acc, const dinterval* a, const dinterval* b, std::size_t len) {
    static_assert(sizeof(dinterval) == sizeof(interval));
    return dinterval(dot_acc(acc.value(), reinterpret_cast<const interval*>(a),
                             reinterpret_cast<const interval*>(b), len));
}

dinterval dot_acc(dinterval acc, const dinterval* a, const dinterval* b, const std::size_t* idx,
                  std::size_t count) {
    return dinterval(dot_acc(acc.value(), reinterpret_cast<const interval*>(a),
                             reinterpret_cast<const interval*>(b), idx, count));
}

dinterval exp(const dinterval& x) {
    if (!is_finite(x)) {
        // e^x over an unbounded set: [e^lo, inf] (or the whole line for a NaN-like entire).
        const double lo = std::isfinite(x.lo()) ? exp_enclosure(x.lo()).lo() : 0.0;
        const double hi = std::isfinite(x.hi()) ? exp_enclosure(x.hi()).hi()
                                                : std::numeric_limits<double>::infinity();
        return {lo, hi};
    }
    if (x.is_point()) return dinterval(exp_enclosure(x.lo()));
    return {exp_enclosure(x.lo()).lo(), exp_enclosure(x.hi()).hi()};
}

dinterval log(const dinterval& x) {
    if (!(x.lo() > 0)) return dinterval::entire();
    if (x.is_point()) return dinterval(log_enclosure(x.lo()));
    return {log_enclosure(x.lo()).lo(), log_enclosure(x.hi()).hi()};
}

dinterval sqrt(const dinterval& x) {
    if (x.lo() < 0) return dinterval::entire();
    if (x.is_point()) return dinterval(sqrt_enclosure(x.lo()));
    return {sqrt_enclosure(x.lo()).lo(), sqrt_enclosure(x.hi()).hi()};
}

dinterval sqrt_nonneg(const dinterval& x) {
    if (x.hi() < 0) return dinterval::entire();
    return sqrt(dinterval(std::max(0.0, x.lo()), x.hi()));
}

dinterval tanh(const dinterval& x) {
    if (x.is_point()) return dinterval(tanh_enclosure(x.lo()));
    const double lo = std::isfinite(x.lo()) ? tanh_enclosure(x.lo()).lo() : -1.0;
    const double hi = std::isfinite(x.hi()) ? tanh_enclosure(x.hi()).hi() : 1.0;
    return {lo, hi};
}

dinterval sin(const dinterval& x) { return dinterval(sin_enclosure(x.value())); }
dinterval cos(const dinterval& x) { return dinterval(cos_enclosure(x.value())); }

dinterval erf(const dinterval& x) {
    if (x.is_point()) return dinterval(erf_enclosure(x.lo()));
    // Increasing: the end points' enclosures bound the image; erf(+-inf) = +-1.
    return {erf_enclosure(x.lo()).lo(), erf_enclosure(x.hi()).hi()};
}

dinterval erfc(const dinterval& x) {
    if (x.is_point()) return dinterval(erfc_enclosure(x.lo()));
    // Decreasing; erfc(-inf) = 2, erfc(inf) = 0.
    return {erfc_enclosure(x.hi()).lo(), erfc_enclosure(x.lo()).hi()};
}

dinterval pi_interval() {
    // pi = 3.14159265358979323846...; the doubles around it.
    constexpr double p = 3.141592653589793; // below pi (pi - p = 1.2e-16 > 0)
    return {p, interval_detail::next_up(p)};
}

std::optional<rational> exact_value(const dinterval& x) { return exact_value(x.value()); }
bool contains(const dinterval& x, const rational& q) { return contains(x.value(), q); }
bool contains(const dinterval& x, const mpfr_real& y) {
    if (mpfr_nan_p(y.raw())) return false;
    return mpfr_cmp_d(y.raw(), x.lo()) >= 0 && mpfr_cmp_d(y.raw(), x.hi()) <= 0;
}

arb_ball to_ball(const dinterval& x) {
    arb_ball b(128);
    if (!is_finite(x)) {
        arb_indeterminate(b.raw());
        return b;
    }
    if (x.is_point()) {
        arb_set_d(b.raw(), x.lo());
        return b;
    }
    arf_t lo, hi;
    arf_init(lo);
    arf_init(hi);
    arf_set_d(lo, x.lo());
    arf_set_d(hi, x.hi());
    arb_set_interval_arf(b.raw(), lo, hi, 128);
    arf_clear(lo);
    arf_clear(hi);
    return b;
}

dinterval from_ball(const arb_ball& b) {
    if (!is_finite(b)) return dinterval::entire();
    arf_t lo, hi;
    arf_init(lo);
    arf_init(hi);
    arb_get_lbound_arf(lo, b.raw(), 64);
    arb_get_ubound_arf(hi, b.raw(), 64);
    const double l = arf_get_d(lo, ARF_RND_FLOOR), h = arf_get_d(hi, ARF_RND_CEIL);
    arf_clear(lo);
    arf_clear(hi);
    return dinterval(interval_detail::normalise(l, h));
}

double radius_as_double(const dinterval& x) {
    if (!is_finite(x)) return std::numeric_limits<double>::infinity();
    if (x.is_point()) return 0.0;
    // (hi - lo) / 2 rounded up: the subtraction rounded up, then halved (exact unless subnormal).
    return interval_detail::next_up(interval_detail::add_up(x.hi(), -x.lo()) / 2);
}

std::string exact_text(const dinterval& x) {
    return exact_text_detail::hex_bits(x.lo()) + exact_text_detail::hex_bits(x.hi());
}

dinterval scalar_traits<dinterval>::from_exact_text(const std::string& text) {
    if (text.size() != 32) exact_text_detail::malformed(text);
    return dinterval(exact_text_detail::from_hex_bits(text, 0), exact_text_detail::from_hex_bits(text, 16));
}

} // namespace attnprop::numeric
