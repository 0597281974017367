#include "report/files.hpp"

#include "model/model_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace attnprop::report {

namespace fs = std::filesystem;
using json::value;

void write_file_atomic(const fs::path& p, const std::string& text) {
    const fs::path tmp = p.string() + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream f(tmp, std::ios::binary);
        if (!f) throw std::runtime_error("cannot write " + p.string());
        f << text;
        f.flush();
        if (!f) throw std::runtime_error("cannot write " + p.string());
    }
    std::error_code ec;
    fs::rename(tmp, p, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw std::runtime_error("cannot write " + p.string());
    }
}

namespace {

std::string tick(double v, int digits) {
    char buf[64];
    if (digits >= 0)
        std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    else
        std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

} // namespace

std::string log_x_svg(const std::string& title, const std::vector<double>& ns_in,
                      const std::vector<plot_panel>& panels,
                      const std::vector<double>& undefined_ns) {
    // Only lengths n >= 1 have a place on the log axis; a value is drawn only when finite.
    std::vector<double> ns;
    for (double n : ns_in) ns.push_back(std::isfinite(n) && n >= 1 ? n : std::nan(""));
    std::vector<double> marks;
    for (double n : undefined_ns)
        if (std::isfinite(n) && n >= 1) marks.push_back(n);
    double first_n = 0, last_n = 0;
    for (double n : ns)
        if (std::isfinite(n)) {
            if (first_n == 0 || n < first_n) first_n = n;
            last_n = std::max(last_n, n);
        }
    for (double n : marks) {
        if (first_n == 0 || n < first_n) first_n = n;
        last_n = std::max(last_n, n);
    }
    const double W = 640, panel = 220, left = 70, right = 20, gap = 60;
    const double top = marks.empty() ? 40 : 56;
    const double k = static_cast<double>(panels.size());
    const double bottom = top + k * panel + (k > 0 ? (k - 1) * gap : 0);
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\""
      << (bottom + 50) << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s << "<text x=\"" << W / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">" << title
      << "</text>\n";
    if (!marks.empty()) {
        s << "<text x=\"" << W / 2 << "\" y=\"38\" text-anchor=\"middle\" fill=\"#b00\">undefined at n =";
        for (std::size_t t = 0; t < marks.size(); ++t)
            s << (t ? ", " : " ") << static_cast<long>(marks[t]);
        s << "</text>\n";
    }
    double lx0 = first_n > 0 ? std::log2(first_n) : 0, lx1 = last_n > 0 ? std::log2(last_n) : 1;
    if (lx1 <= lx0) lx1 = lx0 + 1;
    auto X = [&](double n) { return left + (std::log2(n) - lx0) / (lx1 - lx0) * (W - left - right); };
    double y0 = top;
    for (const auto& p : panels) {
        double vmin = std::isfinite(p.vmin) ? p.vmin : 0, vmax = std::isfinite(p.vmax) ? p.vmax : 1;
        if (vmax <= vmin) vmax = vmin + 1;
        auto Y = [&](double t) { return y0 + panel - (t - vmin) / (vmax - vmin) * panel; };
        s << "<rect x=\"" << left << "\" y=\"" << y0 << "\" width=\"" << (W - left - right)
          << "\" height=\"" << panel << "\" fill=\"none\" stroke=\"#888\"/>\n";
        for (int t = 0; t <= 4; ++t) {
            const double val = vmin + (vmax - vmin) * t / 4;
            const int digits = p.digits >= 0 ? p.digits : -1;
            s << "<text x=\"" << (left - 6) << "\" y=\"" << (Y(val) + 4) << "\" text-anchor=\"end\">"
              << tick(val, digits) << "</text>\n";
            s << "<line x1=\"" << left << "\" x2=\"" << (W - right) << "\" y1=\"" << Y(val) << "\" y2=\""
              << Y(val) << "\" stroke=\"#eee\"/>\n";
        }
        for (double n : ns)
            if (std::isfinite(n))
                s << "<text x=\"" << X(n) << "\" y=\"" << (y0 + panel + 16) << "\" text-anchor=\"middle\">"
                  << static_cast<long>(n) << "</text>\n";
        s << "<text x=\"16\" y=\"" << (y0 + panel / 2) << "\" transform=\"rotate(-90 16 "
          << (y0 + panel / 2) << ")\" text-anchor=\"middle\">" << p.label << "</text>\n";
        // One polyline per run of drawable points: a non-finite value breaks the line.
        auto drawable = [&](std::size_t t) {
            return std::isfinite(ns[t]) && std::isfinite(p.values[t]) &&
                   std::isfinite(Y(p.values[t])) && std::isfinite(X(ns[t]));
        };
        const std::size_t count = std::min(p.values.size(), ns.size());
        for (std::size_t t = 0; t < count;) {
            if (!drawable(t)) {
                ++t;
                continue;
            }
            s << "<polyline fill=\"none\" stroke=\"" << p.colour << "\" stroke-width=\"2\" points=\"";
            for (; t < count && drawable(t); ++t) s << X(ns[t]) << "," << Y(p.values[t]) << " ";
            s << "\"/>\n";
        }
        for (std::size_t t = 0; t < count; ++t)
            if (drawable(t))
                s << "<circle cx=\"" << X(ns[t]) << "\" cy=\"" << Y(p.values[t]) << "\" r=\"3\" fill=\""
                  << p.colour << "\"/>\n";
        // Undefined lengths: a red cross on the n axis, labelled.
        for (double n : marks) {
            const double x = X(n), yb = y0 + panel;
            s << "<path d=\"M" << (x - 4) << "," << (yb - 4) << " L" << (x + 4) << "," << (yb + 4)
              << " M" << (x - 4) << "," << (yb + 4) << " L" << (x + 4) << "," << (yb - 4)
              << "\" stroke=\"#b00\" stroke-width=\"2\"/>\n";
            s << "<text x=\"" << x << "\" y=\"" << (yb - 8) << "\" text-anchor=\"middle\" fill=\"#b00\" "
              << "font-size=\"10\">undef</text>\n";
        }
        y0 += panel + gap;
    }
    s << "<text x=\"" << W / 2 << "\" y=\"" << (bottom + 40)
      << "\" text-anchor=\"middle\">n (log scale)</text>\n";
    s << "</svg>\n";
    return s.str();
}

fs::path write_case_folder(const fs::path& dir, const model::model<numeric::rational>& m,
                           const case_folder& c) {
    fs::create_directories(dir);
    model::write_model_file(m, (dir / "model.json").string());
    value o = value::object();
    o.set("format", value::string("attnprop-counterexample"));
    o.set("version", value::number(1));
    o.set("property", value::string(c.property));
    o.set("statement", value::string(c.statement));
    o.set("model", value::string("model.json"));
    value ins = value::array(), ns = value::array();
    for (const auto& s : c.inputs) {
        ins.push_back(value::string(s));
        ns.push_back(value::number(static_cast<long long>(s.size()) + 1));
    }
    o.set("inputs", std::move(ins));
    o.set("n", std::move(ns));
    value params = value::object();
    for (const auto& [k, v] : c.params) params.set(k, value::number(v));
    o.set("params", std::move(params));
    o.set("seed", value::string(std::to_string(c.seed)));
    o.set("base_seed", value::string(std::to_string(c.seed)));
    o.set("reproduce", value::string(""));
    value kinds = value::array();
    for (const auto& k : c.scalar_kinds) kinds.push_back(value::string(k));
    o.set("scalar_kinds", std::move(kinds));
    o.set("precision", value::number(c.precision));
    o.set("precision_cap", value::number(c.precision));
    o.set("verdict", value::string("violated"));
    o.set("message", value::string(c.message));
    o.set("numbers", c.numbers);
    if (!c.made_by.empty()) o.set("provenance", provenance_to_json(c.made_by));
    write_file_atomic(dir / "case.json", json::dump(o, 2) + "\n");
    return dir;
}

} // namespace attnprop::report
