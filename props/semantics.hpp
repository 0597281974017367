#pragma once
/// @file semantics.hpp
/// Suite `semantics`: the implementation computes the models of docs/theory.md, identically across
/// scalar kinds where that is mathematically required. Each property is built by a factory
/// whose implementation under test can be replaced, so that tests can show each property
/// failing on a deliberately broken implementation (its negative control).

#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "props/common.hpp"

#include <functional>
#include <optional>

namespace attnprop::props {

using exact_forward_fn = std::function<attention::exact_hard_output(
    const model::model<rational>&, const model::input_sequence&, const numeric::context&, bool)>;
using ball_hard_fn = std::function<attention::hard_output<numeric::arb_ball>(
    const model::model<numeric::arb_ball>&, const model::input_sequence&,
    const numeric::context&, bool)>;
using double_hard_fn = std::function<attention::hard_output<double>(
    const model::model<double>&, const model::input_sequence&, const numeric::context&, bool)>;
using ball_soft_fn = std::function<attention::soft_output<numeric::arb_ball>(
    const model::model<numeric::arb_ball>&, const model::input_sequence&,
    const numeric::context&, attention::soft_options)>;
using interval_soft_fn = std::function<attention::soft_output<numeric::dinterval>(
    const model::model<numeric::dinterval>&, const model::input_sequence&,
    const numeric::context&, attention::soft_options)>;
using writer_fn = std::function<std::string(const model::model<rational>&)>;

/// The filtered exact hard path equals the plain exact reference (values and choices).
runner::property hard_filter_equals_exact(exact_forward_fn filtered = {});
/// A decided ball evaluation of a hard model contains the exact y and agrees on accept/reject.
runner::property hard_ball_encloses_exact(ball_hard_fn ball = {});
/// On models whose arithmetic is exact in double, double, MPFR and exact give identical y.
runner::property hard_dyadic_kinds_agree(double_hard_fn dbl = {});
/// Hard models: double selects the same position as exact arithmetic at every layer, row and
/// head, and a recognizer gives the same accept/reject (a given model's --scalar double checked
/// against exact; random models: gen::dyadic_hard_model, where it must hold). `models`
/// replaces the random models (the negative control passes gen::near_tie_hard_model).
runner::property double_matches_exact(double_hard_fn dbl = {},
                                      std::optional<rc::Gen<model::model<rational>>> models = {});
/// Soft models: the ball at p bits contains MPFR at 2p + 64 bits; double is within 1e-9.
runner::property soft_kinds_agree(ball_soft_fn ball = {});
/// Soft models: the certified double interval meets the 512-bit ball (disjoint enclosures
/// prove one wrong), or says undefined exactly where a ball does; an interval too wide to
/// decide is undecided.
runner::property soft_interval_encloses(interval_soft_fn ivl = {});
/// Every hard attention choice is the smallest position attaining the exact maximal score,
/// against a brute-force reference.
runner::property leftmost_tie_rule(exact_forward_fn filtered = {});
/// The readout uses position n: y_n^(L) computed alone equals the last row of the full trace
/// (hard exact and soft ball), and so does the readout.
runner::property trace_last_row(exact_forward_fn filtered = {});
/// Writing a model file and reading it back gives the same file and identical outputs.
runner::property model_file_round_trip(writer_fn writer = {});

void register_semantics(runner::registry& r);

} // namespace attnprop::props
