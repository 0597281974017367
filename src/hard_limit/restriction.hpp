#pragma once
/// @file restriction.hpp
/// Hahn (2020), Theorem 1 for one concrete hard-attention model and one length n: a restriction
/// ρ (each input position fixed to a symbol or left free), the set D_k(i) of free inputs every
/// activation y_i^(k) depends on, the exact table T_k(i) of y_i^(k) over the assignments of
/// D_k(i), and a certificate that checks all of it against the exact forward pass
/// (theory.md §1.3 and §7, H2–H5).
///
/// How ρ is built (theory.md §1.3):
/// - layer 0: D_0(j) = {j} for a free input j, ∅ for a fixed one (and for eos);
/// - layer k: for every query i, head h and assignment z of D_{k-1}(i), the score range
///   [lo_j, hi_j] of every key j over the assignments of D_{k-1}(j) consistent with z;
///   G = max_j hi_j; the triple (i, h, z) is *satisfied* when some p has lo_p = G exactly;
/// - greedy pinning (Stage-2 analogue): while triples are unsatisfied and the free budget
///   allows, fix a key j to an assignment with score G for as many unsatisfied triples as
///   possible (each triple votes for its leftmost key that can reach G: pinning it there makes
///   that key the triple's only candidate); rounds of votes, then a new pass;
/// - sound candidate sets under leftmost-argmax semantics: j ∈ Cand(i, h, z) iff
///   hi_j > lo_j' for every j' < j and hi_j ≥ lo_j' for every j' > j. Every key that can be the
///   leftmost argmax for some completion is a candidate, so the leftmost exact maximum among
///   the candidates is the true choice for every completion;
/// - D_k(i) = D_{k-1}(i) ∪ ⋃_{h, z} ⋃_{j ∈ Cand(i,h,z)} D_{k-1}(j), and T_k(i) evaluated
///   exactly for every assignment of D_k(i) from the tables of layer k − 1 (no forward passes).
/// Optional: a seeded random restriction first (Stage-3 analogue, several trials keeping the
/// best) and a fan-out pass before each layer (Stage-1 analogue).
///
/// Exactness. Every comparison is exact: scores are enclosed in double intervals first (a cheap
/// enclosure of all dot products, then interval arithmetic that keeps exact points exact) and
/// decided on exact rationals wherever two enclosures overlap. Over-approximating Cand or D
/// would be sound; under-approximating never happens.
///
/// Blow-up guard. A table has |Σ|^|D| entries. When a row would exceed
/// `max_table_entries`, inputs of its dependency set are pinned (counted in
/// `layer_figures::pinned_for_size` and said in the result), even below the free budget;
/// when a whole layer would exceed `max_layer_entries`, the run stops with
/// `status::too_large` (never a silent truncation).

#include "lang/languages.hpp"
#include "model/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

using model::vec;
using numeric::rational;

