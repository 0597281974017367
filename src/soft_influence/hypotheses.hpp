#pragma once
/// @file hypotheses.hpp
/// The five hypotheses of Claim 2 (Hahn 2020, Lemma 5; docs/theory.md, Claim 2), decided on a concrete model,
/// and the Lipschitz analysis of positionwise maps that the fifth one and the bounds of
/// bounds.hpp rest on.
///
/// Each hypothesis is answered true, false or unknown (an undecided numeric::uncertain<bool>) with a reason naming the
/// place in the model ("layer 2 head 1 scores with an arbitrary map"). Unknown is reserved for
/// what cannot be decided from the model alone (an arbitrary table or hash update, a formula
/// whose boundedness neither expr::bounded() nor the interval analysis settles).
///
/// Affine projections. A dot-product score scale·(Q y + q)·(K y + k) is the bilinear form
/// ŷ_i^T M̂ ŷ_j of the homogeneous vector ŷ = (y, 1) with M̂ = scale·[Q | q]^T [K | k]; a value
/// V y + c is the linear map [V | c] of ŷ. So biases keep hypotheses 1 and 2: the projections are
/// linear maps of (y, 1), and (y, 1) is bounded whenever y is (bounds.hpp uses
/// ||ŷ|| = sqrt(||y||² + 1)). A value given as a map of kind affine counts as linear.

#include "model/model.hpp"
#include "numeric/order.hpp"
#include "numeric/scalar.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// One hypothesis: holds = true / false / undecided (cannot decide), with the reason.
struct hypothesis_result {
    std::string name;
    numeric::uncertain<bool> holds;
    std::string reason;
};

/// Names of the five hypotheses, in report order.
inline constexpr const char* hypothesis_names[5] = {
    "dot-product-scores", "linear-values", "bounded-embeddings", "bounded-initial-states",
    "lipschitz-updates"};

/// Decides the five hypotheses of Claim 2, in the order of `hypothesis_names`:
/// 1. dot-product-scores: every head scores by a scaled dot product with a scale independent
///    of n (false: a score map, or scores multiplied by log n or by another inverse
///    temperature beta(n) that depends on n);
/// 2. linear-values: every value is V y + c (false: a value map other than an affine one);
/// 3. bounded-embeddings: token embeddings (finitely many) and positional embeddings bounded
///    uniformly in i and n: tables and sinusoids always; formulas by expr::bounded(), or by the
///    interval analysis of formula_range.hpp when expr::bounded() cannot tell;
/// 4. bounded-initial-states: for add or concat the same as 3; for an input map it follows from
///    3, because every map kind sends bounded sets to bounded sets (affine maps, relu, tanh,
///    step, floor, mul, slices and layer norm — whose output has norm at most
///    max|gamma|·sqrt(d) + ||beta|| even with eps = 0 — are bounded on bounded sets; tables have
///    finitely many outputs and hashes outputs in [-range, range]/denominator);
/// 5. lipschitz-updates: every update F_k is globally Lipschitz (lipschitz_analysis below).
/// The attention kind is not a hypothesis: for a hard model the hypotheses concern its soft
/// (softmax) reading with the same parameters.
std::vector<hypothesis_result> check_hypotheses(const model::model<numeric::rational>& m);

/// A contiguous block of a map's input (y, or one head's output b_h; v or p for f_in).
struct input_block {
    std::size_t offset = 0;
    std::size_t dim = 0;
};

/// Result of the Lipschitz analysis of one map: `lipschitz` true with per-block constants
/// ||f(x) - f(x')|| <= Σ_blocks block_bounds[t] · ||x_t - x'_t|| (upper-bound points), false
/// when the map is provably not Lipschitz, undecided when it cannot be decided (tables,
/// hashes); `reason` names the node or layer responsible (or, when true, what dominates).
struct map_lipschitz {
    numeric::uncertain<bool> lipschitz;
    std::string reason;
    std::vector<numeric::arb_ball> block_bounds;
};

/// Composes Lipschitz constants through the map, per input block:
/// - affine W x + b: the spectral-norm bound of each block's columns of W;
/// - MLP: the first layer by column blocks, later layers by their spectral norms; relu, tanh,
///   identity 1, gelu and erf their activation_lipschitz constants; step and floor are
///   discontinuous (false);
/// - graph nodes: input 1 on the blocks it overlaps; linear ||W||_2 (column blocks when its
///   argument is an input node); add, sub, concat the sum of their arguments' constants; relu,
///   tanh, slice 1; gelu and erf their activation_lipschitz constants; scale |factor|; layer
///   norm max|gamma|/sqrt(eps) (gamma absent = 1; theory.md §6: the Jacobian of
///   x ↦ (x - mean)/sqrt(var + eps) has norm <= 1/sqrt(var + eps)), eps = 0 is not Lipschitz
///   (false); step and floor are discontinuous (false); mul of two varying
///   arguments is bilinear and not globally Lipschitz (false), mul by a constant node c is
///   max|c|. A node whose arguments do not depend on the input is constant (constant 0),
///   whatever its op;
/// - table and hash maps: arbitrary maps, undecided.
/// Norm bounds are rigorous (norms.hpp) at the context's precision.
map_lipschitz lipschitz_analysis(const model::map<numeric::rational>& f,
                                 const std::vector<input_block>& blocks,
                                 const numeric::context& ctx);

/// The global Lipschitz constant sup |a'| of an elementwise activation, as an upper-bound point
/// (applied coordinatewise, a has the same constant in the Euclidean norm): identity, relu and
/// tanh 1; erf 2/sqrt(pi) = 1.1283...; gelu (x Phi(x)) gelu'(sqrt 2) = (1 + erf 1)/2 +
/// 1/(e sqrt(pi)) = 1.1289... (gelu'' = phi(x)(2 - x^2) vanishes at +-sqrt 2, where gelu' is
/// 1.1289 and -0.1289, and gelu' tends to 0 and 1 at -inf and inf; docs/bounds.md). step and
/// floor are discontinuous: std::nullopt.
std::optional<numeric::arb_ball> activation_lipschitz(model::activation a,
                                                      const numeric::context& ctx);

/// A Lipschitz constant of f with respect to its whole input (one block), as an upper-bound
/// point; std::nullopt when f is not Lipschitz or this cannot be decided.
std::optional<numeric::arb_ball> lipschitz_bound(const model::map<numeric::rational>& f,
                                                 const numeric::context& ctx);

/// c = ||f(0)||, an upper-bound point (+inf when f(0) is undefined, e.g. a layer norm with
/// eps = 0 at zero variance). For an update F_k this is c_k = ||F_k(0, 0)||.
numeric::arb_ball value_at_zero_norm(const model::map<numeric::rational>& f,
                                     const numeric::context& ctx);

/// The input blocks of layer k's update (0-based k): y (d), then b_1 .. b_H.
std::vector<input_block> update_blocks(const model::model<numeric::rational>& m, std::size_t k);

/// The affine value map of a head, when its value is linear or a map of kind affine;
/// nullptr otherwise.
const model::affine_map<numeric::rational>* value_affine(const model::head<numeric::rational>& h);

} // namespace attnprop::analysis
