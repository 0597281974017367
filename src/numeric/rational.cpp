#include "numeric/rational.hpp"
#include "numeric/exact_text.hpp"

#include <mpfr.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace attnprop::numeric {

namespace {

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool fail(std::string* error, std::string msg) {
    if (error) *error = std::move(msg);
    return false;
}

// Integer from decimal digits. Leading zeros are stripped first: Boost's gmp_int reads a
// leading 0 as an octal prefix ("025" would be 21).
integer decimal_integer(std::string_view digits) {
    while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
    return digits.empty() ? integer(0) : integer(std::string(digits));
}

// Integer with optional sign.
bool parse_integer(std::string_view s, integer& out, std::string* error) {
    bool neg = false;
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
        neg = s.front() == '-';
        s.remove_prefix(1);
    }
    if (!all_digits(s)) return fail(error, "expected an integer");
    out = decimal_integer(s);
    if (neg) out = -out;
    return true;
}

integer pow10(unsigned long e) {
    integer r;
    mpz_ui_pow_ui(r.backend().data(), 10, e);
    return r;
}

} // namespace

std::optional<rational> parse_rational(std::string_view text, std::string* error) {
    std::string_view s = trim(text);
    if (s.empty()) {
        fail(error, "empty number");
        return std::nullopt;
    }
    if (auto slash = s.find('/'); slash != std::string_view::npos) {
        integer p, q;
        if (!parse_integer(trim(s.substr(0, slash)), p, error)) return std::nullopt;
        std::string_view den = trim(s.substr(slash + 1));
        if (!den.empty() && (den.front() == '+' || den.front() == '-')) {
            fail(error, "the denominator must be an unsigned integer");
            return std::nullopt;
        }
        if (!parse_integer(den, q, error)) return std::nullopt;
        if (q == 0) {
            fail(error, "zero denominator");
            return std::nullopt;
        }
        return rational(p, q);
    }
    // Decimal literal: [sign] digits [. digits] [e [sign] digits], at least one digit before
    // or after the point.
    bool neg = false;
    if (s.front() == '+' || s.front() == '-') {
        neg = s.front() == '-';
        s.remove_prefix(1);
    }
    std::size_t epos = s.find_first_of("eE");
    std::string_view mant = s.substr(0, epos);
    std::string_view expo = epos == std::string_view::npos ? std::string_view{} : s.substr(epos + 1);
    std::size_t dot = mant.find('.');
    std::string_view ip = mant.substr(0, dot);
    std::string_view fp = dot == std::string_view::npos ? std::string_view{} : mant.substr(dot + 1);
    if ((ip.empty() && fp.empty()) || (!ip.empty() && !all_digits(ip)) ||
        (!fp.empty() && !all_digits(fp)) || (dot != std::string_view::npos && ip.empty() && fp.empty())) {
        fail(error, "malformed number");
        return std::nullopt;
    }
    long long e = 0;
    if (epos != std::string_view::npos) {
        std::string_view ed = expo;
        bool eneg = false;
        if (!ed.empty() && (ed.front() == '+' || ed.front() == '-')) {
            eneg = ed.front() == '-';
            ed.remove_prefix(1);
        }
        if (!all_digits(ed) || ed.size() > 9) {
            fail(error, ed.size() > 9 ? "exponent too large" : "malformed exponent");
            return std::nullopt;
        }
        e = std::stoll(std::string(ed));
        if (eneg) e = -e;
    }
    std::string digits = std::string(ip) + std::string(fp);
    e -= static_cast<long long>(fp.size());
    integer m = decimal_integer(digits);
    if (neg) m = -m;
    if (e > 100000 || e < -100000) {
        fail(error, "exponent too large");
        return std::nullopt;
    }
    if (e >= 0) return rational(m * pow10(static_cast<unsigned long>(e)));
    return rational(m, pow10(static_cast<unsigned long>(-e)));
}

std::string to_exact_string(const rational& q) {
    integer num = boost::multiprecision::numerator(q);
    integer den = boost::multiprecision::denominator(q);
    if (den == 1) return num.str();
    return num.str() + "/" + den.str();
}

