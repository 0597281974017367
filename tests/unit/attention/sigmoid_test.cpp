// Sigmoid attention (docs/theory.md §2.6): weights sigma(s_ij + b(n)), not normalised, b(n) the
// layer's bias. The rows against known values (sigma(0) = 1/2, sigma(-log 3) = 1/4) and a
// reference spelt e^x / (1 + e^x); the soft pass of random sigmoid models (biases constant and
// -log(n) + c, constant-score heads, causal masks) against a plain reference pass in Arb balls
// at 512 bits, in every scalar kind with exp; the exact scalar refused; the model file's
// sigmoid_bias; the influence law by the bias; the witnesses sigmoid-const (influence sigma(1)
// at every n) and sigmoid-logn (n * influence within [1, e^2]), decided by certified
// enclosures. Negative controls: softmax's weights and the mean of the values (the shortcut of
// a normaliser) disagree with sigmoid's, and sigmoid-logn with the bias 0 does not vanish.
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

/// The reference weight, spelt apart from the kernel's 1 / (1 + e^(-x)).
arb_ball reference_sigma(const arb_ball& x) {
    const arb_ball e = numeric::exp(x);
    return e / (numeric::from_int<arb_ball>(1, numeric::context{512}) + e);
}

arb_ball ball(const rational& q, long prec = 512) {
    return numeric::from_rational<arb_ball>(q, numeric::context{prec});
}

/// A random two-layer, two-head sigmoid model on {0, 1}, d = 2: entries p/q with |p| <= 3,
/// q in 1 .. 4; each layer's bias one of 0, 1/2, -log(n), 1 - log(n) (or none); the first head of
/// the first layer has constant scores (Q = 0) every other seed; `causal` masks the first layer.
std::string random_sigmoid_model(std::mt19937_64& rng, bool causal, bool constant_head) {
    auto num = [&] {
        const long p = std::uniform_int_distribution<long>(-3, 3)(rng);
        const long q = std::uniform_int_distribution<long>(1, 4)(rng);
        return "\"" + std::to_string(p) + "/" + std::to_string(q) + "\"";
    };
    auto mat = [&](int r, int c) { return test::json_matrix(r, c, num); };
    auto vec2 = [&] { return "[" + num() + ", " + num() + "]"; };
    const char* biases[] = {"", R"b("sigmoid_bias": 0, )b", R"b("sigmoid_bias": "1/2", )b",
                            R"b("sigmoid_bias": "-log(n)", )b", R"b("sigmoid_bias": "1 - log(n)", )b"};
    std::string layers;
    for (int k = 0; k < 2; ++k) {
        std::string heads;
        for (int h = 0; h < 2; ++h) {
            const std::string q = constant_head && k == 0 && h == 0 ? "[[0, 0], [0, 0]]" : mat(2, 2);
            heads += std::string(h ? ", " : "") + R"({"score": {"kind": "dot", "Q": )" + q +
                     R"(, "K": )" + mat(2, 2) + R"(, "scale": "1/2"}, "value": {"kind": "linear", "V": )" +
                     mat(2, 2) + "}}";
        }
        layers += std::string(k ? ", " : "") + "{" + (causal && k == 0 ? "\"mask\": \"causal\", " : "") +
                  biases[rng() % 5] + "\"heads\": [" + heads +
                  R"(], "update": {"kind": "affine", "W": )" + mat(2, 6) + "}}";
    }
    return R"({"format": "attnprop-model", "version": 1, "name": "sigmoid-test", "attention": "sigmoid",
      "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": )" + vec2() + R"(, "1": )" + vec2() + R"(, "$": )" + vec2() + R"(},
      "positional": {"kind": "formula", "dim": 2, "coordinates": ["1/i", "0"]},
      "input": "add", "layers": [)" + layers + R"(],
      "readout": {"kind": "threshold", "w": [1, 0], "t": 0}})";
}

/// y_n^(L) by plain loops in Arb balls at 512 bits (test::reference_output_in): every row's
/// scores plus the layer's bias b(n), weighted by reference_sigma.
model::vec<arb_ball> reference_output(const model::model<rational>& mr, const model::input_sequence& x) {
    const numeric::context ctx{512};
    const auto weights = [&](const std::vector<arb_ball>& s, const model::layer<arb_ball>& lay, std::size_t n) {
        const arb_ball b = lay.sigmoid_bias
                               ? lay.sigmoid_bias->eval<arb_ball>(1, static_cast<long>(n), ctx)
                               : ball(rational(0));
        std::vector<arb_ball> w;
        for (const auto& v : s) w.push_back(reference_sigma(v + b));
        return w;
    };
    return test::reference_output_in<arb_ball>(model::to_scalar<arb_ball>(mr, ctx), x, weights, ctx);
}

