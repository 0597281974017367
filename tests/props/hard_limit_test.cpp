// Suite hard-limit at a small budget with fixed seeds, and each property's negative control.
#include "props/hard_limit.hpp"
#include "runner/runner.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;
using numeric::rational;

namespace {

runner::run_config budget(int tests, long max_n = 64) {
    runner::run_config cfg;
    cfg.seed = 20261202;
    cfg.tests = tests;
    cfg.max_n = max_n;
    cfg.precision = 128;
    cfg.precision_cap = 128; // exact checks: nothing to escalate
    return cfg;
}

std::string describe(const runner::property_report& r) {
    std::string s = r.suite + "/" + r.name + " (seed " + std::to_string(r.seed) + "): " +
                    r.status() + ", " + std::to_string(r.passed) + " passed, " +
                    std::to_string(r.undecided) + " undecided";
    if (r.cx) s += "; counterexample: " + r.cx->shrunk.result.message;
    if (!r.error.empty()) s += "; error: " + r.error;
    return s;
}

void require_holds(const runner::property& p, int tests = 100) {
    auto r = runner::run_property(p, budget(tests));
    INFO(describe(r));
    REQUIRE(r.failed == 0);
    REQUIRE(r.error.empty());
    REQUIRE_FALSE(r.gave_up);
    REQUIRE(r.passed > 0);
}

void require_fails(const runner::property& p, int tests = 100) {
    auto r = runner::run_property(p, budget(tests));
    INFO(describe(r));
    REQUIRE(r.failed == 1);
    REQUIRE(r.cx.has_value());
    auto again = runner::check_with_escalation(p, r.cx->shrunk.value, budget(tests));
    REQUIRE(again.status == runner::verdict::violated);
}

} // namespace

TEST_CASE("hard-limit/certificate-valid holds", "[props][hard-limit]") {
    require_holds(props::certificate_valid());
}
TEST_CASE("hard-limit/free-fraction holds", "[props][hard-limit]") {
    require_holds(props::free_fraction());
}
TEST_CASE("hard-limit/parity-half holds", "[props][hard-limit]") {
    require_holds(props::parity_half());
}
TEST_CASE("hard-limit/parity-pair holds", "[props][hard-limit]") {
    require_holds(props::parity_pair());
}

TEST_CASE("hard-limit is registered", "[props][hard-limit]") {
    runner::registry reg;
    runner::register_all(reg);
    for (const char* name : {"hard-limit/certificate-valid", "hard-limit/free-fraction",
                             "hard-limit/parity-half", "hard-limit/parity-pair"})
        REQUIRE(reg.find(name) != nullptr);
}

// ---- negative controls ---------------------------------------------------------------------

TEST_CASE("negative control: a candidate rule ignoring ties is caught by the independence check",
          "[props][negative][hard-limit]") {
    require_fails(props::certificate_valid(true));
}

TEST_CASE("negative control: a builder miscounting its free inputs is caught",
          "[props][negative][hard-limit]") {
    require_fails(props::free_fraction([](const model::model<rational>& m, long n,
                                          const analysis::restriction_options& o) {
        auto r = analysis::build_restriction(m, n, o);
        r.free_count += 1;
        return r;
    }));
}

TEST_CASE("negative control: PARITY accuracy without the precondition Free ⊋ D is caught",
          "[props][negative][hard-limit]") {
    require_fails(props::parity_half(true));
}

TEST_CASE("negative control: a PARITY pair flipping a dependency position is caught",
          "[props][negative][hard-limit]") {
    require_fails(props::parity_pair([](const model::model<rational>& m,
                                        const analysis::restriction& r) {
        analysis::language_options lo;
        lo.samples = 2;
        auto res = analysis::analyse_language(m, r, lang::language::parity, lo);
        if (res.verdict != analysis::language_verdict::counterexample || r.dependency.empty())
            return res;
        // Flip the first dependency position of input 2 instead of a position outside D.
        std::string& w = res.inputs[1];
        w = res.inputs[0];
        const std::size_t b = r.dependency.front();
        w[b] = w[b] == '0' ? '1' : '0';
        return res;
    }));
}
