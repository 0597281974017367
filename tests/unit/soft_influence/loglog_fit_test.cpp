// The log-log slope fit against hand-computed cases.
#include "soft_influence/loglog_fit.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using attnprop::analysis::fit_loglog;

TEST_CASE("an exact power law is fitted exactly", "[loglog]") {
    std::vector<double> n{16, 32, 64, 128, 256}, y;
    for (double v : n) y.push_back(3.0 / v);
    auto f = fit_loglog(n, y);
    REQUIRE(f);
    REQUIRE(f->points == 5);
    REQUIRE(std::abs(f->slope + 1.0) < 1e-12);
    REQUIRE(std::abs(f->intercept - std::log(3.0)) < 1e-12);
    REQUIRE(f->slope_stderr < 1e-12);
}

TEST_CASE("the standard error matches the textbook formula", "[loglog]") {
    // log y = 0, 1, 0 at log n = 0, 1, 2: slope 0, residuals -1/3, 2/3, -1/3, rss = 2/3,
    // sxx = 2, se = sqrt((2/3) / 1 / 2) = 1/sqrt(3).
    const double e = std::exp(1.0);
    auto f = fit_loglog({1, e, e * e}, {1, e, 1});
    REQUIRE(f);
    REQUIRE(std::abs(f->slope) < 1e-12);
    REQUIRE(std::abs(f->slope_stderr - 1 / std::sqrt(3.0)) < 1e-12);
}

TEST_CASE("unusable points are skipped and too few give no fit", "[loglog]") {
    REQUIRE_FALSE(fit_loglog({8}, {1}));
    REQUIRE_FALSE(fit_loglog({8, 8, 8}, {1, 2, 3}));
    REQUIRE_FALSE(fit_loglog({8, 16}, {0, 1}));
    auto f = fit_loglog({8, 16, 32}, {0.5, 0, 0.125});
    REQUIRE(f);
    REQUIRE(f->points == 2);
    REQUIRE(std::abs(f->slope + 1.0) < 1e-12);
    REQUIRE_THROWS(fit_loglog({1, 2}, {1}));
}
