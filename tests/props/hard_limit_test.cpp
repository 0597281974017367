// Suite hard-limit at a small budget with fixed seeds, and each property's negative control.
#include "props/hard_limit.hpp"
#include "runner/runner.hpp"
#include "broken.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;
using numeric::rational;

namespace {

runner::run_config budget(int tests, long max_n = 64) {
    return test::budget(tests, max_n, 128); // exact checks: nothing to escalate
}
void require_holds(const runner::property& p, int tests = 100) {
    test::require_holds(p, budget(tests));
}
void require_fails(const runner::property& p, int tests = 100) {
    test::require_fails(p, budget(tests));
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
    require_fails(props::free_fraction(test::broken::free_count_plus_one()));
}

TEST_CASE("negative control: PARITY accuracy without the precondition Free ⊋ D is caught",
          "[props][negative][hard-limit]") {
    require_fails(props::parity_half(true));
}

TEST_CASE("negative control: a PARITY pair flipping a dependency position is caught",
          "[props][negative][hard-limit]") {
    require_fails(props::parity_pair(test::broken::pair_flipping_a_dependency()));
}
