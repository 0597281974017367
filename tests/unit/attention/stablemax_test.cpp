// StableMax attention (docs/theory.md, "Attention variants"): weights s(z_j) / sum_k s(z_k),
// s(x) = x + 1 for x >= 0 and 1 / (1 - x) for x < 0. The rows against a reference written by
// cases, exactly over the rationals (the weights sum to 1 exactly); MPFR within 1e-30, Arb
// balls and certified double intervals containing the exact weights (also for scores whose
// enclosure straddles 0), double within 1e-12; the soft pass of random StableMax models (one
// layer causally masked or not) against a plain reference pass, in every scalar kind. The
// negative control: softmax's weights, or s(x) = x + 1 everywhere, disagree with the reference.
#include "attention/soft.hpp"
#include "model/model_file.hpp"
#include "normaliser_models.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace attnprop;
using model::attention_kind;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;

namespace {

/// The reference: s by its two cases, then normalised.
std::vector<rational> reference_weights(const std::vector<rational>& z) {
    std::vector<rational> g;
    rational sum(0);
    for (const auto& x : z) {
        g.push_back(x >= 0 ? rational(x + 1) : rational(rational(1) / (1 - x)));
        sum += g.back();
    }
    for (auto& v : g) v /= sum;
    return g;
}

double distance(const mpfr_real& x, const rational& q) {
    return static_cast<double>(abs(*numeric::exact_of(x) - q));
}

} // namespace

TEST_CASE("stablemax: exact rows equal the reference by cases and sum to 1", "[attention][stablemax]") {
    const numeric::context ctx{64};
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto z = test::random_scores(rng, 1 + seed % 9, 40, 7);
        const auto w = attention::normalised_weights(attention_kind::stablemax, z, ctx);
        REQUIRE(w == reference_weights(z));
        rational sum(0);
        for (const auto& v : w) sum += v;
        REQUIRE(sum == 1);
    }
    // s(0) = 1, s(1) = 2, s(-1) = 1/2: weights 2/7, 4/7, 1/7.
    const std::vector<rational> z{rational(0), rational(1), rational(-1)};
    REQUIRE(attention::normalised_weights(attention_kind::stablemax, z, ctx) ==
            std::vector<rational>{rational(2, 7), rational(4, 7), rational(1, 7)});
}

TEST_CASE("stablemax: the reference rejects softmax and a one-case s (negative control)",
          "[attention][stablemax]") {
    const numeric::context ctx{128};
    const std::vector<rational> z{rational(-2), rational(1, 3), rational(3)};
    const auto exact = reference_weights(z);
    const auto soft = attention::normalised_weights(attention_kind::soft, test::convert<arb_ball>(z, ctx), ctx);
    bool softmax_outside = false;
    for (std::size_t j = 0; j < z.size(); ++j)
        softmax_outside = softmax_outside || !numeric::contains(soft[j], exact[j]);
    REQUIRE(softmax_outside);
    std::vector<rational> linear;
    rational sum(0);
    for (const auto& x : z) sum += x + 1;
    for (const auto& x : z) linear.push_back((x + 1) / sum);
    REQUIRE(linear != exact);
}

TEST_CASE("stablemax: MPFR, balls, intervals and double agree with the exact rows",
          "[attention][stablemax]") {
    const numeric::context ctx{256};
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto z = test::random_scores(rng, 2 + seed % 7, 40, 7);
        const auto exact = reference_weights(z);
        const auto wm = attention::normalised_weights(attention_kind::stablemax, test::convert<mpfr_real>(z, ctx), ctx);
        const auto wb = attention::normalised_weights(attention_kind::stablemax, test::convert<arb_ball>(z, ctx), ctx);
        const auto wi = attention::normalised_weights(attention_kind::stablemax, test::convert<dinterval>(z, ctx), ctx);
        const auto wd = attention::normalised_weights(attention_kind::stablemax, test::convert<double>(z, ctx), ctx);
        for (std::size_t j = 0; j < z.size(); ++j) {
            REQUIRE(distance(wm[j], exact[j]) < 1e-30);
            REQUIRE(numeric::contains(wb[j], exact[j]));
            REQUIRE(numeric::contains(wi[j], exact[j]));
            REQUIRE(std::fabs(wd[j] - numeric::approx_double(exact[j])) < 1e-12);
        }
    }
}

TEST_CASE("stablemax: an enclosure straddling 0 encloses s at both ends", "[attention][stablemax]") {
    const numeric::context ctx{128};
    // z_0 in [-1/2, 1/2]: s(z_0) in [2/3, 3/2]; the other score is 1 (s = 2).
    const arb_ball lo = numeric::from_rational<arb_ball>(rational(-1, 2), ctx);
    const arb_ball hi = numeric::from_rational<arb_ball>(rational(1, 2), ctx);
    const std::vector<arb_ball> z{numeric::hull(lo, hi), numeric::one<arb_ball>(ctx)};
    const auto w = attention::normalised_weights(attention_kind::stablemax, z, ctx);
    for (const rational& x : {rational(-1, 2), rational(0), rational(1, 2)}) {
        const auto e = reference_weights({x, rational(1)});
        INFO("z_0 = " << x);
        REQUIRE(numeric::contains(w[0], e[0]));
        REQUIRE(numeric::contains(w[1], e[1]));
    }
}

TEST_CASE("stablemax: the soft pass of random models equals the reference pass in every kind",
          "[attention][stablemax]") {
    test::check_every_kind("stablemax", reference_weights);
}

TEST_CASE("stablemax: the witness stablemax-first moves by exactly 3 / (n + 2 H_n), to n = 1024",
          "[attention][stablemax][witness]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/stablemax-first.json");
    REQUIRE(m.attention == attention_kind::stablemax);
    const numeric::context ctx{128};
    rational harmonic(0);
    std::size_t done = 0;
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u}) {
        INFO("n = " << n);
        for (; done < n; ++done) harmonic += rational(1, static_cast<long>(done + 1));
        model::input_sequence one(n, 0), zero(n, 0);
        one.front() = 1;
        one.back() = zero.back() = 2;
        const rational d = attention::soft_forward(m, one, ctx).y[0] -
                           attention::soft_forward(m, zero, ctx).y[0];
        REQUIRE(d == rational(3) / (rational(static_cast<long>(n)) + 2 * harmonic));
        REQUIRE(d * static_cast<long>(n) < 3); // O(1/n): n times the influence stays below 3
    }
    // Negative control: under sparsemax the same scores keep the influence at 1.
    auto sparse = m;
    sparse.attention = attention_kind::sparsemax;
    model::input_sequence one(64, 0), zero(64, 0);
    one.front() = 1;
    one.back() = zero.back() = 2;
    REQUIRE(attention::soft_forward(sparse, one, ctx).y[0] - attention::soft_forward(sparse, zero, ctx).y[0] == 1);
}
