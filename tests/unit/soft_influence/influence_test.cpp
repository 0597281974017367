// Influence profiles (influence.hpp) on attention's incremental kernel against full forward
// passes: the certified double profile encloses the MPFR-512 one; automatic takes incremental
// for L <= 2 (with and without the a-posteriori bound) and naive for L = 3, where method
// incremental throws; automatic weighs the work of a few changes on a long input.
#include "soft_influence/influence.hpp"
#include "hand_model.hpp"
#include "../attention/incremental_models.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace attnprop;
using numeric::arb_ball;
using numeric::mpfr_real;
using numeric::rational;
using test::affine_model;
using test::bundled;
using test::close;
using test::hand_model;
using test::pow2_inverse;
using test::random_input;

namespace {

const numeric::context ctx256{256};
const numeric::context ctx512{512};

} // namespace

TEST_CASE("the certified double profile encloses the MPFR-512 profile",
          "[analysis][influence][incremental]") {
    const numeric::context ctx53{53};
    const auto m = model::parse_model(affine_model(5, 2, 1, 7), "affine.json");
    const auto x = random_input(m, 24, 5);
    INFO("input " << model::format_input(m.sigma, x));
    analysis::influence_options opt;
    opt.posterior = true;
    const auto pd = analysis::influence_profile_of(model::to_scalar<numeric::dinterval>(m, ctx53), m,
                                                   x, ctx53, opt);
    analysis::influence_options naive;
    naive.method = analysis::influence_method::naive;
    const auto pm = analysis::influence_profile_of(model::to_scalar<mpfr_real>(m, ctx512), m, x,
                                                   ctx512, naive);
    REQUIRE(pd.method == analysis::influence_method::incremental);
    REQUIRE(pd.pairs.size() == pm.pairs.size());
    for (std::size_t k = 0; k < pd.pairs.size(); ++k) {
        INFO("pair " << k);
        REQUIRE(pd.pairs[k].position == pm.pairs[k].position);
        REQUIRE(numeric::contains(pd.pairs[k].dy, pm.pairs[k].dy));
        REQUIRE(numeric::contains(*pd.pairs[k].dp_max, *pm.pairs[k].dp_max));
        REQUIRE(pd.pairs[k].posterior);
        // The a-posteriori bound bounds the change.
        REQUIRE(numeric::to_double(pm.pairs[k].dy) <= numeric::to_double(*pd.pairs[k].posterior));
    }
}


TEST_CASE("influence profiles: automatic takes incremental for L <= 2, naive for L = 3",
          "[analysis][influence][incremental]") {
    for (int layers = 1; layers <= 3; ++layers) {
        const auto m = model::parse_model(hand_model(layers), "hand.json");
        const auto mm = model::to_scalar<mpfr_real>(m, ctx256);
        const auto x = model::parse_input(m, "0110100");
        INFO("layers " << layers);
        analysis::influence_options naive;
        naive.method = analysis::influence_method::naive;
        const auto ref = analysis::influence_profile_of(mm, m, x, ctx256, naive);
        REQUIRE(ref.method == analysis::influence_method::naive);
        const auto aut = analysis::influence_profile_of(mm, m, x, ctx256);
        analysis::influence_options inc;
        inc.method = analysis::influence_method::incremental;
        if (layers == 3) {
            REQUIRE_FALSE(analysis::incremental_applies(m));
            REQUIRE(aut.method == analysis::influence_method::naive);
            REQUIRE_THROWS_AS(analysis::influence_profile_of(mm, m, x, ctx256, inc),
                              std::invalid_argument);
            continue;
        }
        REQUIRE(analysis::incremental_applies(m));
        REQUIRE(aut.method == analysis::influence_method::incremental);
        REQUIRE(aut.pairs.size() == ref.pairs.size());
        const rational tol = pow2_inverse(200);
        for (std::size_t k = 0; k < ref.pairs.size(); ++k) {
            INFO("pair " << k);
            REQUIRE(aut.pairs[k].position == ref.pairs[k].position);
            REQUIRE(close(aut.pairs[k].dy, ref.pairs[k].dy, tol));
            REQUIRE(close(*aut.pairs[k].dp_max, *ref.pairs[k].dp_max, tol));
        }
        // The a-posteriori bound: automatic takes incremental (posterior_cache from x's trace
        // and each change's states); the naive method computes it from two traces. Both are
        // sound, and the cached one is at most the naive one (its top cap reads row n only).
        const auto mb = model::to_scalar<arb_ball>(m, ctx256);
        analysis::influence_options post;
        post.posterior = true;
        const auto cached = analysis::influence_profile_of(mb, m, x, ctx256, post);
        REQUIRE(cached.method == analysis::influence_method::incremental);
        post.method = analysis::influence_method::naive;
        const auto traced = analysis::influence_profile_of(mb, m, x, ctx256, post);
        REQUIRE(traced.method == analysis::influence_method::naive);
        REQUIRE(cached.pairs.size() == traced.pairs.size());
        for (std::size_t k = 0; k < cached.pairs.size(); ++k) {
            INFO("pair " << k);
            REQUIRE(cached.pairs[k].posterior);
            REQUIRE(traced.pairs[k].posterior);
            const arb_ball& c = *cached.pairs[k].posterior;
            const arb_ball& t = *traced.pairs[k].posterior;
            REQUIRE(numeric::compare(cached.pairs[k].dy, c) != numeric::order::greater);
            REQUIRE(arf_cmp(arb_midref(c.raw()), arb_midref(t.raw())) <= 0);
        }
    }
}


TEST_CASE("automatic weighs the work: a few changes on a long uniform-layer-1 input go naive",
          "[analysis][influence][incremental]") {
    // cc-parity's layer 1 is uniform: a pass costs O(n), the incremental set-up O(n^2).
    const auto m = bundled("cc-parity");
    const auto mm = model::to_scalar<mpfr_real>(m, ctx256);
    const auto x = random_input(m, 2000, 99);
    analysis::influence_options few;
    few.positions = {0, 1998};
    const auto a = analysis::influence_profile_of(mm, m, x, ctx256, few);
    REQUIRE(a.method == analysis::influence_method::naive);
    few.method = analysis::influence_method::incremental;
    const auto b = analysis::influence_profile_of(mm, m, x, ctx256, few);
    REQUIRE(b.method == analysis::influence_method::incremental);
    const rational tol = pow2_inverse(200);
    for (std::size_t k = 0; k < a.pairs.size(); ++k) REQUIRE(close(a.pairs[k].dy, b.pairs[k].dy, tol));
    // The whole profile of a short input stays incremental.
    const auto y = random_input(m, 64, 98);
    REQUIRE(analysis::influence_profile_of(mm, m, y, ctx256).method ==
            analysis::influence_method::incremental);
}

