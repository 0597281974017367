#pragma once
/// @file check_session.hpp
/// The work of `attnprop check` as library calls: which properties a request selects (and,
/// with a given model, which of them make no claim about it), running them in this process with
/// progress hooks and reused results, the check_run that write_check_report turns into the
/// report folder, and its verdict. The command line (src/cli/check_command.cpp) adds its
/// options, the report folder's ownership and journal, the MPI ranks and its output.

#include "report/provenance.hpp"
#include "runner/check_report.hpp"
#include "runner/property.hpp"
#include "runner/runner.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnprop::runner {

/// What a check runs: the suites and properties named (both empty: every suite but
/// "controls"), the run's options, and with cfg.fixed_model one given model (`model_file`: how
/// it was named, for the report).
struct check_request {
    std::vector<std::string> suites;     ///< suite names
    std::vector<std::string> properties; ///< "suite/name" (or a unique "name")
    run_config cfg;
    std::string model_file; ///< with cfg.fixed_model: the file or bundled name it came from
};

/// The properties a request selects, in selection order (the named properties first, then
/// those of the named suites in registration order, each once).
struct check_selection {
    std::vector<const property*> properties;
    std::vector<std::string> suites; ///< the suites asked for; by default every suite but "controls"
    bool default_suites = false;     ///< neither suites nor properties were named
    /// With a fixed model: the selected properties that make no claim about it, with the
    /// reason, in selection order (left out of `properties`).
    std::vector<std::pair<std::string, std::string>> not_applicable;
};

/// Selects the properties of `q` from `reg`. Throws precondition_error naming an unknown suite
/// (with the known ones), an unknown property, a precision cap below the precision, or a
/// search budget without a fixed model.
check_selection select_properties(const registry& reg, const check_request& q);

/// The report folder a check writes by default: out/check-SEED, or with a given model
/// out/check-STEM-SEED (STEM: the model file's name without ".json").
std::string default_check_dir(const check_request& q);

/// The check_run of a selection before any property ran: options, suites of the selected
/// properties, provenance (`made_by`, with the default suites written as --suite when none was
/// named), the model's name and file, the properties left out.
check_run start_check(const check_request& q, const check_selection& s, report::provenance made_by);

/// What a check in this process reports as it goes.
struct check_hooks {
    /// After each counted case of a property (not while shrinking).
    case_progress_fn on_case;
    /// With each property's report as it is reused (true) or finishes (false).
    std::function<void(const property_report&, bool reused)> on_report;
    /// With each report that ran every case and shrank its failure to the end (whole_report),
    /// as it finishes: what a journal may keep.
    std::function<void(const property&, const property_report&)> on_whole;
};

/// Whether a report ran every case and shrank its failure to the end: after a stop request it
/// may have done neither (a shrink attempt after the stop is rejected).
bool whole_report(const property_report& r);

/// Runs the selected properties in this process, in selection order: reused ones from
/// `reused` (nullopt: to run; empty: none reused), the others with run_property; after a stop
/// request no further property starts (the reused ones are still reported).
std::vector<property_report> run_selected(const std::vector<const property*>& selected,
                                          const run_config& cfg, const check_hooks& hooks,
                                          const std::vector<std::optional<property_report>>& reused = {});

/// The verdict of a run, worst first: "failed" (a property failed: a counterexample),
/// "error" (a property ended with an error), "undefined" (undefined cases), else "passed"
/// (undecided cases included; the report counts them). Whether the run was interrupted is the
/// caller's to tell.
std::string check_verdict(const check_run& run);

} // namespace attnprop::runner
