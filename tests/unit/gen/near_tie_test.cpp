// The near-tie generator (src/gen/near_tie.cpp): double attends to another position than
// exact arithmetic on some short input of every model.
#include "gen/generators.hpp"

#include "attention/hard.hpp"
#include "attention/hard_exact.hpp"
#include "lang/languages.hpp"
#include "gen_testing.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace attnprop;
using namespace attnprop::gen_testing;

TEST_CASE("near-tie models make double attend to a different position", "[gen]") {
    const std::uint64_t seed = 505;
    for (const auto& m : sample(gen::near_tie_hard_model(), seed, 60)) {
        INFO("seed " << seed << ": " << show(m));
        std::string a;
        for (const auto& s : m.sigma.symbols) a += s;
        const auto dm = model::to_scalar<double>(m, ctx);
        bool differs = false;
        for (std::size_t len = 1; len <= 2 && !differs; ++len)
            for (const auto& w : lang::all_words(a, len)) {
                const auto x = model::parse_input(m, w);
                const auto exact = attention::hard_forward_exact(m, x, ctx, true);
                const auto dbl = attention::hard_forward(dm, x, ctx, true);
                if (exact.trace->choice != dbl.trace->choice) {
                    differs = true;
                    REQUIRE(numeric::exact_of(dbl.y[1]) != std::optional<rational>(exact.y[1]));
                    break;
                }
            }
        REQUIRE(differs);
    }
}