/// Options of the restriction builder.
struct restriction_options {
    /// C: the run tries to keep at least ⌈C·m⌉ inputs free, m = n for a plain run and m = the
    /// number of initially free inputs when `initial` pre-fixes some. 0 < C < 1.
    rational free_fraction{1, 2};
    /// Seed of the random restrictions (trials) and of nothing else in the builder.
    std::uint64_t seed = 1;
    /// Stage-3 analogue: number of seeded random restrictions tried before the greedy (each
    /// free input is fixed with probability `random_fix_probability` to a uniform allowed
    /// symbol); the best trial is kept (complete, then meets the free budget, then smallest
    /// c_obs, then most free inputs). 0: the greedy alone.
    int trials = 0;
    /// q of the random restriction.
    rational random_fix_probability{1, 8};
    /// Stage-1 analogue: before layer k, fix the inputs that occur in more than
    /// c_{k-1}/(ηC) dependency sets D_{k-1}(j) (within the free budget).
    bool fan_out_pass = false;
    /// η of the fan-out pass and of the counting identity (H5).
    rational eta{1, 4};
    /// Largest table of one activation (|Σ|^|D_k(i)| entries); above, inputs are pinned.
    std::size_t max_table_entries = std::size_t{1} << 18;
    /// Largest total of table entries of one layer; above, the run stops (status too_large).
    std::size_t max_layer_entries = std::size_t{1} << 23;
    /// Greedy rounds per layer (each round is one pass over the unsatisfied rows).
    int max_rounds = 8;
    /// Pre-fixed inputs: empty, or n − 1 entries (symbol index, or -1 for free). Used for the
    /// DYCK pre-restriction of theory.md §1.2.
    std::vector<int> initial;
    /// Symbols the greedy, the fan-out pass, the size guard and the random restriction may pin
    /// to (empty: all of Σ). A language check pins only to the language's symbols.
    std::vector<int> pin_symbols;
    /// Worker threads for the row passes (0: up to 2). The result never depends on it.
    int threads = 0;
    /// NEGATIVE CONTROL ONLY: an unsound candidate rule that keeps only the leftmost satisfying
    /// key p* and drops the keys j < p* with hi_j = G (so it ignores ties that the leftmost rule
    /// gives to an earlier key). The independence check must catch it.
    bool unsound_ignore_ties_for_testing = false;
};

/// How a run ended.
enum class restriction_status {
    complete,  ///< every layer built; tables and dependency sets are available
    too_large  ///< stopped: the dependency tables of a layer exceed max_layer_entries
};

/// Figures of one layer k = 1..L (theory.md §1.3 "Certifiable outputs").
struct layer_figures {
    std::size_t layer = 0;            ///< k, 1-based
    std::size_t rows = 0;             ///< activations built (n for k < L, 1 for k = L)
    std::size_t c_prev = 0;           ///< c_{k-1} = max_j |D_{k-1}(j)| when layer k was built
    std::size_t max_dependency = 0;   ///< max_i |D_k(i)| over the built rows (final ρ)
    std::size_t k_obs = 0;            ///< largest candidate set max |Cand(i, h, z)|
    std::size_t triples = 0;          ///< (i, h, z) triples examined in the last pass
    std::size_t unsatisfied = 0;      ///< triples left unsatisfied by the greedy
    std::size_t pinned_greedy = 0;    ///< inputs fixed by the greedy at this layer
    std::size_t pinned_fan_out = 0;   ///< inputs fixed by the fan-out pass at this layer
    std::size_t pinned_for_size = 0;  ///< inputs fixed because a table was too large
    std::size_t rounds = 0;           ///< greedy rounds run
    /// Growth (Lemma 4's shape), checked when each row is built:
    /// |D_k(i)| <= c_{k-1} (1 + H |Σ|^{c_{k-1}} k_obs(i)).
    bool growth_holds = true;
    std::string growth_detail;        ///< the worst row: "|D|=.. <= bound .."
    /// Stage-1 counting identity (H5): #inputs with fan-out > c_{k-1}/(ηC) is <= ηC n.
    std::size_t high_fan_out = 0;     ///< inputs with fan-out above the threshold
    rational fan_out_threshold;       ///< c_{k-1}/(ηC)
    rational fan_out_limit;           ///< ηC n
    bool counting_holds = true;
};

/// A restriction with its dependency sets and exact tables.
struct restriction {
    long n = 0;                       ///< positions, eos included
    std::size_t sigma = 0;            ///< |Σ|
    std::size_t layers = 0;           ///< L
    std::vector<int> rho;             ///< n − 1 entries: symbol index, or -1 for free
    std::size_t free_count = 0;       ///< |Free|
    std::size_t free_target = 0;      ///< ⌈C·m⌉
    std::size_t initially_free = 0;   ///< m (n − 1 without pre-fixed inputs)
    rational free_fraction;           ///< C as requested
    restriction_status status = restriction_status::complete;
    std::string stop_reason;          ///< why the run stopped (status too_large)
    std::vector<std::string> notes;   ///< what the builder had to do (size pins, budget)
    std::vector<layer_figures> figures;   ///< one per layer 1..L
    std::vector<std::size_t> dependency;  ///< D_L(n), 0-based input positions, ascending
    /// T_L(n): entry w is y_n^(L) under the assignment of `dependency` whose t-th position has
    /// symbol (w / |Σ|^t) mod |Σ| (mixed radix, first position least significant).
    std::vector<vec<rational>> table;
    int trial = -1;                   ///< the kept random trial, -1 when none was run

