// Linear attention (docs/theory.md §2.6): row i weighs key j by phi(q_i) . phi(k_j), divided by
// the row's sum (linear) or not (linear-sum), phi the layer's feature map (elu1: x + 1 above 0,
// e^x otherwise; relu) on the unscaled query and key vectors. The feature maps against a
// reference that spells each branch (never the kernel's one-expression form); rows against
// their exact quotients in every scalar kind; a normalised row whose sum is 0 undefined in every
// kind; the soft pass of random models (causal masks, heads of constant scores) against a plain
// reference pass (exact rationals for relu, Arb balls at 512 bits for elu1) in every kind; the
// exact scalar refused for elu1; the witnesses linear-sum-count (influence exactly 1 at every n,
// in rationals) and linear-elu1-first (influence 2e / (2e + n - 1), certified below 2e / n).
// Negative controls: the mean of the values (a normaliser's shortcut for constant scores) is not
// linear attention's row, features of the score q . k instead of the vectors give other outputs,
// linear-elu1-first read as linear-sum keeps its influence at 2, and linear-sum-count
// read as linear is undefined on the all-zero input.
#include "attention/soft.hpp"
#include "model/model_file.hpp"
#include "normaliser_models.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

using namespace attnprop;
using model::attention_kind;
using model::feature_map_kind;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;

