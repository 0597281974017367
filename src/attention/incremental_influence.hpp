#pragma once
/// @file incremental_influence.hpp
/// One-symbol updates of a soft-attention model with L <= 2: y_n^(L)(x[p <- a]) without a full
/// forward pass (measured in docs/performance.md, "One-symbol influence profile, L = 2").
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
/// MPFR (every kept value at the context's precision, L = 2, affine F_1) runs the rows on raw
/// mpfr_t operations into scratch kept in the object, and keeps the unnormalised layer-1
/// weights e_ij = exp(s_ij - shift_i) of x in a compact table when it fits (n^2 H entries;
/// about 1.4 GB for n = 4096, H = 2 at 256 bits; default limit default_table_bytes). Every e_ij
/// is then computed once, in the constructor: a change reads e_ip for the rank-1 corrections
/// and rebuilds row p from e_pj times exp(Δq . k_j), Δq the change of p's scaled query
/// (f_in add or concat; relative to row p's old shift, all terms positive). Without the table
/// each change recomputes the column and row of p (2 n exponentials per head) with the
/// constructor's operations, so the results are bit-identical with and without the tables.
///
/// A causal mask (docs/architecture.md, "The per-layer mask") matters in layer 1 of L = 2 alone:
/// row n of the top layer attends to every key either way. Row i of a masked layer 1 keeps its
/// sums over the keys j <= i, so a change at p leaves the rows i < p as they are, corrects the
/// rows i > p by the same rank-1 update (key p is in their range) and recomputes row p over the
/// keys j <= p: about half the rows of an unmasked change on average. Such a model runs the
/// generic members in every kind (the raw MPFR kernels and the certified double kernel keep
/// sums over every key and are not taken).
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
/// radius, which at high precision stays far below the value). Certified double intervals are
/// enclosures too: with L = 2 and an affine F_1 the folded rows run on double midpoints with an
/// a-priori radius per row (incremental_interval_kernel), the rest in interval operations.

#include "attention/common.hpp"
#include "numeric/kind_list.hpp"
#include "util/huge_pages.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace attnprop::attention {

template <numeric::ExpScalar S> class soft_rows; // attention/soft.hpp

/// Deliberate faults, for negative controls in tests only.
enum class incremental_fault {
    none,
    keep_old_term,       ///< add the new term of p without subtracting the old one
    skip_row_correction, ///< L = 2: leave layer-1 rows j != p, n uncorrected
    drop_fold_bound,     ///< certified double kernel: leave out the a-priori radius of a folded row
    midpoint_omega,      ///< certified double kernel: the weights ω from midpoints, no rounding
    drop_row_p_bound,    ///< certified double kernel: leave out row p's a-priori bound (prepared or
                         ///< not)
    drop_moved_radius,   ///< certified double kernel: y1_moved from the midpoints alone
    drop_outward_widening, ///< certified double kernel: a folded row stored as [fl(M - R), fl(M +
                           ///< R)]
    loose_top_omega,       ///< certified double kernel: the top layer's ω as x''s weight of key p
                           ///< alone, no minimum with x's (changed_for_bound)
    ignore_mask            ///< masked layer 1: correct the rows i < p too, as if they attended
                           ///< to key p
};

namespace detail {

/// A rows x cols table of MPFR values of one precision, stored compactly (significand limbs,
/// exponent and kind per entry, no mpfr_t per entry); view() gives a read-only mpfr_t that
/// points into the table (no allocation).
class mpfr_table {
public:
    mpfr_table(std::size_t rows, std::size_t cols, long precision_bits);
    /// Bytes an entry takes at this precision.
    static std::size_t entry_bytes(long precision_bits);
    /// Stores x, which must have the table's precision.
    void set(std::size_t i, std::size_t j, mpfr_srcptr x);
    /// Makes *out a read-only view of entry (i, j); valid while the table lives.
    void view(std::size_t i, std::size_t j, mpfr_ptr out) const;

private:
    std::size_t cols_, limbs_per_;
    long prec_;
    std::vector<mp_limb_t> limbs_;
    std::vector<mpfr_exp_t> exp_;
    std::vector<signed char> kind_;
};

} // namespace detail

