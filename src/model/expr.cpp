#include "model/expr.hpp"

#include <gmp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <utility>

namespace attnprop::model {

using detail::expr_node;
using detail::expr_op;
using numeric::numeric_error;
using numeric::rational;

expr_error::expr_error(std::size_t column, std::string message)
    : std::runtime_error("column " + std::to_string(column) + ": " + message), column_(column),
      message_(std::move(message)) {}

// --- scalar helpers -------------------------------------------------------------------------

namespace detail {

bool small_integer(const rational& q, long& k) {
    mpq_srcptr p = q.backend().data();
    if (mpz_cmp_ui(mpq_denref(p), 1) != 0)
        return false;
    if (mpz_sizeinbase(mpq_numref(p), 2) > 62)
        return false;
    k = mpz_get_si(mpq_numref(p));
    return true;
}

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

bool relation_holds(expr_op op, numeric::order ord) {
    using numeric::order;
    switch (op) {
    case expr_op::eq:
        return ord == order::equal;
    case expr_op::ne:
        return ord != order::equal;
    case expr_op::lt:
        return ord == order::less;
    case expr_op::le:
        return ord == order::less || ord == order::equal;
    case expr_op::gt:
        return ord == order::greater;
    case expr_op::ge:
        return ord == order::greater || ord == order::equal;
    default:
        return false;
    }
}

} // namespace detail

namespace {

// --- exact evaluation -----------------------------------------------------------------------


/// out = out^e for an integer e (given as a rational with denominator 1).
void exact_int_pow(rational& out, const rational& e) {
    mpq_ptr b = out.backend().data();
    mpz_srcptr k = mpq_numref(e.backend().data());
    int ks = mpz_sgn(k);
    if (mpz_sgn(mpq_numref(b)) == 0) {
        if (ks < 0)
            throw numeric::undefined_error("zero raised to a negative power");
        if (ks == 0)
            out = 1; // 0^0 = 1
        return;
    }
    if (ks == 0) {
        out = 1;
        return;
    }
    if (mpz_cmp_ui(mpq_denref(b), 1) == 0 && mpz_cmpabs_ui(mpq_numref(b), 1) == 0) {
        // +-1: only the parity matters, whatever the size of the exponent.
        if (mpz_sgn(mpq_numref(b)) < 0 && mpz_even_p(k))
            out = 1;
        return;
    }
    // The result has at least (bits - 1) * |k| bits: refuse it before computing it.
    const std::size_t bits = numeric::exact_bits(out);
    const std::uint64_t limit = numeric::limit_value(numeric::limit::exact_bits);
    const std::uint64_t least = std::max<std::uint64_t>(bits - 1, 1);
    if (mpz_sizeinbase(k, 2) > 62 || mpz_get_ui(k) > limit / least) {
        const std::string power = mpz_sizeinbase(k, 2) > 62
                                      ? std::string("more than 2^62")
                                      : std::to_string(mpz_get_ui(k) * least);
        throw numeric::limit_error(numeric::limit::exact_bits, limit + 1,
                                   "an exact power would have " + power + " bits");
    }
    unsigned long ku = mpz_get_ui(k); // |k|
    mpz_pow_ui(mpq_numref(b), mpq_numref(b), ku);
    mpz_pow_ui(mpq_denref(b), mpq_denref(b), ku);
    if (ks < 0)
        mpq_inv(b, b);
}

struct exact_evaluator {
    const std::vector<expr_node>& nodes;
    long i;
    long n;
    bool strict;

    bool run(std::uint32_t idx, rational& out) const {
        const expr_node& nd = nodes[idx];
        if (nd.value) {
            out = *nd.value;
            return true;
        }
        switch (nd.op) {
        case expr_op::var_i:
            out = i;
            return true;
        case expr_op::var_n:
            out = n;
            return true;
        case expr_op::neg:
            if (!run(nd.lhs, out))
                return false;
            mpq_neg(out.backend().data(), out.backend().data());
            return true;
        case expr_op::add:
        case expr_op::sub:
        case expr_op::mul:
        case expr_op::div: {
            rational b;
            if (!run(nd.lhs, out) || !run(nd.rhs, b))
                return false;
            switch (nd.op) {
            case expr_op::add:
                out += b;
                break;
            case expr_op::sub:
                out -= b;
                break;
            case expr_op::mul:
                out *= b;
                break;
            default:
                if (b == 0)
                    throw numeric::undefined_error("division by zero");
                out /= b;
                break;
            }
            numeric::check_exact_size(out);
            return true;
        }
        case expr_op::pow: {
            rational e;
            if (!run(nd.rhs, e))
                return false;
            if (mpz_cmp_ui(mpq_denref(e.backend().data()), 1) != 0) {
                if (strict)
                    throw numeric_error("non-integer exponent " + numeric::to_exact_string(e));
                return false;
            }
            if (!run(nd.lhs, out))
                return false;
            exact_int_pow(out, e);
            return true;
        }
        case expr_op::abs:
            if (!run(nd.lhs, out))
                return false;
            mpq_abs(out.backend().data(), out.backend().data());
            return true;
        case expr_op::floor:
            if (!run(nd.lhs, out))
                return false;
            out = numeric::floor(out);
            return true;
        case expr_op::eq:
        case expr_op::ne:
        case expr_op::lt:
        case expr_op::le:
        case expr_op::gt:
        case expr_op::ge: {
            rational b;
            if (!run(nd.lhs, out) || !run(nd.rhs, b))
                return false;
            bool holds = detail::relation_holds(nd.op, numeric::compare(out, b));
            out = holds ? 1 : 0;
            return true;
        }
        default:
            throw numeric_error("internal error: exact evaluation of a non-rational node");
        }
    }
};

// --- fast exact evaluation in 64-bit fractions -----------------------------------------------

/// p/q with q > 0 in lowest terms and p != LLONG_MIN (so that negation and std::gcd are
/// safe); every operation fails (returns false) on overflow.
struct fraction {
    long long p = 0;
    long long q = 1;
};

constexpr long long min_ll = std::numeric_limits<long long>::min();

bool reduce(fraction& f) {
    if (f.p == min_ll)
        return false;
    long long g = std::gcd(f.p, f.q); // q > 0, so g > 0
    f.p /= g;
    f.q /= g;
    return true;
}

bool mul_to(long long a, long long b, long long& r) {
    return !__builtin_mul_overflow(a, b, &r);
}

bool add_fractions(fraction x, fraction y, bool subtract, fraction& r) {
    long long g = std::gcd(x.q, y.q);
    long long yq = y.q / g;
    long long xq = x.q / g;
    long long a = 0;
    long long b = 0;
    if (!mul_to(x.p, yq, a) || !mul_to(y.p, xq, b) || !mul_to(x.q, yq, r.q))
        return false;
    if (subtract ? __builtin_sub_overflow(a, b, &r.p) : __builtin_add_overflow(a, b, &r.p))
        return false;
    return reduce(r);
}

bool mul_fractions(fraction x, fraction y, fraction& r) {
    if (x.p == 0 || y.p == 0) {
        r = {0, 1};
        return true;
    }
    long long g1 = std::gcd(x.p, y.q);
    long long g2 = std::gcd(y.p, x.q);
    return mul_to(x.p / g1, y.p / g2, r.p) && mul_to(x.q / g2, y.q / g1, r.q) && r.p != min_ll;
}

/// 1/x; false for x = 0.
bool invert(fraction& x) {
    if (x.p == 0)
        return false;
    std::swap(x.p, x.q);
    if (x.q < 0) {
        x.p = -x.p;
        x.q = -x.q;
    }
    return true;
}

int compare_fractions(const fraction& x, const fraction& y, bool& ok) {
    long long a = 0;
    long long b = 0;
    ok = mul_to(x.p, y.q, a) && mul_to(y.p, x.q, b);
    return a < b ? -1 : (a > b ? 1 : 0);
}

struct small_evaluator {
    const std::vector<expr_node>& nodes;
    long long i;
    long long n;

