// The exact text of every user kind (numeric::exact_text, from_exact_text): a value crosses
// threads, processes and journals as text and comes back the very same value.
#include "numeric/kinds.hpp"
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

using namespace attnprop;

TEST_CASE("the exact text of a measured value gives back the very same value, in every kind",
          "[numeric][exact-text]") {
    using numeric::arb_ball;
    using numeric::dinterval;
    using numeric::mpfr_real;
    const double inf = std::numeric_limits<double>::infinity();
    auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
    for (double x : {0.0, -0.0, 1.0, -1.0 / 3, 0x1p-1074, 0x1.fffffffffffffp+1023, inf, -inf,
                     std::numeric_limits<double>::quiet_NaN()}) {
        INFO("double " << x);
        REQUIRE(same_bits(numeric::from_exact_text<double>(numeric::exact_text(x)), x));
    }
    for (auto [lo, hi] : {std::pair{-0.1, 0.30000000000000004}, std::pair{1.0 / 3, 1.0 / 3},
                          std::pair{-0.0, 0x1p-1074}, std::pair{-inf, inf}}) {
        INFO("interval [" << lo << ", " << hi << "]");
        const auto y = numeric::from_exact_text<dinterval>(numeric::exact_text(dinterval(lo, hi)));
        REQUIRE(same_bits(y.lo(), lo));
        REQUIRE(same_bits(y.hi(), hi));
    }
    for (long prec : {2L, 53L, 100L, 256L, 1000L}) {
        std::vector<mpfr_real> xs;
        for (int i = 0; i < 7; ++i) xs.emplace_back(prec);
        mpfr_set_si(xs[0].raw(), 1, MPFR_RNDN);
        mpfr_div_ui(xs[0].raw(), xs[0].raw(), 3, MPFR_RNDN);
        mpfr_const_pi(xs[1].raw(), MPFR_RNDN);
        mpfr_neg(xs[1].raw(), xs[1].raw(), MPFR_RNDN);
        mpfr_set_ui_2exp(xs[2].raw(), 3, -100000, MPFR_RNDN);
        mpfr_set_zero(xs[3].raw(), -1);
        mpfr_set_inf(xs[4].raw(), -1);
        mpfr_set_nan(xs[5].raw());
        mpfr_set_ui_2exp(xs[6].raw(), 5, 70000, MPFR_RNDN);
        for (const auto& x : xs) {
            const std::string t = numeric::exact_text(x);
            INFO("mpfr " << t);
            const auto y = numeric::from_exact_text<mpfr_real>(t);
            REQUIRE(mpfr_get_prec(y.raw()) == prec);
            if (mpfr_nan_p(x.raw())) {
                REQUIRE(mpfr_nan_p(y.raw()));
                continue;
            }
            REQUIRE(mpfr_equal_p(x.raw(), y.raw()));
            REQUIRE(mpfr_signbit(x.raw()) == mpfr_signbit(y.raw()));
        }
        std::vector<arb_ball> bs;
        for (int i = 0; i < 4; ++i) bs.emplace_back(prec);
        arb_set_si(bs[0].raw(), 1);
        arb_div_ui(bs[0].raw(), bs[0].raw(), 3, prec); // a radius from the rounding
        arb_const_pi(bs[1].raw(), prec);
        arb_mul_2exp_si(bs[1].raw(), bs[1].raw(), -5000);
        arb_zero_pm_inf(bs[2].raw());
        arb_set_si(bs[3].raw(), -7);
        for (const auto& b : bs) {
            const std::string t = numeric::exact_text(b);
            INFO("ball " << t);
            const auto y = numeric::from_exact_text<arb_ball>(t);
            REQUIRE(y.precision() == prec);
            REQUIRE(arb_equal(b.raw(), y.raw()));
        }
    }
    // Malformed texts are refused, never read as some value.
    for (const char* t : {"", "3ff000000000000", "3ff000000000000g", "3ff00000000000000"})
        REQUIRE_THROWS_AS(numeric::from_exact_text<double>(t), std::runtime_error);
    REQUIRE_THROWS_AS(numeric::from_exact_text<dinterval>("3ff0000000000000"), std::runtime_error);
    for (const char* t : {"", "53", " 0.1@0", "x53 0.1@0", "53 0.1z@0"})
        REQUIRE_THROWS_AS(numeric::from_exact_text<mpfr_real>(t), std::runtime_error);
    REQUIRE_THROWS_AS(numeric::from_exact_text<arb_ball>("128 not a dump"), std::runtime_error);
}

TEST_CASE("every user kind's exact text gives back the very same value", "[numeric][exact-text]") {
    // The hook of every kind of the list (kinds.hpp's UserKind), so a new kind is tested by it.
    [&]<class... S>(numeric::kind_list<S...>) {
        (([&] {
             INFO(numeric::scalar_traits<S>::name);
             for (long bits : {53L, 200L}) {
                 const numeric::context ctx{bits};
                 for (const auto& q : {numeric::rational(1, 3), numeric::rational(-7, 1024),
                                       numeric::rational(0)}) {
                     const S x = numeric::from_rational<S>(q, ctx);
                     const std::string t = numeric::exact_text(x);
                     const S y = numeric::from_exact_text<S>(t);
                     INFO(t);
                     REQUIRE(numeric::exact_text(y) == t);
                     REQUIRE(numeric::compare(x, y) != numeric::order::less);
                     REQUIRE(numeric::compare(x, y) != numeric::order::greater);
                 }
             }
             REQUIRE_THROWS_AS(numeric::from_exact_text<S>("not a value"), std::runtime_error);
         }()),
         ...);
    }(numeric::user_kinds{});
}
