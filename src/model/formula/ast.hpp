#pragma once
/// @file ast.hpp
/// The syntax tree of a positional formula (see expr.hpp for the grammar and what a formula
/// means). One tree is built by the parser (parser.hpp) and read by every evaluator (exact.hpp:
/// GMP rationals and 64-bit fractions; real.hpp: the real kinds) and analysis (bounds.hpp,
/// range.hpp); they walk it bottom-up with fold() or top-down from the root.
///
/// Adding an operation: a new `op` value here, its row in the table of ast.cpp (spelling,
/// arity, transcendental or not), a case in the parser when it is neither a function call nor
/// a relation, and a case in each evaluator and analysis; their switches have no `default`
/// where a missing case must be a compiler warning.

#include "numeric/scalar.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace attnprop::model::formula {

/// Node kinds.
enum class op : std::uint8_t {
    number, ///< a decimal literal (its exact value in node::value)
    var_i,  ///< the position i
    var_n,  ///< the length n
    pi,
    neg, ///< unary minus
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
    eq, ///< Iverson brackets [a == b] ... [a >= b]: 1 when the relation holds, else 0
    ne,
    lt,
    le,
    gt,
    ge
};

/// Marks an absent child.
inline constexpr std::uint32_t no_child = 0xffffffffU;

/// One node. Children always have smaller indices than their parent, so a pass over the nodes
/// in index order sees every child before its parent.
struct node {
    formula::op op = op::number;
    /// The subtree is rational: it uses no transcendental function (sin, cos, exp, log, sqrt),
    /// no pi and no power whose exponent is a constant with a non-integer value.
    bool rational = true;
    /// The subtree does not mention i or n.
    bool constant = true;
    /// Operand (the only one of unary operations and functions) and right operand.
    std::uint32_t lhs = no_child;
    std::uint32_t rhs = no_child;
    /// 1-based byte column of the node's operator or first character in the source text.
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

/// A parsed formula: its nodes in bottom-up order and the index of the root.
struct tree {
    std::vector<node> nodes;
    std::uint32_t root = 0;

    const node& operator[](std::uint32_t idx) const { return nodes[idx]; }
    const node& top() const { return nodes[root]; }
};

/// Spelling of an operation: the function name ("sin"), the operator ("+", "==", "-" for neg),
/// "i", "n", "pi", or "" for numbers.
std::string_view spelling(op o) noexcept;
/// Number of children: 0, 1 or 2.
int arity(op o) noexcept;
/// sin, cos, exp, log, sqrt: their values are irrational in general.
bool is_transcendental(op o) noexcept;
/// The relations of Iverson brackets (eq ... ge).
bool is_relation(op o) noexcept;
/// A function called as name(x): sin, cos, exp, log, sqrt, abs, floor.
bool is_function(op o) noexcept;
/// The function with this name, if any.
std::optional<op> function_named(std::string_view name) noexcept;
/// The names of all functions, for messages: "sin, cos, exp, log, sqrt, abs or floor" when
/// last_word is "or", "sin/cos/exp/log/sqrt/abs/floor" when separator is "/".
std::string function_names(std::string_view separator, std::string_view last_word);

/// Whether the relation holds given the order of its operands (ord is not unknown).
bool relation_holds(op o, numeric::order ord) noexcept;

/// True (with k set) when q is an integer of magnitude below 2^62.
bool small_integer(const numeric::rational& q, long& k);

/// The results of f over every node, bottom-up: out[idx] = f(idx, t[idx], out), where out
/// already holds the results of all children of idx. The analyses are such folds.
template <class R, class F> std::vector<R> fold(const tree& t, F&& f) {
    std::vector<R> out;
    out.reserve(t.nodes.size());
    for (std::uint32_t idx = 0; idx < t.nodes.size(); ++idx)
        out.push_back(f(idx, t.nodes[idx], static_cast<const std::vector<R>&>(out)));
    return out;
}

} // namespace attnprop::model::formula
