#pragma once
/// @file soft_change.hpp
/// The change of a soft model's output under a one-symbol change of its input, computed as a
/// differential enclosure (numeric::diff_ball): the model runs once on the pair (x, x[i <- a]),
/// every quantity carried as its value on x and its change. Where the two inputs agree by
/// construction (positions other than i at layer 0, a value map that ignores the changed
/// coordinates, ...) the change is the exact point 0, so an unchanged output is *proved*
/// unchanged; where they differ by little the change keeps relative accuracy. Compare the
/// difference of two independent forward passes, whose radius is about 2^-precision |y|
/// whatever the change is.

#include "attention/soft.hpp"
#include "numeric/diff_ball.hpp"

#include <optional>

namespace attnprop::attention {

/// The kind the changes come in: a kernel measuring in it can measure a change it cannot
/// resolve again on the pair (soft_change_model::change).
using soft_change_scalar = numeric::arb_ball;

/// y_n^(L) on x, its change, and for a softmax readout the probabilities on x and their change.
struct soft_change_result {
    vec<soft_change_scalar> y, dy;
    std::optional<vec<soft_change_scalar>> p, dp;
};

/// A soft model converted once for many one-symbol changes (not thread-safe: one per thread).
class soft_change_model {
public:
    /// Precondition: a soft-attention model. The working precision is ctx's.
    soft_change_model(const model::model<numeric::rational>& m, const numeric::context& ctx);

    /// The change from x (eos last) to x with position i (0-based, i < n - 1) replaced by
    /// symbol a. Throws precondition_error for a position or symbol out of range.
    soft_change_result change(const input_sequence& x, std::size_t i, int a);

private:
    model::model<numeric::diff_ball> m_;
    std::vector<vec<numeric::rational>> token_; ///< exact token embeddings
    numeric::context ctx_;
    int pair_symbol_; ///< index of the token entry holding (v_{x_i}, v_a - v_{x_i})
};

extern template soft_output<numeric::diff_ball>
soft_forward(const model::model<numeric::diff_ball>&, const input_sequence&,
             const numeric::context&, soft_options);

} // namespace attnprop::attention
