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

#include "soft_influence/cross_entropy.hpp"
#include "soft_influence/hypotheses.hpp"
#include "soft_influence/loglog_fit.hpp"
#include "lang/languages.hpp"
#include "model/model.hpp"
#include "numeric/kinds.hpp"
#include "util/verdict.hpp"

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
    /// Every pair against its bound: passed when every one is certainly within it, failed when
    /// one certainly exceeds it, undecided when the enclosures overlap, not-applicable when
    /// there is no finite bound.
    verdict below_bound = verdict::not_applicable;      ///< every pair vs δ_L(n)
    verdict below_posterior = verdict::not_applicable;  ///< every pair vs its own bound
    verdict prob_below_bound = verdict::not_applicable; ///< every probability change vs its bound
    /// The bounds over every input of length n (all_inputs.hpp; add_every_input_bounds): Δ̄(n)
    /// and η̄(n) rounded up, and the largest measured change and probability change against
    /// them (failed: a finding).
    std::optional<std::string> certified_bound, certified_prob_bound;
    verdict below_certified = verdict::not_applicable;
    verdict prob_below_certified = verdict::not_applicable;
    /// Balls only: certified bounds of n·max influence, rounded outward (decimal strings).
    std::optional<std::string> n_max_lower, n_max_upper;
    double max_influence_approx = 0;            ///< for the slope fit only
    double n_max_influence_approx = 0;
    std::optional<cross_entropy_row> cross_entropy;
    /// A pair above a bound, when some comparison failed (for the counterexample folder).
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
    /// cross_entropy are absent, every comparison is not-applicable; the a-priori bounds stay.
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
    /// Significant digits the printed measurements (max influence, n·max, max probability
    /// change, and the cross-entropy's CE, η and floor) must certify: an enclosure too wide for
    /// them is measured again along the ladder (intervals, then balls up to precision_cap), and
    /// the last rung's enclosure is printed with the digits it certifies (docs/reports.md,
    /// "Every printed digit"). 0 = no requirement.
    int digits = 12;
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

/// The verdict of a sweep (decide_sweep): passed, failed (a rigorous witness), not-applicable
/// (a hypothesis of Lemma 5 fails, so it makes no claim; the explanation says which), undecided,
/// or undefined (some row met a value of the model that does not exist and no rigorous failure
/// was found: the model does not "vanish" where it is undefined).
struct sweep_result {
    std::string model_name;
    /// Every layer causally masked: each row's a-priori bound is the masked statement of
    /// theory.md §2.5, K (1 + ln n)^(L-1)/n, not Lemma 5's K(n)/n.
    bool masked = false;
    /// For a kind that none of Lemma 5's bounds holds for (bounds_for: neither softmax nor
    /// bounded by the a-priori K), why Lemma 5 makes no claim about it, in words (the kind's
    /// influence law, theory.md §2.6); the verdict is then not-applicable. Empty otherwise.
    std::string no_claim;
    std::vector<hypothesis_result> hypotheses;
    std::vector<sweep_row> rows;
    std::optional<loglog_fit> fit;          ///< max influence against n, every defined row
    std::optional<loglog_fit> fit_upper;    ///< the upper half of the defined rows
    /// The lengths of the undefined rows, left out of both fits (decide_sweep).
    std::vector<long> fit_left_out;
    attnprop::verdict verdict = attnprop::verdict::undecided;
    std::string explanation;                ///< one line: why this verdict
    /// A certified growth of n·max influence between two rows (balls only), when the lower
    /// bound at the larger n exceeds the upper bound at the smaller one: "n * max influence
    /// certainly grew from <= U at n = a to >= L at n = b (a factor >= F)". A fact, reported
    /// with the verdict; not itself a verdict.
    std::optional<std::string> growth;
    /// The rate measurement (a statistic, never a verdict) for sweeps whose hypotheses fail:
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

/// Which of the soft lemma's bounds hold for an attention kind (docs/theory.md §2.6), so that
/// a measurement is compared only with a bound of its own kind: softmax has all three; the
/// a-priori K also bounds the kinds of a_priori_bounds_kind (StableMax); the a-posteriori pair
/// bound and the bounds over every input are derived for softmax only. Every other kind has none: its influence is
/// measured, and the verdict says what the kind's law is.
struct kind_bounds {
    bool a_priori = false;
    bool pair = false;
    bool every_input = false;
};
kind_bounds bounds_for(model::attention_kind k);

/// Why the influence sweep cannot measure the model (a kind that selects the maximal score,
/// where Theorem 1 speaks instead), or empty: every kind that weighs every key is measured.
std::string influence_refusal(const model::model<numeric::rational>& m);

/// The preconditions influence_sweep checks before its first row (the same exceptions).
void check_sweep(const model::model<numeric::rational>& exact, const sweep_options& opt);

/// One row of the sweep at length n (one of opt.ns), measured as influence_sweep measures it:
/// it depends on the model, the options that change rows and n only (not on opt.threads, the
/// other rows or the order they are measured in), so rows measured apart (by several
/// processes) assemble into the sweep influence_sweep returns. Ignores opt.reuse, opt.on_row
/// and calls opt.on_progress as influence_sweep does. Throws numeric::interrupted_error after a
/// stop request.
sweep_row sweep_row_at(const model::model<numeric::rational>& exact, const sweep_options& opt, long n);

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
/// included, fit_left_out naming the others); a failed verdict stands (with the undefined n
/// added to its explanation), any other verdict becomes undefined, whose explanation names
/// the undefined lengths and the first located message, and influence_vanished is unset. In
/// order, then: failed when an enumerated cross-entropy is below its floor; not-applicable
/// when a hypothesis fails (influence_vanished from the upper-half slope); failed when a
/// measurement is above a bound; undecided when a hypothesis is undecided, a bound comparison
/// is undecided or some n has no a-priori bound; passed otherwise. An undecided cross-entropy
/// row (sampled, or equal to its floor to working precision) is named in the explanation but
/// does not change the verdict.
void decide_sweep(sweep_result& r, double slope_tolerance = 0.1);

} // namespace attnprop::analysis
