#pragma once
/// @file plot.hpp
/// Figures for reports: stacked panels sharing an x axis, each with its own linear or log y
/// axis, line series (solid, dashed or a wide translucent band, with or without markers),
/// horizontal reference lines, marked x positions (lengths at which the model is undefined, or
/// has no value), a legend and a caption, written as SVG.
///
/// Layout is computed, not guessed: every text's width is measured with `text_width` (the
/// advance widths of DejaVu Sans, the default sans-serif font of the renderers on Debian, with
/// a margin), margins grow to hold the widest tick label, long titles and captions wrap, and
/// tick labels that would overlap another text are left out. Ticks sit at round values (1, 2,
/// 5 x 10^k on linear axes; powers of ten on log axes, labelled 10^k with a superscript when
/// the axis leaves [0.01, 1000], with 2 and 5 in between when it spans less than three decades,
/// and unlabelled minor ticks; powers of two when every x is one). Data never touch the frame:
/// the axes keep a margin around the values. Non-finite values are never drawn: a line breaks
/// there. Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
/// deficiencies).

#include "report/provenance.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// The Okabe-Ito palette, in the order series take them.
extern const char* const palette[7];

/// How a series is drawn.
enum class plot_style {
    solid,  ///< a 2 px line
    dashed, ///< a 2 px dashed line
    band    ///< a 7 px translucent line: stays visible under a solid line drawn on top of it
};

struct plot_series {
    std::string name;          ///< legend entry
    std::vector<double> x, y;  ///< same length; non-finite y (or x) points are not drawn
    std::string colour = {};   ///< empty: the next palette colour
    plot_style style = plot_style::solid;
    bool markers = true;
};

struct plot_reference {
    double y = 0;              ///< a horizontal line at this value
    std::string name;          ///< legend entry
    std::string colour = "#555555";
};

struct plot_panel_spec {
    std::string y_label;       ///< with its unit
    bool log_y = false;
    std::vector<plot_series> series;
    std::vector<plot_reference> references;
    /// The y range; when unset, the range of the finite values (and references).
    std::optional<double> y_min, y_max;
    /// Lines printed under the panel (for instance "K(n)/n >= 1e233: above the panel").
    std::vector<std::string> notes;
    double height = 220;       ///< of the plotting area, in pixels
};

struct plot_figure {
    std::string title;
    std::string x_label = "n";  ///< with its unit
    bool log_x = true;
    /// Whether " (log scale)" is appended to the labels of log axes; off by default: the ticks
    /// (powers of ten, or of two) say it, and a label in a paper names the quantity and its unit.
    bool say_log_scale = false;
    std::vector<plot_panel_spec> panels;
    /// x positions marked on every panel's axis with a red cross and `marked_label`.
    std::vector<double> marked_x;
    std::string marked_label = "undefined";
    /// x positions marked with a grey circle and `missing_label` (a row without this value).
    std::vector<double> missing_x;
    std::string missing_label = "no value";
    /// Lines under the figure (wrapped to its width).
    std::vector<std::string> caption;
    /// Written as an XML comment at the top ("made by attnprop 0.1.0 (commit ...)"); empty:
    /// none. The golden tests drop this line before comparing.
    std::string generator;
    double width = 720;
};

/// "attnprop VERSION (commit C)" for plot_figure::generator; empty for an empty provenance.
std::string figure_generator(const provenance& made_by);

/// The figure as a standalone SVG document.
std::string render_svg(const plot_figure& f);

/// What became of a PNG.
struct png_result {
    bool written = false;
    /// Why not, for report.md: "rsvg-convert not found (Debian package librsvg2-bin)", "PNG
    /// rendering disabled (ATTNPROP_SVG_RENDERER is empty)", "rsvg-convert exited with 1".
    std::string note;
};

/// The renderer's program: ATTNPROP_SVG_RENDERER when set (empty: none), else "rsvg-convert".
std::string svg_renderer();

/// Renders the SVG file `svg` to `png` at twice its size (1440 px wide for the default
/// width) with svg_renderer(), run without a shell (posix_spawnp, searched in PATH) as
/// `rsvg-convert --zoom 2 --output PNG.tmpPID SVG`, then renamed over `png`. A missing
/// renderer is not an error: the result says so (and nothing is written).
png_result render_png(const std::string& svg, const std::string& png);

/// Renders the SVG file `svg` to the PDF `pdf` with svg_renderer(), as render_png does
/// (`rsvg-convert --format pdf --output PDF.tmp SVG`, then renamed over `pdf`): vector output
/// with the text as text, in DejaVu Sans.
png_result render_pdf(const std::string& svg, const std::string& pdf);

/// Writes DIR/STEM.svg (atomically) and, when the renderer runs, DIR/STEM.png beside it; a PNG
/// of an earlier run is removed when none is rendered now, so the two never disagree. Returns
/// the names of the files written; a PNG not written adds its note to `notes` (once).
std::vector<std::string> write_figure(const std::filesystem::path& dir, const std::string& stem,
                                      const plot_figure& f, std::vector<std::string>& notes);

/// A report's figure carries neither title nor caption by default (a figure for a paper takes
/// the paper's own): they go into report.md. Clears f's title and caption unless `in_image`
/// (the commands' --figure-text) and returns them as report.md's Markdown for the figure STEM:
/// "Figure `STEM`: TITLE." and the caption lines as a list, ending in a blank line.
std::string take_figure_text(plot_figure& f, const std::string& stem, bool in_image);

/// Width in pixels of `text` (UTF-8) at `font_size`: the sum of the DejaVu Sans advance widths
/// with a 3% margin (at least what the renderer draws). Used for layout and by the tests that
/// check no text overlaps or leaves the canvas.
double text_width(const std::string& text, double font_size);

/// Round tick positions for [lo, hi]: 1, 2, 5 x 10^k steps (linear) or powers of ten, with 2
/// and 5 between them when the range spans less than three decades (log). Exposed for tests.
std::vector<double> nice_ticks(double lo, double hi, bool log_axis);

/// The label of a linear tick: the shortest exact decimal of the tick, "1e-5"-style only for
/// magnitudes outside [1e-4, 1e6); a minus sign is U+2212.
std::string tick_label(double v);

/// A log axis' tick label: `main` and a superscript exponent `sup` (empty: none), "10" and
/// "−5" for 10^-5, "2×10" and "4" for 2 x 10^4; with `powers` false (an axis within [0.01,
/// 1000]) the plain decimal.
struct tick_text {
    std::string main, sup;
};
tick_text log_tick_label(double v, bool powers);

} // namespace attnprop::report
