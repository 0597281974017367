#pragma once
/// @file check_report.hpp
/// Reports of `attnprop check`: report.json (schema in docs/reports.md), report.md for people,
/// and one folder per counterexample (report::case_record) that `attnprop replay` reproduces on
/// its own.

#include "model/json.hpp"
#include "report/case_record.hpp"
#include "report/provenance.hpp"
#include "runner/runner.hpp"

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attnprop::runner {

/// Everything a check run produced. Wall times are kept out of the files so that the same seed
/// gives the same report.
struct check_run {
    run_config cfg;
    std::vector<std::string> suites;
    std::vector<property_report> reports;
    /// Who made the run (version, commit, command line, options); written to report.json,
    /// report.md and every case.json unless empty.
    report::provenance made_by;
    /// `check --model`: the model's name and the file it was read from ("" for random models).
    std::string model_name, model_file;
    /// `check --model`: the selected properties that make no claim about the model, with the
    /// reason ("soft-influence/cross-entropy-above-chance" -> "needs the input alphabet {0, 1}
    /// ..."), in selection order.
    std::vector<std::pair<std::string, std::string>> not_applicable;
};

/// How many model classes the compact distribution names; the rest is "other".
inline constexpr std::size_t top_model_classes = 5;

/// The n buckets of a property (n_bucket labels) in numeric order: "n<=4", "n<=16",
/// ..., "n>1024"; labels of another shape last, in string order.
std::vector<std::pair<std::string, int>> ordered_n_buckets(const std::map<std::string, int>& buckets);

/// The distribution of n actually drawn (property_report::lengths): the lower median and the
/// cases at n >= quarter = max(1, --max-n / 4), which the reports give beside the cap.
struct drawn_lengths {
    long cases = 0;
    long median = 0;
    long quarter = 1;
    long at_least = 0; ///< cases with n >= quarter
};
drawn_lengths drawn_of(const std::map<long, int>& lengths, long max_n);

/// The compact model-class distribution: the `top` most common classes (most cases first,
/// ties by name) and what the others add up to.
struct class_summary {
    std::vector<std::pair<std::string, int>> top;
    int other_classes = 0; ///< classes not in `top`
    int other_cases = 0;   ///< their cases
};
class_summary summarize_classes(const std::map<std::string, int>& classes,
                                std::size_t top = top_model_classes);

/// Folder name of a property's counterexample: "<suite>-<name>".
std::string counterexample_folder(const property_report& r);

json::value check_to_json(const check_run& run);
std::string check_to_markdown(const check_run& run);
/// Terminal table: one row per property, then its compact distributions (n buckets in order,
/// the top model classes and "other"), measurements, undefined locations and counterexample.
std::string check_to_text(const check_run& run);

/// Writes report.json, report.md and counterexamples/<folder>/{model.json, case.json,
/// original/{model.json, case.json}} into dir (created if needed), every file atomically.
/// Throws std::runtime_error when a file cannot be written.
void write_check_report(const std::filesystem::path& dir, const check_run& run);

/// The case.json record of a recorded case of a failed property: `shrunk` for the shrunk case
/// (with its shrink steps and the original's folder), else the original one.
report::case_record case_record_of(const recorded_case& rc, const property_report& r,
                                   const counterexample& cx, const run_config& cfg, bool shrunk,
                                   const report::provenance& made_by);

} // namespace attnprop::runner
