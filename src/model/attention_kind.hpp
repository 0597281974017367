#pragma once
/// @file attention_kind.hpp
/// The attention kinds (docs/theory.md, "The models") as a closed set with one registry: the
/// enum, and one row of facts per kind that answers every question the rest of attnprop asks
/// about a kind (how a head's weights come from its scores, the tie rule, whether the kind is
/// exact over the rationals, which theorems and analyses apply, the model file's name, whether
/// an incremental one-symbol-change kernel exists). Code outside this file and the kernels of
/// src/attention/ asks these questions and never compares kinds (tests/attention_kinds.sh
/// checks it); a switch over attention_kind has no default branch, so the compiler names every
/// place a new kind must be handled (docs/architecture.md, "Adding an attention kind").

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace attnprop::model {

/// Hard (unique-hard): weight 1 on the leftmost position attaining the maximal score. Soft:
/// softmax. Average-hard: weight 1/t on each of the t positions attaining the maximal score
/// (ties decided exactly, as for hard). StableMax: weights s(z_j) / sum_k s(z_k) with
/// s(x) = x + 1 for x >= 0 and 1 / (1 - x) for x < 0. Sparsemax: the Euclidean projection of
/// the scores onto the simplex, max(z_j - tau, 0). Sigmoid: weights sigma(z_j + b(n)), not
/// normalised, b(n) the layer's bias. 1.5-entmax: (z_j / 2 - tau)_+^2 with the weights summing
/// to 1. Softpick: relu(e^(z_j) - 1) / (sum_k |e^(z_k) - 1| + eps), weights summing to at most 1
/// (all 0 on a row without a positive score). Linear ("linear-normalised"): weights
/// phi(q_i) . phi(k_j) / sum_k phi(q_i) . phi(k_k), phi the layer's feature map (elu + 1 or relu)
/// applied to the query and key vectors, not to the score; linear-sum: phi(q_i) . phi(k_j), not
/// normalised (docs/theory.md, "Attention variants").
enum class attention_kind {
    hard,
    soft,
    average_hard,
    stablemax,
    sparsemax,
    sigmoid,
    entmax15,
    softpick,
    linear,
    linear_sum,
};

/// How a head's weights come from a row's scores.
enum class weighting {
    maximal_score, ///< weight only on keys attaining the maximal score (attention::hard_forward)
    /// every key weighted by a normaliser of the scores (attention::soft_forward), or, for a
    /// kind with `feature_map`, by the features of its query and key vectors
    normaliser,
    /// every key weighted by a function of its own score alone (attention::soft_forward): the
    /// weights need not sum to 1, so no shortcut that averages the values applies
    elementwise,
};

/// Which keys attaining the maximal score a maximal-score kind weighs.
enum class tie_rule {
    leftmost, ///< weight 1 on the smallest such position
    average,  ///< weight 1/t on each of the t such positions
    none,     ///< a normaliser or an elementwise kind: no maximal set is selected
};

/// What becomes of Hahn's soft-attention lemma (one symbol's influence on y_n^(L) is O(1/n))
/// under a kind (docs/theory.md, "Attention variants").
enum class influence_law {
    vanishing,     ///< O(1/n): a positive normaliser independent of n, scores bounded (sigmoid:
                   ///< only for a recognised bias -log(n) + c, model::influence_of)
    not_vanishing, ///< can stay Theta(1) as n grows (a witness exists)
    hard_theorem,  ///< a maximal-score kind: Hahn's Theorem 1 is its statement instead
};

/// The facts of one attention kind.
struct attention_kind_info {
    attention_kind kind;
    /// The model file's spelling ("attention": "hard"), also the name messages and reports use.
    std::string_view name;
    weighting weights;
    /// Every row's weights sum to 1 (a maximal-score kind and the normalisers but softpick): a
    /// head whose scores are constant is then the mean of its values, the soft pass's shortcut.
    /// Sigmoid's and softpick's weights need not: every row of theirs is formed from its scores.
    bool sums_to_one;
    tie_rule ties;
    /// The tie rule in words, for messages ("weighs every maximal position"); empty for
    /// leftmost and none.
    std::string_view ties_in_words;
    /// Exact over the rationals: the weights of exact scores are exact rationals, so the exact
    /// scalar evaluates the kind (when the maps allow it). Otherwise `needs` says what it needs
    /// (an exact blocker's words: "softmax needs exp").
    bool exact;
    std::string_view needs;
    /// Hahn's Theorem 1 (docs/theory.md): the restriction builder and its certificate,
    /// `attnprop restrict`, the properties of model_requirement::hard and the double
    /// disagreement search take the kind. Unique-hard only: the restriction argument is about
    /// the leftmost maximal score.
    bool hard_limit;
    /// Hahn's soft-attention lemma: the influence profiles, the sweep across n, the worst-case
    /// searches, the differential one-symbol change, the properties of
    /// model_requirement::soft, and the bound's hypotheses as stated (`attnprop bound` reads
    /// any other kind by its softmax counterpart and says so).
    bool soft_influence;
    /// Whether one symbol's influence vanishes as O(1/n) under the kind, and why (or why not)
    /// in words for the bound's notes and check's applicability ("weights within
    /// [g_min / (n g_max), g_max / (n g_min)]").
    influence_law influence;
    std::string_view influence_in_words;
    /// Soft attention simulating hard attention: `attnprop simulate` and analysis::score_gaps
    /// take the kind as the hard source whose soft counterpart is compared with it.
    bool simulate_source;
    /// attention::incremental_influence (one-symbol changes by updated softmax sums) exists for
    /// the kind; otherwise an influence profile recomputes every changed input (the generic
    /// path).
    bool incremental;
    /// Linear attention (Katharopoulos et al. 2020): the weights are phi(q_i) . phi(k_j) of the
    /// layer's feature map ("feature_map": elu1 or relu) on the unscaled query and key vectors,
    /// not a function of the score q_i . k_j; the score scale and beta do not apply, a head must
    /// score by a dot product, and only these kinds accept "feature_map".
    bool feature_map;
};

/// The registry: one row per kind, in the enum's order (checked below; the unit test of the
/// registry checks that every enumerator has its row).
inline constexpr std::array<attention_kind_info, 10> attention_kinds{{
    {attention_kind::hard, "hard", weighting::maximal_score,
     /*sums_to_one=*/true, tie_rule::leftmost, "",
     /*exact=*/true, "", /*hard_limit=*/true, /*soft_influence=*/false,
     influence_law::hard_theorem,
     "the output depends on at most c positions once a restriction fixes the rest (Theorem 1)",
     /*simulate_source=*/true, /*incremental=*/false, /*feature_map=*/false},
    {attention_kind::soft, "soft", weighting::normaliser,
     /*sums_to_one=*/true, tie_rule::none, "",
     /*exact=*/false, "softmax needs exp", /*hard_limit=*/false, /*soft_influence=*/true,
     influence_law::vanishing,
     "softmax of scores in [-M, M] puts every weight within [e^(-2M) / n, e^(2M) / n]",
     /*simulate_source=*/false, /*incremental=*/true, /*feature_map=*/false},
    {attention_kind::average_hard, "average-hard", weighting::maximal_score,
     /*sums_to_one=*/true, tie_rule::average,
     "weighs every maximal position",
     /*exact=*/true, "", /*hard_limit=*/false, /*soft_influence=*/false,
     influence_law::hard_theorem,
     "a maximal-score kind: the soft lemma does not apply, and Theorem 1 is about unique-hard "
     "attention only",
     /*simulate_source=*/true, /*incremental=*/false, /*feature_map=*/false},
    {attention_kind::stablemax, "stablemax", weighting::normaliser,
     /*sums_to_one=*/true, tie_rule::none, "",
     /*exact=*/true, "", /*hard_limit=*/false, /*soft_influence=*/false,
     influence_law::vanishing,
     "s(x) = x + 1 (x >= 0), 1 / (1 - x) (x < 0) is positive and independent of n: scores in "
     "[-M, M] put every weight within [1 / ((1 + M)^2 n), (1 + M)^2 / n]",
     /*simulate_source=*/false, /*incremental=*/false, /*feature_map=*/false},
    {attention_kind::sparsemax, "sparsemax", weighting::normaliser,
     /*sums_to_one=*/true, tie_rule::none, "",
     /*exact=*/true, "", /*hard_limit=*/false, /*soft_influence=*/false,
     influence_law::not_vanishing,
     "sparsemax is exactly one-hot once the top score leads the second by 1 or more, so one "
     "symbol can move the output by Theta(1) at every n",
     /*simulate_source=*/false, /*incremental=*/false, /*feature_map=*/false},
    // The registry's law is sigmoid's with a bias independent of n (the default b = 0);
    // model::influence_of refines it for a bias recognised as -log(n) + c.
    {attention_kind::sigmoid, "sigmoid", weighting::elementwise,
     /*sums_to_one=*/false, tie_rule::none, "",
     /*exact=*/false, "sigmoid needs exp", /*hard_limit=*/false, /*soft_influence=*/false,
     influence_law::not_vanishing,
     "sigmoid weights sigma(s + b) are not normalised: with b independent of n and scores in "
     "[-M, M] each is at least sigma(b - M), so n of them sum to Theta(n) and one symbol can "
     "move the output by Theta(1) at every n",
     /*simulate_source=*/false, /*incremental=*/false, /*feature_map=*/false},
    {attention_kind::entmax15, "entmax15", weighting::normaliser,
     /*sums_to_one=*/true, tie_rule::none, "",
     /*exact=*/false, "1.5-entmax's threshold needs a square root", /*hard_limit=*/false,
     /*soft_influence=*/false, influence_law::not_vanishing,
     "1.5-entmax, (z / 2 - tau)_+^2, is exactly one-hot once the top score leads the second by 2 "
     "or more, so one symbol can move the output by Theta(1) at every n",
     /*simulate_source=*/false, /*incremental=*/false, /*feature_map=*/false},
    // Softpick normalises by sum_k |e^(z_k) - 1| + eps, not by the sum of its numerators: its
    // weights sum to 1 - (sum of the negative keys' |e^z - 1| + eps) / denominator, at most 1.
    {attention_kind::softpick, "softpick", weighting::normaliser,
     /*sums_to_one=*/false, tie_rule::none, "",
     /*exact=*/false, "softpick needs exp", /*hard_limit=*/false, /*soft_influence=*/false,
     influence_law::not_vanishing,
     "softpick weighs a key of score 0 by exactly 0 and leaves it out of its denominator, so "
     "one positive score among zeros takes weight (e^s - 1) / (e^s - 1 + eps) at every n and one "
     "symbol can move the output by Theta(1); with every score at least delta away from 0 the "
     "weights are O(1/n) again",
     /*simulate_source=*/false, /*incremental=*/false, /*feature_map=*/false},
    // Linear attention's weights come from features of q and k, so a head whose scores are
    // constant (Q = 0 or K = 0) is no mean of its values (phi(0) = 1 under elu1, and the keys'
    // features still differ): sums_to_one is false, which turns the soft pass's shortcut off.
    // The registry's law is elu1's; model::influence_of refines it per model (relu features:
    // no law asserted).
    {attention_kind::linear, "linear-normalised", weighting::normaliser,
     /*sums_to_one=*/false, tie_rule::none, "",
     /*exact=*/true, "", /*hard_limit=*/false, /*soft_influence=*/false,
     influence_law::vanishing,
     "linear attention with elu1 features: inputs bounded by B put every feature within "
     "[e^(-B), B + 1], so every weight is within [c_min / (c_max n), c_max / (c_min n)] with "
     "c_min = d_k e^(-2B), c_max = d_k (B + 1)^2",
     /*simulate_source=*/false, /*incremental=*/false, /*feature_map=*/true},
    {attention_kind::linear_sum, "linear-sum", weighting::normaliser,
     /*sums_to_one=*/false, tie_rule::none, "",
     /*exact=*/true, "", /*hard_limit=*/false, /*soft_influence=*/false,
     influence_law::not_vanishing,
     "unnormalised linear attention sums n terms phi(q) . phi(k_j): with elu1 features each is "
     "at least d_k e^(-2B), so one symbol's own term moves the output by Theta(1) at every n",
     /*simulate_source=*/false, /*incremental=*/false, /*feature_map=*/true},
}};

static_assert([] {
    for (std::size_t k = 0; k < attention_kinds.size(); ++k)
        if (attention_kinds[k].kind != static_cast<attention_kind>(k)) return false;
    return true;
}(), "attention_kinds: one row per kind, in the enum's order");

/// The facts of a kind.
constexpr const attention_kind_info& info(attention_kind k) {
    return attention_kinds[static_cast<std::size_t>(k)];
}

/// "hard", "soft", "average-hard", "stablemax", "sparsemax", "sigmoid", "entmax15", "softpick",
/// "linear-normalised", "linear-sum" (the model file's spelling).
constexpr const char* to_string(attention_kind k) { return info(k).name.data(); }

/// Whether the kind selects keys by the maximal score (hard or average-hard) rather than
/// weighting every key (by a normaliser or elementwise).
constexpr bool selects_maximum(attention_kind k) {
    return info(k).weights == weighting::maximal_score;
}

/// Whether a maximal-score kind averages the values of every maximal key (average-hard).
constexpr bool averages_ties(attention_kind k) { return info(k).ties == tie_rule::average; }

/// The kind a model file names, or std::nullopt.
std::optional<attention_kind> parse_attention_kind(std::string_view name);

/// Every kind's file name for messages: "'hard', 'soft', 'average-hard', 'stablemax',
/// 'sparsemax' or 'sigmoid'".
std::string attention_kind_names();

} // namespace attnprop::model