/// Whether incremental_influence<S> has raw kernels: operations on the kind's own
/// representation into scratch kept in the object (MPFR: mpfr_t, see the file comment). The
/// kernels are explicit specialisations of its *_raw members (declared below the class),
/// selected at compile time; other kinds have none.
template <class S> inline constexpr bool incremental_raw_kernels = false;
template <> inline constexpr bool incremental_raw_kernels<numeric::mpfr_real> = true;

/// Whether incremental_influence<S> has the midpoint-radius kernel of certified double
/// intervals: L = 2 with an affine F_1, the folded rows of layer 1 on double midpoints with one
/// a-priori radius per row and change (docs/scalars.md, "One-symbol changes in certified double
/// intervals"), and layer 2 by the certified soft-attention row
/// (attention::soft_rows<dinterval>). Explicit specialisations of the *_interval
/// members (declared below the class); other kinds have none.
template <class S> inline constexpr bool incremental_interval_kernel = false;
template <> inline constexpr bool incremental_interval_kernel<numeric::dinterval> = true;

/// Default memory for the MPFR kernel's layer-1 weight tables (per incremental_influence).
inline constexpr std::size_t default_table_bytes = std::size_t{2} << 30;

/// Whether the kernel supports the model: soft attention, 1 <= L <= 2, every head a dot-product
/// score with a scale in S and a linear value map (F_k and f_in arbitrary), each layer unmasked
/// or causally masked.
template <class S> bool incremental_supports(const model::model<S>& m);

