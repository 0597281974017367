#pragma once
/// @file every_input.hpp
/// The properties of the bounds over every input (docs/bounds.md, "Every input, every n";
/// docs/theory.md §4.5), in the suites they belong to:
/// - soft-influence/every-input-bound: the bound on the one-symbol change over every input of
///   length n is never below a change found (the drawn input's changes, the worst-case search's,
///   every change of every input when the cube is small);
/// - soft-hard/every-input-margin: the smallest margin over every input of a one-layer hard
///   model is attained, is at most every input's margin and equals the cube's minimum; the beta
///   it certifies certifies each input's own bound.
/// Each factory takes the deliberate defect its negative control uses.

#include "soft_influence/all_inputs.hpp"
#include "soft_hard/all_margins.hpp"
#include "props/common.hpp"

namespace attnprop::props {

/// soft-influence/every-input-bound; `drop` leaves a term of the bound out (the negative
/// control: without the weight change the bound falls below a change found).
runner::property every_input_bound(analysis::dropped_term drop = analysis::dropped_term::none);

/// soft-hard/every-input-margin; `opt` carries the negative control's defect (second levels
/// admitted without checking that the other keys can stay below them).
runner::property every_input_margin(analysis::margin_options opt = {});

void register_every_input(runner::registry& r);

} // namespace attnprop::props
