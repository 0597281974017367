#pragma once
// Models and inputs that the tests of the incremental one-symbol kernel and of the influence
// profiles share: bundled models, random inputs, random affine-update soft models, and the
// comparison of MPFR values within a relative tolerance.

#include "model/model_file.hpp"
#include "numeric/kind_list.hpp"

#include <cstdint>
#include <random>
#include <string>

namespace attnprop::test {

using model::vec;
using numeric::mpfr_real;
using numeric::rational;

inline model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

inline rational pow2_inverse(int k) {
    rational t = 1;
    for (int i = 0; i < k; ++i) t /= 2;
    return t;
}

/// |a - b| <= tol * max(1, |b|), exactly in rationals.
inline bool close(const mpfr_real& a, const mpfr_real& b, const rational& tol) {
    const rational qa = numeric::to_rational(a), qb = numeric::to_rational(b);
    const rational diff = numeric::abs(rational(qa - qb));
    rational scale = numeric::abs(qb);
    if (scale < 1) scale = 1;
    return diff <= tol * scale;
}

inline model::input_sequence random_input(const model::model<rational>& m, std::size_t n,
                                          std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto sigma = static_cast<std::uint64_t>(m.sigma.symbols.size());
    model::input_sequence x(n);
    for (auto& s : x) s = static_cast<int>(rng() % sigma);
    x.back() = m.sigma.eos_index();
    return x;
}

/// A random soft model with affine updates F(y, b) = W (y, b_1, b_2) + c (the folded path of
/// the kernel): d = 4, two heads of width 2, weights k/den (den = 8 unless given) with k
/// uniform in [-4, 4], positional
/// coordinates i/n and (-1)^i, concatenated input. The query weights are multiplied by
/// q_scale (a large one makes attention nearly hard, so that changing the dominant key of a row
/// trips the cancellation guard).
inline std::string affine_model(std::uint64_t seed, int layers, int q_scale = 1, int den = 8) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> k(-4, 4);
    auto num = [&](int scale) {
        return "\"" + std::to_string(scale * k(rng)) + "/" + std::to_string(den) + "\"";
    };
    auto mat = [&](int rows, int cols, int scale = 1) {
        std::string s = "[";
        for (int r = 0; r < rows; ++r) {
            s += r ? ", [" : "[";
            for (int c = 0; c < cols; ++c) s += (c ? ", " : "") + num(scale);
            s += "]";
        }
        return s + "]";
    };
    auto head = [&] {
        return R"({"score": {"kind": "dot", "Q": )" + mat(2, 4, q_scale) + R"(, "K": )" + mat(2, 4) +
               R"(}, "value": {"kind": "linear", "V": )" + mat(2, 4) + "}}";
    };
    std::string all;
    for (int l = 0; l < layers; ++l) {
        std::string h1 = head(), h2 = head(), w = mat(4, 8), b = mat(1, 4);
        all += std::string(l ? ", " : "") + R"({"heads": [)" + h1 + ", " + h2 +
               R"(], "update": {"kind": "affine", "W": )" + w + R"(, "b": )" +
               b.substr(1, b.size() - 2) + "}}";
    }
    return R"({"format": "attnprop-model", "version": 1, "name": "affine", "attention": "soft",
      "alphabet": ["0", "1"], "eos": "$", "d": 4,
      "token_embedding": {"0": [1, 0], "1": [-1, 1], "$": [0, 2]},
      "positional": {"kind": "formula", "dim": 2, "coordinates": ["i/n", "(-1)^i"]},
      "input": "concat", "layers": [)" +
           all + R"(],
      "readout": {"kind": "softmax", "symbols": ["a", "b"], "W": [[1, 0, 0, 0], [0, 1, 0, 0]]}})";
}

} // namespace attnprop::test
