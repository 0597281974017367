#pragma once
/// @file formula_range.hpp
/// A sound numeric range of a positional formula over every position and length,
/// { f(i, n) : 1 <= i <= n, n >= 1, f defined at (i, n) }, for the initial-state bound F_0.
///
/// expr::bounded() decides *whether* a formula is bounded; this gives the numbers, with the
/// range analysis of model/formula/range.hpp (affine forms a·i + b·n + R in outward-rounded
/// MPFR intervals, quotients also on a grid in t = i/n, u = 1/n) over the formula's tree.
///
/// Sound by construction (every step encloses the set of values where the formula is
/// defined); it may fail to find a finite range for a bounded formula (e.g. "i*(1/i)"), never
/// the converse.

#include "model/expr.hpp"
#include "model/formula/range.hpp"
#include "numeric/scalar.hpp"

#include <optional>

namespace attnprop::analysis {

/// A closed range [lo, hi]; lo and hi are exact points.
using model::formula::value_range;

/// A finite enclosure of the formula's values over 1 <= i <= n, n >= 1 (at the context's
/// precision), or std::nullopt when the analysis finds no finite one or expr::bounded() has
/// proven the formula unbounded.
std::optional<value_range> formula_range(const model::expr& f, const numeric::context& ctx);

} // namespace attnprop::analysis
