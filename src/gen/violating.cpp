// Random soft models that break one hypothesis of Claim 2 (generators.hpp,
// soft_model_violating): a planted FIRST mechanism of random strength, plus (one-layer
// families) a random background head that satisfies every hypothesis.
#include "gen/generators.hpp"

#include "model/model_file.hpp"

#include <rapidcheck.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace attnprop::gen {

namespace {

/// k/q as a JSON string (exact rational).
std::string frac(int k, int q) { return "\"" + std::to_string(k) + "/" + std::to_string(q) + "\""; }

/// The parameters of one draw: strengths are k/2 with k in [1, 4] (1/2 .. 2), background
/// weights k/4 with k in [-2, 2].
struct violating_spec {
    violated_hypothesis family = violated_hypothesis::bounded_embeddings;
    int strength = 2; ///< the mechanism's score strength c (k/2)
    int amplitude = 2; ///< the value amplitude a (k/2)
    int step = 2;      ///< lipschitz-updates: the step's output amplitude (k/2)
    std::vector<int> background; ///< 5 weights: Q_00, K_00, Q_11, K_11, V (k/4 each)
};

/// The background head: the eos query scores the token coordinates 0 and 1 of every key
/// (bounded, n-independent dot-product scores), a linear value of token 1 into one output. It
/// satisfies every hypothesis; its influence is O(1/n).
std::string background_head(const std::vector<int>& w) {
    std::ostringstream os;
    os << R"({"score": {"kind": "dot", "Q": {"rows": 2, "cols": 5, "entries": [[0, 2, )"
       << frac(w[0], 4) << "], [1, 2, " << frac(w[2], 4)
       << R"(]]}, "K": {"rows": 2, "cols": 5, "entries": [[0, 0, )" << frac(w[1], 4)
       << "], [1, 1, " << frac(w[3], 4)
       << R"(]]}, "scale": 1}, "value": {"kind": "linear", "V": {"rows": 1, "cols": 5, )"
       << R"("entries": [[0, 1, )" << frac(w[4], 4) << "]]}}}";
    return os.str();
}

/// One layer, d = 5 (tokens 0, 1, eos; a positional coordinate; the logit): the eos query
/// scores the positional coordinate, the value is a (x_j - 1/2), F = y + W b adds both heads'
/// outputs to the logit.
std::string one_layer(const violating_spec& s, const std::string& name, const std::string& pos,
                      const std::string& mechanism_score) {
    std::ostringstream os;
    os << R"({"format": "attnprop-model", "version": 1, "name": ")" << name << R"(",
  "description": "A random hypothesis-violating control (attnprop's generator).",
  "attention": "soft", "alphabet": ["0", "1"], "eos": "$", "d": 5,
  "token_embedding": {"0": [1, 0, 0, 0, 0], "1": [0, 1, 0, 0, 0], "$": [0, 0, 1, 0, 0]},
  "positional": {"kind": "formula", "dim": 5, "coordinates": {"3": ")"
       << pos << R"("}}, "input": "add",
  "layers": [{"heads": [)"
       << mechanism_score << R"(, "value": {"kind": "linear", "V": {"rows": 1, "cols": 5, )"
       << R"("entries": [[0, 0, )" << frac(-s.amplitude, 4) << "], [0, 1, "
       << frac(s.amplitude, 4) << "]]}}}, " << background_head(s.background) << R"(],
    "update": {"kind": "graph", "nodes": [
      {"id": "att", "op": "linear", "in": "b",
       "W": {"rows": 5, "cols": 2, "entries": [[4, 0, 1], [4, 1, 1]]}},
      {"id": "r1", "op": "add", "in": ["y", "att"]}], "output": "r1"}}],
  "readout": {"kind": "softmax", "symbols": ["0", "1"],
              "W": {"rows": 2, "cols": 5, "entries": [[1, 4, 1]]}, "c": [0, 0]}})";
    return os.str();
}

