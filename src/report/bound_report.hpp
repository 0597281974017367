#pragma once
/// @file bound_report.hpp
/// Output of `attnprop bound`: Hahn's Lemma 5 on one model (its hypotheses, each decided with a
/// reason, and the explicit constant K: analysis::a_priori_bound) with the bounds over every
/// input of the lengths asked for and over every n (analysis::all_inputs_at, every_n_bound), as
/// text for a terminal and as JSON (schema in docs/reports.md).

#include "soft_influence/all_inputs.hpp"
#include "soft_influence/bounds.hpp"
#include "model/json.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// The bounds over every input: per n of the list, and for every n (docs/bounds.md, "Every
/// input, every n").
struct every_input_report {
    std::vector<analysis::all_inputs_result> per_n;
    std::vector<std::string> hahn; ///< K(n)/n per n ("-" without one)
    std::optional<analysis::every_n_result> every_n;
};

/// What `bound` computes.
struct bound_options {
    long precision = 256;       ///< bits of the Arb balls
    std::size_t classes = 512;  ///< classes of positions at one n (all_inputs_options)
    bool every_n = true;        ///< the constant K* for every n (a few seconds)
    /// Told what is being done before the long step (the bound for every n); may be empty.
    std::function<void(const std::string&)> on_activity;
};

/// One run of `bound`: the lemma at the first n (or n = 1) and the bounds over every input.
struct bound_run {
    analysis::bound_report lemma;
    every_input_report every_input;
};

/// Runs `bound` on m at the lengths ns (may be empty). Throws model::input_error for a length
/// the model cannot take, before any work.
bound_run run_bound(const model::model<numeric::rational>& m, const std::vector<long>& ns,
                    const bound_options& o);

/// "Lemma 5 applies: influence <= K/n with K = ...", or why it does not.
std::string bound_verdict(const analysis::bound_report& r);
/// The lemma for a terminal (hypotheses, per-layer constants, K, the verdict); heads_max and d
/// describe the model in the first line.
std::string bound_to_text(const analysis::bound_report& r, std::size_t heads_max, std::size_t d);
/// The lemma as JSON: model, attention, n, precision, hypotheses, K, K_at_n, bound_at_n, F0,
/// Delta0, layers, probability, notes, verdict (upper bounds as decimal strings, null when
/// unbounded).
json::value bound_to_json(const analysis::bound_report& r);
/// The bounds over every input for a terminal.
std::string every_input_text(const every_input_report& e, const analysis::bound_report& r);
/// ... as JSON: per_n, every_n.
json::value every_input_json(const every_input_report& e);
/// What `bound --json` prints: bound_to_json with "every_input".
json::value bound_run_to_json(const bound_run& r);

} // namespace attnprop::report
