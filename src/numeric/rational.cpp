#include "numeric/rational.hpp"
#include "numeric/exact_text.hpp"

#include <mpfr.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

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

std::optional<std::string> exact_decimal(const rational& q, std::size_t max_digits) {
    integer num = boost::multiprecision::numerator(q);
    integer den = boost::multiprecision::denominator(q);
    unsigned twos = 0, fives = 0;
    while (den % 2 == 0) {
        den /= 2;
        ++twos;
    }
    while (den % 5 == 0) {
        den /= 5;
        ++fives;
    }
    if (den != 1) return std::nullopt;
    unsigned k = std::max(twos, fives); // q = num * 2^(k-twos) 5^(k-fives) / 10^k
    integer scaled = num * pow10(0);
    for (unsigned i = twos; i < k; ++i) scaled *= 2;
    for (unsigned i = fives; i < k; ++i) scaled *= 5;
    bool neg = scaled < 0;
    if (neg) scaled = -scaled;
    const std::string digits = scaled.str();
    if (digits.size() > max_digits) return std::nullopt;
    // The digits padded with zeros to more than k, the point before the last k. Built by
    // appending (GCC 12's -Wrestrict misreads std::string::insert at -O3).
    std::string padded(k > 0 && digits.size() <= k ? k - digits.size() + 1 : 0, '0');
    padded += digits;
    const std::size_t whole = padded.size() - k;
    std::string s;
    s.reserve(padded.size() + 2);
    if (neg) s += '-';
    s.append(padded, 0, whole);
    if (k > 0) s.append(".").append(padded, whole, std::string::npos);
    return s;
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
