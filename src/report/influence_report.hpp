#pragma once
/// @file influence_report.hpp
/// Output of `attnprop influence`: text and JSON of a sweep, the report directory
/// (report.json, report.md, influence.csv, influence.svg, rows.json for resuming) and the
/// counterexample folder of a failed comparison, replayed by `attnprop replay` through
/// soft-influence/influence-below-bounds, prob-change-below-bound or
/// cross-entropy-above-chance (schemas in docs/reports.md).

#include "soft_influence/sweep.hpp"
#include "model/json.hpp"
#include "report/plot.hpp"
#include "report/provenance.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// The property that replays an influence counterexample.
inline constexpr const char* influence_property = "soft-influence/influence-below-bounds";
/// The property that replays a probability-change counterexample.
inline constexpr const char* prob_change_property = "soft-influence/prob-change-below-bound";
/// The property that replays a cross-entropy counterexample (an enumerated cube below its
/// floor).
inline constexpr const char* cross_entropy_property = "soft-influence/cross-entropy-above-chance";
/// The property a 2DYCK forced-bracket cross-entropy counterexample replays through.
inline constexpr const char* forced_bracket_property = "soft-influence/forced-bracket-cross-entropy";

/// What identifies a sweep besides its rows: a run may reuse rows of an earlier run only
/// when the fingerprints are equal.
struct influence_meta {
    std::string model_file;      ///< as given
    std::string fingerprint;     ///< hash of the model file's content and every option
    analysis::sweep_options options;
    /// Who made the sweep: written to report.json, report.md, rows.json and case.json unless
    /// empty; never part of the fingerprint.
    provenance made_by;
    /// The figures' titles and captions drawn in the images too (--figure-text); by default
    /// they are in report.md only (take_figure_text).
    bool figure_text = false;
};

/// Fingerprint: FNV-1a 64 of the model file's bytes and the options that change rows
/// (inputs, positions, language, precision, scalar, seed, bound divisor, exhaustive cap,
/// posterior limit),
/// as 16 hex digits. The n list and threads are not part of it.
std::string influence_fingerprint(const std::string& model_bytes, const analysis::sweep_options& o);

/// Significant digits of the approximate doubles (`*_approx`) in report.json.
inline constexpr int report_approx_digits = 6;
/// ... and in rows.json: enough to read back the same double, so that a resumed sweep's slopes
/// and figures are those of an uninterrupted one.
inline constexpr int exact_approx_digits = 17;

/// A row as JSON; its approximate doubles with `approx_digits` significant digits.
json::value row_to_json(const analysis::sweep_row& r, int approx_digits = report_approx_digits);
/// Inverse of row_to_json; throws std::runtime_error on a malformed row.
analysis::sweep_row row_from_json(const json::value& v);

/// The whole sweep as JSON (format attnprop-influence-report, version 1).
json::value influence_to_json(const analysis::sweep_result& r, const influence_meta& meta);

/// Tables per n, slope, verdict and hypotheses, for a terminal.
std::string influence_to_text(const analysis::sweep_result& r, const influence_meta& meta);

/// Writes rows.json (fingerprint, the rows_sha256 integrity hash, the finished rows with
/// full-precision approximate doubles, and the provenance unless empty) atomically: the resume
/// checkpoint.
void write_resume_rows(const std::filesystem::path& dir, const std::string& fingerprint,
                       const std::vector<analysis::sweep_row>& rows,
                       const provenance& made_by = {});

/// Rows of DIR/rows.json when its fingerprint equals `fingerprint` and its rows_sha256 matches
/// its rows; otherwise none (every row is recomputed), with `note` saying why (no file, another
/// fingerprint, no or another hash: edited, unreadable).
std::vector<analysis::sweep_row> read_resume_rows(const std::filesystem::path& dir,
                                                  const std::string& fingerprint,
                                                  std::string* note);

/// The influence figure: log-log max Δ(n) with the largest a-posteriori pair bound, K(n)/n
/// (when within six decades of the data, else a note) and a dashed 1/n reference through the
/// first point; a second panel with n·Δ(n); the slope and the verdict in the caption;
/// undefined rows marked on the axis.
plot_figure influence_figure(const analysis::sweep_result& r);
/// The cross-entropy figure (rows with a cross-entropy only): 1 - CE and 1 - floor (bits) on a
/// log axis against n; nullopt when no row has one.
std::optional<plot_figure> cross_entropy_figure(const analysis::sweep_result& r);

/// Writes report.json, report.md, influence.csv, influence.svg, cross_entropy.svg (rows with a
/// cross-entropy) and rows.json into dir.
void write_influence_report(const std::filesystem::path& dir, const analysis::sweep_result& r,
                            const influence_meta& meta);

/// Writes DIR/{model.json, case.json} for the row's witness (a pair above a bound).
std::filesystem::path write_influence_counterexample(const std::filesystem::path& dir,
                                                     const model::model<numeric::rational>& m,
                                                     const analysis::sweep_row& row,
                                                     const influence_meta& meta);

/// Writes DIR/{model.json, case.json} for a row whose enumerated cross-entropy is below its
/// floor: the case is (model, n, language, eta_divisor = the sweep's bound divisor), replayed
/// through soft-influence/cross-entropy-above-chance. Precondition: row.cross_entropy is set.
std::filesystem::path write_cross_entropy_counterexample(const std::filesystem::path& dir,
                                                         const model::model<numeric::rational>& m,
                                                         const analysis::sweep_row& row,
                                                         const influence_meta& meta);

} // namespace attnprop::report
