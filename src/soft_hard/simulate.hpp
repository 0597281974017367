#pragma once
/// @file simulate.hpp
/// Soft attention simulating hard attention as the inverse temperature β grows
/// (docs/theory.md, "Soft attention simulating hard attention"). A hard (unique-hard or
/// average-hard) model H is compared with its soft counterpart S_β: the same parameters, with
/// softmax(β(n) · a_ij) in place of the maximal-score selection.
///
/// Three pieces, kept apart so that each can be tested alone:
/// - bound_data: what the propagated bound needs from the exact hard pass (score_gaps): per
///   layer and head the rows grouped by margin γ and tie size t with the spreads of the values,
///   the norms that bound how far the soft scores move, and the Lipschitz constants of the maps;
/// - propagate: the certified bounds at given β and n (derived here, not taken from the paper):
///   the score perturbation ε_k, the leak bound per row and the state difference δ_k of every
///   layer, and whether the readout is certified to agree;
/// - observe_soft: the soft counterpart evaluated rigorously (Arb balls or certified double
///   intervals) on the same rows, measuring the leak 1 − Σ_{j∈T} w_j of every row and the
///   distance of every state from the hard one.
/// Every number that decides something is an Arb ball or an exact rational; bounds are upper
/// points (norms.hpp).

#include "soft_hard/score_gaps.hpp"
#include "model/expr.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// The soft counterpart of a hard or average-hard model: attention "soft", every head's inverse
/// temperature replaced by `beta` (a formula in n). Without `beta` each head keeps its own (a
/// head without one has β = 1).
model::model<rational> soft_counterpart(const model::model<rational>& m,
                                        const std::optional<model::expr>& beta = std::nullopt);

/// Rows of one head with the same margin and tie size, and the largest spreads among them.
struct bound_group {
    std::optional<arb_ball> gamma; ///< the margin γ (a ball); none when t = n
    std::size_t t = 1;             ///< the tie size (the smallest in a merged group)
    arb_ball spread_out;           ///< upper point of max_{j∉T} ||v(y_j) − b||
    arb_ball spread_in;            ///< upper point of max_{j∈T} ||v(y_j) − b||
};

struct head_bound_data {
    /// The soft scores of a row move by at most ε = e1 δ + e2 δ² when every state moves by at
    /// most δ (upper points; +inf when the score map's Lipschitz constant is not known).
    arb_ball e1, e2;
    arb_ball lip_value;                 ///< Lipschitz constant of the value map (+inf unknown)
    std::vector<bound_group> groups;    ///< at most 64 (merged soundly beyond that)
    std::string not_lipschitz;          ///< why e1 or lip_value is +inf, when one is
};

struct layer_bound_data {
    std::vector<head_bound_data> heads;
    arb_ball lip_y;                     ///< Lipschitz constant of the update in y
    std::vector<arb_ball> lip_b;        ///< ... in b_h
    std::string not_lipschitz;          ///< why the update's constants are +inf, when they are
    /// The update's matrix when the update is affine, F(y, b) = W (y, b_1, …, b_H) + c, and the
    /// first column of each head's block (else empty): on a layer whose input both models
    /// share, the state difference is then a closed form in the rows' leaks.
    std::optional<model::matrix<rational>> update_w;
    std::vector<std::size_t> b_offset;
};

/// The readout's certified agreement: the hard decision is kept while lip · δ_L < slack.
struct readout_bound_data {
    arb_ball slack; ///< lower point: |w·y − t|, |map(y)|, or half the gap of the top logit
    arb_ball lip;   ///< upper point: ||w||, the map's Lipschitz constant, the largest ||W_r||
    std::string hard_decision; ///< "accept" / "reject" / the top output symbol ("tie" if none)
};

struct bound_data {
    std::size_t n = 0;
    bool average = false;
    std::vector<layer_bound_data> layers;
    readout_bound_data readout;
};

/// Collects the data of the propagated bound from an exact pass of `m` (its kind decides the
/// hard head outputs) at the context's precision.
bound_data make_bound_data(const model::model<rational>& m, const gap_pass& p,
                           const numeric::context& ctx);