/// The state of one input x kept for one-symbol updates.
template <numeric::ExpScalar S> class incremental_influence {
public:
    /// Precomputes the layer-1 sums of x (eos last, n = x.size() >= 2). Throws
    /// precondition_error when incremental_supports(m) is false.
    /// MPFR with L = 2: when the unnormalised layer-1 weights e_ij = exp(s_ij - shift_i) of
    /// every head fit in table_bytes, they are kept (computed once here) and a change reads
    /// them instead of recomputing them: no layer-1 exponential per change and row, and row p
    /// from e_pj times a factor per (x_p, a) and key (f_in add or concat).
    /// Certified double intervals with L = 2 and f_in add or concat: row p of layer 1 of
    /// every change x_p <- a at the positions `changed_positions` (nullptr: every position
    /// before eos; every replacement a) is prepared here, while x's row p is at hand: its
    /// weights are x's times exp(dq . k_j), no exponential per key and change
    /// (soft_rows::sums_scaled), and a change adds the new key p's term. Up to
    /// max_prepared_symbols symbols and max_prepared_bytes, for the symbols x_p at
    /// min_prepared_positions of the positions at least; a change that was not prepared takes
    /// row p by the certified row (soft_rows::sums_replaced).
    incremental_influence(const model::model<S>& m, const model::input_sequence& x,
                          const numeric::context& ctx,
                          incremental_fault fault = incremental_fault::none,
                          std::size_t table_bytes = default_table_bytes,
                          const std::vector<std::size_t>* changed_positions = nullptr);
    /// The largest alphabet whose changes' rows p the constructor prepares, and the most
    /// memory their sums may take (1 + d_v intervals per position, replacement and head: 1.2 MB
    /// at n = 4096, H = 2, d_v = 8, binary alphabet).
    static constexpr std::size_t max_prepared_symbols = 16;
    static constexpr std::size_t max_prepared_bytes = std::size_t{256} << 20;
    /// Row p is prepared for a symbol x_p at this many of the positions asked at least (its
    /// factors cost about five rows per replacement and head).
    static constexpr std::size_t min_prepared_positions = 4;

    /// y_n^(L)(x).
    const model::vec<S>& base() const { return base_; }
    /// x's states: y^(0) (every row) and, for L = 2, y^(1) (every row; empty for L = 1), the
    /// ones posterior_cache reads besides y_n^(L) (no forward pass with trace needed).
    const std::vector<model::vec<S>>& initial_states() const { return y0_; }
    const std::vector<model::vec<S>>& layer1_states() const { return y1_; }

    /// Testing: layer 1's kept state of x's row i (i = n - 1 alone for L = 1) and head h: the
    /// shift M_i, the enclosure of D_i = Σ_j exp(s_ij - M_i) (s_ij the scaled scores) and,
    /// with the certified double kernel's weight tables, of e_ij = exp(s_ij - M_i) (else none).
    const S& row_shift(std::size_t h, std::size_t i) const { return heads_.at(h).shift.at(i - first_row_); }
    const S& row_den(std::size_t h, std::size_t i) const { return heads_.at(h).den.at(i - first_row_); }
    std::optional<S> row_weight(std::size_t h, std::size_t i, std::size_t j) const {
        if constexpr (interval_kernel)
            if (!etab_.empty() && h < heads_.size() && i < n_ && j < n_) return weight(h, i, j);
        return std::nullopt;
    }

    /// Testing (certified double kernel, L = 2): head h's output b_h of layer-1 row p of
    /// x[p <- a] as the kernel computes it (the certified row with p's query, key and value
    /// replaced), before F_1; empty when the kernel does not take row p.
    model::vec<S> changed_row_p_head(std::size_t p, int a, std::size_t h) const;

    /// y_n^(L)(x[p <- a]) for a position p < n - 1 (0-based) and a symbol a of Σ. Not safe to
    /// call concurrently on one object (the MPFR kernel keeps its scratch in the object); one
    /// object per thread.
    model::vec<S> changed(std::size_t p, int a) const;

    /// The states of x[p <- a] that the a-posteriori bound reads (posterior_cache): the new
    /// y_p^(0), every row of y^(1) for L = 2 (empty for L = 1), and y_n^(L).
    struct changed_states {
        model::vec<S> y0p;
        std::vector<model::vec<S>> y1;
        model::vec<S> y;
        /// Certified double kernel, L = 2, folded rows: per layer-1 head, an upper bound of the
        /// a-posteriori pair bound's weight ω (the largest over the rows m != p of
        /// exp(max(s_mp, s'_mp)) / (exp(min(s_mp, s'_mp)) + Σ_{l != p} exp(s_ml))), from the
        /// kept weights e_mp, e'_mp and denominators; NaN for a head it does not bound. Empty
        /// when the kernel did not run.
        std::vector<double> omega1;
        /// Certified double kernel, L = 2 (empty when it did not run or a row is not finite):
        /// every row of y^(1) as n x d midpoints and radii, each exact entry within mid +- rad
        /// (a folded row: the fold's M_c and R_c), and per row an upper bound of
        /// ||y'^(1)_j - y^(1)_j||_2 (a folded row; NaN for row p and a recomputed row).
        std::vector<double> y1_mid, y1_rad, y1_moved;
        /// changed_for_bound only: per layer-2 head, an upper bound of the pair bound's ω of
        /// the top layer (exp(max(s_p, s'_p)) / Σ_j exp(min(s_j, s'_j)) with s, s' the scores of
        /// row n over every key, of x and x'), from the certified rows' exponentials; NaN for a
        /// head it does not bound. Empty otherwise.
        std::vector<double> omega_top;
    };
    /// Like changed(p, a), keeping the states (the generic kernel or the certified double one;
    /// never the raw MPFR one).
    changed_states changed_with_states(std::size_t p, int a) const;
    /// The same into `out`, reusing its memory (a profile keeps one object for every change).
    void changed_with_states(std::size_t p, int a, changed_states& out) const;
    /// What posterior_cache::bound reads of x[p <- a], at less cost (certified double kernel,
    /// L = 2, affine F_1): omega_top for every layer-2 head, y1_mid and y1_moved as in
    /// changed_with_states, y1_rad empty, and in y1 only the rows without a moved bound and
    /// row n (the others left empty: their intervals are never formed). Where that cannot be
    /// taken (another kind or model, a value that is not finite), exactly changed_with_states.
    void changed_for_bound(std::size_t p, int a, changed_states& out) const;

    /// What the layer-1 rows of the changes so far took (per row and head): the rank-1
    /// correction, or a recomputation from the keys (cancellation guard, non-finite term).
    struct counters {
        std::size_t rank1_rows = 0;
        std::size_t recomputed_rows = 0;
        std::size_t raw_changes = 0; ///< changes computed by the MPFR kernel on raw mpfr_t
        std::size_t interval_changes = 0; ///< changes folded by the certified double kernel
        std::size_t prepared_rows_p = 0;  ///< rows p taken from the constructor's (row_p_prepared)
    };
    const counters& stats() const { return stats_; }
    /// Whether the layer-1 weight tables are kept (see the constructor).
    bool tabled() const { return !tables_.empty() || !etab_.empty(); }

private:
    /// The data of one change x_p <- a that every row needs.
    struct change {
        std::size_t p = 0;
        int a = 0;
        model::vec<S> y0p;                 ///< the new y_p^(0)
        std::vector<model::vec<S>> kp, vp; ///< per head: the new key and value of p
        std::vector<model::vec<S>> qp;     ///< per head: the new scaled query of row p
        std::vector<model::vec<S>> av_old; ///< affine F_1: A_h v_p
        std::vector<model::vec<S>> av_new; ///< affine F_1: A_h v'_p
    };
    static constexpr bool raw_kernels = incremental_raw_kernels<S>;
    static constexpr bool interval_kernel = incremental_interval_kernel<S>;
    /// The set-up's steps, in the constructor's order (incremental_setup.cpp): the memory of
    /// the weight tables; the positions whose rows p the certified double kernel prepares;
    /// layer 1 of x for head h (keys, values, every row's sums, the tables, the prepared rows
    /// p), with the position being evaluated in `at_pos` (for the place of an undefined value);
    /// the factors of every symbol pair (f_in add or concat); whether the raw MPFR kernels
    /// apply; x's states y^(1) and y_n^(L), and A_h b_h of an affine F_1; the tabled entries'
    /// growth factors.
    void reserve_tables(std::size_t table_bytes);
    std::vector<unsigned char> rows_to_prepare(const std::vector<std::size_t>* changed_positions);
    void init_head(std::size_t h, const std::vector<unsigned char>& prepared_row,
                   std::size_t& at_pos);
    void init_ratios(std::size_t h);
    void init_raw();
    void init_states();
    void init_table_growth();
    change prepare(std::size_t p, int a) const;
    /// y_i^(1) of the changed input (L = 1: i = n - 1 gives the output).
    model::vec<S> corrected_row(const change& ch, std::size_t i) const;
    /// corrected_row without the place of an undefined value (corrected_row adds layer 1 and
    /// position i + 1).
    model::vec<S> corrected_row_unlocated(const change& ch, std::size_t i) const;
    /// The raw kernels (raw_kernels only; defined for those kinds alone). MPFR, L = 2, affine
    /// F_1: the same computation as corrected_row for every row and top, on raw mpfr_t
    /// operations into preallocated scratch (no temporaries per row).
    bool raw_change_ok(const change& ch) const;
    model::vec<S> changed_raw(const change& ch) const;
    model::vec<S> full_row_raw(std::size_t h, const model::vec<S>& q, std::size_t p,
                               const model::vec<S>& kp, const model::vec<S>& vp) const;
    model::vec<S> top_raw(const std::vector<model::vec<S>>& y1) const;
    /// The certified double kernel (interval_kernel only): midpoints and radii of y^(1) and
    /// of A_h b_h (fold_mr_), every folded row of a change into y1 (the others by
    /// corrected_row) and, with omega1, the pair bound's layer-1 weight ω per head
    /// (changed_states::omega1), and layer 2 at row n by the certified soft-attention row.
    void init_interval_kernel();
    /// Row p's head outputs b_h of a change by the certified row (krows_); false when a
    /// midpoint is not finite or a denominator's enclosure not positive.
    bool row_p_heads(const change& ch, std::vector<model::vec<S>>& b) const;
    /// Row p's head outputs from the constructor's prepared sums (rowp_); false when the
    /// change was not prepared or its denominator's enclosure is not positive.
    bool row_p_prepared(const change& ch, std::vector<model::vec<S>>& b) const;
    /// mid, rad, moved: changed_states::y1_mid, y1_rad, y1_moved.
    /// `lean` (changed_for_bound): rad is left empty and a folded row with a moved bound other
    /// than row n is not formed as intervals; the top row's per-row sums and per-coordinate
    /// maxima go to lean_m1_, lean_r1_, lean_vrad_ and lean_vabs_ instead.
    void fold_interval(const change& ch, std::vector<model::vec<S>>& y1, std::vector<double>& mid,
                       std::vector<double>& rad, std::vector<double>& moved,
                       std::vector<double>* omega1 = nullptr, bool lean = false) const;
    /// Layer 2 at row n from a lean fold, and the top layer's ω of every head (omega_top);
    /// false when the certified row does not apply (the caller runs the full kernel then).
    bool top_lean(const change& ch, changed_states& st) const;
    /// Layer 2 at row n; with mid and rad (n x d, see changed_states) the certified row reads
    /// them instead of splitting y1's intervals again.
    model::vec<S> top_interval(const std::vector<model::vec<S>>& y1, const std::vector<double>* mid = nullptr,
                               const std::vector<double>* rad = nullptr) const;

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
        /// MPFR, L = 2: the same for the query of row p, qratio[b |Σ| + a][j] =
        /// exp(Δq . k_j) with Δq the change of p's scaled query (e'_pj = e_pj qratio, j != p).
        std::vector<std::vector<S>> qratio;
    };
    /// Row p of layer 1 from e_pj times qratio (b_h for every head), then F_1; e_pj from the
    /// tables, or recomputed with the constructor's operations (bit-identical either way). A
    /// raw kernel.
    model::vec<S> row_p_factored(const change& ch) const;

    /// Full row i of layer-1 head h with position p's key and value replaced, over the keys
    /// j < end (row i's range, model::key_end; p < end).
    model::vec<S> full_row(std::size_t h, const model::vec<S>& q, std::size_t p,
                           const model::vec<S>& kp, const model::vec<S>& vp,
                           std::size_t end) const;
    /// Layer 1's key range of row i: [0, end) (i + 1 under a causal mask of L = 2, else n).
    std::size_t row_end(std::size_t i) const { return mask1_ ? model::key_end(m_.layers.front().mask, i, n_) : n_; }
    /// A_h x for the columns of an affine F_1 that multiply head h's output.
    model::vec<S> block_apply(std::size_t h, const model::vec<S>& x) const;
    /// Layer 2 at row n from every layer-1 state.
    model::vec<S> top(const std::vector<model::vec<S>>& y1) const;
    model::vec<S> top_generic(const std::vector<model::vec<S>>& y1) const;

    const model::model<S>& m_;
    model::input_sequence x_;
    numeric::context ctx_;
    incremental_fault fault_;
    std::size_t n_;
    std::size_t first_row_; ///< first layer-1 row kept (n - 1 for L = 1, 0 for L = 2)
    /// L = 2 with a masked layer 1: row i's sums are over its key range (row_end), and only the
    /// generic members run.
    bool mask1_ = false;
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
    /// MPFR: every kept value has the context's precision, so the raw kernels apply (they
    /// round every result to that precision, as the generic operations do on such operands).
    bool raw_ = false;
    bool raw_fold_ = false; ///< raw_, L = 2, affine F_1 and y^(1), A_h b_h uniform: changed_raw
    mutable std::vector<model::vec<S>> ywork_; ///< raw kernel: the changed y^(1), every row
    mutable std::vector<S> swork_;             ///< raw kernel: one row of scores
    mutable counters stats_;
    std::vector<detail::mpfr_table> tables_; ///< per layer-1 head: e_ij (see the constructor)
    /// The certified double kernel: y^(1) as n x d midpoints (y1m_, row i at [i d + c]; y1mt_,
    /// the same by blocks of B = 64 rows and in a block coordinate after coordinate, at
    /// [((i / B) d + c) B + i % B]), and radii plus g |midpoint| (the part of a folded row's
    /// bound that does not depend on the change); A_h b_{i,h} as midpoints at
    /// [(((i / B) H + h) d + c) B + i % B] (a block's operands are contiguous: one stream for
    /// the prefetcher) with, per head and row, the largest |midpoint| and radius.
    bool fold_mr_ = false;
    std::vector<double> y1m_, y1mt_, y1r_, gmt_, gb_, gt_;
    /// Certified double kernel, L = 2: per layer-1 head, the exponential E_p of row i's certified
    /// row (soft_rows<dinterval>::sums) at [p n + i] (a change reads column p), when n^2 H
    /// doubles fit in table_bytes and every row is a certified row; e_ip is E_p [1 - tau_i, 1 +
    /// tau_i] one ulp outward (table_entry).
    std::vector<std::vector<double, util::huge_page_allocator<double>>> etab_;
    /// What recomputes an entry bit for bit without the tables (weight()), and the rows' part
    /// of a tabled entry: per head the keys' midpoints (n x d_k) and per row the tau and
    /// zero_hi of its certified soft-attention row (NaN tau: a row of the interval operations),
    /// and the growth factors [next_down(1 - tau), next_up(1 + tau)] (row_growth).
    std::vector<std::vector<double>> kmid_, row_tau_, row_zero_hi_, row_grow_lo_, row_grow_hi_;
    /// Whether every row's tau is below 1/2: a column of the tables then turns into intervals
    /// in a loop that vectorises (table_column), bit for bit table_entry's.
    bool table_fast_ = false;
    /// e_ij of head h: the table's entry, or the same interval recomputed. So results do not
    /// depend on the table memory (which the threads of a run share).
    S weight(std::size_t h, std::size_t i, std::size_t j) const;
    /// Row p of the changes prepared by the constructor: per head h, position p and
    /// replacement (k = a, less 1 above x_p), at rowp_[h][(p (|Sigma| - 1) + k) (1 + d_v)]: the
    /// enclosure of sum_{j != p} e'_pj relative to x's shift of row p, then those of sum_{j !=
    /// p} e'_pj v_j (soft_rows::sums_scaled); rowp_ok_[h][p (|Sigma| - 1) + k] whether formed.
    std::vector<std::vector<S>> rowp_;
    std::vector<std::vector<unsigned char>> rowp_ok_;
    mutable std::vector<double> bm_, bb_, bt_; ///< per change: A_h v_p, A_h v'_p
    mutable std::vector<const std::vector<S>*> ratio_;   ///< per change: the factors of (x_p, a)
    /// Certified double kernel, L = 2: per layer-1 head, the certified soft-attention row over
    /// x's keys and values (the constructor's rows; row p of a change with its key and value
    /// replaced), and changed()'s midpoints, radii and moved bounds of y'^(1).
    mutable std::vector<std::shared_ptr<attention::soft_rows<S>>> krows_;
    mutable std::vector<double> ymid_work_, yrad_work_, moved_work_;
    /// Certified double kernel, L = 2: per layer-2 head, x's row n as the certified row's sums
    /// (the exponentials E_j, the shift, tau, zero_hi) and the constant q . b_K of its scores:
    /// the old side of the top layer's ω (empty when they could not be formed).
    struct top_state {
        std::vector<double> e;
        double shift = 0, tau = 0, zero_hi = 0;
        double c_lo = 0, c_hi = 0; ///< the constant's enclosure
    };
    std::vector<top_state> top_old_;
    mutable std::vector<double> lean_m1_, lean_r1_, lean_vrad_, lean_vabs_, lean_split_;
    /// Lean changes: layer 2's folded queries of row n (per head: u, the constant q . b_K and
    /// u's midpoints) and every head's scores of the rows of y'^(1) at [h n + j], computed by
    /// the fold block by block (lean_scored_: all of them are there).
    mutable std::vector<model::vec<S>> lean_u_;
    mutable std::vector<S> lean_c_;
    mutable std::vector<double> lean_qmid_, lean_scores_, blk_folded_;
    /// Lean changes: the folded rows' largest |M_c| per coordinate c and row b of a block, at
    /// [c B + b] (B the block's capacity), over the blocks so far.
    mutable std::vector<double> lean_vabs_blk_;
    mutable bool lean_scored_ = false;
    /// Per block of rows of a change: the coefficients (midpoints and radii, coefficient 3h + t
    /// of the block's row b at [(3h + t) B + b], B the block's capacity), whether each row
    /// takes them, K, the midpoints (coordinate c at [c B + b]), the moved bound's partial
    /// sums, the pair bound's weight quotients of one head and the ends of its e_ip; per
    /// change, the column e_ip of every head where the tables do not give it.
    mutable std::vector<double> blk_m_, blk_r_, blk_k_, blk_mid_, blk_sum_, w_num_, w_den_;
    mutable std::vector<double> blk_ok_; ///< 1 or 0 (doubles: the loop that sets them vectorises)
    mutable std::vector<S> e_col_;
    mutable std::vector<double> blk_el_, blk_eh_;
    /// The ends of the factors f_i of (x_p, a) per head at [h n + i], for the pair
    /// x_p sigma + a of ratio_pair_.
    mutable std::vector<double> ratio_lo_, ratio_hi_;
    mutable std::size_t ratio_pair_ = static_cast<std::size_t>(-1);
    /// The ends of layer 1's denominators D_i per head at [h n + i].
    std::vector<double> den_lo_, den_hi_;
    /// Certified double kernel: per row of y^(1) the sum of y1r_ (rounded to nearest), per
    /// coordinate its largest entry.
    std::vector<double> y1rsum_, y1rmax_;
};

