// Soft models with a planted rare sensitive input (generators.hpp, planted_tie_soft_model): a
// layer norm tied only at one count of 1s, far from the counts uniform inputs have.
#include "gen/generators.hpp"

#include "model/model_file.hpp"

#include <rapidcheck.h>

#include <string>

namespace attnprop::gen {

model::model<numeric::rational> planted_tie_soft_model(const numeric::rational& threshold,
                                                       const numeric::rational& eps) {
    const std::string t = numeric::to_exact_string(threshold);
    const std::string e = numeric::to_exact_string(eps);
    // Layer 1 averages v_j = [x_j = 1] - t uniformly (Q = K = 0), so b = #1/n - t; the update
    // writes (b, -b) and normalises it: (b, -b)/sqrt(b^2 + eps), about (sgn b, -sgn b). The
    // readout's logits are (y_2, y_1) for ('0', '1').
    const std::string text = R"({"format": "attnprop-model", "version": 1,
  "name": "planted-tie-)" + t + "-eps-" + e + R"(",
  "description": "A planted rare sensitive input (attnprop's generator): a layer norm of (b, -b), b = #1/n - )" +
                             t + R"(, with eps = )" + e + R"(; a one-symbol change moves y by about 2 sqrt 2 only where the count of 1s crosses )" +
                             t + R"( n.",
  "attention": "soft", "alphabet": ["0", "1"], "eos": "$", "d": 2,
  "token_embedding": {"0": [0, 0], "1": [1, 0], "$": [0, 0]},
  "positional": {"kind": "formula", "dim": 2, "coordinates": {}},
  "input": "add",
  "layers": [{"heads": [{"score": {"kind": "dot", "Q": {"rows": 1, "cols": 2, "entries": []},
                                  "K": {"rows": 1, "cols": 2, "entries": []}, "scale": "default"},
                        "value": {"kind": "linear", "V": {"rows": 1, "cols": 2, "entries": [[0, 0, 1]]},
                                  "bias": [")" + numeric::to_exact_string(-threshold) + R"("]}}],
              "update": {"kind": "graph", "nodes": [
                {"id": "pm", "op": "linear", "in": "b1",
                 "W": {"rows": 2, "cols": 1, "entries": [[0, 0, 1], [1, 0, -1]]}},
                {"id": "norm", "op": "layer_norm", "in": "pm", "eps": ")" + e + R"("}],
                "output": "norm"}}],
  "readout": {"kind": "softmax", "symbols": ["0", "1"],
              "W": {"rows": 2, "cols": 2, "entries": [[0, 1, 1], [1, 0, 1]]}}})";
    return model::parse_model(text, "planted-tie-model.json");
}

rc::Gen<model::model<numeric::rational>> planted_tie_soft_model() {
    // The threshold k/16, k in {1, 2, 3, 13, 14, 15}: at least 5/16 away from the 1/2 that
    // uniform inputs concentrate at. eps = 10^-e, e in [6, 9]: the hypotheses hold (a layer
    // norm with eps > 0 is Lipschitz), and the change grows towards the tie (a slope for the
    // search to climb) but stays below about 10^-4 at the counts of uniform inputs.
    return rc::gen::map(rc::gen::pair(rc::gen::elementOf(std::vector<long>{1, 2, 3, 13, 14, 15}),
                                      rc::gen::inRange(6L, 10L)),
                        [](const std::pair<long, long>& p) {
                            numeric::rational eps(1);
                            for (long i = 0; i < p.second; ++i) eps /= 10;
                            return planted_tie_soft_model(numeric::rational(p.first, 16), eps);
                        });
}

} // namespace attnprop::gen
