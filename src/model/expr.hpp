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
///
/// The grammar itself (tree, lexer, parser, evaluators, analyses) lives in model/formula/;
/// expr is the handle the rest of attnprop uses.

#include "model/formula/ast.hpp"
#include "model/formula/lexer.hpp"
#include "model/formula/real.hpp"
#include "numeric/scalar.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace attnprop::model {

/// A parsed formula in i and n. Immutable after parsing; copies share a cache of constant
/// subexpression values, which is safe to use from several threads.
class expr {
public:
    /// Parses a formula; throws expr_error with a 1-based column on bad text.
    static expr parse(std::string_view text);

    /// Source text as given.
    const std::string& text() const noexcept { return text_; }

    /// The syntax tree (model/formula/ast.hpp), for analyses that walk the formula.
    const formula::tree& ast() const noexcept { return tree_; }

    /// True when the formula uses no transcendental function, no pi and no power with a
    /// constant non-integer exponent, so it has an exact rational value at every (i, n) where it
    /// is defined (a power with an exponent depending on i or n must still have an integer
    /// exponent there; see the file comment).
    bool is_rational() const noexcept { return tree_.top().rational; }

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
    /// cannot tell. Computed once at parse time; the rules are documented in
    /// formula/bounds.cpp. "Bounded"
    /// concerns the points where the formula is defined (elsewhere evaluation throws, e.g.
    /// "1/(i-1)" at i = 1); "unbounded" is only reported for formulas defined at all but
    /// finitely many points.
    std::optional<bool> bounded() const noexcept { return bounded_; }

    /// Whether the formula mentions the position i anywhere (a formula in n alone does not).
    bool uses_i() const noexcept;

    /// Whether the formula mentions neither i nor n: its value is one number.
    bool is_constant() const noexcept { return tree_.top().constant; }

    /// The exact value of a constant formula that is rational (folded at parse time), else
    /// std::nullopt.
    std::optional<numeric::rational> constant_value() const {
        const formula::node& nd = tree_.top();
        if (nd.constant && nd.rational) return nd.value;
        return std::nullopt;
    }

    /// True when the formula is proven defined at every point 1 <= i <= n, n >= 1 (no
    /// division by zero, log or sqrt outside its domain, 0 to a negative power or a negative
    /// base to a non-integer power anywhere); false when it is not, or the rules documented in
    /// formula/bounds.cpp cannot tell. A formula "bounded" where it is defined but undefined somewhere
    /// ("1/(i-2)", "(-1)^(1/2)") does not give bounded embeddings.
    bool defined_everywhere() const noexcept { return defined_everywhere_; }

private:
    expr() = default;

    /// Message for a non-rational formula evaluated in exact-only arithmetic.
    std::string needs_real_message(std::string_view kind_name) const;
    /// Throws a numeric_error with e's message followed by the formula and (i, n).
    [[noreturn]] void rethrow_with_context(const numeric::numeric_error& e, long i, long n) const;

    std::string text_;
    formula::tree tree_;
    std::optional<bool> bounded_;
    bool defined_everywhere_ = false;
    std::shared_ptr<formula::constant_cache> cache_;
};

// --- template implementation ------------------------------------------------------------------

template <numeric::Scalar S> S expr::eval(long i, long n, const numeric::context& ctx) const {
    if constexpr (!numeric::ExpScalar<S>) {
        long long p = 0;
        long long d = 1;
        if (formula::fraction_value(tree_.nodes, tree_.root, i, n, p, d))
            return numeric::from_fraction<S>(p, d, ctx);
        if (!is_rational())
            throw numeric::numeric_error(needs_real_message(numeric::display_name<S>()));
        return numeric::from_rational<S>(eval_rational(i, n), ctx);
    } else {
        try {
            S r = formula::real_evaluator<S>(tree_, cache_.get(), i, n, ctx).at(tree_.root);
            formula::check_finite(r);
            return r;
        } catch (const numeric::numeric_error& e) {
            rethrow_with_context(e, i, n);
        }
    }
}

} // namespace attnprop::model
