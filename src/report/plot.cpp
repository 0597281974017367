// Figures (plot.hpp).
#include "report/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace attnprop::report {

const char* const palette[7] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000"};

namespace {

constexpr double title_size = 15, label_size = 12, tick_size = 11, small_size = 11;

std::string esc(const std::string& t) {
    std::string o;
    for (char c : t) {
        if (c == '&') o += "&amp;";
        else if (c == '<') o += "&lt;";
        else if (c == '>') o += "&gt;";
        else if (c == '"') o += "&quot;";
        else o += c;
    }
    return o;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

/// Splits `text` into lines no wider than `width` at `size` (words never split).
std::vector<std::string> wrap(const std::string& text, double size, double width) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string word, line;
    while (in >> word) {
        const std::string trial = line.empty() ? word : line + " " + word;
        if (!line.empty() && text_width(trial, size) > width) {
            lines.push_back(line);
            line = word;
        } else {
            line = trial;
        }
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

struct axis {
    bool log = false;
    double lo = 0, hi = 1; ///< in data units (log axes: positive)
    std::vector<double> ticks;
    double to_unit(double v) const { // 0..1
        if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
        return (v - lo) / (hi - lo);
    }
    bool contains(double v) const {
        if (!std::isfinite(v) || (log && v <= 0)) return false;
        const double u = to_unit(v);
        return u >= -1e-9 && u <= 1 + 1e-9;
    }
};

axis make_axis(std::vector<double> values, bool log, std::optional<double> fixed_lo,
               std::optional<double> fixed_hi) {
    axis a;
    a.log = log;
    std::vector<double> v;
    for (double x : values)
        if (std::isfinite(x) && (!log || x > 0)) v.push_back(x);
    double lo = v.empty() ? (log ? 1 : 0) : *std::min_element(v.begin(), v.end());
    double hi = v.empty() ? (log ? 10 : 1) : *std::max_element(v.begin(), v.end());
    if (fixed_lo && (!log || *fixed_lo > 0)) lo = *fixed_lo;
    if (fixed_hi && (!log || *fixed_hi > 0)) hi = *fixed_hi;
    if (log) {
        if (hi <= lo) {
            lo /= 2;
            hi *= 2;
        }
        // Widen to the enclosing 1-2-5 values so the ends carry ticks.
        const double step_lo = std::pow(10.0, std::floor(std::log10(lo)));
        const double step_hi = std::pow(10.0, std::floor(std::log10(hi)));
        if (!fixed_lo) {
            for (double m : {5.0, 2.0, 1.0})
                if (m * step_lo <= lo * (1 + 1e-12)) {
                    lo = m * step_lo;
                    break;
                }
        }
        if (!fixed_hi) {
            for (double m : {1.0, 2.0, 5.0, 10.0})
                if (m * step_hi >= hi * (1 - 1e-12)) {
                    hi = m * step_hi;
                    break;
                }
        }
    } else {
        if (hi <= lo) {
            const double pad = lo == 0 ? 1 : std::fabs(lo) / 2;
            lo -= pad;
            hi += pad;
        }
        const auto t = nice_ticks(lo, hi, false);
        const double step = t.size() >= 2 ? t[1] - t[0] : (hi - lo);
        if (!fixed_lo) lo = std::floor(lo / step + 1e-9) * step;
        if (!fixed_hi) hi = std::ceil(hi / step - 1e-9) * step;
        if (hi <= lo) hi = lo + step;
    }
    a.lo = lo;
    a.hi = hi;
    a.ticks = nice_ticks(lo, hi, log);
    return a;
}

struct box {
    double x0, y0, x1, y1;
};

bool overlaps(const box& a, const box& b) {
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

box text_box(double x, double y, const std::string& t, double size, const char* anchor) {
    const double w = text_width(t, size);
    double x0 = x;
    if (std::string(anchor) == "middle") x0 = x - w / 2;
    else if (std::string(anchor) == "end") x0 = x - w;
    return {x0, y - 0.8 * size, x0 + w, y + 0.25 * size};
}

class svg_writer {
public:
    void text(double x, double y, const std::string& t, double size, const char* anchor = "start",
              const char* colour = "#000000") {
        os_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << size
            << "\" text-anchor=\"" << anchor << "\"";
        if (std::string(colour) != "#000000") os_ << " fill=\"" << colour << "\"";
        os_ << ">" << esc(t) << "</text>\n";
    }
    std::ostringstream& raw() { return os_; }
    std::string str() const { return os_.str(); }

private:
    std::ostringstream os_;
};

} // namespace

double text_width(const std::string& text, double font_size) {
    // DejaVu Sans advance widths (em), rounded up: digits 0.64, most letters <= 0.7, a few
    // wide ones (m, w, M, W) 0.98, narrow punctuation 0.35. UTF-8 continuation bytes count 0.
    double em = 0;
    for (unsigned char c : text) {
        if ((c & 0xC0) == 0x80) continue;
        if (c == ' ') em += 0.33;
        else if (c == '.' || c == ',' || c == ':' || c == ';' || c == '\'' || c == '|' ||
                 c == 'i' || c == 'l' || c == 'j' || c == '!' || c == 'I')
            em += 0.35;
        else if (c == '(' || c == ')' || c == '[' || c == ']' || c == 'f' || c == 't' ||
                 c == 'r' || c == '/' || c == '-')
            em += 0.45;
        else if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '%')
            em += 0.98;
        else if (c >= 0x80)
            em += 0.75; // a multibyte character (Greek, maths): wide
        else
            em += 0.7;
    }
    return em * font_size;
}

std::vector<double> nice_ticks(double lo, double hi, bool log_axis) {
    std::vector<double> out;
    if (!(std::isfinite(lo) && std::isfinite(hi)) || hi <= lo) return out;
    if (log_axis) {
        if (lo <= 0) return out;
        const int k0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
        const int k1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
        const bool dense = k1 - k0 < 3;
        const int stride = std::max(1, (k1 - k0 + 7) / 8); // at most about 8 decades labelled
        for (int k = k0; k <= k1; ++k) {
            const double p = std::pow(10.0, k);
            for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
                if (m == 1 && (k - k0) % stride != 0) continue;
                const double v = m * p;
                if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
            }
        }
        return out;
    }
    const double raw = (hi - lo) / 5;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * p;
    for (double m : {1.0, 2.0, 5.0})
        if (m * p >= raw * (1 - 1e-12)) {
            step = m * p;
            break;
        }
    const double first = std::ceil(lo / step - 1e-9) * step;
    for (double v = first; v <= hi + step * 1e-9; v += step)
        out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    return out;
}

std::string tick_label(double v) {
    if (v == 0) return "0";
    const double a = std::fabs(v);
    char buf[32];
    if (a < 1e-4 || a >= 1e6) {
        std::snprintf(buf, sizeof buf, "%.0e", v);
        // "1e-05" -> "1e-5"
        std::string s = buf;
        const auto e = s.find('e');
        if (e != std::string::npos) {
            std::string mant = s.substr(0, e), ex = s.substr(e + 1);
            const bool neg = !ex.empty() && ex[0] == '-';
            if (!ex.empty() && (ex[0] == '-' || ex[0] == '+')) ex = ex.substr(1);
            while (ex.size() > 1 && ex[0] == '0') ex = ex.substr(1);
            s = mant + "e" + (neg ? "-" : "") + ex;
        }
        return s;
    }
    for (int digits = 0; digits <= 10; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*f", digits, v);
        if (std::fabs(std::strtod(buf, nullptr) - v) <= 1e-9 * a) return buf;
    }
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

std::string render_svg(const plot_figure& f) {
    const double W = f.width;
    const double panel_h = 220, outer = 14;
    svg_writer out;
    std::vector<box> used;

    // The x axis is shared.
    std::vector<double> xs;
    for (const auto& p : f.panels)
        for (const auto& s : p.series)
            for (std::size_t t = 0; t < s.x.size() && t < s.y.size(); ++t)
                if (std::isfinite(s.y[t])) xs.push_back(s.x[t]);
    for (double m : f.marked_x) xs.push_back(m);
    const axis ax = make_axis(xs, f.log_x, std::nullopt, std::nullopt);

    // y axes, and the left margin that holds the widest tick label.
    std::vector<axis> ays;
    double label_w = 0;
    for (const auto& p : f.panels) {
        std::vector<double> ys;
        for (const auto& s : p.series)
            for (std::size_t t = 0; t < s.x.size() && t < s.y.size(); ++t)
                if (ax.contains(s.x[t])) ys.push_back(s.y[t]);
        for (const auto& r : p.references) ys.push_back(r.y);
        ays.push_back(make_axis(ys, p.log_y, p.y_min, p.y_max));
        for (double t : ays.back().ticks) label_w = std::max(label_w, text_width(tick_label(t), tick_size));
    }
    const double left = outer + label_w + 8;
    // The right margin holds half of the last x tick label.
    double right = outer;
    if (!ax.ticks.empty()) right = std::max(right, text_width(tick_label(ax.ticks.back()), tick_size) / 2 + 4);
    const double plot_w = W - left - right;
    auto X = [&](double v) { return left + ax.to_unit(v) * plot_w; };

    std::ostringstream body;
    double y = outer;
    // Title (wrapped).
    for (const auto& line : wrap(f.title, title_size, W - 2 * outer)) {
        y += title_size * 1.2;
        out.text(W / 2, y, line, title_size, "middle");
        used.push_back(text_box(W / 2, y, line, title_size, "middle"));
    }
    y += 10;

    std::size_t colour_next = 0;
    for (std::size_t pi = 0; pi < f.panels.size(); ++pi) {
        const auto& p = f.panels[pi];
        const axis& ay = ays[pi];
        // The y label sits above the panel's top-left corner.
        y += label_size * 1.2;
        const std::string ylab = p.y_label + (p.log_y ? " (log scale)" : "");
        out.text(left, y, ylab, label_size, "start");
        used.push_back(text_box(left, y, ylab, label_size, "start"));
        y += 6;
        const double top = y, bottom = y + panel_h;
        auto Y = [&](double v) { return bottom - ay.to_unit(v) * panel_h; };
        out.raw() << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(plot_w)
                  << "\" height=\"" << num(panel_h) << "\" fill=\"none\" stroke=\"#888888\"/>\n";
        // y ticks and grid.
        for (double t : ay.ticks) {
            const double ty = Y(t);
            out.raw() << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + plot_w) << "\" y1=\""
                      << num(ty) << "\" y2=\"" << num(ty) << "\" stroke=\"#e6e6e6\"/>\n";
            const std::string lab = tick_label(t);
            const box b = text_box(left - 5, ty + 4, lab, tick_size, "end");
            bool clash = false;
            for (const auto& u : used) clash = clash || overlaps(u, b);
            if (clash) continue;
            out.text(left - 5, ty + 4, lab, tick_size, "end");
            used.push_back(b);
        }
        // x ticks: labels thinned so that none overlaps its neighbour.
        double last_x1 = -1e9;
        for (double t : ax.ticks) {
            const double tx = X(t);
            out.raw() << "<line x1=\"" << num(tx) << "\" x2=\"" << num(tx) << "\" y1=\"" << num(bottom)
                      << "\" y2=\"" << num(bottom + 4) << "\" stroke=\"#888888\"/>\n";
            const std::string lab = tick_label(t);
            const box b = text_box(tx, bottom + 16, lab, tick_size, "middle");
            if (b.x0 < last_x1 + 6 || b.x1 > W - 1 || b.x0 < 1) continue;
            out.text(tx, bottom + 16, lab, tick_size, "middle");
            used.push_back(b);
            last_x1 = b.x1;
        }
        // Clip the data to the panel.
        out.raw() << "<clipPath id=\"panel" << pi << "\"><rect x=\"" << num(left) << "\" y=\""
                  << num(top) << "\" width=\"" << num(plot_w) << "\" height=\"" << num(panel_h)
                  << "\"/></clipPath>\n<g clip-path=\"url(#panel" << pi << ")\">\n";
        std::vector<std::pair<std::string, std::string>> legend; // colour, name (+dash flag)
        std::vector<bool> legend_dashed;
        for (const auto& r : p.references) {
            if (!ay.contains(r.y)) continue;
            out.raw() << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + plot_w) << "\" y1=\""
                      << num(Y(r.y)) << "\" y2=\"" << num(Y(r.y)) << "\" stroke=\"" << r.colour
                      << "\" stroke-width=\"1.5\" stroke-dasharray=\"2,3\"/>\n";
            if (!r.name.empty()) {
                legend.emplace_back(r.colour, r.name);
                legend_dashed.push_back(true);
            }
        }
        for (const auto& s : p.series) {
            const std::string colour = s.colour.empty() ? palette[colour_next++ % 7] : s.colour;
            auto drawable = [&](std::size_t t) {
                return t < s.y.size() && ax.contains(s.x[t]) && std::isfinite(s.y[t]) &&
                       (!ay.log || s.y[t] > 0);
            };
            bool any = false;
            for (std::size_t t = 0; t < s.x.size();) {
                if (!drawable(t)) {
                    ++t;
                    continue;
                }
                any = true;
                out.raw() << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\"";
                if (s.dashed) out.raw() << " stroke-dasharray=\"6,4\"";
                out.raw() << " points=\"";
                for (; t < s.x.size() && drawable(t); ++t) out.raw() << num(X(s.x[t])) << "," << num(Y(s.y[t])) << " ";
                out.raw() << "\"/>\n";
            }
            if (s.markers)
                for (std::size_t t = 0; t < s.x.size(); ++t)
                    if (drawable(t))
                        out.raw() << "<circle cx=\"" << num(X(s.x[t])) << "\" cy=\"" << num(Y(s.y[t]))
                                  << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
            if (any && !s.name.empty()) {
                legend.emplace_back(colour, s.name);
                legend_dashed.push_back(s.dashed);
            }
        }
        out.raw() << "</g>\n";
        // Marked lengths: a cross on the axis; the label once per cluster.
        double last_mark_x1 = -1e9;
        for (double m : f.marked_x) {
            if (!ax.contains(m)) continue;
            const double mx = X(m);
            out.raw() << "<path d=\"M" << num(mx - 4) << "," << num(bottom - 4) << " L" << num(mx + 4)
                      << "," << num(bottom + 4) << " M" << num(mx - 4) << "," << num(bottom + 4) << " L"
                      << num(mx + 4) << "," << num(bottom - 4) << "\" stroke=\"#B00000\" stroke-width=\"2\"/>\n";
            const box b = text_box(mx, bottom - 8, f.marked_label, 10, "middle");
            bool clash = b.x0 < last_mark_x1 + 4 || b.x0 < left || b.x1 > left + plot_w;
            for (const auto& u : used) clash = clash || overlaps(u, b);
            if (clash) continue;
            out.text(mx, bottom - 8, f.marked_label, 10, "middle", "#B00000");
            used.push_back(b);
            last_mark_x1 = b.x1;
        }
        y = bottom + 16 + 8;
        // Legend: entries left to right, wrapping.
        if (!legend.empty()) {
            double lx = left;
            y += small_size * 1.2;
            for (std::size_t e = 0; e < legend.size(); ++e) {
                const double w = 24 + 4 + text_width(legend[e].second, small_size) + 16;
                if (lx + w > W - outer && lx > left) {
                    lx = left;
                    y += small_size * 1.4;
                }
                out.raw() << "<line x1=\"" << num(lx) << "\" x2=\"" << num(lx + 24) << "\" y1=\""
                          << num(y - 4) << "\" y2=\"" << num(y - 4) << "\" stroke=\"" << legend[e].first
                          << "\" stroke-width=\"2\"" << (legend_dashed[e] ? " stroke-dasharray=\"6,4\"" : "")
                          << "/>\n";
                out.text(lx + 28, y, legend[e].second, small_size, "start");
                used.push_back(text_box(lx + 28, y, legend[e].second, small_size, "start"));
                lx += w;
            }
        }
        for (const auto& note : p.notes)
            for (const auto& line : wrap(note, small_size, W - left - outer)) {
                y += small_size * 1.3;
                out.text(left, y, line, small_size, "start", "#444444");
                used.push_back(text_box(left, y, line, small_size, "start"));
            }
        y += 14;
    }
    // The x label and the caption.
    y += label_size * 1.1;
    const std::string xlab = f.x_label + (f.log_x ? " (log scale)" : "");
    out.text(left + plot_w / 2, y, xlab, label_size, "middle");
    y += 6;
    for (const auto& c : f.caption)
        for (const auto& line : wrap(c, small_size, W - 2 * outer)) {
            y += small_size * 1.3;
            out.text(outer, y, line, small_size, "start", "#222222");
        }
    y += outer;
    std::ostringstream doc;
    doc << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(W) << "\" height=\"" << num(y)
        << "\" viewBox=\"0 0 " << num(W) << " " << num(y) << "\" font-family=\"DejaVu Sans, sans-serif\">\n";
    doc << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    doc << out.str() << "</svg>\n";
    return doc.str();
}

} // namespace attnprop::report
