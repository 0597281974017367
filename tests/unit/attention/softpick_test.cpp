// Softpick attention (docs/theory.md §2.6): weights relu(e^(z_j) - 1) / (sum_k |e^(z_k) - 1| +
// eps), eps = 10^-8. The rows against a reference that decides each score's sign exactly over
// the rationals (e^z - 1 above 0, 0 at 0, 1 - e^z below) in Arb balls at 512 bits, in every
// scalar kind with exp; a row without a positive score weighs every key by 0 (defined); the
// weights sum to at most 1 and are not shift invariant; the exact scalar refused; the soft pass
// of random models (causal masks, heads of constant scores) against a plain reference pass in
// Arb balls at 512 bits; the witness softpick-any, decided by certified enclosures. Negative
// controls: softmax's weights are outside the reference, the mean of the values (a normaliser's
// shortcut for constant scores) is not softpick's row, the witness read as softmax vanishes,
// and the witness with every score 1 away from 0 vanishes as O(1/n).
#include "attention/soft.hpp"
#include "model/model_file.hpp"
#include "normaliser_models.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <sstream>

using namespace attnprop;
using model::attention_kind;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;

namespace {

const numeric::context ref_ctx{512};

arb_ball ball(const rational& q) { return numeric::from_rational<arb_ball>(q, ref_ctx); }

const rational eps = rational(1, 100000000);

/// The reference weights of rational scores: each score's sign decided exactly, e^z - 1 and
/// |e^z - 1| spelt by that sign (never relu or abs of an enclosure).
std::vector<arb_ball> reference_weights(const std::vector<rational>& z) {
    std::vector<arb_ball> num;
    arb_ball den = ball(eps);
    for (const auto& x : z) {
        if (x > 0) {
            const arb_ball t = numeric::exp(ball(x)) - ball(rational(1));
            num.push_back(t);
            den = den + t;
        } else {
            num.push_back(ball(rational(0)));
            if (x < 0) den = den + (ball(rational(1)) - numeric::exp(ball(x)));
        }
    }
    for (auto& w : num) w = w / den;
    return num;
}

rational mid(const arb_ball& x) { return *numeric::exact_of(numeric::representative(x)); }

/// y_n^(L) by plain loops in Arb balls at 512 bits (test::reference_output_in): weights
/// (|t| + t) / 2 / (sum |t| + eps) with t = e^s - 1.
model::vec<arb_ball> reference_output(const model::model<rational>& mr, const model::input_sequence& x) {
    const auto weights = [](const std::vector<arb_ball>& s, const model::layer<arb_ball>&, std::size_t) {
        std::vector<arb_ball> t, w;
        arb_ball den = ball(eps);
        for (const auto& v : s) {
            t.push_back(numeric::exp(v) - ball(rational(1)));
            den = den + numeric::abs(t.back());
        }
        for (const auto& v : t) w.push_back((numeric::abs(v) + v) / ball(rational(2)) / den);
        return w;
    };
    return test::reference_output_in<arb_ball>(model::to_scalar<arb_ball>(mr, ref_ctx), x, weights, ref_ctx);
}

/// The text of a bundled model.
std::string model_text(const std::string& name) {
    std::ifstream f(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

/// `text` with its first occurrence of `from` replaced by `to` (which must occur).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("softpick: its row in the registry", "[attention][softpick]") {
    const auto& a = model::info(attention_kind::softpick);
    REQUIRE(a.name == "softpick");
    REQUIRE(a.weights == model::weighting::normaliser);
    REQUIRE_FALSE(a.sums_to_one); // no mean-of-values shortcut
    REQUIRE_FALSE(a.exact);
    REQUIRE(a.needs == "softpick needs exp");
    REQUIRE(a.influence == model::influence_law::not_vanishing);
    REQUIRE_FALSE(a.soft_influence);
    REQUIRE_FALSE(a.hard_limit);
    REQUIRE_FALSE(a.incremental);
    REQUIRE_FALSE(attention::softmax_rows(attention_kind::softpick));
    REQUIRE(model::parse_attention_kind("softpick") == attention_kind::softpick);
}

TEST_CASE("softpick: rows in every kind with exp agree with the sign-split reference",
          "[attention][softpick]") {
    const numeric::context ctx{256};
    for (std::uint64_t seed = 1; seed <= 60; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        // Scores in [-4, 4] with small denominators: exact zeros and ties occur.
        const auto z = test::random_scores(rng, 1 + seed % 11, 8, 2);
        const auto ref = reference_weights(z);
        const auto wm = attention::normalised_weights(attention_kind::softpick, test::convert<mpfr_real>(z, ctx), ctx);
        const auto wb = attention::normalised_weights(attention_kind::softpick, test::convert<arb_ball>(z, ctx), ctx);
        const auto wi = attention::normalised_weights(attention_kind::softpick, test::convert<dinterval>(z, ctx), ctx);
        const auto wd = attention::normalised_weights(attention_kind::softpick, test::convert<double>(z, ctx), ctx);
        arb_ball sum = ball(rational(0));
        for (std::size_t j = 0; j < z.size(); ++j) {
            INFO("j = " << j << ", z_j = " << z[j]);
            REQUIRE(numeric::radius_as_double(ref[j]) < 1e-100);
            const rational r = mid(ref[j]);
            REQUIRE(static_cast<double>(abs(*numeric::exact_of(wm[j]) - r)) < 1e-60);
            REQUIRE(numeric::contains(wb[j], r));
            REQUIRE(numeric::contains(wb[j] - ref[j], rational(0)));
            REQUIRE(numeric::contains(wi[j], r));
            REQUIRE(std::fabs(wd[j] - numeric::approx_double(r)) < 1e-12);
            // A key of score at most 0 weighs exactly 0 (MPFR and double: the exact 0).
            if (z[j] <= 0) {
                REQUIRE(*numeric::exact_of(wm[j]) == 0);
                REQUIRE(wd[j] == 0.0);
            }
            sum = sum + ref[j];
        }
        // The weights sum to at most 1 (below, by eps / den at least).
        REQUIRE(numeric::compare(sum, ball(rational(1))) == numeric::order::less);
    }
}

TEST_CASE("softpick: rows of no positive score are all 0 (defined); not shift invariant; the "
          "exact scalar is refused", "[attention][softpick]") {
    using V = std::vector<rational>;
    const numeric::context ctx{256};
    auto weights = [&](const V& z) {
        return attention::normalised_weights(attention_kind::softpick, test::convert<mpfr_real>(z, ctx), ctx);
    };
    auto exact = [](const mpfr_real& x) { return *numeric::exact_of(x); };
    // Every score 0: the denominator is eps alone, every weight exactly 0.
    for (const auto& w : weights(V(5, rational(0)))) REQUIRE(exact(w) == 0);
    // Every score negative: every weight exactly 0, in every kind.
    const V neg{rational(-1), rational(-3, 2), rational(-7)};
    for (const auto& w : weights(neg)) REQUIRE(exact(w) == 0);
    for (const auto& w : attention::normalised_weights(attention_kind::softpick, test::convert<double>(neg, ctx), ctx))
        REQUIRE(w == 0.0);
    for (const auto& w : attention::normalised_weights(attention_kind::softpick, test::convert<arb_ball>(neg, ctx), ctx))
        REQUIRE(numeric::contains(w, rational(0)));
    // One positive score among zeros: (e^s - 1) / (e^s - 1 + eps), within 10^-8 of 1.
    const auto one = weights(V{rational(0), rational(1), rational(0)});
    REQUIRE(exact(one[0]) == 0);
    REQUIRE(exact(one[2]) == 0);
    REQUIRE(exact(one[1]) < 1);
    REQUIRE(exact(one[1]) > 1 - rational(1, 100000000));
    // Not shift invariant: z and z + 1 have different weights (softmax's are the same).
    const V z{rational(1, 2), rational(0), rational(-1, 2)};
    const V z1{rational(3, 2), rational(1), rational(1, 2)};
    const auto a = weights(z), b = weights(z1);
    REQUIRE(exact(a[1]) == 0);
    REQUIRE(exact(b[1]) > 0);
    const auto sa = attention::normalised_weights(attention_kind::soft, test::convert<arb_ball>(z, ctx), ctx);
    const auto sb = attention::normalised_weights(attention_kind::soft, test::convert<arb_ball>(z1, ctx), ctx);
    REQUIRE(numeric::contains(sa[1] - sb[1], rational(0)));
    // Negative control: softmax's weights are outside the reference.
    const auto ref = reference_weights(z);
    REQUIRE_FALSE(numeric::contains(sa[0], mid(ref[0])));
    // The exact scalar has no exp.
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::softpick, V{rational(0), rational(1)}, ctx),
                      precondition_error);
    // A non-finite score is undefined, not a weight.
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::softpick,
                                                    std::vector<double>{0.0, std::nan("")}, ctx),
                      numeric::undefined_error);
}

