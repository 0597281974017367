#pragma once
/// @file cross_entropy.hpp
/// The cross-entropy corollary of Hahn's Lemma 5 (theory.md §2.2, S5): a predictor whose output
/// moves by at most η when one symbol changes has a mean cross-entropy of at least
/// 1 - log2(1 + η) bits on a language whose label that symbol swaps. Over the whole cube
/// {0,1}^(n-1) for PARITY and FIRST (cube_cross_entropy), and on 2DYCK forced-bracket pairs
/// (forced_pair_cross_entropy); the sweep (sweep.hpp) reports it per row.

#include "lang/languages.hpp"
#include "model/model.hpp"
#include "numeric/kinds.hpp"
#include "util/verdict.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// The cross-entropy corollary at one n (theory.md §2.2, S5).
struct cross_entropy_row {
    long n = 0;
    lang::language language = lang::language::parity;
    bool exhaustive = false;       ///< the whole cube {0,1}^(n-1) was enumerated
    std::size_t inputs = 0;        ///< inputs averaged over
    std::size_t correct = 0;       ///< certainly correct argmax predictions
    std::string mean_ce_bits;      ///< mean of -log2 p(label) (decimal)
    std::string accuracy;          ///< correct / inputs (decimal)
    std::string eta;               ///< η_n (decimal): see below
    std::string floor_bits;        ///< 1 - log2(1 + η_n) (decimal)
    /// passed: CE >= floor is decided; failed: CE < floor. Sampled (non-exhaustive) rows never
    /// fail: an observed violation is reported undecided, because a sampled η is only a lower
    /// estimate of the supremum the inequality needs.
    verdict check = verdict::not_applicable;
    /// η = 0 is proved (every measured pair's change of p is the exact point 0, computed as a
    /// differential enclosure): the predictor gives each label-swapped pair the same p, so each
    /// pair costs -log2(p_0 p_1) >= 2 bits by AM-GM and CE >= 1 bit = the floor, whatever the
    /// balls of CE and the floor say (they are equal when p = (1/2, 1/2)). `check` is then passed.
    bool eta_zero_exactly = false;
    double mean_ce_approx = 0;     ///< for plots and trend tests only
    /// The bound over every input (all_inputs.hpp): η̄(n) >= η over the whole cube (every
    /// one-symbol change), and the floor 1 - log2(1 + η̄(n)) it proves for the mean
    /// cross-entropy over every input (decimal, rounded down). With `certified` the corollary is
    /// decided by it: `check` is passed (an enumerated CE below the certified floor would be
    /// failed: a finding).
    std::optional<std::string> certified_eta, certified_floor_bits;
    bool certified = false;
};

/// A 2DYCK forced-bracket pair (theory.md §2.2): x is a random prefix of length n - 1 (eos
/// appended) of a 2DYCK word that ends unbalanced, so the type of its next closing bracket is
/// forced (label 0 for ")", 1 for "]"); y is x with the type of the top unmatched opener, at
/// `position`, flipped, so its label is the other one. Input k of length n for a seed.
struct forced_bracket_pair {
    model::input_sequence x, y;
    int label_x = 0, label_y = 1;
    std::size_t position = 0; ///< 0-based position of the flipped opener
};
forced_bracket_pair forced_pair(const model::model<numeric::rational>& m, long n, std::size_t k,
                                std::uint64_t seed);

/// The forced-bracket pair of an explicit prefix x (eos last): x[0..n-1) must be a prefix of a
/// 2DYCK word (every closer matches the innermost open opener) that ends unbalanced; y flips
/// the type of its top unmatched opener. nullopt when x is no such prefix.
std::optional<forced_bracket_pair> forced_pair_of(const model::model<numeric::rational>& m,
                                                  const model::input_sequence& x);

/// The 2DYCK analogue of the cross-entropy corollary (theory.md §2.2) on `pairs` forced-bracket
/// pairs (forced_pair(m, n, k, seed), k < pairs), measured in S: for any binary predictor
/// p_label(x) + p_label'(x') <= 1 + |p(x) - p(x')|_inf, so by Jensen the mean cross-entropy over
/// the 2 pairs inputs is >= 1 - log2(1 + eta) with eta the largest change over the pairs: a
/// theorem for the measured eta, so `check` fails only for a real violation (or with
/// eta_divisor > 1, which divides eta in the floor: the negative control). The model must be
/// a softmax predictor over ( ) [ ] whose outputs are exactly ) and ] (else precondition_error).
template <numeric::ExpScalar S>
cross_entropy_row forced_pair_cross_entropy(const model::model<numeric::rational>& m, long n,
                                            std::size_t pairs, std::uint64_t seed,
                                            long eta_divisor, const numeric::context& ctx);

/// forced_pair_cross_entropy on explicit pairs (all of one length n, at least one), e.g. the
/// pairs a search found: the same statement and measurement.
template <numeric::ExpScalar S>
cross_entropy_row forced_pairs_cross_entropy(const model::model<numeric::rational>& m,
                                             const std::vector<forced_bracket_pair>& pairs,
                                             long eta_divisor, const numeric::context& ctx);

/// The cross-entropy corollary over the whole cube {0,1}^(n-1) (2 <= n, n - 1 <= 20), for a
/// softmax predictor over the input alphabet {0, 1} whose outputs include 0 and 1, in Arb balls: mean CE in bits
/// of the language label (parity or first), the accuracy, and η = min over label-swapping
/// bits b of max_x ||p(x) - p(x ^ b)||_∞ (every bit for PARITY, bit 1 for FIRST), which makes
/// CE >= 1 - log2(1 + η) a theorem. `eta_divisor` divides η (negative controls).
/// `flipped_bit` receives the 1-based b attaining η. Throws precondition_error when the
/// alphabets are not {0, 1} or the readout is not softmax.
struct cube_cross_entropy_result {
    numeric::arb_ball ce_bits;
    numeric::arb_ball eta;
    numeric::arb_ball floor_bits;
    std::size_t correct = 0;
    std::size_t cube = 0;
    std::size_t flipped_bit = 0;
    numeric::order ce_vs_floor = numeric::order::unknown;
    /// η = 0 is proved (differential enclosures): p does not depend on the flipped bit, so
    /// CE >= 1 bit = the floor by AM-GM on every label-swapped pair, whatever ce_vs_floor says.
    bool eta_zero_exactly = false;
};
cube_cross_entropy_result cube_cross_entropy(const model::model<numeric::rational>& m, long n,
                                             lang::language label, const numeric::context& ctx,
                                             long eta_divisor = 1);

/// The label of x (without eos) under PARITY or FIRST over {0, 1}: 1 (odd / first bit 1) or 0.
int binary_label(lang::language l, const std::string& x);

} // namespace attnprop::analysis
