#pragma once
/// @file soft.hpp
/// The soft pass (docs/theory.md, "The models"): every key weighted by the model's normaliser of
/// the scaled scores: softmax, StableMax or sparsemax, or elementwise by sigmoid of the scores
/// plus the layer's bias, weights that need not sum to 1 (docs/theory.md, "Attention
/// variants").
/// Softmax needs exp: its row kernels require ExpScalar, and over exact rationals a softmax
/// model is refused (the exact reference for it is an Arb ball enclosure at high precision);
/// StableMax and sparsemax are exact over the rationals.

#include "attention/common.hpp"
#include "numeric/kind_list.hpp"
#include "util/precondition.hpp"

#include <optional>
#include <vector>

namespace attnprop::attention {

/// Per-layer activations for every position, and (optionally) the attention weights.
template <class S> struct soft_trace {
    std::vector<std::vector<vec<S>>> y;                      ///< y[k][j], k = 0..L
    std::vector<std::vector<std::vector<vec<S>>>> weights;   ///< weights[k-1][i][h][j]
};

template <class S> struct soft_output {
    vec<S> y; ///< y_n^(L)
    std::optional<soft_trace<S>> trace;
};

/// Options of the soft forward pass.
struct soft_options {
    bool trace = false;         ///< keep y^(k) for every position
    bool trace_weights = false; ///< also keep every attention weight (n^2 per head and layer)
    /// Compute every row of the last layer too, without keeping them (for an observer); a row
    /// there that has no value is undefined, as row n is (a trace stores it as no_value).
    bool all_rows = false;
};

/// What the soft pass shows its observer of one head at one row.
template <class S> struct soft_head_row {
    std::size_t layer = 0; ///< 1-based
    std::size_t row = 0;   ///< 0-based query position
    std::size_t head = 0;  ///< 0-based
    /// The row's attention weights over every key when the observer wants_weights (or they are
    /// traced); nullptr for a head whose scores cannot vary (every weight is 1/n).
    const vec<S>* weights = nullptr;
    const vec<S>* output = nullptr; ///< the head's output b_h (finite)
};

/// Forward pass computing only what y_n^(L) needs unless a trace is asked for. A head whose
/// scores cannot vary is uniform (O(n) per layer); within a row the exponential of a score
/// value already seen is reused (when exp is expensive for S). A value that does not exist
/// (a layer norm at zero variance with eps = 0, NaN, ...) throws numeric::undefined_error
/// located at its layer, node, position and head; with a trace, a row of the last layer other
/// than n that has no value is stored as attention::no_value instead (the output does not read
/// it).
template <numeric::Scalar S>
soft_output<S> soft_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, soft_options opt = {});

/// The same pass, observed (docs/architecture.md, "The forward passes and their observers"):
/// when Observer::active, `obs.head_row(const soft_head_row<S>&)` after each head's output of a
/// row, and `obs.row(layer, i, y_i)` after the row's update (layer 1-based, i 0-based), layer
/// after layer, rows ascending, heads in order; with Observer::wants_weights every row's weights
/// are computed for it. A hook may throw numeric::undefined_error: it is located like the pass's
/// own (head_row at the head's "score", row at the row's "update"). soft_forward(m, x, ctx, opt)
/// is this pass with no_observer. A softmax model over a kind without exp is a
/// precondition_error.
template <numeric::Scalar S, class Observer>
soft_output<S> soft_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, soft_options opt, Observer& obs);

/// The attention rows of one dot-product head against fixed keys and values (one layer of a
/// forward pass, or of a one-symbol change): the keys and values are laid out once, and every
/// row reuses preallocated scratch. `vec<S> row(const vec<S>& q, vec<S>* weights)` gives
/// b = sum_j w_j v_j with w = softmax(q . k_j) for a scaled query q, and the weights into
/// `weights` when non-null (computed after b, which they do not change). The keys and values
/// must outlive the object. Kinds with fast paths specialise it (soft_impl.hpp,
/// soft_rows_interval.cpp): double and MPFR run the operations of the reference row
/// (detail::generic_soft_row) bit for bit, Arb balls and certified double intervals enclose
/// the same quantity; the certified double rows also give their unnormalised sums
/// (soft_rows<dinterval>::sums), which the incremental kernel and the a-posteriori bound read.
template <numeric::ExpScalar S> class soft_rows;

