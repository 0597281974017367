#pragma once
/// @file units.hpp
/// The results of the distributed commands' units as bytes (wire.hpp): an influence row, a
/// property's report, a restriction run. Each decodes to a value equal, field for field, to
/// the one encoded (doubles to the bit, rationals exactly), so that rank 0 writes the same
/// reports from a worker's result as from its own.

#include "soft_influence/sweep_units.hpp"
#include "report/restrict_report.hpp"
#include "runner/runner.hpp"

#include <string>
#include <string_view>

namespace attnprop::dist {

/// One length of `attnprop influence`.
std::string encode_sweep_row(const analysis::sweep_row& row);
analysis::sweep_row decode_sweep_row(std::string_view bytes);

/// One unit of a row of `attnprop influence` (analysis::measure_unit): its pairs' exact texts,
/// readouts, cross-entropy or undefined value.
std::string encode_unit_result(const analysis::unit_result& u);
analysis::unit_result decode_unit_result(std::string_view bytes);

/// One property of `attnprop check`, its counterexample's models included (in their canonical
/// file form, model::write_model).
std::string encode_property_report(const runner::property_report& r);
runner::property_report decode_property_report(std::string_view bytes);

/// A batch of a property's attempts for `attnprop check` (runner::run_case_batch), a
/// refusal included (decoded to an error of the same kind and message).
std::string encode_case_batch(const runner::case_batch& b);
runner::case_batch decode_case_batch(std::string_view bytes);

/// One length of `attnprop restrict`: the restriction, its certificate and the language
/// result, with the seconds it took (reported on standard error only).
std::string encode_restrict_run(const report::restrict_run& r, double seconds);
report::restrict_run decode_restrict_run(std::string_view bytes, double* seconds);

/// The parts of one length of `attnprop restrict` over MPI ranks, each with the seconds it
/// took: the restriction, the exact outputs of a block of the certificate's inputs
/// (analysis::certificate_outputs) and the language result.
std::string encode_restriction(const analysis::restriction& r, double seconds);
analysis::restriction decode_restriction(std::string_view bytes, double* seconds);
std::string encode_outputs(const std::vector<model::vec<numeric::rational>>& ys, double seconds);
std::vector<model::vec<numeric::rational>> decode_outputs(std::string_view bytes, double* seconds);
std::string encode_language_result(const analysis::language_result& l, double seconds);
analysis::language_result decode_language_result(std::string_view bytes, double* seconds);

} // namespace attnprop::dist
