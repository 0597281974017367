// The one place that touches rc::detail: a property's case sequence, attempt by attempt, as
// RapidCheck's search loop runs it (with sizes that depend on the attempt's index alone), its
// shrinking of a failure, and the report folded from the attempts in order.
#include "numeric/interrupt.hpp"
#include "model/model_file.hpp"
#include "numeric/limits.hpp"
#include "util/precondition.hpp"
#include "runner/runner.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <new>

#include <rapidcheck/Random.h>
#include <rapidcheck/Shrinkable.h>
#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/Property.h>
#include <rapidcheck/detail/Results.h>
#include <rapidcheck/detail/Serialization.h>

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

/// RapidCheck's maxDiscardRatio: a property gives up after more than this many discarded
/// attempts per case asked for.
constexpr std::uint64_t max_discard_ratio = 10;

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

int size_for_attempt(const run_config& cfg, std::uint64_t i) {
    // RapidCheck's sizeFor (src/detail/Testing.cpp) for the (i mod tests)-th success.
    const long long max_size = cfg.max_size, tests = std::max(cfg.tests, 1);
    const auto k = static_cast<long long>(i % static_cast<std::uint64_t>(tests));
    const long long sizes = max_size + 1;
    const long long regular = (tests / sizes) * sizes;
    if (k < regular) return static_cast<int>(k % sizes);
    const long long rest = tests - regular;
    if (rest == 1) return 0;
    return static_cast<int>(((k % sizes) * max_size) / (rest - 1));
}

std::uint64_t max_attempts(const run_config& cfg) {
    const auto tests = static_cast<std::uint64_t>(std::max(cfg.tests, 1));
    return tests - 1 + max_discard_ratio * tests + 1;
}

std::uint64_t attempts_for_round(const run_config& cfg, int round, int rounds, std::uint64_t scheduled,
                                 std::uint64_t counted) {
    const std::uint64_t tests = static_cast<std::uint64_t>(std::max(cfg.tests, 1));
    const std::uint64_t cap = max_attempts(cfg);
    if (scheduled >= cap || counted >= tests) return 0;
    std::uint64_t want;
    if (round == 0) want = tests;
    else if (round + 1 >= rounds) want = cap - scheduled;
    else if (counted == 0) want = std::max<std::uint64_t>(scheduled, 1);
    else want = ((tests - counted) * scheduled + counted - 1) / counted * 5 / 4 + 1;
    return std::min(want, cap - scheduled);
}

namespace {

/// A property's case sequence from one attempt on: RapidCheck's generator and the property's
/// check as one RapidCheck property, run attempt by attempt as RapidCheck's search loop runs it
/// (src/detail/Testing.cpp), with the size of size_for_attempt, and RapidCheck's shrinking of a
/// failure. Not movable: the property's callable refers to it.
class case_sequence {
public:
    case_sequence(const property& p, const run_config& cfg, std::uint64_t first)
        : p_(p), cfg_(cfg),
          // A fixed model (check --model): every case at full size, so that positions, symbols
          // and parameters are uniform from the first case (RapidCheck's size ramp exists to
          // start with small random models; the length has its own log-uniform law).
          gen_(cfg.fixed_model ? rc::gen::resize(cfg.max_size, p.generator(cfg)) : p.generator(cfg)),
          random_(property_seed(cfg.seed, p)), next_(first),
          property_(rc::detail::toProperty([this] { run_case(); })) {
        load_rapidcheck_configuration_quietly();
        for (std::uint64_t i = 0; i < first; ++i) (void)random_.split();
    }
    case_sequence(const case_sequence&) = delete;
    case_sequence& operator=(const case_sequence&) = delete;

