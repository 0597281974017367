#pragma once
// Hand-built hard models of the restriction tests, whose ρ, D_L(n) and c_obs are known.
#include "hard_limit/restriction.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace attnprop::restriction_testing {

using analysis::restriction_options;
using numeric::rational;


inline model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

/// Scores every key by x_j (eos scores 1 and sits at position n); the value is [j == n], so
/// y = 1 iff no x_j = 1: the leftmost 1 wins, else eos. Exact ties everywhere at G = 1.
inline model::model<rational> first_one_or_eos() {
    return model::parse_model(R"({
      "format": "attnprop-model", "version": 1, "name": "first-one-or-eos", "attention": "hard",
      "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": [0, 0], "1": [1, 0], "$": [1, 0]},
      "positional": {"kind": "formula", "dim": 2, "coordinates": [0, "[i==n]"]},
      "input": "add",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[1, 0]]},
                             "value": {"kind": "linear", "V": [[0, 1]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0], "t": "1/2"}})",
                              "first-one-or-eos");
}

/// Attends to position 3 (score -(j-3)^2 from positional features) and copies x_3.
inline model::model<rational> attend_three(const std::string& alphabet_json = R"(["0", "1"])",
                                    const std::string& tokens = R"("0": [0, 0, 0, 0], "1": [1, 0, 0, 0])") {
    return model::parse_model(R"({
      "format": "attnprop-model", "version": 1, "name": "attend-three", "attention": "hard",
      "alphabet": )" + alphabet_json + R"(, "eos": "$", "d": 4,
      "token_embedding": {)" + tokens + R"(, "$": [0, 0, 0, 0]},
      "positional": {"kind": "formula", "dim": 4, "coordinates": [0, "i", "i^2", 1]},
      "input": "add",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 0, 0, 0]], "q_bias": [1],
                                       "K": [[0, 6, -1, -9]]},
                             "value": {"kind": "linear", "V": [[1, 0, 0, 0]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 0, 0, 1], [0, 1, 0, 0, 0],
                                                     [0, 0, 1, 0, 0], [0, 0, 0, 1, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0, 0, 0], "t": "1/2"}})",
                              "attend-three");
}

inline restriction_options no_pins(long n) {
    restriction_options o;
    o.free_fraction = rational(n - 1, n); // ⌈C n⌉ = n − 1: the greedy may not pin anything
    return o;
}

inline void require_valid(const model::model<rational>& m, const analysis::restriction& r) {
    auto cert = analysis::certify(m, r);
    INFO(cert.checks.back().detail);
    REQUIRE(cert.complete);
    REQUIRE(cert.valid);
}

} // namespace attnprop::restriction_testing
