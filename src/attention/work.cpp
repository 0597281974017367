#include "attention/work.hpp"

#include "attention/common.hpp"
#include "numeric/limits.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace attnprop::attention {

namespace {

std::uint64_t saturate(long double v) {
    constexpr auto top = std::numeric_limits<std::uint64_t>::max();
    return v >= static_cast<long double>(top) ? top : static_cast<std::uint64_t>(v);
}

} // namespace

std::string with_commas(std::uint64_t v) {
    const std::string digits = std::to_string(v);
    std::string s;
    s.reserve(digits.size() + digits.size() / 3);
    for (std::size_t k = 0; k < digits.size(); ++k) {
        if (k > 0 && (digits.size() - k) % 3 == 0) s.push_back(',');
        s.push_back(digits[k]);
    }
    return s;
}

std::uint64_t forward_work(const model::model<numeric::rational>& m, std::size_t n) {
    const long double nn = static_cast<long double>(n);
    long double work = 0;
    for (const auto& lay : m.layers)
        for (const auto& h : lay.heads) {
            if (constant_scores(h)) {
                work += nn;
            } else if (h.score.type == model::score_spec<rational>::kind::dot) {
                work += nn * nn * static_cast<long double>(std::max<std::size_t>(1, h.score.Q.out_dim()));
            } else {
                work += nn * nn * static_cast<long double>(std::max<std::size_t>(1, h.score.fn->in_dim));
            }
        }
    return saturate(work);
}

void check_forward_work(const model::model<numeric::rational>& m, std::size_t n) {
    const std::uint64_t w = forward_work(m, n);
    numeric::check_limit(numeric::limit::attention_work, w,
                         "one forward pass of " + m.name + " at n = " + std::to_string(n) +
                             " computes about " + with_commas(w) + " score terms");
}

} // namespace attnprop::attention
