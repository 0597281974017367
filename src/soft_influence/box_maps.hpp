#pragma once
/// @file box_maps.hpp
/// Positionwise maps evaluated on boxes, with a coordinatewise bound on how far their value
/// moves: the map step of the bounds over every input (all_inputs.hpp, docs/bounds.md "Every
/// input, every n").
///
/// A box is a vector of enclosures (certified double intervals or Arb balls) that holds the
/// map's input for every input sequence considered; the map is evaluated in that kind, so the
/// result holds its output for every one of them. A difference bound e (doubles, rounded up)
/// bounds |x_c - x'_c| for two inputs x, x' that both lie in the box; it is carried node by node
/// with the node's *local* coordinatewise Lipschitz bound on the box: two points of a box are
/// joined by a segment inside it (a box is convex), so the mean value theorem along that segment
/// bounds the change of a node's output by the supremum of its partial derivatives over the
/// node's input box times the input changes. linear |W| e; add, sub e + e'; mul
/// max|a| e_b + max|b| e_a; relu e (0 where the box is <= 0); tanh e (1 - tanh(m)^2), erf
/// e (2/sqrt(pi)) e^(-m^2) with m = min |x| over the box; gelu 1.1289 e; scale |c| e; layer norm
/// min(|γ_c| ||e||_2 / s, |γ_c| Σ_m J_cm e_m) with s = sqrt(min var + eps) over the box and
/// |J_cm| <= ((δ_cm - 1/d) + z_c z_m / d)/s, z = the box of (x - mean)/s (docs/bounds.md);
/// step, floor, tables and hashes: 0 where the box decides their value, else the cap. Every
/// coordinate's bound is also capped by `cap` times the width of its output box (both values lie
/// in it): `cap` is 1 for a plain difference and n (or its upper end) for a difference scaled by
/// n.

#include "model/maps.hpp"
#include "numeric/scalar.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace attnprop::analysis::boxes {

/// Arithmetic of nonnegative upper bounds, rounded up (+inf absorbs; 0 * inf = 0).
double up_add(double a, double b);
double up_sub(double a, double b);
double up_mul(double a, double b);
double up_div(double a, double b);
double up_sqrt(double a);
/// Euclidean norm of a vector of upper bounds, rounded up.
double up_norm(const std::vector<double>& v);

/// An upper bound of every point of x as a double (+inf when x is not finite).
double up(const numeric::dinterval& x);
double up(const numeric::arb_ball& x);
/// A lower bound of every point of x as a double (-inf when x is not finite).
double down(const numeric::dinterval& x);
double down(const numeric::arb_ball& x);
/// The exact point x in S.
template <class S> S point(double x, const numeric::context& ctx);
/// The set [lo, hi] in S (lo <= hi).
template <class S> S span(double lo, double hi, const numeric::context& ctx);
/// The enclosure in S of a certified double interval's reals.
template <class S> S from_dinterval(const numeric::dinterval& x, const numeric::context& ctx);
/// up(x) - down(x), rounded up: the width of the set x encloses.
template <class S> double width(const S& x) { return up_sub(up(x), down(x)); }
/// max(|lo|, |hi|): an upper bound of |x| over the set.
template <class S> double magnitude(const S& x) { return std::max(-down(x), up(x)); }

/// A box and a coordinatewise difference bound (empty: not tracked).
template <class S> struct box_diff {
    std::vector<S> box;
    std::vector<double> diff;
    /// The first node whose change bound became infinite from finite inputs ("layer norm
    /// 'n1': var + eps may be 0 on its box", "step 's'", "table map"), when one did.
    std::string unbounded;
};

/// The map evaluated on the box, and (when in.diff is not empty) the bound on the change of
/// its output when the input changes by at most in.diff, each coordinate capped by
/// cap * width (cap >= 0, possibly +inf). Throws numeric::undefined_error where the map has no
/// value on some point of the box that the evaluation cannot exclude (a layer norm whose
/// var + eps box reaches 0).
template <class S>
box_diff<S> propagate(const model::map<S>& f, const box_diff<S>& in, double cap,
                      const numeric::context& ctx);

/// The smallest variance over a box, rounded down (0 when the box holds a constant vector):
/// min over x in the box of ||x - mean(x)||^2 / d, from the piecewise quadratic
/// g(c) = Σ_m dist(c, [lo_m, hi_m])^2 = min over the box of ||x - c 1||^2.
double min_variance(const std::vector<double>& lo, const std::vector<double>& hi);

} // namespace attnprop::analysis::boxes
