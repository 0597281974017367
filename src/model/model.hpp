#pragma once
/// @file model.hpp
/// The attention models of docs/theory.md ("The models") as one data structure, templated on the scalar.
/// `model<rational>` is what a model file holds; `to_scalar<S>` converts it for evaluation.

#include "model/attention_kind.hpp"
#include "model/expr.hpp"
#include "model/maps.hpp"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnprop::model {

/// Raised for an input the model cannot take (a symbol outside the alphabet, an n beyond a
/// finite positional table). The CLI maps it to exit code 2.
class input_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An error about a part of a model that was read without complaint but cannot serve the
/// computation asked of it (a beta not positive at the length asked, a formula the exact scalar
/// cannot evaluate, a positional table too short): named by the model's file, when it came
/// from one, and the JSON pointer of the part ("m.json: error: layer 1 head 1: ... (at
/// /layers/0/heads/0/score/beta)"), like an error of the reader. The CLI maps it to exit 2.
class content_error : public input_error {
public:
    /// `file` as the model records it ("" for a model made in memory), `pointer` an RFC 6901
    /// pointer into its file ("" for the whole model).
    content_error(const std::string& file, std::string pointer, std::string message);
    const std::string& file() const { return file_; }
    const std::string& pointer() const { return pointer_; }
    /// The message without the file and the pointer.
    const std::string& message() const { return message_; }

private:
    std::string file_;
    std::string pointer_;
    std::string message_;
};

/// Σ and eos. Symbols are single characters so that inputs can be written as strings; the
/// symbol index of eos is `symbols.size()`.
struct alphabet {
    std::vector<std::string> symbols;
    std::string eos;
    int eos_index() const { return static_cast<int>(symbols.size()); }
    /// Index of a symbol of Σ ∪ {eos}, or -1.
    int index_of(std::string_view s) const;
    /// Name of a symbol index (eos included).
    const std::string& name(int index) const;
};

/// A sequence x_1 .. x_{n-1} eos as symbol indices (eos last).
using input_sequence = std::vector<int>;

/// Positional embedding p_i for 1 <= i <= n; may depend on n.
struct positional_spec {
    enum class kind { table, formula, sinusoidal };
    kind type = kind::formula;
    std::size_t dim = 0;
    std::vector<std::vector<rational>> table;       ///< row r is position r + 1
    std::vector<std::optional<expr>> formulas;      ///< per coordinate; nullopt = 0
    rational base = 10000;                          ///< sinusoidal base
    /// Longest n a table supports; std::nullopt for formulas and sinusoids.
    std::optional<long> max_length() const;
    /// Whether evaluating needs sin/cos/exp (not available for exact rationals).
    bool needs_real_arithmetic() const;
    /// p_i at length n in S. Throws input_error if i exceeds a table, numeric::undefined_error
    /// where a formula has no value (division by zero, log of a non-positive number, a
    /// non-finite ball), without a place (initial_state adds it).
    template <numeric::Scalar S> vec<S> at(long i, long n, const numeric::context& ctx) const;
};

/// How y_i^(0) is formed from v_{x_i} and p_i.
enum class input_kind { add, concat, map };

/// Score of one head: scaled dot product of affine query/key projections, or an arbitrary map
/// of (y_i, y_j).
template <class S> struct score_spec {
    enum class kind { dot, map };
    kind type = kind::dot;
    affine_map<S> Q, K;                 ///< dot: d -> d_k
    rational scale_factor = 1;          ///< scale = scale_factor / sqrt(scale_inv_sqrt)
    rational scale_inv_sqrt = 1;
    bool default_scale = true;          ///< scale = 1/sqrt(d_k) as in Vaswani et al.
    std::optional<S> scale;             ///< the scale in S when S can represent it
    /// dot only: how the file wrote a length scaling. log ("length_scale": "log") is the
    /// inverse temperature β(n) = ln n and sets `beta` to that formula, so that every kernel
    /// reads `beta` alone; this flag only keeps the file's spelling through a round trip.
    enum class length_scaling { none, log };
    length_scaling length_scale = length_scaling::none;
    /// Inverse temperature β(n) (dot and map scores): soft attention takes the softmax of
    /// β(n) · score, with n the length including eos; a formula in n alone ("100",
    /// "2*log(n)", "n*log(n)"). Absent = 1. Hard attention ignores it, which is its meaning
    /// only where β(n) > 0 (model::check_length refuses a hard model at an n >= 2 where β(n)
    /// is not certainly positive).
    std::optional<expr> beta;
    std::optional<map<S>> fn;           ///< map: R^{2d} -> R, input (y_i, y_j)
};

/// Value of one head: an affine map or an arbitrary map R^d -> R^{d_v}.
template <class S> struct value_spec {
    enum class kind { linear, map };
    kind type = kind::linear;
    affine_map<S> V;
    std::optional<map<S>> fn;
    std::size_t out_dim() const { return type == kind::linear ? V.out_dim() : fn->out_dim; }
};

template <class S> struct head {
    score_spec<S> score;
    value_spec<S> value;
};

