#pragma once
/// @file ball_bounds.hpp
/// Upper-bound points of Arb balls, and their decimal text: the rounding every rigorous bound
/// of attnprop is made of (the soft-attention bounds, the leaks of soft attention simulating hard
/// attention, the reports and commands that print them). An *upper-bound point* is an exact
/// ball (radius 0) whose value is at least the true quantity, or +inf when no finite bound is
/// known; later formulas only add and multiply non-negative upper bounds, so recursions built
/// from them stay monotone and easy to audit.

#include "numeric/arb_ball.hpp"

#include <string>

namespace attnprop::numeric {

/// The exact point +inf at the given precision ("no finite bound").
arb_ball pos_inf(long precision_bits);
/// The exact point 0.
arb_ball zero_point(long precision_bits);
/// The smallest representable point >= every point of x (rounded up at x's precision);
/// +inf when x is not finite.
arb_ball upper(const arb_ball& x);
/// The largest representable point <= every point of x; -inf when x is not finite.
arb_ball lower(const arb_ball& x);
/// upper(max(a, b)) and upper(min(a, b)) of two balls.
arb_ball max_upper(const arb_ball& a, const arb_ball& b);
arb_ball min_upper(const arb_ball& a, const arb_ball& b);
/// Whether x is a finite ball.
bool finite(const arb_ball& x);

/// A decimal string that is >= x's upper bound (rounded up to `digits` significant digits), e.g.
/// "1.7321" or "3.42e+225"; "inf" when unbounded (also beyond MPFR's exponent range), "0" for 0.
std::string upper_decimal(const arb_ball& x, int digits = 6);
/// A decimal string that is <= x's lower bound ("-inf" when unbounded below).
std::string lower_decimal(const arb_ball& x, int digits = 6);

} // namespace attnprop::numeric
