#pragma once
/// @file eval_output.hpp
/// Renders an evaluation for people (text) and for programs (JSON, exact numbers as strings).

#include "cli/evaluate.hpp"
#include "model/json.hpp"

#include <string>

namespace attnprop::report {

/// The `attnprop eval --json` object: n, scalar, precision, y (+ y_radius for balls), accept or
/// logits/probabilities (+ radii), undecided details, trace. When the value is undefined: y is
/// null, there is no readout or trace, and "undefined" is undefined_to_json of the error.
json::value eval_to_json(const analysis::evaluation& ev);

/// {"layer", "node", "position", "head", "reason", "message", "precision_may_resolve"}; the
/// place fields that are unknown are absent.
json::value undefined_to_json(const numeric::undefined_error& e);

/// Human-readable summary, several lines, ending in a newline: numbers with the digits that
/// mean something (a ball's certified digits and its radius, docs/reports.md "Digits").
std::string eval_to_text(const analysis::evaluation& ev);

} // namespace attnprop::report
