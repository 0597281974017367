#pragma once
/// @file worst_case.hpp
/// A search for the worst one-symbol change of a soft model at one length n (Hahn 2020,
/// Lemma 5): over inputs x in Σ^(n-1), positions i and replacement symbols a, the largest
/// ||y_n^(L)(x) - y_n^(L)(x[i <- a])||_2 (or the largest ||Δp||_∞ of a softmax readout).
///
/// One evaluation profiles one input: every position and every replacement, through
/// influence_profile_of in double (the incremental kernel where it applies, so one change costs
/// O(n d) for L = 1 and O(n (H d + cost(F_1))) for L = 2, not a forward pass). The search is
/// exhaustive when |Σ|^(n-1) <= budget (every input, in order); otherwise it alternates random
/// restarts and local moves from the best input so far:
/// - restarts draw an input uniformly, or (every other restart) with random symbol frequencies
///   (a random point of the simplex), so that inputs whose symbol counts are far from uniform
///   (a tie planted at a specific count of 1s) are reached, which uniform inputs almost never
///   are at large n;
/// - local moves take the best changed input itself (half of the moves: the steepest step),
///   flip one to three symbols at random positions, flip one at or next to the position of
///   the best change, or shift a symbol by one position (swap neighbours); a move is kept when
///   it does not lower the objective, and a restart follows a run of moves without a gain.
/// Everything is drawn from a splitmix64 stream of (seed, n), so a search is reproducible from
/// its seed, on any platform and thread count.
///
/// What it proves: the largest value found is attained (a lower bound on the worst case at n);
/// it is the maximum over every input only when `exhaustive`. The objective is computed in
/// double to steer the search; callers measure the found pair again rigorously (Arb balls)
/// before comparing it with a bound.

#include "model/model.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// What the search maximises at one n (at fixed n, n·Δ orders the candidates as Δ does).
enum class search_objective {
    influence,  ///< ||Δy_n^(L)||_2
    prob_change ///< ||Δp||_∞ (softmax readouts)
};
const char* to_string(search_objective o);

struct search_options {
    /// Inputs profiled (evaluations), each over every position and replacement; >= 1.
    std::size_t budget = 256;
    std::uint64_t seed = 1;
    search_objective objective = search_objective::influence;
    /// The first evaluation's input (eos last, length n), e.g. a case's drawn input; else a
    /// uniform one.
    std::optional<model::input_sequence> start;
};

struct search_result {
    long n = 0;
    std::uint64_t seed = 1;
    bool found = false;              ///< some evaluated candidate had a finite objective
    model::input_sequence input;     ///< the best input (eos last)
    std::size_t position = 0;        ///< 0-based position of the best change
    int replacement = 0;             ///< its replacement symbol (index into Σ)
    double value = 0;                ///< the objective there, in double (approximate)
    std::size_t found_at = 0;        ///< 1-based evaluation that found it
    std::size_t evaluations = 0;     ///< inputs profiled
    std::size_t restarts = 0;        ///< random restarts among them (the first input included)
    bool exhaustive = false;         ///< every input of Σ^(n-1) was evaluated
    /// The first candidate whose value does not exist (a layer norm at zero variance, ...):
    /// the located message, with the input it was met on. The search goes on past it.
    std::optional<std::string> undefined;
    model::input_sequence undefined_input; ///< that input (eos last)
};

/// Runs the search at length n (2 <= n, a soft model with |Σ| >= 2 for a change to exist;
/// precondition_error otherwise, and for prob_change without a softmax readout).
search_result worst_case_search(const model::model<numeric::rational>& m, long n,
                                const search_options& opt);