/// The exact midpoint of a ball of the reference.
rational mid(const arb_ball& x) { return *numeric::exact_of(numeric::representative(x)); }

} // namespace

TEST_CASE("sigmoid: rows equal sigma of each score, in every kind with exp, and need not sum to 1",
          "[attention][sigmoid]") {
    const numeric::context ctx{256};
    // sigma(0) = 1/2 exactly: three keys of score 0 weigh 3/2 in all.
    const std::vector<rational> zeros(3, rational(0));
    std::vector<arb_ball> zb;
    for (const auto& q : zeros) zb.push_back(numeric::from_rational<arb_ball>(q, ctx));
    const auto wb = attention::normalised_weights(attention_kind::sigmoid, zb, ctx);
    for (const auto& w : wb) REQUIRE(numeric::contains(w, rational(1, 2)));
    // sigma(-log 3) = 1 / (1 + 3) = 1/4.
    const arb_ball l3 = -numeric::log(numeric::from_int<arb_ball>(3, ctx));
    REQUIRE(numeric::contains(attention::normalised_weights(attention_kind::sigmoid,
                                                            std::vector<arb_ball>{l3}, ctx)[0],
                              rational(1, 4)));
    // Random scores against the reference in every kind with exp.
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        std::vector<rational> z;
        for (std::size_t j = 0; j < 1 + seed % 7; ++j)
            z.push_back(rational(std::uniform_int_distribution<long>(-60, 60)(rng)) /
                        std::uniform_int_distribution<long>(1, 7)(rng));
        std::vector<arb_ball> b;
        std::vector<mpfr_real> mp;
        std::vector<dinterval> di;
        std::vector<double> db;
        for (const auto& q : z) {
            b.push_back(numeric::from_rational<arb_ball>(q, ctx));
            mp.push_back(numeric::from_rational<mpfr_real>(q, ctx));
            di.push_back(numeric::from_rational<dinterval>(q, ctx));
            db.push_back(numeric::approx_double(q));
        }
        const auto w_b = attention::normalised_weights(attention_kind::sigmoid, b, ctx);
        const auto w_m = attention::normalised_weights(attention_kind::sigmoid, mp, ctx);
        const auto w_i = attention::normalised_weights(attention_kind::sigmoid, di, ctx);
        const auto w_d = attention::normalised_weights(attention_kind::sigmoid, db, ctx);
        for (std::size_t j = 0; j < z.size(); ++j) {
            const rational r = mid(reference_sigma(ball(z[j])));
            REQUIRE(numeric::contains(w_b[j], r));
            REQUIRE(numeric::contains(w_i[j], r));
            REQUIRE(static_cast<double>(abs(*numeric::exact_of(w_m[j]) - r)) < 1e-60);
            REQUIRE(std::fabs(w_d[j] - numeric::approx_double(r)) < 1e-15);
        }
    }
}

TEST_CASE("sigmoid: softmax's weights and the exact scalar are not sigmoid's (negative control)",
          "[attention][sigmoid]") {
    const numeric::context ctx{256};
    const std::vector<arb_ball> z(4, numeric::from_int<arb_ball>(0, ctx));
    const auto soft = attention::normalised_weights(attention_kind::soft, z, ctx);
    REQUIRE_FALSE(numeric::contains(soft[0], rational(1, 2))); // softmax: 1/4 each
    // The exact scalar does not evaluate exp: refused, for the weights and for a model.
    REQUIRE_THROWS_AS(attention::normalised_weights(attention_kind::sigmoid,
                                                    std::vector<rational>{rational(0)}, ctx),
                      precondition_error);
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/sigmoid-const.json");
    const auto blockers = model::exact_blockers(m);
    REQUIRE_FALSE(blockers.empty());
    REQUIRE(blockers.front().find("sigmoid needs exp") != std::string::npos);
}

