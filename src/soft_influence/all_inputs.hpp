#pragma once
/// @file all_inputs.hpp
/// Certified bounds over every input (docs/bounds.md, "Every input, every n"; theory.md §2.4):
/// the largest one-symbol influence Δ(n) = max over inputs x of length n, positions p < n and
/// replacements of ||y_n^(L)(x) - y_n^(L)(x[p <- a])||_2, and the largest probability change
/// η(n) = max ||Δp||_∞ of a softmax readout, bounded from above for *every* input at one n, and
/// for every n of a range of lengths at once (n·Δ(n) <= K* for all n >= n0).
///
/// Method: the positions are cut into classes (position_classes.hpp), and per layer k, class c
/// and symbol a of the class's members a box holds y_j^(k) for every input in which position j
/// of c holds a; the scores' ranges follow from the query and key boxes, the softmax weights'
/// and class masses' ranges from the scores' ranges and the class sizes (affine in n), the head
/// outputs' boxes from those masses (a fractional knapsack) and F_k's from the boxes
/// (box_maps.hpp). Alongside, coordinatewise bounds on how far y_j^(k) moves when one symbol
/// at a position p != j changes (scaled by n: ε = n·e_δ) and at p itself (e_Δ), carried
/// through the attention (the two terms Σ w' V Δy and Σ (w' - w) V y, the second through the
/// change of the logits) and through F_k with local Lipschitz bounds on the boxes. Every step is
/// sound for every input and every n of the range; over a range, the quantities that depend on
/// n are ratios of affine functions of n, bounded by their values at the range's ends.
///
/// The bound needs dot-product scores and affine values (any positional embedding, input map
/// and update; a map that is not Lipschitz on its box, or a quantity that grows with n, gives
/// an infinite bound). It is the model's soft reading whatever its attention kind.

#include "soft_influence/position_classes.hpp"
#include "soft_influence/sweep.hpp"
#include "model/model.hpp"
#include "numeric/scalar.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// A term of the bound left out on purpose, for the negative controls: a bound without it must
/// fall below a change the worst-case search or an exhausted cube finds.
enum class dropped_term {
    none,
    changed_key,    ///< the changed key's own value change w'_p V Δy_p
    weight_change,  ///< the change of the weights Σ (w' - w) V y
};
const char* to_string(dropped_term t);

struct all_inputs_options {
    class_options classes;
    /// every_n_bound: the lengths 2 <= n < small_n are bounded one by one, the others by
    /// ranges [n0, g n0), [g n0, g^2 n0), ..., [g^j n0, inf) with n0 = small_n, g =
    /// range_growth and j = open_after.
    long small_n = 64;
    int open_after = 6;
    /// Each range's upper end: its lower end times this, minus 1.
    long range_growth = 4;
    /// Worker threads for the queries of a layer (0: hardware concurrency).
    int threads = 0;
    dropped_term drop = dropped_term::none;
    /// Keep every layer's boxes and change bounds in the result (all_inputs_result::states).
    bool keep_states = false;
};

/// Every layer's boxes and change bounds (k = 0..L; at k = L only the eos class): what the
/// tests compare with exhaustive enumeration.
struct all_inputs_states {
    std::vector<position_class> classes;
    /// box[k][c][t][coordinate]: y_j^(k) for j in class c holding symbol slot t (the symbol
    /// index t, or eos for the eos class).
    std::vector<std::vector<std::vector<std::vector<numeric::dinterval>>>> box;
    /// eps[k][c][t]: n |Δy_j^(k)| for j in c holding t, j != p (scaled, coordinatewise).
    std::vector<std::vector<std::vector<std::vector<double>>>> eps;
    /// Delta[k][c]: |Δy_p^(k)| for p in c (empty for eos).
    std::vector<std::vector<std::vector<double>>> Delta;
};

