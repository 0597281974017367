// svg_check FILE.svg...: the geometry of figures attnprop wrote. For each file: no number is NaN
// or infinite; every text's box (its width measured with report::text_width, the layout's own
// metric; 0.8 of its size above the baseline, 0.25 below, a superscript's rise included) lies
// inside the canvas; no two text boxes overlap. Prints every problem with the file and the
// texts; exits 1 when there is one, 2 on a file it cannot read or parse.
#include "report/plot.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct text_item {
    std::string content;
    double x0, y0, x1, y1;
};

std::string unescape(std::string s) {
    const std::pair<const char*, const char*> ents[] = {
        {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
    for (const auto& [e, r] : ents)
        for (std::size_t at; (at = s.find(e)) != std::string::npos;) s.replace(at, std::strlen(e), r);
    return s;
}

std::string attr(const std::string& tag, const std::string& name) {
    const std::regex re("\\s" + name + "=\"([^\"]*)\"");
    std::smatch m;
    return std::regex_search(tag, m, re) ? m[1].str() : std::string();
}

double number(const std::string& s, const std::string& what, const std::string& file) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0') throw std::runtime_error(file + ": " + what + " is not a number: '" + s + "'");
    return v;
}

int check(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::cerr << file << ": cannot read\n";
        return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string svg = ss.str();
    int problems = 0;
    // Every number in an attribute: finite.
    const std::regex non_finite(R"((^|[=",\s])[-+]?(nan|inf)([",\s]|$))", std::regex::icase);
    if (std::regex_search(svg, non_finite)) {
        std::cout << file << ": a coordinate is NaN or infinite\n";
        ++problems;
    }
    std::smatch root;
    if (!std::regex_search(svg, root, std::regex(R"(<svg [^>]*>)"))) {
        std::cerr << file << ": no <svg> element\n";
        return 2;
    }
    const double W = number(attr(root[0].str(), "width"), "width", file);
    const double H = number(attr(root[0].str(), "height"), "height", file);
    std::vector<text_item> items;
    const std::regex text_re(R"(<text([^>]*)>([^<]*)(<tspan([^>]*)>([^<]*)</tspan>)?</text>)");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re); it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        const std::string tag = " " + m[1].str();
        const double x = number(attr(tag, "x"), "text x", file), y = number(attr(tag, "y"), "text y", file);
        const double size = number(attr(tag, "font-size"), "font-size", file);
        const std::string anchor = attr(tag, "text-anchor");
        const std::string main = unescape(m[2].str());
        double w = attnprop::report::text_width(main, size);
        double top = y - 0.8 * size;
        std::string content = main;
        if (m[3].matched) {
            const std::string stag = " " + m[4].str();
            const double ssize = number(attr(stag, "font-size"), "tspan font-size", file);
            const double dy = attr(stag, "dy").empty() ? 0 : number(attr(stag, "dy"), "tspan dy", file);
            const std::string sup = unescape(m[5].str());
            w += attnprop::report::text_width(sup, ssize);
            top = std::min(top, y + dy - 0.8 * ssize);
            content += "^" + sup;
        }
        double x0 = x;
        if (anchor == "middle") x0 = x - w / 2;
        else if (anchor == "end") x0 = x - w;
        items.push_back({content, x0, top, x0 + w, y + 0.25 * size});
    }
    if (items.empty()) {
        std::cout << file << ": no text at all\n";
        ++problems;
    }
    for (const auto& t : items)
        if (t.x0 < 0 || t.y0 < 0 || t.x1 > W || t.y1 > H) {
            std::printf("%s: '%s' [%.1f, %.1f] x [%.1f, %.1f] leaves the canvas %.0f x %.0f\n",
                        file.c_str(), t.content.c_str(), t.x0, t.x1, t.y0, t.y1, W, H);
            ++problems;
        }
    for (std::size_t a = 0; a < items.size(); ++a)
        for (std::size_t b = a + 1; b < items.size(); ++b) {
            const auto &p = items[a], &q = items[b];
            if (p.x0 < q.x1 && q.x0 < p.x1 && p.y0 < q.y1 && q.y0 < p.y1) {
                std::printf("%s: '%s' and '%s' overlap\n", file.c_str(), p.content.c_str(), q.content.c_str());
                ++problems;
            }
        }
    std::printf("%s: %zu texts, %d problem%s\n", file.c_str(), items.size(), problems, problems == 1 ? "" : "s");
    return problems ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: svg_check FILE.svg...\n";
        return 2;
    }
    int worst = 0;
    for (int i = 1; i < argc; ++i) {
        try {
            worst = std::max(worst, check(argv[i]));
        } catch (const std::exception& e) {
            std::cerr << e.what() << "\n";
            worst = 2;
        }
    }
    return worst;
}
