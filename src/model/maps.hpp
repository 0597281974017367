#pragma once
/// @file maps.hpp
/// Positionwise maps R^in -> R^out: affine, layered MLP, computation graph, and the arbitrary
/// maps of the hard-attention claim (exact lookup table, seeded hash). One evaluation template
/// serves every scalar kind. Enclosures stay rigorous: a step or lookup whose argument is not
/// known exactly returns the hull of its possible values.

#include "model/matrix.hpp"
#include "model/variants.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace attnprop::model {

/// Elementwise nonlinearity of an MLP layer or graph node.
enum class activation { identity, relu, tanh, step, floor, gelu, erf };

/// "identity", "relu", "tanh", "step", "floor", "gelu", "erf" (the model file's spelling).
constexpr const char* to_string(activation a) {
    switch (a) {
    case activation::identity: return "identity";
    case activation::relu: return "relu";
    case activation::tanh: return "tanh";
    case activation::step: return "step";
    case activation::floor: return "floor";
    case activation::gelu: return "gelu";
    case activation::erf: return "erf";
    }
    return "?";
}

/// Whether the activation needs transcendental arithmetic (tanh, gelu, erf), which exact
/// rationals cannot do.
constexpr bool is_transcendental(activation a) {
    switch (a) {
    case activation::identity:
    case activation::relu:
    case activation::step:
    case activation::floor: return false;
    case activation::tanh:
    case activation::gelu:
    case activation::erf: return true;
    }
    return true;
}

/// Layered MLP: x -> act_L(W_L ... act_1(W_1 x + b_1) ... + b_L).
template <class S> struct mlp_map {
    std::vector<affine_map<S>> layers;
    std::vector<activation> activations; ///< one per layer
};

// --- graph ops ------------------------------------------------------------------------------
// One struct per operation of a computation-graph node, holding that op's parameters and its
// model-file name. The node's dimension and arguments are in graph_node. Scalar parameters
// are in S; an exact copy is kept only where a rounded kind still needs the exact value.

/// A named slice [offset, offset + dim) of the map's input (e.g. "y", "b1", "b"). The reader
/// makes one for each input name the graph uses; files never name this op.
struct input_op {
    static constexpr std::string_view name = "input";
    std::string input_name;
    std::size_t offset = 0;
};

/// W x + b of one argument.
template <class S> struct linear_op {
    static constexpr std::string_view name = "linear";
    affine_map<S> lin;
};

/// Sum of two or more arguments of equal dimension.
struct add_op {
    static constexpr std::string_view name = "add";
};

/// First argument minus second.
struct sub_op {
    static constexpr std::string_view name = "sub";
};

/// Elementwise product of two arguments.
struct mul_op {
    static constexpr std::string_view name = "mul";
};

/// Concatenation of the arguments.
struct concat_op {
    static constexpr std::string_view name = "concat";
};

/// The activation A applied elementwise to one argument.
template <activation A> struct elementwise_op {
    static constexpr activation fn = A;
    static constexpr std::string_view name = to_string(A);
};
using relu_op = elementwise_op<activation::relu>;   ///< max(x, 0)
using tanh_op = elementwise_op<activation::tanh>;
/// The exact GELU x Phi(x) = x (1 + erf(x / sqrt 2)) / 2.
using gelu_op = elementwise_op<activation::gelu>;
using erf_op = elementwise_op<activation::erf>;     ///< the error function
using step_op = elementwise_op<activation::step>;   ///< [x > 0]
using floor_op = elementwise_op<activation::floor>;

/// gamma * (x - mean) / sqrt(var + eps) + beta (biased variance).
template <class S> struct layer_norm_op {
    static constexpr std::string_view name = "layer_norm";
    /// eps exactly: whether it is 0, and its value in messages, must not depend on rounding.
    rational eps_exact;
    S eps{};
    vec<S> gamma; ///< empty: all ones
    vec<S> beta;  ///< empty: all zeros
};

/// factor * x.
template <class S> struct scale_op {
    static constexpr std::string_view name = "scale";
    S factor{};
};

/// x[from, from + dim) of one argument.
struct slice_op {
    static constexpr std::string_view name = "slice";
    std::size_t from = 0;
};

/// The operation of a graph node, with its parameters; the order is the model file's op list
/// (input first, which files do not name). A new op is added here; every std::visit over
/// graph_node::op then fails to compile until it handles the op (evaluation, conversion,
/// features in maps_impl.hpp; the model file reader and writer; the Lipschitz analysis).
template <class S>
using graph_op = std::variant<input_op, linear_op<S>, add_op, sub_op, mul_op, concat_op, relu_op,
                              tanh_op, gelu_op, erf_op, step_op, floor_op, layer_norm_op<S>,
                              scale_op<S>, slice_op>;

/// The op's name ("linear", "layer_norm", ...).
template <class S> std::string_view op_name(const graph_op<S>& op) {
    return std::visit([]<class T>(const T&) { return T::name; }, op);
}

/// One node of a computation graph. Arguments refer to earlier nodes by index.
template <class S> struct graph_node {
    std::string id;
    graph_op<S> op;
    std::vector<std::size_t> args;
    std::size_t dim = 0; ///< output dimension
};

/// A finite feedforward computation graph; nodes are in topological order.
template <class S> struct graph_map {
    std::vector<graph_node<S>> nodes;
    std::size_t output = 0; ///< index of the output node
};

