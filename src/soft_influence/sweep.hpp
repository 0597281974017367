#pragma once
/// @file sweep.hpp
/// Sweeps of one-symbol influence across a ladder of lengths n (Hahn 2020, Lemma 5 and
/// Theorem 6; theory.md §7, checks S3–S5): per n, the largest and mean measured influence
/// ||y_n^(L)(x) - y_n^(L)(x[i <- a])||, n times the largest, the a-priori bound K(n)/n, the
/// largest a-posteriori pair bound (Arb balls), the largest probability change, and for a
/// softmax predictor over {0, 1} on PARITY or FIRST the cross-entropy corollary of §2.2.
///
/// Measurements are made in the chosen scalar (Arb balls by default: every comparison with a
/// bound is then rigorous and may be undecided, never wrong; MPFR and double give rounded
/// values compared as if exact). Every number of a row is a decimal string made from the
/// scalar, never through double; only the log-log slope fit runs in double.
///
/// Inputs: `inputs` random inputs per n, uniform over Σ^(n-1) or from the language sampler,
/// each seeded by (seed, n, k) alone, so that rows do not depend on the number of threads.
/// Positions: every position i < n, or `positions` evenly spread ones (always the first and
/// the last before eos).

#include "soft_influence/hypotheses.hpp"
#include "soft_influence/loglog_fit.hpp"
#include "lang/languages.hpp"
#include "model/model.hpp"
#include "numeric/kinds.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// The scalar the measurements are made in: a user kind with exp, or `automatic`, which
/// filters: a row is measured in certified double intervals (numeric::dinterval) and again in
/// Arb balls (at the sweep's precision, doubled up to the cap) only when a comparison it decides
/// is undecided or a value is undefined where more precision may resolve it; rows whose
/// a-posteriori pair bound is asked for (n <= posterior_max_n) are measured in balls directly
/// (the bound is computed from ball traces). Intervals alone leave undecided undecided; balls
/// (an enclosure kind of variable precision) are measured again at doubled precision.
using sweep_scalar = numeric::kind_choice;
using numeric::to_string;

/// A measurement against a bound: certainly below, certainly above, undecided (balls
/// overlap), or not applicable (no finite bound).
enum class comparison { below, above, undecided, not_applicable };
const char* to_string(comparison c);

/// The cross-entropy corollary at one n (theory.md §2.2, S5).
struct cross_entropy_row {
    long n = 0;
    lang::language language = lang::language::parity;
    bool exhaustive = false;       ///< the whole cube {0,1}^(n-1) was enumerated
    std::size_t inputs = 0;        ///< inputs averaged over
    std::size_t correct = 0;       ///< certainly correct argmax predictions
    std::string mean_ce_bits;      ///< mean of -log2 p(label) (decimal)
    std::string accuracy;          ///< correct / inputs (decimal)
    std::string eta;               ///< η_n (decimal): see below
    std::string floor_bits;        ///< 1 - log2(1 + η_n) (decimal)
    /// below = CE >= floor holds; above = CE < floor. Sampled (non-exhaustive) rows never say
    /// above: an observed violation is reported undecided, because a sampled η is only a lower
    /// estimate of the supremum the inequality needs.
    comparison check = comparison::not_applicable;
    /// η = 0 is proved (every measured pair's change of p is the exact point 0, computed as a
    /// differential enclosure): the predictor gives each label-swapped pair the same p, so each
    /// pair costs -log2(p_0 p_1) >= 2 bits by AM-GM and CE >= 1 bit = the floor, whatever the
    /// balls of CE and the floor say (they are equal when p = (1/2, 1/2)). `check` is then below.
    bool eta_zero_exactly = false;
    double mean_ce_approx = 0;     ///< for plots and trend tests only
    /// The bound over every input (all_inputs.hpp): η̄(n) >= η over the whole cube (every
    /// one-symbol change), and the floor 1 - log2(1 + η̄(n)) it proves for the mean
    /// cross-entropy over every input (decimal, rounded down). With `certified` the corollary is
    /// decided by it: `check` is below (an enumerated CE below the certified floor would be
    /// above: a finding).
    std::optional<std::string> certified_eta, certified_floor_bits;
    bool certified = false;
};

