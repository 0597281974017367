#pragma once
/// @file expr.hpp
/// Formulas in the position i (1-based) and the length n, used for positional embeddings given
/// per coordinate ("(i-1)/n", "(-1)^i", "[i==1]", "sin(i/10000^(2/16))").
///
/// Grammar (whitespace allowed between tokens):
///
///     expr   := term (('+'|'-') term)*
///     term   := unary (('*'|'/') unary)*
///     unary  := '-' unary | power
///     power  := atom ('^' unary)?              right-associative: 2^3^2 = 2^(3^2), 2^-1 ok
///     atom   := number | 'i' | 'n' | 'pi' | func '(' expr ')' | '(' expr ')'
///             | '[' expr relop expr ']'        Iverson bracket: 1 if true, 0 if false
///     func   := sin | cos | exp | log | sqrt | abs | floor
///     relop  := '==' | '!=' | '<' | '<=' | '>' | '>='
///     number := digits ['.' digits] [('e'|'E') ['+'|'-'] digits]     exact decimal value
///
/// So "-2^2" is -4, "1-2-3" is -4 and "8/4/2" is 1.
///
/// Exactness. A node is *rational* when its subtree uses no transcendental function (sin, cos,
/// exp, log, sqrt), no pi, and no power whose exponent is a constant (free of i and n) with a
/// non-integer value. Such a subtree has an exact rational value wherever it is defined, with
/// one exception that cannot be decided statically: a power whose exponent depends on i or n
/// ("2^(i/2)") is rational only where the exponent happens to be an integer; eval_rational()
/// throws numeric_error at the other points, while eval<S>() for a real S falls back to the
/// real power there. Powers with an integer exponent are exact ((-1)^i, 10000^(-2), 0^-1 is
/// undefined); 0^0 is 1.
///
/// Evaluation in a scalar type S evaluates every maximal rational subtree exactly and converts
/// it once with from_rational<S>; the remaining operations run in S. Constant subtrees (free of
/// i and n) are folded at parse time when rational, and cached per scalar type and precision
/// when not, so "sin(i/10000^(2/16))" computes 10000^(2/16) once per precision. Exact
/// evaluation first tries 64-bit fractions and falls back to GMP on overflow, so small formulas
/// like "(i-1)/n" evaluate without allocating (for double, a small p/q is divided directly,
/// which is the correctly rounded value).

#include "numeric/scalar.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace attnprop::model {

/// A malformed formula. what() is "column C: message"; columns count bytes from 1, and a
/// problem at the end of the text has column text.size() + 1.
class expr_error : public std::runtime_error {
public:
    /// An error at the 1-based byte column `column`.
    expr_error(std::size_t column, std::string message);
    /// 1-based byte column of the offending token.
    std::size_t column() const noexcept { return column_; }
    /// The message without the column prefix.
    const std::string& message() const noexcept { return message_; }

private:
    std::size_t column_;
    std::string message_;
};

