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
#include <string_view>

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

/// The display rule for one-sided bounds (docs/reports.md, "Every printed digit"): which side
/// of the true quantity a printed bound is on.
enum class bound_side {
    upper, ///< the quantity is <= the printed number ("≤ 0.0194": rounded up)
    lower  ///< the quantity is >= the printed number ("≥ 0.9999": rounded down)
};
/// x's end on `side`, rounded in its safe direction to `digits` significant digits and
/// labelled: "≤ 1.7321", "≥ 0.99993"; "≤ inf" when unbounded.
std::string bound_display(const arb_ball& x, bound_side side, int digits = 12);
/// A decimal bound already rounded in its safe direction (upper_decimal, lower_decimal),
/// labelled for people: "≤ " or "≥ " before it ("<= ", ">= " when !unicode: text tables align
/// by bytes); "-" and the empty string stay as they are.
std::string bound_label(std::string_view decimal, bound_side side, bool unicode = true);

/// A radius, rounded up to 4 significant digits, of the ball around the decimal `midpoint` that
/// contains x: the distance from midpoint to the farthest point of x. A midpoint printed with
/// fewer digits than x's own keeps x inside "midpoint +/- radius" (machine output: JSON's
/// midpoint and radius fields). "inf" when x is not finite or midpoint is not a decimal.
std::string radius_around(const arb_ball& x, std::string_view midpoint);

/// A short display of an enclosure (tables with narrow columns): the decimal of at most
/// `digits` significant digits that every point of x rounds to (to nearest), with as many
/// digits as that allows ("0.00123" for a ball of radius 1e-9 around it); when not even one
/// digit is shared, or x contains 0 without being 0, certified_string's "m +/- r". "inf" when
/// x is not finite, "0" for exactly 0.
std::string rounded_display(const arb_ball& x, int digits);

/// The significant digits a certified text (numeric::certified_string, to_certified_display)
/// certifies: a large number (exact_digits) for an exact decimal or a plain one, the digits of
/// the midpoint of "m +/- r", and for "+/- r" (an enclosure of 0) the decimals that r pins to 0
/// (r <= 10^-D certifies D). -1 for text that is not a number ("undefined", "-").
int certified_digits(std::string_view text);
/// certified_digits of an exact value.
inline constexpr int exact_digits = 1 << 20;

} // namespace attnprop::numeric
