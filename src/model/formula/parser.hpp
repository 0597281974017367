#pragma once
/// @file parser.hpp
/// The parser of the formula grammar (expr.hpp): text to tree, with the parse-time facts of
/// every node (rational, constant) and rational constant subtrees folded to their values.

#include "model/formula/ast.hpp"
#include "model/formula/lexer.hpp"

#include <cstddef>
#include <string_view>

namespace attnprop::model::formula {

/// Deepest tree, and deepest parser recursion, accepted.
inline constexpr std::size_t max_depth = 500;

/// Parses a formula; throws expr_error with a 1-based column on bad text (including trees
/// deeper than max_depth).
tree parse(std::string_view text);

} // namespace attnprop::model::formula