    /// Runs the next attempt; a failure is shrunk and returned in `cx`.
    attempt next(std::optional<counterexample>& cx) {
        const std::uint64_t i = next_++;
        const rc::Random random = random_.split();
        const int size = size_for_attempt(cfg_, i);
        current_ = attempt{};
        shrinking_ = false;
        last_failure_.reset();
        const auto shrinkable = property_(random, size);
        const rc::detail::CaseDescription desc = shrinkable.value();
        switch (desc.result.type) {
        case rc::detail::CaseResult::Type::Success:
            break;
        case rc::detail::CaseResult::Type::Discard:
            if (current_.what != attempt::kind::refused && current_.what != attempt::kind::stopped) {
                current_ = attempt{};
                current_.message = desc.result.description;
            }
            break;
        case rc::detail::CaseResult::Type::Failure:
            current_ = attempt{};
            current_.what = attempt::kind::failed;
            cx = shrink(shrinkable, desc.result.description, random, size);
            break;
        }
        return std::move(current_);
    }

private:
    /// The property as RapidCheck runs it, for an attempt or a shrink of a failure. An
    /// exception of the check would be a failure to RapidCheck and be shrunk: a refusal or a
    /// stop request discards the attempt instead, and ends the sequence (while shrinking it only
    /// rejects that shrink: the failure found stays the result).
    void run_case() {
        if (numeric::stop_requested()) {
            if (!shrinking_) current_.what = attempt::kind::stopped;
            RC_DISCARD("stopped");
        }
        test_case c = *gen_;
        long prec = cfg_.precision;
        check_result r;
        bool refused = false;
        try {
            r = check_with_escalation(p_, c, cfg_, &prec);
        } catch (const numeric::limit_error& e) {
            refused = refuse(e.what());
        } catch (const numeric::precision_error& e) {
            refused = refuse(e.what());
        } catch (const std::bad_alloc& e) {
            refused = refuse(e.what());
        } catch (const model::input_error& e) {
            refused = refuse(e.what());
        } catch (const model::model_file_error& e) {
            refused = refuse(e.what());
        } catch (const precondition_error& e) {
            refused = refuse(e.what());
        }
        if (refused) RC_DISCARD("refused");
        if (is<outcomes::failed>(r.result)) {
            last_failure_ = recorded_case{c, r, prec};
            RC_FAIL(r.message);
        }
        if (shrinking_) return;
        current_.n = length_of(c);
        current_.bucket = n_bucket(current_.n);
        current_.tag = p_.tag ? p_.tag(c) : std::string("?");
        if (r.measured) current_.measurement = r.measured->name + ": " + r.measured->label;
        if (is<outcomes::undefined>(r.result)) {
            current_.what = attempt::kind::undefined;
            current_.message = r.message;
        } else if (is<outcomes::undecided>(r.result)) {
            current_.what = attempt::kind::undecided;
            current_.sides_agree = r.sides_agree();
            current_.message = r.message;
        } else {
            current_.what = attempt::kind::passed;
        }
    }

    /// In a catch block: records the refusal (not while shrinking); true.
    bool refuse(const char* what) {
        if (!shrinking_) {
            current_.what = attempt::kind::refused;
            current_.message = what;
            current_.refusal = std::current_exception();
        }
        return true;
    }

    /// RapidCheck's shrinking of a failure (shrinkTestCase in src/detail/Testing.cpp): the
    /// first shrink that still fails is taken and its own shrinks tried, until none fails; the
    /// smallest failing case is then run once more, as RapidCheck does before reporting it.
    counterexample shrink(const rc::Shrinkable<rc::detail::CaseDescription>& failing,
                          std::string description, const rc::Random& random, int size) {
        counterexample cx;
        if (last_failure_) cx.original = *last_failure_;
        shrinking_ = true;
        rc::detail::Reproduce reproduce{random, size, {}};
        rc::Shrinkable<rc::detail::CaseDescription> best = failing;
        auto shrinks = best.shrinks();
        std::size_t i = 0;
        while (auto candidate = shrinks.next()) {
            const rc::detail::CaseDescription d = candidate->value();
            if (d.result.type == rc::detail::CaseResult::Type::Failure) {
                best = std::move(*candidate);
                shrinks = best.shrinks();
                reproduce.shrinkPath.push_back(i);
                description = d.result.description;
                ++cx.shrink_steps;
                i = 0;
            } else {
                ++i;
            }
        }
        const rc::detail::CaseDescription last = best.value();
        if (last.result.type == rc::detail::CaseResult::Type::Failure) description = last.result.description;
        if (last_failure_) cx.shrunk = *last_failure_;
        cx.description = std::move(description);
        const std::unordered_map<std::string, rc::detail::Reproduce> rmap{{p_.suite + "/" + p_.name, reproduce}};
        cx.reproduce = rc::detail::reproduceMapToString(rmap);
        shrinking_ = false;
        return cx;
    }