/// A search over inputs of length n of a hard model for one where evaluating in double
/// (--scalar double) selects another position than exact arithmetic (at some layer, row or
/// head) or, for a recognizer, gives another accept/reject. Exhaustive when |Σ|^(n-1) <=
/// budget; otherwise `start` (or a uniform input) first, then restarts alternating uniform
/// inputs and inputs with random symbol frequencies, each followed by a few inputs one to three
/// flips away (near ties between scores of equal-looking keys are often a flip apart).
/// Reproducible from the seed. Inputs whose exact value does not exist are skipped (the first
/// is reported in `undefined`). The first disagreement ends the search.
struct disagreement_result {
    long n = 0;
    bool found = false;
    model::input_sequence input;   ///< the disagreeing input (eos last)
    std::string where;             ///< "layer 1, position 3, head 1: exact 2, double 1" or the readout
    std::size_t found_at = 0;      ///< 1-based evaluation that found it
    std::size_t evaluations = 0;
    bool exhaustive = false;       ///< every input was evaluated (found = false then proves none)
    std::optional<std::string> undefined;
};
disagreement_result double_disagreement_search(const model::model<numeric::rational>& m, long n,
                                               const search_options& opt);

/// A search for the forced-bracket pairs of a 2DYCK predictor (a softmax readout over ( ) [ ]
/// with the outputs ) and ]) with the smallest margin of the 2DYCK cross-entropy corollary
/// (theory.md §2.2; forced_pairs_cross_entropy): over sets of K pairs of length n (an
/// unbalanced 2DYCK prefix x and x with its top unmatched opener's type flipped),
///     margin = mean cross-entropy (bits) over the 2K inputs - (1 - log2(1 + η / D)),
/// η the largest |Δp| over the pairs and D the divisor of the negative controls. The theorem
/// says margin >= 0 for every set; the search looks for the set closest to violating it.
///
/// One evaluation is the margin of one candidate set, in double (each pair's two forward
/// passes are cached, so a set that changes one pair costs two passes). The first set is
/// `start` (the case's drawn pairs) or random; then, with a seeded splitmix64 stream, local
/// moves keep a set when its margin does not grow: a pair's prefix changes (the types of a
/// matched opener and its closer, or of an unmatched opener below the top, flipped; one or two
/// symbols edited or two neighbours swapped, kept when the prefix stays unbalanced with the
/// same top opener; the balanced part after the top opener or the prefix before it drawn anew),
/// applied to the pair with the largest cross-entropy or a random one, or the worst pair is
/// replaced by a changed copy of the best one or by a new random pair. A run of moves without
/// a gain ends in a restart (a new random set). With `sample_only` every evaluation after the
/// first is a new random set: the plain sampler the search is measured against.
///
/// What it proves: nothing by itself (double). The smallest margin found is attained by the
/// returned set in double, an upper bound on the true minimum over sets, never the minimum;
/// callers judge the returned pairs rigorously (forced_pairs_cross_entropy in balls).
struct forced_pair_search_options {
    std::size_t budget = 256; ///< pair sets evaluated; >= 1
    std::uint64_t seed = 1;
    std::size_t pairs = 8;    ///< K, the pairs of a set; >= 1
    long eta_divisor = 1;     ///< D >= 1
    bool sample_only = false; ///< plain sampling: a new random set at every evaluation
    /// The first set: K prefixes of length n (eos last), each an unbalanced 2DYCK prefix.
    std::optional<std::vector<model::input_sequence>> start;
};

struct forced_pair_search_result {
    long n = 0;
    std::uint64_t seed = 1;
    bool found = false;                    ///< some evaluated set had a finite margin
    std::vector<model::input_sequence> pairs; ///< the best set's prefixes x (eos last)
    double margin = 0;                     ///< its margin in double (approximate)
    std::size_t found_at = 0;              ///< 1-based evaluation that found it
    std::size_t evaluations = 0;           ///< sets evaluated
    std::size_t pairs_measured = 0;        ///< distinct pairs measured (two forward passes each)
    std::size_t restarts = 0;              ///< random sets among the evaluations (the first included)
    /// The first pair whose probabilities do not exist in double: the message and its input.
    std::optional<std::string> undefined;
    model::input_sequence undefined_input; ///< that pair's prefix x (eos last)
};

/// Runs the forced-pair search at length n >= 2 (precondition_error for another model, n < 2,
/// a budget, K or D below 1, or a start that is not K unbalanced prefixes of length n).
forced_pair_search_result forced_pair_search(const model::model<numeric::rational>& m, long n,
                                             const forced_pair_search_options& opt);

} // namespace attnprop::analysis