/// Which keys the rows of a layer attend to (docs/model-format.md, "mask"): every key (none:
/// the bidirectional encoder of Hahn's models) or the keys j <= i (causal: a decoder, row i
/// attends to x_1 .. x_i). Orthogonal to the attention kind: every kind takes it.
enum class mask_kind { none, causal };

/// The model file's spelling of a mask ("none", "causal").
constexpr const char* to_string(mask_kind k) {
    switch (k) {
    case mask_kind::none: return "none";
    case mask_kind::causal: return "causal";
    }
    return "none";
}

/// The end (exclusive, 0-based) of the keys row i (0-based) of a layer attends to among n
/// keys: n without a mask, i + 1 under a causal one. The one place the kernels read a mask.
inline std::size_t key_end(mask_kind k, std::size_t i, std::size_t n) {
    switch (k) {
    case mask_kind::none: return n;
    case mask_kind::causal: return i + 1 < n ? i + 1 : n;
    }
    return n;
}

/// Linear attention's feature map phi of a layer (docs/model-format.md, "feature_map"), applied
/// to every coordinate of the query and key vectors: elu1, elu(x) + 1 (x + 1 for x > 0, e^x
/// otherwise, positive; needs exp), or relu, max(x, 0) (exact over the rationals; a row may
/// weigh every key by 0).
enum class feature_map_kind { elu1, relu };

/// The model file's spelling of a feature map ("elu1", "relu").
constexpr const char* to_string(feature_map_kind k) {
    switch (k) {
    case feature_map_kind::elu1: return "elu1";
    case feature_map_kind::relu: return "relu";
    }
    return "elu1";
}

/// One layer: heads, then y_i^(k) = F_k(y_i^(k-1), b_1, ..., b_H), F_k's input being the
/// concatenation (y, b_1, ..., b_H). Its heads attend to the keys its mask gives each row.
template <class S> struct layer {
    std::vector<head<S>> heads;
    map<S> update;
    mask_kind mask = mask_kind::none;
    /// Sigmoid attention's bias b(n) ("sigmoid_bias": a number or a formula in n alone): the
    /// layer's weights are sigma(s_ij + b(n)). Absent = 0; only a sigmoid model has it (the
    /// reader refuses it elsewhere).
    std::optional<expr> sigmoid_bias;
    /// Linear attention's feature map ("feature_map", default elu1); only a kind with the
    /// registry's feature_map reads it (the reader refuses the field elsewhere).
    feature_map_kind feature_map = feature_map_kind::elu1;
};

/// Readout of y_n^(L): a hard recognizer (threshold or map: accept iff value > 0) or a soft
/// next-token predictor (softmax of W y + c over named output symbols).
template <class S> struct readout {
    enum class kind { threshold, map, softmax };
    kind type = kind::threshold;
    vec<S> w;                           ///< threshold: accept iff w . y > t
    S t{};
    rational t_exact;
    vec<rational> w_exact;
    std::optional<map<S>> fn;           ///< map: accept iff fn(y)[0] > 0
    std::vector<std::string> symbols;   ///< softmax output alphabet
    affine_map<S> logits;               ///< softmax: z = W y + c
    bool is_recognizer() const { return type != kind::softmax; }
};

/// A transformer of docs/theory.md ("The models") with parameters in S.
template <class S> struct model {
    // Metadata (free text, kept through round trips).
    std::string name;
    std::string description;
    std::string source;
    /// The file it was read from, as given to the reader ("" for a model made in memory):
    /// what content_error names. Not part of the model's content (never written).
    std::string file;

    attention_kind attention = attention_kind::soft;
    alphabet sigma;
    std::size_t d = 0;                      ///< width of y^(k)
    std::vector<vec<S>> token;              ///< token embedding per symbol index (eos last)
    std::shared_ptr<const positional_spec> positional;
    input_kind input = input_kind::add;
    std::optional<map<S>> input_fn;         ///< input_kind::map: input (v, p)
    std::vector<layer<S>> layers;
    readout<S> out;

    std::size_t token_dim() const { return token.empty() ? 0 : token.front().size(); }
    std::size_t num_layers() const { return layers.size(); }
};

/// Whether some layer of the model is masked.
template <class S> bool any_masked(const model<S>& m) {
    for (const auto& l : m.layers)
        if (l.mask != mask_kind::none) return true;
    return false;
}

/// Whether every layer of the model is causally masked (and there is at least one layer): then
/// y_i^(k) depends on x_1 .. x_i alone at every layer k, which the masked statements of
/// docs/theory.md ("Causal masking") need.
template <class S> bool all_causal(const model<S>& m) {
    if (m.layers.empty()) return false;
    for (const auto& l : m.layers)
        if (l.mask != mask_kind::causal) return false;
    return true;
}

/// Where a map sits in a model, for messages: the input map, a head's score or value map, a
/// layer's update (the FFN), or the readout map.
struct map_site {
    enum class role { input, score, value, update, readout };
    role where = role::input;
    std::size_t layer = 0; ///< score, value, update: 0-based
    std::size_t head = 0;  ///< score, value: 0-based
    /// "input map", "layer 1 head 2 score map", "layer 1 head 2 value map", "layer 1 update",
    /// "readout map".
    std::string name() const;
};

