// The public face of the model generators (generators.hpp): every generated model of every
// family is valid and round-trips through the model-file writer. Every sample runs from a
// fixed seed, printed with each failure.
#include "gen/generators.hpp"

#include "model/json.hpp"
#include "model/model_file.hpp"
#include "gen_testing.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace attnprop;
using namespace attnprop::gen_testing;

TEST_CASE("generated models round-trip through the model-file writer", "[gen]") {
    struct family {
        const char* name;
        rc::Gen<exact_model> gen;
        int count;
    };
    const std::vector<family> families = {
        {"hard_model", gen::hard_model(), 200},
        {"dyadic_hard_model", gen::dyadic_hard_model(), 150},
        {"soft_model", gen::soft_model(), 150},
        {"near_tie_hard_model", gen::near_tie_hard_model(), 50},
        {"hard_model (larger bounds)", gen::hard_model({3, 3, 4, 4}), 40},
        {"soft_model (no ln, no tanh, no gelu)", gen::soft_model({2, 2, 3, 2, false, false, false}), 40},
    };
    const std::uint64_t seed = 20240601;
    for (const auto& f : families) {
        const auto models = sample(f.gen, seed, f.count);
        for (std::size_t k = 0; k < models.size(); ++k) {
            const exact_model& m = models[k];
            INFO(f.name << " sample " << k << " (seed " << seed << "): " << show(m));
            const std::string text = model::write_model(m);
            const exact_model again = model::parse_model(text, "round-trip");
            REQUIRE(model::write_model(again) == text);
            REQUIRE(json::dump(model::model_to_json(again), -1) ==
                    json::dump(model::model_to_json(m), -1));
            REQUIRE(m.source == "attnprop generator");
            REQUIRE_FALSE(m.description.empty());
            REQUIRE(m.num_layers() >= 1);
            const bool hard = m.attention == model::attention_kind::hard;
            REQUIRE(m.name == (hard ? "generated-hard" : "generated-soft"));
            if (hard) {
                REQUIRE(model::exact_blockers(m).empty());
            } else {
                REQUIRE_FALSE(model::has_singular_layer_norm(m));
                REQUIRE(m.out.type == model::readout<rational>::kind::softmax);
                REQUIRE(m.out.symbols.size() >= 2);
                REQUIRE(m.out.symbols.size() <= 3);
            }
            REQUIRE(show(m).find(unknown_placeholder) == std::string::npos);
        }
    }
}
