#pragma once
/// @file evaluate.hpp
/// One evaluation of a model on one input, for a scalar kind chosen at run time, with every
/// number rendered as text (p/q for exact values, decimals and radii otherwise). This is what
/// `attnprop eval` prints; the kernels stay typed.

#include "attention/common.hpp"
#include "attention/hard_exact.hpp"
#include "model/model.hpp"
#include "numeric/kinds.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

using model::vec;
using numeric::rational;

/// The scalar kinds a user can ask for (numeric::user_kinds, by name) and `automatic`: exact
/// for hard models the exact scalar can evaluate, otherwise Arb balls.
using scalar_choice = numeric::kind_choice;
using numeric::to_string;

/// Parses "auto" and the names of numeric::user_kinds ("exact", "double", "mpfr", "ball",
/// "interval").
std::optional<scalar_choice> parse_scalar_choice(std::string_view s);

struct eval_options {
    scalar_choice scalar = scalar_choice::automatic();
    long precision = 256; ///< bits, for the kinds with a variable precision (mpfr, ball)
    int digits = 0;       ///< significant digits; 0 = what the precision supports
    /// automatic on a model the exact scalar does not evaluate: balls at `precision` doubled
    /// up to this while the enclosures certify fewer than `digits` (12 when 0) digits.
    long precision_cap = 4096;
    bool trace = false;
    /// Apply the readout at every position too (evaluation::prefixes).
    bool prefixes = false;
};

/// The readout applied to y_i^(L) at one position i: the prediction after x_1 .. x_i (under a
/// causal mask in every layer; otherwise y_i^(L) sees the whole input).
struct prefix_readout {
    std::size_t position = 0;                  ///< i, 1-based
    std::optional<attention::verdict> accept;  ///< recognizers
    std::vector<std::string> probabilities;    ///< softmax readouts, per output symbol
    std::string next;                          ///< x_{i+1} ("" at eos, which has no next)
    /// -log2 p(x_{i+1}) in bits, when x_{i+1} is an output symbol of the readout
    std::optional<std::string> cross_entropy;
    std::optional<std::string> undefined;      ///< why the readout has no value here
};

/// One layer of a trace, rendered.
struct trace_layer {
    std::vector<std::vector<std::string>> y;                 ///< [position][coordinate]
    std::vector<std::vector<std::size_t>> choice;            ///< hard: [position][head], 1-based
    /// average-hard: [position][head] every maximal key, 1-based
    std::vector<std::vector<std::vector<std::size_t>>> ties;
    std::vector<std::vector<std::vector<std::string>>> weights; ///< soft: [position][head][key]
    /// y and weights for people (numeric::to_certified_display: a ball's certified digits and
    /// its radius).
    std::vector<std::vector<std::string>> y_text;
    std::vector<std::vector<std::vector<std::string>>> weights_text;
};

struct evaluation {
    std::string model_name;
    model::attention_kind attention = model::attention_kind::soft;
    /// Per layer (1..L at 0..L-1): its mask (docs/model-format.md, "mask").
    std::vector<model::mask_kind> masks;
    std::string input;        ///< without eos
    std::size_t n = 0;        ///< positions including eos
    std::string scalar;       ///< the kind's name: "exact", "double", "mpfr", "ball", "interval"
    /// --scalar auto on a soft model: the rungs tried, cheapest first ("interval", "ball 256");
    /// the last answered.
    std::vector<std::string> scalar_attempts;
    long precision = 0;       ///< bits; 0 for exact
    int digits = 0;
    bool digits_forced = false; ///< the user's --digits: print that many, certified or not
    std::vector<std::string> y;          ///< y_n^(L)
    std::vector<std::string> y_radius;   ///< enclosures only (balls, intervals)
    bool recognizer = false;
    std::optional<attention::verdict> accept;                 ///< recognizers
    std::optional<attention::undecided_argmax> undecided;     ///< an argmax a ball could not decide
    /// Set when a value of the model does not exist on this input (a layer norm at zero
    /// variance with eps = 0, a division by zero, NaN or overflow, ...), for every scalar kind:
    /// located (layer, node, position, head), and y, the readout and the trace are then empty.
    std::optional<numeric::undefined_error> undefined;
    std::vector<std::string> notes; ///< cautions about the chosen scalar for this model
    std::vector<std::string> output_symbols;                  ///< softmax readouts
    std::vector<std::string> logits, logits_radius;
    std::vector<std::string> probabilities, probabilities_radius;
    /// y, logits and probabilities for people (numeric::to_certified_display): a ball prints
    /// the digits its radius certifies (at most `digits`, exactly `digits` when forced) and the
    /// radius; the other kinds as in y. The fields above keep every digit, for JSON.
    std::vector<std::string> y_text, logits_text, probabilities_text;
    /// y, logits and probabilities for programs, as exact rationals "p/q": the value itself
    /// (exact, double and MPFR: the number the kind computed, every bit) or the midpoint of the
    /// ball of an enclosure kind, and its radius ("0" but for enclosures), so that
    /// mid - rad <= value <= mid + rad with nothing lost to decimal rounding. "undefined" for a
    /// value that is not finite.
    std::vector<std::string> y_mid, y_rad, logits_mid, logits_rad, probabilities_mid,
        probabilities_rad;
    std::vector<trace_layer> trace;
    std::optional<attention::exact_path_stats> exact_stats;
    /// --prefixes: the readout at every position, and the mean next-token cross-entropy (bits)
    /// over the positions whose next symbol is an output symbol (none when there is none).
    std::vector<prefix_readout> prefixes;
    std::optional<std::string> mean_cross_entropy;
    std::size_t cross_entropy_terms = 0;
};

/// The estimated memory of eval --trace at length n in scalar kind `sc` (not automatic):
/// every activation and attention weight (n^2 per soft head and layer) held by the kernel, its
/// rendered text and the printed output. Saturates.
std::uint64_t trace_bytes(const model::model<rational>& m, std::size_t n, scalar_choice sc,
                          long precision, int digits);

/// Evaluates; throws numeric::numeric_error when the chosen scalar cannot evaluate the model
/// (exact rationals on a soft model or on tanh / layer norm / sinusoids) and model::input_error
/// for an input the model cannot take, and numeric::limit_error before any work when the forward
/// pass (check_forward_work) or the trace (trace_bytes, limit trace-bytes) would exceed its
/// limit. A value that does not exist is not thrown: it is the result, in `undefined` (the
/// readout is located at layer L + 1, node "readout", position n).
evaluation evaluate(const model::model<rational>& m, const model::input_sequence& x,
                    const eval_options& opt);

} // namespace attnprop::analysis