/// One layer of the bound, for reports (upper bounds).
struct all_inputs_layer {
    double max_weight = 0;  ///< n times the largest weight a changed key can get, over queries
    double delta = 0;       ///< the largest n·||Δy_j^(k)||_2 over positions j != p
    double Delta = 0;       ///< the largest ||Δy_p^(k)||_2 at the changed position
    double box_width = 0;   ///< the largest width of a coordinate of a state box
};

/// The bound over every input at the lengths of one range.
struct all_inputs_result {
    length_range lengths;
    bool applies = false;      ///< the model has dot-product scores and affine values
    std::string reason;        ///< why not, when it does not apply
    std::string scalar;        ///< "interval" or "ball"
    std::size_t classes = 0;   ///< classes of positions used
    /// Upper bound of n·Δ(n) at every n of the range (+inf: no finite bound).
    double n_influence = 0;
    /// Upper bound of n·η(n) (softmax readouts only).
    std::optional<double> n_prob;
    std::vector<all_inputs_layer> layers;
    std::optional<all_inputs_states> states; ///< with all_inputs_options::keep_states
    /// Δ(n) and η(n) at one n of the range (n_influence / n, rounded up).
    double influence_at(long n) const;
    std::optional<double> prob_at(long n) const;
};

/// Why the bound over every input does not apply to m (a score map, a value that is not
/// affine, a readout beyond 4096 rows), or std::nullopt.
std::optional<std::string> all_inputs_unsupported(const model::model<numeric::rational>& m);

/// The bound at the lengths of r (every n in r at once), with the boxes in S: certified double
/// intervals (fast) or Arb balls at the context's precision (the reference). At one length the
/// classes are classes_at's; over a range classes_over's (refused when r.lo is too small for a
/// cell: precondition_error, as for n < 2 or a range beyond a finite positional table).
template <class S>
all_inputs_result all_inputs_bound(const model::model<numeric::rational>& m, const length_range& r,
                                   const all_inputs_options& opt, const numeric::context& ctx);

/// all_inputs_bound at one n in certified double intervals.
all_inputs_result all_inputs_at(const model::model<numeric::rational>& m, long n,
                                const all_inputs_options& opt = {});

/// n·Δ(n) <= K* for every n >= 2 (and n·η(n) <= c*): the lengths below small_n one by one, the
/// rest by ranges (split by the residue of n modulo the positional period), in certified double
/// intervals. K* is the largest part's bound; `parts` holds every part.
struct every_n_result {
    bool found = false;           ///< a finite K* (and the model applies)
    std::string reason;           ///< why not, when not
    double K_star = 0;
    std::optional<double> c_star; ///< softmax readouts
    long n0 = 0;                  ///< ranges cover every n >= n0
    std::size_t worst = 0;        ///< the part attaining K*
    std::vector<all_inputs_result> parts;
};
every_n_result every_n_bound(const model::model<numeric::rational>& m,
                             const all_inputs_options& opt = {});

/// The certified floor of the mean cross-entropy, max(0, 1 - log2(1 + η)) bits, rounded down (a
/// ball point), for η >= 0 (+inf gives -inf).
numeric::arb_ball cross_entropy_floor(double eta, long precision_bits = 128);

/// The bounds over every input next to a sweep (influence): per row, Δ̄(n) and η̄(n)
/// (sweep_row::certified_bound, certified_prob_bound), the largest measured change and
/// probability change against them, and the cross-entropy corollary decided by the certified
/// floor 1 - log2(1 + η̄(n)) (cross_entropy_row::certified); then the sweep is decided again
/// (decide_sweep with slope_tolerance). Returns the bound of each row.
std::vector<all_inputs_result> add_every_input_bounds(const model::model<numeric::rational>& m,
                                                      sweep_result& r, const all_inputs_options& opt,
                                                      double slope_tolerance = 0.1);

/// A decimal of a bound rounded up ("inf" for +inf), 6 significant digits by default.
std::string bound_decimal(double x, int digits = 6);

} // namespace attnprop::analysis