namespace {

const numeric::context ref_ctx{512};

arb_ball ball(const rational& q) { return numeric::from_rational<arb_ball>(q, ref_ctx); }

rational mid(const arb_ball& x) { return *numeric::exact_of(numeric::representative(x)); }

/// The reference feature of a ball: its branch chosen by the ball's sign (x + 1 above 0, e^x at
/// or below), the hull of both branches when the ball straddles 0 (each branch's enclosure over
/// the whole ball holds its value at every point of it).
arb_ball ref_feature(const arb_ball& x, feature_map_kind f) {
    const numeric::order o = numeric::sign(x, ref_ctx);
    if (f == feature_map_kind::relu) {
        if (o == numeric::order::greater) return x;
        if (o == numeric::order::less || o == numeric::order::equal) return ball(rational(0));
        return numeric::hull(x, ball(rational(0)));
    }
    const arb_ball up = x + ball(rational(1)), down = numeric::exp(x);
    if (o == numeric::order::greater) return up;
    if (o == numeric::order::less || o == numeric::order::equal) return down;
    return numeric::hull(up, down);
}

/// The exact relu feature of a rational.
rational ref_relu(const rational& x) { return x > 0 ? x : rational(0); }

/// y_n^(L) by plain loops in S: features of every query and key coordinate by `phi`, kernel
/// values summed in order, normalised when `normalised` (a sum not certainly positive throws
/// numeric::undefined_error). The last layer forms row n alone (the output reads no other).
template <class S, class Phi>
model::vec<S> reference_output(const model::model<S>& m, const model::input_sequence& x, bool normalised,
                               const Phi& phi, const numeric::context& ctx) {
    const std::size_t n = x.size();
    const S zero = numeric::from_rational<S>(rational(0), ctx);
    std::vector<model::vec<S>> y = attention::initial_states(m, x, ctx);
    for (const auto& lay : m.layers) {
        std::vector<model::vec<S>> next(n);
        const std::size_t first = &lay == &m.layers.back() ? n - 1 : 0;
        for (std::size_t i = first; i < n; ++i) {
            const std::size_t end = lay.mask == model::mask_kind::causal ? i + 1 : n;
            std::vector<model::vec<S>> b;
            for (const auto& hd : lay.heads) {
                const model::vec<S> q = attention::query(hd, y[i], ctx);
                std::vector<S> s;
                S sum = zero;
                for (std::size_t j = 0; j < end; ++j) {
                    const model::vec<S> kj = attention::key(hd, y[j], ctx);
                    S acc = zero;
                    for (std::size_t t = 0; t < q.size(); ++t)
                        acc = acc + phi(q[t], lay.feature_map) * phi(kj[t], lay.feature_map);
                    s.push_back(acc);
                    sum = sum + acc;
                }
                if (normalised) {
                    if (numeric::sign(sum, ctx) != numeric::order::greater)
                        throw numeric::undefined_error("the reference row's sum is not positive");
                    for (auto& v : s) v = v / sum;
                }
                model::vec<S> acc(hd.value.out_dim(), zero);
                for (std::size_t j = 0; j < end; ++j) {
                    const model::vec<S> vj = attention::value(hd, y[j], ctx);
                    for (std::size_t c = 0; c < acc.size(); ++c) acc[c] = acc[c] + s[j] * vj[c];
                }
                b.push_back(std::move(acc));
            }
            next[i] = attention::update(lay, y[i], b, ctx);
        }
        y = std::move(next);
    }
    return y.back();
}

/// A random model of `kind` (test::random_normaliser_model without its score scale, which linear
/// attention refuses) with `feature` on every layer; every third seed the first head's Q is 0.
std::string random_linear_model(std::mt19937_64& rng, const std::string& kind, const std::string& feature,
                                bool causal, bool zero_query) {
    std::string text = test::random_normaliser_model(rng, kind, 3, causal);
    // relu features of a normalised row: biases 8 keep most features positive (a row of sum 0
    // is undefined, which the test also checks, but most rows should compare values).
    if (kind == "linear-normalised" && feature == "relu")
        for (auto at = text.find(R"("K": )"); at != std::string::npos; at = text.find(R"("K": )", at + 60))
            text.insert(at, R"("q_bias": [8, 8], "k_bias": [8, 8], )");
    for (auto at = text.find(R"(, "scale": "1/2")"); at != std::string::npos;
         at = text.find(R"(, "scale": "1/2")"))
        text.erase(at, std::string(R"(, "scale": "1/2")").size());
    for (auto at = text.find(R"("heads": [)"); at != std::string::npos;
         at = text.find(R"("heads": [)", at + 40))
        text.insert(at, R"("feature_map": ")" + feature + R"(", )");
    if (zero_query) {
        const auto at = text.find("\"Q\": ");
        const auto stop = std::min(text.find(", \"q_bias\"", at), text.find(", \"K\"", at));
        text.replace(at, stop - at, "\"Q\": [[0, 0], [0, 0]]");
    }
    return text;
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

/// The model with input x_1 = 1 (else 0) and the all-zero one, both of length n (eos included).
std::pair<model::input_sequence, model::input_sequence> one_and_zero(std::size_t n) {
    model::input_sequence one(n, 0), zero(n, 0);
    one.front() = 1;
    one.back() = zero.back() = 2;
    return {one, zero};
}

} // namespace

TEST_CASE("linear: its rows in the registry", "[attention][linear]") {
    for (auto k : {attention_kind::linear, attention_kind::linear_sum}) {
        const auto& a = model::info(k);
        REQUIRE(a.feature_map);
        REQUIRE(a.weights == model::weighting::normaliser);
        REQUIRE_FALSE(a.sums_to_one); // no mean-of-values shortcut
        REQUIRE(a.exact);             // relu features; elu1 is refused per layer
        REQUIRE_FALSE(a.soft_influence);
        REQUIRE_FALSE(a.hard_limit);
        REQUIRE_FALSE(a.incremental);
        REQUIRE_FALSE(attention::softmax_rows(k));
    }
    REQUIRE(model::info(attention_kind::linear).influence == model::influence_law::vanishing);
    REQUIRE(model::info(attention_kind::linear_sum).influence == model::influence_law::not_vanishing);
    REQUIRE(model::parse_attention_kind("linear-normalised") == attention_kind::linear);
    REQUIRE(model::parse_attention_kind("linear-sum") == attention_kind::linear_sum);
    REQUIRE_FALSE(model::info(attention_kind::soft).feature_map);
}

TEST_CASE("linear: the feature maps in every kind agree with the branch reference",
          "[attention][linear]") {
    const numeric::context ctx{256};
    std::mt19937_64 rng(7);
    auto xs = test::random_scores(rng, 200, 12, 4); // exact zeros occur
    xs.push_back(rational(0));
    for (const auto& x : xs) {
        INFO("x = " << x);
        for (auto f : {feature_map_kind::elu1, feature_map_kind::relu}) {
            INFO("feature map " << model::to_string(f));
            const arb_ball ref = ref_feature(ball(x), f);
            REQUIRE(numeric::radius_as_double(ref) < 1e-100);
            const rational r = mid(ref);
            using attention::detail::feature;
            REQUIRE(static_cast<double>(abs(*numeric::exact_of(feature(numeric::from_rational<mpfr_real>(x, ctx), f, ctx)) - r)) < 1e-60);
            REQUIRE(numeric::contains(feature(numeric::from_rational<arb_ball>(x, ctx), f, ctx) - ref, rational(0)));
            REQUIRE(numeric::contains(feature(numeric::from_rational<dinterval>(x, ctx), f, ctx), r));
            REQUIRE(std::fabs(feature(numeric::approx_double(x), f, ctx) - numeric::approx_double(r)) < 1e-12);
            if (f == feature_map_kind::relu) REQUIRE(feature(x, f, ctx) == ref_relu(x));
        }
    }
    // An enclosure straddling 0 is enclosed without deciding the sign (elu1 is continuous).
    const arb_ball around0 = numeric::hull(ball(rational(-1, 1000)), ball(rational(1, 1000)));
    const arb_ball e = attention::detail::feature(around0, feature_map_kind::elu1, ref_ctx);
    REQUIRE(numeric::contains(e, rational(1)));
    REQUIRE(numeric::contains(e, rational(1001, 1000)));
    // The exact scalar has no exp.
    REQUIRE_THROWS_AS(attention::detail::feature(rational(-1), feature_map_kind::elu1, ctx), precondition_error);
}

TEST_CASE("linear: rows are the kernel values over their sum (linear) or themselves (linear-sum) "
          "in every kind; a zero sum is undefined", "[attention][linear]") {
    const numeric::context ctx{256};
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        auto z = test::random_scores(rng, 1 + seed % 9, 6, 3);
        for (auto& v : z) v = ref_relu(v); // kernel values are nonnegative
        rational sum(0);
        for (const auto& v : z) sum += v;
        if (sum == 0) z.front() = rational(1, 2), sum = rational(1, 2);
        const auto we = attention::normalised_weights(attention_kind::linear, z, ctx);
        const auto wm = attention::normalised_weights(attention_kind::linear, test::convert<mpfr_real>(z, ctx), ctx);
        const auto wb = attention::normalised_weights(attention_kind::linear, test::convert<arb_ball>(z, ctx), ctx);
        const auto wi = attention::normalised_weights(attention_kind::linear, test::convert<dinterval>(z, ctx), ctx);
        const auto wd = attention::normalised_weights(attention_kind::linear, test::convert<double>(z, ctx), ctx);
        const auto ws = attention::normalised_weights(attention_kind::linear_sum, z, ctx);
        for (std::size_t j = 0; j < z.size(); ++j) {
            const rational r = z[j] / sum;
            REQUIRE(we[j] == r);
            REQUIRE(ws[j] == z[j]);
            REQUIRE(static_cast<double>(abs(*numeric::exact_of(wm[j]) - r)) < 1e-60);
            REQUIRE(numeric::contains(wb[j], r));
            REQUIRE(numeric::contains(wi[j], r));
            REQUIRE(std::fabs(wd[j] - numeric::approx_double(r)) < 1e-12);
        }
    }
    // Every kernel value 0 (relu features): undefined in every kind, never NaN weights.
    const std::vector<rational> zeros(4, rational(0));
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::linear, zeros, ctx), numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::linear, test::convert<mpfr_real>(zeros, ctx), ctx),
                      numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::linear, test::convert<arb_ball>(zeros, ctx), ctx),
                      numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::linear, test::convert<dinterval>(zeros, ctx), ctx),
                      numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::linear, test::convert<double>(zeros, ctx), ctx),
                      numeric::undefined_error);
    // An enclosure of the sum containing 0 is not certainly positive: undefined.
    const std::vector<arb_ball> tiny{numeric::hull(ball(rational(0)), ball(rational(1, 1000)))};
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::linear, tiny, ref_ctx), numeric::undefined_error);
    // Unnormalised, the zero row is defined (every weight 0).
    for (const auto& w : attention::normalised_weights(attention_kind::linear_sum, zeros, ctx)) REQUIRE(w == 0);
    // A non-finite kernel value is undefined.
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::linear_sum, std::vector<double>{0.0, std::nan("")}, ctx),
                      numeric::undefined_error);
}

