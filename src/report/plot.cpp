// Figures (plot.hpp).
#include "report/plot.hpp"

#include "report/files.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <utility>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace attnprop::report {

const char* const palette[7] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000"};

namespace {

constexpr double title_size = 15, label_size = 12, tick_size = 11, small_size = 11;
constexpr double sup_scale = 0.75; ///< superscripts' font size relative to their text
constexpr double sup_raise = 0.4;  ///< and their baseline shift, in units of the text's size

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

std::string minus_sign(std::string s) {
    // A typographic minus (U+2212) instead of the hyphen in numbers.
    std::string o;
    for (char c : s) o += c == '-' ? std::string("\xE2\x88\x92") : std::string(1, c);
    return o;
}

/// The UTF-8 characters of `text`.
std::vector<std::string> characters(const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        const std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        out.push_back(text.substr(i, len));
        i += len;
    }
    return out;
}

/// Splits `text` into lines no wider than `width` at `size`, between words; a word wider than a
/// line by itself is cut between characters.
std::vector<std::string> wrap(const std::string& text, double size, double width) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string word, line;
    while (in >> word) {
        const std::string trial = line.empty() ? word : line + " " + word;
        if (text_width(trial, size) <= width) {
            line = trial;
            continue;
        }
        if (!line.empty()) lines.push_back(line);
        line.clear();
        for (const auto& ch : characters(word)) {
            if (!line.empty() && text_width(line + ch, size) > width) {
                lines.push_back(line);
                line.clear();
            }
            line += ch;
        }
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
}

/// `text` cut to at most `width` at `size`, ending in an ellipsis when cut.
std::string fit(const std::string& text, double size, double width) {
    if (text_width(text, size) <= width) return text;
    std::string out;
    for (const auto& ch : characters(text)) {
        if (text_width(out + ch + "\xE2\x80\xA6", size) > width) break;
        out += ch;
    }
    return out + "\xE2\x80\xA6";
}

bool is_power_of_two(double v) {
    if (!(v >= 1) || v > 9.0e15 || v != std::floor(v)) return false;
    const auto u = static_cast<unsigned long long>(v);
    return (u & (u - 1)) == 0;
}

struct axis {
    bool log = false;
    bool base2 = false;  ///< ticks at powers of two (or at the data), labelled as integers
    bool powers = false; ///< log labels as 10^k
    double lo = 0, hi = 1; ///< in data units (log axes: positive)
    double pad = 0.04;     ///< fraction of the length kept free at each end
    std::vector<double> ticks;
    std::vector<double> minor; ///< unlabelled ticks (log axes)
    double to_unit(double v) const { // pad .. 1 - pad for lo .. hi
        const double u = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                             : (v - lo) / (hi - lo);
        return pad + (1 - 2 * pad) * u;
    }
    bool contains(double v) const {
        if (!std::isfinite(v) || (log && v <= 0)) return false;
        const double u = to_unit(v);
        return u >= -1e-9 && u <= 1 + 1e-9;
    }
    tick_text label(double t) const {
        if (log && !base2) return log_tick_label(t, powers);
        return {tick_label(t), ""};
    }
};

/// Widens a log range to the enclosing 1, 2, 5 x 10^k values (for ranges holding fewer than
/// two ticks).
void widen_log(double& lo, double& hi, bool fixed_lo, bool fixed_hi) {
    const double step_lo = std::pow(10.0, std::floor(std::log10(lo)));
    const double step_hi = std::pow(10.0, std::floor(std::log10(hi)));
    if (!fixed_lo)
        for (double m : {5.0, 2.0, 1.0})
            if (m * step_lo <= lo * (1 + 1e-12)) {
                lo = m * step_lo;
                break;
            }
    if (!fixed_hi)
        for (double m : {1.0, 2.0, 5.0, 10.0})
            if (m * step_hi >= hi * (1 - 1e-12)) {
                hi = m * step_hi;
                break;
            }
}

