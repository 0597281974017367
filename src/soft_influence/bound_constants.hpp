#pragma once
/// @file bound_constants.hpp
/// The per-head and per-layer constants of Claim 2's recursions (docs/bounds.md), shared by the
/// a-priori bound (bounds.cpp) and the a-posteriori bounds (posterior.cpp): the scores' and
/// values' norms and the updates' Lipschitz constants of one layer, as upper-bound points.
/// Internal to soft_influence/.

#include "model/model.hpp"
#include "numeric/scalar.hpp"
#include "soft_influence/hypotheses.hpp"
#include "soft_influence/norms.hpp"

#include <cstddef>
#include <vector>

namespace attnprop::analysis::bound_detail {

using numeric::arb_ball;
using numeric::rational;
using rmodel = model::model<rational>;

inline arb_ball ball(const rational& q, const numeric::context& ctx) {
    return arb_ball::from_rational(q, ctx);
}
inline arb_ball ball(long v, const numeric::context& ctx) { return numeric::from_int<arb_ball>(v, ctx); }

/// Upper bound of a sum / product of non-negative upper bounds.
inline arb_ball up(const arb_ball& x) { return upper(x); }

/// Constants of one head.
struct head_constants {
    arb_ball mu, nu, cv; // ||scale Q̂^T K̂||, ||V||, ||value bias|| (upper points; +inf unknown)
    bool score_bias = false;
};

/// Constants of one layer.
struct layer_constants {
    std::vector<head_constants> heads;
    arb_ball c;               // ||F_k(0, 0)||
    arb_ball ly;              // Lipschitz constant of F_k in y
    std::vector<arb_ball> lh; // ... in b_h
    bool ok = false;          // every constant finite and the hypotheses of the layer hold
};

/// scale = factor / sqrt(inv_sqrt) of a dot-product head, as a ball.
arb_ball score_scale(const model::score_spec<rational>& s, const numeric::context& ctx);

/// A head's inverse temperature β(n) beside its fixed scale (ln n for a length-scaled head, 1
/// when absent): at a fixed n one more constant factor on the scaled queries; hc.mu is
/// multiplied by |β(n)| when β depends on n (compute_head has already taken a constant one).
arb_ball score_factor_at(const model::head<rational>& hd, head_constants& hc, std::size_t n,
                         const numeric::context& ctx);

/// The constants of one head (μ, ν and the value bias's norm).
head_constants compute_head(const model::head<rational>& h, const numeric::context& ctx);

/// The constants of layer k (0-based): its heads', its update's Lipschitz constants and value at 0.
layer_constants compute_layer(const rmodel& m, std::size_t k, const numeric::context& ctx);

} // namespace attnprop::analysis::bound_detail
