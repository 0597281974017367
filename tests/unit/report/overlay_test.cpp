// plot's overlay (report/overlay.hpp): the reading of influence report folders (exit-2 errors
// located by file and JSON pointer), one meaning per panel whatever the models, the 1/n
// reference beside the data and not on it, no title or verdict in the image unless asked, and
// the figure's geometry (no NaN, every text inside the canvas).
#include "report/overlay.hpp"

#include "model/model.hpp"
#include "report/files.hpp"

#include "../../figures/svg_geometry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <unistd.h>

using namespace attnprop;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
    fs::path path;
    temp_dir() {
        path = fs::temp_directory_path() / ("attnprop-overlay-" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

/// An influence report whose Δ(n) = c/n^p at n = 16, 32, 64, 128, with a cross-entropy CE.
std::string sweep(const std::string& model, double c, double p, double ce) {
    std::string rows;
    for (long n : {16L, 32L, 64L, 128L}) {
        const double d = c / std::pow(static_cast<double>(n), p);
        rows += std::string(rows.empty() ? "" : ",") + "{\"n\": " + std::to_string(n) +
                ", \"max_influence_approx\": " + std::to_string(d) +
                ", \"n_max_influence_approx\": " + std::to_string(d * static_cast<double>(n)) +
                ", \"undefined\": null, \"cross_entropy\": {\"mean_ce_approx\": " + std::to_string(ce) +
                ", \"floor_bits\": \"0.5\", \"certified_floor_bits\": null}}";
    }
    return "{\"format\": \"attnprop-influence-report\", \"version\": 1, \"model\": \"" + model +
           "\", \"verdict\": \"passed\", \"explanation\": \"e\", \"slope\": -1, \"rows\": [" + rows + "]}";
}

fs::path write_sweep(const fs::path& root, const std::string& name, const std::string& text) {
    const fs::path d = root / name;
    fs::create_directories(d);
    report::write_file_atomic(d / "report.json", text);
    return d;
}

} // namespace

TEST_CASE("overlay: two models share the axes, one meaning per panel, the reference beside the data") {
    temp_dir t;
    std::vector<report::overlay_input> in = {
        report::read_overlay_input(write_sweep(t.path, "a", sweep("cc-parity", 1.0, 1.0, 0.999))),
        report::read_overlay_input(write_sweep(t.path, "b", sweep("cc-parity-ln0", 0.5, 0.0, 0.06)))};
    for (auto& s : in) s.label = s.model;
    std::vector<std::string> notes;
    const report::overlay_options o;
    const report::plot_figure f = report::overlay_figure(in, o, notes);
    REQUIRE(f.panels.size() == 3);
    CHECK(f.title.empty());
    CHECK(f.caption.empty());
    CHECK(f.panels[0].log_y);
    CHECK(f.panels[2].log_y);
    CHECK(f.panels[2].y_label == "1 − CE (bits)");
    // one series per model in (a) and (b), in the palette's order, plus the reference in (a)
    REQUIRE(f.panels[0].series.size() == 3);
    CHECK(f.panels[0].series[0].name == "cc-parity");
    CHECK(f.panels[0].series[1].name == "cc-parity-ln0");
    CHECK(f.panels[0].series[0].colour != f.panels[0].series[1].colour);
    // the reference falls like 1/n a factor 3 above the model whose slope is closest to -1
    // (cc-parity, slope -1: its data falls exactly like 1/n), so it never lies on that model
    const auto& ref = f.panels[0].series[2];
    REQUIRE(ref.style == report::plot_style::dashed);
    REQUIRE(ref.x.size() == 2);
    CHECK(ref.y[0] * ref.x[0] == Approx(ref.y[1] * ref.x[1]));
    const auto& parity = f.panels[0].series[0];
    for (std::size_t i = 0; i < parity.x.size(); ++i)
        CHECK(ref.y.front() * ref.x.front() / parity.x[i] == Approx(3 * parity.y[i]).epsilon(1e-3));
    // negative control: with the other model's slope closer to -1 the reference follows it
    auto swapped = in;
    swapped[0].slope = 0.0;
    swapped[1].slope = -0.5;
    std::vector<std::string> notes3;
    const auto h = report::overlay_figure(swapped, o, notes3);
    const auto& ref2 = h.panels[0].series[2];
    const auto& ln = h.panels[0].series[1];
    CHECK(ref2.y.front() * ref2.x.front() / ln.x.front() == Approx(3 * ln.y.front()).epsilon(1e-3));
    // the verdicts are in the notes (report.md), not in the image
    bool verdict_noted = false;
    for (const auto& n : notes) verdict_noted |= n.rfind("cc-parity: passed", 0) == 0;
    CHECK(verdict_noted);
    const std::string svg = report::render_svg(f);
    CHECK(svg.find("passed") == std::string::npos);
    CHECK(svg.find("log scale") == std::string::npos);
    const auto problems = test::svg_problems(svg);
    for (const auto& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());

    // asked for: the title and the caption are drawn
    report::overlay_options asked;
    asked.title = "Layer norm against none";
    asked.caption = true;
    std::vector<std::string> notes2;
    const report::plot_figure g = report::overlay_figure(in, asked, notes2);
    const std::string svg2 = report::render_svg(g);
    CHECK(svg2.find("Layer norm against none") != std::string::npos);
    CHECK(svg2.find("passed") != std::string::npos);
    CHECK(test::svg_problems(svg2).empty());
}

TEST_CASE("overlay: folders that hold no influence report are refused, located") {
    temp_dir t;
    auto refused = [&](const std::string& text, const std::string& pointer) {
        const fs::path d = write_sweep(t.path, "x", text);
        try {
            (void)report::read_overlay_input(d);
        } catch (const model::content_error& e) {
            CHECK(e.pointer() == pointer);
            CHECK(e.file() == (d / "report.json").string());
            return;
        }
        FAIL("accepted: " << text);
    };
    refused("{\"format\": \"attnprop-check-report\"}", "/format");
    refused("[1]", "");
    refused("{\"format\": \"attnprop-influence-report\", \"rows\": 3}", "/rows");
    refused("{\"format\": \"attnprop-influence-report\", \"rows\": [{\"n\": 1}]}", "/rows/0/n");
    refused("{\"format\": \"attnprop-influence-report\", \"rows\": [{\"n\": 16, \"max_influence_approx\": \"x\"}]}",
            "/rows/0/max_influence_approx");
    // the control: a well-formed report is read
    CHECK(report::read_overlay_input(write_sweep(t.path, "ok", sweep("m", 1, 1, 0.5))).rows.size() == 4);
    // no report.json at all
    CHECK_THROWS_AS(report::read_overlay_input(t.path / "none"), model::content_error);
}

TEST_CASE("overlay: never written into another run's report folder") {
    temp_dir t;
    const fs::path a = write_sweep(t.path, "a", sweep("m", 1, 1, 0.5));
    report::overlay_options o;
    CHECK_THROWS_AS(report::write_overlay({a}, a, o), model::content_error);
    // into its own folder, again and again
    ::setenv("ATTNPROP_SVG_RENDERER", "", 1);
    const auto r = report::write_overlay({a}, t.path / "fig", o);
    const auto r2 = report::write_overlay({a}, t.path / "fig", o);
    ::unsetenv("ATTNPROP_SVG_RENDERER");
    CHECK(r2.files == r.files);
    CHECK(fs::is_regular_file(t.path / "fig" / "influence.svg"));
    CHECK(fs::is_regular_file(t.path / "fig" / "report.md"));
}