TEST_CASE("linear: the soft pass of random relu models equals an exact reference pass, in every kind",
          "[attention][linear]") {
    const numeric::context ctx{256};
    int undefined_rows = 0, defined_rows = 0;
    for (const std::string kind : {"linear-normalised", "linear-sum"}) {
        for (std::uint64_t seed = 1; seed <= 12; ++seed) {
            INFO(kind << ", seed " << seed);
            std::mt19937_64 rng(seed);
            const auto m = model::parse_model(random_linear_model(rng, kind, "relu", seed % 2 == 0, seed % 3 == 0),
                                              kind + "-test");
            const auto x = test::random_binary_input(rng, 3 + seed % 6);
            REQUIRE(model::exact_blockers(m).empty()); // relu: exact, the 1/sqrt(2) scale unread
            model::vec<rational> ref;
            try {
                ref = reference_output<rational>(
                    m, x, kind == "linear-normalised",
                    [](const rational& v, feature_map_kind) { return ref_relu(v); }, ctx);
            } catch (const numeric::undefined_error&) {
                // A row of relu features summing to 0: undefined in every kind too.
                REQUIRE_THROWS_AS(attention::soft_forward(m, x, ctx), numeric::undefined_error);
                REQUIRE_THROWS_AS(attention::soft_forward(model::to_scalar<mpfr_real>(m, ctx), x, ctx),
                                  numeric::undefined_error);
                REQUIRE_THROWS_AS(attention::soft_forward(model::to_scalar<dinterval>(m, ctx), x, ctx),
                                  numeric::undefined_error);
                REQUIRE_THROWS_AS(attention::soft_forward(model::to_scalar<double>(m, ctx), x, ctx),
                                  numeric::undefined_error);
                ++undefined_rows;
                continue;
            }
            ++defined_rows;
            const auto ye = attention::soft_forward(m, x, ctx).y;
            REQUIRE(ye == ref);
            const auto ym = attention::soft_forward(model::to_scalar<mpfr_real>(m, ctx), x, ctx).y;
            const auto yb = attention::soft_forward(model::to_scalar<arb_ball>(m, ctx), x, ctx).y;
            const auto yi = attention::soft_forward(model::to_scalar<dinterval>(m, ctx), x, ctx).y;
            const auto yd = attention::soft_forward(model::to_scalar<double>(m, ctx), x, ctx).y;
            for (std::size_t c = 0; c < ref.size(); ++c) {
                INFO("coordinate " << c);
                REQUIRE(static_cast<double>(abs(*numeric::exact_of(ym[c]) - ref[c])) < 1e-30);
                REQUIRE(numeric::contains(yb[c], ref[c]));
                REQUIRE(numeric::contains(yi[c], ref[c]));
                REQUIRE(std::fabs(yd[c] - numeric::approx_double(ref[c])) <
                        1e-12 * std::max(1.0, std::fabs(numeric::approx_double(ref[c]))));
            }
        }
    }
    // Most random models are defined (the comparison is not vacuous): linear-sum's always, 12,
    // and at least half of linear-normalised's.
    REQUIRE(defined_rows >= 18);
    REQUIRE(undefined_rows <= 6);
}