TEST_CASE("sigmoid: the soft pass of random models equals the reference pass in every kind with exp",
          "[attention][sigmoid]") {
    const numeric::context ctx{256};
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto m =
            model::parse_model(random_sigmoid_model(rng, seed % 2 == 0, seed % 4 < 2), "sigmoid-test");
        const auto x = test::random_binary_input(rng, 3 + seed % 6);
        const auto ref = reference_output(m, x);
        const auto ym = attention::soft_forward(model::to_scalar<mpfr_real>(m, ctx), x, ctx).y;
        const auto yb = attention::soft_forward(model::to_scalar<arb_ball>(m, ctx), x, ctx).y;
        const auto yi = attention::soft_forward(model::to_scalar<dinterval>(m, ctx), x, ctx).y;
        const auto yd = attention::soft_forward(model::to_scalar<double>(m, ctx), x, ctx).y;
        for (std::size_t c = 0; c < ref.size(); ++c) {
            const rational r = mid(ref[c]);
            REQUIRE(static_cast<double>(abs(*numeric::exact_of(ym[c]) - r)) < 1e-30);
            REQUIRE(numeric::contains(yb[c], r));
            REQUIRE(numeric::contains(yi[c], r));
            REQUIRE(std::fabs(yd[c] - numeric::approx_double(r)) <
                    1e-12 * std::max(1.0, std::fabs(numeric::approx_double(r))));
        }
    }
}

TEST_CASE("sigmoid: a head of constant scores weighs sigma(c + b) each, not the mean of the values",
          "[attention][sigmoid]") {
    const numeric::context ctx{256};
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/sigmoid-const.json");
    // x = 1 1 0 eos: two ones, each weighed sigma(1), with or without a causal mask.
    const model::input_sequence x{1, 1, 0, 2};
    const arb_ball s1 = reference_sigma(ball(rational(1)));
    for (bool causal : {false, true}) {
        INFO("causal " << causal);
        auto mb = model::to_scalar<arb_ball>(m, ctx);
        if (causal) mb.layers[0].mask = model::mask_kind::causal;
        const auto y = attention::soft_forward(mb, x, ctx).y;
        REQUIRE(numeric::contains(y[0], mid(s1 * numeric::from_int<arb_ball>(2, ctx))));
        // Negative control: the mean of the values, a normaliser's shortcut, is 1/2.
        REQUIRE_FALSE(numeric::contains(y[0], rational(1, 2)));
    }
}

TEST_CASE("sigmoid: sigmoid_bias in the model file", "[attention][sigmoid][model_file]") {
    const auto path = std::string(ATTNPROP_MODELS_DIR) + "/sigmoid-logn.json";
    const auto m = model::read_model_file(path);
    REQUIRE(m.layers[0].sigmoid_bias);
    REQUIRE(m.layers[0].sigmoid_bias->text() == "-log(n)");
    // Round trip: written and read again, the same text.
    const std::string once = model::write_model(m);
    REQUIRE(model::write_model(model::parse_model(once, "again")) == once);
    REQUIRE(once.find("\"sigmoid_bias\": \"-log(n)\"") != std::string::npos);
    // Refused on another kind, located at the field; a formula in i refused.
    std::string text = once;
    text.replace(text.find("\"sigmoid\""), 9, "\"soft\"");
    try {
        (void)model::parse_model(text, "soft-with-bias.json");
        FAIL("a sigmoid_bias on a softmax model was accepted");
    } catch (const model::model_file_error& e) {
        const std::string what = e.what();
        INFO(what);
        REQUIRE(what.find("sigmoid_bias belongs to sigmoid attention; the model's attention is 'soft'") !=
                std::string::npos);
        REQUIRE(what.find("/layers/0/sigmoid_bias") != std::string::npos);
    }
    std::string with_i = once;
    const std::string field = "\"sigmoid_bias\": \"-log(n)\"";
    with_i.replace(with_i.find(field), field.size(), "\"sigmoid_bias\": \"-log(i)\"");
    REQUIRE_THROWS_WITH(model::parse_model(with_i, "i.json"),
                        Catch::Contains("sigmoid_bias is a formula in the length n alone"));
}

