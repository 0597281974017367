// runner::outcome: the alternatives of a case and of a property's run, their words in the
// reports, and the check_result built on them.
#include "runner/runner.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;
using namespace attnprop::runner;

TEST_CASE("outcome: the status word of each alternative", "[runner][outcome]") {
    REQUIRE(status_word(outcomes::passed{}, true) == "passed");
    REQUIRE(status_word(outcomes::failed{}, true) == "failed");
    REQUIRE(status_word(outcomes::undecided{}, false) == "undecided");
    REQUIRE(status_word(outcomes::undecided{}, true) == "partly-undecided");
    REQUIRE(status_word(outcomes::undefined{}, true) == "undefined");
    REQUIRE(status_word(outcomes::gave_up{"too many discards"}, false) == "gave-up");
    REQUIRE(status_word(outcomes::error{"x"}, false) == "error");
    REQUIRE(status_word(outcomes::interrupted{}, true) == "interrupted");
}

TEST_CASE("outcome: a check_result's verdict is its alternative", "[runner][outcome]") {
    REQUIRE(check_result{}.status() == verdict::passed);
    REQUIRE(check_result::holds().status() == verdict::passed);
    REQUIRE(check_result::violated("w").status() == verdict::failed);
    REQUIRE(is<outcomes::failed>(check_result::violated("w").result));
    REQUIRE(check_result::undecided("r").status() == verdict::undecided);
    REQUIRE(check_result::undefined("at layer 1").status() == verdict::undefined);
    for (verdict v : {verdict::passed, verdict::failed, verdict::undecided, verdict::undefined})
        REQUIRE(check_result::make(v, "m").status() == v);

    const check_result u = check_result::undecided("overlap");
    REQUIRE(u.precision_helps());
    REQUIRE_FALSE(u.sides_agree());
    REQUIRE_FALSE(check_result::undecided_at_any_precision("a slope").precision_helps());
    check_result agree = check_result::undecided("overlap");
    agree.with_sides_agree();
    REQUIRE(agree.sides_agree());
    // Only an undecided case has sides that agree: the flag cannot stick to a decided one.
    check_result held = check_result::holds();
    held.with_sides_agree();
    REQUIRE_FALSE(held.sides_agree());
    REQUIRE_FALSE(check_result::violated("w").precision_helps());
}

TEST_CASE("outcome: a property report's counts follow its end", "[runner][outcome]") {
    property_report r;
    r.passed = 3;
    REQUIRE(r.status() == "passed");
    REQUIRE(r.failed() == 0);
    REQUIRE_FALSE(r.gave_up());
    REQUIRE(r.error().empty());
    r.end = outcomes::failed{};
    REQUIRE(r.failed() == 1);
    REQUIRE(r.status() == "failed");
    r.end = outcomes::gave_up{"discards"};
    REQUIRE(r.gave_up());
    REQUIRE(r.error().empty()); // a gave-up description is no error
    r.end = outcomes::error{"RapidCheck error"};
    REQUIRE(r.error() == "RapidCheck error");
    REQUIRE(r.status() == "error");
    r.end = outcomes::interrupted{};
    REQUIRE(r.interrupted());
}