/// An upper point of the leak bound of one row: r / (1 + r) with
/// r = ((n − t) / t) · e^{−β (γ − 2ε)}; 0 when the row has no margin (every key ties); 1 when
/// β (γ − 2ε) is not certainly positive (the margin condition fails).
arb_ball leak_bound(std::size_t n, std::size_t t, const std::optional<arb_ball>& gamma,
                    const arb_ball& eps, const arb_ball& beta, const numeric::context& ctx);

/// The propagated bounds at the given inverse temperatures (beta[k][h], balls at n).
struct propagated {
    std::vector<arb_ball> eps;          ///< per layer: the largest score perturbation ε_k
    std::vector<std::vector<arb_ball>> head_eps; ///< per layer and head
    std::vector<arb_ball> delta;        ///< per layer: upper point of max_j ||ỹ_j^(k) − y_j^(k)||
    std::vector<arb_ball> worst_leak;   ///< per layer: the largest row leak bound
    /// per layer: 2 ε_k < γ at every row with a margin (the soft maximal set cannot move);
    /// layer 1 always holds (ε_1 = 0).
    std::vector<bool> margin_condition;
    bool readout_certified = false;     ///< lip · δ_L < slack, certainly
};
propagated propagate(const bound_data& d, const std::vector<std::vector<arb_ball>>& beta,
                     const numeric::context& ctx);

/// β(n) of every head of the soft counterpart at n, as balls (β = 1 where a head has none).
std::vector<std::vector<arb_ball>> betas_at(const model::model<rational>& soft, long n,
                                            const numeric::context& ctx);

/// The soft counterpart measured on the rows of a gap pass.
struct soft_observation {
    /// [k-1][h][r]: the leak 1 − w_T = Σ_{j∉T} w_j of the r-th row of gap_pass::layers[k-1]
    /// .heads[h].rows, as a ball.
    std::vector<std::vector<std::vector<arb_ball>>> leak;
    /// per layer k = 1..L: an upper point of max_j ||ỹ_j^(k) − y_j^(k)|| over the computed
    /// positions, and a ball of the same maximum for display.
    std::vector<arb_ball> state_diff_upper;
    std::vector<arb_ball> state_diff_lower;  ///< max over positions of a lower point of the distance
    std::vector<double> state_diff_mid;
    /// [k-1][r]: ||ỹ_i^(k) − y_i^(k)||² at the r-th computed row (a ball).
    std::vector<std::vector<arb_ball>> row_diff_sq;
    vec<arb_ball> output;               ///< ỹ_n^(L)
    std::string soft_decision;          ///< "accept" / "reject" / symbol / "undecided"
};

/// Evaluates the soft counterpart `soft` rigorously on x: in Arb balls at the context's
/// precision (interval = false) or in certified double intervals (interval = true, fast;
/// widened results are converted to balls), on the rows `hard` computed. Throws
/// numeric::undefined_error (located) where a value does not exist.
soft_observation observe_soft(const model::model<rational>& soft, const model::input_sequence& x,
                              const gap_pass& hard, const numeric::context& ctx,
                              bool interval = false);

/// The smallest constant β (the same in every head) whose propagated bound certifies the
/// readout on every given bound_data, by bisection in log β over [2^-20, 2^40] to a relative
/// 2^-10: an upper point that is certified (the answer is certified; it is the smallest up to
/// the tolerance when certification is monotone in β). std::nullopt when 2^40 does not certify.
std::optional<arb_ball> smallest_certified_beta(const std::vector<bound_data>& data,
                                                const numeric::context& ctx);

/// For a constant β: the largest n at which the propagated bound still certifies every given
/// bound_data when its gaps, tie sizes and spreads stay as measured (only n moves, and the bound
/// grows with n), by bisection over [data n, 2^62]; std::nullopt when even the data's own n is
/// not certified, 2^62 when that is.
std::optional<long long> largest_certified_n(const std::vector<bound_data>& data,
                                             const arb_ball& beta, const numeric::context& ctx);

