#pragma once
/// @file hard_exact.hpp
/// Exact hard attention at close to double speed: every position is first evaluated in
/// outward-rounded double intervals (the filter); an argmax the filter cannot decide is decided
/// on exact rationals among its candidates only, and exact activations are computed only along
/// the positions the result depends on (the choice tree of y_n^(L)), memoised.

#include "attention/hard.hpp"
#include "numeric/filter.hpp"

namespace attnprop::attention {

/// How much of the exact path the filtered evaluation needed.
struct exact_path_stats {
    std::size_t rows_filtered = 0;   ///< (row, head) argmaxes decided by the interval filter
    std::size_t rows_exact = 0;      ///< (row, head) argmaxes decided on exact rationals
    std::size_t exact_states = 0;    ///< exact activations y_j^(k) computed
    /// The argmax filter per rung (numeric/filter.hpp): 0 midpoint-radius intervals of every
    /// score, 1 outward intervals of every score, 2 term-by-term intervals of the candidates,
    /// 3 exact rationals of the candidates (rows_filtered: decided at 0-2; rows_exact: at 3).
    numeric::filter_stats argmax;
};

struct exact_hard_output {
    vec<rational> y;                              ///< y_n^(L), exact
    std::optional<hard_trace<rational>> trace;    ///< exact, every position, when asked
    exact_path_stats stats;
};

/// Exact leftmost-argmax forward pass with the interval filter. Equal to
/// hard_forward<rational> on every input (tested), never undecided. Throws model::content_error
/// when the model needs real arithmetic (model::require_exact), numeric::undefined_error
/// (located) where a value does not exist (a positional formula's pole).
exact_hard_output hard_forward_exact(const model::model<rational>& m, const input_sequence& x,
                                     const numeric::context& ctx, bool with_trace = false);

} // namespace attnprop::attention