/// One row of the sweep.
struct sweep_row {
    long n = 0;
    std::size_t inputs = 0;        ///< inputs measured
    std::size_t positions = 0;     ///< positions measured per input
    std::size_t pairs = 0;         ///< (input, position, replacement) changes measured
    std::string max_influence;     ///< decimal strings from the scalar
    std::string mean_influence;
    std::string n_max_influence;
    std::optional<std::string> bound;           ///< δ_L(n) = K(n)/n; null when unavailable
    std::optional<std::string> posterior_bound; ///< max over pairs (enclosure kinds only)
    std::optional<std::string> max_prob_change; ///< softmax readouts
    std::optional<std::string> prob_bound;      ///< factor·δ_L(n)/4
    comparison below_bound = comparison::not_applicable;     ///< every pair vs δ_L(n)
    comparison below_posterior = comparison::not_applicable; ///< every pair vs its own bound
    comparison prob_below_bound = comparison::not_applicable;
    /// The bounds over every input of length n (all_inputs.hpp; add_every_input_bounds): Δ̄(n)
    /// and η̄(n) rounded up, and the largest measured change and probability change against
    /// them (above: a finding).
    std::optional<std::string> certified_bound, certified_prob_bound;
    comparison below_certified = comparison::not_applicable;
    comparison prob_below_certified = comparison::not_applicable;
    /// Balls only: certified bounds of n·max influence, rounded outward (decimal strings).
    std::optional<std::string> n_max_lower, n_max_upper;
    double max_influence_approx = 0;            ///< for the slope fit only
    double n_max_influence_approx = 0;
    std::optional<cross_entropy_row> cross_entropy;
    /// A pair above a bound, when some comparison says above (for the counterexample folder).
    std::string witness_input;                  ///< without eos
    std::size_t witness_position = 0;           ///< 1-based
    std::string witness_bound;                  ///< "a-priori", "posterior" or "probability"
    bool reused = false;                        ///< taken from a previous run (resume)
    long precision = 0;                         ///< bits the row was measured at (53: double)
    /// The scalar that measured the row: "ball", "interval", "mpfr" or "double" (with
    /// sweep_scalar::automatic, "interval" or "ball"; empty in rows written before it existed).
    std::string measured_in;
    /// Set when the measurement met a value of the model that does not exist (NaN, a layer
    /// norm at zero variance with eps = 0, ...): the located message with the input it was met
    /// on ("undefined at layer 1, node 'norm', position 3 (...; input '01')"). Such a row is
    /// kept: its measured numbers (max_influence, mean_influence, n_max_influence) are empty
    /// and written as null, the *_approx fields are NaN, posterior_bound, max_prob_change and
    /// cross_entropy are absent, every comparison is not_applicable; the a-priori bounds stay.
    std::optional<std::string> undefined;
};

