// attnprop plot: influence report folders overlaid on shared axes, as SVG, PDF and PNG.
#include "cli/commands.hpp"
#include "report/overlay.hpp"

#include <iostream>

namespace attnprop::cli {

namespace {

class plot_command final : public command {
public:
    explicit plot_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "plot", "Draw report folders of attnprop influence, simulate or restrict (--out DIR) on "
                    "shared axes, one colour per folder with a legend, as SVG, PDF and PNG for "
                    "papers; the title, verdicts and notes go into report.md");
        app_->add_option("dirs", dirs_, "Report folders of one command: influence, simulate or restrict")
            ->required();
        app_->add_option("--out", out_, "The folder of the figures and report.md")
            ->capture_default_str();
        app_->add_option("--name", stem_, "The figures' file name without extension (default: "
                                          "influence, beta for simulate folders, restrict)");
        app_->add_option("--title", title_, "A title drawn at the top of the image (default: none; "
                                            "report.md has one)");
        app_->add_flag("--caption", caption_, "Also draw the verdicts and notes under the image");
        app_->add_option("--width", width_, "The image's width in pixels (the PNG has twice as many)")
            ->check(CLI::Range(360.0, 2000.0))
            ->capture_default_str();
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& /*made_by*/) override {
        if (stem_given() && (stem_.empty() || stem_.find('/') != std::string::npos || stem_[0] == '.'))
            throw usage_error("--name: a file name without a folder, got '" + stem_ + "'");
        std::vector<std::filesystem::path> dirs(dirs_.begin(), dirs_.end());
        report::overlay_options o;
        o.stem = stem_;
        o.title = title_;
        o.caption = caption_;
        o.width = width_;
        const report::overlay_result r = report::write_overlay(dirs, out_, o);
        std::cout << "wrote";
        for (const auto& f : r.files) std::cout << " " << (std::filesystem::path(out_) / f).string();
        std::cout << " and " << (std::filesystem::path(out_) / "report.md").string() << "\n";
        for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
        return exit_ok;
    }

private:
    bool stem_given() const { return app_->count("--name") > 0; }

    CLI::App* app_ = nullptr;
    std::vector<std::string> dirs_;
    std::string out_ = "out/plot", stem_, title_;
    bool caption_ = false;
    double width_ = 640;
};

} // namespace

std::unique_ptr<command> make_plot_command(CLI::App& parent) {
    return std::make_unique<plot_command>(parent);
}

} // namespace attnprop::cli