    bool run(std::uint32_t idx, fraction& out) const {
        const expr_node& nd = nodes[idx];
        if (nd.small) {
            out = {nd.small_num, nd.small_den};
            return true;
        }
        if (nd.value || !nd.rational)
            return false;
        switch (nd.op) {
        case expr_op::var_i:
            out = {i, 1};
            return i != min_ll;
        case expr_op::var_n:
            out = {n, 1};
            return n != min_ll;
        case expr_op::neg:
            if (!run(nd.lhs, out))
                return false;
            out.p = -out.p;
            return true;
        case expr_op::add:
        case expr_op::sub:
        case expr_op::mul:
        case expr_op::div: {
            fraction a;
            fraction b;
            if (!run(nd.lhs, a) || !run(nd.rhs, b))
                return false;
            switch (nd.op) {
            case expr_op::add:
                return add_fractions(a, b, false, out);
            case expr_op::sub:
                return add_fractions(a, b, true, out);
            case expr_op::mul:
                return mul_fractions(a, b, out);
            default:
                return invert(b) && mul_fractions(a, b, out);
            }
        }
        case expr_op::pow: {
            fraction e;
            fraction base;
            if (!run(nd.rhs, e) || e.q != 1 || !run(nd.lhs, base))
                return false;
            if (base.q == 1 && (base.p == 1 || base.p == -1)) {
                out = {(base.p == -1 && (e.p & 1) != 0) ? -1 : 1, 1};
                return true;
            }
            if (e.p == 0) {
                out = {1, 1};
                return true;
            }
            if (base.p == 0) {
                out = {0, 1};
                return e.p > 0;
            }
            if (e.p > 64 || e.p < -64)
                return false; // |base| >= 2 or <= 1/2: overflows
            fraction r{1, 1};
            for (long long k = 0; k < (e.p < 0 ? -e.p : e.p); ++k)
                if (!mul_fractions(r, base, r))
                    return false;
            if (e.p < 0 && !invert(r))
                return false;
            out = r;
            return true;
        }
        case expr_op::abs:
            if (!run(nd.lhs, out))
                return false;
            if (out.p < 0)
                out.p = -out.p;
            return true;
        case expr_op::floor: {
            if (!run(nd.lhs, out))
                return false;
            long long f = out.p / out.q;
            if (out.p % out.q != 0 && out.p < 0)
                --f;
            out = {f, 1};
            return true;
        }
        case expr_op::eq:
        case expr_op::ne:
        case expr_op::lt:
        case expr_op::le:
        case expr_op::gt:
        case expr_op::ge: {
            fraction a;
            fraction b;
            if (!run(nd.lhs, a) || !run(nd.rhs, b))
                return false;
            bool ok = false;
            int c = compare_fractions(a, b, ok);
            if (!ok)
                return false;
            numeric::order ord = c < 0 ? numeric::order::less
                                       : (c > 0 ? numeric::order::greater : numeric::order::equal);
            out = {detail::relation_holds(nd.op, ord) ? 1 : 0, 1};
            return true;
        }
        default:
            return false;
        }
    }
};

/// Records the 64-bit form of nd.value when it fits.
void set_small(expr_node& nd) {
    mpq_srcptr v = nd.value->backend().data();
    if (mpz_sizeinbase(mpq_numref(v), 2) > 62 || mpz_sizeinbase(mpq_denref(v), 2) > 62)
        return;
    nd.small = true;
    nd.small_num = mpz_get_si(mpq_numref(v));
    nd.small_den = mpz_get_si(mpq_denref(v));
}

// --- lexer ----------------------------------------------------------------------------------

enum class tok {
    number,
    name,
    plus,
    minus,
    star,
    slash,
    caret,
    lparen,
    rparen,
    lbracket,
    rbracket,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    end
};

struct token {
    tok kind;
    std::size_t column; // 1-based
    std::string_view text;
};

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
    return is_name_start(c) || is_digit(c);
}

std::string describe_char(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
        return std::string("'") + c + "'";
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", u);
    return std::string("byte ") + buf;
}

/// True when s is digits ['.' digits] [('e'|'E') ['+'|'-'] digits].
bool valid_number(std::string_view s) {
    std::size_t p = 0;
    auto digits = [&] {
        std::size_t start = p;
        while (p < s.size() && is_digit(s[p]))
            ++p;
        return p > start;
    };
    if (!digits())
        return false;
    if (p < s.size() && s[p] == '.') {
        ++p;
        if (!digits())
            return false;
    }
    if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
        ++p;
        if (p < s.size() && (s[p] == '+' || s[p] == '-'))
            ++p;
        if (!digits())
            return false;
    }
    return p == s.size();
}

