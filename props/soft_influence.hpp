#pragma once
/// @file soft_influence.hpp
/// Suite `soft-influence`: Hahn (2020), Lemma 5 and Theorem 6 checked on random soft models
/// that satisfy the five hypotheses of Claim 2 (theory.md §2 and §7 S3–S5). Every measurement
/// is an Arb ball, so a comparison with a bound is decided rigorously or reported undecided.
/// Each property is built by a factory whose bound or model source can be replaced, so that the
/// tests show it failing on a deliberately wrong bound or a hypothesis-violating model.

#include "analysis/influence.hpp"
#include "props/common.hpp"

#include <functional>
#include <optional>

namespace attnprop::props {

/// The a-posteriori bound used for one changed pair: analysis::posterior_bound by default
/// (given the two traces); the negative control shrinks it.
using pair_bound_fn = std::function<numeric::arb_ball(
    const model::model<rational>&, const attention::soft_trace<numeric::arb_ball>&,
    const attention::soft_trace<numeric::arb_ball>&, std::size_t, const numeric::context&)>;

/// The positions (0-based, < n - 1) whose one-symbol changes a case measures: every position
/// when n <= 13, otherwise the first two, the last two, the middle one and the case's
/// "position" parameter (when present).
std::vector<std::size_t> measured_positions(const test_case& c, std::size_t n);

/// One-symbol influence is below both bounds: for every measured position and replacement,
/// ||Δy_n^(L)|| <= the a-posteriori per-pair bound and <= δ_L(n) = K(n)/n (a-priori, recursion
/// (B)); so n·influence <= K at every tested n. `bound` replaces the a-posteriori bound (the
/// negative control passes one that is too small).
runner::property influence_below_bounds(pair_bound_fn bound = {});

/// The output probabilities move at most as theory.md §2.2 allows: for every measured pair,
/// ||Δp||_∞ and TV(p, p') <= factor·||Δy_n^(L)||/4 and <= factor·δ_L(n)/4, with factor =
/// max_{r,r'} ||W_r - W_r'||_2. `divisor` replaces the 4 (the negative control uses 8).
runner::property prob_change_below_bound(long divisor = 4);

/// The cross-entropy corollary on PARITY, exhaustively: over all x in {0,1}^{n-1} (n <= 11),
/// the mean cross-entropy in bits of the PARITY label is >= 1 - log2(1 + η), where η is the
/// largest ||Δp||_∞ under flipping one fixed bit b, minimised over b (the exact sup over the
/// enumerated cube, so the inequality is a theorem, not an estimate). `eta_divisor` divides η
/// (the negative control uses 4 on a confident model). `models` replaces gen::soft_model over
/// {0, 1}.
runner::property cross_entropy_above_chance(long eta_divisor = 1,
                                            std::optional<rc::Gen<model::model<rational>>> models = {});

void register_soft_influence(runner::registry& r);

} // namespace attnprop::props