axis make_axis(const std::vector<double>& values, bool log, std::optional<double> fixed_lo,
               std::optional<double> fixed_hi, bool x_axis) {
    axis a;
    a.log = log;
    std::vector<double> v;
    for (double x : values)
        if (std::isfinite(x) && (!log || x > 0)) v.push_back(x);
    double lo = v.empty() ? (log ? 1 : 0) : *std::min_element(v.begin(), v.end());
    double hi = v.empty() ? (log ? 10 : 1) : *std::max_element(v.begin(), v.end());
    const bool flo = fixed_lo && (!log || *fixed_lo > 0), fhi = fixed_hi && (!log || *fixed_hi > 0);
    if (flo) lo = *fixed_lo;
    if (fhi) hi = *fixed_hi;
    if (log) {
        a.base2 = x_axis && v.size() >= 3 &&
                  std::all_of(v.begin(), v.end(), [](double x) { return is_power_of_two(x); });
        if (hi <= lo * (1 + 1e-12)) {
            if (!flo) lo /= 2;
            if (!fhi) hi *= 2;
        }
        std::vector<double> distinct = v;
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        const bool integers = x_axis && distinct.size() >= 2 && distinct.size() <= 12 &&
                              hi < 100 * lo && std::all_of(v.begin(), v.end(), [](double x) {
                                  return x >= 1 && x == std::floor(x);
                              });
        if (a.base2) {
            for (double t = 1; t <= hi * (1 + 1e-12); t *= 2)
                if (t >= lo * (1 - 1e-12)) a.ticks.push_back(t);
        } else if (integers) {
            // A few lengths within two decades: labelled where they are.
            a.base2 = true; // labels are plain integers, no minor ticks
            a.ticks = distinct;
        } else {
            // Over a decade or more, the axis runs between powers of ten (at least two labels);
            // within less, between 1, 2, 5 x 10^k values.
            if (hi >= 10 * lo) {
                if (!flo) lo = std::pow(10.0, std::floor(std::log10(lo) + 1e-12));
                if (!fhi) hi = std::pow(10.0, std::ceil(std::log10(hi) - 1e-12));
            } else if (nice_ticks(lo, hi, true).size() < 2) {
                widen_log(lo, hi, flo, fhi);
            }
            a.ticks = nice_ticks(lo, hi, true);
            const int k0 = static_cast<int>(std::floor(std::log10(lo)));
            const int k1 = static_cast<int>(std::ceil(std::log10(hi)));
            for (int k = k0; k <= k1; ++k)
                for (int m = 2; m <= 9; ++m) {
                    const double t = m * std::pow(10.0, k);
                    if (t < lo * (1 - 1e-9) || t > hi * (1 + 1e-9)) continue;
                    if (std::find_if(a.ticks.begin(), a.ticks.end(), [t](double u) {
                            return std::fabs(u - t) <= 1e-9 * t;
                        }) == a.ticks.end())
                        a.minor.push_back(t);
                }
            for (double t : a.ticks) a.powers = a.powers || t < 0.01 * (1 - 1e-9) || t > 1000 * (1 + 1e-9);
        }
    } else {
        if (hi <= lo) {
            const double pad = lo == 0 ? 1 : std::fabs(lo) / 2;
            if (!flo) lo -= pad;
            if (!fhi) hi += pad;
            if (hi <= lo) hi = lo + 1;
        }
        const auto t = nice_ticks(lo, hi, false);
        const double step = t.size() >= 2 ? t[1] - t[0] : (hi - lo);
        if (!flo) lo = std::floor(lo / step + 1e-9) * step;
        if (!fhi) hi = std::ceil(hi / step - 1e-9) * step;
        if (hi <= lo) hi = lo + step;
        a.ticks = nice_ticks(lo, hi, false);
    }
    a.lo = lo;
    a.hi = hi;
    return a;
}

struct box {
    double x0, y0, x1, y1;
};

