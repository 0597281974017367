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

std::string log_x_svg(const std::string& title, const std::vector<double>& ns,
                      const std::vector<plot_panel>& panels) {
    const double W = 640, panel = 220, left = 70, right = 20, top = 40, gap = 60;
    const double k = static_cast<double>(panels.size());
    const double bottom = top + k * panel + (k > 0 ? (k - 1) * gap : 0);
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\""
      << (bottom + 50) << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s << "<text x=\"" << W / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">" << title
      << "</text>\n";
    double lx0 = ns.empty() ? 0 : std::log2(ns.front()), lx1 = ns.empty() ? 1 : std::log2(ns.back());
    if (lx1 <= lx0) lx1 = lx0 + 1;
    auto X = [&](double n) { return left + (std::log2(n) - lx0) / (lx1 - lx0) * (W - left - right); };
    double y0 = top;
    for (const auto& p : panels) {
        double vmin = p.vmin, vmax = p.vmax;
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
            s << "<text x=\"" << X(n) << "\" y=\"" << (y0 + panel + 16) << "\" text-anchor=\"middle\">"
              << static_cast<long>(n) << "</text>\n";
        s << "<text x=\"16\" y=\"" << (y0 + panel / 2) << "\" transform=\"rotate(-90 16 "
          << (y0 + panel / 2) << ")\" text-anchor=\"middle\">" << p.label << "</text>\n";
        s << "<polyline fill=\"none\" stroke=\"" << p.colour << "\" stroke-width=\"2\" points=\"";
        for (std::size_t t = 0; t < p.values.size() && t < ns.size(); ++t)
            s << X(ns[t]) << "," << Y(p.values[t]) << " ";
        s << "\"/>\n";
        for (std::size_t t = 0; t < p.values.size() && t < ns.size(); ++t)
            s << "<circle cx=\"" << X(ns[t]) << "\" cy=\"" << Y(p.values[t]) << "\" r=\"3\" fill=\""
              << p.colour << "\"/>\n";
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
