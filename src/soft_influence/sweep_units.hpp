#pragma once
/// @file sweep_units.hpp
/// A row of the influence sweep (sweep.hpp) cut into units, so that rows measured apart (by
/// threads of one process, or by several processes: src/dist) assemble into the same row, bit
/// for bit.

#include "numeric/filter.hpp"
#include "soft_influence/sweep.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

// A row is measured by a ladder of attempts (row_ladder, the rungs of numeric::run_filter): one
// scalar at one precision each, stopping at the first that decides the row (attempt_decides).
// An attempt is cut into units (row_units): blocks of one input's positions, and the row's
// cross-entropy where it has one. Every unit's result depends on the model, the options, n, the
// attempt and the unit alone (never on the threads, the process or the order), and assemble_row
// folds the results in (input, position) order: the one-process sweep measures its rows this
// way (sweep_row_at), and so does the distributed one (a unit per process at a time), so both
// give the same rows, bit for bit.

/// One measurement of a row: a user kind with exp (never automatic) at `bits` bits.
using row_attempt = numeric::rung;

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

/// One measured (position, replacement) pair of a block. Numbers are in the exact text of the
/// attempt's scalar (numeric::exact_text, decoded by numeric::from_exact_text to the very value
/// measured); the a-posteriori bound is a ball.
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
/// interval attempt also a decided 2DYCK cross-entropy; and after an enclosure's attempt, the
/// printed measurements certify `digits` significant digits (sweep_options::digits).
bool attempt_decides(const row_attempt& attempt, const row_measurement& m, int digits);

/// The row of the last attempt made, as the sweep reports it (an undefined value that more
/// precision might have resolved says up to which precision it was tried).
sweep_row finish_row(row_measurement m);

} // namespace attnprop::analysis
