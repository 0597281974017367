#pragma once
// Small models written inline for the attention tests.
#include "model/model_file.hpp"

#include <functional>
#include <string>

namespace attnprop::test {

/// Parses an inline model file text (test helper).
inline model::model<numeric::rational> inline_model(const std::string& text) {
    return model::parse_model(text, "inline-test-model");
}

/// An r x c matrix in the model format's JSON, each entry a call of `entry` (a JSON number or
/// string), rows in order.
inline std::string json_matrix(int r, int c, const std::function<std::string()>& entry) {
    std::string s = "[";
    for (int i = 0; i < r; ++i) {
        s += i ? ", [" : "[";
        for (int j = 0; j < c; ++j) s += (j ? ", " : "") + entry();
        s += "]";
    }
    return s + "]";
}

/// A one-layer hard model on {0,1}: every key j scores by a positional table entry; the head
/// copies the position index of the selected key into y_n^(1)[0].
inline std::string keyed_table_model(const std::string& keys_rows) {
    return R"({"format": "attnprop-model", "version": 1, "name": "keyed", "attention": "hard",
      "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": [0, 0], "1": [0, 0], "$": [0, 0]},
      "positional": {"kind": "table", "rows": )" +
           keys_rows + R"(},
      "input": "add",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[1, 0]]},
                              "value": {"kind": "linear", "V": [[0, 1]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 1], [0, 0, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0], "t": 0}})";
}

} // namespace attnprop::test