TEST_CASE("linear: the soft pass of random elu1 models agrees with a reference pass in every kind "
          "with exp; the exact scalar is refused", "[attention][linear]") {
    const numeric::context ctx{256};
    for (const std::string kind : {"linear-normalised", "linear-sum"}) {
        for (std::uint64_t seed = 1; seed <= 12; ++seed) {
            INFO(kind << ", seed " << seed);
            std::mt19937_64 rng(seed);
            const auto m = model::parse_model(random_linear_model(rng, kind, "elu1", seed % 2 == 0, seed % 3 == 0),
                                              kind + "-test");
            const auto x = test::random_binary_input(rng, 3 + seed % 6);
            REQUIRE_FALSE(model::exact_blockers(m).empty());
            REQUIRE_THROWS_AS(attention::soft_forward(m, x, ctx), precondition_error);
            const auto ref = reference_output<arb_ball>(model::to_scalar<arb_ball>(m, ref_ctx), x, kind == "linear-normalised",
                                                        ref_feature, ref_ctx);
            test::require_passes_match(m, x, ref, 1e-60, ctx);
        }
    }
}

TEST_CASE("linear: a head of constant scores is not the mean of its values; the features are of "
          "the vectors, not of the score", "[attention][linear]") {
    // linear-elu1-first has Q = 0 (constant scores 0): its row weighs phi(k_j), 2 at a one and
    // 1/e at a zero, not 1/n each.
    const auto m = model::parse_model(model_text("linear-elu1-first"), "linear-elu1-first.json");
    REQUIRE(attention::constant_scores(m.layers[0].heads[0]));
    const numeric::context ctx{256};
    const model::input_sequence x{1, 1, 0, 2}; // 1 1 0 $: two ones of n = 4
    const auto y = attention::soft_forward(model::to_scalar<arb_ball>(m, ctx), x, ctx).y;
    const arb_ball inv_e = numeric::exp(ball(rational(-1)));
    const arb_ball want = ball(rational(4)) / (ball(rational(4)) + ball(rational(2)) * inv_e);
    REQUIRE(numeric::contains(y[0] - want, rational(0)));
    REQUIRE_FALSE(numeric::contains(y[0], rational(1, 2))); // not the mean
    // Negative control: features of the score q . k (0 here, phi(0) = 1 for every key) would
    // weigh every key by 1/n and give the mean 1/2.
    const auto yd = attention::soft_forward(model::to_scalar<double>(m, ctx), x, ctx).y;
    REQUIRE(std::fabs(yd[0] - 0.5) > 0.1);
}