/// The literal (already checked by valid_number) as "<digits>e<exponent>" with no leading zeros
/// in the digits. numeric::parse_rational reads a digit string with a leading 0 as octal
/// ("0.125" gave 17/200, "0.08" threw), so it never sees one from here. Exponents too long
/// to shift are passed through unchanged for parse_rational to reject.
std::string canonical_number(std::string_view lit) {
    std::size_t epos = lit.find_first_of("eE");
    std::string_view mant = lit.substr(0, epos);
    std::size_t dot = mant.find('.');
    std::string digits(mant.substr(0, dot));
    std::size_t frac = 0;
    if (dot != std::string_view::npos) {
        digits += mant.substr(dot + 1);
        frac = mant.size() - dot - 1;
    }
    long long e = 0;
    if (epos != std::string_view::npos) {
        std::string_view ed = lit.substr(epos + 1);
        bool neg = !ed.empty() && ed.front() == '-';
        if (!ed.empty() && (ed.front() == '+' || ed.front() == '-'))
            ed.remove_prefix(1);
        while (ed.size() > 1 && ed.front() == '0')
            ed.remove_prefix(1);
        if (ed.size() > 9)
            return std::string(lit);
        e = std::stoll(std::string(ed));
        if (neg)
            e = -e;
    }
    e -= static_cast<long long>(frac);
    std::size_t nz = digits.find_first_not_of('0');
    digits = nz == std::string::npos ? "0" : digits.substr(nz);
    return digits + "e" + std::to_string(e);
}

std::vector<token> lex(std::string_view s) {
    std::vector<token> out;
    std::size_t p = 0;
    while (p < s.size()) {
        char c = s[p];
        std::size_t col = p + 1;
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++p;
            continue;
        }
        if (is_digit(c) || c == '.') {
            std::size_t start = p;
            while (p < s.size() && (is_digit(s[p]) || s[p] == '.'))
                ++p;
            if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
                std::size_t q = p + 1;
                if (q < s.size() && (s[q] == '+' || s[q] == '-'))
                    ++q;
                if (q < s.size() && is_digit(s[q])) {
                    p = q;
                    while (p < s.size() && is_digit(s[p]))
                        ++p;
                }
            }
            std::string_view lit = s.substr(start, p - start);
            if (!valid_number(lit))
                throw expr_error(col, "malformed number '" + std::string(lit) +
                                          "' (expected digits[.digits][e[+|-]digits])");
            out.push_back({tok::number, col, lit});
            continue;
        }
        if (is_name_start(c)) {
            std::size_t start = p;
            while (p < s.size() && is_name_char(s[p]))
                ++p;
            out.push_back({tok::name, col, s.substr(start, p - start)});
            continue;
        }
        auto two = [&](char next) { return p + 1 < s.size() && s[p + 1] == next; };
        tok kind = tok::end;
        std::size_t len = 1;
        switch (c) {
        case '+':
            kind = tok::plus;
            break;
        case '-':
            kind = tok::minus;
            break;
        case '*':
            kind = tok::star;
            break;
        case '/':
            kind = tok::slash;
            break;
        case '^':
            kind = tok::caret;
            break;
        case '(':
            kind = tok::lparen;
            break;
        case ')':
            kind = tok::rparen;
            break;
        case '[':
            kind = tok::lbracket;
            break;
        case ']':
            kind = tok::rbracket;
            break;
        case '=':
            if (!two('='))
                throw expr_error(col, "'=' is not an operator; write '==' to compare");
            kind = tok::eq;
            len = 2;
            break;
        case '!':
            if (!two('='))
                throw expr_error(col, "'!' is not an operator; write '!=' to compare");
            kind = tok::ne;
            len = 2;
            break;
        case '<':
            kind = two('=') ? tok::le : tok::lt;
            len = two('=') ? 2 : 1;
            break;
        case '>':
            kind = two('=') ? tok::ge : tok::gt;
            len = two('=') ? 2 : 1;
            break;
        default:
            throw expr_error(col, "unexpected character " + describe_char(c));
        }
        out.push_back({kind, col, s.substr(p, len)});
        p += len;
    }
    out.push_back({tok::end, s.size() + 1, {}});
    return out;
}

bool is_relop(tok k) {
    return k == tok::eq || k == tok::ne || k == tok::lt || k == tok::le || k == tok::gt ||
           k == tok::ge;
}

expr_op relop_of(tok k) {
    switch (k) {
    case tok::eq:
        return expr_op::eq;
    case tok::ne:
        return expr_op::ne;
    case tok::lt:
        return expr_op::lt;
    case tok::le:
        return expr_op::le;
    case tok::gt:
        return expr_op::gt;
    default:
        return expr_op::ge;
    }
}

std::optional<expr_op> function_of(std::string_view name) {
    if (name == "sin")
        return expr_op::sin;
    if (name == "cos")
        return expr_op::cos;
    if (name == "exp")
        return expr_op::exp;
    if (name == "log")
        return expr_op::log;
    if (name == "sqrt")
        return expr_op::sqrt;
    if (name == "abs")
        return expr_op::abs;
    if (name == "floor")
        return expr_op::floor;
    return std::nullopt;
}

bool is_transcendental(expr_op op) {
    return op == expr_op::sin || op == expr_op::cos || op == expr_op::exp || op == expr_op::log ||
           op == expr_op::sqrt;
}

std::string describe(const token& t) {
    if (t.kind == tok::end)
        return "the end of the formula";
    return "'" + std::string(t.text) + "'";
}

// --- parser ---------------------------------------------------------------------------------

/// Deepest tree, and deepest parser recursion, accepted.
constexpr std::size_t max_depth = 500;

class parser {
public:
    parser(std::vector<token> toks, std::vector<expr_node>& nodes)
        : toks_(std::move(toks)), nodes_(nodes) {}

    std::uint32_t parse_all() {
        std::uint32_t root = parse_sum();
        const token& t = peek();
        if (t.kind != tok::end) {
            std::string msg = "unexpected " + describe(t) + " after the expression";
            if (is_relop(t.kind))
                msg += "; comparisons must be written inside an Iverson bracket [a " +
                       std::string(t.text) + " b]";
            else if (t.kind == tok::number || t.kind == tok::name || t.kind == tok::lparen ||
                     t.kind == tok::lbracket)
                msg += "; write '*' to multiply";
            throw expr_error(t.column, msg);
        }
        return root;
    }

private:
    struct depth_guard {
        parser& p;
        explicit depth_guard(parser& owner, std::size_t column) : p(owner) {
            if (++p.depth_ > max_depth)
                throw expr_error(column, "formula nested too deeply");
        }
        ~depth_guard() { --p.depth_; }
        depth_guard(const depth_guard&) = delete;
        depth_guard& operator=(const depth_guard&) = delete;
    };

    const token& peek() const { return toks_[pos_]; }
    const token& next() { return toks_[pos_++]; }

