#pragma once
/// @file generators.hpp
/// RapidCheck generators of random hard- and soft-attention models, input lengths and inputs.
///
/// Every model generator works in two stages ("choice sequences, valid by construction"):
///
/// 1. A small *structural spec* (layers, heads per layer, widths, alphabet size, which kind of
///    map sits where, graph shapes, table key picks) drawn with `rc::gen::inRange`, nested with
///    `rc::gen::mapcat` (layers → heads → maps), so every structural number shrinks towards its
///    smallest value and every kind choice towards the simplest kind (dot score, linear value,
///    affine update, threshold readout, `add` input, constant positional coordinate).
/// 2. A *genome*: one small integer ("gene", in [0, 9)) per coefficient slot of that spec, its
///    length computed from the spec by a dry run of the builder. A coefficient is read from
///    genes: a numerator gene g maps to 0, 1, -1, 2, -2, ... (zigzag), a denominator gene g to
///    1 + g mod D. Genes shrink towards 0, so numerators shrink to 0 and denominators to 1:
///    shrinking gives smaller integers and simpler rationals. A genome that runs out reads 0.
///
/// The model is then built deterministically from (spec, genome) as model-file JSON and read
/// with `model::parse_model`, so every generated value is a valid `model<rational>` that
/// `model::write_model` writes and `parse_model` re-reads identically. No `suchThat`, no
/// `RC_PRE`: nothing is discarded. `rc::gen::mapcat` shrinks the spec first (the genome is then
/// regenerated from the same random state, so earlier coefficients stay put), then the genome
/// gene by gene.
///
/// All generators honour RapidCheck's size: at size 0 a model generator gives the smallest
/// model (1 layer, 1 head, d = 1, all coefficients 0); the full ranges of the bounds are used
/// from size 100 (RapidCheck's nominal size) on.

#include "lang/languages.hpp"
#include "model/model.hpp"

#include <rapidcheck/Gen.h>

#include <iosfwd>
#include <string>