/// Calls f(map, site) for every map of the model, in file order: the input map, then per
/// layer each head's score and value maps and the layer's update, then the readout map. The
/// one place that knows where maps live: analyses that ask something of every map (exact
/// blockers, singular layer norms, the model's class) go through it.
template <class S, class F> void for_each_map(const model<S>& m, F&& f) {
    using role = map_site::role;
    if (m.input_fn) f(*m.input_fn, map_site{role::input, 0, 0});
    for (std::size_t k = 0; k < m.layers.size(); ++k) {
        const auto& l = m.layers[k];
        for (std::size_t h = 0; h < l.heads.size(); ++h) {
            if (l.heads[h].score.fn) f(*l.heads[h].score.fn, map_site{role::score, k, h});
            if (l.heads[h].value.fn) f(*l.heads[h].value.fn, map_site{role::value, k, h});
        }
        f(l.update, map_site{role::update, k, 0});
    }
    if (m.out.fn) f(*m.out.fn, map_site{role::readout, 0, 0});
}

/// The inverse temperature β(n) of a head's scores in T at length n (eos included), or
/// std::nullopt when the head has none (β = 1). Under Arb a ball enclosing β(n); a formula
/// without a value at n throws numeric::undefined_error (rounded kinds) or gives an
/// indeterminate ball, as positional formulas do.
template <numeric::Scalar T, class S>
std::optional<T> beta_at(const score_spec<S>& s, long n, const numeric::context& ctx) {
    if (!s.beta) return std::nullopt;
    return s.beta->template eval<T>(1, n, ctx);
}

/// Sigmoid attention's bias b(n) of a layer in T at length n (eos included): 0 when the layer
/// has none. Under Arb a ball enclosing b(n); a formula without a value at n throws
/// numeric::undefined_error (rounded kinds) or gives an indeterminate ball.
template <numeric::Scalar T, class S>
T sigmoid_bias_at(const layer<S>& l, long n, const numeric::context& ctx) {
    if (!l.sigmoid_bias) return numeric::zero<T>(ctx);
    return l.sigmoid_bias->template eval<T>(1, n, ctx);
}

/// The constant c when the bias formula is recognised as -log(n) + c with c rational: the forms
/// "-log(n)", "c - log(n)", "-log(n) + c", "-log(n) - c" and "c + -log(n)" (c a constant
/// rational subformula); std::nullopt for any other formula (not recognised, which asserts
/// nothing about it).
std::optional<rational> minus_log_n_offset(const expr& bias);

/// What becomes of Hahn's soft-attention lemma for the model (docs/theory.md §2.6): the
/// registry's law of its kind, refined for sigmoid attention by its biases: vanishing when every
/// layer's bias is recognised as -log(n) + c (minus_log_n_offset), not_vanishing when every
/// bias is a constant (or absent), and std::nullopt when some bias is neither (no law is
/// asserted).
std::optional<influence_law> influence_of(const model<rational>& m);

/// The reason for influence_of(m) in words (the registry's words of the kind, or sigmoid's
/// refined by its biases).
std::string influence_in_words(const model<rational>& m);

/// Converts every parameter with from_rational<S> at the context's precision.
template <numeric::Scalar S> model<S> to_scalar(const model<rational>& m, const numeric::context& ctx);

/// Parses an input string of single-character symbols of Σ and appends eos.
/// Throws input_error naming the first symbol outside Σ (and its 1-based position).
input_sequence parse_input(const model<rational>& m, std::string_view text);

/// The input string without eos, as written on the command line.
std::string format_input(const alphabet& sigma, const input_sequence& x);

/// Checks that the model can take inputs of length n: finite positional tables, and for a
/// hard model at n >= 2 an inverse temperature β(n) that is certainly positive in every head
/// (hard attention ignores β only where it is positive; decided exactly for rational β,
/// else with Arb balls up to 512 bits). Throws input_error naming the table or the head.
void check_length(const model<rational>& m, long n);

/// Whether some graph map of the model has a layer norm with eps = 0.
bool has_singular_layer_norm(const model<rational>& m);

/// Features that need transcendental arithmetic (tanh, layer norm, sinusoids, soft attention,
/// irrational score scales are not needed for hard attention): empty when the exact scalar can
/// evaluate the model. Each entry names the feature and where it is.
std::vector<std::string> exact_blockers(const model<rational>& m);

/// The JSON pointers of exact_blockers(m), in the same order ("/attention",
/// "/positional/coordinates/0", "/layers/0/update").
std::vector<std::string> exact_blocker_pointers(const model<rational>& m);

/// Throws content_error "<what>: <first blocker>" at the first blocker's pointer when the
/// exact scalar cannot evaluate m; returns otherwise.
void require_exact(const model<rational>& m, const std::string& what);

/// The JSON pointer of a map in its model's file: "/input/map", "/layers/0/heads/1/score/map",
/// "/layers/0/heads/1/value/map", "/layers/0/update", "/readout/map".
std::string pointer_of(const map_site& site);

} // namespace attnprop::model

#include "model/model_impl.hpp"