    std::uint32_t add(expr_op op, std::size_t column, std::uint32_t lhs = detail::no_child,
                      std::uint32_t rhs = detail::no_child) {
        expr_node nd;
        nd.op = op;
        nd.column = static_cast<std::uint32_t>(column);
        nd.lhs = lhs;
        nd.rhs = rhs;
        std::size_t depth = 1;
        if (lhs != detail::no_child)
            depth = std::max(depth, depths_[lhs] + 1);
        if (rhs != detail::no_child)
            depth = std::max(depth, depths_[rhs] + 1);
        if (depth > max_depth)
            throw expr_error(column, "formula nested too deeply");
        switch (op) {
        case expr_op::number:
            break;
        case expr_op::var_i:
        case expr_op::var_n:
            nd.constant = false;
            break;
        case expr_op::pi:
            nd.rational = false;
            break;
        default: {
            const expr_node& a = nodes_[lhs];
            nd.rational = a.rational && !is_transcendental(op);
            nd.constant = a.constant;
            if (rhs != detail::no_child) {
                const expr_node& b = nodes_[rhs];
                nd.rational = nd.rational && b.rational;
                nd.constant = nd.constant && b.constant;
                // A constant non-integer exponent makes an irrational power in general.
                if (op == expr_op::pow && b.value &&
                    mpz_cmp_ui(mpq_denref(b.value->backend().data()), 1) != 0)
                    nd.rational = false;
            }
        }
        }
        nodes_.push_back(std::move(nd));
        depths_.push_back(depth);
        auto idx = static_cast<std::uint32_t>(nodes_.size() - 1);
        expr_node& made = nodes_.back();
        if (op != expr_op::number && made.rational && made.constant && !made.value) {
            // Constant folding; errors (1/0) are left for evaluation time.
            try {
                rational v;
                if (exact_evaluator{nodes_, 0, 0, false}.run(idx, v)) {
                    made.value = std::move(v);
                    set_small(made);
                }
            } catch (const numeric_error&) {
            } catch (const numeric::limit_error&) {
                // Too large to fold: exact evaluation meets the limit again, real kinds
                // compute the subtree in their own arithmetic.
            }
        }
        return idx;
    }

    std::uint32_t number(const token& t) {
        std::string err;
        auto q = numeric::parse_rational(canonical_number(t.text), &err);
        if (!q)
            throw expr_error(t.column, "bad number '" + std::string(t.text) + "': " + err);
        std::uint32_t idx = add(expr_op::number, t.column);
        nodes_[idx].value = std::move(*q);
        set_small(nodes_[idx]);
        return idx;
    }

    std::uint32_t parse_sum() {
        depth_guard guard(*this, peek().column);
        std::uint32_t lhs = parse_term();
        while (peek().kind == tok::plus || peek().kind == tok::minus) {
            const token& op = next();
            std::uint32_t rhs = parse_term();
            lhs = add(op.kind == tok::plus ? expr_op::add : expr_op::sub, op.column, lhs, rhs);
        }
        return lhs;
    }

    std::uint32_t parse_term() {
        std::uint32_t lhs = parse_unary();
        while (peek().kind == tok::star || peek().kind == tok::slash) {
            const token& op = next();
            std::uint32_t rhs = parse_unary();
            lhs = add(op.kind == tok::star ? expr_op::mul : expr_op::div, op.column, lhs, rhs);
        }
        return lhs;
    }

    std::uint32_t parse_unary() {
        depth_guard guard(*this, peek().column);
        if (peek().kind == tok::minus) {
            const token& op = next();
            std::uint32_t arg = parse_unary();
            return add(expr_op::neg, op.column, arg);
        }
        return parse_power();
    }

    std::uint32_t parse_power() {
        std::uint32_t base = parse_atom();
        if (peek().kind == tok::caret) {
            const token& op = next();
            std::uint32_t exponent = parse_unary();
            return add(expr_op::pow, op.column, base, exponent);
        }
        return base;
    }

    void expect(tok kind, const token& opener, const char* closer) {
        const token& t = peek();
        if (t.kind != kind)
            throw expr_error(t.column, std::string("expected '") + closer + "' to close the '" +
                                           std::string(opener.text) + "' at column " +
                                           std::to_string(opener.column) + ", found " +
                                           describe(t));
        next();
    }

    std::uint32_t parse_atom() {
        const token& t = next();
        switch (t.kind) {
        case tok::number:
            return number(t);
        case tok::lparen: {
            std::uint32_t inner = parse_sum();
            expect(tok::rparen, t, ")");
            return inner;
        }
        case tok::lbracket: {
            std::uint32_t lhs = parse_sum();
            const token& rel = peek();
            if (!is_relop(rel.kind))
                throw expr_error(rel.column,
                                 "expected a comparison (==, !=, <, <=, >, >=) inside '[...]', "
                                 "found " +
                                     describe(rel));
            next();
            std::uint32_t rhs = parse_sum();
            expect(tok::rbracket, t, "]");
            return add(relop_of(rel.kind), rel.column, lhs, rhs);
        }
        case tok::name: {
            if (t.text == "i")
                return add(expr_op::var_i, t.column);
            if (t.text == "n")
                return add(expr_op::var_n, t.column);
            if (t.text == "pi")
                return add(expr_op::pi, t.column);
            auto fn = function_of(t.text);
            if (!fn) {
                if (peek().kind == tok::lparen)
                    throw expr_error(t.column, "unknown function '" + std::string(t.text) +
                                                   "' (use sin, cos, exp, log, sqrt, abs or "
                                                   "floor)");
                throw expr_error(t.column, "unknown name '" + std::string(t.text) +
                                               "' (use i, n, pi, or "
                                               "sin/cos/exp/log/sqrt/abs/floor)");
            }
            const token& open = peek();
            if (open.kind != tok::lparen)
                throw expr_error(open.column, "expected '(' after '" + std::string(t.text) +
                                                  "', found " + describe(open));
            next();
            std::uint32_t arg = parse_sum();
            expect(tok::rparen, open, ")");
            return add(*fn, t.column, arg);
        }
        default: {
            std::string msg = "expected an expression, found " + describe(t);
            if (t.kind == tok::plus)
                msg += " (there is no unary '+')";
            throw expr_error(t.column, msg);
        }
        }
    }

    std::vector<token> toks_;
    std::vector<expr_node>& nodes_;
    std::vector<std::size_t> depths_;
    std::size_t pos_ = 0;
    std::size_t depth_ = 0;
};

