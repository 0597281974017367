// Causally masked models for the masked statements (generators.hpp: causally_masked,
// masked_rate_witness).
#include "gen/generators.hpp"

#include "model/model_file.hpp"

#include <rapidcheck.h>

#include <string>

namespace attnprop::gen {

rc::Gen<model::model<numeric::rational>> causally_masked(rc::Gen<model::model<numeric::rational>> models) {
    return rc::gen::map(std::move(models), [](model::model<numeric::rational> m) {
        for (auto& l : m.layers) l.mask = model::mask_kind::causal;
        return m;
    });
}

rc::Gen<model::model<numeric::rational>> masked_rate_witness() {
    return rc::gen::map(rc::gen::pair(rc::gen::inRange(2, 4), rc::gen::inRange(1, 3)),
                        [](const std::pair<int, int>& lv) {
                            const std::string v = std::to_string(lv.second);
                            const std::string layer =
                                R"({"mask": "causal", "heads": [{"score": {"kind": "dot", "Q": [[0]], "K": [[0]]},
                                   "value": {"kind": "linear", "V": [[)" + v + R"(]]}}],
                                   "update": {"kind": "affine", "W": [[0, 1]]}})";
                            std::string layers;
                            for (int k = 0; k < lv.first; ++k) layers += (k ? ", " : "") + layer;
                            return model::parse_model(
                                R"({"format": "attnprop-model", "version": 1,
                                  "name": "masked-rate-witness-L)" + std::to_string(lv.first) + "-v" + v +
                                    R"(", "attention": "soft", "alphabet": ["0", "1"], "eos": "$", "d": 1,
                                  "token_embedding": {"0": [0], "1": [1], "$": [0]},
                                  "positional": {"kind": "formula", "dim": 1, "coordinates": [0]},
                                  "input": "add", "layers": [)" + layers + R"(],
                                  "readout": {"kind": "threshold", "w": [1], "t": "1/2"}})",
                                "masked-rate-witness");
                        });
}

} // namespace attnprop::gen