struct sweep_options {
    std::vector<long> ns;
    std::size_t inputs = 4;
    std::size_t positions = 8;                 ///< 0 = every position
    std::optional<lang::language> language;    ///< sampler (and label for cross-entropy)
    long precision = 128;
    sweep_scalar scalar = sweep_scalar::of<numeric::arb_ball>();
    std::uint64_t seed = 1;
    unsigned threads = 0;                      ///< 0 = hardware concurrency
    /// Negative control: every bound is divided by this (1 = the true bounds) in the
    /// comparisons, and so is η in the cross-entropy floor 1 - log2(1 + η/D). The bounds
    /// written to rows stay the true ones.
    long bound_divisor = 1;
    /// The a-posteriori pair bound (full traces of both inputs, O(n²) per pair for L = 2) is
    /// computed for n <= this only (balls only); above it the row's posterior is null and the
    /// measurement takes the cheaper influence method. 0 = never.
    long posterior_max_n = 4096;
    /// Balls: a row whose bound comparisons (a-priori, a-posteriori, probability) are
    /// undecided, or that is undefined where more precision may resolve it (an enclosure that
    /// merely contains a pole), is measured again at doubled precision while that stays <=
    /// this; 0 (or <= precision) = never. The cross-entropy check does not trigger it (CE can
    /// equal its floor exactly).
    long precision_cap = 0;
    /// The cube is enumerated exhaustively for the cross-entropy when n - 1 <= this.
    std::size_t exhaustive_cap = 12;
    /// Slope tolerance of "influence vanished": slope <= -1 + tol.
    double slope_tolerance = 0.1;
    /// Rows to reuse instead of recomputing (matched by n).
    std::vector<sweep_row> reuse;
    /// Called in n order as soon as each row is final (progress, checkpoints).
    std::function<void(const sweep_row&)> on_row;
    /// Called (from worker threads, one call at a time) as the parts of an attempt at a row are
    /// measured (its units, or pieces of them for idle threads): the length, the parts finished
    /// and the parts of the attempt.
    std::function<void(long n, std::size_t done, std::size_t total)> on_progress;
};

/// undefined: some row met a value of the model that does not exist (and no rigorous failure
/// was found): the model does not "vanish" where it is undefined.
enum class sweep_verdict { holds, fails, hypothesis_violated, undecided, undefined };
const char* to_string(sweep_verdict v);

struct sweep_result {
    std::string model_name;
    std::vector<hypothesis_result> hypotheses;
    std::vector<sweep_row> rows;
    std::optional<loglog_fit> fit;          ///< max influence against n, every defined row
    std::optional<loglog_fit> fit_upper;    ///< the upper half of the defined rows
    /// The lengths of the undefined rows, left out of both fits (decide_sweep).
    std::vector<long> fit_left_out;
    sweep_verdict verdict = sweep_verdict::undecided;
    std::string explanation;                ///< one line: why this verdict
    /// A certified growth of n·max influence between two rows (balls only), when the lower
    /// bound at the larger n exceeds the upper bound at the smaller one: "n * max influence
    /// certainly grew from <= U at n = a to >= L at n = b (a factor >= F)". A fact, reported
    /// with the verdict; not itself a verdict.
    std::optional<std::string> growth;
    /// The rate measurement (a statistic, never a verdict) for hypothesis-violated sweeps:
    /// whether the upper-half slope is <= -1 + tol ("consistent with 1/n");
    /// nullopt without a fit.
    numeric::uncertain<bool> influence_vanished;
    /// The sweep stopped early on a stop request (SIGINT, numeric::request_stop): `rows` holds
    /// the lengths finished before it, the verdict is decided on them, and these lengths were
    /// not measured (the row in progress was dropped whole).
    std::vector<long> not_measured;
    /// n and n times the largest change the worst-case search found there (influence
    /// --search): a lower bound drawn beside the bound over every input.
    std::vector<std::pair<long, double>> searched;
};

/// The positions (0-based, < n - 1) measured at length n: all when count = 0 or count >=
/// n - 1, else `count` evenly spread positions round(t (n - 2) / (count - 1)), t = 0..count-1.
std::vector<std::size_t> sweep_positions(std::size_t n, std::size_t count);

/// The k-th input (k = 0, 1, ...) at length n: n - 1 symbols, eos appended. Depends only on
/// (seed, n, k).
/// A 2DYCK forced-bracket pair (theory.md §2.2): x is a random prefix of length n - 1 (eos
/// appended) of a 2DYCK word that ends unbalanced, so the type of its next closing bracket is
/// forced (label 0 for ")", 1 for "]"); y is x with the type of the top unmatched opener, at
/// `position`, flipped, so its label is the other one. Input k of length n for a seed.
struct forced_bracket_pair {
    model::input_sequence x, y;
    int label_x = 0, label_y = 1;
    std::size_t position = 0; ///< 0-based position of the flipped opener
};
forced_bracket_pair forced_pair(const model::model<numeric::rational>& m, long n, std::size_t k,
                                std::uint64_t seed);

