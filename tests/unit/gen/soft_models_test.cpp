// The soft model generator (src/gen/soft_models.cpp): bounds, coverage of layer norms,
// activations and sinusoids, the hypotheses of Claim 2 and tight Arb balls. Every sample and
// property runs from a fixed seed, printed with each failure.
#include "gen/generators.hpp"

#include "attention/soft.hpp"
#include "soft_influence/hypotheses.hpp"
#include "gen_testing.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace attnprop;
using namespace attnprop::gen_testing;

TEST_CASE("soft generators respect their bounds", "[gen]") {
    const gen::soft_bounds sb{1, 1, 2, 2, false, false, false};
    for (const auto& m : sample(gen::soft_model(sb), 8, 80)) {
        INFO(show(m));
        REQUIRE(m.num_layers() == 1);
        REQUIRE(max_heads(m) == 1);
        REQUIRE(m.d <= 2);
        const std::string cls = gen::model_class(m);
        REQUIRE(cls.find("tanh") == std::string::npos);
        REQUIRE(cls.find("gelu") == std::string::npos);
        REQUIRE(cls.find(" ln") == std::string::npos);
    }
}

TEST_CASE("the soft distribution covers layer norms, every activation and sinusoids", "[gen]") {
    std::size_t lns = 0, tanhs = 0, gelus = 0, sins = 0;
    for (const auto& m : sample(gen::soft_model(), 12, 100)) {
        const std::string c = gen::model_class(m);
        lns += c.find(" ln") != std::string::npos;
        tanhs += c.find("tanh") != std::string::npos;
        gelus += c.find("gelu") != std::string::npos;
        sins += c.find("sin") != std::string::npos;
    }
    INFO("ln " << lns << ", tanh " << tanhs << ", gelu " << gelus << ", sin " << sins
               << " of 100 soft (seed 12)");
    REQUIRE(lns >= 10);
    REQUIRE(tanhs >= 10);
    REQUIRE(gelus >= 5); // gelu is drawn last: rarer at the small sizes of the sample
    REQUIRE(sins >= 10);
}

TEST_CASE("soft models satisfy the hypotheses of Claim 2", "[gen]") {
    for (const auto& m : sample(gen::soft_model(), 13, 60)) {
        INFO("seed 13: " << show(m));
        for (const auto& r : analysis::check_hypotheses(m)) {
            INFO(r.name);
            REQUIRE(certainly(r.holds));
        }
    }
}

TEST_CASE("soft models evaluate in Arb balls with small radii", "[gen]") {
    require_property("soft_forward<arb_ball> gives finite, tight balls", 303, 80, [] {
        const auto m = *gen::soft_model();
        const long n = *gen::length(32);
        const auto x = model::parse_input(m, *gen::input(m.sigma, n));
        const auto mb = model::to_scalar<numeric::arb_ball>(m, ctx);
        const auto out = attention::soft_forward(mb, x, ctx);
        RC_ASSERT(out.y.size() == m.d);
        for (const auto& v : out.y) {
            RC_ASSERT(numeric::is_finite(v));
            RC_ASSERT(numeric::radius_as_double(v) < 1e-40);
        }
        const auto p = attention::softmax(attention::readout_logits(mb.out, out.y, ctx), ctx);
        for (const auto& v : p) {
            RC_ASSERT(numeric::is_finite(v));
            RC_ASSERT(numeric::radius_as_double(v) < 1e-40);
        }
    });
}
