#pragma once
/// @file common.hpp
/// Pieces shared by the hard and soft forward passes: initial states, head projections, the
/// positionwise update, and the readouts.

#include "model/model.hpp"

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

namespace attnprop::attention {

using model::input_sequence;
using model::vec;
using numeric::rational;

/// A row's key range that takes every key (the default of the row kernels' `end`).
inline constexpr std::size_t all_keys = static_cast<std::size_t>(-1);

/// The place of a step of a forward pass, for numeric::undefined_error::located(): layer k
/// (0 = input map and embeddings, 1..L, L + 1 = readout), node (nullptr = unknown), 1-based
/// position and head (0 = unknown). Forward passes catch an undefined_error at layer, row and
/// head boundaries and rethrow it located (no cost when nothing throws).
numeric::undefined_location place(std::size_t layer, const char* node = nullptr,
                                  std::size_t position = 0, std::size_t head = 0);

/// y_i^(0) = f_in(v_{x_i}, p_i) at 1-based position i of an input of length n. An
/// undefined_error (a positional formula or input map without a value) is located at layer 0,
/// node "positional embedding" or "input map", position i.
template <numeric::Scalar S>
vec<S> initial_state(const model::model<S>& m, int symbol, long i, long n,
                     const numeric::context& ctx);

/// y^(0) for every position (index j holds position j + 1).
template <numeric::Scalar S>
std::vector<vec<S>> initial_states(const model::model<S>& m, const input_sequence& x,
                                   const numeric::context& ctx);

/// Q y + q_bias of a dot-product head (unscaled).
template <numeric::Scalar S>
vec<S> query(const model::head<S>& h, const vec<S>& y, const numeric::context& ctx);
/// K y + k_bias of a dot-product head.
template <numeric::Scalar S>
vec<S> key(const model::head<S>& h, const vec<S>& y, const numeric::context& ctx);
/// V(y) of a head (affine or arbitrary map).
template <numeric::Scalar S>
vec<S> value(const model::head<S>& h, const vec<S>& y, const numeric::context& ctx);
/// The arbitrary score map s(y_i, y_j) of a map-scored head.
template <numeric::Scalar S>
S map_score(const model::head<S>& h, const vec<S>& yi, const vec<S>& yj,
            const numeric::context& ctx);

/// True when a dot-product head's scores cannot depend on the key position (the key
/// projection's matrix is zero, so every key is the bias; or the query is exactly zero): its
/// attention is uniform (soft) or always on position 1 (hard), and no n^2 work is needed.
template <class S> bool constant_scores(const model::head<S>& h) {
    if (h.score.type != model::score_spec<S>::kind::dot) return false;
    return h.score.K.W.is_zero() || h.score.Q.is_zero();
}

/// The observer of a forward pass that observes nothing (docs/architecture.md, "The forward
/// passes and their observers"): a pass calls an observer's hooks only when it is `active`, and
/// computes what only an observer reads (the weights of every row) only when it `wants_weights`,
/// so a pass given this one is the pass without hooks.
struct no_observer {
    static constexpr bool active = false;
    static constexpr bool wants_weights = false;
};

/// d values standing for "no value" in a trace row whose value does not exist but that the
/// output does not read (numeric::no_value_vector).
template <numeric::Scalar S>
std::optional<vec<S>> no_value(std::size_t d, const numeric::context& ctx) {
    return numeric::no_value_vector<S>(d, ctx);
}

/// y^(k) = F_k(y^(k-1), b_1, ..., b_H).
template <numeric::Scalar S>
vec<S> update(const model::layer<S>& l, const vec<S>& y, const std::vector<vec<S>>& b,
              const numeric::context& ctx);

/// Accept / reject decision of a recognizer; undecided only for enclosures.
enum class verdict { accept, reject, undecided };
const char* to_string(verdict v);

/// The hard readout: accept iff w.y > t (threshold) or map(y)[0] > 0. Like readout_logits, an
/// undefined value has node "readout" (the caller adds layer L + 1 and position n).
template <numeric::Scalar S>
verdict recognize(const model::readout<S>& r, const vec<S>& y, const numeric::context& ctx);

/// Logits W y + c of a softmax readout; a non-finite logit (double overflow) is an
/// undefined_error at node "readout".
template <numeric::Scalar S>
vec<S> readout_logits(const model::readout<S>& r, const vec<S>& y, const numeric::context& ctx);

/// Numerically stable softmax (shift by a representative of the maximum); rigorous for balls.
template <numeric::ExpScalar S> vec<S> softmax(const vec<S>& z, const numeric::context& ctx);

/// Result of the leftmost argmax: the selected index, or (for enclosures) the set of indices
/// that could be selected.
struct argmax_result {
    bool decided = true;
    std::size_t index = 0;              ///< 0-based, when decided
    std::vector<std::size_t> candidates; ///< 0-based, ascending, when undecided
};

/// Leftmost argmax by three-valued comparison. Sound: when undecided, the candidates contain
/// every index that is the leftmost argmax for some choice of values within the enclosures.
template <numeric::Scalar S> argmax_result leftmost_argmax(const std::vector<S>& s);

/// Every index attaining the maximal score (average-hard attention), or the candidates.
struct maximal_set_result {
    bool decided = true;
    /// 0-based, ascending: the maximal set when decided; else every index that attains the
    /// maximum for some choice of values within the enclosures.
    std::vector<std::size_t> positions;
};

/// The set of every index attaining max_j s_j by three-valued comparison. Exact and double
/// scores always decide it; an enclosure decides a tie only when compare() says the two are
/// equal (both exact and equal: a proof, not an overlap), so an undecided set is decided on
/// exact rationals by the caller. O(n) when every comparison decides.
template <numeric::Scalar S> maximal_set_result maximal_positions(const std::vector<S>& s);

} // namespace attnprop::attention

#include "attention/common_impl.hpp"
