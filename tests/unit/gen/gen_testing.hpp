#pragma once
// What the tests of the model generators share: samples from fixed seeds, properties run with
// a fixed seed and budget (never from RC_PARAMS), and small facts about a model.
#include "gen/generators.hpp"

#include "attention/hard.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace attnprop::gen_testing {

using numeric::rational;
using exact_model = model::model<rational>;

inline const numeric::context ctx{256};

/// What RapidCheck prints for a value it cannot show (split to avoid a trigraph).
inline const std::string unknown_placeholder = std::string("<??") + "?>";

/// `count` values of `g` from a fixed seed, at sizes cycling through 0 .. kNominalSize.
template <class T> std::vector<T> sample(const rc::Gen<T>& g, std::uint64_t seed, int count) {
    rc::Random random(seed);
    std::vector<T> out;
    for (int k = 0; k < count; ++k)
        out.push_back(g(random.split(), k % (rc::kNominalSize + 1)).value());
    return out;
}

/// One value of `g` at `size` from a fixed seed.
template <class T> T one(const rc::Gen<T>& g, std::uint64_t seed, int size = rc::kNominalSize) {
    return g(rc::Random(seed), size).value();
}

/// Ignores RapidCheck's progress events, so that deliberately failing properties print no
/// "reproduce" hint at exit.
class quiet_listener : public rc::detail::TestListener {
public:
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

/// Runs a property with a fixed seed and budget (never from RC_PARAMS) and returns the result.
template <class Testable>
rc::detail::TestResult run_property(const std::string& description, std::uint64_t seed,
                                    int max_success, Testable&& testable) {
    rc::detail::TestParams params;
    params.seed = seed;
    params.maxSuccess = max_success;
    params.maxSize = rc::kNominalSize;
    rc::detail::TestMetadata meta;
    meta.id = description;
    meta.description = description;
    quiet_listener listener;
    return rc::detail::checkTestable(std::forward<Testable>(testable), meta, params, listener);
}

/// Runs a property that must hold; a failure prints the seed and RapidCheck's report.
template <class Testable>
void require_property(const std::string& description, std::uint64_t seed, int max_success,
                      Testable&& testable) {
    const auto result = run_property(description, seed, max_success,
                                     std::forward<Testable>(testable));
    std::ostringstream report;
    rc::detail::printResultMessage(result, report);
    INFO(description << " (seed " << seed << "):\n" << report.str());
    REQUIRE(result.template is<rc::detail::SuccessResult>());
}

inline std::string show(const exact_model& m) { return rc::toString(m); }

inline std::size_t max_heads(const exact_model& m) {
    std::size_t h = 0;
    for (const auto& l : m.layers) h = std::max(h, l.heads.size());
    return h;
}

inline bool all_tokens_zero(const exact_model& m) {
    for (const auto& v : m.token)
        for (const auto& q : v)
            if (q != 0) return false;
    return true;
}

/// The model's symbols as one string (single-character symbols).
inline std::string symbols_of(const exact_model& m) {
    std::string a;
    for (const auto& s : m.sigma.symbols) a += s;
    return a;
}

} // namespace attnprop::gen_testing
