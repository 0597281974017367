#pragma once
/// @file hard.hpp
/// Hard attention (docs/theory.md, "The models"): every head puts weight 1 on the smallest key position attaining
/// the maximal score. One kernel for every scalar kind; the exact kind additionally has a
/// filtered path (hard_exact.hpp) that is as fast as doubles when nothing is close.

#include "attention/common.hpp"
#include "numeric/kind_list.hpp"

#include <optional>
#include <vector>

namespace attnprop::attention {

/// Where an enclosure could not decide an argmax.
struct undecided_argmax {
    std::size_t layer = 0;    ///< 1-based
    std::size_t position = 0; ///< 1-based query position
    std::size_t head = 0;     ///< 1-based
    std::vector<std::size_t> candidates; ///< 1-based key positions that may be selected
};

/// Per-layer activations and attention choices, for every position.
template <class S> struct hard_trace {
    std::vector<std::vector<vec<S>>> y;                     ///< y[k][j], k = 0..L
    /// choice[k-1][j][h], 0-based: the selected key (average-hard: the leftmost maximal one)
    std::vector<std::vector<std::vector<std::size_t>>> choice;
    /// Average-hard only: ties[k-1][j][h], every maximal key (0-based, ascending); empty for
    /// unique-hard models.
    std::vector<std::vector<std::vector<std::vector<std::size_t>>>> ties;
};

template <class S> struct hard_output {
    vec<S> y;                                  ///< y_n^(L) (valid when !undecided)
    std::optional<undecided_argmax> undecided; ///< set only for enclosures
    std::optional<hard_trace<S>> trace;
};

/// Forward pass computing only what y_n^(L) needs (the last layer at position n only), unless
/// `with_trace`. The dot-product scale and the inverse temperature are not applied: they are
/// positive, so the maximal scores do not depend on them. Unique-hard models take the value of
/// the leftmost maximal key; average-hard models the mean of the values of every maximal key
/// (weight 1/t each). Stops at the first argmax (or maximal set) an enclosure cannot decide. A value that
/// does not exist throws numeric::undefined_error located at its layer, node, position and head
/// (with a trace, a last-layer row other than n without a value is stored as no_value).
template <numeric::Scalar S>
hard_output<S> hard_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, bool with_trace = false);

/// Scores of one query row against every key (unscaled dot products or the score map).
template <numeric::Scalar S>
std::vector<S> hard_scores(const model::head<S>& h, const vec<S>& yi,
                           const std::vector<vec<S>>& keys_or_states, bool dot,
                           const numeric::context& ctx);

// Compiled once per kind (instantiate_hard.cpp): every user kind and the interval filter of
// the exact path.
#define ATTNPROP_HARD_EXTERN(S)                                                                    \
    extern template hard_output<S> hard_forward(const model::model<S>&, const input_sequence&,     \
                                                const numeric::context&, bool);
ATTNPROP_USER_KINDS(ATTNPROP_HARD_EXTERN)
ATTNPROP_HARD_EXTERN(numeric::interval)
#undef ATTNPROP_HARD_EXTERN

} // namespace attnprop::attention

#include "attention/hard_impl.hpp"