namespace {

/// Whether the integer z has at most max_digits decimal digits (its sign not counted), without
/// writing a large z out.
bool digits_at_most(mpz_srcptr z, std::size_t max_digits) {
    if (max_digits == std::numeric_limits<std::size_t>::max()) return true;
    const std::size_t bound = mpz_sizeinbase(z, 10); // exact or one too many
    if (bound <= max_digits) return true;
    if (bound > max_digits + 1) return false;
    char* text = mpz_get_str(nullptr, 10, z);
    const std::size_t n = std::strlen(text) - (text[0] == '-' ? 1 : 0);
    void (*release)(void*, std::size_t) = nullptr;
    mp_get_memory_functions(nullptr, nullptr, &release);
    release(text, std::strlen(text) + 1);
    return n <= max_digits;
}

/// q = m * 10^e with an integer m and m having at most max_digits digits, when q's
/// denominator is 2^a 5^b; false otherwise. With `strip`, an integer's trailing zeros go to e
/// (else e = 0 for integers); a non-integer's m never ends in 0. Quasi-linear in the size of q
/// and of m (GMP's mpz_remove, shifts and powers, never a loop of single divisions): a
/// denominator of 10^100000 costs a millisecond, not seconds.
bool decimal_parts(const rational& q, std::size_t max_digits, bool strip, integer& m, long long& e) {
    mpq_srcptr v = q.backend().data();
    mpz_ptr out = m.backend().data();
    e = 0;
    if (mpz_sgn(mpq_numref(v)) == 0) {
        mpz_set_ui(out, 0);
        return true;
    }
    mpz_t den, f;
    mpz_init_set(den, mpq_denref(v));
    mpz_init(f);
    const mp_bitcnt_t twos = mpz_scan1(den, 0);
    mpz_tdiv_q_2exp(den, den, twos);
    mp_bitcnt_t fives = 0;
    if (mpz_cmp_ui(den, 1) != 0) {
        mpz_set_ui(f, 5);
        fives = mpz_remove(den, den, f);
    }
    const bool terminating = mpz_cmp_ui(den, 1) == 0;
    bool ok = terminating;
    if (ok && twos == 0 && fives == 0) {
        if (strip) {
            mpz_set_ui(f, 10);
            e = static_cast<long long>(mpz_remove(out, mpq_numref(v), f));
        } else {
            mpz_set(out, mpq_numref(v));
        }
        ok = digits_at_most(out, max_digits);
    } else if (ok) {
        // q = num * 2^(k - twos) 5^(k - fives) / 10^k. num is prime to the factor's prime, so m
        // has no trailing zero and at least the factor's digits: refuse early when those are
        // too many.
        const mp_bitcnt_t k = std::max(twos, fives);
        const double factor_digits = 0.30102999566 * static_cast<double>(k - twos) +
                                     0.69897000433 * static_cast<double>(k - fives);
        if (max_digits != std::numeric_limits<std::size_t>::max() &&
            factor_digits > static_cast<double>(max_digits) + 1) {
            ok = false;
        } else {
            mpz_mul_2exp(out, mpq_numref(v), k - twos);
            if (k > fives) {
                mpz_ui_pow_ui(f, 5, k - fives);
                mpz_mul(out, out, f);
            }
            e = -static_cast<long long>(k);
            ok = digits_at_most(out, max_digits);
        }
    }
    mpz_clear(den);
    mpz_clear(f);
    return ok;
}

} // namespace

std::optional<std::string> exact_decimal(const rational& q, std::size_t max_digits) {
    integer m;
    long long e = 0;
    if (!decimal_parts(q, max_digits, false, m, e)) return std::nullopt;
    const bool neg = m < 0;
    if (neg) m = -m;
    std::string digits = m.str();
    std::string s;
    if (neg) s += '-';
    if (e >= 0) {
        s.reserve(digits.size() + static_cast<std::size_t>(e) + 1);
        s += digits;
        if (digits != "0") s.append(static_cast<std::size_t>(e), '0');
        return s;
    }
    // The digits padded with zeros to more than k, the point before the last k.
    const std::size_t k = static_cast<std::size_t>(-e);
    if (digits.size() > k) {
        s.append(digits, 0, digits.size() - k);
        s += '.';
        s.append(digits, digits.size() - k, std::string::npos);
    } else {
        s.reserve(k + 3);
        s += "0.";
        s.append(k - digits.size(), '0');
        s += digits;
    }
    return s;
}

std::optional<std::string> exact_scientific(const rational& q, std::size_t max_digits) {
    integer m;
    long long e = 0;
    if (!decimal_parts(q, max_digits, true, m, e)) return std::nullopt;
    return m.str() + "e" + std::to_string(e);
}

std::string to_decimal_string(const rational& q, int digits) {
    if (digits < 1) digits = 1;
    if (auto d = exact_decimal(q, static_cast<std::size_t>(digits)); d) return *d;
    mpfr_t x;
    mpfr_init2(x, static_cast<mpfr_prec_t>(digits * 3.33) + 16);
    mpfr_set_q(x, q.backend().data(), MPFR_RNDN);
    char* buf = nullptr;
    mpfr_asprintf(&buf, "%.*Rg", digits, x);
    std::string s(buf);
    mpfr_free_str(buf);
    mpfr_clear(x);
    return s;
}

std::size_t exact_bits(const rational& q) {
    mpq_srcptr v = q.backend().data();
    if (mpz_sgn(mpq_numref(v)) == 0) return 0;
    return std::max(mpz_sizeinbase(mpq_numref(v), 2), mpz_sizeinbase(mpq_denref(v), 2));
}

order compare(const rational& a, const rational& b) {
    int c = a.compare(b);
    return c < 0 ? order::less : (c > 0 ? order::greater : order::equal);
}

rational rational_from_double(double x) {
    if (!std::isfinite(x)) throw numeric_error("cannot convert a non-finite double to a rational");
    rational r;
    mpq_set_d(r.backend().data(), x);
    return r;
}

double to_double_nearest(const rational& q) {
    mpfr_t x;
    mpfr_init2(x, 53);
    mpfr_set_q(x, q.backend().data(), MPFR_RNDN);
    double d = mpfr_get_d(x, MPFR_RNDN);
    mpfr_clear(x);
    return d;
}

std::string exact_text(const rational& x) { return to_exact_string(x); }

rational scalar_traits<rational>::from_exact_text(const std::string& text) {
    auto q = parse_rational(text);
    if (!q) exact_text_detail::malformed(text);
    return *q;
}

} // namespace attnprop::numeric
