#pragma once
/// @file score_gaps.hpp
/// Exact score gaps of a hard (unique-hard or average-hard) model on an input: for every layer,
/// head and query row, the set T of key positions attaining the maximal score (|T| = t, the tie
/// size) and the margin γ, the maximal score minus the largest score strictly below it, both
/// decided on exact rationals. These are the quantities the soft model's attention leak at
/// inverse temperature β is bounded by (docs/theory.md, "Soft attention simulating hard
/// attention"): 1 − w_T ≤ r / (1 + r) with r = ((n − t)/t) e^{−βγ}.
///
/// A score here is the head's score a_ij as the model defines it, scale included: for a
/// dot-product head scale · (Q y_i + q) · (K y_j + k) with scale = f / sqrt(g) (1/sqrt(d_k) by
/// default), so a margin is an exact rational times 1/sqrt(g) (a `surd`); for a map head the
/// map's value. The inverse temperature β of the soft reading multiplies it.

#include "attention/common.hpp"
#include "model/model.hpp"
#include "numeric/scalar.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

using model::vec;
using numeric::arb_ball;
using numeric::rational;

/// The nonnegative real a / sqrt(g), with exact rationals a >= 0 and g > 0 (g = 1: the rational
/// a). Compared exactly (a1² g2 against a2² g1).
struct surd {
    rational a = 0;
    rational g = 1;
    /// An enclosing ball at the context's precision.
    arb_ball to_ball(const numeric::context& ctx) const;
    /// "3/4", or "3/4/sqrt(2)" when g != 1.
    std::string to_string() const;
    /// a / sqrt(g) times the rational q >= 0 (exact).
    surd times(const rational& q) const { return surd{a * q, g}; }
};
/// Exact three-way comparison: negative, zero or positive as x <, =, > y.
int compare(const surd& x, const surd& y);

/// One query row of one head.
struct row_gap {
    std::size_t position = 0;         ///< 1-based query position
    std::vector<std::size_t> maximal; ///< 0-based key positions attaining the maximal score (T)
    /// γ: the maximal score minus the largest score strictly below it; std::nullopt when every
    /// key attains the maximum (t = n: soft attention is then exactly uniform on T as well).
    std::optional<surd> margin;
    /// Every key outside T scores exactly the maximum minus γ (a two-level row): the soft
    /// leak on the hard scores is then exactly r / (1 + r), the bound with equality.
    bool two_level = false;
    /// The hard head output b (unique-hard: v(y_j*) with j* the leftmost of T; average-hard:
    /// the mean of v(y_j) over T) and how far the other values are from it, squared exactly:
    /// max over j outside T of ||v(y_j) − b||², and over j in T.
    rational spread_out_sq = 0;
    rational spread_in_sq = 0;
    /// On a two-level row or one where every key ties (else empty): the mean of the values over
    /// T minus b, and the mean over the keys outside T minus b (empty when t = n), exactly. On
    /// the hard scores the soft head output is then exactly
    /// b + (1 − ℓ) mean_in_offset + ℓ mean_out_offset, with ℓ the row's leak: a closed form that
    /// decides comparisons the leak's enclosure leaves open when the bound is attained.
    vec<rational> mean_in_offset, mean_out_offset;
};

/// One head of one layer.
struct head_gaps {
    surd scale;                       ///< the score scale (1 for a map head)
    bool dot = false;                 ///< scores by a dot product
    bool constant = false;            ///< scores cannot vary (every key ties; no n² work)
    std::vector<row_gap> rows;        ///< the computed rows, ascending
    std::optional<surd> min_margin;   ///< over rows with a margin
    std::size_t max_ties = 1;         ///< the largest t over rows
    /// Dot heads: the largest squared norms of the query rows (Q y_i + q, unscaled) over the
    /// computed rows and of the keys (K y_j + k) over every position; 0 for map heads.
    rational max_query_sq = 0;
    rational max_key_sq = 0;
};

struct layer_gaps {
    std::vector<head_gaps> heads;
    std::optional<surd> min_margin; ///< over heads and rows
    std::size_t max_ties = 1;
};

/// The exact hard pass with its gaps.
struct gap_pass {
    /// y[k][j] (k = 0..L) where computed: every position for k < L (and for k = L with
    /// all_rows), position n only otherwise.
    std::vector<std::vector<std::optional<vec<rational>>>> y;
    std::vector<layer_gaps> layers;   ///< layers[k - 1]
    vec<rational> output;             ///< y_n^(L), exact
    bool average = false;             ///< the average-hard rule: tied keys share the weight
};

struct gap_options {
    bool all_rows = false; ///< also every row of the last layer (else only row n there)
};

/// Evaluates a hard or average-hard model exactly on x (eos included) and records the gaps of
/// every computed row: every row of layers 1..L−1 (their states feed the next layer) and row n
/// of layer L (all rows with opt.all_rows). O(L n² (d_k + d_v)) exact operations. Agrees with
/// attention::hard_forward_exact (tested). Throws precondition_error for a soft model,
/// model::content_error when the exact scalar cannot evaluate the model
/// (model::require_exact), numeric::undefined_error (located) where a value does not exist.
gap_pass score_gaps(const model::model<rational>& m, const model::input_sequence& x,
                    const gap_options& opt = {});

/// The smallest margin and the largest tie size of each layer over several inputs (a sample, or
/// every input of the cube at small n), with the input attaining the smallest margin.
struct gap_summary {
    struct layer {
        std::optional<surd> min_margin;
        std::size_t max_ties = 1;
        std::string argmin_input; ///< an input (without eos) attaining min_margin
    };
    std::vector<layer> layers;
    std::size_t inputs = 0;
};

/// Folds one gap pass into a summary (input without eos, for the record).
void add_to_summary(gap_summary& s, const gap_pass& p, const std::string& input);

} // namespace attnprop::analysis