// The raw MPFR kernels (incremental_influence.cpp).
using mpfr_vec = model::vec<numeric::mpfr_real>;
template <> bool incremental_influence<numeric::mpfr_real>::raw_change_ok(const change& ch) const;
template <> mpfr_vec incremental_influence<numeric::mpfr_real>::changed_raw(const change& ch) const;
template <>
mpfr_vec incremental_influence<numeric::mpfr_real>::full_row_raw(std::size_t h, const mpfr_vec& q,
                                                                 std::size_t p, const mpfr_vec& kp,
                                                                 const mpfr_vec& vp) const;
template <>
mpfr_vec incremental_influence<numeric::mpfr_real>::top_raw(const std::vector<mpfr_vec>& y1) const;
template <>
mpfr_vec incremental_influence<numeric::mpfr_real>::row_p_factored(const change& ch) const;

// The certified double kernel (incremental_influence.cpp).
using dinterval_vec = model::vec<numeric::dinterval>;
template <> void incremental_influence<numeric::dinterval>::init_interval_kernel();
template <>
bool incremental_influence<numeric::dinterval>::row_p_heads(const change& ch,
                                                           std::vector<dinterval_vec>& b) const;
template <>
bool incremental_influence<numeric::dinterval>::row_p_prepared(const change& ch,
                                                               std::vector<dinterval_vec>& b) const;
template <>
void incremental_influence<numeric::dinterval>::fold_interval(
    const change& ch, std::vector<dinterval_vec>& y1, std::vector<double>& mid,
    std::vector<double>& rad, std::vector<double>& moved, std::vector<double>* omega1,
    bool lean) const;
template <>
bool incremental_influence<numeric::dinterval>::top_lean(const change& ch,
                                                         changed_states& st) const;
template <>
dinterval_vec incremental_influence<numeric::dinterval>::top_interval(const std::vector<dinterval_vec>& y1,
                                                                      const std::vector<double>* mid,
                                                                      const std::vector<double>* rad) const;

#define ATTNPROP_INCREMENTAL_EXTERN(S) extern template class incremental_influence<S>;
#define ATTNPROP_INCREMENTAL_SUPPORTS_EXTERN(S)                                                    \
    extern template bool incremental_supports(const model::model<S>&);
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INCREMENTAL_EXTERN)
ATTNPROP_USER_KINDS(ATTNPROP_INCREMENTAL_SUPPORTS_EXTERN)
#undef ATTNPROP_INCREMENTAL_EXTERN
#undef ATTNPROP_INCREMENTAL_SUPPORTS_EXTERN

} // namespace attnprop::attention
