#pragma once
/// @file influence.hpp
/// One-symbol influence of a soft-attention model (Hahn 2020, Lemma 5; theory.md §2): for an
/// input x of length n and a position i < n, the change ||y_n^(L)(x) - y_n^(L)(x[i <- a])||_2
/// over every replacement symbol a != x_i, with the change of the output probability vector
/// (max-norm and total variation) for softmax readouts, and (for the enclosure kinds) the
/// a-posteriori bound of bounds.hpp for the same pair.
///
/// Kinds: double and MPFR give rounded values; Arb balls and certified double intervals
/// (numeric::dinterval) give enclosures (every reported quantity contains the true one, so
/// comparisons against bounds may be undecided, never wrong), and both compute the a-posteriori
/// bound. Only balls re-measure an unresolved change differentially: the interval kind is the
/// fast first stage of a filter whose undecided cases go to balls (sweep.hpp).

#include "attention/incremental_influence.hpp"
#include "attention/soft.hpp"
#include "model/model.hpp"
#include "numeric/kind_list.hpp"
#include "numeric/scalar.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// The incremental kernel's default memory for its weight tables, the profile's default too.
using attention::default_table_bytes;

/// How a profile is computed. `naive` recomputes a full forward pass per changed input;
/// `incremental` updates softmax sums (incremental_influence.hpp: L <= 2; O(H d) per change
/// for L = 1, O(n (H d + cost(F_1))) per change for L = 2); `automatic` takes incremental when
/// it applies and (without the a-posteriori bound, which it computes from x's trace and each
/// change's states, posterior_cache: always taken when it applies) its work (an O(n²) set-up for L = 2,
/// O(n) per change) is at most that of one pass per change (O(n) per layer whose scores are
/// constant, O(n²) per other layer below the top, O(n) for the top row). Both agree to working precision for double
/// and MPFR; for Arb balls both give enclosures of the same quantities.
enum class influence_method { automatic, incremental, naive };
const char* to_string(influence_method m);

struct influence_options {
    /// 0-based positions to change (each < n - 1); empty = every position 0 .. n - 2.
    std::vector<std::size_t> positions;
    influence_method method = influence_method::automatic;
    /// Compute the a-posteriori bound per pair (Arb balls and certified double intervals;
    /// ignored for the rounding kinds).
    bool posterior = false;
    /// Memory for the incremental MPFR kernel's layer-1 weight tables
    /// (incremental_influence.hpp); callers running several profiles at once share it out.
    std::size_t table_bytes = default_table_bytes;
};

/// One changed input: position i (0-based) replaced by symbol `replacement`.
template <class S> struct influence_pair {
    std::size_t position = 0;
    int replacement = 0;
    S dy;                        ///< ||y_n^(L)(x) - y_n^(L)(x')||_2
    std::optional<S> dp_max;     ///< max_r |p_r - p'_r| (softmax readouts)
    std::optional<S> dp_tv;      ///< (1/2) sum_r |p_r - p'_r| (softmax readouts)
    /// Upper-bound point of the a-posteriori bound (bounds.hpp: posterior_bound on two traces
    /// for the naive method, posterior_cache for the incremental one), when asked
    /// for and S is an Arb ball.
    std::optional<numeric::arb_ball> posterior;
};

/// The influence profile of one input.
template <class S> struct influence_profile {
    model::vec<S> y;                          ///< y_n^(L)(x)
    std::optional<model::vec<S>> probabilities; ///< softmax readouts
    std::vector<influence_pair<S>> pairs;     ///< by position, then replacement symbol
    influence_method method = influence_method::naive; ///< what was used
};

/// Whether the incremental method applies to the model: soft attention, 1 <= L <= 2, every
/// head a dot-product score and a linear value map (f_in, positional embeddings and F_k may be
/// arbitrary). Otherwise profiles recompute.
bool incremental_applies(const model::model<numeric::rational>& m);

/// The method influence_profile_of takes for `opt` on an input of length n (positions empty =
/// every position): opt.method when it is not automatic (validated as influence_profile_of
/// does), else incremental when it applies and either the a-posteriori bound is asked for or
/// its O(n^2) set-up plus updates cost no more than one pass per change. Callers that split one
/// profile into parts pass the method of the whole, so every part computes the same values.
template <numeric::ExpScalar S>
influence_method chosen_method(const model::model<S>& m, const model::model<numeric::rational>& exact,
                               std::size_t n, const influence_options& opt);

/// The estimated work of a profile of `changes` changes on an input of length n by `method`
/// (incremental or naive), in the units chosen_method compares (score evaluations): the naive
/// method one pass per change and one for x, the incremental one its set-up and its updates.
/// With changes = 0 it is the set-up that every part of a profile cut into parts repeats.
double profile_cost(const model::model<numeric::rational>& exact, std::size_t n, double changes,
                    influence_method method);

/// The profile of x (eos last, n = x.size() >= 2). `m` is `exact` converted to S at ctx's
/// precision; `exact` is used for the a-posteriori bound. `out.method` records the method
/// used. Throws precondition_error for a hard model, a position >= n - 1, or method ==
/// incremental when it does not apply; an
/// undefined value of x or of a changed input is numeric::undefined_error, located, its reason
/// ending in "; input 'x'" or "; input 'x' with position i changed to 'a'".
template <numeric::ExpScalar S>
influence_profile<S> influence_profile_of(const model::model<S>& m,
                                          const model::model<numeric::rational>& exact,
                                          const model::input_sequence& x,
                                          const numeric::context& ctx,
                                          const influence_options& opt = {});

/// max(a, b): numeric::max_of, and for balls (an overload) Arb's arb_max (a ball containing
/// the maximum over both balls, also where their comparison is undecided).
template <numeric::Scalar S> S max_enclosure(const S& a, const S& b);
numeric::arb_ball max_enclosure(const numeric::arb_ball& a, const numeric::arb_ball& b);

#define ATTNPROP_INFLUENCE_EXTERN(S)                                                               \
    extern template influence_profile<S> influence_profile_of(                                     \
        const model::model<S>&, const model::model<numeric::rational>&,                            \
        const model::input_sequence&, const numeric::context&, const influence_options&);
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INFLUENCE_EXTERN)
#undef ATTNPROP_INFLUENCE_EXTERN

} // namespace attnprop::analysis
