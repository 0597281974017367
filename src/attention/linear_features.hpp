#pragma once
/// @file linear_features.hpp
/// Linear attention's kernel (Katharopoulos, Vyas, Pappas and Fleuret 2020; docs/theory.md,
/// "Attention variants"): row i weighs key j by phi(q_i) . phi(k_j), phi the layer's feature map
/// applied to every coordinate of the query and key vectors, divided by the row's sum
/// (`linear`) or not (`linear-sum`). The scores q_i . k_j play no part, so neither does the
/// score scale or beta. The soft pass forms these kernel values (features_of, kernel_row) and
/// hands them to normalised_weights as the row's "scores"; linear_weights normalises them.

#include "model/model.hpp"
#include "numeric/scalar.hpp"
#include "util/precondition.hpp"

#include <string>
#include <vector>

namespace attnprop::attention::detail {

/// phi(x) of one coordinate. elu1: relu(x) + e^(-relu(-x)), which is x + 1 for x > 0 and e^x
/// otherwise in one expression of increasing parts, so an enclosure straddling 0 gets a
/// rigorous enclosure without deciding the sign; it needs exp (the exact scalar is refused
/// with a precondition_error; model::exact_blockers names the layer first). relu: max(x, 0),
/// exact over the rationals.
template <numeric::Scalar S>
S feature(const S& x, model::feature_map_kind f, const numeric::context& ctx) {
    switch (f) {
    case model::feature_map_kind::relu: return numeric::relu(x, ctx);
    case model::feature_map_kind::elu1:
        if constexpr (numeric::ExpScalar<S>)
            return numeric::relu(x, ctx) + numeric::exp(-numeric::relu(-x, ctx));
        else
            throw precondition_error("linear attention's feature map elu1 needs exp: the exact "
                                     "scalar does not evaluate it");
    }
    throw precondition_error("feature: not a feature map");
}

/// phi applied to every coordinate of v.
template <numeric::Scalar S>
std::vector<S> features_of(const std::vector<S>& v, model::feature_map_kind f,
                           const numeric::context& ctx) {
    std::vector<S> out;
    out.reserve(v.size());
    for (const S& x : v) out.push_back(feature(x, f, ctx));
    return out;
}

/// The kernel values phi(q) . phi(k_j) of the keys j < end, from the query's features and the
/// keys' (each nonnegative: a sum of products of nonnegative features).
template <numeric::Scalar S>
std::vector<S> kernel_row(const std::vector<S>& phi_q, const std::vector<std::vector<S>>& phi_k,
                          std::size_t end, const numeric::context& ctx) {
    std::vector<S> s;
    s.reserve(end);
    for (std::size_t j = 0; j < end; ++j)
        s.push_back(model::dot(phi_q.data(), phi_k[j].data(), phi_q.size(), ctx));
    return s;
}

/// Linear attention's weights of kernel values s (nonnegative): s_j / sum_k s_k when
/// `normalised`, s itself otherwise. A normalised row whose sum is not certainly positive is
/// undefined (relu features can make every s_j exactly 0): a sum that is 0 (exact or rounded),
/// NaN, or an enclosure containing 0 (where more precision may resolve it). Never a NaN passed
/// on.
template <numeric::Scalar S>
std::vector<S> linear_weights(const std::vector<S>& s, bool normalised, const numeric::context& ctx) {
    if (!normalised) return s;
    S den = numeric::zero<S>(ctx);
    for (const S& x : s) den += x;
    if (const auto sg = numeric::sign(den, ctx); sg != numeric::order::greater)
        // Only an enclosure that merely contains 0 may be resolved by more precision; an exact
        // 0 (a ball or interval of radius 0) is the pole itself.
        throw numeric::undefined_error(
            "linear attention's row sum phi(q) . sum_j phi(k_j) is " +
                std::string(sg == numeric::order::unknown ? "not certainly positive" : "0"),
            {}, numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure &&
                    sg == numeric::order::unknown);
    std::vector<S> w;
    w.reserve(s.size());
    for (const S& x : s) w.push_back(x / den);
    return w;
}

} // namespace attnprop::attention::detail
