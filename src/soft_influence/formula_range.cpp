#include "soft_influence/formula_range.hpp"

namespace attnprop::analysis {

std::optional<value_range> formula_range(const model::expr& f, const numeric::context& ctx) {
    if (f.bounded() == false) return std::nullopt;
    return model::formula::range_over_domain(f.ast(), ctx);
}

} // namespace attnprop::analysis
