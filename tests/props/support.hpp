#pragma once
// Shared by the property-suite tests: a small fixed-seed budget, and "holds" / "fails"
// requirements that print the property's seed and counterexample on failure.
#include "runner/runner.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace attnprop::test {

/// Fixed seed, `tests` cases, n <= max_n, 128 bits escalated up to precision_cap.
inline runner::run_config budget(int tests = 100, long max_n = 64, long precision_cap = 1024) {
    runner::run_config cfg;
    cfg.seed = 20261202;
    cfg.tests = tests;
    cfg.max_n = max_n;
    cfg.precision = 128;
    cfg.precision_cap = precision_cap;
    return cfg;
}

/// One line: property, seed, status, counts, and the counterexample or error if any.
inline std::string describe(const runner::property_report& r) {
    std::string s = r.suite + "/" + r.name + " (seed " + std::to_string(r.seed) + "): " +
                    r.status() + ", " + std::to_string(r.passed) + " passed, " +
                    std::to_string(r.undecided) + " undecided";
    if (r.cx) s += "; counterexample: " + r.cx->shrunk.result.message;
    if (!r.error().empty()) s += "; error: " + r.error();
    return s;
}

/// The property found no counterexample, no error, did not give up, and passed some cases.
inline void require_holds(const runner::property& p, const runner::run_config& cfg) {
    auto r = runner::run_property(p, cfg);
    INFO(describe(r));
    REQUIRE(r.failed() == 0);
    REQUIRE(r.error().empty());
    REQUIRE_FALSE(r.gave_up());
    REQUIRE(r.passed > 0);
}

/// The property found a counterexample, and its shrunk case fails again when re-checked.
inline runner::property_report require_fails(const runner::property& p,
                                             const runner::run_config& cfg) {
    auto r = runner::run_property(p, cfg);
    INFO(describe(r));
    REQUIRE(r.failed() == 1);
    REQUIRE(r.cx.has_value());
    auto again = runner::check_with_escalation(p, r.cx->shrunk.value, cfg);
    REQUIRE(again.status() == runner::verdict::failed);
    return r;
}

} // namespace attnprop::test