TEST_CASE("softpick: the soft pass of random models agrees with a reference pass in every kind",
          "[attention][softpick]") {
    const numeric::context ctx{256};
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        std::string text = test::random_normaliser_model(rng, "softpick", 3, seed % 2 == 0);
        // Every third seed: the first head has constant scores (Q = 0), which softpick does not
        // average.
        if (seed % 3 == 0) {
            const auto at = text.find("\"Q\": ");
            const auto stop = text.find(", \"K\"", at);
            text.replace(at, stop - at, "\"Q\": [[0, 0], [0, 0]]");
        }
        const auto m = model::parse_model(text, "softpick-test");
        const auto x = test::random_binary_input(rng, 3 + seed % 6);
        REQUIRE_FALSE(model::exact_blockers(m).empty());
        REQUIRE_THROWS_AS(attention::soft_forward(m, x, ctx), precondition_error);
        const auto ref = reference_output(m, x);
        test::require_passes_match(m, x, ref, 1e-100, ctx);
    }
}

TEST_CASE("softpick: a head of constant scores is not the mean of its values",
          "[attention][softpick]") {
    // One head of constant score 1 over values x_j: softpick weighs each key by
    // (e - 1) / (n (e - 1) + eps), so y = (number of ones) (e - 1) / (n (e - 1) + eps), just
    // below the mean (the shortcut a normaliser summing to 1 would take).
    std::string text = replaced(model_text("softpick-any"), R"("Q": [[0, 0, 1]], "K": [[1, 0, 0]], "scale": 2)",
                                R"("Q": [[0, 0, 1]], "K": [[0, 0, 1]], "scale": 1)");
    const auto m = model::parse_model(text, "softpick-constant");
    REQUIRE(attention::constant_scores(m.layers[0].heads[0]) == false); // scores by dot: 1 each
    const numeric::context ctx{256};
    const model::input_sequence x{1, 1, 0, 2}; // 1 1 0 $: two ones of n = 4
    const auto y = attention::soft_forward(model::to_scalar<arb_ball>(m, ctx), x, ctx).y;
    const arb_ball e1 = numeric::exp(ball(rational(1))) - ball(rational(1));
    const arb_ball want = ball(rational(2)) * e1 / (ball(rational(4)) * e1 + ball(eps));
    REQUIRE(numeric::contains(y[0] - want, rational(0)));
    REQUIRE_FALSE(numeric::contains(y[0], rational(1, 2))); // not the mean
    // The same with Q = 0 (constant_scores: scores 0, every weight 0): y = 0, not the mean.
    const auto m0 = model::parse_model(replaced(text, R"("Q": [[0, 0, 1]])", R"("Q": [[0, 0, 0]])"),
                                       "softpick-zero");
    REQUIRE(attention::constant_scores(m0.layers[0].heads[0]));
    const auto y0 = attention::soft_forward(model::to_scalar<double>(m0, ctx), x, ctx).y;
    REQUIRE(y0[0] == 0.0);
    const auto yq = attention::soft_forward(model::to_scalar<mpfr_real>(m0, ctx), x, ctx).y;
    REQUIRE(*numeric::exact_of(yq[0]) == 0);
}

