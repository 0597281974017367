// A project using the installed attnprop: builds a hard model in code and evaluates it exactly.
#include <attention/hard_exact.hpp>
#include <model/model_file.hpp>

#include <iostream>

int main() {
    const char* text = R"({
      "format": "attnprop-model", "version": 1, "name": "first-is-one",
      "attention": "hard", "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": [0, 0], "1": [1, 0], "$": [0, 0]},
      "positional": {"kind": "formula", "dim": 2, "coordinates": [0, "[i==1]"]},
      "input": "add",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 0]], "K": [[0, 1]]},
                             "value": {"kind": "linear", "V": [[1, 0]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 1], [0, 0, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0], "t": "1/2"}
    })";
    using namespace attnprop;
    auto m = model::parse_model(text, "inline");
    auto x = model::parse_input(m, "10");
    auto r = attention::hard_forward_exact(m, x, numeric::context{});
    std::cout << (r.y[0] > numeric::rational(1, 2) ? "accept" : "reject") << "\n";
    return 0;
}
