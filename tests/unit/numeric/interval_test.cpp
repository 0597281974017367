// The double-interval filter: outward rounding, and exact points staying points.
#include "numeric/interval.hpp"

#include <catch2/catch.hpp>

using namespace attnprop::numeric;

TEST_CASE("exact operations keep points points", "[numeric][interval]") {
    interval a(3.0), b(4.0);
    REQUIRE((a + b).is_point());
    REQUIRE((a * b).is_point());
    REQUIRE((a - b).lo() == -1.0);
    REQUIRE((interval(1.0) / interval(4.0)).is_point());
    REQUIRE(compare(a * b, interval(12.0)) == order::equal);
}

TEST_CASE("inexact operations round outward", "[numeric][interval]") {
    const context ctx{};
    interval third = interval::from_rational(rational(1, 3), ctx);
    REQUIRE(!third.is_point());
    REQUIRE(contains(third, rational(1, 3)));
    interval t = interval(1.0) / interval(3.0);
    REQUIRE(contains(t, rational(1, 3)));
    interval s = interval(0.1) + interval(0.2);
    REQUIRE(contains(s, rational_from_double(0.1) + rational_from_double(0.2)));
    interval p = interval(0.1) * interval(0.3);
    REQUIRE(contains(p, rational_from_double(0.1) * rational_from_double(0.3)));
    REQUIRE(compare(third, t) == order::unknown);
}

TEST_CASE("division by an interval containing zero is the whole line", "[numeric][interval]") {
    interval r = interval(1.0) / interval(-1.0, 1.0);
    REQUIRE(r.lo() == -std::numeric_limits<double>::infinity());
    REQUIRE(r.hi() == std::numeric_limits<double>::infinity());
}

TEST_CASE("tiny products are widened, never rounded to a wrong point", "[numeric][interval]") {
    interval a(1e-200), b(-1e-200);
    interval p = a * b; // underflows to -0
    REQUIRE(p.lo() < 0.0);
    REQUIRE(p.hi() >= 0.0);
    REQUIRE(contains(p, rational_from_double(1e-200) * rational_from_double(-1e-200)));
}