// --- bound analysis -------------------------------------------------------------------------
//
// Domain: integers 1 <= i <= n, n >= 1. For every node the analysis computes
//
//   up           k with |f| <= C n^k wherever f is defined (C a constant); "bounded" is up <= 0
//   low          m with |f| >= c n^m (c > 0) wherever f is defined and nonzero
//   unbounded    |f| is unbounded on every cofinite part of the domain where the subterms
//                are defined (valid as stated once `total` holds for f)
//   nonvanishing f has only finitely many zeros in the domain
//   affine       f = a i + b n + c exactly, with rational a, b, c
//   total        f is defined at all but finitely many points of the domain: its subterms
//                are, divisors are nonvanishing, log and non-integer powers take affine
//                arguments that are eventually positive (or exp(...)), sqrt takes eventually
//                nonnegative affine arguments (or abs/exp), negative integer powers take
//                nonvanishing bases, c^b with c < 0 needs an integer-valued b
//
// Rules (each one sound on its own; anything not covered stays unknown):
//   * A subtree free of i and n is a constant: bounded. Folded rational constants c also have
//     low 0 and are nonvanishing when c != 0.
//   * i, n, and +, -, unary -, products by constants and quotients by nonzero constants of them
//     give affine forms f = a i + b n + c. f is unbounded unless a = b = 0 (take i = n or i = 1
//     with n large); up = 1. Because the coefficients are rational, a nonzero value of f is at
//     least 1/D in magnitude (D the common denominator), so low = 0; low = 1 when a i + b n
//     cannot vanish on the cone 0 < i/n <= 1 (b and a + b nonzero with equal signs).
//     sup f = +inf iff b > 0 or a + b > 0; inf f = -inf iff b < 0 or a + b < 0.
//   * pi, [a relop b]: bounded (up 0; low 0, since a nonzero bracket is 1). sin, cos: bounded.
//   * a + b, a - b: up = max; unbounded when one side is unbounded and the other bounded.
//   * a * b: a product with a zero constant is 0; up and low add; unbounded when one side is
//     unbounded and the other has low >= 0 and finitely many zeros (a nonzero constant, n, i).
//   * a / b: up = up(a) - low(b), low = low(a) - up(b) (so i/n, (i-1)/n, (n-i)/n, c/i, 1/n,
//     1/(i+c) are bounded); unbounded when a is unbounded and b bounded, or, for affine
//     a = p_i i + p_n n + p_c and b = q_i i + q_n n + q_c (b not identically zero), along
//     i fixed, n -> inf when q_n = 0 and p_n != 0 (n/i), or along i = n - k, n -> inf when
//     q_i + q_n = 0 and p_i + p_n != 0 (i/(n-i+1)).
//   * a ^ b with constant base c: |c| = 1 or c = 0 bounded ((-1)^i); otherwise bounded when
//     b is bounded, and for affine b decided by whether b is unbounded above (|c| > 1) or
//     below (|c| < 1).
//   * a ^ k with a constant integer k: k > 0 multiplies up and low by k and keeps unbounded
//     (i^2); k < 0 gives up = k low(a), low = k up(a). A constant non-integer exponent e
//     scales the same way with outward rounding; a^e (e > 0) is unbounded when a is affine and
//     unbounded above.
//   * exp(a): bounded when a is bounded or affine and bounded above; unbounded when a is
//     affine and unbounded above. log(a): unbounded when a is affine and unbounded above;
//     bounded when a is bounded with low >= 0; up = 1 when up and low are known.
//     sqrt(a): halves up and low; unbounded when a is affine and unbounded above.
//   * abs(a): as a. floor(a): up = max(up(a), 0), low = 0, unbounded as a.
//   * Any f with low >= 1 and finitely many zeros is unbounded (n^3/n^2).
//   * The formula is reported unbounded when so proven and total, bounded when up <= 0 (a
//     statement about the points where it is defined), else unknown. So "i/[n==3]" (defined
//     only for n = 3) and "i/sin(i)" (sin(i) is not known to be nonvanishing) are unknown.

struct affine {
    rational a, b, c; // a i + b n + c

    bool is_constant() const { return a == 0 && b == 0; }
    bool sup_infinite() const { return b > 0 || a + b > 0; }
    bool inf_infinite() const { return b < 0 || a + b < 0; }
};

affine operator+(const affine& x, const affine& y) {
    return {x.a + y.a, x.b + y.b, x.c + y.c};
}
affine operator-(const affine& x, const affine& y) {
    return {x.a - y.a, x.b - y.b, x.c - y.c};
}
affine scaled(const affine& x, const rational& k) {
    return {x.a * k, x.b * k, x.c * k};
}

using degree = std::optional<long>;
constexpr long max_degree = 1000000;

degree make_degree(long v) {
    if (v > max_degree || v < -max_degree)
        return std::nullopt;
    return v;
}
degree add_degrees(degree x, degree y) {
    if (!x || !y)
        return std::nullopt;
    return make_degree(*x + *y);
}
degree sub_degrees(degree x, degree y) {
    if (!x || !y)
        return std::nullopt;
    return make_degree(*x - *y);
}
/// ceil(e * x) (round_up) or floor(e * x).
degree scale_degree(degree x, const rational& e, bool round_up) {
    if (!x)
        return std::nullopt;
    if (abs(e) > max_degree)
        return std::nullopt;
    rational v = e * *x;
    rational f = numeric::floor(v);
    if (round_up && f != v)
        f += 1;
    long k = 0;
    if (!detail::small_integer(f, k))
        return std::nullopt;
    return make_degree(k);
}
bool at_most_zero(degree x) {
    return x && *x <= 0;
}
bool at_least_zero(degree x) {
    return x && *x >= 0;
}

struct growth {
    degree up;
    degree low;
    bool unbounded = false;
    bool nonvanishing = false;
    std::optional<affine> aff;
    /// Defined at all but finitely many points of the domain (see defined_almost_everywhere).
    bool total = false;
    /// An integer wherever defined.
    bool integer_valued = false;
    /// Defined at every point of the domain (see defined_everywhere).
    bool everywhere = false;
    /// Never zero on the domain (where defined), resp. > 0, >= 0 there.
    bool nonzero_everywhere = false;
    bool positive_everywhere = false;
    bool nonnegative_everywhere = false;
};

/// f > 0 (strict) or f >= 0 at every point 1 <= i <= n, n >= 1. f is linear in i for fixed n,
/// so its minimum over i is at i = 1 or i = n; along both lines it is linear in n >= 1.
bool positive_on_domain(const affine& f, bool strict) {
    const rational at_1 = f.a + f.b + f.c; // i = n = 1
    return (strict ? at_1 > 0 : at_1 >= 0) && f.b >= 0 && f.a + f.b >= 0;
}