/// The forced-bracket pair of an explicit prefix x (eos last): x[0..n-1) must be a prefix of a
/// 2DYCK word (every closer matches the innermost open opener) that ends unbalanced; y flips
/// the type of its top unmatched opener. nullopt when x is no such prefix.
std::optional<forced_bracket_pair> forced_pair_of(const model::model<numeric::rational>& m,
                                                  const model::input_sequence& x);

/// The 2DYCK analogue of the cross-entropy corollary (theory.md §2.2) on `pairs` forced-bracket
/// pairs (forced_pair(m, n, k, seed), k < pairs), measured in S: for any binary predictor
/// p_label(x) + p_label'(x') <= 1 + |p(x) - p(x')|_inf, so by Jensen the mean cross-entropy over
/// the 2 pairs inputs is >= 1 - log2(1 + eta) with eta the largest change over the pairs: a
/// theorem for the measured eta, so `check` says above only for a real violation (or with
/// eta_divisor > 1, which divides eta in the floor: the negative control). The model must be
/// a softmax predictor over ( ) [ ] whose outputs are exactly ) and ] (else precondition_error).
template <numeric::ExpScalar S>
cross_entropy_row forced_pair_cross_entropy(const model::model<numeric::rational>& m, long n,
                                            std::size_t pairs, std::uint64_t seed,
                                            long eta_divisor, const numeric::context& ctx);

/// forced_pair_cross_entropy on explicit pairs (all of one length n, at least one), e.g. the
/// pairs a search found: the same statement and measurement.
template <numeric::ExpScalar S>
cross_entropy_row forced_pairs_cross_entropy(const model::model<numeric::rational>& m,
                                             const std::vector<forced_bracket_pair>& pairs,
                                             long eta_divisor, const numeric::context& ctx);

model::input_sequence sweep_input(const model::model<numeric::rational>& m, long n,
                                  std::size_t k, std::uint64_t seed,
                                  std::optional<lang::language> language);

/// Runs the sweep. Preconditions (precondition_error otherwise): a soft model, every n >= 2
/// and within a finite positional table, a language whose alphabet is the model's. A row that
/// meets a value of the model that does not exist is kept with sweep_row::undefined set (balls:
/// measured again at doubled precision up to precision_cap while more precision may resolve
/// it); it is never thrown. Throws numeric::limit_error before the first row when a forward
/// pass at some n would exceed the limit attention-work (attention::check_forward_work). After a
/// stop request (numeric::request_stop) it returns the rows finished so far, the others listed
/// in sweep_result::not_measured.
sweep_result influence_sweep(const model::model<numeric::rational>& exact,
                             const sweep_options& opt);

/// The preconditions influence_sweep checks before its first row (the same exceptions).
void check_sweep(const model::model<numeric::rational>& exact, const sweep_options& opt);

/// One row of the sweep at length n (one of opt.ns), measured as influence_sweep measures it:
/// it depends on the model, the options that change rows and n only (not on opt.threads, the
/// other rows or the order they are measured in), so rows measured apart (by several
/// processes) assemble into the sweep influence_sweep returns. Ignores opt.reuse, opt.on_row
/// and calls opt.on_progress as influence_sweep does. Throws numeric::interrupted_error after a
/// stop request.
sweep_row sweep_row_at(const model::model<numeric::rational>& exact, const sweep_options& opt, long n);

// --- A row's measurement cut into units ------------------------------------------------------
//
// A row is measured by a ladder of attempts (row_ladder): one scalar at one precision each,
// stopping at the first that decides the row (attempt_decides). An attempt is cut into units
// (row_units): blocks of one input's positions, and the row's cross-entropy where it has one.
// Every unit's result depends on the model, the options, n, the attempt and the unit alone
// (never on the threads, the process or the order), and assemble_row folds the results in
// (input, position) order: the one-process sweep measures its rows this way, and so does the
// distributed one (a unit per process at a time), so both give the same rows, bit for bit.