TEST_CASE("linear: a normalised row of relu features that sum to 0 is undefined in every kind",
          "[attention][linear]") {
    // linear-sum-count read as linear: on the all-zero input every key's feature is 0.
    const auto m = model::parse_model(replaced(model_text("linear-sum-count"), R"("attention": "linear-sum")",
                                               R"("attention": "linear-normalised")"),
                                      "linear-zero");
    const numeric::context ctx{128};
    const model::input_sequence zero{0, 0, 0, 2};
    REQUIRE_THROWS_AS(attention::soft_forward(m, zero, ctx), numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::soft_forward(model::to_scalar<mpfr_real>(m, ctx), zero, ctx), numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::soft_forward(model::to_scalar<arb_ball>(m, ctx), zero, ctx), numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::soft_forward(model::to_scalar<dinterval>(m, ctx), zero, ctx), numeric::undefined_error);
    REQUIRE_THROWS_AS(attention::soft_forward(model::to_scalar<double>(m, ctx), zero, ctx), numeric::undefined_error);
    // With a 1 the row is defined: the ones share the weight, y = 1 exactly.
    REQUIRE(attention::soft_forward(m, model::input_sequence{0, 1, 0, 2}, ctx).y[0] == rational(1));
    // The sum is an exact 0 in the enclosure kinds too: the pole itself, which no precision
    // resolves (so the runner does not retry it), unlike a sum that merely contains 0.
    auto may_resolve = [&](auto&& kind_model) {
        try {
            attention::soft_forward(kind_model, zero, ctx);
        } catch (const numeric::undefined_error& e) {
            return e.precision_may_resolve();
        }
        FAIL("the zero row was not undefined");
        return true;
    };
    REQUIRE_FALSE(may_resolve(model::to_scalar<arb_ball>(m, ctx)));
    REQUIRE_FALSE(may_resolve(model::to_scalar<dinterval>(m, ctx)));
    const numeric::context c53{53};
    // 1/3 is inexact at 53 bits, so 1/3 - 1/3 of two separately rounded balls is an enclosure of
    // 0 with a positive radius.
    const arb_ball third = numeric::from_rational<arb_ball>(rational(1, 3), c53);
    std::vector<arb_ball> around_zero{third - numeric::from_rational<arb_ball>(rational(1, 3), c53),
                                      numeric::zero<arb_ball>(c53)};
    bool retried = false;
    try {
        (void)attention::detail::linear_weights(around_zero, true, c53);
    } catch (const numeric::undefined_error& e) {
        retried = e.precision_may_resolve();
    }
    INFO("a sum that is an enclosure of 0 of positive radius");
    REQUIRE(numeric::sign(around_zero[0], c53) == numeric::order::unknown);
    REQUIRE(retried);
}

TEST_CASE("linear: the witness linear-sum-count moves y_n by exactly 1 at every n, exact",
          "[attention][linear][witness]") {
    const auto m = model::parse_model(model_text("linear-sum-count"), "linear-sum-count.json");
    REQUIRE(m.attention == attention_kind::linear_sum);
    REQUIRE(model::exact_blockers(m).empty());
    const numeric::context ctx{64};
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u, 2000u}) {
        INFO("n = " << n);
        const auto [one, zero] = one_and_zero(n);
        const rational d = attention::soft_forward(m, one, ctx).y[0] - attention::soft_forward(m, zero, ctx).y[0];
        REQUIRE(d == rational(1));
        // The count itself: x_1 = x_2 = 1 gives 2 (n >= 3).
        if (n >= 3) {
            model::input_sequence two = one;
            two[1] = 1;
            REQUIRE(attention::soft_forward(m, two, ctx).y[0] == rational(2));
        }
    }
}