TEST_CASE("sigmoid: the influence law follows the bias", "[attention][sigmoid]") {
    auto offset = [](const char* text) { return model::minus_log_n_offset(model::expr::parse(text)); };
    REQUIRE(offset("-log(n)") == rational(0));
    REQUIRE(offset("2 - log(n)") == rational(2));
    REQUIRE(offset("-log(n) + 1/2") == rational(1, 2));
    REQUIRE(offset("-log(n) - 3") == rational(-3));
    REQUIRE(offset("1 + -log(n)") == rational(1));
    // Not recognised (asserting nothing): other multiples of log n, log of another argument.
    REQUIRE_FALSE(offset("-2*log(n)"));
    REQUIRE_FALSE(offset("-log(n+1)"));
    REQUIRE_FALSE(offset("log(n)"));
    REQUIRE_FALSE(offset("1"));
    const auto dir = std::string(ATTNPROP_MODELS_DIR);
    auto m = model::read_model_file(dir + "/sigmoid-logn.json");
    REQUIRE(model::influence_of(m) == model::influence_law::vanishing);
    m.layers[0].sigmoid_bias.reset(); // b = 0
    REQUIRE(model::influence_of(m) == model::influence_law::not_vanishing);
    m.layers[0].sigmoid_bias = model::expr::parse("-2*log(n)");
    REQUIRE_FALSE(model::influence_of(m).has_value());
    REQUIRE(model::influence_of(model::read_model_file(dir + "/sigmoid-const.json")) ==
            model::influence_law::not_vanishing);
}

TEST_CASE("sigmoid: the witness sigmoid-const keeps one symbol's influence at sigma(1), certified, "
          "to n = 4096", "[attention][sigmoid][witness]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/sigmoid-const.json");
    REQUIRE(m.attention == attention_kind::sigmoid);
    const numeric::context ctx{128};
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u, 4096u}) {
        INFO("n = " << n);
        model::input_sequence one(n, 0), zero(n, 0);
        one.front() = 1;
        one.back() = zero.back() = 2;
        const arb_ball d = attention::soft_forward(mb, one, ctx).y[0] -
                           attention::soft_forward(mb, zero, ctx).y[0];
        // sigma(1) = 0.7310585...: certified within (0.731, 0.7311), at every n.
        REQUIRE(numeric::compare(d, ball(rational(731, 1000), 128)) == numeric::order::greater);
        REQUIRE(numeric::compare(d, ball(rational(7311, 10000), 128)) == numeric::order::less);
        // Negative control: the same model under softmax moves by 1/n (the lemma's O(1/n)).
        auto soft = mb;
        soft.attention = attention_kind::soft;
        soft.layers[0].sigmoid_bias.reset();
        const arb_ball ds = attention::soft_forward(soft, one, ctx).y[0] -
                            attention::soft_forward(soft, zero, ctx).y[0];
        REQUIRE(numeric::contains(ds, rational(1, static_cast<long>(n))));
    }
}

TEST_CASE("sigmoid: the witness sigmoid-logn keeps n * influence within [1, e^2], certified, to "
          "n = 4096", "[attention][sigmoid][witness]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/sigmoid-logn.json");
    const numeric::context ctx{128};
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    const arb_ball e2 = numeric::exp(numeric::from_int<arb_ball>(2, ctx));
    auto without_bias = mb;
    without_bias.layers[0].sigmoid_bias.reset();
    for (std::size_t n : {2u, 3u, 16u, 128u, 1024u, 4096u}) {
        INFO("n = " << n);
        model::input_sequence one(n, 0), zero(n, 0);
        one.front() = 1;
        one.back() = zero.back() = 2;
        const arb_ball N = numeric::from_int<arb_ball>(static_cast<long>(n), ctx);
        const arb_ball nd = N * (attention::soft_forward(mb, one, ctx).y[0] -
                                 attention::soft_forward(mb, zero, ctx).y[0]);
        // The weight of position 1 is 1 / (1 + n e^(-2)): n times it is within [1, e^2).
        REQUIRE(numeric::compare(nd, ball(rational(1), 128)) == numeric::order::greater);
        REQUIRE(numeric::compare(nd, e2) == numeric::order::less);
        REQUIRE(numeric::contains(nd, mid(N / (numeric::from_int<arb_ball>(1, ctx) +
                                               N * numeric::exp(-numeric::from_int<arb_ball>(2, ctx))))));
        // Negative control: with the bias 0 the weight is sigma(2) and n * influence grows as n.
        const arb_ball nd0 = N * (attention::soft_forward(without_bias, one, ctx).y[0] -
                                  attention::soft_forward(without_bias, zero, ctx).y[0]);
        REQUIRE(numeric::compare(nd0, N * ball(rational(88, 100), 128)) == numeric::order::greater);
    }
}
