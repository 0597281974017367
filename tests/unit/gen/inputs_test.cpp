// Lengths and inputs of the property cases (src/gen/inputs.cpp).
#include "gen/generators.hpp"

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

TEST_CASE("lengths and inputs", "[gen]") {
    const auto ns = sample(gen::length(1000), 606, 400);
    std::size_t ladder = 0;
    for (long n : ns) {
        REQUIRE(n >= 1);
        REQUIRE(n <= 1000);
        ladder += (n & (n - 1)) == 0;
    }
    REQUIRE(ladder * 10 >= ns.size() * 7);
    REQUIRE(ladder < ns.size());
    REQUIRE(one(gen::length(1000), 1, 0) == 1);

    const auto m = one(gen::hard_model(), 607);
    std::size_t counts[36] = {};
    for (const auto& w : sample(gen::input(m.sigma, 201), 608, 20)) {
        REQUIRE(w.size() == 200);
        for (char c : w) {
            const int k = m.sigma.index_of(std::string(1, c));
            REQUIRE(k >= 0);
            ++counts[k];
        }
    }
    // Uniform at every size: each symbol about 4000 / |Σ| times.
    for (std::size_t k = 0; k < m.sigma.symbols.size(); ++k)
        REQUIRE(counts[k] * m.sigma.symbols.size() * 2 > 4000);
    REQUIRE(one(gen::input(m.sigma, 1), 609).empty());

    for (auto l : lang::all_languages()) {
        for (const auto& w : sample(gen::language_input(l, m.sigma, 12), 610, 30)) {
            REQUIRE(w.size() == 11);
            for (char c : w) REQUIRE(m.sigma.index_of(std::string(1, c)) >= 0);
        }
    }
    // 1DYCK's balanced sampler, mapped onto {0, 1}: balanced words of 0s and 1s occur.
    const model::alphabet binary{{"0", "1"}, "$"};
    std::size_t balanced = 0;
    for (const auto& w : sample(gen::language_input(lang::language::dyck1, binary, 11), 611, 40)) {
        std::string brackets;
        for (char c : w) brackets += c == '0' ? '(' : ')';
        balanced += lang::member(lang::language::dyck1, brackets);
    }
    REQUIRE(balanced >= 10);
}
