// Upper-bound points of Arb balls (numeric/ball_bounds.hpp): rounded outward, never inward,
// and their decimal text rounded outward as well; +inf for what has no finite bound.
#include "numeric/ball_bounds.hpp"
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace attnprop;
using numeric::arb_ball;

namespace {

/// A ball around 1/3 with radius 2^-20 at `prec` bits.
arb_ball third(long prec) {
    arb_ball x = arb_ball::from_rational(numeric::rational(1, 3), numeric::context{prec});
    mag_set_ui_2exp_si(arb_radref(x.raw()), 1, -20);
    return x;
}

} // namespace

TEST_CASE("upper and lower are exact points outside the ball", "[numeric][ball-bounds]") {
    for (long prec : {16L, 53L, 128L, 512L}) {
        INFO("precision " << prec);
        const arb_ball x = third(prec);
        const arb_ball u = numeric::upper(x), l = numeric::lower(x);
        REQUIRE(numeric::is_exact(u));
        REQUIRE(numeric::is_exact(l));
        // Every point of x is <= u and >= l.
        REQUIRE(arb_le(x.raw(), u.raw()) != 0);
        REQUIRE(arb_ge(x.raw(), l.raw()) != 0);
        REQUIRE(numeric::to_double(l) < 1.0 / 3 - 0x1p-21);
        REQUIRE(numeric::to_double(u) > 1.0 / 3 + 0x1p-21);
    }
}

TEST_CASE("max_upper and min_upper bound both operands' maximum and minimum",
          "[numeric][ball-bounds]") {
    const arb_ball a = third(128);
    const arb_ball b = numeric::from_int<arb_ball>(-2, numeric::context{128});
    const arb_ball mx = numeric::max_upper(a, b), mn = numeric::min_upper(a, b);
    REQUIRE(arb_equal(mx.raw(), numeric::upper(a).raw()));
    REQUIRE(arb_equal(mn.raw(), numeric::upper(b).raw()));
}

TEST_CASE("no finite bound is +inf, and zero is the exact point 0", "[numeric][ball-bounds]") {
    arb_ball wide(64);
    arb_zero_pm_inf(wide.raw());
    REQUIRE_FALSE(numeric::finite(wide));
    REQUIRE_FALSE(numeric::finite(numeric::upper(wide)));
    REQUIRE_FALSE(numeric::finite(numeric::pos_inf(64)));
    REQUIRE(numeric::upper_decimal(wide) == "inf");
    REQUIRE(numeric::lower_decimal(wide) == "-inf");
    REQUIRE(numeric::finite(numeric::zero_point(64)));
    REQUIRE(arb_is_zero(numeric::zero_point(64).raw()));
    REQUIRE(numeric::upper_decimal(numeric::zero_point(64)) == "0");
}

TEST_CASE("decimal bounds are rounded outward to their digits", "[numeric][ball-bounds]") {
    const arb_ball x = third(128);
    REQUIRE(numeric::upper_decimal(x, 6) == "0.333335");
    REQUIRE(numeric::lower_decimal(x, 6) == "0.333332");
    // Negative control: rounding to nearest would give 0.333334 and 0.333333.
    REQUIRE(numeric::upper_decimal(x, 6) != "0.333334");
    const arb_ball big = numeric::from_int<arb_ball>(10, numeric::context{128}) *
                         numeric::from_int<arb_ball>(1000001, numeric::context{128});
    REQUIRE(numeric::upper_decimal(big, 3) == "1.01e+07");
    REQUIRE(numeric::lower_decimal(big, 3) == "1e+07");
}