namespace detail {

/// Node kinds of the formula tree.
enum class expr_op : std::uint8_t {
    number,
    var_i,
    var_n,
    pi,
    neg,
    add,
    sub,
    mul,
    div,
    pow,
    sin,
    cos,
    exp,
    log,
    sqrt,
    abs,
    floor,
    eq,
    ne,
    lt,
    le,
    gt,
    ge
};

/// Marks an absent child.
inline constexpr std::uint32_t no_child = 0xffffffffU;

/// One node of the formula tree. Children always have smaller indices than their parent.
struct expr_node {
    expr_op op = expr_op::number;
    /// The subtree is rational (see the file comment).
    bool rational = true;
    /// The subtree does not mention i or n.
    bool constant = true;
    std::uint32_t lhs = no_child;
    std::uint32_t rhs = no_child;
    /// 1-based byte column of the node's operator or first character.
    std::uint32_t column = 0;
    /// The exact value: always for numbers, and for rational constant subtrees that could be
    /// folded at parse time.
    std::optional<numeric::rational> value;
    /// `value` as a fraction small_num / small_den of 64-bit integers (small_den > 0, lowest
    /// terms), when it fits.
    bool small = false;
    long long small_num = 0;
    long long small_den = 1;
};

/// Values of constant non-rational subtrees, per node, scalar type and precision.
struct expr_constant_cache {
    struct entry {
        std::uint32_t node;
        long precision;
        std::variant<double, numeric::mpfr_real, numeric::arb_ball> value;
    };
    std::mutex mutex;
    std::vector<std::unique_ptr<entry>> entries; // stable addresses: no variant moves
};

/// The fraction p/q (q > 0) converted with from_rational<S>; doubles divide directly when
/// both fit in 53 bits (a correctly rounded division of exact operands).
template <numeric::Scalar S>
S from_fraction(long long p, long long q, const numeric::context& ctx) {
    if constexpr (std::is_same_v<S, double>) {
        constexpr long long limit = 1LL << 53;
        if (p <= limit && p >= -limit && q <= limit)
            return static_cast<double>(p) / static_cast<double>(q);
    }
    return numeric::from_rational<S>(numeric::rational(p, q), ctx);
}

/// True (with k set) when q is an integer of magnitude below 2^62.
bool small_integer(const numeric::rational& q, long& k);

/// x^k for an integer k, in the arithmetic of x; 0^negative is a numeric::undefined_error (Arb:
/// an unbounded ball).
double int_pow(double x, long k, const numeric::context& ctx);
numeric::mpfr_real int_pow(const numeric::mpfr_real& x, long k, const numeric::context& ctx);
numeric::arb_ball int_pow(const numeric::arb_ball& x, long k, const numeric::context& ctx);
/// Generic fallback: binary powering.
template <numeric::ExpScalar S> S int_pow(const S& x, long k, const numeric::context& ctx) {
    if (k < 0) {
        if (numeric::sign(x, ctx) == numeric::order::equal)
            throw numeric::undefined_error("zero raised to a negative power");
        return numeric::one<S>(ctx) / int_pow(x, -k, ctx);
    }
    S result = numeric::one<S>(ctx);
    S base = x;
    for (unsigned long e = static_cast<unsigned long>(k); e != 0; e >>= 1) {
        if (e & 1UL)
            result = result * base;
        if (e > 1)
            base = base * base;
    }
    return result;
}

/// a^b for a real exponent b. A negative base, or a zero base with an exponent that is not
/// positive, is a numeric::undefined_error for double and MPFR; Arb returns an indeterminate
/// ball.
double real_pow(double a, double b, const numeric::context& ctx);
numeric::mpfr_real real_pow(const numeric::mpfr_real& a, const numeric::mpfr_real& b,
                            const numeric::context& ctx);
numeric::arb_ball real_pow(const numeric::arb_ball& a, const numeric::arb_ball& b,
                           const numeric::context& ctx);
/// Generic fallback: exp(b log a).
template <numeric::ExpScalar S> S real_pow(const S& a, const S& b, const numeric::context&) {
    return numeric::exp(b * numeric::log(a));
}

/// Throws numeric::undefined_error when a rounded result is NaN or infinite
/// (numeric::require_finite); no-op for enclosures (an indeterminate ball is returned, and the
/// positional embedding that uses the formula reports it).
void check_finite(double x);
void check_finite(const numeric::mpfr_real& x);
inline void check_finite(const numeric::arb_ball&) {}
template <class S> void check_finite(const S&) {}

/// Whether the relation holds given the order of its operands (ord is not unknown).
bool relation_holds(expr_op op, numeric::order ord);

} // namespace detail

/// A parsed formula in i and n. Immutable after parsing; copies share a cache of constant
/// subexpression values, which is safe to use from several threads.
class expr {
public:
    /// Parses a formula; throws expr_error with a 1-based column on bad text.
    static expr parse(std::string_view text);

    /// Source text as given.
    const std::string& text() const noexcept { return text_; }

    /// True when the formula uses no transcendental function, no pi and no power with a
    /// constant non-integer exponent, so it has an exact rational value at every (i, n) where it
    /// is defined (a power with an exponent depending on i or n must still have an integer
    /// exponent there; see the file comment).
    bool is_rational() const noexcept { return nodes_[root_].rational; }

    /// Exact value at (i, n). Throws numeric::undefined_error on division by zero and on
    /// 0^negative (the value does not exist), numeric_error when the formula is not
    /// is_rational(), on a non-integer exponent at (i, n), and on powers too large to
    /// represent. Messages name the formula and (i, n).
    numeric::rational eval_rational(long i, long n) const;

    /// Value in S. Rational subtrees (maximal subexpressions without transcendental parts) are
    /// evaluated exactly and converted once with from_rational<S>; the rest in S. For an S that
    /// is not ExpScalar, a formula that is not is_rational() throws numeric_error. Division by
    /// zero, log of a non-positive number, the square root of a negative number, a non-integer
    /// power of a negative number and non-finite results throw numeric::undefined_error for double
    /// and MPFR; Arb returns indeterminate balls instead. An Iverson bracket whose operands are not
    /// both rational is decided with compare() in S; when an Arb comparison is undecided the
    /// result is the ball [0, 1].
    template <numeric::Scalar S> S eval(long i, long n, const numeric::context& ctx) const;

