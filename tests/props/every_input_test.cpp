// The properties of the bounds over every input (props/every_input.hpp) at a small budget with a
// fixed seed: each holds, and each fails against its deliberate defect (its negative control),
// the failure shrinking to a case that fails again.
#include "props/every_input.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;

TEST_CASE("soft-influence/every-input-bound holds", "[props][soft-influence]") {
    test::require_holds(props::every_input_bound(), test::budget(60, 64));
}

TEST_CASE("negative control: the bound over every input without the weight change is exceeded",
          "[props][negative]") {
    test::require_fails(props::every_input_bound(analysis::dropped_term::weight_change), test::budget(200, 16));
}

TEST_CASE("negative control: the bound over every input without the changed key's value is exceeded",
          "[props][negative]") {
    test::require_fails(props::every_input_bound(analysis::dropped_term::changed_key), test::budget(200, 16));
}

TEST_CASE("soft-hard/every-input-margin holds", "[props][soft-hard]") {
    test::require_holds(props::every_input_margin(), test::budget(100, 32));
}

TEST_CASE("negative control: margins admitted without checking the other keys are not attained",
          "[props][negative]") {
    analysis::margin_options defect;
    defect.skip_blocking_for_testing = true;
    test::require_fails(props::every_input_margin(defect), test::budget(200, 16));
}