bool overlaps(const box& a, const box& b) {
    return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

double label_width(const tick_text& t, double size) {
    return text_width(t.main, size) + (t.sup.empty() ? 0 : text_width(t.sup, size * sup_scale));
}

/// The box a text occupies: its measured width, from 0.8 of the size above the baseline (0.8
/// + the superscript's rise with one) to 0.25 below it.
box text_box(double x, double y, const tick_text& t, double size, const std::string& anchor) {
    const double w = label_width(t, size);
    double x0 = x;
    if (anchor == "middle") x0 = x - w / 2;
    else if (anchor == "end") x0 = x - w;
    const double top = t.sup.empty() ? 0.8 * size : (sup_raise + 0.8 * sup_scale) * size;
    return {x0, y - std::max(0.8 * size, top), x0 + w, y + 0.25 * size};
}

box text_box(double x, double y, const std::string& t, double size, const std::string& anchor) {
    return text_box(x, y, tick_text{t, ""}, size, anchor);
}

class svg_writer {
public:
    void text(double x, double y, const tick_text& t, double size, const std::string& anchor = "start",
              const std::string& colour = "#000000") {
        os_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << size
            << "\" text-anchor=\"" << anchor << "\"";
        if (colour != "#000000") os_ << " fill=\"" << colour << "\"";
        os_ << ">" << esc(t.main);
        if (!t.sup.empty())
            os_ << "<tspan dy=\"" << num(-sup_raise * size) << "\" font-size=\"" << size * sup_scale
                << "\">" << esc(t.sup) << "</tspan>";
        os_ << "</text>\n";
    }
    void text(double x, double y, const std::string& t, double size, const std::string& anchor = "start",
              const std::string& colour = "#000000") {
        text(x, y, tick_text{t, ""}, size, anchor, colour);
    }
    std::ostringstream& raw() { return os_; }
    std::string str() const { return os_.str(); }

private:
    std::ostringstream os_;
};

const char* dasharray(plot_style s) { return s == plot_style::dashed ? "6,4" : nullptr; }

} // namespace

double text_width(const std::string& text, double font_size) {
    // Advance widths of DejaVu Sans (Book, version 2.37) in 1/10000 em, read from the font's
    // hmtx table: printable ASCII, then the other characters the figures use. A character not
    // listed counts 1 em (as wide as the widest listed). Kerning only narrows DejaVu Sans pairs,
    // and the 3% margin covers the renderer's rounding of advances to its pixel grid.
    static constexpr int ascii[95] = {
        3179, 4009, 4600, 8379, 6362, 9502, 7798, 2749, 3901, 3901, 5000, 8379,
        3179, 3608, 3179, 3369, 6362, 6362, 6362, 6362, 6362, 6362, 6362, 6362,
        6362, 6362, 3369, 3369, 8379, 8379, 8379, 5308, 10000, 6841, 6860, 6982,
        7700, 6318, 5752, 7749, 7520, 2949, 2949, 6558, 5571, 8628, 7480, 7871,
        6030, 7871, 6948, 6348, 6108, 7319, 6841, 9888, 6851, 6108, 6851, 3901,
        3369, 3901, 8379, 5000, 5000, 6128, 6348, 5498, 6348, 6152, 3521, 6348,
        6338, 2778, 2778, 5791, 2778, 9741, 6338, 6118, 6348, 6348, 4111, 5210,
        3921, 6338, 5918, 8179, 5918, 5918, 5249, 6362, 3369, 6362, 8379,
    };
    static constexpr std::pair<char32_t, int> other[] = {
        {0x0394, 6841}, {0x03A3, 6318}, {0x03B7, 6338}, {0x03B5, 5405}, {0x03C3, 6338},
        {0x03C1, 6348}, {0x03BA, 5894}, {0x03C4, 6021}, {0x03B4, 6118}, {0x03B1, 6592},
        {0x03B2, 6382}, {0x03B3, 5918}, {0x03B8, 6118}, {0x03BB, 5918}, {0x03BC, 6362},
        {0x03C0, 6021}, {0x03BD, 5586}, {0x00B7, 3179}, {0x2212, 8379}, {0x2265, 8379},
        {0x2264, 8379}, {0x00B1, 8379}, {0x00D7, 8379}, {0x2248, 8379}, {0x2192, 8379},
        {0x221E, 8330}, {0x2026, 10000}, {0x2014, 10000}, {0x2013, 5000}, {0x2308, 3901},
        {0x2309, 3901}, {0x221A, 6372}, {0x00B2, 4009}, {0x00B3, 4009}, {0x207B, 5278},
        {0x2075, 4009}, {0x2081, 4009}, {0x2082, 4009}, {0x2208, 8711}, {0x2286, 8379},
        {0x2113, 4131}, {0x2016, 5000},
    };
    long units = 0;
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        char32_t cp = c;
        std::size_t len = 1;
        if (c >= 0xF0) len = 4, cp = c & 0x07;
        else if (c >= 0xE0) len = 3, cp = c & 0x0F;
        else if (c >= 0xC0) len = 2, cp = c & 0x1F;
        for (std::size_t k = 1; k < len && i + k < text.size(); ++k)
            cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
        i += len;
        if (cp >= 32 && cp < 127) {
            units += ascii[cp - 32];
            continue;
        }
        int w = 10000;
        for (const auto& [code, width] : other)
            if (code == cp) w = width;
        units += w;
    }
    return static_cast<double>(units) / 10000.0 * font_size * 1.03;
}

