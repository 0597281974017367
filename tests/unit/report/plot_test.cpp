// Figures (report/plot.hpp): round ticks, tick labels, and the geometry of figures at their
// edges (one length, no drawable value, every value non-finite, huge and tiny ranges, negative
// values, long titles, captions and legends): no NaN, every text inside the canvas, no two texts
// overlapping (tests/figures/svg_geometry.hpp, which measures with report::text_width).
#include "report/plot.hpp"

#include "../../figures/svg_geometry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

using namespace attnprop;
using report::plot_figure;
using report::plot_panel_spec;
using report::plot_series;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();
const double inf_v = std::numeric_limits<double>::infinity();

void require_clean(const plot_figure& f) {
    const std::string svg = report::render_svg(f);
    const auto problems = test::svg_problems(svg);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    INFO(svg);
    REQUIRE(problems.empty());
}

plot_figure two_panels(std::vector<double> x, std::vector<double> y1, std::vector<double> y2) {
    plot_figure f;
    f.title = "edge case";
    plot_panel_spec a, b;
    a.y_label = "a value (units)";
    a.log_y = true;
    a.series.push_back({"first series", x, y1});
    b.y_label = "another value (count)";
    b.series.push_back({"second series", x, y2});
    f.panels = {a, b};
    f.caption = {"A caption."};
    return f;
}

bool round_value(double v) {
    if (v == 0) return true;
    const double p = std::pow(10.0, std::floor(std::log10(std::fabs(v)) + 1e-9));
    const double m = std::fabs(v) / p;
    for (double r : {1.0, 2.0, 5.0, 10.0})
        if (std::fabs(m - r) < 1e-6 * r) return true;
    // Linear steps of 1, 2 or 5 x 10^k also give multiples such as 3 x 10^k, 4 x 10^k, ...
    return std::fabs(m - std::round(m)) < 1e-6 * m;
}

} // namespace

TEST_CASE("nice_ticks: round values, at least two, inside the range", "[report][plot]") {
    std::mt19937_64 rng(7);
    INFO("seed 7");
    std::uniform_real_distribution<double> e(-30, 30), w(0.05, 12);
    for (int k = 0; k < 300; ++k) {
        const double lo = std::pow(10.0, e(rng)), hi = lo * std::pow(10.0, w(rng));
        for (bool log : {false, true}) {
            const auto t = report::nice_ticks(lo, hi, log);
            INFO("[" << lo << ", " << hi << "] " << (log ? "log" : "linear"));
            if (!log || hi >= 10 * lo) REQUIRE(t.size() >= 2);
            REQUIRE(t.size() <= 12);
            // Inside, up to rounding: relative on log axes, a part of the range on linear ones.
            const double slack = log ? 1e-9 * lo : 1e-9 * (hi - lo);
            for (double v : t) {
                REQUIRE(v >= lo - slack);
                REQUIRE(v <= hi + (log ? 1e-9 * hi : slack));
                if (log) REQUIRE(round_value(v));
            }
        }
    }
    REQUIRE(report::nice_ticks(0, 1, false) == std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0});
    REQUIRE(report::nice_ticks(1e-5, 1, true) ==
            std::vector<double>{1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1});
    REQUIRE(report::nice_ticks(2, 8, true) == std::vector<double>{2, 5});
}

TEST_CASE("tick labels: shortest decimals, powers of ten with a superscript", "[report][plot]") {
    REQUIRE(report::tick_label(0.2) == "0.2");
    REQUIRE(report::tick_label(2500) == "2500");
    REQUIRE(report::tick_label(-0.5) == "\xE2\x88\x92" "0.5");
    REQUIRE(report::tick_label(1e-5) == "1e\xE2\x88\x92" "5");
    auto p = report::log_tick_label(1e-5, true);
    REQUIRE(p.main == "10");
    REQUIRE(p.sup == "\xE2\x88\x92" "5");
    p = report::log_tick_label(2e4, true);
    REQUIRE(p.main == "2\xC3\x97" "10");
    REQUIRE(p.sup == "4");
    p = report::log_tick_label(0.1, false);
    REQUIRE(p.main == "0.1");
    REQUIRE(p.sup.empty());
}

TEST_CASE("text_width: DejaVu Sans advances with a margin", "[report][plot]") {
    // "0" is 0.6362 em, "m" 0.9741 em, "i" 0.2778 em; a character outside the table counts 1 em.
    REQUIRE(report::text_width("0", 10) == Approx(6.362 * 1.03));
    REQUIRE(report::text_width("mi", 10) == Approx((9.741 + 2.778) * 1.03));
    REQUIRE(report::text_width("\xCE\x94", 10) == Approx(6.841 * 1.03)); // Δ, two bytes
    REQUIRE(report::text_width("\xE2\x9C\x93", 10) == Approx(10 * 1.03)); // ✓, not listed
}

TEST_CASE("render_svg: figures at their edges stay inside the canvas, without overlaps", "[report][plot]") {
    SECTION("one length") { require_clean(two_panels({64}, {0.5}, {3})); }
    SECTION("nothing drawable on the log axis") { require_clean(two_panels({8, 16, 32}, {0, -1, 0}, {0, 0, 0})); }
    SECTION("every value non-finite") {
        auto f = two_panels({8, 16, 32}, {nan_v, inf_v, -inf_v}, {nan_v, nan_v, nan_v});
        f.marked_x = {8, 16, 32};
        require_clean(f);
    }
    SECTION("huge and tiny values") {
        require_clean(two_panels({100, 1000, 10000, 100000}, {1e-300, 1e-200, 1e-100, 1e300},
                                 {-1e12, 5e12, 2e12, 7e12}));
    }
    SECTION("negative values and marks everywhere") {
        auto f = two_panels({3, 4, 6, 8, 12}, {1, 2, 3, 4, 5}, {-3.5, -1, 0, 2.5, -7});
        f.marked_x = {3, 4, 6, 8, 12};
        f.missing_x = {3, 4, 6, 8, 12};
        require_clean(f);
    }
    SECTION("long title, labels, legends and caption") {
        auto f = two_panels({16, 64, 256, 1024, 4096}, {1, 0.2, 0.05, 0.01, 0.002}, {1, 1, 1, 1, 1});
        f.title = std::string(30, 'W') + " " + std::string(30, 'M') + " a very long title about n";
        f.panels[0].y_label = std::string(200, 'm');
        for (int k = 0; k < 9; ++k)
            f.panels[0].series.push_back({"series number " + std::to_string(k) + " with a long name",
                                          {16, 4096}, {1.0 + k, 0.5}});
        f.panels[0].notes = {std::string(400, 'x')};
        f.caption = {std::string(50, 'W') + " then words that wrap over several lines of the caption"};
        require_clean(f);
    }
    SECTION("a linear x axis and fixed ranges") {
        auto f = two_panels({0.1, 0.2, 0.3}, {5, 6, 7}, {0.5, 1.5, 0.9});
        f.log_x = false;
        f.panels[1].y_min = 0.0;
        f.panels[1].y_max = 1.0;
        f.panels[1].references.push_back({0.5, "a reference"});
        require_clean(f);
    }
}
