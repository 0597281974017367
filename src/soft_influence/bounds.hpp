#pragma once
/// @file bounds.hpp
/// Explicit bounds of Claim 2 (Hahn 2020, Lemma 5) for a concrete soft-attention model:
/// the a-priori constant K of theory.md §2.1 (recursions (N), (A) and the closed form (B)),
/// and its probability corollary (§2.2); the a-posteriori per-pair bound is in posterior.hpp.
/// docs/bounds.md states every formula as implemented.
///
/// Everything is computed in Arb balls and rounded *up*: every returned quantity is an exact
/// point (radius 0) that is at least the true quantity, or +inf when no finite bound is known.
/// So the bounds are rigorous whatever the precision; a low precision only loosens them.
///
/// Per layer k and head h (scores with biases read as bilinear forms of ŷ = (y, 1); see
/// hypotheses.hpp):
///   μ_h = ||scale·Q̂^T K̂||_2, ν_h = ||V_h||_2, c_h = ||value bias||, ℓ_y, ℓ_h the Lipschitz
///   constants of F_k in y and in b_h, c_k = ||F_k(0, 0)||, G = F_{k-1} (or sqrt(F_{k-1}² + 1)
///   for a head with score biases), P_h = ν_h F_{k-1} + c_h (bounds ||V_h y + c_h||),
///   A_h = μ_h G², E_h = exp(2 A_h), a_h = μ_h G P_h;
///   F_k = c_k + ℓ_y F_{k-1} + Σ_h ℓ_h P_h                                         (N)
///   Δ_k = min(2 F_k, ℓ_y Δ_{k-1} + 2 Σ_h ℓ_h P_h)
///   α_k(n) = ℓ_y + Σ_h ℓ_h (ν_h + 4 a_h + 2 a_h E_h / n),  β_k = Σ_h ℓ_h (ν_h + 2 a_h) E_h
///   δ_k = α_k δ_{k-1} + (β_k / n) Δ_{k-1},  δ_0 = 0
///   δ_L(n) = (1/n) Σ_k β_k Δ_{k-1} Π_{l>k} α_l(n),  K(n) = n δ_L(n)                  (B)
/// With ℓ_y = ℓ_h = L_k, no biases and H equal heads this is theory.md's recursion verbatim
/// (A_k = μ_k F_{k-1}², a_h = ν_k A_k); the per-head sums only sharpen it.

#include "model/model.hpp"
#include "numeric/scalar.hpp"
#include "soft_influence/hypotheses.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// One layer's quantities (k = 1..L), all upper-bound points (+inf when unknown).
struct layer_bound {
    numeric::arb_ball F;     ///< F_k: ||y_j^(k)|| <= F_k for every j, input and n
    numeric::arb_ball A;     ///< A_k = max_h μ_h G²: |score| <= A_k
    numeric::arb_ball E;     ///< E_k = exp(2 A_k): every weight lies in [1/(E_k n), E_k/n]
    numeric::arb_ball L;     ///< L_k = max(ℓ_y, ℓ_1, ..., ℓ_H)
    numeric::arb_ball mu;    ///< μ_k = max_h μ_h
    numeric::arb_ball nu;    ///< ν_k = max_h ν_h
    numeric::arb_ball c;     ///< c_k = ||F_k(0, 0)||
    numeric::arb_ball alpha; ///< α_k(n) at the report's n
    numeric::arb_ball beta;  ///< β_k
    numeric::arb_ball Delta; ///< Δ_k: bound on ||Δy_i^(k)|| at the changed position
    numeric::arb_ball delta; ///< δ_k(n): bound on ||Δy_j^(k)||, j != i, at the report's n
    numeric::arb_ball term;  ///< β_k Δ_{k-1} Π_{l>k} α_l(n): layer k's share of K(n)
    /// Every layer causally masked (theory.md §2.5): C_k, with ||Δy_m^(k)|| <= C_k (1 +
    /// ln(m/p))^(k-1) / m at every row m after the changed position p.
    numeric::arb_ball C;
};

