// The one place that touches rc::detail: runs a property through RapidCheck's checkProperty with
// explicit parameters and a silent listener, and records the original and shrunk failure.
#include "numeric/interrupt.hpp"
#include "numeric/limits.hpp"
#include "runner/runner.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <new>

#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/Property.h>
#include <rapidcheck/detail/Results.h>
#include <rapidcheck/detail/Serialization.h>
#include <rapidcheck/detail/TestListener.h>
#include <rapidcheck/detail/TestMetadata.h>
#include <rapidcheck/detail/TestParams.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <unordered_map>

namespace rc::detail {
// Declared in RapidCheck's src/detail/Configuration.h (not installed); part of librapidcheck.
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& reproduceMap);
} // namespace rc::detail

namespace attnprop::runner {

namespace {

/// Thrown by the listener to leave RapidCheck's loop early; RapidCheck catches every exception
/// a property throws (as a failure), but not its listener's.
struct stop_checking {};

class silent_listener final : public rc::detail::TestListener {
public:
    /// Called after every case (not while shrinking): true ends the run at once.
    std::function<bool()> should_stop;
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {
        if (should_stop && should_stop()) throw stop_checking{};
    }
    void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
        if (accepted) ++accepted_shrinks;
    }
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
    int accepted_shrinks = 0;
};

// RapidCheck loads its global configuration (RC_PARAMS) on first use and announces it on
// standard error; attnprop passes every parameter explicitly, so the announcement would only
// confuse. Load it once with standard error silenced.
void load_rapidcheck_configuration_quietly() {
    static const bool loaded = [] {
        std::ostringstream sink;
        auto* old = std::cerr.rdbuf(sink.rdbuf());
        try {
            (void)rc::detail::configuration();
        } catch (...) {
            std::cerr.rdbuf(old);
            throw;
        }
        std::cerr.rdbuf(old);
        return true;
    }();
    (void)loaded;
}

long length_of(const test_case& c) {
    if (auto it = c.params.find("n"); it != c.params.end()) return it->second;
    if (c.inputs.empty()) return 0;
    return static_cast<long>(c.inputs.front().size()) + 1;
}

} // namespace

std::string n_bucket(long n) {
    for (long b : {4L, 16L, 64L, 256L, 1024L})
        if (n <= b) return "n<=" + std::to_string(b);
    return "n>1024";
}