/// One attention row: b = sum_j w_j v_j with w = softmax(scale * q . k_j) over the keys j <
/// end (every key by default; a masked row's, model::key_end). `keys` and `values` hold K y_j
/// and V y_j for every j. Writes the weights into `weights` when non-null.
template <numeric::ExpScalar S>
vec<S> soft_row(const vec<S>& scaled_query, const std::vector<vec<S>>& keys,
                const std::vector<vec<S>>& values, const numeric::context& ctx,
                vec<S>* weights = nullptr, std::size_t end = all_keys);

/// The factor a dot-product head multiplies its query by at length n (eos included): the
/// score scale times the inverse temperature β(n) when the head has one (model::beta_at;
/// "length_scale": "log" is β = ln n, so at n = 1 every score is 0). Computed in S at the
/// context's precision: under Arb a ball enclosing scale·β(n). Precondition: h scores by a
/// dot product and h.score.scale is set (a precondition_error otherwise).
template <numeric::Scalar S>
S dot_scale(const model::head<S>& h, std::size_t n, const numeric::context& ctx) {
    // Exact rationals hold no irrational scale (model::exact_blockers refuses the model first).
    if (!h.score.scale) throw precondition_error("dot_scale: the score scale is not representable");
    const S& scale = *h.score.scale;
    if (auto beta = model::beta_at<S>(h.score, static_cast<long>(n), ctx)) return scale * *beta;
    return scale;
}

/// The weights the normaliser `k` gives the scores z (one row's, nonempty): softmax, StableMax
/// (s(z_j) / sum_k s(z_k), s(x) = x + 1 for x >= 0 and 1 / (1 - x) below) or sparsemax
/// (max(z_j - tau, 0), tau the root of sum_j max(z_j - tau, 0) = 1). Exact over the rationals
/// for StableMax and sparsemax; rigorous for enclosures: sparsemax's tau is computed exactly at
/// the midpoints and widened by the largest radius (tau is 1-Lipschitz in the sup norm), so the
/// support is never decided. A maximal-score kind is read by its softmax counterpart (as the
/// soft pass reads it). Sigmoid: sigma(z_j), each weight of its own score, not normalised (the
/// soft pass adds the layer's bias b(n) to the scores first). Softpick: relu(e^(z_j) - 1) /
/// (sum_k |e^(z_k) - 1| + eps), eps = 10^-8, weights summing to at most 1 (all 0 when no score
/// is positive: defined, not undefined). Linear and linear-sum: z holds the kernel values
/// phi(q) . phi(k_j) (detail::kernel_row), divided by their sum (a sum not certainly positive
/// is an undefined_error) or not. A non-finite score of a kind other than softmax is an
/// undefined_error; softmax, sigmoid, 1.5-entmax or softpick over a kind without exp a
/// precondition_error.
template <numeric::Scalar S>
vec<S> normalised_weights(model::attention_kind k, const vec<S>& z, const numeric::context& ctx);

/// Whether the soft pass forms a row of kind k by softmax's row kernels (soft_rows): softmax,
/// and a maximal-score kind read by its softmax counterpart; any other normaliser forms its
/// scores and then normalised_weights.
bool softmax_rows(model::attention_kind k);

/// Mean of the value vectors (a uniform head).
template <numeric::Scalar S>
vec<S> mean_value(const std::vector<vec<S>>& values, const numeric::context& ctx);

// Compiled once per kind (instantiate_soft.cpp): every user kind (exact rationals for the
// normalisers that are exact).
#define ATTNPROP_SOFT_EXTERN(S)                                                                    \
    extern template soft_output<S> soft_forward(const model::model<S>&, const input_sequence&,     \
                                                const numeric::context&, soft_options);
ATTNPROP_USER_KINDS(ATTNPROP_SOFT_EXTERN)
#undef ATTNPROP_SOFT_EXTERN

} // namespace attnprop::attention

#include "attention/soft_impl.hpp"