/// The a-priori bound of Claim 2 and the hypotheses it rests on.
struct bound_report {
    std::string model_name;
    model::attention_kind attention = model::attention_kind::soft;
    /// The model's influence law (model::influence_of: the kind's, refined for sigmoid by its
    /// biases; std::nullopt when none is asserted) and its reason in words.
    std::optional<model::influence_law> influence = model::influence_law::vanishing;
    std::string influence_in_words;
    long n = 1;                                   ///< the length the report was made for
    long precision = 0;                           ///< bits
    std::vector<hypothesis_result> hypotheses;    ///< check_hypotheses(m)
    numeric::arb_ball F0;                         ///< max_{a, i, n} ||f_in(v_a, p_i)||
    numeric::arb_ball Delta0;                     ///< bound on ||Δy_i^(0)|| under a change of x_i
    std::vector<layer_bound> layers;              ///< k = 1..L
    /// Every layer causally masked: the masked statement of theory.md §2.5 (the influence is
    /// at most K (1 + ln n)^(L-1) / n), not Lemma 5's.
    bool masked = false;
    /// K(1) = K: influence <= K/n for every n; masked: K = C_L, influence <= K (1 + ln
    /// n)^(L-1) / n for every n
    std::optional<numeric::arb_ball> K;
    std::optional<numeric::arb_ball> K_at_n;      ///< K(n) <= K(1); masked: K
    /// δ_L(n) = K(n)/n; masked: K (1 + ln n)^(L-1) / n (masked_rate)
    std::optional<numeric::arb_ball> bound_at_n;
    /// max_{r,r'} ||W_r - W_r'||_2 of a softmax readout (osc(Δz) <= factor·δ); nullopt for
    /// recognizers.
    std::optional<numeric::arb_ball> probability_factor;
    std::vector<std::string> notes;               ///< why K is missing, and other remarks

    /// True when every hypothesis holds.
    bool hypotheses_hold() const;
    /// The first hypothesis that fails (false before unknown), or nullptr.
    const hypothesis_result* first_failure() const;
};

/// The initial-state quantities: F0 = max over Σ ∪ {eos} and all positions and lengths of
/// ||f_in(v_a, p_i)||, and Delta0 >= ||f_in(v_a, p) - f_in(v_a', p)|| for a, a' in Σ (the
/// symbols a change can swap; 0 when |Σ| = 1). Positional bounds: tables exactly (row by
/// row), formulas by formula_range.hpp per coordinate, sinusoids by ||p|| <= sqrt(ceil(dim/2))
/// (each sin/cos pair has norm 1) and |p_c| <= 1. An input map is evaluated in balls on the
/// box of positional ranges (or row by row for tables), and also bounded by
/// ||f(0)|| + ℓ_v||v|| + ℓ_p||p|| when Lipschitz; the smaller bound is used. +inf when unknown.
struct initial_bound {
    numeric::arb_ball F0;
    numeric::arb_ball Delta0;
    std::vector<std::string> notes;
};
initial_bound initial_state_bound(const model::model<numeric::rational>& m,
                                  const numeric::context& ctx);

/// Whether the a-priori K bounds the kind's own influence (theory.md §2.6), as the bound's
/// note says: softmax, and a positive normaliser of the scores whose influence vanishes
/// (StableMax: its weights lie within softmax's e^(2M) of 1/n). Not an elementwise kind (its
/// head outputs are not convex combinations) nor linear attention (its weights are not a
/// function of the scores the K is computed from).
bool a_priori_bounds_kind(model::attention_kind k);

/// The a-priori bound at length n >= 1 (K is always K(1)). K, K_at_n and bound_at_n are
/// std::nullopt when a hypothesis fails or is undecided, or a quantity has no finite bound
/// (see notes); the per-layer rows are still filled as far as they can be (+inf elsewhere).
bound_report a_priori_bound(const model::model<numeric::rational>& m, long n,
                            const numeric::context& ctx);

/// K (1 + ln n)^(layers - 1) / n, rounded up: the masked rate of theory.md §2.5 (n >= 1).
numeric::arb_ball masked_rate(const numeric::arb_ball& K, std::size_t layers, long n,
                              const numeric::context& ctx);

/// Readouts with at most this many symbols get the exact pairwise maximum in
/// logit_oscillation_factor; more would take quadratic time.
inline constexpr std::size_t exact_oscillation_rows = 1024;

/// max_{r, r'} ||W_r - W_r'||_2 over the rows of a softmax readout's W (upper-bound point),
/// computed over every pair for at most exact_oscillation_rows rows, else bounded (in linear
/// time) by 2 max_r ||W_r - m|| with m the centre of the rows' bounding box, which is at most
/// twice the pairwise maximum. With δ a bound on ||Δy_n^(L)||: osc(Δz) <= factor·δ, ||Δp||_∞ <= osc/4 and
/// TV(p, p') <= osc/4 (theory.md §2.2). Precondition: r is a softmax readout (otherwise
/// precondition_error).
numeric::arb_ball logit_oscillation_factor(const model::readout<numeric::rational>& r,
                                           const numeric::context& ctx);

} // namespace attnprop::analysis
