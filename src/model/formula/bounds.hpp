#pragma once
/// @file bounds.hpp
/// Boundedness and definedness of a formula over the domain 1 <= i <= n, n >= 1, decided
/// statically by a bottom-up pass over the tree (the rules are in bounds.cpp).

#include "model/formula/ast.hpp"

#include <optional>

namespace attnprop::model::formula {

struct bound_facts {
    /// true: provably bounded where defined; false: provably unbounded (and defined at all
    /// but finitely many points); std::nullopt: the rules cannot tell.
    std::optional<bool> bounded;
    /// Provably defined at every point of the domain.
    bool defined_everywhere = false;
};

/// The facts of expr::bounded() and expr::defined_everywhere().
bound_facts analyse_bounds(const tree& t);

} // namespace attnprop::model::formula