namespace attnprop::gen {

/// Structural bounds of the hard generators (all inclusive, all >= 1).
struct hard_bounds {
    int max_layers = 2;   ///< layers in [1, max_layers]
    int max_heads = 2;    ///< heads per layer in [1, max_heads]
    int max_dim = 3;      ///< d, d_k, d_v, hidden widths in [1, max_dim]
    int max_alphabet = 3; ///< |Σ| in [min(2, max_alphabet), max_alphabet] (at most 36)
    /// Whether lookup tables and seeded hashes (maps defined on exact values only) may occur.
    /// Without them every map is continuous or piecewise, so enclosures of non-exact values
    /// stay informative (used by properties about Arb balls).
    bool allow_exact_keyed_maps = true;
};

/// Structural bounds of the soft generator (all inclusive, all >= 1).
struct soft_bounds {
    int max_layers = 2;
    int max_heads = 2;
    int max_dim = 4;
    int max_alphabet = 3;
    bool allow_layer_norm = true; ///< pre- or post-LN (eps in {1/10, 1/100, 1/1000}) may occur
    bool allow_tanh = true;       ///< the FFN activation may be tanh
    bool allow_gelu = true;       ///< the FFN activation may be the exact gelu (x Phi(x))
};

/// Hard models with arbitrary maps, as Hahn's Theorem 1 allows. Token embeddings: small
/// rationals (|num| <= 4, den <= 4). Positional coordinates: c1 * atom + c0 with rational
/// c0, c1 and atom one of 1, (-1)^i, [i==1], i - 2*floor(i/2), i/n, (n-i)/n, i, [i==n], 1/i.
/// Input: add, concat, or a map (affine, hash, step-MLP). Scores: dot products of integer Q, K
/// (entries in [-2, 2], optional integer biases, default or rational scale) so that exact ties
/// are frequent on purpose, or score maps (table, hash, step-MLP). Values: linear (rational) or
/// maps (table, hash). Updates: affine, exact lookup tables with a default whose keys are taken
/// from the values the update's input really takes on short probe inputs (so lookups hit),
/// seeded hashes to small rationals, step/relu/floor MLPs, random computation graphs (linear,
/// add, sub, concat, relu, step, floor, scale, slice). Readout: threshold or map (table keyed
/// by reachable final states, hash, step-MLP). Exact rationals only (no tanh, layer norm or
/// sinusoids): `model::exact_blockers(m)` is empty, so the exact scalar evaluates every model.
///
/// Shrinks towards 1 layer, 1 head, d = 1, |Σ| = min(2, max_alphabet), dot scores, linear
/// values, affine updates, threshold readout, constant positional coordinates, coefficients 0
/// (then numerators towards 0, denominators towards 1).
rc::Gen<model::model<numeric::rational>> hard_model(const hard_bounds& b = {});

/// Hard models whose every parameter is a small integer (|.| <= 2; hash ranges <= 3 with
/// denominator 1, table outputs integers, threshold an integer) and whose maps use only
/// +, -, *, relu, step, floor of integers and exact lookups of integers, so double, MPFR and
/// exact arithmetic compute identical values. Positional atoms are integer-valued: 1, (-1)^i,
/// [i==1], i - 2*floor(i/2), i, [i==n], n - i. Magnitudes are tracked while building: graph
/// nodes whose bound exceeds 2^24 and update outputs whose bound exceeds 2^12 are clamped by a
/// relu(x + M) - relu(x - M) - M block (M = 2^16, resp. 2^12), so for n <= 4096 every
/// activation and score stays below 2^48 (exact in double) for the default bounds (scores
/// below about 2^40) and any bounds with max_dim <= 8. Precondition for the guarantee:
/// n <= 4096. Shrinks like hard_model.
rc::Gen<model::model<numeric::rational>> dyadic_hard_model(const hard_bounds& b = {});

/// Soft models satisfying the five hypotheses of Claim 2 (docs/theory.md): bounded token embeddings;
/// bounded positional embeddings (coordinates c1 * atom + c0 with atom one of 1, (-1)^i,
/// [i==1], i - 2*floor(i/2), i/n, (n-i)/n, [i==n], 1/i, or the sinusoidal encoding with base
/// 10000, 100 or 10); f_in add or concat; dot-product scores of linear Q, K (no biases, no
/// score maps) with the default 1/sqrt(d_k) or a positive rational scale; linear values (no
/// bias); F_k a graph "y + W_o b, then + FFN" (FFN = linear, relu, tanh or gelu, linear), optionally
/// with a pre- or post-layer norm with eps in {1/10, 1/100, 1/1000} (> 0, so Lipschitz); and a
/// softmax readout over 2 or 3 output symbols. Entries are small rationals (|num| <= 4,
/// den <= 4). Shrinks towards 1 layer, 1 head, d = 1, add, formula positional, relu, no layer
/// norm, 2 output symbols, default scale, coefficients 0.
rc::Gen<model::model<numeric::rational>> soft_model(const soft_bounds& b = {});

/// The hypotheses of Claim 2 that soft_model_violating breaks.
enum class violated_hypothesis { bounded_embeddings, dot_product_scores, lipschitz_updates };
/// The hypothesis name of analysis::check_hypotheses ("bounded-embeddings", ...).
const char* to_string(violated_hypothesis h);

/// Random soft models that break the hypothesis h of Claim 2 with a planted FIRST
/// mechanism of random strength (c, a, s = k/2 with k in [1, 4]), on which the influence of x_1
/// does not vanish (binary alphabet, softmax readout over two symbols):
/// - bounded_embeddings: one layer, positional coordinate i; the eos query scores key -c i, so
///   position 1 keeps weight (1 - e^-c)/(1 - e^-cn); value a (x_j - 1/2) into the logit;
/// - dot_product_scores: one layer, positional [i == 1]; score (c + 1) ln n [j = 1]
///   ("length_scale": "log"), so position 1 keeps weight >= 1/2; the same value;
/// - lipschitz_updates: Chiang & Cholak's FIRST layers (layer-2 score c [j = 1], value
///   amplitude a) followed by s step(z) of the logit z, whose sign is that of x_1 - 1/2.
/// The one-layer families add a random background head (eos query against the token
/// coordinates, weights k/4 with k in [-2, 2], linear value into the logit) that satisfies
/// every hypothesis. Names: "violating-<hypothesis>".
rc::Gen<model::model<numeric::rational>> soft_model_violating(violated_hypothesis h);

/// A soft model with a planted rare sensitive input: one layer averages [x_j = 1] - threshold
/// uniformly over the n positions, so b = #1/n - threshold, and the update is a layer norm of
/// (b, -b) with this eps: about (sgn b, -sgn b), so a one-symbol change moves y_n by about
/// 2 sqrt 2 only where the count of 1s crosses threshold * n, and by at most about
/// eps / (n |b|^3) elsewhere. With eps = 0 the value does not exist where #1 = threshold * n
/// exactly (a layer norm at zero variance). Alphabet {0, 1}, softmax readout over 0 and 1
/// (the ln0 MAJORITY construction with its tie moved). Uniform inputs, whose counts
/// concentrate at n/2, almost never come near a threshold far from 1/2.
model::model<numeric::rational> planted_tie_soft_model(const numeric::rational& threshold,
                                                       const numeric::rational& eps);
/// planted_tie_soft_model with threshold k/16, k in {1, 2, 3, 13, 14, 15}, and eps = 10^-e,
/// e in [6, 9] (the hypotheses of Claim 2 hold).
rc::Gen<model::model<numeric::rational>> planted_tie_soft_model();

/// A hard model with a near tie that double arithmetic gets wrong: the score of a key is its
/// first coordinate, base (a rational such as 1/3 with no exact double) for most symbols and
/// base + m * 10^-k (k in [19, 23), m in [1, 10); k is raised until both round to the same
/// double) for one "bumped" symbol. The exact pass attends to the first bumped position, the
/// double pass to position 1; the head copies "is bumped" into the state and the readout
/// accepts on it. So on every input whose first symbol is not bumped but a later one is (e.g.
/// of length 2), double selects a different position and gives a different output than exact.
/// Used by a deliberately false control property. Shrinks towards |Σ| = 2, base 1/3,
/// eps = 10^-19, no extra coordinates.
rc::Gen<model::model<numeric::rational>> near_tie_hard_model();

/// Lengths n (eos included) from the ladder 1, 2, 4, 8, ... capped at max_n (7 times in 8), or
/// a uniformly random n in [1, max_n] (1 time in 8, at full size). Shrinks towards n = 1 (down
/// the ladder, or the random n towards 1). Precondition: max_n >= 1.
rc::Gen<long> length(long max_n);

/// A uniformly random input of n - 1 symbols over the model's alphabet (a string of its
/// single-character symbols, without eos); uniform at every RapidCheck size. Shrinks symbol
/// by symbol towards the first symbol of Σ. Precondition: n >= 1.
rc::Gen<std::string> input(const model::alphabet& sigma, long n);

/// An input from a language sampler, mapped onto the model's alphabet by symbol index (the
/// language's k-th symbol becomes σ_{k mod |Σ|}), n - 1 symbols. PARITY, FIRST, MAJORITY and
/// CONTAINS-ONE use lang::uniform_word; 1DYCK and 2DYCK use lang::random_dyck_word half of the
/// time (of length n - 1 rounded down to even, then one opening bracket if n - 1 is odd) and
/// lang::uniform_word otherwise. The sampler's seed is generated; shrinking only lowers the
/// seed and picks the uniform sampler (the word stays a sample, not a minimal word).
rc::Gen<std::string> language_input(lang::language l, const model::alphabet& sigma, long n);

/// The models of `models` with every layer causally masked (docs/model-format.md, "mask"):
/// the masked statements of theory.md §1.4 and §2.5 are about them. Shrinks as `models` does.
rc::Gen<model::model<numeric::rational>> causally_masked(rc::Gen<model::model<numeric::rational>> models);

/// The witnesses of the masked rate (docs/constructions.md, "causal-prefix-mean"): L = 2 or 3
/// causally masked layers of uniform soft attention (Q = K = 0) with value V = v (v = 1 or 2)
/// and update F(y, b) = b on d = 1, tokens 0 -> 0, 1 -> 1, eos -> 0. Flipping x_1 moves y_n^(L)
/// by v^L times (1/n) Σ_{i_(L-1) <= ... <= i_1 <= n} 1/(i_1 ... i_(L-1)): H_n/n for L = 2.
/// Shrinks towards L = 2, v = 1.
rc::Gen<model::model<numeric::rational>> masked_rate_witness();

/// A short tag for distribution tables: attention kind, L, the largest H, then for hard models
/// the map kinds used anywhere (score, value, update, readout and input maps) joined by '+'
/// ("hard L2 H1 graph+table", "hard L1 H1 affine"),
/// for soft models the activations and "ln" / "sin" ("soft L1 H2 relu ln").
std::string model_class(const model::model<numeric::rational>& m);

} // namespace attnprop::gen

namespace attnprop::model {

/// RapidCheck display (found by ADL): the model class, then its compact model-file JSON, so a
/// counterexample is printed as an exact, replayable model and never as <???>.
void showValue(const model<numeric::rational>& m, std::ostream& os);

} // namespace attnprop::model
