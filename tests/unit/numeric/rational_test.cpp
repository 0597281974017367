// Exact parsing and printing of rationals.
#include "numeric/rational.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace attnprop::numeric;

TEST_CASE("decimal literals parse to their exact value", "[numeric][rational]") {
    REQUIRE(*parse_rational("0.1") == rational(1, 10));
    REQUIRE(*parse_rational("-1.25e-3") == rational(-1, 800));
    REQUIRE(*parse_rational("1e-5") == rational(1, 100000));
    REQUIRE(*parse_rational("1E+3") == rational(1000));
    REQUIRE(*parse_rational(".5") == rational(1, 2));
    REQUIRE(*parse_rational("7") == rational(7));
    // Leading zeros are decimal, never octal.
    REQUIRE(*parse_rational("0.125") == rational(1, 8));
    REQUIRE(*parse_rational("0.08") == rational(2, 25));
    REQUIRE(*parse_rational("010/3") == rational(10, 3));
    REQUIRE(*parse_rational("007") == rational(7));
    REQUIRE(*parse_rational("09") == rational(9));
    REQUIRE(*parse_rational(" -3/4 ") == rational(-3, 4));
    REQUIRE(*parse_rational("6/8") == rational(3, 4));
    REQUIRE(*parse_rational("123456789012345678901234567890") ==
            rational(integer("123456789012345678901234567890")));
}

TEST_CASE("bad rational text is rejected with a reason", "[numeric][rational]") {
    std::string err;
    REQUIRE_FALSE(parse_rational("1/0", &err));
    REQUIRE(err == "zero denominator");
    REQUIRE_FALSE(parse_rational("1.2.3", &err));
    REQUIRE_FALSE(parse_rational("abc", &err));
    REQUIRE_FALSE(parse_rational("", &err));
    REQUIRE_FALSE(parse_rational("1e", &err));
    REQUIRE_FALSE(parse_rational("1/-2", &err));
    REQUIRE_FALSE(parse_rational(".", &err));
    REQUIRE_FALSE(parse_rational("1e99999999999", &err));
}

TEST_CASE("exact printing", "[numeric][rational]") {
    REQUIRE(to_exact_string(rational(6, 8)) == "3/4");
    REQUIRE(to_exact_string(rational(-5)) == "-5");
    REQUIRE(*exact_decimal(rational(1, 8)) == "0.125");
    REQUIRE(*exact_decimal(rational(-5, 2)) == "-2.5");
    REQUIRE(*exact_decimal(rational(12)) == "12");
    REQUIRE(*exact_decimal(rational(1, 200)) == "0.005");
    REQUIRE(*exact_decimal(rational(-3, 1000)) == "-0.003");
    REQUIRE(*exact_decimal(rational(1234, 100)) == "12.34");
    REQUIRE(*exact_decimal(rational(0)) == "0");
    REQUIRE_FALSE(exact_decimal(rational(1, 3)));
    REQUIRE(to_decimal_string(rational(1, 3), 5) == "0.33333");
    REQUIRE(to_decimal_string(rational(1, 8), 20) == "0.125");
}

TEST_CASE("long exact decimals: linear cost, and a scientific form", "[numeric][rational]") {
    // 1e-100000 used to take 2.2 s (a loop of 10^5 single divisions and multiplications).
    const rational tiny = *parse_rational("1e-100000");
    const std::optional<std::string> d = exact_decimal(tiny, 40);
    REQUIRE(d);
    REQUIRE(d->size() == 100002);
    REQUIRE(d->substr(0, 4) == "0.00");
    REQUIRE(d->back() == '1');
    REQUIRE(*exact_scientific(tiny, 40) == "1e-100000");
    REQUIRE(*exact_scientific(*parse_rational("-25e99999"), 40) == "-25e99999");
    REQUIRE(*exact_scientific(rational(1234, 100), 40) == "1234e-2");
    REQUIRE(*exact_scientific(rational(1200), 40) == "12e2");
    REQUIRE(*exact_scientific(rational(0), 40) == "0e0");
    REQUIRE_FALSE(exact_scientific(rational(1, 3), 40));
    // 2^-200 has 140 significant digits: no short form.
    const rational two200 = rational(1) / rational(integer(1) << 200);
    REQUIRE_FALSE(exact_scientific(two200, 40));
    REQUIRE(exact_scientific(two200, 200));
    REQUIRE(*parse_rational(*exact_scientific(two200, 200)) == two200);
    // An integer's digits count whole for the plain form (as before), not for the scientific.
    const rational big = *parse_rational("1e50");
    REQUIRE_FALSE(exact_decimal(big, 40));
    REQUIRE(*exact_scientific(big, 40) == "1e50");
    for (const char* text : {"0.125", "-3e-7", "7e100000", "12345678901234567890e-30", "5"}) {
        const rational q = *parse_rational(text);
        INFO(text);
        REQUIRE(*parse_rational(*exact_scientific(q, 60)) == q);
        REQUIRE(*parse_rational(*exact_decimal(q, std::numeric_limits<std::size_t>::max())) == q);
    }
}

TEST_CASE("double conversions are exact or correctly rounded", "[numeric][rational]") {
    REQUIRE(rational_from_double(0.1) != rational(1, 10));
    REQUIRE(to_double_nearest(rational(1, 10)) == 0.1);
    REQUIRE(to_double_nearest(rational(1, 3)) == 1.0 / 3.0);
    REQUIRE(rational_from_double(0.5) == rational(1, 2));
    // Halfway between 1 and the next double rounds to even (1).
    rational half_ulp = rational(1) + rational(1, integer(1) << 53);
    REQUIRE(to_double_nearest(half_ulp) == 1.0);
}
