#pragma once
/// @file hard_limit.hpp
/// Suite `hard-limit`: Hahn (2020), Theorem 1 checked on random hard models with arbitrary maps
/// at concrete n (theory.md §1.3 and §7 H2–H4). Each property is built by a factory whose
/// implementation under test can be replaced, so that tests show it failing on a deliberately
/// broken implementation (its negative control).

#include "hard_limit/restriction.hpp"
#include "props/common.hpp"

#include <functional>

namespace attnprop::props {

/// Builds the restriction of a case (model, n, options): analysis::build_restriction by
/// default; replaced by the negative controls.
using restriction_fn = std::function<analysis::restriction(
    const model::model<rational>&, long, const analysis::restriction_options&)>;

/// Finds the PARITY pair of a restriction: analysis::analyse_language by default.
using parity_pair_fn = std::function<analysis::language_result(
    const model::model<rational>&, const analysis::restriction&)>;

/// The restriction options of a case: C = c_num / c_den, seed, trials and fan_out from the
/// case's params (absent params take the defaults of restriction_options), pin symbols from
/// `language` when given.
analysis::restriction_options restriction_options_of(const test_case& c);

/// The certificate options of a case: seed and samples from its params, one thread.
analysis::certificate_options certificate_options_of(const test_case& c);

/// restriction_options_of and certificate_options_of together, for analysis::run_language.
analysis::language_options language_options_of(const test_case& c);

/// The shape of a restriction case (runner::case_shape): a hard model, 0 to 2 inputs (informative:
/// restrict's failing inputs or language pair), "n" (required), "seed", "c_num" / "c_den" (both
/// or neither, 0 < C < 1, as --free-fraction), "trials", "samples", "fan_out" in the ranges of
/// restrict's options, and "language" (required with `language_required`; its symbols must be
/// in the alphabet and the readout a recognizer). `parity` requires the PARITY symbols and a
/// recognizer whatever the parameters.
runner::case_shape restriction_shape(bool language_required = false, bool parity = false);

/// The certificate of a random model's restriction is valid: T_L(n) equals the exact forward
/// pass on every tried input and y_n^(L) is bit-identical under re-assignments of
/// Free \ D_L(n); the growth and counting checks hold. `unsound` sets
/// restriction_options::unsound_ignore_ties_for_testing (the negative control).
/// With `masked`, hard-limit/masked-certificate-valid: the same on causally masked hard models
/// (gen::causally_masked), n up to 1024.
runner::property certificate_valid(bool unsound = false, bool masked = false);

/// The free accounting is right and the budget is kept: |Free| is the number of * in ρ and is
/// at least ⌈C·n⌉, unless the run says that the size guard had to pin below it (then the case
/// is undecided: a finite-n heuristic falling short says nothing about an asymptotic theorem).
runner::property free_fraction(restriction_fn builder = {});

/// PARITY accuracy on the ρ-subcube over {0,1} is exactly 1/2 when Free ⊋ D_L(n), measured by
/// enumerating the subcube with the exact forward pass when it has at most 1024 inputs (else
/// counted from the certified table and confirmed on sampled pairs). With
/// `ignore_precondition` (the negative control) the case Free = D_L(n) is measured too.
runner::property parity_half(bool ignore_precondition = false);

/// The reported PARITY counterexample pair really has equal outputs (recomputed with the
/// exact forward pass) and different parity, and the input named wrong is misclassified.
runner::property parity_pair(parity_pair_fn finder = {});

void register_hard_limit(runner::registry& r);

} // namespace attnprop::props