model::model<numeric::rational> build(const violating_spec& s) {
    const std::string c = frac(s.strength, 2);
    switch (s.family) {
    case violated_hypothesis::bounded_embeddings:
        // Key -c i: position 1 keeps weight (1 - e^-c) / (1 - e^-cn) at every n.
        return model::parse_model(
            one_layer(s, "violating-bounded-embeddings", "i",
                      R"({"score": {"kind": "dot", "Q": {"rows": 1, "cols": 5, "entries": [[0, 2, 1]]},)"
                      R"( "K": {"rows": 1, "cols": 5, "entries": [[0, 3, -1]]}, "scale": )" +
                          c + "}"),
            "<generated>");
    case violated_hypothesis::dot_product_scores:
        // Score c ln n [j = 1] with c in [3/2, 3]: position 1 keeps weight
        // n^c / (n^c + n - 1) >= 1/2 at every n, tending to 1.
        return model::parse_model(
            one_layer(s, "violating-dot-product-scores", "[i==1]",
                      R"({"score": {"kind": "dot", "Q": {"rows": 1, "cols": 5, "entries": [[0, 2, 1]]},)"
                      R"( "K": {"rows": 1, "cols": 5, "entries": [[0, 3, 1]]}, "scale": )" +
                          frac(s.strength + 2, 2) + R"(, "length_scale": "log"})"),
            "<generated>");
    case violated_hypothesis::lipschitz_updates: {
        // cc-first's two layers (layer 1 marks x_1 = 1 at position 1; layer 2 attends to it
        // with score c [j = 1]), then a step of the logit: z has the sign of x_1 - 1/2, so the
        // step moves by its amplitude whenever x_1 flips.
        std::ostringstream os;
        os << R"({"format": "attnprop-model", "version": 1, "name": "violating-lipschitz-updates",
  "description": "A random hypothesis-violating control (attnprop's generator).",
  "attention": "soft", "alphabet": ["0", "1"], "eos": "$", "d": 6,
  "token_embedding": {"0": [1, 0, 0, 0, 0, 0], "1": [0, 1, 0, 0, 0, 0], "$": [0, 0, 1, 0, 0, 0]},
  "positional": {"kind": "formula", "dim": 6, "coordinates": {"3": "[i==1]"}}, "input": "add",
  "layers": [
    {"heads": [{"score": {"kind": "dot", "Q": {"rows": 6, "cols": 6, "entries": []},
                          "K": {"rows": 6, "cols": 6, "entries": []}, "scale": "default"},
                "value": {"kind": "linear", "V": {"rows": 6, "cols": 6, "entries": []}}}],
     "update": {"kind": "graph", "nodes": [
       {"id": "att", "op": "linear", "in": "b", "W": {"rows": 6, "cols": 6, "entries": []}},
       {"id": "r1", "op": "add", "in": ["y", "att"]},
       {"id": "h", "op": "linear", "in": "r1",
        "W": {"rows": 1, "cols": 6, "entries": [[0, 1, 1], [0, 3, 1]]}, "b": [-1]},
       {"id": "a", "op": "relu", "in": "h"},
       {"id": "f", "op": "linear", "in": "a", "W": {"rows": 6, "cols": 1, "entries": [[4, 0, 1]]}},
       {"id": "r2", "op": "add", "in": ["r1", "f"]}], "output": "r2"}},
    {"heads": [{"score": {"kind": "dot", "Q": {"rows": 6, "cols": 6, "entries": [[0, 2, 1]]},
                          "K": {"rows": 6, "cols": 6, "entries": [[0, 3, 1]]}, "scale": )"
           << c << R"(},
                "value": {"kind": "linear", "V": {"rows": 6, "cols": 6,
                          "entries": [[5, 3, )"
           << frac(-s.amplitude, 4) << "], [5, 4, " << frac(s.amplitude, 2) << R"(]]}}}],
     "update": {"kind": "graph", "nodes": [
       {"id": "att", "op": "linear", "in": "b", "W": {"rows": 6, "cols": 6, "entries": [[5, 5, 1]]}},
       {"id": "r1", "op": "add", "in": ["y", "att"]},
       {"id": "z", "op": "linear", "in": "r1", "W": {"rows": 1, "cols": 6, "entries": [[0, 5, 1]]}},
       {"id": "s", "op": "step", "in": "z"},
       {"id": "o", "op": "linear", "in": "s", "W": {"rows": 6, "cols": 1, "entries": [[5, 0, )"
           << frac(s.step, 2) << R"(]]}},
       {"id": "r2", "op": "add", "in": ["r1", "o"]}], "output": "r2"}}],
  "readout": {"kind": "softmax", "symbols": ["0", "1"],
              "W": {"rows": 2, "cols": 6, "entries": [[1, 5, 1]]}, "c": [0, 0]}})";
        return model::parse_model(os.str(), "<generated>");
    }
    }
    throw std::logic_error("soft_model_violating: unknown family");
}

} // namespace

const char* to_string(violated_hypothesis h) {
    switch (h) {
    case violated_hypothesis::bounded_embeddings: return "bounded-embeddings";
    case violated_hypothesis::dot_product_scores: return "dot-product-scores";
    case violated_hypothesis::lipschitz_updates: return "lipschitz-updates";
    }
    return "?";
}

rc::Gen<model::model<numeric::rational>> soft_model_violating(violated_hypothesis h) {
    return rc::gen::map(
        rc::gen::tuple(rc::gen::inRange(1, 5), rc::gen::inRange(1, 5), rc::gen::inRange(1, 5),
                       rc::gen::container<std::vector<int>>(5, rc::gen::inRange(-2, 3))),
        [h](std::tuple<int, int, int, std::vector<int>> t) {
            violating_spec s;
            s.family = h;
            s.strength = std::get<0>(t);
            s.amplitude = std::get<1>(t);
            s.step = std::get<2>(t);
            s.background = std::move(std::get<3>(t));
            return build(s);
        });
}

} // namespace attnprop::gen