TEST_CASE("softpick: the witness softpick-any keeps one symbol's influence near 1, certified, "
          "to n = 1500", "[attention][softpick][witness]") {
    const auto m = model::parse_model(model_text("softpick-any"), "softpick-any.json");
    REQUIRE(m.attention == attention_kind::softpick);
    const numeric::context ctx{128};
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    const auto mi = model::to_scalar<dinterval>(m, ctx);
    const arb_ball half = numeric::from_rational<arb_ball>(rational(1, 2), ctx);
    const arb_ball e2 = numeric::exp(ball(rational(2))) - ball(rational(1));
    const arb_ball want = e2 / (e2 + ball(eps)); // (e^2 - 1) / (e^2 - 1 + eps)
    // The same model with K = (2, 0, -1): scores 2 x_j - 1, every one 1 away from 0.
    const auto shifted = model::to_scalar<arb_ball>(
        model::parse_model(replaced(model_text("softpick-any"), R"("K": [[1, 0, 0]], "scale": 2)",
                                    R"("K": [[2, 0, -1]], "scale": 1)"),
                           "softpick-shifted"),
        ctx);
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u, 1500u}) {
        INFO("n = " << n);
        model::input_sequence one(n, 0), zero(n, 0);
        one.front() = 1;
        one.back() = zero.back() = 2;
        const arb_ball y1 = attention::soft_forward(mb, one, ctx).y[0];
        const arb_ball y0 = attention::soft_forward(mb, zero, ctx).y[0];
        REQUIRE(numeric::contains(y0, rational(0))); // every weight 0: defined, 0
        REQUIRE(numeric::contains(y1 - y0 - want, rational(0)));
        REQUIRE(numeric::compare(y1 - y0, half) == numeric::order::greater); // Theta(1), certified
        // Certified double intervals decide it too.
        const dinterval d = attention::soft_forward(mi, one, ctx).y[0] - attention::soft_forward(mi, zero, ctx).y[0];
        REQUIRE(numeric::compare(d, numeric::from_rational<dinterval>(rational(1, 2), ctx)) ==
                numeric::order::greater);
        if (n >= 16) {
            // Negative control: read as softmax it moves by e^2 / (e^2 + n - 1), below 1/2.
            auto soft = mb;
            soft.attention = attention_kind::soft;
            const arb_ball ds = attention::soft_forward(soft, one, ctx).y[0] -
                                attention::soft_forward(soft, zero, ctx).y[0];
            REQUIRE(numeric::compare(ds, half) == numeric::order::less);
            // Negative control: every score 1 away from 0, the change is below
            // (e - 1) / ((n - 1)(1 - 1/e)) < 3 / n: O(1/n), as theory.md §2.6 derives.
            const arb_ball dv = attention::soft_forward(shifted, one, ctx).y[0] -
                                attention::soft_forward(shifted, zero, ctx).y[0];
            REQUIRE(numeric::compare(dv, numeric::from_rational<arb_ball>(rational(3, static_cast<long>(n)), ctx)) ==
                    numeric::order::less);
        }
    }
}
