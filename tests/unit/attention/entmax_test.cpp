// 1.5-entmax attention (docs/theory.md, "Attention variants"): weights (z_j / 2 - tau)_+^2 with
// tau the root of sum_j (z_j / 2 - tau)_+^2 = 1. The rows against an independent reference
// (tau bracketed by bisection over exact rationals, f(tau) evaluated exactly: no sorting, no
// support, no square root); one-hot exactly when the top score leads by >= 2, not below; MPFR
// within 1e-30, Arb balls and certified double intervals containing the reference, also when
// enclosures overlap at the support's edge; double within 1e-12; the exact scalar refused; the
// soft pass of random models in every kind against Arb balls at 512 bits; the witness
// entmax15-first. Negative controls: softmax's and sparsemax's weights are outside the
// reference, and the witness read as softmax vanishes.
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

/// f(tau) = sum_j (z_j / 2 - tau)_+^2, exactly.
rational f(const std::vector<rational>& z, const rational& tau) {
    rational s(0);
    for (const auto& x : z) {
        const rational r = positive_part(x / 2 - tau);
        s += r * r;
    }
    return s;
}

/// Each weight's bracket [lo, hi] from tau bracketed by 400 bisections (or found exactly, a
/// point where f is 1): f is decreasing, f(top/2 - 1) >= 1 (the top term alone is 1) and
/// f(top/2) = 0.
struct bracket {
    std::vector<rational> lo, hi;
};
bracket reference_weights(const std::vector<rational>& z) {
    rational top = z.front();
    for (const auto& x : z) top = std::max(top, x);
    rational a = top / 2 - 1, b = top / 2; // f(a) >= 1 > f(b)
    for (int it = 0; it < 400 && f(z, a) != 1; ++it) {
        const rational m = (a + b) / 2;
        (f(z, m) >= 1 ? a : b) = m;
    }
    if (f(z, a) == 1) b = a; // tau found exactly (a one-hot row: tau = top/2 - 1)
    bracket out;
    for (const auto& x : z) {
        const rational hi = positive_part(x / 2 - a), lo = positive_part(x / 2 - b);
        out.lo.push_back(lo * lo);
        out.hi.push_back(hi * hi);
    }
    return out;
}

/// x lies within tol of the bracket [lo, hi].
bool near(const rational& x, const rational& lo, const rational& hi, const rational& tol) {
    return x >= lo - tol && x <= hi + tol;
}

} // namespace

TEST_CASE("entmax15: its row in the registry", "[attention][entmax]") {
    const auto& a = model::info(attention_kind::entmax15);
    REQUIRE(a.name == "entmax15");
    REQUIRE(a.weights == model::weighting::normaliser);
    REQUIRE_FALSE(a.exact); // the threshold needs a square root
    REQUIRE(a.needs == "1.5-entmax's threshold needs a square root");
    REQUIRE(a.influence == model::influence_law::not_vanishing);
    REQUIRE_FALSE(a.soft_influence);
    REQUIRE_FALSE(a.hard_limit);
    REQUIRE_FALSE(attention::softmax_rows(attention_kind::entmax15));
}

TEST_CASE("entmax15: rows in every kind agree with the bisection reference",
          "[attention][entmax]") {
    const numeric::context ctx{256};
    const rational e30 = rational(1, 1) / rational(boost::multiprecision::pow(boost::multiprecision::mpz_int(10), 30));
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto z = test::random_scores(rng, 1 + seed % 11, 12, 6);
        const auto ref = reference_weights(z);
        const auto wm = attention::normalised_weights(attention_kind::entmax15, test::convert<mpfr_real>(z, ctx), ctx);
        const auto wb = attention::normalised_weights(attention_kind::entmax15, test::convert<arb_ball>(z, ctx), ctx);
        const auto wi = attention::normalised_weights(attention_kind::entmax15, test::convert<dinterval>(z, ctx), ctx);
        const auto wd = attention::normalised_weights(attention_kind::entmax15, test::convert<double>(z, ctx), ctx);
        arb_ball sum = numeric::zero<arb_ball>(ctx);
        for (std::size_t j = 0; j < z.size(); ++j) {
            INFO("j = " << j);
            REQUIRE(near(*numeric::exact_of(wm[j]), ref.lo[j], ref.hi[j], e30));
            REQUIRE(numeric::contains(wb[j], ref.lo[j]));
            REQUIRE(numeric::contains(wb[j], ref.hi[j]));
            REQUIRE(numeric::contains(wi[j], ref.lo[j]));
            REQUIRE(numeric::contains(wi[j], ref.hi[j]));
            REQUIRE(std::fabs(wd[j] - numeric::approx_double(ref.lo[j])) < 1e-12);
            // Tight: the ball's radius is that of the square root, not of an undecided support.
            REQUIRE(numeric::approx_double(numeric::abs(wb[j] - numeric::from_rational<arb_ball>(ref.lo[j], ctx))) < 1e-60);
            sum = sum + wb[j];
        }
        REQUIRE(numeric::contains(sum, rational(1)));
    }
}

