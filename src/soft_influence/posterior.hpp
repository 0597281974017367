#pragma once
/// @file posterior.hpp
/// The a-posteriori bound of Claim 2 (Hahn 2020, Lemma 5) for one pair of inputs that differ at
/// one position (docs/bounds.md): the recursion of the a-priori bound (bounds.hpp) with the
/// actual norms and weights of both inputs' traces in place of the a-priori ones, and its cache
/// for the one-symbol changes of one input (posterior_cache), which reads the states the
/// incremental influence kernel computes anyway. Every returned quantity is an upper-bound
/// point (numeric/ball_bounds.hpp), +inf when no finite bound is known.

#include "attention/soft.hpp"
#include "model/model.hpp"
#include "numeric/kind_list.hpp"
#include "numeric/scalar.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace attnprop::analysis {

/// The a-posteriori bound on ||y_n^(L)(x) - y_n^(L)(x')|| for two inputs x, x' that differ
/// only at `changed_position` (0-based; normally < n - 1), given their traces
/// (attention::soft_forward(model::to_scalar<arb_ball>(m, ctx), x, ctx, {.trace = true})).
/// The recursion of a_priori_bound with, at each layer: F replaced by the actual
/// max_j ||y_j^(k-1)|| over both inputs (and P_h by the actual max_j ||V_h y_j + c_h||);
/// E_h/n replaced by ω_h = max over the queries m that matter (every m != i below the top
/// layer, m = n at the top) of exp(max(s_mi, s'_mi)) / Σ_l exp(min(s_ml, s'_ml)), capped at 1;
/// Δ_0 = ||y_i^(0)(x) - y_i^(0)(x')|| exactly; and ||Δw||_1 <= 2, δ_k, Δ_k <= 2 max ||y^(k)||.
/// Sound because along the segment from s to s' every logit lies between its two end values,
/// so each weight along the way is at most ω (theory.md §2.1). The logit bound A itself only
/// enters through the weights: the 4a/2a terms bound μ·||ŷ||·||Δy||·||V y||, not a logit, so
/// they keep μ_h G P_h with the actual G and P. Returns +inf when the model does not satisfy
/// the hypotheses (scores, values, Lipschitz updates); if changed_position is n - 1 (eos),
/// returns the bound on the change at that position.
/// A model with a masked layer takes detail::masked_posterior_bound instead (the traces must
/// then hold every row of every layer, as a trace does).
numeric::arb_ball posterior_bound(const model::model<numeric::rational>& m,
                                  const attention::soft_trace<numeric::arb_ball>& tx,
                                  const attention::soft_trace<numeric::arb_ball>& tx2,
                                  std::size_t changed_position, const numeric::context& ctx);

/// The a-posteriori bound of posterior_bound for the one-symbol changes of one input x of a
/// model with one or two layers, from x's trace (or x's states) kept once and, per changed input x', the
/// states the incremental influence kernel computes anyway (the new y_i^(0), every row of
/// y^(1) for two layers, y_n^(L)): O(n d (d_k + d_v)) per pair instead of the O(n² d_k) of two
/// traces and posterior_bound. The same recursion, with two differences, both sound:
/// - layer 1's weights ω_m, m != i: the rows of x and x' agree at layer 0 except row i, so
///   Σ_l exp(min(s_ml, s'_ml)) = E_m - exp(s_mi) + exp(min(s_mi, s'_mi)) with E_m = Σ_l
///   exp(s_ml) kept per row of x; a lower bound of the denominator is all an upper bound of ω
///   needs, so the difference is replaced by its non-negative lower end when the ball reaches 0;
/// - the top layer's cap 2 F_L uses F_L = max(||y_n^(L)(x)||, ||y_n^(L)(x')||): the change
///   of y_n^(L) is at most the sum of the two norms (posterior_bound takes the maximum over
///   every row, which is larger or equal).
/// Throws precondition_error for a model with L = 0 or L > 2 or a trace that does not match.
/// What the certified double kernel knows of a change besides x''s states
/// (incremental_influence::changed_states), for posterior_cache::bound. Every member optional
/// (null, empty or of the wrong size: not used).
struct change_hints {
    /// Per layer-1 head, an upper bound of that head's ω for this change (NaN: not bounded).
    const std::vector<double>* omega1 = nullptr;
    /// Two layers, certified double intervals: every row of x''s y^(1) as n x d midpoints and
    /// radii (every exact entry within mid +- rad), and per row an upper bound of
    /// ||y'^(1)_j - y^(1)_j||_2 (NaN: not bounded; that row is read from its intervals).
    const std::vector<double>* y1_mid = nullptr;
    const std::vector<double>* y1_rad = nullptr;
    const std::vector<double>* y1_moved = nullptr;
    /// Two layers: per layer-2 head, an upper bound of that head's ω for this change (NaN:
    /// not bounded; the cache computes it from y1, y1_mid and y1_rad then).
    const std::vector<double>* omega_top = nullptr;
};

