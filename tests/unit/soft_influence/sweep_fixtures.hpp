// What the sweep's unit tests share: a bundled model by name, and small sweep options (a few
// inputs and positions, one thread) so that each test case runs in well under a second.
#pragma once

#include "model/model_file.hpp"
#include "soft_influence/sweep.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnprop::test {

inline attnprop::model::model<attnprop::numeric::rational> bundled(const std::string& name) {
    return attnprop::model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

inline attnprop::analysis::sweep_options small(std::vector<long> ns, std::uint64_t seed = 11) {
    attnprop::analysis::sweep_options o;
    o.ns = std::move(ns);
    o.inputs = 2;
    o.positions = 4;
    o.seed = seed;
    o.threads = 1;
    return o;
}

} // namespace attnprop::test
