// The laws every scalar kind must satisfy (run over all of them), in the spirit of CGAL's
// test_real_embeddable and Boost.Multiprecision's test_arithmetic.
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>

#include <tuple>

using namespace attnprop::numeric;
namespace num = attnprop::numeric;

namespace {

using all_scalars = std::tuple<rational, double, mpfr_real, arb_ball, interval, dinterval>;

const context ctx{200};

// Whether x is a faithful result for the exact value q: equal for exact, within a relative
// tolerance for rounded kinds, containing q for enclosures.
template <class S> bool faithful(const S& x, const rational& q, double rel = 1e-12) {
    constexpr auto k = scalar_traits<S>::kind;
    if constexpr (std::is_same_v<S, rational>) {
        return x == q;
    } else if constexpr (k == scalar_kind::enclosure) {
        return contains(x, q);
    } else {
        auto e = exact_of(x);
        if (!e) return false;
        rational err = *e - q;
        if (err < 0) err = -err;
        rational mag = q < 0 ? rational(-q) : q;
        return err <= rational_from_double(rel) * (mag + rational(1, 1000000));
    }
}

const std::vector<rational> samples = {rational(0),        rational(1),     rational(-1),
                                       rational(1, 3),     rational(-7, 5), rational(22, 7),
                                       rational(1, 1024),  rational(12345, 2)};

} // namespace

TEMPLATE_LIST_TEST_CASE("scalar conversion from rationals is faithful", "[numeric][laws]",
                        all_scalars) {
    for (const auto& q : samples) {
        INFO("q = " << to_exact_string(q));
        REQUIRE(faithful(from_rational<TestType>(q, ctx), q));
    }
    REQUIRE(faithful(from_int<TestType>(-42, ctx), rational(-42)));
    REQUIRE(faithful(zero<TestType>(ctx), rational(0)));
    REQUIRE(faithful(one<TestType>(ctx), rational(1)));
}

TEMPLATE_LIST_TEST_CASE("scalar arithmetic is faithful", "[numeric][laws]", all_scalars) {
    for (const auto& a : samples)
        for (const auto& b : samples) {
            INFO("a = " << to_exact_string(a) << ", b = " << to_exact_string(b));
            TestType x = from_rational<TestType>(a, ctx), y = from_rational<TestType>(b, ctx);
            REQUIRE(faithful(x + y, a + b));
            REQUIRE(faithful(x - y, a - b));
            REQUIRE(faithful(x * y, a * b));
            REQUIRE(faithful(-x, rational(-a)));
            if (b != 0) REQUIRE(faithful(x / y, a / b));
            TestType acc = from_rational<TestType>(a, ctx);
            fma_acc(acc, x, y);
            REQUIRE(faithful(acc, a + a * b));
            REQUIRE(faithful(num::abs(x), a < 0 ? rational(-a) : a));
        }
}

TEMPLATE_LIST_TEST_CASE("scalar comparisons never contradict the exact order", "[numeric][laws]",
                        all_scalars) {
    for (const auto& a : samples)
        for (const auto& b : samples) {
            TestType x = from_rational<TestType>(a, ctx), y = from_rational<TestType>(b, ctx);
            order o = compare(x, y);
            order truth = compare(a, b);
            INFO("a = " << to_exact_string(a) << ", b = " << to_exact_string(b)
                        << ", got " << to_string(o));
            if constexpr (scalar_traits<TestType>::kind == scalar_kind::enclosure) {
                REQUIRE((o == truth || o == order::unknown));
                // Distinct values far apart must be decided even by an enclosure.
                if (a != b) REQUIRE(o == truth);
            } else if constexpr (scalar_traits<TestType>::kind == scalar_kind::exact) {
                REQUIRE(o == truth);
            } else {
                REQUIRE(o != order::unknown);
                REQUIRE(o == truth); // samples are far apart relative to rounding
            }
            REQUIRE(compare(y, x) == reverse(o));
        }
}

