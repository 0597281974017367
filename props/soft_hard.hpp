#pragma once
/// @file soft_hard.hpp
/// Suite `soft-hard`: soft attention simulating hard attention as the inverse temperature
/// grows (docs/theory.md, "Soft attention simulating hard attention"; docs/properties.md). The
/// cases are hard and average-hard models from gen::margin_model with an inverse temperature
/// β(n) in every head; their soft counterpart is the same file read as soft. Each property is
/// built by a factory whose implementation under test can be replaced, so that tests show it
/// failing on a deliberately broken implementation (its negative control). The suite's
/// deliberately false statements are registered in the suite `controls`.

#include "soft_hard/simulate.hpp"
#include "props/common.hpp"

#include <functional>

namespace attnprop::props {

/// The row-by-row comparison of measured leaks and states with their certified bounds
/// (analysis::check_against_bound by default).
using bound_check_fn = std::function<analysis::bound_check(
    const analysis::bound_data&, const analysis::gap_pass&, const analysis::soft_observation&,
    const analysis::propagated&,
    const std::vector<std::vector<numeric::arb_ball>>&, const numeric::context&)>;

/// The propagated bound (analysis::propagate by default).
using propagate_fn = std::function<analysis::propagated(
    const analysis::bound_data&, const std::vector<std::vector<numeric::arb_ball>>&,
    const numeric::context&)>;

/// The exact pass of the average-hard reference (analysis::score_gaps by default).
using gap_pass_fn = std::function<analysis::gap_pass(const model::model<rational>&,
                                                     const model::input_sequence&)>;

/// At every row the soft counterpart computes, the leak 1 − w_T is at most its certified bound
/// r/(1+r), r = ((n − t)/t) e^{−β(γ − 2ε_k)}, and every layer's state difference is at most the
/// propagated δ_k, for β constant, c ln n and n ln n (Arb balls).
runner::property leak_below_bound(bound_check_fn check = {});

/// When the propagated bound certifies the readout (lip · δ_L < slack), the soft counterpart's
/// readout (Arb balls) is the hard one.
runner::property readout_agrees_when_certified(propagate_fn prop = {});

/// With exact ties (average-hard models), the soft counterpart stays within the propagated
/// bound δ_L of the average-hard output, and where the unique-hard output differs from it by
/// more than 2 δ_L the soft output is certified closer to the average-hard one.
runner::property ties_follow_average(gap_pass_fn reference = {});

void register_soft_hard(runner::registry& r);

} // namespace attnprop::props
