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

/// Options of the observed hard pass.
struct hard_options {
    bool trace = false; ///< keep y^(k), the choices and the ties of every position (as above)
    /// Compute every row of the last layer too, without keeping them; a row there that has no
    /// value is undefined, as row n is (a trace stores it as no_value).
    bool all_rows = false;
    /// Compute every value v(y_j) of every head at the start of its layer (located at node
    /// "value" like the values computed on demand), for an observer that reads them.
    bool all_values = false;
};

/// What the hard pass shows its observer at the start of layer k.
template <class S> struct hard_layer_view {
    std::size_t layer = 0;                                  ///< k, 1-based
    const std::vector<vec<S>>* y = nullptr;                 ///< y^(k-1), every position
    /// Per head: every key K y_j + k_b of a dot-product head whose scores vary, else empty.
    const std::vector<std::vector<vec<S>>>* keys = nullptr;
    /// Per head and position: the values computed so far (every one with all_values).
    const std::vector<std::vector<std::optional<vec<S>>>>* values = nullptr;
};

/// What the hard pass shows its observer of one head at one row.
template <class S> struct hard_head_row {
    std::size_t layer = 0; ///< 1-based
    std::size_t row = 0;   ///< 0-based query position
    std::size_t head = 0;  ///< 0-based
    /// The row's scores against every key it attends to (unscaled; the keys [0, end) of a
    /// masked row); nullptr for a head whose scores cannot vary (every key ties).
    const std::vector<S>* scores = nullptr;
    /// The keys the head weighs, 0-based ascending: {j*} (unique-hard), every maximal key
    /// (average-hard).
    const std::vector<std::size_t>* selected = nullptr;
    const vec<S>* output = nullptr; ///< the head's output b_h
};

/// The same pass, observed (docs/architecture.md, "The forward passes and their observers"):
/// when Observer::active, `obs.initial(y0)` with y^(0), `obs.layer(const hard_layer_view<S>&)`
/// at the start of each layer, `obs.head_row(const hard_head_row<S>&)` after each head's output
/// of a row, and `obs.row(layer, i, y_i)` after the row's update (layer 1-based, i 0-based),
/// rows ascending and heads in order. A hook may throw numeric::undefined_error: it is located
/// like the pass's own. An enclosure that cannot decide an argmax stops the pass as above (no
/// hook is called for that row). hard_forward(m, x, ctx, with_trace) is this pass with
/// no_observer and hard_options{with_trace}.
template <numeric::Scalar S, class Observer>
hard_output<S> hard_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, const hard_options& opt, Observer& obs);

/// Scores of one query row against the keys [0, end) (every key by default; a masked row's
/// key range, model::key_end): unscaled dot products or the score map.
template <numeric::Scalar S>
std::vector<S> hard_scores(const model::head<S>& h, const vec<S>& yi,
                           const std::vector<vec<S>>& keys_or_states, bool dot,
                           const numeric::context& ctx,
                           std::size_t end = static_cast<std::size_t>(-1));

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
