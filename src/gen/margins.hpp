#pragma once
/// @file margins.hpp
/// RapidCheck generators of hard models whose layer-1 score margins are controlled, for the
/// suite `soft-hard` (soft attention simulating hard attention; docs/properties.md). Every
/// model carries an inverse temperature β(n) in every head, so that its soft counterpart
/// (analysis::soft_counterpart) is the model file itself with the attention switched to soft.
///
/// Structure (built as model-file JSON and read with model::parse_model, valid by
/// construction, nothing discarded): alphabet {0, 1} or {0, 1, 2}; integer token embeddings
/// (entries in [-2, 2], 1 or 2 coordinates), positional coordinates (1, i/n) concatenated, so
/// d = d_tok + 2; 1 or 2 layers of 1 or 2 dot-product heads with integer Q, K on the token and
/// constant coordinates (entries in [-2, 2], 1 or 2 rows) and an explicit scale σ in
/// {1, 1/2, 2}; integer linear values; a residual affine update y + W b writing only token
/// coordinates (W entries in [-1, 1]); a threshold readout on the token coordinates with a
/// half-integer threshold. Integer weights on integer states make every layer-1 score σ times an
/// integer, so distinct score levels differ by at least σ:
/// - exact_gap: unique-hard; margins at layer 1 are multiples of σ (≥ σ), ties go leftmost;
/// - shrinking_gap: unique-hard with a positional tie-break: one more score row adds
///   −c (j / n) (c in {1/2, 1/4}), so a row whose top level holds several keys has the margin
///   σ c / n at its leftmost one (the gaps shrink like 1/n), and levels stay ordered;
/// - exact_ties: average-hard; integer scores tie often, and tied keys get 1/t each.
/// β(n) is drawn from three families: a constant in {1, 4, 16}, c ln n with c in {1, 4, 16},
/// or n ln n. Shrinks towards 1 layer, 1 head, d_tok = 1, binary alphabet, σ = 1, the first β
/// of the family list, coefficients 0.

#include "model/model.hpp"

#include <rapidcheck/Gen.h>

namespace attnprop::gen {

enum class margin_family { exact_gap, shrinking_gap, exact_ties };

/// "exact-gap", "shrinking-gap", "exact-ties" (model names start with "margin-<family>").
const char* to_string(margin_family f);

/// Hard models of the family (see the file comment).
rc::Gen<model::model<numeric::rational>> margin_model(margin_family f);

/// Any of the three families (one third each).
rc::Gen<model::model<numeric::rational>> margin_model();

/// The negative-control models of the suite (deliberately false statements), one layer, binary
/// alphabet, each with a fixed inverse temperature in its head:
/// - two_level: score γ [x_j = 1] with γ in {1/2, 1, 3/2, 2} and β = ln n / γ ("log(n)/γ");
///   on an input with a single 1 the row is two-level and the weight on the 1 is n / (2n − 1);
/// - constant_beta: the same score with β in {1, 3/2, 2} / γ (a constant), value [x_j = 1],
///   readout accept iff b > 1/2: the hard model accepts iff some x_j = 1, the soft one rejects a
///   single 1 once n > e^{βγ} + 1;
/// - positional_gap: score −j / n (margin 1/n at j = 1) with β = c n, c in {1/2, 1}: the weight
///   on position 1 stays below 1 − e^{−c} + O(1/n).
enum class control_family { two_level, constant_beta, positional_gap };
rc::Gen<model::model<numeric::rational>> control_model(control_family f);

} // namespace attnprop::gen
