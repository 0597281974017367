#pragma once
/// @file print.hpp
/// Writing a formula tree back as text, and comparing trees by structure.

#include "model/formula/ast.hpp"

#include <cstdint>
#include <string>

namespace attnprop::model::formula {

/// Structural equality of two subtrees: same operations, same shape, equal number literals
/// (columns and the facts derived at parse time are not compared).
bool same_structure(const tree& a, std::uint32_t ia, const tree& b, std::uint32_t ib);
inline bool same_structure(const tree& a, const tree& b) {
    return same_structure(a, a.root, b, b.root);
}

/// The formula as text in the grammar of expr.hpp, with the parentheses the precedence rules
/// need and no others. Number literals are written exactly as plain decimals, so for every tree
/// the parser makes, parsing the text gives a tree with the same structure.
std::string to_text(const tree& t);

} // namespace attnprop::model::formula