/// Arbitrary map given by an exact lookup table with a default for unlisted inputs.
struct table_map {
    std::map<std::vector<rational>, std::vector<rational>> entries;
    std::vector<rational> fallback; ///< the "default" output
    /// The smallest and largest value of each output coordinate over the entries and the
    /// default (filled by the model reader; empty otherwise): an enclosure's output is their
    /// box, in time independent of the number of entries.
    std::vector<rational> lo, hi;
};

/// Arbitrary map: a seeded hash of the exact input to small rationals: each output coordinate
/// is (h mod (2 range + 1) - range) / denominator, h a 64-bit hash of (seed, coordinate, the
/// exact input in canonical p/q text). Deterministic on every platform.
struct hash_map {
    std::uint64_t seed = 0;
    long range = 1;
    long denominator = 1;
};

/// The kinds of map, in the order of the model file's "kind" list. A new kind is added here,
/// with its map_kind name below; every std::visit over map::impl then fails to compile until
/// it handles the kind (conversion, evaluation, features in maps_impl.hpp; the model file
/// reader and writer; the Lipschitz analysis).
template <class S>
using map_impl = std::variant<affine_map<S>, mlp_map<S>, graph_map<S>, table_map, hash_map>;

/// The model file's name of a map kind ("kind": "affine"); undefined for other types, so that
/// a kind without a name does not compile.
template <class T> struct map_kind;
template <class S> struct map_kind<affine_map<S>> {
    static constexpr std::string_view name = "affine";
};
template <class S> struct map_kind<mlp_map<S>> {
    static constexpr std::string_view name = "mlp";
};
template <class S> struct map_kind<graph_map<S>> {
    static constexpr std::string_view name = "graph";
};
template <> struct map_kind<table_map> {
    static constexpr std::string_view name = "table";
};
template <> struct map_kind<hash_map> {
    static constexpr std::string_view name = "hash";
};

/// Every map kind's name, in the order of map_impl's alternatives.
template <class S>
constexpr std::array<std::string_view, std::variant_size_v<map_impl<S>>> map_kind_names() {
    std::array<std::string_view, std::variant_size_v<map_impl<S>>> out{};
    std::size_t k = 0;
    for_each_alternative<map_impl<S>>(
        [&]<class T>(std::type_identity<T>) { out[k++] = map_kind<T>::name; });
    return out;
}

/// A map R^in_dim -> R^out_dim.
template <class S> struct map {
    std::size_t in_dim = 0;
    std::size_t out_dim = 0;
    map_impl<S> impl;
};

/// The name of m's kind ("affine", "mlp", "graph", "table", "hash").
template <class S> std::string_view kind_name(const map<S>& m) {
    return std::visit([]<class T>(const T&) { return map_kind<T>::name; }, m.impl);
}

/// What the analyses ask of a map, gathered in one walk over its layers or nodes.
struct map_features {
    /// The operations that need transcendental arithmetic (tanh, gelu, erf; a layer norm's
    /// square root as "layer_norm (needs a square root)"), each once, in order of first use.
    std::vector<std::string> real_arithmetic;
    /// The elementwise nonlinearities used (MLP activations other than identity, elementwise
    /// graph nodes), each once.
    std::vector<activation> activations;
    bool layer_norm = false;          ///< some graph node is a layer norm
    bool singular_layer_norm = false; ///< some layer norm has eps = 0 (no value at zero variance)

    bool uses(activation a) const;
    /// Whether exact rationals can evaluate the map (no real_arithmetic).
    bool exact_evaluable() const { return real_arithmetic.empty(); }
};

/// The features of m (an exhaustive visit: a new map kind or graph op must say its features).
template <class S> map_features features(const map<S>& m);

/// The hash map's output for an exact input (shared by all scalar kinds).
std::vector<rational> hash_output(const hash_map& h, std::size_t out_dim,
                                  const std::vector<rational>& input);

/// Throws numeric::undefined_error (numeric::non_finite_error, no place) when a value of v is
/// not finite: NaN or overflow of double or MPFR, a non-finite ball. A no-op for exact values
/// and intervals.
template <numeric::Scalar S> void require_all_finite(const vec<S>& v);

/// Converts parameters with from_rational<S>; exact tables and hashes are shared.
template <numeric::Scalar S> map<S> convert(const map<rational>& m, const numeric::context& ctx);

/// Evaluates the map at x (length in_dim). Throws numeric_error when the map needs an operation
/// S cannot do (tanh, gelu, erf or layer norm over exact rationals), and
/// numeric::undefined_error when a value does not exist: a layer norm at var + eps = 0 (for
/// balls: an enclosure of var + eps that contains 0, with precision_may_resolve unless it is
/// exactly 0), or a non-finite output of a node, MLP layer or affine map (double or MPFR
/// overflow, NaN, a non-finite ball). The error names the graph node ("norm"; its op when it
/// has no id) or "mlp layer 2"; the caller adds the layer, position and head.
template <numeric::Scalar S>
vec<S> evaluate(const map<S>& m, const vec<S>& x, const numeric::context& ctx);

/// Whether evaluating the map needs transcendental functions (tanh, gelu, erf, square roots).
template <class S> bool needs_real_arithmetic(const map<S>& m) {
    return !features(m).exact_evaluable();
}

} // namespace attnprop::model

#include "model/maps_impl.hpp"
