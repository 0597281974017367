#pragma once
/// @file class_range.hpp
/// A sound numeric range of a formula over a *class* of positions: the positions i of a
/// length n, for every n of a range of lengths, that share a box of (i, n, n - i, i/n) and
/// possibly the residues of i and n modulo a period P. It is what the bounds over every input
/// (soft_influence/all_inputs.hpp, docs/bounds.md "Every input, every n") need of a positional
/// formula: one box per class that holds for every member at every length of the range.
///
/// A bottom-up fold over the tree, like range.hpp, but with the class's facts: values are kept
/// as affine forms a·i + b·n + c + R (a, b, c exact, R an outward-rounded double interval), and
/// a form collapses to the intersection of four enclosures, a·I + b·N, (a + b)·I + b·D,
/// (a + b)·N − a·D and N·(a·T + b) (I, N, D, T the class's ranges of i, n, n − i and i/n), so
/// that "i/n" over a cell of t = i/n, "n - i" at a tail position and "i" at a head position are
/// exact or tight. With the residues of i and n modulo P known, (−1)^(a·i + b·n + c) with
/// integer a, b, c, sin and cos of π·(a·i + b·n + c) with integer a, b, and floor(a·i + b·n + c)
/// with P·a and P·b integers are exact (floor(x) = x − frac(a·r_i + b·r_n + c)); without them
/// they are [−1, 1] and x + [−1, 0]. A quotient of forms is also enclosed in t = i/n, u = 1/n on
/// eight slices of T. Sound by construction: every step encloses the values at the points of
/// the class where the formula is defined.

#include "model/formula/ast.hpp"
#include "numeric/dinterval.hpp"

#include <optional>

namespace attnprop::model::formula {

/// The points (i, n) of a class: n in [n_lo, n_hi] (n_hi may be +inf), and for each such n the
/// member positions i, with i in [i_lo, i_hi], n − i in [d_lo, d_hi] and i/n in [t_lo, t_hi]
/// (ranges that may over-approximate the class, never miss a member), and when `period` > 1
/// the residues of i and of n modulo it where known. 1 <= i <= n always.
struct position_domain {
    double n_lo = 1, n_hi = 1;
    double i_lo = 1, i_hi = 1;
    double d_lo = 0, d_hi = 0;
    double t_lo = 0, t_hi = 1;
    long period = 1;
    std::optional<long> i_residue, n_residue;
};

/// An enclosure of { f(i, n) : (i, n) in the domain, f defined at (i, n) } as a certified
/// double interval (possibly unbounded; the whole line when the analysis finds nothing better).
numeric::dinterval range_over_positions(const tree& t, const position_domain& dom);

/// The period P for which residues of i and n decide the formula's parities and floors:
/// 2 for (−1)^(affine) and sin/cos of π·(affine), the denominators of the coefficients of an
/// affine argument of floor, their least common multiple over the tree; 1 when nothing needs
/// residues. At most `cap` (a larger requirement gives 1: the ranges are then coarser, still
/// sound).
long residue_period(const tree& t, long cap = 12);

} // namespace attnprop::model::formula
