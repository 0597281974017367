// The digits of a ball for people (numeric::certified_string, docs/reports.md "Digits"): the
// midpoint rounded to the digits the radius certifies, then the radius to 3 significant digits;
// exact values as their exact decimal; the printed ball always contains the value.
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace attnprop;
using numeric::arb_ball;
using numeric::certified_string;
using numeric::rational;

namespace {

/// The ball "mid +/- rad" (Arb's decimal parser, exact enough at 512 bits).
arb_ball ball(const std::string& text) {
    arb_ball b(512);
    REQUIRE(arb_set_str(b.raw(), text.c_str(), 512) == 0);
    return b;
}

/// What the printed text says, as a ball: "m +/- r", "+/- r" or an exact "m".
arb_ball printed(const std::string& s) {
    arb_ball b(512);
    const std::string text = s.rfind("+/- ", 0) == 0 ? "0 " + s : s;
    INFO("printed '" << s << "'");
    REQUIRE(arb_set_str(b.raw(), text.c_str(), 512) == 0);
    return b;
}

bool contains(const arb_ball& outer, const arb_ball& inner) {
    return arb_contains(outer.raw(), inner.raw()) != 0;
}

} // namespace

TEST_CASE("certified_string: the digits a ball's radius certifies", "[numeric][digits]") {
    SECTION("exact zero prints 0") {
        REQUIRE(certified_string(arb_ball(256), 78) == "0");
        REQUIRE(certified_string(arb_ball(256), 5, true) == "0");
    }
    SECTION("a ball around 0 prints only its radius") {
        // Mathematically 0, computed with rounding: no digit of the midpoint is certified.
        const auto x = ball("-2.24e-76 +/- 1e-73");
        REQUIRE(certified_string(x, 78) == "+/- 1.01e-73");
        REQUIRE(contains(printed(certified_string(x, 78)), x));
    }
    SECTION("a wide ball keeps 3 digits") {
        const auto x = ball("0.123456789 +/- 1e-4");
        REQUIRE(certified_string(x, 78) == "0.123 +/- 5.57e-4");
        REQUIRE(contains(printed(certified_string(x, 78)), x));
    }
    SECTION("a tiny radius keeps every digit up to the cap") {
        arb_ball third(256);
        arb_set_ui(third.raw(), 1);
        arb_div_ui(third.raw(), third.raw(), 3, 256);
        const std::string s = certified_string(third, 78);
        REQUIRE(s.rfind("0.3333333333333333333333333333333333333333333333333333333333333333333333333333", 0) == 0);
        REQUIRE(s.find(" +/- ") != std::string::npos);
        REQUIRE(contains(printed(s), third));
        // The cap (the precision's digits, or --digits) limits them.
        REQUIRE(certified_string(third, 8) == "0.33333333 +/- 3.34e-9");
    }
    SECTION("a radius larger than the value: no digit") {
        const auto x = ball("0.5 +/- 2");
        REQUIRE(certified_string(x, 78) == "+/- 2.51");
        REQUIRE(contains(printed(certified_string(x, 78)), x));
    }
    SECTION("negative values") {
        const auto x = ball("-12345.6789 +/- 1e-2");
        REQUIRE(certified_string(x, 78) == "-12345.7 +/- 0.0312");
        REQUIRE(contains(printed(certified_string(x, 78)), x));
    }
    SECTION("huge and small exponents") {
        const auto big = ball("1.5e300 +/- 1e290"), small = ball("-1.5e-300 +/- 1e-310");
        REQUIRE(certified_string(big, 78) == "1.500000000e+300 +/- 1.01e+290");
        REQUIRE(certified_string(small, 78) == "-1.500000000e-300 +/- 1.01e-310");
        REQUIRE(contains(printed(certified_string(big, 78)), big));
        REQUIRE(contains(printed(certified_string(small, 78)), small));
    }
    SECTION("exact values print exactly, without trailing zeros") {
        REQUIRE(certified_string(ball("0.5"), 78) == "0.5");
        REQUIRE(certified_string(ball("-1024"), 78) == "-1024");
        REQUIRE(certified_string(ball("100000"), 78) == "100000");
        // An exact value with more digits than the cap is rounded, with the rounding as radius.
        REQUIRE(certified_string(ball("1024"), 3) == "1.02e+3 +/- 4.00");
    }
    SECTION("--digits forces the number of digits, certified or not") {
        const auto x = ball("0.123456789 +/- 1e-4");
        REQUIRE(certified_string(x, 10, true) == "0.1234567890 +/- 1.01e-4");
        REQUIRE(contains(printed(certified_string(x, 10, true)), x));
    }
    SECTION("a ball that is not finite") {
        arb_ball x(64);
        arb_indeterminate(x.raw());
        REQUIRE(certified_string(x, 10) == "undefined");
    }
}

TEST_CASE("certified_string: the printed ball contains the value (random balls)", "[numeric][digits]") {
    std::mt19937_64 rng(20261204);
    INFO("seed 20261204");
    std::uniform_int_distribution<int> exp(-40, 40), digits(1, 30);
    std::uniform_real_distribution<double> unit(-1, 1);
    for (int k = 0; k < 400; ++k) {
        arb_ball x(256);
        arb_set_d(x.raw(), unit(rng) * std::ldexp(1.0, exp(rng)));
        mag_set_d(arb_radref(x.raw()), std::fabs(unit(rng)) * std::ldexp(1.0, exp(rng)));
        const int d = digits(rng);
        for (bool force : {false, true}) {
            const std::string s = certified_string(x, d, force);
            INFO("case " << k << ", digits " << d << (force ? " forced" : "") << ": " << s);
            REQUIRE(contains(printed(s), x));
        }
    }
}

TEST_CASE("certified_string of two certified bounds", "[numeric][digits]") {
    // [0.999999, 1.000001]: 1.00000 +/- 1.01e-6 or so; always containing both ends.
    const rational lo(999999, 1000000), hi(1000001, 1000000);
    const std::string s = certified_string(lo, hi, 12);
    INFO(s);
    const arb_ball p = printed(s);
    REQUIRE(numeric::contains(p, lo));
    REQUIRE(numeric::contains(p, hi));
    REQUIRE(certified_string(rational(1, 4), rational(1, 4), 12) == "0.25");
}