    /// c_obs = |D_L(n)|.
    std::size_t c_obs() const { return dependency.size(); }
    /// Whether |Free| >= ⌈C·m⌉.
    bool free_budget_met() const { return free_count >= free_target; }
    /// ρ as text over Σ ∪ {*} (eos excluded).
    std::string rho_string(const model::alphabet& a) const;
    /// The index into `table` of a full input (eos excluded or included).
    std::size_t table_index(const std::vector<int>& x) const;
};

/// Builds ρ, D and T for a hard model over exact rationals at length n >= 2. Throws
/// precondition_error for a soft model, n < 2, C outside (0, 1) or a malformed `initial`;
/// model::input_error when the model cannot take length n; numeric_error when the exact
/// scalar cannot evaluate the model; numeric::limit_error, before any work, when a layer's row
/// analyses would exceed the limit attention-work (attention::check_forward_work) and later when
/// an exact value exceeds exact-bits; numeric::interrupted_error after a stop request.
restriction build_restriction(const model::model<rational>& m, long n,
                              const restriction_options& opt = {});

/// One line of the certificate.
struct certificate_check {
    std::string name;   ///< "free-fraction", "table", "independence", "growth", "counting"
    bool passed = true;
    bool soundness = true; ///< a failed soundness check makes the certificate invalid
    std::string detail;
};

/// Options of the certificate.
struct certificate_options {
    std::uint64_t seed = 1;           ///< seed of the sampled assignments
    int samples = 32;                 ///< random assignments checked when not exhaustive
    std::size_t exhaustive_limit = 256; ///< enumerate every assignment of Free when |Σ|^|Free| <= this
    int threads = 0;                  ///< 0: up to 2
};

/// The certificate of a restriction (theory.md §7 H2, H3, H5).
struct certificate {
    bool complete = true;    ///< false when the restriction stopped (nothing to certify)
    bool valid = true;       ///< every soundness check passed
    std::vector<certificate_check> checks;
    std::size_t assignments = 0;      ///< full inputs evaluated with the exact forward pass
    bool exhaustive = false;          ///< every assignment of Free was evaluated
    /// When the table or the independence check fails: the input(s) and outputs.
    std::vector<std::string> failing_inputs;   ///< without eos
    std::vector<vec<rational>> failing_outputs; ///< exact y_n^(L) of each failing input
    vec<rational> expected;                     ///< the table's entry for the first one
};

/// Checks a complete restriction against the exact forward pass
/// (attention::hard_forward_exact): T_L(n)[w] equals y_n^(L) for every tried input, so y_n^(L)
/// is bit-identical under every tried re-assignment of Free \ D_L(n); plus the growth and
/// counting checks of the figures and the free budget (reported, not a soundness check).
certificate certify(const model::model<rational>& m, const restriction& r,
                    const certificate_options& opt = {});

