#pragma once
/// @file incremental_influence.hpp
/// One-symbol updates of a soft-attention model with L <= 2 (design.md, "one-symbol updates"):
/// y_n^(L)(x[p <- a]) without a full forward pass.
///
/// - L = 1: only row n matters. Its softmax numerator and denominator per head are kept; a
///   change at p subtracts the old term of p and adds the new one: O(H d) per change.
/// - L = 2: every layer-1 row j != p gets the same rank-1 correction of its numerator and
///   denominator (one old and one new exponential per head and row), row p is recomputed (its
///   query changed), F_1 is applied to every row, and layer 2 is evaluated at row n only, with
///   its key projection folded onto the query side (u = scale K_2^T q_2, one dot of length d
///   per row) and its value map applied once to sum_j w_j y_j^(1). O(n (H d + cost(F_1))) per
///   change.
///
/// Two exact rewritings make the L = 2 rows cheap. With f_in add or concat, y_p^(0) moves by a
/// vector that depends only on (x_p, a), so the new exponential of row i is the old one times a
/// per-row factor precomputed for every symbol pair (one exponential per row and head instead
/// of two). With an affine F_1(y, b) = W (y, b_1, ..., b_H) + c, the corrected head output
/// b'_h = lambda_h b_h + alpha_h v_p + beta_h v'_p gives y'^(1) = y^(1) + sum_h ((lambda_h - 1)
/// A_h b_h + alpha_h A_h v_p + beta_h A_h v'_p) with A_h b_h precomputed per row (O(H d) per
/// row instead of evaluating F_1). Other F_1 (graphs, MLPs, layer norm) are evaluated per row.
///
/// The query, key, value, update and initial-state helpers of attention/common.hpp are the
/// ones soft_forward uses, so scales and positional embeddings are the same. A correction
/// whose subtraction would cancel (the old term holds all but a 2^-16 share of the row's
/// denominator, or the comparison is undecided for balls) or whose new term is not finite
/// recomputes that row from its keys instead (double overflow / cancellation fallback).
///
/// Kinds: double and MPFR give rounded values that agree with soft_forward to working
/// precision (not bit for bit: the operations differ); Arb balls give rigorous enclosures
/// (every operation is enclosed; subtracting an old term widens the ball by the old term's
/// radius, which at high precision stays far below the value).

#include "attention/common.hpp"

#include <cstddef>
#include <vector>

namespace attnprop::analysis {

/// Deliberate faults, for negative controls in tests only.
enum class incremental_fault {
    none,
    keep_old_term,      ///< add the new term of p without subtracting the old one
    skip_row_correction ///< L = 2: leave layer-1 rows j != p, n uncorrected
};

/// Whether the kernel supports the model: soft attention, 1 <= L <= 2, every head a dot-product
/// score with a scale in S and a linear value map (F_k and f_in arbitrary).
template <class S> bool incremental_supports(const model::model<S>& m);

/// The state of one input x kept for one-symbol updates.
template <numeric::ExpScalar S> class incremental_influence {
public:
    /// Precomputes the layer-1 sums of x (eos last, n = x.size() >= 2). Throws
    /// std::invalid_argument when incremental_supports(m) is false.
    incremental_influence(const model::model<S>& m, const model::input_sequence& x,
                          const numeric::context& ctx,
                          incremental_fault fault = incremental_fault::none);

    /// y_n^(L)(x).
    const model::vec<S>& base() const { return base_; }

    /// y_n^(L)(x[p <- a]) for a position p < n - 1 (0-based) and a symbol a of Σ.
    model::vec<S> changed(std::size_t p, int a) const;

private:
    struct head_state {
        std::vector<model::vec<S>> q;   ///< scaled queries (rows that are needed)
        std::vector<model::vec<S>> k;   ///< keys, every position
        std::vector<model::vec<S>> v;   ///< values, every position
        std::vector<S> shift;           ///< per row: the softmax shift
        std::vector<model::vec<S>> num; ///< per row: sum_j e_ij v_j
        std::vector<S> den;             ///< per row: sum_j e_ij
        /// f_in add or concat: y_p^(0) moves by the same vector for every p when x_p = b
        /// becomes a, so e'_ip = e_ip exp(q_i . K_W (v_a - v_b)); ratio[b |Σ| + a][row] holds
        /// that factor (one exponential per change and row instead of two).
        std::vector<std::vector<S>> ratio;
    };

    /// Full row i of layer-1 head h with position p's key and value replaced.
    model::vec<S> full_row(std::size_t h, const model::vec<S>& q, std::size_t p,
                           const model::vec<S>& kp, const model::vec<S>& vp) const;
    /// A_h x for the columns of an affine F_1 that multiply head h's output.
    model::vec<S> block_apply(std::size_t h, const model::vec<S>& x) const;
    /// Layer 2 at row n from every layer-1 state.
    model::vec<S> top(const std::vector<model::vec<S>>& y1) const;

    const model::model<S>& m_;
    model::input_sequence x_;
    numeric::context ctx_;
    incremental_fault fault_;
    std::size_t n_;
    std::size_t first_row_; ///< first layer-1 row kept (n - 1 for L = 1, 0 for L = 2)
    std::vector<model::vec<S>> y0_;
    std::vector<model::vec<S>> y1_; ///< L = 2: y^(1) of x for every row
    /// L = 2 with an affine F_1(y, b) = W (y, b_1, ..., b_H) + c: the columns of head h start
    /// at block_[h], and g_[h][i] = A_h b_{i,h} (A_h those columns), so that a corrected row
    /// is y_i^(1) + sum_h ((lambda_h - 1) g_[h][i] + alpha_h A_h v_p + beta_h A_h v'_p).
    const model::affine_map<S>* affine_ = nullptr;
    std::vector<std::size_t> block_;
    std::vector<std::vector<model::vec<S>>> g_;
    std::vector<head_state> heads_;
    model::vec<S> base_;
};

extern template class incremental_influence<double>;
extern template class incremental_influence<numeric::mpfr_real>;
extern template class incremental_influence<numeric::arb_ball>;
extern template bool incremental_supports(const model::model<double>&);
extern template bool incremental_supports(const model::model<numeric::mpfr_real>&);
extern template bool incremental_supports(const model::model<numeric::arb_ball>&);
extern template bool incremental_supports(const model::model<numeric::rational>&);

} // namespace attnprop::analysis
