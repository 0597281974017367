#pragma once
/// @file all_margins.hpp
/// Hard and average-hard margins over every input at one n (docs/theory.md §4.5): the smallest
/// score margin of the output row over all |Σ|^(n-1) inputs, decided exactly for one-layer
/// models without enumerating them, the largest value spreads, the possible exact ties between
/// keys of different values, and the smallest slack of the hard readout; from them the
/// worst-case data of the propagated bound of simulate.hpp, hence the smallest constant β that
/// certifies the soft counterpart's readout on *every* input, and a yes/no for a given β.
///
/// One layer, row n (the only row the output reads), one head at a time: each key j (its
/// state y_j^(0) depends on x_j alone) can score the values s_j(a), a in Σ (eos at n), chosen
/// independently of the other keys. A margin γ = M - m (M the maximal score, m the largest
/// below it) is attained by an input exactly when one key scores M, another m, and every other
/// key can score <= m or exactly M; so the smallest margin is found over the pairs (key, M)
/// with, for each, the largest admissible m below M (one pass over the scores sorted, each
/// key's lowest score sorted): O(n |Σ| log(n |Σ|)) exact comparisons. An exact tie between two
/// keys of different values can occur when some score M is reachable by two keys and every
/// other key can stay <= M. The readout's hard value at row n is, for unique-hard attention
/// with one head, the update applied to the value of a key that can be the leftmost maximum
/// (every earlier key able to stay below, every later one at or below): each such (key,
/// symbol) is evaluated exactly. Otherwise (several heads, average-hard) the readout's slack is
/// bounded on the box of the head outputs.

#include "soft_hard/simulate.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// An input (without eos) and the row, head and keys that attain a margin or a tie.
struct margin_witness {
    std::string input;
    std::size_t query = 0;  ///< 1-based query position (n)
    std::size_t head = 0;   ///< 1-based
    std::size_t top = 0;    ///< 1-based key at the maximal score
    std::size_t second = 0; ///< 1-based key at the maximal score minus γ (the other tied key for a tie)
};

struct head_margin {
    /// The smallest margin over every input; none when every key always ties.
    std::optional<surd> gamma;
    /// gamma is attained (by the witness); false: a lower bound (the search for admissible
    /// inputs gave up on a crowded score level).
    bool exact = true;
    std::optional<margin_witness> witness;
    arb_ball spread_out;  ///< upper point of the largest distance between two values (D)
    arb_ball spread_in;   ///< upper point of the spread of values in a possible tie (R; 0: none)
    std::optional<margin_witness> tie; ///< unique-hard: an input tying keys of different values
};

struct every_input_margins {
    long n = 0;
    bool applies = false;
    std::string reason;                   ///< why not (several layers, ...)
    std::vector<head_margin> heads;       ///< layer 1, row n
    std::optional<surd> gamma;            ///< the smallest over the heads
    std::optional<margin_witness> witness;
    bool slack_exact = false;             ///< every possible hard output evaluated exactly
    std::optional<rational> slack_q, slack_positive_q; ///< the two slacks exactly, when slack_exact
    arb_ball slack;                       ///< an enclosure (or lower point) of the smallest readout slack
    std::string slack_input;              ///< an input attaining it (exact)
    std::size_t slack_key = 0;            ///< 1-based key the hard head selects there (0: unknown)
    std::optional<arb_ball> slack_positive; ///< the smallest nonzero slack (exact)
    std::string slack_positive_input;
    std::size_t slack_positive_key = 0;
    /// Some input's hard readout lies exactly on its threshold (slack 0): its soft readout is
    /// decided by the leak's direction, which no β controls.
    bool on_threshold = false;
    bound_data data;       ///< the worst case of every input, for propagate()
    bound_data data_off;   ///< the same with slack_positive (every input off the threshold)
    /// smallest_certified_beta of data / data_off (nullopt: none up to 2^40).
    std::optional<arb_ball> beta_every, beta_off;
};

/// Deliberate defects for the negative controls.
struct margin_options {
    /// Take the first score below M of another key as the second level without checking that
    /// the other keys can stay below it (claims margins no input attains).
    bool skip_blocking_for_testing = false;
    /// Report each head's smallest margin twice too large (its witness no longer attains it).
    bool double_margin_for_testing = false;
};

/// The margins over every input at n (n >= 2) of a hard or average-hard model, at the
/// context's precision. Precondition (precondition_error): a hard kind. A model with more than
/// one layer, or one the exact scalar cannot evaluate, gets applies = false with the reason.
every_input_margins every_input_margins_at(const model::model<rational>& hard, long n,
                                           const numeric::context& ctx, const margin_options& opt = {});

/// Whether β (every head) certifies the soft counterpart's readout on every input (with
/// `off_threshold`: on every input whose hard readout is off its threshold).
bool certifies_every_input(const every_input_margins& e, const model::model<rational>& hard,
                           const model::expr& beta, bool off_threshold, const numeric::context& ctx);

} // namespace attnprop::analysis
