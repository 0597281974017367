// Soft models that break one hypothesis of Claim 2 (src/gen/violating.cpp).
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

TEST_CASE("soft_model_violating breaks its hypothesis, and x_1 keeps its influence at every n",
          "[gen][soft]") {
    const numeric::context ctx128{128};
    for (auto h : {gen::violated_hypothesis::bounded_embeddings,
                   gen::violated_hypothesis::dot_product_scores,
                   gen::violated_hypothesis::lipschitz_updates}) {
        const std::string name = gen::to_string(h);
        for (std::uint64_t seed = 1; seed <= 10; ++seed) {
            const exact_model m =
                gen::soft_model_violating(h)(rc::Random(seed), static_cast<int>(seed * 10)).value();
            INFO(name << ", seed " << seed << "\n" << model::write_model(m));
            REQUIRE(m.name == "violating-" + name);
            bool named = false;
            for (const auto& r : analysis::check_hypotheses(m)) {
                if (r.name == name) {
                    named = true;
                    REQUIRE(certainly(!r.holds));
                }
                // The other families keep dot-product scores and linear values.
                if ((r.name == "dot-product-scores" && h != gen::violated_hypothesis::dot_product_scores) ||
                    r.name == "linear-values")
                    REQUIRE(certainly(r.holds));
            }
            REQUIRE(named);
            // Flipping x_1 moves y_n by at least 0.1 at n = 8 and at n = 256.
            const auto mm = model::to_scalar<numeric::mpfr_real>(m, ctx128);
            for (long n : {8L, 256L}) {
                model::input_sequence x(static_cast<std::size_t>(n), 0);
                for (long j = 0; j + 1 < n; ++j) x[static_cast<std::size_t>(j)] = (j * 7 + seed) % 3 == 0;
                x.back() = m.sigma.eos_index();
                auto flipped = x;
                flipped[0] = 1 - flipped[0];
                const auto a = attention::soft_forward(mm, x, ctx128).y;
                const auto b = attention::soft_forward(mm, flipped, ctx128).y;
                double change = 0;
                for (std::size_t c = 0; c < a.size(); ++c)
                    change = std::max(change, std::fabs(numeric::to_double(a[c] - b[c])));
                INFO("n " << n << ": change " << change);
                REQUIRE(change >= 0.1);
            }
        }
    }
}