std::vector<double> nice_ticks(double lo, double hi, bool log_axis) {
    std::vector<double> out;
    if (!(std::isfinite(lo) && std::isfinite(hi)) || hi <= lo) return out;
    if (log_axis) {
        if (lo <= 0) return out;
        const int k0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
        const int k1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
        const int stride = std::max(1, (k1 - k0 + 7) / 8); // at most about 8 decades labelled
        auto in = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
        for (int k = k0; k <= k1; ++k)
            if ((k - k0) % stride == 0 && in(std::pow(10.0, k))) out.push_back(std::pow(10.0, k));
        if (out.size() >= 2) return out;
        // Less than two powers of ten in range: 1, 2 and 5 times them.
        out.clear();
        for (int k = k0; k <= k1; ++k)
            for (double m : {1.0, 2.0, 5.0})
                if (in(m * std::pow(10.0, k))) out.push_back(m * std::pow(10.0, k));
        return out;
    }
    const double raw = (hi - lo) / 5;
    int e = static_cast<int>(std::floor(std::log10(raw)));
    double m = 10;
    for (double c : {1.0, 2.0, 5.0})
        if (c * std::pow(10.0, e) >= raw * (1 - 1e-12)) {
            m = c;
            break;
        }
    if (m == 10) m = 1, ++e;
    // Tick i is i * m * 10^e, computed as an integer scaled once (so 3 x 0.2 prints as 0.6).
    auto tick = [&](long long i) {
        const double units = static_cast<double>(i) * m;
        return e >= 0 ? units * std::pow(10.0, e) : units / std::pow(10.0, -e);
    };
    const double step = m * std::pow(10.0, e);
    const auto first = static_cast<long long>(std::ceil(lo / step - 1e-9));
    for (long long i = first; tick(i) <= hi + step * 1e-9 && out.size() < 64; ++i) out.push_back(tick(i));
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
        return minus_sign(s);
    }
    for (int digits = 0; digits <= 10; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*f", digits, v);
        if (std::fabs(std::strtod(buf, nullptr) - v) <= 1e-9 * a) return minus_sign(buf);
    }
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return minus_sign(buf);
}

tick_text log_tick_label(double v, bool powers) {
    if (!powers || !(v > 0) || !std::isfinite(v)) return {tick_label(v), ""};
    const int k = static_cast<int>(std::floor(std::log10(v) + 1e-9));
    const long m = std::lround(v / std::pow(10.0, k));
    const std::string base = m == 1 ? "10" : std::to_string(m) + "\xC3\x97" "10"; // ×
    return {base, minus_sign(std::to_string(k))};
}

std::string svg_renderer() {
    if (const char* e = std::getenv("ATTNPROP_SVG_RENDERER")) return e;
    return "rsvg-convert";
}

