// A property checked on a case whose model is undefined there (soft-majority-ln0 at a tie, a
// hard model with a positional pole) gives the verdict undefined, located: never holds, never
// violated. Fixed cases; the seed of a property run is printed on failure.
#include "model/model_file.hpp"
#include "props/semantics.hpp"
#include "props/soft_influence.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;
using numeric::rational;

namespace {

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

runner::test_case case_of(model::model<rational> m, std::string input) {
    runner::test_case c;
    c.model = std::move(m);
    c.inputs.push_back(std::move(input));
    return c;
}

} // namespace

TEST_CASE("semantics/soft-kinds-agree is undefined at a tie of soft-majority-ln0, holds elsewhere",
          "[props][undefined]") {
    const auto p = props::soft_kinds_agree();
    const auto cfg = test::budget();
    const auto m = bundled("soft-majority-ln0");
    for (const std::string w : {"", "01", "1100", "100110"}) {
        INFO("input '" << w << "'");
        long used = 0;
        const auto r = runner::check_with_escalation(p, case_of(m, w), cfg, &used);
        INFO(r.message);
        REQUIRE(r.status() == runner::verdict::undefined);
        const std::string n = std::to_string(w.size() + 1);
        REQUIRE(r.message == "undefined at layer 1, node 'norm', position " + n +
                                 " (layer norm with eps = 0 at zero variance)");
        REQUIRE(used == cfg.precision); // an exact zero: precision cannot resolve it
    }
    for (const std::string w : {"1", "0", "011", "10100"}) {
        INFO("input '" << w << "'");
        const auto r = runner::check_with_escalation(p, case_of(m, w), cfg);
        INFO(r.message);
        REQUIRE(r.status() == runner::verdict::passed);
    }
}

TEST_CASE("semantics/hard-filter-equals-exact and trace-last-row are undefined on a hard model with "
          "a positional pole",
          "[props][undefined]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_GOLDEN_DIR) + "/undefined/hard-pole.json");
    const auto cfg = test::budget();
    for (const auto& p : {props::hard_filter_equals_exact(), props::trace_last_row()}) {
        INFO(p.suite << "/" << p.name);
        const auto r = runner::check_with_escalation(p, case_of(m, "011"), cfg);
        INFO(r.message);
        REQUIRE(r.status() == runner::verdict::undefined);
        REQUIRE(r.message == "undefined at layer 0, node 'positional embedding', position 2 (division "
                             "by zero in formula '1/(i-2)' at i=2, n=4)");
        // n = 1: position 2 does not exist, the case is decided.
        REQUIRE(runner::check_with_escalation(p, case_of(m, ""), cfg).status() == runner::verdict::passed);
    }
}

TEST_CASE("a property run over soft-majority-ln0 counts undefined cases and fails none",
          "[props][undefined]") {
    // The cross-entropy corollary over the whole cube: at odd n the cube has ties.
    auto r = runner::run_property(
        props::cross_entropy_above_chance(1, rc::gen::just(bundled("soft-majority-ln0"))),
        test::budget(10, 16));
    INFO(test::describe(r));
    REQUIRE(r.failed() == 0);
    REQUIRE(r.error().empty());
    REQUIRE(r.undefined > 0);
    REQUIRE_FALSE(r.undefined_reasons.empty());
    REQUIRE_THAT(r.undefined_reasons.front(), Catch::StartsWith("undefined at layer 1, node 'norm', position "));
}
