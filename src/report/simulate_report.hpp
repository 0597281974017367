#pragma once
/// @file simulate_report.hpp
/// Output of `attnprop simulate`: the text table, the JSON document and the report folder
/// (report.json, report.md, simulate.csv, leak.svg; schema in docs/reports.md).

#include "soft_hard/all_margins.hpp"
#include "soft_hard/simulate.hpp"
#include "model/json.hpp"
#include "report/provenance.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// For a constant β: the largest n of the list up to which every input is certified, and the
/// extrapolation of analysis::largest_certified_n from the data of the largest n.
struct certified_length {
    std::string beta;
    std::optional<long> in_list;          ///< none: not even the smallest n
    long extrapolated_from = 0;           ///< the n whose data is extrapolated
    std::optional<long long> extrapolated; ///< none: not certified there
};

/// The margins over every input at one n (analysis::every_input_margins_at) and, per β, whether
/// it certifies the soft counterpart's readout on every input (and on every input off the
/// readout's threshold).
struct every_input_row {
    analysis::every_input_margins margins;
    std::vector<bool> certified, certified_off;
};

/// A whole simulate run.
struct simulate_run {
    std::string model_name;
    std::string attention;                ///< "hard" or "average-hard"
    std::vector<std::string> betas;       ///< the --beta formulas
    std::string input_note;               ///< how the inputs were chosen
    long precision = 128;                 ///< the first precision of the Arb balls
    long precision_cap = 4096;            ///< the highest precision an undecided β is measured at
    std::string scalar = "ball";          ///< the kind that measured the soft model first
    std::vector<analysis::simulate_row> rows;
    std::vector<certified_length> lengths;
    /// Per row (empty: not computed, simulate --no-every-input).
    std::vector<every_input_row> every_input;
};

/// What `simulate` is asked: the temperatures, the lengths and the inputs at each n (words
/// repeated to length n - 1, every input, random ones), and how the soft model is measured.
struct simulate_request {
    std::vector<std::string> betas;     ///< formulas in n ("100", "2*log(n)")
    std::vector<long> ns;
    std::vector<std::string> patterns;  ///< each repeated to length n - 1
    bool cube = false;                  ///< every input of length n - 1 (at most 4096 per n)
    int random_inputs = 4;              ///< uniform over the alphabet
    std::uint64_t seed = 1;             ///< of the random inputs
    long precision = 128;
    long precision_cap = 4096;
    bool interval = false;              ///< certified double intervals first
    bool every_input = true;            ///< the margins over every input of each n
    /// Called after each n (from the calling thread); may be empty.
    std::function<void(long n)> on_length;
};

/// Checks the request against the model before any work: a hard or average-hard model, beta
/// formulas in n alone, certainly positive at every n, patterns in the alphabet, the cube's
/// budget, some inputs, n within the model's tables and the work limit. Throws
/// model::content_error (the model) or precondition_error (the request; the messages name
/// the command's options) and returns the parsed formulas.
std::vector<model::expr> check_simulate(const model::model<numeric::rational>& m,
                                        const simulate_request& q);

/// Runs `simulate`: per n the comparison of the hard model with its soft counterpart
/// (analysis::simulate_at) and, unless q.every_input is false, the margins over every input;
/// then how far each constant beta stays certified. Throws as check_simulate.
simulate_run run_simulate(const model::model<numeric::rational>& m, const simulate_request& q);

/// The number of rows or layers whose measured value is certainly above its certified bound
/// (a contradiction of the derivation: a finding).
std::size_t findings(const simulate_run& r);

/// The run as a terminal table (one line per n and β) with the notes.
std::string simulate_to_text(const simulate_run& r);

/// The run as JSON (format "attnprop-simulate-report").
json::value simulate_to_json(const simulate_run& r, const provenance& made_by = {});

/// Writes report.json, report.md, simulate.csv, leak.svg (measured leak and its certified
/// bound against n for every β, log scales) and, with the margins over every input, beta.svg
/// (the smallest certified β against n: over every input, and over the sampled inputs) into
/// dir.
/// The figures' titles and captions go into report.md, and are drawn in the images too with
/// `figure_text` (--figure-text; take_figure_text).
void write_simulate_report(const std::filesystem::path& dir, const simulate_run& r,
                           const provenance& made_by = {}, bool figure_text = false);

} // namespace attnprop::report