namespace {

/// Runs the renderer on `svg` with `options` (the output format), writing the file `png` (of
/// whatever format) through a temporary file in a folder of this process's own making.
png_result render_with(const std::string& svg, const std::string& png,
                       const std::vector<std::string>& options, const char* what) {
    png_result r;
    const std::string prog = svg_renderer();
    if (prog.empty()) {
        r.note = std::string(what) + " rendering disabled (ATTNPROP_SVG_RENDERER is empty)";
        return r;
    }
    // The renderer opens its output by name, following links and truncating: it writes into
    // a folder of this process's own making, never into a name someone could have planted.
    std::filesystem::path folder;
    try {
        folder = create_temporary_folder(png);
    } catch (const std::exception& e) {
        r.note = e.what();
        return r;
    }
    auto drop_folder = [&] {
        std::error_code ec;
        std::filesystem::remove_all(folder, ec);
    };
    const std::string tmp = (folder / std::filesystem::path(png).filename()).string();
    std::vector<std::string> args = {prog};
    args.insert(args.end(), options.begin(), options.end());
    for (const std::string& a : {std::string("--output"), tmp, svg}) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    // The renderer's own messages would interleave with attnprop's output: the exit status
    // says enough.
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int err = posix_spawnp(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        drop_folder();
        r.note = err == ENOENT ? prog + " not found (Debian package librsvg2-bin)"
                               : "cannot run " + prog + ": " + std::strerror(err);
        return r;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            r.note = "cannot wait for " + prog + ": " + std::strerror(errno);
            drop_folder();
            return r;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        drop_folder();
        r.note = prog + (WIFEXITED(status) ? " exited with " + std::to_string(WEXITSTATUS(status))
                                           : std::string(" was killed by a signal"));
        return r;
    }
    if (std::rename(tmp.c_str(), png.c_str()) != 0) {
        drop_folder();
        r.note = "cannot write " + png;
        return r;
    }
    drop_folder();
    r.written = true;
    return r;
}

} // namespace

png_result render_png(const std::string& svg, const std::string& png) {
    return render_with(svg, png, {"--zoom", "2"}, "PNG");
}

png_result render_pdf(const std::string& svg, const std::string& pdf) {
    return render_with(svg, pdf, {"--format", "pdf"}, "PDF");
}

std::string take_figure_text(plot_figure& f, const std::string& stem, bool in_image) {
    std::string md = "Figure `" + stem + "`";
    if (!f.title.empty()) md += ": " + f.title;
    md += ".\n\n";
    for (const auto& c : f.caption) md += "- " + c + "\n";
    if (!f.caption.empty()) md += "\n";
    if (!in_image) {
        f.title.clear();
        f.caption.clear();
    }
    return md;
}

std::vector<std::string> write_figure(const std::filesystem::path& dir, const std::string& stem,
                                      const plot_figure& f, std::vector<std::string>& notes) {
    const auto svg = dir / (stem + ".svg"), png = dir / (stem + ".png");
    write_file_atomic(svg, render_svg(f));
    std::vector<std::string> written = {svg.filename().string()};
    const png_result r = render_png(svg.string(), png.string());
    if (r.written) {
        written.push_back(png.filename().string());
    } else {
        std::error_code ec;
        std::filesystem::remove(png, ec);
        if (std::find(notes.begin(), notes.end(), r.note) == notes.end()) notes.push_back(r.note);
    }
    return written;
}

std::string figure_generator(const provenance& made_by) {
    if (made_by.empty()) return "";
    std::string g = "attnprop " + made_by.version;
    if (!made_by.commit.empty()) g += " (commit " + made_by.commit + (made_by.dirty == true ? ", modified" : "") + ")";
    return g;
}

