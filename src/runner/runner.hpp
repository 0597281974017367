#pragma once
/// @file runner.hpp
/// Running properties: RapidCheck generates and shrinks, the runner counts outcomes, escalates
/// precision, and keeps the original and the shrunk counterexample of a failure.

#include "runner/property.hpp"

#include <cstdint>
#include <exception>
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
    std::map<long, int> lengths;          ///< n -> cases (the distribution actually drawn)
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

/// One attempt of a property's case sequence (case_batch), as its report counts it.
struct attempt {
    /// passed, undecided and undefined are counted cases (RapidCheck's successes); a discarded
    /// attempt (a filtered generator found no value) is not; failed, refused (a resource limit,
    /// an unusable precision or an allocation failure: no verdict, the command ends) and stopped
    /// (a stop request) end the sequence.
    enum class kind : std::uint8_t { passed, undecided, undefined, discarded, failed, refused, stopped };
    kind what = kind::discarded;
    bool sides_agree = false; ///< undecided with both sides agreeing to every bit tried
    std::string bucket;       ///< counted: n_bucket of its length
    long n = 0;               ///< counted: its length
    std::string tag;          ///< counted: its model class
    std::string measurement;  ///< counted: "name: label" of its measurement, empty when none
    /// undecided, undefined: the check's message; discarded: why (RapidCheck's description);
    /// refused: the error's text.
    std::string message;
    /// refused: the error, rethrown by report_builder::add (numeric::limit_error,
    /// numeric::precision_error or std::bad_alloc).
    std::exception_ptr refusal;
    /// Whether it is one of the property's cases (passed, undecided or undefined).
    bool counted() const { return what == kind::passed || what == kind::undecided || what == kind::undefined; }
};

/// Attempts first, first + 1, ... of a property's case sequence. Attempt i of a property runs
/// RapidCheck's generator and the property's check with the i-th split of the random generator
/// seeded with the property's seed and the size size_for_attempt(cfg, i): a function of
/// (seed, i) alone, so that batches of attempts computed apart (over MPI ranks) and folded in
/// order give the report of the whole sequence run in one process.
struct case_batch {
    std::uint64_t first = 0;
    /// In order; ends early at the first failed, refused or stopped attempt.
    std::vector<attempt> attempts;
    /// When the last attempt failed: its failure, shrunk (RapidCheck's shrinking).
    std::optional<counterexample> cx;
    double seconds = 0; ///< wall time (reports only; never compared)
};

/// The size attempt i runs with: RapidCheck's size for the (i mod cfg.tests)-th successful
/// case of cfg.tests (sizes spread evenly over [0, cfg.max_size], the largest used). Without
/// discards this is RapidCheck's own sequence; RapidCheck itself would also count a discard
/// towards larger sizes, which would make an attempt depend on the outcomes before it.
int size_for_attempt(const run_config& cfg, std::uint64_t i);

/// The most attempts a property's run can take: one case short of cfg.tests and one discard
/// more than the 10 per case RapidCheck allows (maxDiscardRatio), the attempt that gives up.
std::uint64_t max_attempts(const run_config& cfg);

/// How many more attempts to hand out for a property in round `round` of `rounds` (batches
/// computed apart, folded after each round): the first round its cfg.tests attempts; a middle
/// round the cases it is still short of at its rate of cases per attempt so far, a quarter
/// more and one (as many again when no attempt counted); the last round all it may still take
/// (max_attempts), so that the run is over after it. `scheduled`: attempts handed out so far,
/// `counted`: the cases folded from them.
std::uint64_t attempts_for_round(const run_config& cfg, int round, int rounds, std::uint64_t scheduled,
                                 std::uint64_t counted);

/// Runs `count` attempts of property p's case sequence from attempt `first` (fewer when one
/// fails, is refused or is stopped), shrinking a failure. Like run_property, never runs two at
/// once in one process (RapidCheck is not thread-safe).
case_batch run_case_batch(const property& p, const run_config& cfg, std::uint64_t first,
                          std::uint64_t count);

/// Folds a property's attempts, in sequence order, into its report as RapidCheck's search
/// decides a run: over after cfg.tests counted cases, at the first failure (its
/// counterexample), or when the discards exceed 10 per case (gave up); a stopped attempt ends
/// it interrupted; a refused attempt rethrows its error.
class report_builder {
public:
    report_builder(const property& p, const run_config& cfg);
    /// Adds the next attempt (with its counterexample when it failed); true when the run is over.
    bool add(const attempt& a, const std::optional<counterexample>& cx = std::nullopt);
    /// Adds a batch's attempts, which must start at attempts(), until the run is over (the
    /// batch's counterexample with its last attempt); true when the run is over.
    bool add(const case_batch& b);
    bool over() const { return over_; }
    /// Attempts added so far: the index of the next one.
    std::uint64_t attempts() const { return attempts_; }
    /// Cases counted so far (passed, undecided, undefined).
    int counted() const { return rep_.passed + rep_.undecided + rep_.undefined; }
    /// The report; a run that is not over ends interrupted (its attempts were cut by a stop).
    property_report finish(double seconds);

private:
    int tests_;
    std::uint64_t attempts_ = 0, discards_ = 0;
    bool over_ = false;
    property_report rep_;
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
