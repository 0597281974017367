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

std::uint64_t forward_work(const model::model<numeric::rational>& m, std::size_t n,
                           long precision_bits) {
    const long double nn = static_cast<long double>(n);
    long double work = 0;
    for (const auto& lay : m.layers)
        for (const auto& h : lay.heads) {
            // A head of constant scores is a mean (n terms) only under a kind whose weights sum
            // to 1; the soft pass forms every row of the others (sigmoid, softpick, linear).
            if (constant_scores(h) && model::info(m.attention).sums_to_one) {
                work += nn;
            } else if (h.score.type == model::score_spec<rational>::kind::dot) {
                work += nn * nn * static_cast<long double>(std::max<std::size_t>(1, h.score.Q.out_dim()));
            } else {
                work += nn * nn * static_cast<long double>(std::max<std::size_t>(1, h.score.fn->in_dim));
            }
        }
    if (precision_bits > 256) {
        const long double f = static_cast<long double>(precision_bits) / 256;
        work *= f * f;
    }
    return saturate(work);
}

void check_forward_work(const model::model<numeric::rational>& m, std::size_t n,
                        long precision_bits) {
    const std::uint64_t w = forward_work(m, n, precision_bits);
    numeric::check_limit(numeric::limit::attention_work, w,
                         "one forward pass of " + m.name + " at n = " + std::to_string(n) +
                             (precision_bits > 256 ? " and " + std::to_string(precision_bits) +
                                                         " bits"
                                                   : std::string()) +
                             " computes about " + with_commas(w) + " score terms" +
                             (precision_bits > 256 ? " (counted at the cost of 256 bits)"
                                                   : std::string()));
}

} // namespace attnprop::attention
