#pragma once
/// @file soft_influence.hpp
/// Suite `soft-influence`: Hahn (2020), Lemma 5 and Theorem 6 checked on random soft models
/// that satisfy the five hypotheses of Claim 2 (theory.md §2 and §7 S3–S5). Every measurement
/// is an enclosure (certified double intervals, Arb balls), so a comparison with a bound is
/// decided rigorously or reported undecided.
/// Each property is built by a factory whose bound or model source can be replaced, so that the
/// tests show it failing on a deliberately wrong bound or a hypothesis-violating model.

#include "soft_influence/influence.hpp"
#include "props/common.hpp"

#include <functional>
#include <optional>

namespace attnprop::props {

/// Adjusts an a-posteriori pair bound at length n (the negative controls shrink it): applied
/// to the bound the influence profile computed for the pair (analysis::posterior_cache with the
/// incremental kernel, analysis::posterior_bound on two traces otherwise).
using bound_adjust_fn =
    std::function<numeric::arb_ball(const numeric::arb_ball&, std::size_t, const numeric::context&)>;

/// The a-posteriori bound of one changed pair of influence-below-bounds, transformed (a
/// bound_adjust_fn); empty = the bound as computed.
using pair_bound_fn = bound_adjust_fn;

/// The stages a filtered soft-influence property (influence-below-bounds,
/// prob-change-below-bound, influence-vanishes) measures a case in: certified double intervals
/// first and Arb balls only for what they leave open (`filtered`, the default), or one stage
/// alone (`intervals`, `balls`: the tests show each stage deciding, and catching the negative
/// controls, on its own).
enum class stages { filtered, intervals, balls };

/// The positions (0-based, < n - 1) whose one-symbol changes a case measures: every position
/// when n <= 13, otherwise the first two, the last two, the middle one and the case's
/// "position" parameter (when present).
std::vector<std::size_t> measured_positions(const test_case& c, std::size_t n);

/// One-symbol influence is below both bounds: for every measured position and replacement,
/// ||Δy_n^(L)|| <= the a-posteriori per-pair bound and <= δ_L(n) = K(n)/n (a-priori, recursion
/// (B)); so n·influence <= K at every tested n. Measured in certified double intervals first,
/// and again in Arb balls only when they leave the case undecided (`measured_in`). `adjust`
/// transforms each computed a-posteriori bound (the negative control makes it too small).
runner::property influence_below_bounds(pair_bound_fn adjust = {}, stages measured_in = stages::filtered);

/// The output probabilities move at most as theory.md §2.2 allows: for every measured pair,
/// ||Δp||_∞ and TV(p, p') <= factor·||Δy_n^(L)||/4 and <= factor·δ_L(n)/4, with factor =
/// max_{r,r'} ||W_r - W_r'||_2. `divisor` replaces the 4 (the negative control uses 8).
/// Measured in certified double intervals first, then in Arb balls (`measured_in`).
runner::property prob_change_below_bound(long divisor = 4, stages measured_in = stages::filtered);

/// The cross-entropy corollary on PARITY, exhaustively: over all x in {0,1}^{n-1} (n <= 11),
/// the mean cross-entropy in bits of the PARITY label is >= 1 - log2(1 + η), where η is the
/// largest ||Δp||_∞ under flipping one fixed bit b, minimised over b (the exact sup over the
/// enumerated cube, so the inequality is a theorem, not an estimate). `eta_divisor` divides η
/// (the negative control uses 4 on a confident model). `models` replaces gen::soft_model over
/// {0, 1}.
runner::property cross_entropy_above_chance(long eta_divisor = 1,
                                            std::optional<rc::Gen<model::model<rational>>> models = {});

/// The 2DYCK analogue (theory.md §2.2, S5): for a soft predictor of the next closing bracket
/// (input alphabet ( ) [ ], outputs ) and ]), the mean cross-entropy over 8 forced-bracket pairs
/// at length n (analysis::forced_pair: an unbalanced prefix and the same prefix with its top
/// opener's type flipped) is >= 1 - log2(1 + eta), eta the largest ||Δp||_inf over the pairs
/// (divided by eta_divisor: the negative control). Default models: random soft models
/// (gen::soft_model) with four input symbols and two outputs, renamed to the brackets.
runner::property forced_bracket_cross_entropy(long eta_divisor = 1,
                                              std::optional<rc::Gen<model::model<rational>>> models = {});

/// The lengths of an influence ladder with top length `top` (a power of two >= 16): top/8,
/// top/4, top/2, top.
std::vector<std::size_t> ladder_lengths(std::size_t top);

/// One rung of an influence ladder: the largest one-symbol influence found at length n.
struct ladder_point {
    std::size_t n = 0;
    numeric::arb_ball max_influence;          ///< enclosure of the maximum over measured pairs
    std::size_t position = 0;                 ///< 0-based position of the largest midpoint
    int replacement = 0;
    std::optional<numeric::arb_ball> a_priori; ///< δ_L(n) = K(n)/n, when the hypotheses hold
    /// The largest attention weight of the unchanged input at n, over every layer, row and
    /// head (in double, a measurement): n·max_weight is the effective concentration E of Lemma 5.
    double max_weight = 0;
    /// With posterior bounds asked for: the largest measured change against its own
    /// a-posteriori pair bound (greater = certainly above, unknown = undecided, less or equal =
    /// certainly at or below), and that pair.
    std::optional<numeric::order> posterior;
    std::size_t posterior_position = 0;       ///< 0-based
    int posterior_replacement = 0;
    std::optional<numeric::arb_ball> posterior_influence, posterior_bound;
};

/// Measures a ladder case: c.inputs[0] has top - 1 symbols (c.params["ladder_top"] = top), and
/// the input at length n is its first n - 1 symbols followed by eos, so the rungs share their
/// prefix and position 1 is the same symbol at every n. At each n the measured positions are
/// every position (n <= 13), otherwise positions 1, 2, the middle one and the last two; every
/// replacement symbol. `posterior` also compares the largest measured change of each rung with
/// its a-posteriori pair bound (the profile's: posterior_cache with the incremental kernel,
/// else two traces), after `adjust` when given. Measured in Arb balls (influence-vanishes
/// measures in certified double intervals first).
std::vector<ladder_point> influence_ladder(const test_case& c, const numeric::context& ctx,
                                           bool posterior = false, const bound_adjust_fn& adjust = {});

/// Default rate tolerance of influence-vanishes' rate measurement (docs/properties.md).
inline constexpr double vanishing_slope_tolerance = 0.25;

/// Default growth allowance of influence-vanishes on models without the hypotheses.
inline constexpr long vanishing_growth_allowance = 2;

/// The influence vanishes along the ladder (Lemma 5 at every rung, decided rigorously): the
/// largest measured one-symbol change is at most its a-posteriori pair bound, and n·max influence <=
/// K(n) (recursion (B)). The log-log rate of max influence over the upper three rungs is a
/// *measurement* reported beside the verdict ("rate: consistent" when the slope is <= -1 +
/// tolerance, "rate: inconclusive" with the reason otherwise: below the 1/n regime, a slope
/// above -1 + tolerance, too few resolved rungs; "rate: zero" when the upper rungs do not move),
/// never a verdict: for a fixed model Δ(n) = a/n + b/n² + ... and a finite ladder cannot see
/// the asymptotics. A model whose hypotheses are not established makes no claim (undecided)
/// unless `require_hypotheses` is false (the negative controls only): Lemma 5 then says
/// nothing, and the property tests the finite statement "n·Δ(n) at the top rung is at most
/// `growth` times n·Δ(n) at the lowest rung"; a certified growth beyond it (ball lower bound
/// above `growth` times the ball upper bound) is the failure, naming the violated hypotheses.
/// `adjust` replaces the a-posteriori bound (negative control). Each ladder is measured in
/// certified double intervals first, and again in Arb balls when they leave it undecided
/// (`measured_in`); the stage that decided is the number "decided_by" (the measurement is the
/// rate).
runner::property influence_vanishes(double tolerance = vanishing_slope_tolerance,
                                    bool require_hypotheses = true,
                                    std::optional<rc::Gen<model::model<rational>>> models = {},
                                    bound_adjust_fn adjust = {},
                                    long growth = vanishing_growth_allowance,
                                    stages measured_in = stages::filtered);

/// The shape of a ladder case (runner::case_shape): a soft model, one input of ladder_top - 1
/// symbols, "ladder_top" in [16, 2^20] (at least 16 rungs' worth, within the range of --n).
runner::case_shape ladder_shape();

/// A ladder case generator over `models`: top a power of two from 16 up to min(max_n, cap)
/// (random models) or max_n and the model's longest n (a fixed model), uniform over the
/// powers and shrinking to 16; one uniform input of top - 1 symbols.
rc::Gen<test_case> ladder_case(rc::Gen<model::model<rational>> models, const run_config& cfg,
                               long cap);

void register_soft_influence(runner::registry& r);

} // namespace attnprop::props
