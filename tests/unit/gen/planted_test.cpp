// Soft models with a planted rare sensitive input (src/gen/planted.cpp): a one-symbol change
// moves y_n by about 2 sqrt 2 (2 in each coordinate) where the count of 1s crosses
// threshold * n and by almost nothing elsewhere; with eps = 0 the value does not exist at the
// tie; the generated models satisfy the hypotheses of Claim 2. Fixed seeds.
#include "gen/generators.hpp"

#include "attention/soft.hpp"
#include "soft_influence/hypotheses.hpp"

#include "gen_testing.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace attnprop;
using namespace attnprop::gen_testing;

namespace {

/// An input of n - 1 symbols with `ones` 1s first, eos appended.
model::input_sequence with_ones(const exact_model& m, long n, long ones) {
    model::input_sequence x(static_cast<std::size_t>(n - 1), m.sigma.index_of("0"));
    for (long j = 0; j < ones; ++j) x[static_cast<std::size_t>(j)] = m.sigma.index_of("1");
    x.push_back(m.sigma.eos_index());
    return x;
}

/// max_c |y_c(a) - y_c(b)| of the model in balls at 128 bits (midpoints).
double change(const exact_model& m, const model::input_sequence& a, const model::input_sequence& b) {
    const numeric::context c{128};
    const auto mb = model::to_scalar<numeric::arb_ball>(m, c);
    const auto ya = attention::soft_forward(mb, a, c).y, yb = attention::soft_forward(mb, b, c).y;
    double most = 0;
    for (std::size_t k = 0; k < ya.size(); ++k)
        most = std::max(most, std::fabs(numeric::approx_double(ya[k] - yb[k])));
    return most;
}

} // namespace

TEST_CASE("a planted tie: a large change only where the count of 1s crosses the threshold",
          "[gen]") {
    const auto m = gen::planted_tie_soft_model(rational(1, 4), rational(1, 1000000));
    const long n = 17; // b = #1/17 - 1/4 changes sign between 4 and 5 ones
    // Each coordinate of y = (b, -b)/sqrt(2 b^2 + eps) moves from about -1 to about 1.
    CHECK(change(m, with_ones(m, n, 4), with_ones(m, n, 5)) > 1.9);
    CHECK(change(m, with_ones(m, n, 8), with_ones(m, n, 9)) < 1e-3);
    for (const auto& r : analysis::check_hypotheses(m)) {
        INFO(r.name);
        CHECK(certainly(r.holds));
    }
    // eps = 0: at #1 = n / 4 the layer norm is at zero variance.
    const auto m0 = gen::planted_tie_soft_model(rational(1, 4), rational(0));
    const numeric::context c{128};
    const auto mb = model::to_scalar<numeric::arb_ball>(m0, c);
    CHECK_THROWS_AS(attention::soft_forward(mb, with_ones(m0, 16, 4), c), numeric::undefined_error);
}

TEST_CASE("generated planted ties: thresholds far from 1/2, eps > 0", "[gen]") {
    for (const auto& m : sample(gen::planted_tie_soft_model(), 41, 30)) {
        INFO("seed 41: " << show(m));
        REQUIRE(m.name.rfind("planted-tie-", 0) == 0);
        REQUIRE(m.attention == model::attention_kind::soft);
        REQUIRE_FALSE(model::has_singular_layer_norm(m));
    }
}