TEMPLATE_LIST_TEST_CASE("only enclosures answer unknown", "[numeric][laws]", all_scalars) {
    // 1/3 is not dyadic: an enclosure of it overlaps itself minus a tiny amount.
    TestType third = from_rational<TestType>(rational(1, 3), ctx);
    TestType other = third + from_rational<TestType>(rational(0), ctx);
    order o = compare(third, other);
    if constexpr (scalar_traits<TestType>::kind == scalar_kind::enclosure)
        REQUIRE((o == order::unknown || o == order::equal));
    else
        REQUIRE(o == order::equal);
}

TEMPLATE_LIST_TEST_CASE("step and relu are rigorous", "[numeric][laws]", all_scalars) {
    for (const auto& a : samples) {
        TestType x = from_rational<TestType>(a, ctx);
        REQUIRE(faithful(step(x, ctx), a > 0 ? rational(1) : rational(0)));
        REQUIRE(faithful(relu(x, ctx), a > 0 ? a : rational(0)));
    }
    if constexpr (scalar_traits<TestType>::kind == scalar_kind::enclosure) {
        // An enclosure straddling zero: step must contain both 0 and 1.
        TestType s = from_rational<TestType>(rational(1, 3), ctx) - from_rational<TestType>(rational(1, 3), ctx);
        TestType st = step(s, ctx);
        REQUIRE(faithful(st, rational(0)));
        if (compare(s, zero<TestType>(ctx)) == order::unknown) REQUIRE(faithful(st, rational(1)));
    }
}

TEMPLATE_LIST_TEST_CASE("transcendental functions", "[numeric][laws]", all_scalars) {
    if constexpr (ExpScalar<TestType>) {
        TestType one_ = one<TestType>(ctx);
        TestType e = num::exp(one_);
        TestType l = num::log(e);
        REQUIRE(faithful(l, rational(1)));
        TestType two = from_int<TestType>(2, ctx);
        TestType r = num::sqrt(two);
        REQUIRE(faithful(r * r, rational(2)));
        REQUIRE(faithful(num::tanh(zero<TestType>(ctx)), rational(0)));
        REQUIRE(faithful(num::sin(zero<TestType>(ctx)), rational(0)));
        REQUIRE(faithful(num::cos(zero<TestType>(ctx)), rational(1)));
        TestType p = pi<TestType>(ctx);
        if constexpr (scalar_traits<TestType>::kind == scalar_kind::enclosure)
            REQUIRE(contains(p, pi<mpfr_real>(context{512})));
        else
            REQUIRE(std::abs(approx_double(p) - 3.14159265358979323846) < 1e-15);
    } else {
        STATIC_REQUIRE(!ExpScalar<TestType>);
    }
}

TEST_CASE("MPFR values carry their own precision", "[numeric][mpfr]") {
    mpfr_real a = from_rational<mpfr_real>(rational(1, 3), context{64});
    mpfr_real b = from_rational<mpfr_real>(rational(1, 3), context{512});
    REQUIRE(a.precision() == 64);
    REQUIRE(b.precision() == 512);
    REQUIRE((a + b).precision() == 512);
    mpfr_real c = a;
    REQUIRE(c.precision() == 64);
    // 512-bit 1/3 is closer to 1/3 than the 64-bit one.
    rational third(1, 3);
    rational ea = to_rational(a) - third, eb = to_rational(b) - third;
    REQUIRE(num::abs(eb) < num::abs(ea));
}

TEST_CASE("balls enclose the MPFR value at higher precision", "[numeric][ball]") {
    arb_ball x = from_rational<arb_ball>(rational(2, 7), context{128});
    arb_ball e = num::exp(x) * num::sqrt(x + from_int<arb_ball>(1, context{128}));
    mpfr_real xm = from_rational<mpfr_real>(rational(2, 7), context{512});
    mpfr_real em = num::exp(xm) * num::sqrt(xm + from_int<mpfr_real>(1, context{512}));
    REQUIRE(contains(e, em));
}

TEST_CASE("NaN in double comparisons is an error, not unknown", "[numeric][double]") {
    double nan = std::nan("");
    REQUIRE_THROWS_AS(compare(nan, 1.0), numeric_error);
}

TEST_CASE("MPFR division by zero is an error", "[numeric][mpfr]") {
    mpfr_real a = from_int<mpfr_real>(1, ctx), z = zero<mpfr_real>(ctx);
    REQUIRE_THROWS_AS(a / z, numeric_error);
}