TEST_CASE("entmax15: one-hot exactly from a lead of 2, not below; ties share; the exact scalar "
          "is refused", "[attention][entmax]") {
    using V = std::vector<rational>;
    const numeric::context ctx{256};
    auto weights = [&](const V& z) {
        return attention::normalised_weights(attention_kind::entmax15, test::convert<mpfr_real>(z, ctx), ctx);
    };
    auto exact = [](const mpfr_real& x) { return *numeric::exact_of(x); };
    // Lead exactly 2: tau = u_(2), one-hot (exact in MPFR: the square root is of 1).
    auto w = weights(V{rational(0), rational(2), rational(-1)});
    REQUIRE(exact(w[0]) == 0);
    REQUIRE(exact(w[1]) == 1);
    REQUIRE(exact(w[2]) == 0);
    // Lead just below 2: the second key keeps a positive weight.
    w = weights(V{rational(199, 100), rational(0)});
    REQUIRE(exact(w[1]) > 0);
    REQUIRE(exact(w[0]) < 1);
    // Two equal scores: (u - tau)^2 = 1/2 each, tau = u - 1/sqrt(2).
    w = weights(V{rational(3), rational(3)});
    REQUIRE(std::fabs(numeric::approx_double(exact(w[0])) - 0.5) < 1e-60);
    REQUIRE(exact(w[0]) == exact(w[1]));
    // Two tied maxima and a third far below: the third is out.
    w = weights(V{rational(1), rational(1), rational(-5)});
    REQUIRE(exact(w[2]) == 0);
    REQUIRE(exact(w[0]) == exact(w[1]));
    // The exact scalar cannot take the square root.
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::entmax15, V{rational(0), rational(1)}, ctx),
                      precondition_error);
    // Negative controls: softmax's and sparsemax's weights differ from the reference.
    const V z{rational(1), rational(0), rational(-1, 2)};
    const auto ref = reference_weights(z);
    const auto soft = attention::normalised_weights(attention_kind::soft, test::convert<arb_ball>(z, ctx), ctx);
    const auto sparse = attention::normalised_weights(attention_kind::sparsemax, z, ctx);
    REQUIRE_FALSE(numeric::contains(soft[0], ref.lo[0]));
    REQUIRE_FALSE((sparse[0] >= ref.lo[0] && sparse[0] <= ref.hi[0]));
}

TEST_CASE("entmax15: overlapping enclosures at the support's edge enclose every choice",
          "[attention][entmax]") {
    const numeric::context ctx{128};
    // z_0 in [2 - e, 2 + e], z_1 = 0 (a lead of 2: the support's edge), z_2 in [-e, e].
    const rational e = rational(1, 1 << 20);
    auto around = [&](const rational& c) {
        return numeric::hull(numeric::from_rational<arb_ball>(c - e, ctx),
                             numeric::from_rational<arb_ball>(c + e, ctx));
    };
    const std::vector<arb_ball> z{around(rational(2)), numeric::zero<arb_ball>(ctx), around(rational(0))};
    const auto w = attention::normalised_weights(attention_kind::entmax15, z, ctx);
    for (const rational& a : {rational(2) - e, rational(2), rational(2) + e})
        for (const rational& c : {-e, rational(0), e}) {
            const auto ref = reference_weights({a, rational(0), c});
            INFO("z = (" << a << ", 0, " << c << ")");
            for (std::size_t j = 0; j < 3; ++j) {
                REQUIRE(numeric::contains(w[j], ref.lo[j]));
                REQUIRE(numeric::contains(w[j], ref.hi[j]));
            }
        }
    // Negative control: the weights at a point far off are outside (the enclosure is tight).
    const auto far = reference_weights({rational(1), rational(0), rational(0)});
    REQUIRE_FALSE(numeric::contains(w[0], far.lo[0]));
}

TEST_CASE("entmax15: the soft pass of random models agrees across the kinds",
          "[attention][entmax]") {
    const numeric::context ctx{256}, ref_ctx{512};
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto m = model::parse_model(test::random_normaliser_model(rng, "entmax15", 3, seed % 2 == 0),
                                          "entmax15-test");
        const auto x = test::random_binary_input(rng, 3 + seed % 6);
        REQUIRE_FALSE(model::exact_blockers(m).empty());
        REQUIRE_THROWS_AS(attention::soft_forward(m, x, ctx), precondition_error);
        const auto ref = attention::soft_forward(model::to_scalar<arb_ball>(m, ref_ctx), x, ref_ctx).y;
        test::require_passes_match(m, x, ref, 1e-100, ctx);
    }
}

TEST_CASE("entmax15: the witness entmax15-first keeps one symbol's influence at 1, certified, to "
          "n = 1500", "[attention][entmax][witness]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/entmax15-first.json");
    REQUIRE(m.attention == attention_kind::entmax15);
    const numeric::context ctx{128};
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    const arb_ball half = numeric::from_rational<arb_ball>(rational(1, 2), ctx);
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u, 1500u}) {
        INFO("n = " << n);
        model::input_sequence one(n, 0), zero(n, 0);
        one.front() = 1;
        one.back() = zero.back() = 2;
        const arb_ball d = attention::soft_forward(mb, one, ctx).y[0] - attention::soft_forward(mb, zero, ctx).y[0];
        REQUIRE(numeric::contains(d, rational(1)));
        REQUIRE(numeric::compare(d, half) == numeric::order::greater); // Theta(1), certified
        // Negative control: read as softmax it moves by less than 1/2 from n = 128 on.
        if (n >= 128) {
            auto soft = mb;
            soft.attention = attention_kind::soft;
            const arb_ball ds = attention::soft_forward(soft, one, ctx).y[0] -
                                attention::soft_forward(soft, zero, ctx).y[0];
            REQUIRE(numeric::compare(ds, half) == numeric::order::less);
        }
    }
}