/// One measurement of a row: a user kind (never automatic) at `bits` bits.
struct row_attempt {
    sweep_scalar scalar = sweep_scalar::of<numeric::arb_ball>();
    long bits = 0;
};

/// The attempts a row at n may take, in order: the sweep's kind at its precision, then (an
/// enclosure of variable precision: balls) at doubled precision while <= precision_cap; with
/// sweep_scalar::automatic, certified intervals first where they apply (no a-posteriori bound
/// at n, or the incremental method applies), then balls likewise.
std::vector<row_attempt> row_ladder(const model::model<numeric::rational>& exact,
                                    const sweep_options& opt, long n);

/// A unit of an attempt: positions [first, last) of sweep_positions(n, opt.positions) on input
/// `input` (sweep_input), or (cross_entropy) the row's cross-entropy over the enumerated cube or
/// the 2DYCK forced-bracket pairs, where the row has one that is not made from the pairs.
struct row_unit {
    std::size_t input = 0, first = 0, last = 0;
    bool cross_entropy = false;
};

/// The units of an attempt at n, in (input, position) order, the cross-entropy last. The same
/// for every attempt of the row, and a fixed function of the model, n, opt.positions and
/// opt.inputs: an input's positions are cut into several blocks only where the forward pass and
/// tables that every block repeats cost at most about a tenth of the input's work (at most 16
/// blocks).
std::vector<row_unit> row_units(const model::model<numeric::rational>& exact,
                                const sweep_options& opt, long n);

/// An estimate of a unit's work (profile_cost's units), to hand out the largest first.
double row_unit_cost(const model::model<numeric::rational>& exact, const sweep_options& opt,
                     long n, const row_unit& u);

/// A value of the model that does not exist, met by a unit: the located message and whether
/// more precision may resolve it (numeric::undefined_error).
struct unit_undefined {
    std::string message;
    bool may_resolve = false;
};

/// A value of S (a user kind with exp: double, interval, MPFR, ball) as text that
/// from_exact_text turns back into the very same value: a double and an interval's ends by
/// their bits (16 hexadecimal digits each), an MPFR number in hexadecimal with every digit of
/// its significand after its precision ("256 -0.8f3@1"), a ball as Arb's exact dump after its
/// precision. from_exact_text throws std::runtime_error for a malformed text.
template <class S> std::string exact_text(const S& x);
template <class S> S from_exact_text(const std::string& text);

/// One measured (position, replacement) pair of a block. Numbers are in an exact text form of
/// the attempt's scalar (decoded to the very value measured: doubles and intervals by their
/// bits, MPFR in hexadecimal at its precision, balls as Arb dumps); the a-posteriori bound is
/// a ball.
struct measured_pair {
    std::size_t position = 0;
    std::string dy;
    std::optional<std::string> dp_max, posterior;
};

/// What a unit measured: a block's pairs in position order and its input's softmax readouts,
/// or the row's cross-entropy; or the first undefined value it met.
struct unit_result {
    std::vector<measured_pair> pairs;
    std::optional<std::vector<std::string>> probabilities;
    std::optional<cross_entropy_row> cross_entropy;
    std::optional<unit_undefined> undefined;
};

/// Measures one unit of an attempt. `threads` (0: hardware concurrency) measure parts of a
/// block at once, each with the method of the whole row, so the result does not depend on it.
/// Throws numeric::interrupted_error after a stop request.
unit_result measure_unit(const model::model<numeric::rational>& exact, const sweep_options& opt,
                         long n, const row_attempt& attempt, const row_unit& unit, unsigned threads);

/// A row measured by one attempt, and whether more precision may resolve its undefined value.
struct row_measurement {
    sweep_row row;
    bool may_resolve = false;
};