template <class S> class posterior_cache {
public:
    posterior_cache(const model::model<numeric::rational>& m, const attention::soft_trace<S>& tx,
                    const numeric::context& ctx);
    /// The same from x's states alone: y0 = y^(0) and, for two layers, y1 = y^(1) (every row;
    /// ignored for one layer), and y_top = y_n^(L)
    /// (incremental_influence::initial_states, layer1_states, base). y0 and y1 must outlive
    /// the cache.
    posterior_cache(const model::model<numeric::rational>& m, const std::vector<model::vec<S>>& y0,
                    const std::vector<model::vec<S>>& y1, const model::vec<S>& y_top,
                    const numeric::context& ctx);
    /// The bound for x and x' = x with position i (< n - 1) changed, given x''s states: `y0i`
    /// its y_i^(0), `y1` every row of its y^(1) (two layers; ignored for one), `y_top` its
    /// y_n^(L). `hints` (certified double intervals): layer 1's ω per head taken instead of
    /// the cache's own; with y1_moved, ||y'_j|| <= ||y_j|| + moved_j and the top layer's
    /// ||V y'_j + c|| <= ||V y_j + c|| + ν moved_j from x's rows instead of y'_j's intervals;
    /// the top layer's ω per head from omega_top, else from y1_mid and y1_rad. A row of y1 may
    /// be empty where the hints bound it (incremental_influence::changed_for_bound); where
    /// such a row would be read, the bound takes its trivial value (+inf, or ω = 1).
    numeric::arb_ball bound(std::size_t i, const model::vec<S>& y0i,
                            const std::vector<model::vec<S>>& y1, const model::vec<S>& y_top,
                            const change_hints& hints = {}) const;
    /// Testing: per row j of x' (two layers, top head h), the upper bound of ||V_h y'_j + c_h||
    /// that bound() takes (with hints.y1_moved: x's row's bound plus ν moved_j; a row without a
    /// moved bound, or without hints, from y1's intervals). Certified double intervals only
    /// (empty for the other kinds). `drop_moved` (the negative control) leaves ν moved_j out.
    std::vector<double> top_value_norms(std::size_t h, const std::vector<model::vec<S>>& y1,
                                        const change_hints& hints, bool drop_moved = false) const;
    /// The largest of top_value_norms (one pass, no vector; at least each of them), or none
    /// where top_value_norms would be empty.
    std::optional<double> top_value_norm_max(std::size_t h, const std::vector<model::vec<S>>& y1,
                                             const change_hints& hints) const;

private:
    /// Per row j of x' (top head h), f(j, v, up): top_value_norms' value of the row is v, one
    /// ulp up when `up` (a row with a moved bound: the sum rounded to nearest, its ulp left to
    /// the caller). False (and no call) where top_value_norms is empty.
    template <class F>
    bool top_value_norm_rows(std::size_t h, const std::vector<model::vec<S>>& y1,
                             const change_hints& hints, bool drop_moved, F&& f) const;

    struct head_state {
        bool constant_scores = true;              ///< μ = 0: uniform weights
        numeric::arb_ball mu, nu, l;              ///< at this n
        S scale{};                                ///< the score scale times β(n)
        bool score_bias = false;
        model::affine_map<S> Q, K, V;
        numeric::arb_ball P;                      ///< max_j ||V y_j^(k)(x)||
        std::vector<model::vec<S>> q, k;          ///< x's scaled queries (rows kept), keys
        std::vector<S> E;                         ///< layer 1: Σ_l exp(s_ml) per row m kept
        std::vector<S> s_top;                     ///< layer 2: x's scores of row n, every key
        /// Certified double intervals, layer 1 below the top: the scaled queries and keys as
        /// midpoints (rows x d_k), per query row |a|_inf and its largest radius, the keys'
        /// score terms of the certified soft-attention row, and the lower ends of E (the
        /// weights ω on midpoints with one a-priori radius per score; docs/scalars.md).
        bool mid = false;
        std::vector<double> qm, km, qa, qr, e_lo;
        double key_mid = 0, key_rad = 0;
        /// Layer 1: E and the midpoints above are formed on first use (ensure_layer1), once:
        /// a change whose hints bound layer 1's ω never reads them.
        std::unique_ptr<std::once_flag> layer1_once = std::make_unique<std::once_flag>();
        /// Certified double intervals: the value map as midpoints and radii with its norms
        /// (value norms on midpoints, one row at a time), per row of x the upper bound of
        /// ||V y_j + c|| (`pv`), and ν rounded up to a double (+inf when not finite).
        std::vector<double> vWm, vWr, vbm, vbr;
        double vfm = 0, vfr = 0, vnbm = 0, vnbr = 0, nu_up = 0;
        bool vmid = false;
        std::vector<double> pv;
    };
    struct layer_state {
        numeric::arb_ball ly;
        std::vector<head_state> heads;
    };
    /// The constructors' work: y1 = y^(1) for two layers (null for one).
    void init(const std::vector<model::vec<S>>* y1, const model::vec<S>& y_top);
    /// Forms layer 1's E (and the midpoints) of head st once; safe from several threads.
    void ensure_layer1(const head_state& st) const;

    const model::model<numeric::rational>& m_;
    const std::vector<model::vec<S>>& y0_; ///< x's y^(0)
    numeric::context ctx_;
    std::size_t n_ = 0;
    bool ok_ = false;
    std::vector<layer_state> layers_;
    numeric::arb_ball F0_, F1_, Ftop_; ///< max_j ||y_j^(0)(x)||, max_j ||y_j^(1)(x)||, ||y_n^(L)(x)||
    std::vector<double> f1_rows_; ///< certified double intervals, two layers: ||y_j^(1)(x)|| per row, rounded up
};

