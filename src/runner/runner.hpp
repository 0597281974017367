#pragma once
/// @file runner.hpp
/// Running properties: RapidCheck generates and shrinks, the runner counts outcomes, escalates
/// precision, and keeps the original and the shrunk counterexample of a failure.

#include "runner/property.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::runner {

/// One recorded case with the result of its check.
struct recorded_case {
    test_case value;
    check_result result;
    long precision = 0; ///< bits of the last check attempt
};

/// A failure: the original case, the shrunk one, and how to reproduce it.
struct counterexample {
    recorded_case original;
    recorded_case shrunk;
    std::string reproduce;   ///< RapidCheck reproduce string (RC_PARAMS="reproduce=...")
    int shrink_steps = 0;    ///< accepted shrinks
    std::string description; ///< RapidCheck's failure description
};

/// Outcome of a property over a run: counts plus at most one counterexample (RapidCheck stops at
/// the first failure and shrinks it).
struct property_report {
    std::string suite;
    std::string name;
    std::string statement;
    std::vector<std::string> kinds;
    bool expected_to_fail = false;
    std::uint64_t seed = 0;     ///< the property's own seed (property_seed)
    int passed = 0;             ///< cases where the check held
    int undecided = 0;          ///< cases undecided up to the precision cap
    /// Of the undecided cases, those whose two sides agreed to every bit tried (an equality the
    /// model attains, which no precision separates).
    int undecided_equal = 0;
    int undefined = 0;          ///< cases where a needed value does not exist (located)
    /// How the run ended: failed (the counterexample is `cx`), gave up, error (RapidCheck's
    /// description), interrupted (a stop was requested, SIGINT, before the property ran its
    /// cases: the counts are the cases checked until then); else, every case run, undefined
    /// (some case undefined), undecided (some case undecided up to the precision cap) or
    /// passed (every case decided and held).
    outcome end = outcomes::passed{};
    std::map<std::string, int> n_buckets; ///< "n<=16", "n<=256", ... -> cases
    std::map<std::string, int> classes;   ///< model class -> cases
    /// Why cases were undecided: the first few distinct messages, in the order met.
    std::vector<std::string> undecided_reasons;
    /// Where cases were undefined: the first few distinct messages, in the order met.
    std::vector<std::string> undefined_reasons;
    /// Measurements reported by the checks (never verdicts): "name: label" -> cases.
    std::map<std::string, int> measurements;
    std::optional<counterexample> cx;
    double seconds = 0;         ///< wall time (reports only; never compared)

    /// "failed", "interrupted", "error", "gave-up", "undefined", "partly-undecided" (undecided,
    /// some case passed), "undecided" (no case decided) or "passed": the word of `end`.
    std::string status() const { return status_word(end, passed > 0); }
    /// 1 when the run found a counterexample, else 0 (report.json's "failed").
    int failed() const { return is<outcomes::failed>(end) ? 1 : 0; }
    bool gave_up() const { return is<outcomes::gave_up>(end); }
    bool interrupted() const { return is<outcomes::interrupted>(end); }
    /// RapidCheck's error description (not a counterexample); empty unless the run erred.
    std::string error() const {
        const auto* e = std::get_if<outcomes::error>(&end);
        return e ? e->description : std::string();
    }
};

/// Progress callback: called after each property with its report.
using progress_fn = std::function<void(const property_report&)>;

/// Called after each case of a property is counted (not while shrinking), with the property
/// and the cases counted so far (passed, undecided and undefined).
using case_progress_fn = std::function<void(const property&, int counted)>;

/// Runs one property with RapidCheck (sequentially: RapidCheck is not thread-safe). A resource
/// limit, a working precision that cannot be used or an allocation failure met by a case
/// (numeric::limit_error, numeric::precision_error, std::bad_alloc) is no verdict: it ends the
/// property and is rethrown.
property_report run_property(const property& p, const run_config& cfg,
                             const case_progress_fn& on_case = {});

/// Runs the selected properties in order; after a stop request (numeric::request_stop) the
/// property in progress ends with the cases checked so far and the rest are not run.
std::vector<property_report> run_properties(const std::vector<const property*>& ps,
                                            const run_config& cfg, const progress_fn& progress = {},
                                            const case_progress_fn& on_case = {});

/// Re-checks one recorded case (replay): the property's check with precision escalation; a
/// std::bad_alloc propagates (never a violation).
check_result replay_case(const property& p, const test_case& c, const run_config& cfg,
                         long* precision_used = nullptr);

/// The n-bucket label of a length: "n<=4", "n<=16", "n<=64", "n<=256", "n<=1024", "n>1024".
std::string n_bucket(long n);

} // namespace attnprop::runner