/// f > 0 (strict) or f >= 0 at all but finitely many points 1 <= i <= n.
bool eventually_positive(const affine& f, bool strict) {
    auto ok = [strict](const rational& v) { return strict ? v > 0 : v >= 0; };
    if (f.is_constant())
        return ok(f.c);
    rational ab = f.a + f.b;
    if (f.b < 0 || ab < 0)
        return false;
    if (f.b > 0 && ab > 0)
        return true;
    if (f.b == 0) // f = a i + c with a > 0: smallest at i = 1, for infinitely many n
        return ok(f.a + f.c);
    return ok(f.c); // a + b = 0, b > 0: f = b (n - i) + c, smallest at i = n
}

bool is_integer(const rational& q) {
    return mpz_cmp_ui(mpq_denref(q.backend().data()), 1) == 0;
}

/// Whether f, with growth facts g already computed for it and its children, is defined at all
/// but finitely many points. Unboundedness is only reported for such formulas, so that every
/// witnessing sequence of points (which has infinitely many distinct points) stays inside the
/// domain of definition of every subterm.
bool defined_almost_everywhere(const expr_node& nd, const std::vector<expr_node>& nodes,
                               const std::vector<growth>& info) {
    const growth* a = nd.lhs != detail::no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != detail::no_child ? &info[nd.rhs] : nullptr;
    auto positive = [&](std::uint32_t idx, bool strict) {
        const growth& x = info[idx];
        if (x.aff)
            return eventually_positive(*x.aff, strict);
        return nodes[idx].op == expr_op::exp || (!strict && nodes[idx].op == expr_op::abs);
    };
    switch (nd.op) {
    case expr_op::number:
    case expr_op::var_i:
    case expr_op::var_n:
    case expr_op::pi:
        return true;
    case expr_op::neg:
    case expr_op::abs:
    case expr_op::floor:
    case expr_op::sin:
    case expr_op::cos:
    case expr_op::exp:
        return a->total;
    case expr_op::add:
    case expr_op::sub:
    case expr_op::mul:
    case expr_op::eq:
    case expr_op::ne:
    case expr_op::lt:
    case expr_op::le:
    case expr_op::gt:
    case expr_op::ge:
        return a->total && b->total;
    case expr_op::div:
        return a->total && b->total && b->nonvanishing;
    case expr_op::log:
        return a->total && positive(nd.lhs, true);
    case expr_op::sqrt:
        return a->total && positive(nd.lhs, false);
    case expr_op::pow: {
        const expr_node& base = nodes[nd.lhs];
        const expr_node& ex = nodes[nd.rhs];
        if (!a->total || !b->total)
            return false;
        if (ex.value) {
            const rational& e = *ex.value;
            if (is_integer(e))
                return e >= 0 || a->nonvanishing;
            return positive(nd.lhs, e < 0);
        }
        if (base.value) {
            if (*base.value > 0)
                return true;
            return *base.value != 0 && b->integer_valued;
        }
        return false;
    }
    }
    return false;
}

/// Whether f is proven defined at every point 1 <= i <= n, n >= 1 (not only almost everywhere,
/// as `total`): its subterms are, divisors never vanish there, log takes positive and sqrt
/// nonnegative arguments there, 0 is never raised to a negative power and a negative base only
/// to integer powers. A formula with a pole anywhere ("1/(i-2)", "(-1)^(1/2)") is not; a
/// formula the rules cannot prove is not either (the caller may look for a witness).
bool defined_everywhere(const expr_node& nd, const std::vector<expr_node>& nodes,
                        const std::vector<growth>& info) {
    const growth* a = nd.lhs != detail::no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != detail::no_child ? &info[nd.rhs] : nullptr;
    switch (nd.op) {
    case expr_op::number:
    case expr_op::var_i:
    case expr_op::var_n:
    case expr_op::pi:
        return true;
    case expr_op::neg:
    case expr_op::abs:
    case expr_op::floor:
    case expr_op::sin:
    case expr_op::cos:
    case expr_op::exp:
        return a->everywhere;
    case expr_op::add:
    case expr_op::sub:
    case expr_op::mul:
    case expr_op::eq:
    case expr_op::ne:
    case expr_op::lt:
    case expr_op::le:
    case expr_op::gt:
    case expr_op::ge:
        return a->everywhere && b->everywhere;
    case expr_op::div:
        return a->everywhere && b->everywhere && b->nonzero_everywhere;
    case expr_op::log:
        return a->everywhere && a->positive_everywhere;
    case expr_op::sqrt:
        return a->everywhere && a->nonnegative_everywhere;
    case expr_op::pow: {
        if (!a->everywhere || !b->everywhere)
            return false;
        const expr_node& base = nodes[nd.lhs];
        const expr_node& ex = nodes[nd.rhs];
        if (ex.value) {
            const rational& e = *ex.value;
            if (is_integer(e))
                return e >= 0 || a->nonzero_everywhere;
            return e > 0 ? a->nonnegative_everywhere : a->positive_everywhere;
        }
        if (base.value) {
            if (*base.value > 0)
                return true;
            if (*base.value == 0)
                return b->nonnegative_everywhere;
            return b->integer_valued;
        }
        // A variable base: positive everywhere takes any real power.
        return a->positive_everywhere;
    }
    }
    return false;
}

/// The sign facts of f on the whole domain, from its affine form, value or operation.
void sign_everywhere(growth& g, const expr_node& nd, const std::vector<growth>& info) {
    const growth* a = nd.lhs != detail::no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != detail::no_child ? &info[nd.rhs] : nullptr;
    // Facts copied from a child by analyse() (g = *a for - and abs) are not this node's.
    g.positive_everywhere = g.nonnegative_everywhere = g.nonzero_everywhere = false;
    if (g.aff) {
        g.positive_everywhere = positive_on_domain(*g.aff, true);
        g.nonnegative_everywhere = positive_on_domain(*g.aff, false);
        g.nonzero_everywhere =
            g.positive_everywhere || positive_on_domain(scaled(*g.aff, -1), true);
        return;
    }
    switch (nd.op) {
    case expr_op::pi:
    case expr_op::exp:
        g.positive_everywhere = true;
        break;
    case expr_op::abs:
        g.nonnegative_everywhere = true;
        g.positive_everywhere = a->nonzero_everywhere;
        break;
    case expr_op::sqrt:
        g.nonnegative_everywhere = true;
        g.positive_everywhere = a->positive_everywhere;
        break;
    case expr_op::neg:
        g.nonzero_everywhere = a->nonzero_everywhere;
        break;
    case expr_op::mul:
        g.positive_everywhere = a->positive_everywhere && b->positive_everywhere;
        g.nonnegative_everywhere = a->nonnegative_everywhere && b->nonnegative_everywhere;
        g.nonzero_everywhere = a->nonzero_everywhere && b->nonzero_everywhere;
        break;
    case expr_op::div:
        g.positive_everywhere = a->positive_everywhere && b->positive_everywhere;
        g.nonnegative_everywhere = a->nonnegative_everywhere && b->positive_everywhere;
        g.nonzero_everywhere = a->nonzero_everywhere;
        break;
    case expr_op::add:
        g.positive_everywhere = (a->positive_everywhere && b->nonnegative_everywhere) ||
                                (a->nonnegative_everywhere && b->positive_everywhere);
        g.nonnegative_everywhere = a->nonnegative_everywhere && b->nonnegative_everywhere;
        break;
    case expr_op::pow:
        g.positive_everywhere = a->positive_everywhere;
        g.nonnegative_everywhere = a->nonnegative_everywhere;
        g.nonzero_everywhere = a->nonzero_everywhere;
        break;
    default:
        break;
    }
    if (g.positive_everywhere) {
        g.nonnegative_everywhere = true;
        g.nonzero_everywhere = true;
    }
}

