// uncertain<bool>: three-valued logic, and make_certain() refusing an undecided value.
#include "numeric/order.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace attnprop::numeric;

namespace {

/// The three values, false < undecided < true in Kleene's truth order.
const uncertain<bool> values[3] = {false, indeterminate, true};

int rank(uncertain<bool> u) { return certainly(u) ? 2 : possibly(u) ? 1 : 0; }

} // namespace

TEST_CASE("uncertain<bool> decided values", "[numeric][uncertain]") {
    REQUIRE(certainly(uncertain<bool>(true)));
    REQUIRE(possibly(uncertain<bool>(true)));
    REQUIRE_FALSE(certainly(uncertain<bool>(false)));
    REQUIRE_FALSE(possibly(uncertain<bool>(false)));
    REQUIRE(uncertain<bool>(true).make_certain());
    REQUIRE_FALSE(uncertain<bool>(false).make_certain());
    REQUIRE(is_certain(uncertain<bool>(false)));
}

TEST_CASE("uncertain<bool> undecided", "[numeric][uncertain]") {
    const uncertain<bool> u; // default: undecided
    REQUIRE(is_indeterminate(u));
    REQUIRE_FALSE(is_certain(u));
    REQUIRE_FALSE(certainly(u));
    REQUIRE(possibly(u));
    REQUIRE(is_indeterminate(uncertain<bool>::indeterminate()));
    REQUIRE_THROWS_AS(u.make_certain(), undecided_error);
    REQUIRE(to_string(u) == "undecided");
    REQUIRE(to_string(uncertain<bool>(true)) == "true");
    REQUIRE(to_string(uncertain<bool>(false)) == "false");
}

TEST_CASE("uncertain<bool> follows Kleene's three-valued logic", "[numeric][uncertain]") {
    for (auto a : values) {
        REQUIRE(rank(!a) == 2 - rank(a));
        REQUIRE(rank(!!a) == rank(a));
        for (auto b : values) {
            // Conjunction is the minimum, disjunction the maximum in the truth order.
            REQUIRE(rank(a && b) == std::min(rank(a), rank(b)));
            REQUIRE(rank(a || b) == std::max(rank(a), rank(b)));
            // De Morgan.
            REQUIRE(rank(!(a && b)) == rank(!a || !b));
        }
    }
}

TEST_CASE("uncertain<bool> from comparisons", "[numeric][uncertain]") {
    REQUIRE(certainly(is_less(order::less)));
    REQUIRE(certainly(!is_less(order::equal)));
    REQUIRE(certainly(!is_less(order::greater)));
    REQUIRE(is_indeterminate(is_less(order::unknown)));
    REQUIRE(certainly(is_greater(order::greater)));
    REQUIRE(certainly(!is_greater(order::equal)));
    REQUIRE(is_indeterminate(is_greater(order::unknown)));
    REQUIRE(certainly(is_less_or_equal(order::equal)));
    REQUIRE(certainly(is_less_or_equal(order::less)));
    REQUIRE(certainly(!is_less_or_equal(order::greater)));
    REQUIRE(is_indeterminate(is_less_or_equal(order::unknown)));
    REQUIRE(certainly(is_greater_or_equal(order::equal)));
    REQUIRE(certainly(!is_greater_or_equal(order::less)));
    REQUIRE(is_indeterminate(is_greater_or_equal(order::unknown)));
    // The order helpers agree with the truth values.
    for (order o : {order::less, order::equal, order::greater, order::unknown}) {
        REQUIRE(certainly_less(o) == certainly(is_less(o)));
        REQUIRE(possibly_less(o) == possibly(is_less(o)));
        REQUIRE(certainly_greater(o) == certainly(is_greater(o)));
        REQUIRE(possibly_greater(o) == possibly(is_greater(o)));
        REQUIRE(certainly_not_less(o) == certainly(is_greater_or_equal(o)));
    }
}
