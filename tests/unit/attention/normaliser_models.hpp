#pragma once
// Random models and a plain reference pass for the tests of the normaliser kinds (StableMax,
// sparsemax): every layer's rows by loops, with the weights of a row given by the test's own
// reference of the kind (never attention::normalised_weights), in exact rationals.
#include "attention/soft.hpp"
#include "model/model_file.hpp"
#include "test_models.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace attnprop::test {

/// A random two-layer, two-head model on {0, 1} with d = 2 and the given attention kind;
/// entries p/q with |p| <= range, q in 1 .. 4; the score scale 1/2 (rational, so that the
/// exact scalar evaluates it). `causal` masks the first layer.
inline std::string random_normaliser_model(std::mt19937_64& rng, const std::string& attention,
                                           long range, bool causal) {
    auto num = [&] {
        const long p = std::uniform_int_distribution<long>(-range, range)(rng);
        const long q = std::uniform_int_distribution<long>(1, 4)(rng);
        return "\"" + std::to_string(p) + "/" + std::to_string(q) + "\"";
    };
    auto mat = [&](int r, int c) { return json_matrix(r, c, num); };
    auto vec2 = [&] { return "[" + num() + ", " + num() + "]"; };
    std::string layers;
    for (int k = 0; k < 2; ++k) {
        std::string heads;
        for (int h = 0; h < 2; ++h)
            heads += std::string(h ? ", " : "") + R"({"score": {"kind": "dot", "Q": )" + mat(2, 2) +
                     R"(, "K": )" + mat(2, 2) + R"(, "scale": "1/2"}, "value": {"kind": "linear", "V": )" +
                     mat(2, 2) + "}}";
        layers += std::string(k ? ", " : "") + "{" + (causal && k == 0 ? "\"mask\": \"causal\", " : "") +
                  "\"heads\": [" + heads + R"(], "update": {"kind": "affine", "W": )" + mat(2, 6) +
                  "}}";
    }
    return R"({"format": "attnprop-model", "version": 1, "name": "normaliser", "attention": ")" +
           attention + R"(", "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": )" + vec2() + R"(, "1": )" + vec2() + R"(, "$": )" + vec2() + R"(},
      "positional": {"kind": "formula", "dim": 2, "coordinates": ["1/i", "0"]},
      "input": "add", "layers": [)" + layers + R"(],
      "readout": {"kind": "threshold", "w": [1, 0], "t": 0}})";
}

/// n random scores p/q, |p| <= range, q in 1 .. max_den (a row's tests of a normaliser).
inline std::vector<numeric::rational> random_scores(std::mt19937_64& rng, std::size_t n, long range,
                                                    long max_den) {
    std::vector<numeric::rational> z;
    for (std::size_t j = 0; j < n; ++j)
        z.push_back(numeric::rational(std::uniform_int_distribution<long>(-range, range)(rng)) /
                    std::uniform_int_distribution<long>(1, max_den)(rng));
    return z;
}

/// The scores in the scalar kind S.
template <class S>
std::vector<S> convert(const std::vector<numeric::rational>& z, const numeric::context& ctx) {
    std::vector<S> out;
    for (const auto& q : z) out.push_back(numeric::from_rational<S>(q, ctx));
    return out;
}

inline model::input_sequence random_binary_input(std::mt19937_64& rng, std::size_t n) {
    model::input_sequence x;
    for (std::size_t i = 0; i + 1 < n; ++i) x.push_back(static_cast<int>(rng() % 2));
    x.push_back(2);
    return x;
}

using rational_weights =
    std::function<std::vector<numeric::rational>(const std::vector<numeric::rational>&)>;

/// The weights of one row from its scaled scores, given the row's layer and the length n.
template <class S>
using layer_row_weights =
    std::function<std::vector<S>(const std::vector<S>&, const model::layer<S>&, std::size_t)>;

/// y_n^(L) by plain loops in the scalar S (exact rationals, or Arb balls for the kinds with exp):
/// row i attends to the keys j < end (end = i + 1 under a causal mask), its scores scaled as the
/// soft pass scales them (no shortcut for constant scores), its weights `weights`.
template <class S>
model::vec<S> reference_output_in(const model::model<S>& m, const model::input_sequence& x,
                                  const layer_row_weights<S>& weights, const numeric::context& ctx) {
    const std::size_t n = x.size();
    const S zero = numeric::from_rational<S>(numeric::rational(0), ctx);
    std::vector<model::vec<S>> y = attention::initial_states(m, x, ctx);
    for (const auto& lay : m.layers) {
        std::vector<model::vec<S>> next(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t end = lay.mask == model::mask_kind::causal ? i + 1 : n;
            std::vector<model::vec<S>> b;
            for (const auto& hd : lay.heads) {
                model::vec<S> q = attention::query(hd, y[i], ctx);
                const S f = attention::dot_scale(hd, n, ctx);
                std::vector<S> s;
                for (std::size_t j = 0; j < end; ++j) {
                    const model::vec<S> kj = attention::key(hd, y[j], ctx);
                    S acc = zero;
                    for (std::size_t t = 0; t < q.size(); ++t) acc = acc + q[t] * kj[t];
                    s.push_back(acc * f);
                }
                const std::vector<S> w = weights(s, lay, n);
                model::vec<S> acc(hd.value.out_dim(), zero);
                for (std::size_t j = 0; j < end; ++j) {
                    const model::vec<S> vj = attention::value(hd, y[j], ctx);
                    for (std::size_t c = 0; c < acc.size(); ++c) acc[c] = acc[c] + w[j] * vj[c];
                }
                b.push_back(std::move(acc));
            }
            next[i] = attention::update(lay, y[i], b, ctx);
        }
        y = std::move(next);
    }
    return y.back();
}