/// The row of an attempt from the results of its units (in row_units order): the first unit
/// in that order that met an undefined value makes the row undefined; otherwise the pairs are
/// folded per input and the inputs reduced in order.
row_measurement assemble_row(const model::model<numeric::rational>& exact, const sweep_options& opt,
                             long n, const row_attempt& attempt,
                             const std::vector<unit_result>& results);

/// Whether an attempt's row is final (the ladder stops there): it decides every bound
/// comparison and is defined, or undefined where more precision does not help; after an
/// interval attempt also a decided 2DYCK cross-entropy.
bool attempt_decides(const row_attempt& attempt, const row_measurement& m);

/// The row of the last attempt made, as the sweep reports it (an undefined value that more
/// precision might have resolved says up to which precision it was tried).
sweep_row finish_row(row_measurement m);

/// The sweep from its rows (in n order) and the lengths not measured: the hypotheses, fits and
/// verdict, as influence_sweep decides them.
sweep_result sweep_from_rows(const model::model<numeric::rational>& exact, const sweep_options& opt,
                             std::vector<sweep_row> rows, std::vector<long> not_measured);

/// The largest certified growth of n·max influence between two defined ball rows (see
/// sweep_result::growth); nullopt when no lower bound at a larger n exceeds an upper bound at a
/// smaller one.
std::optional<std::string> certified_growth(const std::vector<sweep_row>& rows);

/// Fills fit, fit_upper, fit_left_out, verdict, explanation, growth and influence_vanished of r from
/// its hypotheses and rows (exposed for tests on constructed rows). Undefined rows first: when
/// some row is undefined, everything below is decided on the defined rows alone (the fits
/// included, fit_left_out naming the others); a fails verdict stands (with the undefined n
/// added to its explanation), any other verdict becomes undefined, whose explanation names
/// the undefined lengths and the first located message, and influence_vanished is unset. In
/// order, then: fails when an enumerated cross-entropy is below its floor; hypothesis-violated
/// when a hypothesis fails (influence_vanished from the upper-half slope); fails when a
/// measurement is above a bound; undecided when a hypothesis is undecided, a bound comparison
/// is undecided or some n has no a-priori bound; holds otherwise. An undecided cross-entropy
/// row (sampled, or equal to its floor to working precision) is named in the explanation but
/// does not change the verdict.
void decide_sweep(sweep_result& r, double slope_tolerance = 0.1);

/// The cross-entropy corollary over the whole cube {0,1}^(n-1) (2 <= n, n - 1 <= 20), for a
/// softmax predictor over the input alphabet {0, 1} whose outputs include 0 and 1, in Arb balls: mean CE in bits
/// of the language label (parity or first), the accuracy, and η = min over label-swapping
/// bits b of max_x ||p(x) - p(x ^ b)||_∞ (every bit for PARITY, bit 1 for FIRST), which makes
/// CE >= 1 - log2(1 + η) a theorem. `eta_divisor` divides η (negative controls).
/// `flipped_bit` receives the 1-based b attaining η. Throws precondition_error when the
/// alphabets are not {0, 1} or the readout is not softmax.
struct cube_cross_entropy_result {
    numeric::arb_ball ce_bits;
    numeric::arb_ball eta;
    numeric::arb_ball floor_bits;
    std::size_t correct = 0;
    std::size_t cube = 0;
    std::size_t flipped_bit = 0;
    numeric::order ce_vs_floor = numeric::order::unknown;
    /// η = 0 is proved (differential enclosures): p does not depend on the flipped bit, so
    /// CE >= 1 bit = the floor by AM-GM on every label-swapped pair, whatever ce_vs_floor says.
    bool eta_zero_exactly = false;
};
cube_cross_entropy_result cube_cross_entropy(const model::model<numeric::rational>& m, long n,
                                             lang::language label, const numeric::context& ctx,
                                             long eta_divisor = 1);

/// The label of x (without eos) under PARITY or FIRST over {0, 1}: 1 (odd / first bit 1) or 0.
int binary_label(lang::language l, const std::string& x);

} // namespace attnprop::analysis
