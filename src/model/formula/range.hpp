#pragma once
/// @file range.hpp
/// A sound numeric range of a formula over every position and length,
/// { f(i, n) : 1 <= i <= n, n >= 1, f defined at (i, n) }.
///
/// A bottom-up pass over the tree evaluates every node abstractly, in outward-rounded MPFR
/// intervals with infinite endpoints allowed, keeping each value as an *affine form*
/// a·i + b·n + R (a, b exact rationals, R an interval): i and n are affine, +, - and
/// multiplication or division by an exact constant stay affine, and floor(x) ∈ x + [-1, 0] keeps
/// "i - 2*floor(i/2)" at [0, 2]. Anything else first collapses a form to its exact range over
/// the real relaxation {1 <= i <= n} (a·i + b·n = (a+b)·i + b·(n-i), i >= 1, n-i >= 0) and then
/// applies interval arithmetic. A quotient of forms is also enclosed in the coordinates
/// t = i/n, u = 1/n (0 < u <= t <= 1), where (a1 i + b1 n + R1)/(a2 i + b2 n + R2) =
/// (a1 t + b1 + R1 u)/(a2 t + b2 + R2 u), on a 32 x 32 grid of boxes; the two enclosures are
/// intersected ("(i-1)/n" lands in [0, 1]). Iverson brackets are [0, 1] unless their operand
/// ranges decide them; sin and cos are [-1, 1] or Arb enclosures on short ranges.
///
/// Sound by construction (every step encloses the set of values where the formula is
/// defined); it may fail to find a finite range for a bounded formula (e.g. "i*(1/i)"), never
/// the converse.

#include "model/formula/ast.hpp"
#include "numeric/scalar.hpp"

#include <optional>

namespace attnprop::model::formula {

/// A closed range [lo, hi]; lo and hi are exact points.
struct value_range {
    numeric::arb_ball lo;
    numeric::arb_ball hi;
};

/// A finite enclosure of the formula's values over 1 <= i <= n, n >= 1 (at the context's
/// precision), or std::nullopt when the analysis finds no finite one.
std::optional<value_range> range_over_domain(const tree& t, const numeric::context& ctx);

} // namespace attnprop::model::formula