property_report run_property(const property& p, const run_config& cfg,
                             const case_progress_fn& on_case) {
    load_rapidcheck_configuration_quietly();
    property_report rep;
    rep.suite = p.suite;
    rep.name = p.name;
    rep.statement = p.statement;
    rep.kinds = p.kinds;
    rep.expected_to_fail = p.expected_to_fail;
    rep.seed = property_seed(cfg.seed, p);
    const auto start = std::chrono::steady_clock::now();

    // A fixed model (check --model): every case at full size, so that positions, symbols and
    // parameters are uniform from the first case (RapidCheck's size ramp exists to start with
    // small random models; the length has its own log-uniform law).
    rc::Gen<test_case> gen =
        cfg.fixed_model ? rc::gen::resize(cfg.max_size, p.generator(cfg)) : p.generator(cfg);
    std::optional<recorded_case> first_failure, last_failure;
    // A refusal (a resource limit, an allocation failure) ends the property and then the
    // command; a stop request (SIGINT) ends it with the cases so far. RapidCheck would count an
    // exception of the property as a failure and shrink it: the case is discarded instead, and
    // the listener leaves RapidCheck's loop after it. While shrinking a failure, a refused or
    // stopped attempt only rejects that shrink (the failure found stays the result).
    std::exception_ptr refused;
    auto testable = [&] {
        const bool shrinking = first_failure.has_value();
        if (numeric::stop_requested()) RC_DISCARD("stopped");
        test_case c = *gen;
        long prec = cfg.precision;
        check_result r;
        try {
            r = check_with_escalation(p, c, cfg, &prec);
        } catch (const numeric::limit_error&) {
            if (!shrinking) refused = std::current_exception();
            RC_DISCARD("refused");
        } catch (const numeric::precision_error&) {
            if (!shrinking) refused = std::current_exception();
            RC_DISCARD("refused");
        } catch (const std::bad_alloc&) {
            if (!shrinking) refused = std::current_exception();
            RC_DISCARD("refused");
        }
        if (is<outcomes::failed>(r.result)) {
            recorded_case rec{c, r, prec};
            if (!first_failure) first_failure = rec;
            last_failure = std::move(rec);
            RC_FAIL(r.message);
        }
        if (shrinking) return;
        rep.n_buckets[n_bucket(length_of(c))]++;
        rep.classes[p.tag ? p.tag(c) : std::string("?")]++;
        if (r.measured) rep.measurements[r.measured->name + ": " + r.measured->label]++;
        if (is<outcomes::undefined>(r.result)) {
            ++rep.undefined;
            auto& where = rep.undefined_reasons;
            if (where.size() < 3 && std::find(where.begin(), where.end(), r.message) == where.end())
                where.push_back(r.message);
        } else if (is<outcomes::undecided>(r.result)) {
            ++rep.undecided;
            if (r.sides_agree()) ++rep.undecided_equal;
            auto& why = rep.undecided_reasons;
            if (why.size() < 3 && std::find(why.begin(), why.end(), r.message) == why.end())
                why.push_back(r.message);
        } else {
            ++rep.passed;
        }
        if (on_case) on_case(p, rep.passed + rep.undecided + rep.undefined);
    };

    rc::detail::TestParams params;
    params.seed = rep.seed;
    params.maxSuccess = cfg.tests;
    params.maxSize = cfg.max_size;
    params.maxDiscardRatio = 10;
    rc::detail::TestMetadata meta;
    meta.id = p.suite + "/" + p.name;
    meta.description = p.statement;
    silent_listener listener;
    listener.should_stop = [&] { return refused || numeric::stop_requested(); };
    std::optional<rc::detail::TestResult> result;
    try {
        result.emplace(rc::detail::checkProperty(rc::detail::toProperty(testable), meta, params, listener));
    } catch (const stop_checking&) {
        if (refused) std::rethrow_exception(refused);
        rep.end = outcomes::interrupted{};
        rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return rep;
    }

    rc::detail::FailureResult failure;
    rc::detail::GaveUpResult gave_up;
    rc::detail::Error error;
    // RapidCheck's result, one alternative of the outcome; a run that ended with every case
    // ends with what its cases said.
    if (result->match(failure)) {
        rep.end = outcomes::failed{};
        counterexample cx;
        if (first_failure) cx.original = *first_failure;
        if (last_failure) cx.shrunk = *last_failure;
        cx.shrink_steps = listener.accepted_shrinks;
        cx.description = failure.description;
        std::unordered_map<std::string, rc::detail::Reproduce> rmap{{meta.id, failure.reproduce}};
        cx.reproduce = rc::detail::reproduceMapToString(rmap);
        rep.cx = std::move(cx);
        // Cases counted before the failure passed; RapidCheck's numSuccess agrees.
    } else if (result->match(gave_up)) {
        rep.end = outcomes::gave_up{gave_up.description};
    } else if (result->match(error)) {
        rep.end = outcomes::error{error.description.empty() ? "RapidCheck error" : error.description};
    } else if (rep.undefined > 0) {
        rep.end = outcomes::undefined{};
    } else if (rep.undecided > 0) {
        rep.end = outcomes::undecided{};
    } else {
        rep.end = outcomes::passed{};
    }
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return rep;
}

std::vector<property_report> run_properties(const std::vector<const property*>& ps,
                                            const run_config& cfg, const progress_fn& progress,
                                            const case_progress_fn& on_case) {
    std::vector<property_report> out;
    for (const property* p : ps) {
        if (numeric::stop_requested()) break;
        out.push_back(run_property(*p, cfg, on_case));
        if (progress) progress(out.back());
    }
    return out;
}

check_result replay_case(const property& p, const test_case& c, const run_config& cfg,
                         long* precision_used) {
    return check_with_escalation(p, c, cfg, precision_used);
}

} // namespace attnprop::runner
