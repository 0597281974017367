// Hard models with controlled layer-1 score margins and the controls of the suite soft-hard
// (src/gen/margins.cpp): the family's attention kind and name, an inverse temperature in
// every head, and the margins themselves — the layer-1 scores of the integer families are σ
// times integers, so distinct score levels of a row differ by at least σ. Fixed seeds.
#include "gen/margins.hpp"

#include "attention/common.hpp"
#include "attention/hard.hpp"
#include "gen/generators.hpp"

#include "gen_testing.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace attnprop;
using namespace attnprop::gen_testing;

TEST_CASE("margin models: attention kind, name, inverse temperatures", "[gen]") {
    for (auto f : {gen::margin_family::exact_gap, gen::margin_family::shrinking_gap,
                   gen::margin_family::exact_ties}) {
        for (const auto& m : sample(gen::margin_model(f), 31, 40)) {
            INFO(gen::to_string(f) << " (seed 31): " << show(m));
            REQUIRE(m.name == std::string("margin-") + gen::to_string(f));
            REQUIRE(m.attention == (f == gen::margin_family::exact_ties
                                        ? model::attention_kind::average_hard
                                        : model::attention_kind::hard));
            REQUIRE(m.sigma.symbols.size() >= 2);
            REQUIRE(m.sigma.symbols.size() <= 3);
            REQUIRE(m.num_layers() <= 2);
            REQUIRE(m.out.is_recognizer());
            for (const auto& l : m.layers)
                for (const auto& h : l.heads) REQUIRE(h.score.beta.has_value());
        }
    }
}

TEST_CASE("integer margin families: layer-1 scores are the scale times integers", "[gen]") {
    for (auto f : {gen::margin_family::exact_gap, gen::margin_family::exact_ties}) {
        rc::Random random(32);
        for (const auto& m : sample(gen::margin_model(f), 33, 40)) {
            INFO(gen::to_string(f) << " (seed 33): " << show(m));
            const long n = 2 + static_cast<long>(random.next() % 30);
            const auto x = model::parse_input(m, one(gen::input(m.sigma, n), random.next()));
            const auto tr = *attention::hard_forward(m, x, ctx, true).trace;
            for (const auto& h : m.layers[0].heads) {
                std::vector<model::vec<rational>> keys;
                for (const auto& yj : tr.y[0]) keys.push_back(attention::key(h, yj, ctx));
                REQUIRE(h.score.scale_inv_sqrt == 1);
                const rational scale = h.score.scale_factor;
                for (const auto& yi : tr.y[0])
                    for (const auto& s : attention::hard_scores(h, yi, keys, true, ctx)) {
                        const rational q = s / scale;
                        REQUIRE(denominator(q) == 1);
                    }
            }
        }
    }
}

TEST_CASE("the controls of soft-hard: names and fixed inverse temperatures", "[gen]") {
    const std::pair<gen::control_family, const char*> families[] = {
        {gen::control_family::two_level, "control-two-level"},
        {gen::control_family::constant_beta, "control-constant-beta"},
        {gen::control_family::positional_gap, "control-positional-gap"}};
    for (const auto& [f, name] : families)
        for (const auto& m : sample(gen::control_model(f), 34, 12)) {
            INFO(name << " (seed 34): " << show(m));
            REQUIRE(m.name == name);
            REQUIRE(m.num_layers() == 1);
            REQUIRE(m.sigma.symbols.size() == 2);
            REQUIRE(m.layers[0].heads.size() == 1);
            REQUIRE(m.layers[0].heads[0].score.beta.has_value());
        }
}
