// The a-posteriori pair bound of models with masked layers (posterior.hpp,
// detail::masked_posterior_bound; theory.md §2.5): at least the measured change of y_n^(L) for
// every position and replacement of random inputs of random soft models with layer 1, layer 2
// or both causally masked (Arb balls; seeds fixed and printed), finite wherever the hypotheses
// hold, and close to the change on the witness causal-prefix-mean (whose change at x_1 is
// H_n/n). Negative control: the same bound with every row reading every key (the unmasked
// weights) falls below the witness's change. The influence profile computes it per pair.
#include "soft_influence/posterior.hpp"
#include "attention/soft.hpp"
#include "gen/generators.hpp"
#include "model/model_file.hpp"
#include "soft_influence/influence.hpp"
#include "soft_influence/norms.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <cstdint>
#include <random>
#include <string>

using namespace attnprop;
using numeric::arb_ball;
using numeric::rational;

namespace {

const numeric::context ctx{128};

model::model<rational> witness() {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/causal-prefix-mean.json");
}

model::input_sequence random_input(const model::model<rational>& m, std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    model::input_sequence x(n);
    for (auto& s : x) s = static_cast<int>(rng() % static_cast<std::uint64_t>(m.sigma.eos_index()));
    x.back() = m.sigma.eos_index();
    return x;
}

attention::soft_trace<arb_ball> trace_of(const model::model<arb_ball>& m, const model::input_sequence& x) {
    return *attention::soft_forward(m, x, ctx, attention::soft_options{.trace = true}).trace;
}

/// ||y - y2||² as a ball (no square root of a ball that may contain 0).
arb_ball squared_change(const model::vec<arb_ball>& y, const model::vec<arb_ball>& y2) {
    arb_ball sq = numeric::zero<arb_ball>(ctx);
    for (std::size_t t = 0; t < y.size(); ++t) sq = sq + (y2[t] - y[t]) * (y2[t] - y[t]);
    return sq;
}

/// H_n / n as a ball.
arb_ball harmonic_over_n(long n) {
    arb_ball h = numeric::zero<arb_ball>(ctx);
    for (long i = 1; i <= n; ++i) h = h + numeric::one<arb_ball>(ctx) / numeric::from_int<arb_ball>(i, ctx);
    return h / numeric::from_int<arb_ball>(n, ctx);
}

} // namespace

TEST_CASE("the masked a-posteriori pair bound holds every change of random masked soft models",
          "[analysis][posterior][mask]") {
    gen::soft_bounds sb;
    sb.max_layers = 2;
    sb.max_heads = 2;
    sb.max_dim = 3;
    int finite_bounds = 0, pairs = 0;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        const int size = static_cast<int>((seed * 37) % (rc::kNominalSize + 1));
        auto m = gen::soft_model(sb)(rc::Random(seed), size).value();
        // Layer 1 alone, the top layer alone, then every layer masked.
        const std::size_t L = m.layers.size();
        for (int which = 0; which < 3; ++which) {
            for (std::size_t k = 0; k < L; ++k)
                m.layers[k].mask = which == 2 || (which == 0 && k == 0) || (which == 1 && k + 1 == L)
                                       ? model::mask_kind::causal
                                       : model::mask_kind::none;
            const auto mb = model::to_scalar<arb_ball>(m, ctx);
            for (std::size_t n : {2, 5, 12}) {
                const auto x = random_input(m, n, seed * 131 + n);
                const auto tx = trace_of(mb, x);
                for (std::size_t p = 0; p + 1 < n; ++p)
                    for (int a = 0; a < m.sigma.eos_index(); ++a) {
                        if (a == x[p]) continue;
                        auto x2 = x;
                        x2[p] = a;
                        const auto tx2 = trace_of(mb, x2);
                        const arb_ball b = analysis::posterior_bound(m, tx, tx2, p, ctx);
                        INFO("seed " << seed << " mask " << which << " n " << n << " p " << p
                                     << " a " << a << " bound " << analysis::upper_decimal(b)
                                     << "\nmodel: " << model::write_model(m));
                        REQUIRE(numeric::compare(squared_change(tx.y[L].back(), tx2.y[L].back()), b * b) !=
                                numeric::order::greater);
                        ++pairs;
                        if (numeric::finite(b)) ++finite_bounds;
                    }
            }
        }
    }
    REQUIRE(pairs > 100);
    REQUIRE(finite_bounds > pairs / 2);
}

TEST_CASE("the masked a-posteriori pair bound is close to the witness's change, and the unmasked "
          "weights fall below it (negative control)",
          "[analysis][posterior][mask]") {
    const auto m = witness();
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    for (long n : {16L, 64L, 200L}) {
        model::input_sequence x(static_cast<std::size_t>(n), 0);
        x.back() = m.sigma.eos_index();
        auto x2 = x;
        x2[0] = 1;
        const auto tx = trace_of(mb, x), tx2 = trace_of(mb, x2);
        const arb_ball change = numeric::sqrt(squared_change(tx.y.back().back(), tx2.y.back().back()));
        const arb_ball b = analysis::posterior_bound(m, tx, tx2, 0, ctx);
        const arb_ball loose = analysis::detail::masked_posterior_bound(m, tx, tx2, 0, ctx, true);
        INFO("n " << n << " change " << analysis::upper_decimal(change) << " bound "
                  << analysis::upper_decimal(b) << " unmasked weights " << analysis::upper_decimal(loose));
        // The change is a multiple of H_n/n (the witness's statement, docs/constructions.md).
        REQUIRE(numeric::compare(change, harmonic_over_n(n) / numeric::from_int<arb_ball>(2, ctx)) ==
                numeric::order::greater);
        REQUIRE(numeric::compare(change, b) != numeric::order::greater);
        // Within a factor 4 of the change at every n: the bound keeps the log factor, no more.
        REQUIRE(numeric::compare(b, change * numeric::from_int<arb_ball>(4, ctx)) == numeric::order::less);
        REQUIRE(numeric::compare(loose, change) == numeric::order::less);
    }
}

TEST_CASE("influence profiles of masked models give the a-posteriori bound per pair",
          "[analysis][posterior][mask]") {
    const auto m = witness();
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    const auto x = random_input(m, 24, 9);
    analysis::influence_options opt;
    opt.posterior = true;
    const auto prof = analysis::influence_profile_of(mb, m, x, ctx, opt);
    REQUIRE(prof.method == analysis::influence_method::naive);
    REQUIRE(prof.pairs.size() == 23);
    for (const auto& pr : prof.pairs) {
        INFO("position " << pr.position);
        REQUIRE(pr.posterior);
        REQUIRE(numeric::finite(*pr.posterior));
        REQUIRE(numeric::compare(pr.dy, *pr.posterior) != numeric::order::greater);
    }
}