namespace detail {

/// The a-posteriori pair bound of a model with masked layers (docs/theory.md §2.5, "The
/// a-posteriori pair bound under a mask"; any mix of masked and unmasked layers): per layer k
/// and row m an upper bound d_{k,m} of ||y_m^(k)(x') - y_m^(k)(x)||, from d_{0,j} = the
/// distance of the initial states and, per head,
///   T_m = min(max_{j<e} d_j, sum_{j<e} ω_mj d_j),  ω_mj = min(1, exp(max(s_mj, s'_mj)) /
///         sum_{l<e} exp(min(s_ml, s'_ml))),  e = the row's key end (model::key_end),
///   ||Δb_m|| <= min(2 P, ν T_m + P min(2, 2 μ G (d_m + T_m))),
///   d_{k,m} = min(2 F_k, ℓ_y d_{k-1,m} + sum_h ℓ_h ||Δb_{m,h}||);
/// returns d_{L,n}. `ignore_mask` (tests only: the negative control) takes every key in every
/// row, as an unmasked model would.
numeric::arb_ball masked_posterior_bound(const model::model<numeric::rational>& m,
                                         const attention::soft_trace<numeric::arb_ball>& tx,
                                         const attention::soft_trace<numeric::arb_ball>& tx2,
                                         std::size_t changed_position, const numeric::context& ctx,
                                         bool ignore_mask = false);

/// The layer-1 weight ω of posterior_cache<dinterval> on midpoints (docs/scalars.md,
/// "One-symbol changes in certified double intervals"): an upper bound of
///   max_{m != skip} exp(max(s_m, s'_m)) / (exp(min(s_m, s'_m)) + max(0, E_m - exp(s_m)))
/// over every scaled query q_m in qm[m] +- qr[m] (rows x dk midpoints, qa[m] >= |qm[m]|_inf,
/// qr[m] >= every radius of row m), s_m = q_m . k, s'_m = q_m . k' for keys k in km +- kr and
/// k' in kn_m +- kn_r with key_mid >= (g_dk |m|_1 + |r|_1) (1 + g_(dk + 4)) and key_rad >=
/// (|m|_1 + |r|_1) (1 + g_(dk + 4)) for both (g_w = (w + 1) 2^-52), and every E_m >= e_lo[m].
/// Returns at least 1 once some weight may reach 1 (ω is capped at 1). drop_radius (tests
/// only) leaves out the scores' a-priori radius: the negative control.
double layer1_omega_upper(const double* qm, const double* qa, const double* qr, const double* e_lo,
                          std::size_t rows, std::size_t skip, std::size_t dk, const double* km,
                          const double* kn, double key_mid, double key_rad, bool drop_radius = false);

/// The top layer's ω of posterior_cache<dinterval> on midpoints: an upper bound of
///   exp(max(s_i, s'_i)) / sum_j exp(min(s_j, s'_j)),  s'_j = kq . y_j + qb,
/// for s_j in s_top[j], y_j in y[j], kq in kqm +- kqr (kqm_inf >= |kqm|_inf, kqr_inf >= every
/// radius) and qb in qbm +- qbr. NaN when a value is not finite (the caller then takes the
/// interval operations). drop_radius as above.
double top_omega_upper(const double* kqm, double kqm_inf, double kqr_inf, double qbm, double qbr,
                       const std::vector<model::vec<numeric::dinterval>>& y,
                       const std::vector<numeric::dinterval>& s_top, std::size_t i,
                       bool drop_radius = false);
/// The same from the rows' midpoints ym and radii yr (n x d each, every exact y_j within
/// ym +- yr): the interval form above splits its rows and calls this one.
double top_omega_upper(const double* kqm, double kqm_inf, double kqr_inf, double qbm, double qbr,
                       const double* ym, const double* yr, std::size_t n, std::size_t d,
                       const std::vector<numeric::dinterval>& s_top, std::size_t i,
                       bool drop_radius = false);

} // namespace detail

#define ATTNPROP_POSTERIOR_EXTERN(S) extern template class posterior_cache<S>;
ATTNPROP_ENCLOSURE_USER_KINDS(ATTNPROP_POSTERIOR_EXTERN)
#undef ATTNPROP_POSTERIOR_EXTERN

} // namespace attnprop::analysis
