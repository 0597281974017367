#pragma once
/// @file diff_ball.hpp
/// A differential enclosure: one quantity of a model in two runs on two inputs, carried as the
/// first run's value x, the second run's value x' and the change d = x' - x, all Arb balls.
///
/// Subtracting two independently computed balls gives a change whose radius is that of the
/// values themselves (about 2^-precision |x|), whatever the change is: a change that is exactly
/// zero, or far below 2^-precision, can never be told apart from zero, and a comparison with a
/// bound that is exactly attained (0 <= 0) stays undecided at every precision. `diff_ball`
/// propagates d by exact difference rules instead (a product (x+dx)(y+dy) - xy = x dy + dx y +
/// dx dy, exp(x + d) - exp(x) = exp(x) expm1(d), tanh(x + d) - tanh(x) = tanh(d) (1 - tanh(x)
/// tanh(x + d)), a quotient, square roots, logarithms, ...), as differential verifiers of
/// neural networks do. So d stays the exact point 0 wherever the two runs agree by
/// construction (an untouched position, a zero value map, a projection that ignores the changed
/// coordinates), and has relative accuracy where the runs differ by little. x' is computed by
/// the second run's own operations, so where the runs differ by much (a softmax whose
/// denominator drops from 10^183 to 1), x' stays as accurate as an independent pass and the
/// change is intersected with x' - x: d is never wider than the difference of two passes.
///
/// Kind: enclosure. Both x and x + d are enclosed rigorously; comparisons say less, equal or
/// greater only when both runs agree on it, otherwise unknown. The kernels instantiate for it
/// like for any other scalar (attention/instantiate_diff.cpp); `attention::soft_change` runs a
/// model on a pair of inputs that differ in one symbol.

#include "numeric/arb_ball.hpp"
#include "numeric/context.hpp"
#include "numeric/order.hpp"
#include "numeric/rational.hpp"
#include "numeric/traits.hpp"

#include <optional>
#include <string>
#include <type_traits>

namespace attnprop::numeric {

class diff_ball {
public:
    diff_ball() = default;
    /// The exact point 0 in both runs, at the given working precision.
    explicit diff_ball(long precision_bits)
        : x_(precision_bits), y_(precision_bits), d_(precision_bits) {}
    /// The first run's value x and the change d; the second run's value is x + d.
    diff_ball(arb_ball x, arb_ball d);
    /// The first run's value x, the second's y and an enclosure d of y - x (intersected with
    /// the ball y - x).
    diff_ball(arb_ball x, arb_ball y, arb_ball d);
    /// The same value x in both runs (change the exact point 0).
    static diff_ball same(arb_ball x);

    const arb_ball& first() const { return x_; }
    /// The second run's value.
    const arb_ball& second() const { return y_; }
    /// The change x' - x.
    const arb_ball& change() const { return d_; }
    long precision() const { return x_.precision(); }
    /// Whether the change is the exact point 0: the two runs are proved to agree.
    bool unchanged() const;

    diff_ball& operator+=(const diff_ball& b);
    diff_ball& operator-=(const diff_ball& b);
    diff_ball& operator*=(const diff_ball& b);
    diff_ball& operator/=(const diff_ball& b);

private:
    arb_ball x_, y_, d_;
};

diff_ball operator+(const diff_ball& a, const diff_ball& b);
diff_ball operator-(const diff_ball& a, const diff_ball& b);
diff_ball operator*(const diff_ball& a, const diff_ball& b);
/// Quotient; a divisor ball containing 0 in either run gives an indeterminate result.
diff_ball operator/(const diff_ball& a, const diff_ball& b);
diff_ball operator-(const diff_ball& a);

/// The order of a and b when both runs prove the same order, else unknown.
order compare(const diff_ball& a, const diff_ball& b);
void fma_acc(diff_ball& acc, const diff_ball& a, const diff_ball& b);

diff_ball exp(const diff_ball& x);
diff_ball log(const diff_ball& x);
diff_ball sqrt(const diff_ball& x);
diff_ball sqrt_nonneg(const diff_ball& x);
diff_ball tanh(const diff_ball& x);
diff_ball sin(const diff_ball& x);
diff_ball cos(const diff_ball& x);
/// erf and erfc in each run; the change is d times erf' at a point between the runs' values.
diff_ball erf(const diff_ball& x);
diff_ball erfc(const diff_ball& x);
diff_ball abs(const diff_ball& x);
diff_ball floor(const diff_ball& x);
/// max(x, 0) in each run; the change lies between 0 and d.
diff_ball relu(const diff_ball& x, const context& ctx);
/// Heaviside step in each run.
diff_ball step(const diff_ball& x, const context& ctx);
/// max(a, b) in each run; the change is at most max(|da|, |db|) in absolute value.
diff_ball max_of(const diff_ball& a, const diff_ball& b);
/// The midpoints of x and d: exact points, for a softmax shift (any shift is exact in each run).
diff_ball representative(const diff_ball& x);
/// Both runs' hulls.
diff_ball hull(const diff_ball& a, const diff_ball& b);

bool is_nan(const diff_ball& x);
bool is_finite(const diff_ball& x);
/// The exact value when both runs have the same exact value.
std::optional<rational> exact_of(const diff_ball& x);
std::size_t repr_hash(const diff_ball& x);
bool same_value(const diff_ball& a, const diff_ball& b);
/// The first run's value (what a trace of the first input would show).
std::string to_display_string(const diff_ball& x, int digits);
std::string to_decimal(const diff_ball& x, int digits);
std::string radius_string(const diff_ball& x);
/// certified_string of the first run's value.
std::string to_certified_display(const diff_ball& x, int digits, bool force_digits = false);
double approx_double(const diff_ball& x);

template <> struct scalar_traits<diff_ball> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "diff";
    static constexpr bool expensive_exp = true;
    static constexpr bool checks_finite = false;
    static constexpr bool variable_precision = true;
    /// The same enclosure of q in both runs (change the exact point 0).
    static diff_ball from_rational(const rational& q, const context& ctx) {
        return diff_ball::same(arb_ball::from_rational(q, ctx));
    }
    static diff_ball from_long(long v, const context& ctx) {
        return diff_ball::same(scalar_traits<arb_ball>::from_long(v, ctx));
    }
    static long precision(const diff_ball& x) { return x.precision(); }
    static diff_ball pi(const context& ctx) { return diff_ball::same(pi_ball(ctx)); }
    /// [0, 1] in each run, unrelated: the change is [-1, 1].
    static diff_ball unit(const context& ctx) {
        arb_ball u = scalar_traits<arb_ball>::unit(ctx);
        arb_ball d(ctx.precision_bits);
        arb_zero_pm_one(d.raw());
        return diff_ball(std::move(u), std::move(d));
    }
};

/// Whether S is the kind of a diff_ball's runs (Arb balls): a change measured in S that its
/// radius does not resolve can be measured again as a differential enclosure, which proves a
/// change that is exactly 0 (attention::soft_change).
template <class S> inline constexpr bool has_differential = std::is_same_v<S, arb_ball>;

} // namespace attnprop::numeric
