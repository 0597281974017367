// The model class of a generated model (distribution tables) and RapidCheck's display of a
// model (generators.hpp: model_class, showValue).
#include "gen/generators.hpp"

#include "model/attention_kind.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"

#include <algorithm>
#include <array>
#include <ostream>
#include <string>

namespace attnprop::gen {

std::string model_class(const model::model<numeric::rational>& m) {
    std::size_t heads = 0;
    for (const auto& l : m.layers) heads = std::max(heads, l.heads.size());
    std::string out = std::string(model::to_string(m.attention)) +
                      " L" + std::to_string(m.layers.size()) + " H" + std::to_string(heads);
    if (model::any_masked(m)) out += model::all_causal(m) ? " causal" : " part-causal";
    constexpr auto kind_names = model::map_kind_names<numeric::rational>();
    std::array<bool, kind_names.size()> kinds{};
    bool relu = false, tanh = false, gelu = false, ln = false;
    model::for_each_map(m, [&](const model::map<numeric::rational>& f, const model::map_site&) {
        kinds[f.impl.index()] = true;
        const model::map_features ft = model::features(f);
        relu = relu || ft.uses(model::activation::relu);
        tanh = tanh || ft.uses(model::activation::tanh);
        gelu = gelu || ft.uses(model::activation::gelu);
        ln = ln || ft.layer_norm;
    });
    if (model::selects_maximum(m.attention)) {
        std::string tags;
        for (std::size_t k = 0; k < kinds.size(); ++k)
            if (kinds[k]) tags += (tags.empty() ? "" : "+") + std::string(kind_names[k]);
        if (!tags.empty()) out += " " + tags;
    } else {
        if (relu) out += " relu";
        if (tanh) out += " tanh";
        if (gelu) out += " gelu";
        if (ln) out += " ln";
        if (m.positional && m.positional->type == model::positional_spec::kind::sinusoidal)
            out += " sin";
    }
    return out;
}

} // namespace attnprop::gen

namespace attnprop::model {

void showValue(const model<numeric::rational>& m, std::ostream& os) {
    os << gen::model_class(m) << ": " << json::dump(model_to_json(m), -1);
}

} // namespace attnprop::model