std::string render_svg(const plot_figure& f) {
    const double W = f.width;
    constexpr double outer = 14;
    svg_writer out;
    std::vector<box> used;
    auto place = [&](const box& b) {
        for (const auto& u : used)
            if (overlaps(u, b)) return false;
        return b.x0 >= 1 && b.x1 <= W - 1;
    };

    // The x axis is shared: the x of every drawable value and every mark.
    std::vector<double> xs;
    for (const auto& p : f.panels)
        for (const auto& s : p.series)
            for (std::size_t t = 0; t < s.x.size() && t < s.y.size(); ++t)
                if (std::isfinite(s.y[t]) && (!p.log_y || s.y[t] > 0)) xs.push_back(s.x[t]);
    for (double m : f.marked_x) xs.push_back(m);
    for (double m : f.missing_x) xs.push_back(m);
    const axis ax = make_axis(xs, f.log_x, std::nullopt, std::nullopt, true);

    // y axes, and the left margin that holds the widest tick label.
    std::vector<axis> ays;
    double label_w = 0;
    for (const auto& p : f.panels) {
        std::vector<double> ys;
        for (const auto& s : p.series)
            for (std::size_t t = 0; t < s.x.size() && t < s.y.size(); ++t)
                if (ax.contains(s.x[t])) ys.push_back(s.y[t]);
        for (const auto& r : p.references) ys.push_back(r.y);
        ays.push_back(make_axis(ys, p.log_y, p.y_min, p.y_max, false));
        for (double t : ays.back().ticks) label_w = std::max(label_w, label_width(ays.back().label(t), tick_size));
    }
    const double left = outer + label_w + 8;
    // The right margin holds half of the widest x tick label.
    double right = outer;
    for (double t : ax.ticks) right = std::max(right, label_width(ax.label(t), tick_size) / 2 + 4);
    const double plot_w = W - left - right;
    auto X = [&](double v) { return left + ax.to_unit(v) * plot_w; };

    double y = outer;
    for (const auto& line : wrap(f.title, title_size, W - 2 * outer)) {
        y += title_size * 1.25;
        out.text(W / 2, y, line, title_size, "middle");
        used.push_back(text_box(W / 2, y, line, title_size, "middle"));
    }
    y += 8;

    std::size_t colour_next = 0;
    const std::string x_label =
        fit(f.x_label + (f.log_x && f.say_log_scale ? " (log scale)" : ""), label_size, W - 2 * outer);
    for (std::size_t pi = 0; pi < f.panels.size(); ++pi) {
        const auto& p = f.panels[pi];
        const axis& ay = ays[pi];
        const double panel_h = p.height;
        // The y label sits above the panel's top-left corner ("(a) ..." with several panels).
        std::string ylab = p.y_label + (p.log_y && f.say_log_scale ? " (log scale)" : "");
        if (f.panels.size() > 1) ylab = "(" + std::string(1, static_cast<char>('a' + pi)) + ") " + ylab;
        for (const auto& line : wrap(ylab, label_size, W - left - outer)) {
            y += label_size * 1.25;
            out.text(left, y, line, label_size, "start");
            used.push_back(text_box(left, y, line, label_size, "start"));
        }
        y += 6;
        const double top = y, bottom = y + panel_h;
        auto Y = [&](double v) { return bottom - ay.to_unit(v) * panel_h; };
        out.raw() << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(plot_w)
                  << "\" height=\"" << num(panel_h) << "\" fill=\"none\" stroke=\"#888888\"/>\n";
        // y ticks, grid and labels.
        for (double t : ay.ticks) {
            const double ty = Y(t);
            out.raw() << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + plot_w) << "\" y1=\""
                      << num(ty) << "\" y2=\"" << num(ty) << "\" stroke=\"#e6e6e6\"/>\n";
            out.raw() << "<line x1=\"" << num(left - 4) << "\" x2=\"" << num(left) << "\" y1=\""
                      << num(ty) << "\" y2=\"" << num(ty) << "\" stroke=\"#888888\"/>\n";
            const tick_text lab = ay.label(t);
            const box b = text_box(left - 6, ty + 4, lab, tick_size, "end");
            if (!place(b)) continue;
            out.text(left - 6, ty + 4, lab, tick_size, "end");
            used.push_back(b);
        }
        for (double t : ay.minor)
            out.raw() << "<line x1=\"" << num(left - 2) << "\" x2=\"" << num(left) << "\" y1=\""
                      << num(Y(t)) << "\" y2=\"" << num(Y(t)) << "\" stroke=\"#888888\"/>\n";
        // x ticks: a label is left out when it would touch its left neighbour.
        const double x_base = bottom + 17;
        double last_x1 = -1e9;
        for (double t : ax.ticks) {
            const double tx = X(t);
            out.raw() << "<line x1=\"" << num(tx) << "\" x2=\"" << num(tx) << "\" y1=\"" << num(bottom)
                      << "\" y2=\"" << num(bottom + 4) << "\" stroke=\"#888888\"/>\n";
            const tick_text lab = ax.label(t);
            const box b = text_box(tx, x_base, lab, tick_size, "middle");
            if (b.x0 < last_x1 + 8 || !place(b)) continue;
            out.text(tx, x_base, lab, tick_size, "middle");
            used.push_back(b);
            last_x1 = b.x1;
        }
        for (double t : ax.minor)
            out.raw() << "<line x1=\"" << num(X(t)) << "\" x2=\"" << num(X(t)) << "\" y1=\"" << num(bottom)
                      << "\" y2=\"" << num(bottom + 2) << "\" stroke=\"#888888\"/>\n";
        // The data, clipped to the panel.
        out.raw() << "<clipPath id=\"panel" << pi << "\"><rect x=\"" << num(left) << "\" y=\""
                  << num(top) << "\" width=\"" << num(plot_w) << "\" height=\"" << num(panel_h)
                  << "\"/></clipPath>\n<g clip-path=\"url(#panel" << pi << ")\">\n";
        struct legend_entry {
            std::string colour, name;
            plot_style style;
            bool marker, reference;
        };
        std::vector<legend_entry> legend;
        for (const auto& r : p.references) {
            if (!ay.contains(r.y)) continue;
            out.raw() << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + plot_w) << "\" y1=\""
                      << num(Y(r.y)) << "\" y2=\"" << num(Y(r.y)) << "\" stroke=\"" << r.colour
                      << "\" stroke-width=\"1.5\" stroke-dasharray=\"2,3\"/>\n";
            if (!r.name.empty()) legend.push_back({r.colour, r.name, plot_style::dashed, false, true});
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
                out.raw() << "<polyline fill=\"none\" stroke=\"" << colour << "\"";
                if (s.style == plot_style::band)
                    out.raw() << " stroke-width=\"7\" stroke-opacity=\"0.35\" stroke-linejoin=\"round\" "
                                 "stroke-linecap=\"round\"";
                else out.raw() << " stroke-width=\"2\"";
                if (const char* d = dasharray(s.style)) out.raw() << " stroke-dasharray=\"" << d << "\"";
                out.raw() << " points=\"";
                for (; t < s.x.size() && drawable(t); ++t) out.raw() << num(X(s.x[t])) << "," << num(Y(s.y[t])) << " ";
                out.raw() << "\"/>\n";
            }
            if (s.markers)
                for (std::size_t t = 0; t < s.x.size(); ++t)
                    if (drawable(t))
                        out.raw() << "<circle cx=\"" << num(X(s.x[t])) << "\" cy=\"" << num(Y(s.y[t]))
                                  << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
            if (any && !s.name.empty()) legend.push_back({colour, s.name, s.style, s.markers, false});
        }
        out.raw() << "</g>\n";
        // Marked lengths: a cross (undefined) or a ring (no value) on the axis, the label above
        // it once per cluster.
        double last_mark_x1 = -1e9;
        auto mark = [&](double m, bool cross, const std::string& label) {
            if (!ax.contains(m)) return;
            const double mx = X(m);
            if (cross)
                out.raw() << "<path d=\"M" << num(mx - 4) << "," << num(bottom - 4) << " L" << num(mx + 4)
                          << "," << num(bottom + 4) << " M" << num(mx - 4) << "," << num(bottom + 4) << " L"
                          << num(mx + 4) << "," << num(bottom - 4)
                          << "\" stroke=\"#B00000\" stroke-width=\"2\"/>\n";
            else
                out.raw() << "<circle cx=\"" << num(mx) << "\" cy=\"" << num(bottom) << "\" r=\"4\" "
                          << "fill=\"white\" stroke=\"#555555\" stroke-width=\"1.5\"/>\n";
            const box b = text_box(mx, bottom - 9, label, 10, "middle");
            if (b.x0 < last_mark_x1 + 4 || b.x0 < left || b.x1 > left + plot_w || !place(b)) return;
            out.text(mx, bottom - 9, label, 10, "middle", cross ? "#B00000" : "#555555");
            used.push_back(b);
            last_mark_x1 = b.x1;
        };
        for (double m : f.marked_x) mark(m, true, f.marked_label);
        last_mark_x1 = -1e9;
        for (double m : f.missing_x) mark(m, false, f.missing_label);
        // The x label under the last panel's tick labels (the panels share the axis).
        y = x_base;
        if (pi + 1 == f.panels.size()) {
            y += label_size * 1.35;
            // Centred under the plot, moved left when it would pass the right edge.
            const double xw = text_width(x_label, label_size);
            const double xc = std::min(left + plot_w / 2, W - outer - xw / 2);
            out.text(xc, y, x_label, label_size, "middle");
            used.push_back(text_box(xc, y, x_label, label_size, "middle"));
        }
        y += 4;
        // Legend: entries left to right, wrapping.
        if (!legend.empty()) {
            double lx = left;
            y += small_size * 1.4;
            for (auto& e : legend) {
                e.name = fit(e.name, small_size, W - outer - left - 29);
                const double w = 24 + 5 + text_width(e.name, small_size) + 18;
                if (lx + w > W - outer && lx > left) {
                    lx = left;
                    y += small_size * 1.5;
                }
                out.raw() << "<line x1=\"" << num(lx) << "\" x2=\"" << num(lx + 24) << "\" y1=\""
                          << num(y - 4) << "\" y2=\"" << num(y - 4) << "\" stroke=\"" << e.colour << "\"";
                if (e.reference) out.raw() << " stroke-width=\"1.5\" stroke-dasharray=\"2,3\"";
                else if (e.style == plot_style::band) out.raw() << " stroke-width=\"7\" stroke-opacity=\"0.35\"";
                else out.raw() << " stroke-width=\"2\"";
                if (!e.reference)
                    if (const char* d = dasharray(e.style)) out.raw() << " stroke-dasharray=\"" << d << "\"";
                out.raw() << "/>\n";
                if (e.marker)
                    out.raw() << "<circle cx=\"" << num(lx + 12) << "\" cy=\"" << num(y - 4) << "\" r=\"3\" fill=\""
                              << e.colour << "\"/>\n";
                out.text(lx + 29, y, e.name, small_size, "start");
                used.push_back(text_box(lx + 29, y, e.name, small_size, "start"));
                lx += w;
            }
        }
        for (const auto& note : p.notes)
            for (const auto& line : wrap(note, small_size, W - left - outer)) {
                y += small_size * 1.35;
                out.text(left, y, line, small_size, "start", "#444444");
                used.push_back(text_box(left, y, line, small_size, "start"));
            }
        y += 16;
    }
    for (const auto& c : f.caption) {
        for (const auto& line : wrap(c, small_size, W - 2 * outer)) {
            y += small_size * 1.35;
            out.text(outer, y, line, small_size, "start", "#222222");
            used.push_back(text_box(outer, y, line, small_size, "start"));
        }
        y += 3;
    }
    y += outer;
    std::ostringstream doc;
    doc << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(W) << "\" height=\"" << num(y)
        << "\" viewBox=\"0 0 " << num(W) << " " << num(y) << "\" font-family=\"DejaVu Sans, sans-serif\">\n";
    if (!f.generator.empty()) {
        std::string g = f.generator;
        for (std::size_t at; (at = g.find("--")) != std::string::npos;) g.replace(at, 2, "- -");
        doc << "<!-- made by " << esc(g) << " -->\n";
    }
    doc << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    doc << out.str() << "</svg>\n";
    return doc.str();
}

} // namespace attnprop::report
