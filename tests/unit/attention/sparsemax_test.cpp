// Sparsemax attention (docs/theory.md, "Attention variants"): the Euclidean projection of the
// scores onto the simplex, max(z_j - tau, 0) with tau the root of sum_j max(z_j - tau, 0) = 1.
// The rows against an independent reference (every candidate tau_k = (top k sum - 1) / k is
// tried, and the one with sum_j max(z_j - tau_k, 0) = 1 exactly is kept), exactly over the
// rationals; exact ties at the threshold; one-hot exactly when the top score leads by >= 1;
// MPFR within 1e-30, Arb balls and certified double intervals containing the exact weights
// (also when enclosures overlap at a tie, where the support is not decided), double within
// 1e-12; the soft pass of random sparsemax models (one layer causally masked or not) against a
// plain reference pass in every kind. Negative controls: softmax's weights and a threshold
// off by the midpoint trick's widening are rejected.
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

rational positive_part(const rational& x) { return x > 0 ? x : rational(0); }

/// The reference: the tau among the candidates tau_k whose weights sum to exactly 1.
std::vector<rational> reference_weights(const std::vector<rational>& z) {
    std::vector<rational> sorted = z;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    rational top(0);
    for (std::size_t k = 1; k <= sorted.size(); ++k) {
        top += sorted[k - 1];
        const rational tau = (top - 1) / k;
        rational sum(0);
        for (const auto& x : z) sum += positive_part(x - tau);
        if (sum == 1) {
            std::vector<rational> w;
            for (const auto& x : z) w.push_back(positive_part(x - tau));
            return w;
        }
    }
    FAIL("no candidate threshold sums to 1");
    return {};
}

double distance(const mpfr_real& x, const rational& q) {
    return static_cast<double>(abs(*numeric::exact_of(x) - q));
}

std::vector<rational> sparsemax(const std::vector<rational>& z) {
    return attention::normalised_weights(attention_kind::sparsemax, z, numeric::context{64});
}

} // namespace

TEST_CASE("sparsemax: exact rows equal the reference and sum to 1", "[attention][sparsemax]") {
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto z = test::random_scores(rng, 1 + seed % 11, 12, 6);
        const auto w = sparsemax(z);
        REQUIRE(w == reference_weights(z));
        rational sum(0);
        for (const auto& v : w) sum += v;
        REQUIRE(sum == 1);
    }
}

TEST_CASE("sparsemax: exact ties at the threshold, and one-hot from a lead of 1",
          "[attention][sparsemax]") {
    using V = std::vector<rational>;
    // Two tied maxima share the weight; the third is out.
    REQUIRE(sparsemax(V{rational(1), rational(1), rational(0)}) == V{rational(1, 2), rational(1, 2), rational(0)});
    // Two tied scores exactly at the threshold: z = (2, 1, 1), tau = 1, both get weight 0.
    REQUIRE(sparsemax(V{rational(1), rational(2), rational(1)}) == V{rational(0), rational(1), rational(0)});
    // A support of two: z = (1, 1/2, 0), tau = (3/2 - 1) / 2 = 1/4.
    REQUIRE(sparsemax(V{rational(1), rational(1, 2), rational(0)}) == V{rational(3, 4), rational(1, 4), rational(0)});
    // Lead exactly 1: one-hot (the second score sits at tau = 0).
    REQUIRE(sparsemax(V{rational(0), rational(1), rational(0)}) == V{rational(0), rational(1), rational(0)});
    // Lead just below 1: not one-hot.
    REQUIRE(sparsemax(V{rational(0), rational(99, 100)}) == V{rational(1, 200), rational(199, 200)});
    // Every score equal: uniform.
    REQUIRE(sparsemax(V(5, rational(7, 3))) == V(5, rational(1, 5)));
    // Negative control: softmax is never one-hot.
    const numeric::context ctx{128};
    const auto soft = attention::normalised_weights(attention_kind::soft,
                                                    test::convert<arb_ball>(V{rational(0), rational(1)}, ctx), ctx);
    REQUIRE_FALSE(numeric::contains(soft[0], rational(0)));
}

