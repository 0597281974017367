// The properties of causally masked models (props/masked.cpp) at a small budget with fixed
// seeds, and their negative controls.
#include "props/hard_limit.hpp"
#include "props/masked.hpp"
#include "runner/runner.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;

TEST_CASE("soft-influence/masked-influence-below-bound holds", "[props][soft-influence][mask]") {
    test::require_holds(props::masked_influence_below_bound(), test::budget(40, 64, 512));
}

TEST_CASE("hard-limit/masked-certificate-valid holds", "[props][hard-limit][mask]") {
    test::require_holds(props::certificate_valid(false, true), test::budget(60, 128, 128));
}

TEST_CASE("the masked properties are registered", "[props][mask]") {
    runner::registry reg;
    runner::register_all(reg);
    for (const char* name : {"soft-influence/masked-influence-below-bound",
                             "hard-limit/masked-certificate-valid",
                             "controls/masked-influence-hahn-rate"})
        REQUIRE(reg.find(name) != nullptr);
}

// ---- negative controls ---------------------------------------------------------------------

TEST_CASE("negative control: Hahn's rate K/n is exceeded by the masked witnesses",
          "[props][negative][mask]") {
    const auto r = test::require_fails(props::masked_influence_below_bound(true),
                                       test::budget(40, 256, 512));
    (void)r;
}

TEST_CASE("negative control: a restriction builder ignoring the mask is caught on masked models",
          "[props][negative][mask]") {
    test::require_fails(props::certificate_valid(true, true), test::budget(100, 128, 128));
}