/// The row-by-row comparison of a soft observation with its propagated bound: for every row
/// the measured leak against leak_bound(n, t, γ, ε_k,h, β), and for every layer the measured
/// state difference against δ_k. A measured value certainly above its bound contradicts the
/// derivation (docs/theory.md): a finding, never expected.
///
/// Where the bound is attained (a two-level row, an isometric update), the two enclosures
/// overlap at every precision; such a layer is decided by the closed form instead: when its
/// input is the same in both models (layer 1, or δ_{k−1} = 0), its update is affine and the row
/// is two-level or fully tied at every head, the soft state difference is exactly
/// ||Σ_h W_h ((1 − ℓ_h) a_h + ℓ_h e_h)|| (a_h, e_h the exact offsets of row_gap, ℓ_h the row's
/// leak). The measurement must overlap that value (else the implementation is wrong: counted
/// above), and ||W_h a_h|| <= lip_h s_in, ||W_h e_h|| <= lip_h (s_out + s_in) and both <=
/// lip_h max(s_out, s_in), checked without ℓ, prove it within δ_k (docs/theory.md, the
/// simulation section).
struct bound_check {
    arb_ball max_leak;            ///< the largest measured leak (a ball)
    arb_ball max_leak_bound;      ///< the bound of that row (upper point)
    arb_ball worst_row_bound;     ///< the largest row bound (upper point)
    std::size_t rows = 0, rows_within = 0, rows_undecided = 0, rows_above = 0;
    std::size_t layers_above = 0, layers_undecided = 0;
    std::string first_above;      ///< where the first measured value above its bound is, if any
};
bound_check check_against_bound(const bound_data& data, const gap_pass& hard,
                                const soft_observation& obs,
                                const propagated& pr, const std::vector<std::vector<arb_ball>>& beta,
                                const numeric::context& ctx);

/// One inverse temperature at one n, over the inputs of that n.
struct simulate_beta_row {
    std::string beta_text;
    arb_ball beta_n;                       ///< β(n) (a ball)
    bound_check leak;                      ///< rows of every input together
    std::vector<arb_ball> state_measured;  ///< per layer: max over inputs (upper points)
    std::vector<double> state_measured_mid;
    std::vector<arb_ball> state_bound;     ///< per layer: max over inputs of δ_k (upper points)
    std::vector<bool> margin_condition;    ///< per layer: held for every input
    std::size_t agree = 0, disagree = 0, undecided = 0; ///< soft readout against the hard one
    std::size_t certified = 0;             ///< inputs whose agreement the bound certifies
    /// Where the row was measured last: certified double intervals, or Arb balls at this many
    /// bits (the first stage that left nothing undecided, else the last one tried).
    bool interval = false;
    long precision = 0;
};

/// Everything `attnprop simulate` reports at one n.
struct simulate_row {
    long n = 0;
    std::vector<std::string> inputs;       ///< without eos
    gap_summary gaps;
    std::vector<std::string> hard_decisions;
    std::vector<simulate_beta_row> betas;
    std::optional<arb_ball> smallest_beta; ///< smallest_certified_beta over the inputs
    std::vector<bound_data> data;          ///< per input (for largest_certified_n)
};

struct simulate_options {
    long precision = 128;   ///< bits of the Arb balls
    /// A β whose comparisons or readouts are undecided is measured again in Arb balls at
    /// doubled precision (after the interval stage: at `precision`) up to this many bits.
    long precision_cap = 4096;
    bool interval = false;  ///< measure with certified double intervals first (fast) instead of balls
};

/// Runs the hard model exactly and its soft counterpart at each β (each a formula in n; every
/// head gets it) on the inputs (without eos, all of length n − 1). Throws what score_gaps and
/// observe_soft throw; precondition_error for an input of another length.
simulate_row simulate_at(const model::model<rational>& hard, const std::vector<model::expr>& betas,
                         long n, const std::vector<std::string>& inputs,
                         const simulate_options& opt);

} // namespace attnprop::analysis