bool integer_valued(const expr_node& nd, const std::vector<growth>& info) {
    const growth* a = nd.lhs != detail::no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != detail::no_child ? &info[nd.rhs] : nullptr;
    switch (nd.op) {
    case expr_op::number:
        return is_integer(*nd.value);
    case expr_op::var_i:
    case expr_op::var_n:
    case expr_op::floor:
    case expr_op::eq:
    case expr_op::ne:
    case expr_op::lt:
    case expr_op::le:
    case expr_op::gt:
    case expr_op::ge:
        return true;
    case expr_op::neg:
    case expr_op::abs:
        return a->integer_valued;
    case expr_op::add:
    case expr_op::sub:
    case expr_op::mul:
        return a->integer_valued && b->integer_valued;
    default:
        return nd.value && is_integer(*nd.value);
    }
}

bool is_nonneg_integer(const rational& q) {
    return q >= 0 && mpz_cmp_ui(mpq_denref(q.backend().data()), 1) == 0;
}

growth from_affine(const affine& f) {
    growth g;
    g.aff = f;
    if (f.is_constant()) {
        g.up = 0;
        if (f.c != 0) {
            g.low = 0;
            g.nonvanishing = true;
        }
        return g;
    }
    g.up = 1;
    g.unbounded = true;
    rational ab = f.a + f.b;
    bool cone_free = f.b != 0 && ab != 0 && ((f.b > 0) == (ab > 0));
    g.low = cone_free ? 1 : 0;
    if (cone_free)
        g.nonvanishing = true;
    else if (f.b == 0) // zeros at i = -c/a for every n >= i
        g.nonvanishing = !(is_nonneg_integer(-f.c / f.a) && -f.c / f.a >= 1);
    else if (ab == 0) // zeros at n - i = c/a
        g.nonvanishing = !is_nonneg_integer(f.c / f.a);
    return g;
}

