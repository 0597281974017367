#pragma once
// A hand-checkable soft model shared by the analysis tests.
#include <string>

namespace attnprop::test {

/// One hand-checkable layer: y^(0) = v (v_0 = (1, 0), v_1 = (-1, 0), v_$ = (0, 1)); one head
/// with score y_i[0] y_j[0] (μ = 1), value 2 y[0] (ν = 2); F(y, b) = (y_0 + b, y_1).
inline std::string hand_model(int layers) {
    std::string layer = R"({"heads": [{"score": {"kind": "dot", "Q": [[1, 0]], "K": [[1, 0]], "scale": 1},
                                      "value": {"kind": "linear", "V": [[2, 0]]}}],
                          "update": {"kind": "affine", "W": [[1, 0, 1], [0, 1, 0]]}})";
    std::string all = layer;
    for (int k = 1; k < layers; ++k) all += ", " + layer;
    return R"({"format": "attnprop-model", "version": 1, "name": "hand", "attention": "soft",
      "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": [1, 0], "1": [-1, 0], "$": [0, 1]},
      "positional": {"kind": "formula", "dim": 2, "coordinates": [0, 0]},
      "input": "add", "layers": [)" +
           all + R"(],
      "readout": {"kind": "softmax", "symbols": ["a", "b"], "W": [[1, 0], [0, 0]]}})";
}

} // namespace attnprop::test