/// reference_output_in over the exact rationals, with weights from the scores alone.
inline model::vec<numeric::rational> reference_output(const model::model<numeric::rational>& m,
                                                      const model::input_sequence& x,
                                                      const rational_weights& weights) {
    return reference_output_in<numeric::rational>(
        m, x,
        [&](const std::vector<numeric::rational>& s, const model::layer<numeric::rational>&, std::size_t) {
            return weights(s);
        },
        numeric::context{64});
}

/// The soft pass of m on x in MPFR, Arb balls, certified intervals and double at ctx against
/// `ref`, the same pass in balls at a high precision (each radius below max_radius): MPFR
/// within 1e-30 of the reference's midpoint, the ball overlapping it, the interval containing
/// the midpoint, double within 1e-12 (relative above 1). For kinds the exact scalar refuses.
inline void require_passes_match(const model::model<numeric::rational>& m, const model::input_sequence& x,
                                 const model::vec<numeric::arb_ball>& ref, double max_radius,
                                 const numeric::context& ctx) {
    const auto ym = attention::soft_forward(model::to_scalar<numeric::mpfr_real>(m, ctx), x, ctx).y;
    const auto yb = attention::soft_forward(model::to_scalar<numeric::arb_ball>(m, ctx), x, ctx).y;
    const auto yi = attention::soft_forward(model::to_scalar<numeric::dinterval>(m, ctx), x, ctx).y;
    const auto yd = attention::soft_forward(model::to_scalar<double>(m, ctx), x, ctx).y;
    for (std::size_t c = 0; c < ref.size(); ++c) {
        INFO("coordinate " << c);
        REQUIRE(numeric::radius_as_double(ref[c]) < max_radius);
        const numeric::rational mid = *numeric::exact_of(numeric::representative(ref[c]));
        REQUIRE(static_cast<double>(abs(*numeric::exact_of(ym[c]) - mid)) < 1e-30);
        REQUIRE(numeric::contains(yb[c] - ref[c], numeric::rational(0))); // they overlap
        REQUIRE(numeric::contains(yi[c], mid));
        REQUIRE(std::fabs(yd[c] - numeric::approx_double(mid)) <
                1e-12 * std::max(1.0, std::fabs(numeric::approx_double(mid))));
    }
}

/// The soft pass of twelve random models of `kind` (every other one masked) against
/// reference_output with the kind's reference weights, in every scalar kind: exact rationals
/// equal, MPFR at 256 bits within 1e-30, balls and certified intervals containing the exact
/// values, double within 1e-12 (relative above 1).
inline void check_every_kind(const std::string& kind, const rational_weights& reference_weights) {
    const numeric::context ctx{256};
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        INFO("seed " << seed);
        std::mt19937_64 rng(seed);
        const auto m = model::parse_model(random_normaliser_model(rng, kind, 3, seed % 2 == 0),
                                          kind + "-test");
        const auto x = random_binary_input(rng, 3 + seed % 6);
        const auto ref = reference_output(m, x, reference_weights);
        REQUIRE(attention::soft_forward(m, x, ctx).y == ref);
        const auto ym = attention::soft_forward(model::to_scalar<numeric::mpfr_real>(m, ctx), x, ctx).y;
        const auto yb = attention::soft_forward(model::to_scalar<numeric::arb_ball>(m, ctx), x, ctx).y;
        const auto yi = attention::soft_forward(model::to_scalar<numeric::dinterval>(m, ctx), x, ctx).y;
        const auto yd = attention::soft_forward(model::to_scalar<double>(m, ctx), x, ctx).y;
        for (std::size_t c = 0; c < ref.size(); ++c) {
            REQUIRE(static_cast<double>(abs(*numeric::exact_of(ym[c]) - ref[c])) < 1e-30);
            REQUIRE(numeric::contains(yb[c], ref[c]));
            REQUIRE(numeric::contains(yi[c], ref[c]));
            REQUIRE(std::fabs(yd[c] - numeric::approx_double(ref[c])) <
                    1e-12 * std::max(1.0, std::fabs(numeric::approx_double(ref[c]))));
        }
    }
}

} // namespace attnprop::test