growth analyse(const expr_node& nd, const std::vector<expr_node>& nodes,
               const std::vector<growth>& info) {
    growth g;
    const growth* a = nd.lhs != detail::no_child ? &info[nd.lhs] : nullptr;
    const growth* b = nd.rhs != detail::no_child ? &info[nd.rhs] : nullptr;
    switch (nd.op) {
    case expr_op::number:
        break; // handled by the constant rule
    case expr_op::var_i:
        g = from_affine({1, 0, 0});
        break;
    case expr_op::var_n:
        g = from_affine({0, 1, 0});
        break;
    case expr_op::pi:
        g.up = 0;
        g.low = 0;
        g.nonvanishing = true;
        break;
    case expr_op::neg:
        g = *a;
        if (g.aff)
            g.aff = scaled(*g.aff, -1);
        break;
    case expr_op::add:
    case expr_op::sub:
        if (a->aff && b->aff) {
            g = from_affine(nd.op == expr_op::add ? *a->aff + *b->aff : *a->aff - *b->aff);
            break;
        }
        if (a->up && b->up)
            g.up = std::max(*a->up, *b->up);
        g.unbounded =
            (a->unbounded && at_most_zero(b->up)) || (b->unbounded && at_most_zero(a->up));
        break;
    case expr_op::mul:
        if ((nodes[nd.lhs].value && *nodes[nd.lhs].value == 0) ||
            (nodes[nd.rhs].value && *nodes[nd.rhs].value == 0)) {
            g.up = 0; // identically zero
            break;
        }
        if (a->aff && b->aff && (a->aff->is_constant() || b->aff->is_constant())) {
            g = a->aff->is_constant() ? from_affine(scaled(*b->aff, a->aff->c))
                                      : from_affine(scaled(*a->aff, b->aff->c));
            break;
        }
        g.up = add_degrees(a->up, b->up);
        g.low = add_degrees(a->low, b->low);
        g.nonvanishing = a->nonvanishing && b->nonvanishing;
        g.unbounded = (a->unbounded && at_least_zero(b->low) && b->nonvanishing) ||
                      (b->unbounded && at_least_zero(a->low) && a->nonvanishing);
        break;
    case expr_op::div: {
        const expr_node& den = nodes[nd.rhs];
        if (den.value && *den.value == 0)
            break; // undefined everywhere
        if (b->aff && b->aff->is_constant() && b->aff->c == 0)
            break; // n - n: undefined everywhere
        if (a->aff && b->aff && b->aff->is_constant()) {
            g = from_affine(scaled(*a->aff, 1 / b->aff->c));
            break;
        }
        g.up = sub_degrees(a->up, b->low);
        g.low = sub_degrees(a->low, b->up);
        g.nonvanishing = a->nonvanishing;
        g.unbounded = a->unbounded && at_most_zero(b->up);
        if (a->aff && b->aff) {
            const affine& p = *a->aff;
            const affine& q = *b->aff;
            bool q_nonzero_somewhere = !(q.a == 0 && q.c == 0);
            if (q_nonzero_somewhere && q.b == 0 && p.b != 0)
                g.unbounded = true;
            if (q_nonzero_somewhere && q.a + q.b == 0 && p.a + p.b != 0)
                g.unbounded = true;
        }
        break;
    }
    case expr_op::pow: {
        const expr_node& base = nodes[nd.lhs];
        const expr_node& ex = nodes[nd.rhs];
        if (base.value) {
            rational m = abs(*base.value);
            if (m == 1 || m == 0) {
                g.up = 0;
                g.low = 0;
                g.nonvanishing = m == 1;
            } else if (at_most_zero(b->up)) {
                g.up = 0;
                g.low = 0;
                g.nonvanishing = true;
            } else if (b->aff) {
                bool big = m > 1 ? b->aff->sup_infinite() : b->aff->inf_infinite();
                bool small = m > 1 ? b->aff->inf_infinite() : b->aff->sup_infinite();
                if (big)
                    g.unbounded = true;
                else
                    g.up = 0;
                if (!small)
                    g.low = 0;
                g.nonvanishing = true;
            }
            break;
        }
        if (!ex.value)
            break;
        const rational& e = *ex.value;
        long k = 0;
        if (detail::small_integer(e, k)) {
            if (k == 0) {
                g.up = 0;
                g.low = 0;
                g.nonvanishing = true;
            } else if (k > 0) {
                g.up = scale_degree(a->up, e, true);
                g.low = scale_degree(a->low, e, false);
                g.unbounded = a->unbounded;
                g.nonvanishing = a->nonvanishing;
            } else {
                g.up = scale_degree(a->low, e, true);
                g.low = scale_degree(a->up, e, false);
                g.nonvanishing = true;
            }
        } else if (e > 0) {
            g.up = scale_degree(a->up, e, true);
            g.low = scale_degree(a->low, e, false);
            g.unbounded = a->aff && a->aff->sup_infinite();
            g.nonvanishing = a->nonvanishing;
        } else {
            g.up = scale_degree(a->low, e, true);
            g.low = scale_degree(a->up, e, false);
            g.nonvanishing = true;
        }
        break;
    }
    case expr_op::sin:
    case expr_op::cos:
        g.up = 0;
        break;
    case expr_op::exp:
        g.nonvanishing = true;
        if (at_most_zero(a->up)) {
            g.up = 0;
            g.low = 0;
        } else if (a->aff) {
            if (a->aff->sup_infinite())
                g.unbounded = true;
            else
                g.up = 0;
            if (!a->aff->inf_infinite())
                g.low = 0;
        }
        break;
    case expr_op::log:
        if (a->aff && !a->aff->is_constant() && a->aff->sup_infinite())
            g.unbounded = true;
        if (at_most_zero(a->up) && at_least_zero(a->low))
            g.up = 0;
        else if (a->up && a->low)
            g.up = 1;
        break;
    case expr_op::sqrt:
        g.up = scale_degree(a->up, rational(1, 2), true);
        g.low = scale_degree(a->low, rational(1, 2), false);
        g.nonvanishing = a->nonvanishing;
        g.unbounded = a->aff && a->aff->sup_infinite();
        break;
    case expr_op::abs:
        g = *a;
        g.aff.reset();
        break;
    case expr_op::floor:
        if (a->up)
            g.up = std::max(*a->up, 0L);
        g.low = 0;
        g.unbounded = a->unbounded;
        break;
    case expr_op::eq:
    case expr_op::ne:
    case expr_op::lt:
    case expr_op::le:
    case expr_op::gt:
    case expr_op::ge:
        g.up = 0;
        g.low = 0;
        break;
    }
    // |f| >= c n wherever f is nonzero, and f vanishes at finitely many points only.
    if (g.low && *g.low >= 1 && g.nonvanishing)
        g.unbounded = true;
    if (nd.constant) {
        g.up = 0;
        g.unbounded = false;
        if (nd.value)
            g = from_affine({0, 0, *nd.value});
    }
    g.total = defined_almost_everywhere(nd, nodes, info);
    g.integer_valued = integer_valued(nd, info);
    g.everywhere = defined_everywhere(nd, nodes, info);
    sign_everywhere(g, nd, info);
    return g;
}

struct bound_facts {
    std::optional<bool> bounded;
    bool defined_everywhere = false;
};

bound_facts analyse_bounds(const std::vector<expr_node>& nodes, std::uint32_t root) {
    std::vector<growth> info;
    info.reserve(nodes.size());
    for (const expr_node& nd : nodes)
        info.push_back(analyse(nd, nodes, info));
    const growth& g = info[root];
    bound_facts out;
    out.defined_everywhere = g.everywhere;
    if (g.unbounded && g.total)
        out.bounded = false;
    else if (at_most_zero(g.up))
        out.bounded = true;
    return out;
}

} // namespace

// --- expr -----------------------------------------------------------------------------------

expr expr::parse(std::string_view text) {
    expr e;
    e.text_ = std::string(text);
    parser p(lex(text), e.nodes_);
    e.root_ = p.parse_all();
    const bound_facts facts = analyse_bounds(e.nodes_, e.root_);
    e.bounded_ = facts.bounded;
    e.defined_everywhere_ = facts.defined_everywhere;
    e.cache_ = std::make_shared<detail::expr_constant_cache>();
    return e;
}

bool expr::exact_at(std::uint32_t idx, long i, long n, rational& out, bool strict) const {
    return exact_evaluator{nodes_, i, n, strict}.run(idx, out);
}

bool expr::small_at(std::uint32_t idx, long i, long n, long long& p, long long& q) const noexcept {
    fraction f;
    if (!small_evaluator{nodes_, i, n}.run(idx, f))
        return false;
    p = f.p;
    q = f.q;
    return true;
}

rational expr::eval_rational(long i, long n) const {
    if (!is_rational())
        throw numeric_error(needs_real_message("exact rationals"));
    if (fraction f; small_evaluator{nodes_, i, n}.run(root_, f))
        return rational(f.p, f.q);
    try {
        rational out;
        exact_at(root_, i, n, out, true);
        return out;
    } catch (const numeric_error& e) {
        rethrow_with_context(e, i, n);
    } catch (const numeric::limit_error& e) {
        throw e.located(" in formula '" + text_ + "' at i=" + std::to_string(i) +
                        ", n=" + std::to_string(n));
    }
}

std::string expr::needs_real_message(std::string_view kind_name) const {
    return "formula '" + text_ + "' needs real arithmetic; not available for " +
           std::string(kind_name);
}

void expr::rethrow_with_context(const numeric_error& e, long i, long n) const {
    const std::string where =
        " in formula '" + text_ + "' at i=" + std::to_string(i) + ", n=" + std::to_string(n);
    if (const auto* u = dynamic_cast<const numeric::undefined_error*>(&e))
        throw numeric::undefined_error(u->reason() + where, u->where(), u->precision_may_resolve());
    throw numeric_error(std::string(e.what()) + where);
}

} // namespace attnprop::model
