#pragma once
/// @file overlay.hpp
/// Figures for papers (`attnprop plot`): several report folders of one command drawn on shared
/// axes, one colour per folder with a legend, written as SVG, PDF and PNG. One meaning per panel
/// whatever the models. Influence folders: (a) the largest one-symbol change Δ(n) with a 1/n
/// reference set above the data, (b) n·Δ(n), (c) 1 − CE in bits (when a folder has a
/// cross-entropy), all against n on log axes. Simulate folders: the smallest β certifying the
/// readout on every input (solid) and on the sampled inputs (dashed) against n. Restrict
/// folders: (a) |Free|/n, (b) c_obs against n. Title, verdicts and captions go into report.md,
/// into the image only when asked.

#include "model/json.hpp"
#include "report/plot.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// One influence sweep as the figure needs it, read from a report folder's report.json.
struct overlay_input {
    std::filesystem::path dir;
    std::string model;                  ///< the model's name
    std::string label;                  ///< legend entry: the model, or the folder when two share a model
    std::string verdict, explanation;
    std::optional<double> slope;
    struct row {
        long n = 0;
        double max_influence = 0;       ///< approximate (NaN: none)
        double n_max_influence = 0;
        bool undefined = false;
        std::optional<double> mean_ce_bits;  ///< approximate
        std::optional<double> floor_bits;    ///< the certified floor, else the sampled one
    };
    std::vector<row> rows;
};

/// The command whose report DIR/report.json holds: "influence", "simulate" or "restrict".
/// Throws model::content_error (located) for a folder without one, or a report of another
/// command.
std::string overlay_kind(const std::filesystem::path& dir);

/// Reads DIR/report.json of an influence run. Throws model::content_error (located: the file
/// and the JSON pointer) for a folder without one, a report of another command or a malformed
/// row.
overlay_input read_overlay_input(const std::filesystem::path& dir);

struct overlay_options {
    /// The figures' file names: STEM.svg, STEM.pdf, STEM.png; empty: by the folders' command
    /// (influence, beta for simulate, restrict).
    std::string stem;
    /// Drawn at the top of the image (empty: none; the title is in report.md either way).
    std::string title;
    bool caption = false;               ///< the verdicts and notes under the image too
    double width = 640;
};

/// The figure of the inputs (at least one), as `attnprop plot` draws it; `notes` receives the
/// lines of its caption (written into report.md, and under the image with options.caption).
plot_figure overlay_figure(const std::vector<overlay_input>& in, const overlay_options& o,
                           std::vector<std::string>& notes);

/// What write_overlay wrote.
struct overlay_result {
    std::vector<std::string> files;     ///< names in the out folder
    std::vector<std::string> notes;     ///< why a PNG or PDF is missing
};

/// Writes OUT/STEM.svg, STEM.pdf and STEM.png (the PDF and PNG when the renderer runs), and
/// OUT/report.md and OUT/report.json (format attnprop-plot-report: the inputs, their verdicts,
/// the files) for report folders of one command (influence, simulate or restrict; folders of
/// two commands are refused, located in the second kind's report.json). Refuses (model::content_error naming OUT/report.json) to write into a folder
/// that holds the report of another command, such as one of the inputs.
overlay_result write_overlay(const std::vector<std::filesystem::path>& dirs,
                             const std::filesystem::path& out, const overlay_options& o);

} // namespace attnprop::report
