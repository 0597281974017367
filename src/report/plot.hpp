#pragma once
/// @file plot.hpp
/// Figures for reports: stacked panels sharing an x axis, each with its own linear or log y
/// axis, line series (solid or dashed, with markers), horizontal reference lines, marked x
/// positions (lengths at which the model is undefined), a legend and a caption, written as SVG.
///
/// Layout is computed, not guessed: every text's width is measured with `text_width` (a
/// conservative per-character metric for DejaVu Sans, the default sans-serif font of the
/// renderers on Debian), margins grow to hold the widest tick label, long captions wrap, and
/// tick labels that would overlap are thinned. Ticks sit at round values (1, 2, 5 x 10^k on
/// linear axes, powers of ten on log axes, with 2 and 5 in between when a log axis spans less
/// than three decades). Non-finite values are never drawn: a line breaks there. Colours are the
/// Okabe-Ito palette (distinguishable with the common colour-vision deficiencies).

#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// The Okabe-Ito palette, in the order series take them.
extern const char* const palette[7];

struct plot_series {
    std::string name;          ///< legend entry
    std::vector<double> x, y;  ///< same length; non-finite y (or x) points are not drawn
    std::string colour;        ///< empty: the next palette colour
    bool dashed = false;
    bool markers = true;
};

struct plot_reference {
    double y = 0;              ///< a horizontal line at this value
    std::string name;          ///< legend entry
    std::string colour = "#555555";
};

struct plot_panel_spec {
    std::string y_label;
    bool log_y = false;
    std::vector<plot_series> series;
    std::vector<plot_reference> references;
    /// The y range; when unset, the range of the finite values (and references), padded.
    std::optional<double> y_min, y_max;
    /// Lines printed under the panel (for instance "K(n)/n >= 1e233: above the panel").
    std::vector<std::string> notes;
};

struct plot_figure {
    std::string title;
    std::string x_label = "n";
    bool log_x = true;
    std::vector<plot_panel_spec> panels;
    /// x positions marked on every panel's axis with a cross and `marked_label`.
    std::vector<double> marked_x;
    std::string marked_label = "undefined";
    /// Lines under the figure (wrapped to its width).
    std::vector<std::string> caption;
    double width = 720;
};

/// The figure as a standalone SVG document.
std::string render_svg(const plot_figure& f);

/// Width in pixels of `text` at `font_size` (conservative: at least the width DejaVu Sans
/// gives). Used for layout and by the tests that check no text overlaps or leaves the canvas.
double text_width(const std::string& text, double font_size);

/// Round tick positions for [lo, hi]: 1, 2, 5 x 10^k steps (linear) or powers of ten, with 2
/// and 5 between them when the range spans less than three decades (log). Exposed for tests.
std::vector<double> nice_ticks(double lo, double hi, bool log_axis);

/// The label of a tick: the shortest exact decimal of the tick, "1e-05"-style only for
/// magnitudes outside [1e-4, 1e6).
std::string tick_label(double v);

} // namespace attnprop::report
