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

// The display rule (docs/reports.md, "Every printed digit").
TEST_CASE("bounds print rounded in their safe direction and labelled", "[numeric][ball-bounds][digits]") {
    const arb_ball x = third(128); // 1/3 +/- 2^-20
    CHECK(numeric::bound_display(x, numeric::bound_side::upper, 4) == "≤ 0.3334");
    CHECK(numeric::bound_display(x, numeric::bound_side::lower, 4) == "≥ 0.3333");
    CHECK(numeric::bound_label("2.5", numeric::bound_side::upper, false) == "<= 2.5");
    CHECK(numeric::bound_label("-", numeric::bound_side::lower) == "-");
}

TEST_CASE("certified_digits counts the digits a certified text certifies", "[numeric][ball-bounds][digits]") {
    CHECK(numeric::certified_digits("0.918779558653 +/- 2.51e-13") == 12);
    CHECK(numeric::certified_digits("-0.0270452501157 +/- 4.10e-14") == 12);
    CHECK(numeric::certified_digits("3.6636e+4 +/- 0.931") == 5);
    CHECK(numeric::certified_digits("+/- 1.46e-73") == 72);
    CHECK(numeric::certified_digits("1") == numeric::exact_digits);
    CHECK(numeric::certified_digits("undefined") == -1);
    CHECK(numeric::certified_digits("-") == -1);
}

TEST_CASE("rounded_display prints only digits every point of the ball rounds to", "[numeric][ball-bounds][digits]") {
    const numeric::context ctx{128};
    // 1/3 +/- 2^-20 (about 9.5e-7): 5 digits are shared (0.33333), 6 are not.
    CHECK(numeric::rounded_display(third(128), 8) == "0.33333");
    CHECK(numeric::rounded_display(third(128), 3) == "0.333");
    // A ball across a rounding boundary: 0.12345 +/- 1e-6 rounds to 0.1234 and 0.1235 at 4
    // digits, so only 0.123 is printed...
    arb_ball y = arb_ball::from_rational(numeric::rational(12345, 100000), ctx);
    mag_set_d(arb_radref(y.raw()), 1e-6);
    CHECK(numeric::rounded_display(y, 4) == "0.123");
    // ... and a ball around 0 none: its midpoint and radius.
    arb_ball z = numeric::zero<arb_ball>(ctx);
    mag_set_d(arb_radref(z.raw()), 1e-9);
    CHECK(numeric::rounded_display(z, 3).find("+/-") != std::string::npos);
    CHECK(numeric::rounded_display(numeric::zero<arb_ball>(ctx), 3) == "0");
}

TEST_CASE("radius_around covers a midpoint printed with fewer digits", "[numeric][ball-bounds][digits]") {
    const arb_ball x = arb_ball::from_rational(numeric::rational(1, 3), numeric::context{256});
    // 0.333 is 3.3e-4 from 1/3: the radius around it must be at least that (rounded up).
    const std::string r = numeric::radius_around(x, "0.333");
    CHECK(std::stod(r) >= 1.0 / 3 - 0.333);
    CHECK(std::stod(r) < 3.4e-4);
    CHECK(numeric::radius_around(numeric::zero<arb_ball>(numeric::context{64}), "0") == "0");
}