TEST_CASE("sparsemax: MPFR, balls, intervals and double agree with the exact rows",
          "[attention][sparsemax]") {
    const numeric::context ctx{256};
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto z = test::random_scores(rng, 2 + seed % 9, 12, 6);
        const auto exact = reference_weights(z);
        const auto wm = attention::normalised_weights(attention_kind::sparsemax, test::convert<mpfr_real>(z, ctx), ctx);
        const auto wb = attention::normalised_weights(attention_kind::sparsemax, test::convert<arb_ball>(z, ctx), ctx);
        const auto wi = attention::normalised_weights(attention_kind::sparsemax, test::convert<dinterval>(z, ctx), ctx);
        const auto wd = attention::normalised_weights(attention_kind::sparsemax, test::convert<double>(z, ctx), ctx);
        for (std::size_t j = 0; j < z.size(); ++j) {
            REQUIRE(distance(wm[j], exact[j]) < 1e-30);
            REQUIRE(numeric::contains(wb[j], exact[j]));
            REQUIRE(numeric::contains(wi[j], exact[j]));
            REQUIRE(std::fabs(wd[j] - numeric::approx_double(exact[j])) < 1e-12);
            // Tight: the ball's radius is that of the conversion, not of a decided support.
            REQUIRE(numeric::approx_double(numeric::abs(wb[j] - numeric::from_rational<arb_ball>(exact[j], ctx))) < 1e-60);
        }
    }
}

TEST_CASE("sparsemax: overlapping enclosures at a tie enclose every choice of the support",
          "[attention][sparsemax]") {
    const numeric::context ctx{128};
    // z_0 in [1 - e, 1 + e], z_1 = 1, z_2 in [-e, e] with e = 2^-20: the support is {0, 1} or
    // {0, 1, 2} depending on the point; the weights enclose the exact ones at the ends.
    const rational e = rational(1, 1 << 20);
    auto around = [&](const rational& c) {
        return numeric::hull(numeric::from_rational<arb_ball>(c - e, ctx),
                             numeric::from_rational<arb_ball>(c + e, ctx));
    };
    const std::vector<arb_ball> z{around(rational(1)), numeric::one<arb_ball>(ctx), around(rational(0))};
    const auto w = attention::normalised_weights(attention_kind::sparsemax, z, ctx);
    for (const rational& a : {rational(1) - e, rational(1), rational(1) + e})
        for (const rational& c : {-e, rational(0), e}) {
            const auto ref = reference_weights({a, rational(1), c});
            INFO("z = (" << a << ", 1, " << c << ")");
            for (std::size_t j = 0; j < 3; ++j) REQUIRE(numeric::contains(w[j], ref[j]));
        }
    // Negative control: the exact weights at another point are outside (the enclosure is tight).
    const auto far = reference_weights({rational(2), rational(1), rational(0)});
    REQUIRE_FALSE(numeric::contains(w[0], far[0]));
}

TEST_CASE("sparsemax: the soft pass of random models equals the reference pass in every kind",
          "[attention][sparsemax]") {
    test::check_every_kind("sparsemax", reference_weights);
}

TEST_CASE("sparsemax: the witness sparsemax-first keeps one symbol's influence at 1, exactly, to "
          "n = 1024", "[attention][sparsemax][witness]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/sparsemax-first.json");
    REQUIRE(m.attention == attention_kind::sparsemax);
    const numeric::context ctx{128};
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u, 1500u}) {
        INFO("n = " << n);
        model::input_sequence one(n, 0), zero(n, 0);
        one.front() = 1;
        one.back() = zero.back() = 2;
        const auto y1 = attention::soft_forward(m, one, ctx).y;
        const auto y0 = attention::soft_forward(m, zero, ctx).y;
        REQUIRE(y1[0] - y0[0] == 1); // Theta(1): the lemma's O(1/n) fails
        // Negative control: the same model under softmax, in Arb balls, moves by less than 1/2
        // from n = 16 on (the O(1/n) of the lemma).
        if (n >= 16) {
            auto soft = model::to_scalar<arb_ball>(m, ctx);
            soft.attention = attention_kind::soft;
            const auto d = attention::soft_forward(soft, one, ctx).y[0] -
                           attention::soft_forward(soft, zero, ctx).y[0];
            REQUIRE(numeric::compare(d, numeric::from_rational<arb_ball>(rational(1, 2), ctx)) ==
                    numeric::order::less);
        }
    }
}
