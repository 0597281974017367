#pragma once
// The geometry of an SVG figure attnprop wrote (report::render_svg), for the tests: no number is
// NaN or infinite; every text's box (its width measured with report::text_width, the layout's
// own metric; 0.8 of its size above the baseline, 0.25 below, a superscript's rise included)
// lies inside the canvas; no two text boxes overlap.
#include "report/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnprop::test {

struct svg_text_box {
    std::string content;
    double x0, y0, x1, y1;
};

inline std::string svg_unescape(std::string s) {
    const std::pair<const char*, const char*> ents[] = {
        {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
    for (const auto& [e, r] : ents)
        for (std::size_t at; (at = s.find(e)) != std::string::npos;) s.replace(at, std::strlen(e), r);
    return s;
}

inline std::string svg_attr(const std::string& tag, const std::string& name) {
    const std::regex re("\\s" + name + "=\"([^\"]*)\"");
    std::smatch m;
    return std::regex_search(tag, m, re) ? m[1].str() : std::string();
}

inline double svg_number(const std::string& s, const std::string& what) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0') throw std::runtime_error(what + " is not a number: '" + s + "'");
    return v;
}

/// Every problem of `svg`, one line each (empty: none). Throws std::runtime_error when it is
/// not an SVG document of the expected shape.
inline std::vector<std::string> svg_problems(const std::string& svg, std::size_t* texts = nullptr) {
    std::vector<std::string> problems;
    const std::regex non_finite(R"((^|[=",\s])[-+]?(nan|inf)([",\s]|$))", std::regex::icase);
    if (std::regex_search(svg, non_finite)) problems.push_back("a coordinate is NaN or infinite");
    std::smatch root;
    if (!std::regex_search(svg, root, std::regex(R"(<svg [^>]*>)"))) throw std::runtime_error("no <svg> element");
    const double W = svg_number(svg_attr(root[0].str(), "width"), "width");
    const double H = svg_number(svg_attr(root[0].str(), "height"), "height");
    std::vector<svg_text_box> items;
    const std::regex text_re(R"(<text([^>]*)>([^<]*)(<tspan([^>]*)>([^<]*)</tspan>)?</text>)");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re); it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        const std::string tag = " " + m[1].str();
        const double x = svg_number(svg_attr(tag, "x"), "text x"), y = svg_number(svg_attr(tag, "y"), "text y");
        const double size = svg_number(svg_attr(tag, "font-size"), "font-size");
        const std::string anchor = svg_attr(tag, "text-anchor");
        const std::string main = svg_unescape(m[2].str());
        double w = report::text_width(main, size);
        double top = y - 0.8 * size;
        std::string content = main;
        if (m[3].matched) {
            const std::string stag = " " + m[4].str();
            const double ssize = svg_number(svg_attr(stag, "font-size"), "tspan font-size");
            const double dy = svg_attr(stag, "dy").empty() ? 0 : svg_number(svg_attr(stag, "dy"), "tspan dy");
            const std::string sup = svg_unescape(m[5].str());
            w += report::text_width(sup, ssize);
            top = std::min(top, y + dy - 0.8 * ssize);
            content += "^" + sup;
        }
        double x0 = x;
        if (anchor == "middle") x0 = x - w / 2;
        else if (anchor == "end") x0 = x - w;
        items.push_back({content, x0, top, x0 + w, y + 0.25 * size});
    }
    if (texts) *texts = items.size();
    if (items.empty()) problems.push_back("no text at all");
    char buf[512];
    for (const auto& t : items)
        if (t.x0 < 0 || t.y0 < 0 || t.x1 > W || t.y1 > H) {
            std::snprintf(buf, sizeof buf, "'%s' [%.1f, %.1f] x [%.1f, %.1f] leaves the canvas %.0f x %.0f",
                          t.content.c_str(), t.x0, t.x1, t.y0, t.y1, W, H);
            problems.push_back(buf);
        }
    for (std::size_t a = 0; a < items.size(); ++a)
        for (std::size_t b = a + 1; b < items.size(); ++b) {
            const auto &p = items[a], &q = items[b];
            if (p.x0 < q.x1 && q.x0 < p.x1 && p.y0 < q.y1 && q.y0 < p.y1)
                problems.push_back("'" + p.content + "' and '" + q.content + "' overlap");
        }
    return problems;
}

} // namespace attnprop::test