    /// Conservative bound analysis over the domain 1 <= i <= n, n >= 1: true when the formula
    /// is provably bounded there, false when provably unbounded, std::nullopt when the analysis
    /// cannot tell. Computed once at parse time; the rules are documented in expr.cpp. "Bounded"
    /// concerns the points where the formula is defined (elsewhere evaluation throws, e.g.
    /// "1/(i-1)" at i = 1); "unbounded" is only reported for formulas defined at all but
    /// finitely many points.
    std::optional<bool> bounded() const noexcept { return bounded_; }

    /// True when the formula is proven defined at every point 1 <= i <= n, n >= 1 (no
    /// division by zero, log or sqrt outside its domain, 0 to a negative power or a negative
    /// base to a non-integer power anywhere); false when it is not, or the rules documented in
    /// expr.cpp cannot tell. A formula "bounded" where it is defined but undefined somewhere
    /// ("1/(i-2)", "(-1)^(1/2)") does not give bounded embeddings.
    bool defined_everywhere() const noexcept { return defined_everywhere_; }

private:
    expr() = default;

    /// Exact value of node idx; false when a power meets a non-integer exponent (strict =
    /// false) - with strict = true that throws. Other errors throw. No formula context in the
    /// messages.
    bool exact_at(std::uint32_t idx, long i, long n, numeric::rational& out, bool strict) const;
    /// Fast path of exact_at in 64-bit fractions: false on overflow and on anything exact_at
    /// would reject or throw for (the caller then uses exact_at).
    bool small_at(std::uint32_t idx, long i, long n, long long& p, long long& q) const noexcept;
    /// Message for a non-rational formula evaluated in exact-only arithmetic.
    std::string needs_real_message(std::string_view kind_name) const;
    /// Throws a numeric_error with e's message followed by the formula and (i, n).
    [[noreturn]] void rethrow_with_context(const numeric::numeric_error& e, long i, long n) const;

    template <numeric::ExpScalar S>
    S eval_node(std::uint32_t idx, long i, long n, const numeric::context& ctx) const;
    template <numeric::ExpScalar S>
    S compute_node(std::uint32_t idx, long i, long n, const numeric::context& ctx) const;

    std::string text_;
    std::vector<detail::expr_node> nodes_;
    std::uint32_t root_ = 0;
    std::optional<bool> bounded_;
    bool defined_everywhere_ = false;
    std::shared_ptr<detail::expr_constant_cache> cache_;
};

// --- template implementation ------------------------------------------------------------------

template <numeric::Scalar S> S expr::eval(long i, long n, const numeric::context& ctx) const {
    if constexpr (!numeric::ExpScalar<S>) {
        long long p = 0;
        long long d = 1;
        if (small_at(root_, i, n, p, d))
            return detail::from_fraction<S>(p, d, ctx);
        if (!is_rational()) {
            if constexpr (std::is_same_v<S, numeric::rational>)
                throw numeric::numeric_error(needs_real_message("exact rationals"));
            else
                throw numeric::numeric_error(needs_real_message(numeric::scalar_traits<S>::name));
        }
        return numeric::from_rational<S>(eval_rational(i, n), ctx);
    } else {
        try {
            S r = eval_node<S>(root_, i, n, ctx);
            detail::check_finite(r);
            return r;
        } catch (const numeric::numeric_error& e) {
            rethrow_with_context(e, i, n);
        }
    }
}

template <numeric::ExpScalar S>
S expr::eval_node(std::uint32_t idx, long i, long n, const numeric::context& ctx) const {
    const detail::expr_node& nd = nodes_[idx];
    if (nd.rational) {
        long long p = 0;
        long long d = 1;
        if (small_at(idx, i, n, p, d))
            return detail::from_fraction<S>(p, d, ctx);
        numeric::rational q;
        try {
            if (exact_at(idx, i, n, q, false))
                return numeric::from_rational<S>(q, ctx);
        } catch (const numeric::limit_error&) {
            // Too large to compute exactly (2^(10^6 i)): S computes it in its own arithmetic.
        }
    }
    constexpr bool cacheable = std::is_same_v<S, double> || std::is_same_v<S, numeric::mpfr_real> ||
                               std::is_same_v<S, numeric::arb_ball>;
    if constexpr (cacheable) {
        if (nd.constant && !nd.rational && cache_) {
            {
                std::lock_guard<std::mutex> lock(cache_->mutex);
                for (const auto& e : cache_->entries)
                    if (e->node == idx && e->precision == ctx.precision_bits &&
                        std::holds_alternative<S>(e->value))
                        return std::get<S>(e->value);
            }
            S v = compute_node<S>(idx, i, n, ctx);
            std::lock_guard<std::mutex> lock(cache_->mutex);
            if (cache_->entries.size() >= 256)
                cache_->entries.clear();
            cache_->entries.push_back(std::make_unique<detail::expr_constant_cache::entry>(
                detail::expr_constant_cache::entry{idx, ctx.precision_bits, v}));
            return v;
        }
    }
    return compute_node<S>(idx, i, n, ctx);
}