TEST_CASE("linear: the witness linear-elu1-first moves y_n by 2e / (2e + n - 1) < 2e / n, "
          "certified, to n = 1500", "[attention][linear][witness]") {
    const auto m = model::parse_model(model_text("linear-elu1-first"), "linear-elu1-first.json");
    REQUIRE(m.attention == attention_kind::linear);
    REQUIRE(model::influence_of(m) == model::influence_law::vanishing);
    const numeric::context ctx{128};
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    const auto mi = model::to_scalar<dinterval>(m, ctx);
    auto as_sum = mb;
    as_sum.attention = attention_kind::linear_sum;
    const arb_ball e = numeric::exp(ball(rational(1)));
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u, 1500u}) {
        INFO("n = " << n);
        const auto [one, zero] = one_and_zero(n);
        const arb_ball nn = ball(rational(static_cast<long>(n)));
        const arb_ball d = attention::soft_forward(mb, one, ctx).y[0] - attention::soft_forward(mb, zero, ctx).y[0];
        const arb_ball want = ball(rational(2)) * e / (ball(rational(2)) * e + nn - ball(rational(1)));
        REQUIRE(numeric::contains(d - want, rational(0)));
        const arb_ball bound = ball(rational(2)) * e / nn;
        REQUIRE(numeric::compare(d, bound) == numeric::order::less); // certified below 2e / n
        const dinterval di = attention::soft_forward(mi, one, ctx).y[0] - attention::soft_forward(mi, zero, ctx).y[0];
        REQUIRE(numeric::compare(di, numeric::from_rational<dinterval>(rational(6, static_cast<long>(n)), ctx)) ==
                numeric::order::less);
        // Negative control: read as linear-sum it moves by 2 (the one's term 2 x_1) at every n,
        // above 2e / n for n >= 4: the bound can fail.
        const arb_ball ds =
            attention::soft_forward(as_sum, one, ctx).y[0] - attention::soft_forward(as_sum, zero, ctx).y[0];
        REQUIRE(numeric::contains(ds - ball(rational(2)), rational(0)));
        if (n >= 4) REQUIRE(numeric::compare(ds, bound) == numeric::order::greater);
    }
}

TEST_CASE("linear: the model file's feature_map and its refusals", "[attention][linear][model]") {
    const std::string text = model_text("linear-sum-count");
    // Written back with its feature map, read again the same.
    const auto m = model::parse_model(text, "linear-sum-count.json");
    REQUIRE(m.layers[0].feature_map == feature_map_kind::relu);
    const auto def = model::parse_model(replaced(text, R"("feature_map": "relu",)", ""), "linear-default");
    REQUIRE(def.layers[0].feature_map == feature_map_kind::elu1); // the default
    REQUIRE_FALSE(model::exact_blockers(def).empty());
    // An unknown feature map, a feature map on another kind, a scale, a beta, a map score.
    REQUIRE_THROWS_AS(model::parse_model(replaced(text, R"("relu")", R"("gelu")"), "bad"), model::model_file_error);
    REQUIRE_THROWS_AS(model::parse_model(replaced(text, R"("attention": "linear-sum")", R"("attention": "soft")"), "bad"),
                      model::model_file_error);
    REQUIRE_THROWS_AS(model::parse_model(replaced(text, R"("K": [[1, 0, 0]])", R"("K": [[1, 0, 0]], "scale": 2)"), "bad"),
                      model::model_file_error);
    REQUIRE_THROWS_AS(model::parse_model(replaced(text, R"("K": [[1, 0, 0]])", R"("K": [[1, 0, 0]], "beta": 2)"), "bad"),
                      model::model_file_error);
    REQUIRE_THROWS_AS(model::parse_model(replaced(text, R"("K": [[1, 0, 0]])", R"("K": [[1, 0, 0]], "length_scale": "log")"), "bad"),
                      model::model_file_error);
}