    const property& p_;
    const run_config& cfg_;
    rc::Gen<test_case> gen_;
    rc::Random random_;
    std::uint64_t next_;
    rc::detail::Property property_;
    attempt current_;
    bool shrinking_ = false;
    std::optional<recorded_case> last_failure_;
};

bool ends_sequence(const attempt& a) {
    return a.what == attempt::kind::failed || a.what == attempt::kind::refused ||
           a.what == attempt::kind::stopped;
}

} // namespace

case_batch run_case_batch(const property& p, const run_config& cfg, std::uint64_t first,
                          std::uint64_t count) {
    const auto start = std::chrono::steady_clock::now();
    case_batch b;
    b.first = first;
    case_sequence seq(p, cfg, first);
    for (std::uint64_t k = 0; k < count; ++k) {
        b.attempts.push_back(seq.next(b.cx));
        if (ends_sequence(b.attempts.back())) break;
    }
    b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return b;
}

report_builder::report_builder(const property& p, const run_config& cfg) : tests_(std::max(cfg.tests, 1)) {
    rep_.suite = p.suite;
    rep_.name = p.name;
    rep_.statement = p.statement;
    rep_.kinds = kind_names(p.kinds);
    rep_.expected_to_fail = p.expected_to_fail;
    rep_.seed = property_seed(cfg.seed, p);
}

bool report_builder::add(const attempt& a, const std::optional<counterexample>& cx) {
    if (over_) throw std::logic_error("report_builder: an attempt after the run is over");
    ++attempts_;
    auto keep_reason = [](std::vector<std::string>& where, const std::string& m) {
        if (where.size() < 3 && std::find(where.begin(), where.end(), m) == where.end())
            where.push_back(m);
    };
    switch (a.what) {
    case attempt::kind::refused:
        over_ = true;
        if (a.refusal) std::rethrow_exception(a.refusal);
        throw std::runtime_error(a.message);
    case attempt::kind::stopped:
        over_ = true;
        rep_.end = outcomes::interrupted{};
        return true;
    case attempt::kind::failed:
        over_ = true;
        rep_.end = outcomes::failed{};
        if (!cx) throw std::logic_error("report_builder: a failed attempt without its counterexample");
        rep_.cx = *cx;
        return true;
    case attempt::kind::discarded:
        if (++discards_ > max_discard_ratio * static_cast<std::uint64_t>(tests_)) {
            over_ = true;
            rep_.end = outcomes::gave_up{a.message};
        }
        return over_;
    case attempt::kind::passed:
        ++rep_.passed;
        break;
    case attempt::kind::undecided:
        ++rep_.undecided;
        if (a.sides_agree) ++rep_.undecided_equal;
        keep_reason(rep_.undecided_reasons, a.message);
        break;
    case attempt::kind::undefined:
        ++rep_.undefined;
        keep_reason(rep_.undefined_reasons, a.message);
        break;
    }
    rep_.n_buckets[a.bucket]++;
    rep_.lengths[a.n]++;
    rep_.classes[a.tag]++;
    if (!a.measurement.empty()) rep_.measurements[a.measurement]++;
    if (counted() >= tests_) {
        over_ = true;
        rep_.end = rep_.undefined > 0   ? outcome{outcomes::undefined{}}
                   : rep_.undecided > 0 ? outcome{outcomes::undecided{}}
                                        : outcome{outcomes::passed{}};
    }
    return over_;
}

bool report_builder::add(const case_batch& b) {
    if (b.first != attempts_) throw std::logic_error("report_builder: a batch out of order");
    for (std::size_t k = 0; k < b.attempts.size() && !over_; ++k)
        add(b.attempts[k], k + 1 == b.attempts.size() ? b.cx : std::nullopt);
    return over_;
}

property_report report_builder::finish(double seconds) {
    if (!over_) rep_.end = outcomes::interrupted{};
    rep_.seconds = seconds;
    return std::move(rep_);
}

property_report run_property(const property& p, const run_config& cfg,
                             const case_progress_fn& on_case) {
    const auto start = std::chrono::steady_clock::now();
    report_builder b(p, cfg);
    case_sequence seq(p, cfg, 0);
    while (!b.over()) {
        std::optional<counterexample> cx;
        const attempt a = seq.next(cx);
        b.add(a, cx);
        if (on_case && a.counted()) on_case(p, b.counted());
    }
    return b.finish(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
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