template <numeric::ExpScalar S>
S expr::compute_node(std::uint32_t idx, long i, long n, const numeric::context& ctx) const {
    using detail::expr_op;
    const detail::expr_node& nd = nodes_[idx];
    switch (nd.op) {
    case expr_op::number:
    case expr_op::var_i:
    case expr_op::var_n: {
        numeric::rational q;
        exact_at(idx, i, n, q, true);
        return numeric::from_rational<S>(q, ctx);
    }
    case expr_op::pi:
        return numeric::pi<S>(ctx);
    case expr_op::neg:
        return -eval_node<S>(nd.lhs, i, n, ctx);
    case expr_op::add:
        return eval_node<S>(nd.lhs, i, n, ctx) + eval_node<S>(nd.rhs, i, n, ctx);
    case expr_op::sub:
        return eval_node<S>(nd.lhs, i, n, ctx) - eval_node<S>(nd.rhs, i, n, ctx);
    case expr_op::mul:
        return eval_node<S>(nd.lhs, i, n, ctx) * eval_node<S>(nd.rhs, i, n, ctx);
    case expr_op::div: {
        S a = eval_node<S>(nd.lhs, i, n, ctx);
        S b = eval_node<S>(nd.rhs, i, n, ctx);
        if constexpr (std::is_same_v<S, double>) {
            if (b == 0.0)
                throw numeric::undefined_error("division by zero");
        }
        return a / b;
    }
    case expr_op::pow: {
        const detail::expr_node& e = nodes_[nd.rhs];
        numeric::rational q;
        if (e.rational && exact_at(nd.rhs, i, n, q, false)) {
            S base = eval_node<S>(nd.lhs, i, n, ctx);
            long k = 0;
            if (detail::small_integer(q, k))
                return detail::int_pow(base, k, ctx);
            return detail::real_pow(base, numeric::from_rational<S>(q, ctx), ctx);
        }
        return detail::real_pow(eval_node<S>(nd.lhs, i, n, ctx), eval_node<S>(nd.rhs, i, n, ctx),
                                ctx);
    }
    case expr_op::sin:
        return numeric::sin(eval_node<S>(nd.lhs, i, n, ctx));
    case expr_op::cos:
        return numeric::cos(eval_node<S>(nd.lhs, i, n, ctx));
    case expr_op::exp:
        return numeric::exp(eval_node<S>(nd.lhs, i, n, ctx));
    case expr_op::log: {
        S a = eval_node<S>(nd.lhs, i, n, ctx);
        if constexpr (std::is_same_v<S, double>) {
            if (!(a > 0.0))
                throw numeric::undefined_error("log of a non-positive number");
        }
        return numeric::log(a);
    }
    case expr_op::sqrt: {
        S a = eval_node<S>(nd.lhs, i, n, ctx);
        if constexpr (std::is_same_v<S, double>) {
            if (!(a >= 0.0))
                throw numeric::undefined_error("square root of a negative number");
        }
        return numeric::sqrt(a);
    }
    case expr_op::abs:
        return numeric::abs(eval_node<S>(nd.lhs, i, n, ctx));
    case expr_op::floor:
        return numeric::floor(eval_node<S>(nd.lhs, i, n, ctx));
    case expr_op::eq:
    case expr_op::ne:
    case expr_op::lt:
    case expr_op::le:
    case expr_op::gt:
    case expr_op::ge: {
        numeric::order ord =
            numeric::compare(eval_node<S>(nd.lhs, i, n, ctx), eval_node<S>(nd.rhs, i, n, ctx));
        if (ord == numeric::order::unknown) {
            if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure)
                return numeric::unit_enclosure<S>(ctx);
            else
                throw numeric::numeric_error("undecided comparison in an Iverson bracket");
        }
        return detail::relation_holds(nd.op, ord) ? numeric::one<S>(ctx) : numeric::zero<S>(ctx);
    }
    }
    throw numeric::numeric_error("corrupt formula node");
}

} // namespace attnprop::model
