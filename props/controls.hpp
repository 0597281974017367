#pragma once
/// @file controls.hpp
/// Suite `controls`: deliberately false statements. Each must fail, shrink to a small model and
/// produce a replayable counterexample; they prove the machinery finds, shrinks and reports.

#include "runner/property.hpp"

namespace attnprop::props {

void register_controls(runner::registry& r);

} // namespace attnprop::props
