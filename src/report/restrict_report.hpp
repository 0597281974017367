#pragma once
/// @file restrict_report.hpp
/// Output of `attnprop restrict`: the human text and JSON of one restriction run, the sweep
/// files of a run over several n (report.json, report.md, restrict.csv, restrict.svg) and the
/// counterexample folder of an invalid certificate, which `attnprop replay` reproduces through
/// the property hard-limit/certificate-valid (schema of case.json in docs/reports.md).

#include "hard_limit/restrict_plan.hpp"
#include "hard_limit/restriction.hpp"
#include "model/json.hpp"
#include "report/plot.hpp"
#include "report/provenance.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// The property that replays a restriction counterexample.
inline constexpr const char* restriction_property = "hard-limit/certificate-valid";

/// The property that replays a language counterexample (the model misclassifies an input).
inline constexpr const char* language_property = "controls/hard-recognizes-language";

/// One restriction run at one n.
struct restrict_run {
    std::string model_name;
    long n = 0;
    analysis::restriction restr;
    analysis::certificate cert;
    std::optional<analysis::language_result> language;
    /// The parameters that reproduce the run (n, seed, c_num, c_den, trials, samples, fan_out,
    /// language): written to case.json.
    std::map<std::string, long> params;
};

/// What `restrict` is asked: the lengths, the free fraction C, the language, and the search's
/// and the certificate's parameters.
struct restrict_request {
    std::vector<long> ns;
    numeric::rational free_fraction{1, 2};  ///< C, strictly between 0 and 1
    std::optional<lang::language> language;
    std::uint64_t seed = 1;
    int trials = 0;                         ///< random restrictions tried before the greedy
    int samples = 32;                       ///< sampled assignments of the certificate
    bool fan_out = false;                   ///< the Stage-1 fan-out pass before each layer
    int threads = 0;                        ///< 0: up to 2
};

/// Checks the request against the model before any work: a unique-hard recognizer, a
/// language its alphabet spells, every n within its tables and the work limit, C in (0, 1).
/// Throws model::content_error (the model) or precondition_error.
void check_restrict(const model::model<numeric::rational>& m, const restrict_request& q);

/// The options of analysis::restrict_length for the request.
analysis::language_options restrict_options(const restrict_request& q);

/// A run at n with the request's parameters and nothing computed yet (the head that
/// restrict_length's result completes; the parameters are what case.json records).
restrict_run restrict_head(const model::model<numeric::rational>& m, const restrict_request& q, long n);

/// One length in one piece: restrict_head with analysis::restrict_length's result. Throws as
/// restrict_length (numeric::interrupted_error on a stop request).
restrict_run run_restrict_length(const model::model<numeric::rational>& m, const restrict_request& q,
                                 long n);

/// "valid", "invalid" or "incomplete".
std::string certificate_verdict(const analysis::certificate& c);

/// The run as JSON: n, rho, free, free_target, free_fraction, free_met, dependency (1-based),
/// c_obs, layers, certificate, checks, notes, language, counterexample (or null).
json::value restrict_to_json(const model::model<numeric::rational>& m, const restrict_run& r);

/// The run as text for a terminal.
std::string restrict_to_text(const model::model<numeric::rational>& m, const restrict_run& r);

/// Least-squares slope of y against log2 x (0 with fewer than two distinct x).
double log2_slope(const std::vector<double>& x, const std::vector<double>& y);

/// The restriction figure: the free fraction |Free|/n with the requested C as a reference line,
/// and c_obs, against n; runs whose search stopped and runs with an invalid certificate are
/// marked on the axis, not drawn.
plot_figure restrict_figure(const std::string& model_name, const std::vector<restrict_run>& runs);

/// Writes report.json, report.md, restrict.csv and restrict.svg for runs over several n (or
/// one); `made_by` goes into report.json and report.md unless empty. The figure's title and
/// caption go into report.md, and are drawn in the image too with `figure_text`
/// (--figure-text; take_figure_text).
void write_restrict_sweep(const std::filesystem::path& dir,
                          const model::model<numeric::rational>& m,
                          const std::vector<restrict_run>& runs, const provenance& made_by = {},
                          bool figure_text = false);

/// Writes report.json (and report.md) of one run into dir.
void write_restrict_single(const std::filesystem::path& dir,
                           const model::model<numeric::rational>& m, const restrict_run& r,
                           const provenance& made_by = {});

/// Writes DIR/{model.json, case.json} for an invalid certificate, replayable with
/// `attnprop replay DIR`. Returns DIR.
std::filesystem::path write_restrict_counterexample(const std::filesystem::path& dir,
                                                    const model::model<numeric::rational>& m,
                                                    const restrict_run& r,
                                                    const provenance& made_by = {});

/// Writes DIR/{model.json, case.json} for a language counterexample of the run (two inputs
/// with equal outputs and different membership), replayable with `attnprop replay DIR`
/// through controls/hard-recognizes-language: replay exits 1 while the model misclassifies
/// it. Precondition: r.language holds a counterexample (else std::invalid_argument).
std::filesystem::path write_language_counterexample(const std::filesystem::path& dir,
                                                    const model::model<numeric::rational>& m,
                                                    const restrict_run& r,
                                                    const provenance& made_by = {});

} // namespace attnprop::report
