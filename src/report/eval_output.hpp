#pragma once
/// @file eval_output.hpp
/// Renders an evaluation for people (text) and for programs (JSON, exact numbers as strings).

#include "analysis/evaluate.hpp"
#include "model/json.hpp"

#include <string>

namespace attnprop::report {

/// The `attnprop eval --json` object: n, scalar, precision, y (+ y_radius for balls), accept or
/// logits/probabilities (+ radii), undecided details, trace.
json::value eval_to_json(const analysis::evaluation& ev);

/// Human-readable summary, several lines, ending in a newline.
std::string eval_to_text(const analysis::evaluation& ev);

} // namespace attnprop::report