/// The certificate in parts, for work cut into units (`attnprop restrict` over MPI ranks);
/// certify(m, r, opt) is certify_outputs(m, r, opt, certificate_outputs(m, r, opt, 0,
/// certificate_inputs(r, opt))).
/// - certificate_inputs: how many inputs the certificate evaluates (0 for an incomplete
///   restriction);
/// - certificate_input: the t-th of them (eos included), a function of (r, opt, t) alone;
/// - certificate_outputs: the exact y_n^(L) of inputs first .. first + count - 1 (opt.threads);
/// - certify_outputs: the certificate from the outputs of all of them, in order.
/// Throw precondition_error for inputs out of range or a wrong number of outputs.
std::size_t certificate_inputs(const restriction& r, const certificate_options& opt);
model::input_sequence certificate_input(const model::model<rational>& m, const restriction& r,
                                        const certificate_options& opt, std::size_t t);
std::vector<vec<rational>> certificate_outputs(const model::model<rational>& m,
                                               const restriction& r,
                                               const certificate_options& opt, std::size_t first,
                                               std::size_t count);
certificate certify_outputs(const model::model<rational>& m, const restriction& r,
                            const certificate_options& opt, const std::vector<vec<rational>>& ys);

/// What the language part found.
enum class language_verdict {
    counterexample,  ///< two inputs with equal outputs and different membership
    not_ruled_out,   ///< no pair exists on this ρ-subcube (membership fixed by D and ρ)
    no_pair_found    ///< none found among the samples (not a proof either way)
};
const char* to_string(language_verdict v);

/// Result of the language analysis (theory.md §1.2, §7 H4).
struct language_result {
    lang::language language = lang::language::parity;
    language_verdict verdict = language_verdict::no_pair_found;
    std::string explanation;
    std::string inputs[2];            ///< without eos
    vec<rational> outputs[2];         ///< exact y_n^(L), recomputed with hard_forward_exact
    bool accepted[2] = {false, false};
    bool member[2] = {false, false};
    int wrong = -1;                   ///< index of the misclassified input
    /// PARITY: exact accuracy of the model on the ρ-subcube over {0,1} (numerator,
    /// denominator), counted from the certified table: exactly 1/2 when Free ⊋ D_L(n).
    std::optional<rational> accuracy;
    bool accuracy_exhaustive = false; ///< also confirmed by evaluating every input of the subcube
    std::size_t pairs_checked = 0;    ///< sampled pairs x, x^{⊕b} confirmed by the forward pass
};

/// Options of the language runs.
struct language_options {
    restriction_options restrict;     ///< free_fraction is ignored for DYCK (0.9 on the rest)
    certificate_options certify;
    int samples = 16;                 ///< sampled pairs / completions
};

/// A complete language run: the restriction (with pre-fixing for DYCK), its certificate and
/// the counterexample.
struct language_run {
    restriction restr;
    certificate cert;
    language_result result;
};

/// The symbols of the language as indices of the model's alphabet. Throws precondition_error
/// naming the missing symbols when the model's alphabet does not contain them.
std::vector<int> language_symbols(const model::model<rational>& m, lang::language l);

/// Runs the restriction for a language: PARITY, FIRST, MAJORITY and CONTAINS-ONE restrict with
/// C and pin only to '0'/'1'; 1DYCK and 2DYCK first pre-fix positions 1..⌊0.2n⌋ to '(' and
/// the last ⌊0.2n⌋ inputs to ')', then restrict the rest with C = 0.9 (theory.md §1.2). Then
/// looks for two inputs agreeing on ρ and on D_L(n) whose membership differs, recomputes both
/// outputs with the exact forward pass and names the misclassified one.
language_run run_language(const model::model<rational>& m, long n, lang::language l,
                          const language_options& opt = {});

/// The restriction options run_language builds with: `opt.restrict` with the language's pinned
/// symbols, and for the DYCK languages C = 0.9 and the pre-fixed edges. Throws like
/// language_symbols, and precondition_error for DYCK at n < 2.
restriction_options language_restriction_options(const model::model<rational>& m, long n,
                                                 lang::language l, const language_options& opt);

/// The language analysis on an existing restriction (used by run_language).
language_result analyse_language(const model::model<rational>& m, const restriction& r,
                                 lang::language l, const language_options& opt);

} // namespace attnprop::analysis
