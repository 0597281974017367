// attnprop simulate: a hard (or average-hard) model against its soft counterpart at inverse
// temperatures beta(n): exact score gaps, measured and certified attention leaks, layer
// differences with a propagated bound, readout agreement, and the temperatures and lengths the
// margins certify.
#include "cli/commands.hpp"
#include "cli/evaluate.hpp"
#include "cli/out_dir.hpp"
#include "model/model_file.hpp"
#include "report/simulate_report.hpp"

#include <iostream>

#include <unistd.h>

namespace attnprop::cli {

namespace {

using numeric::rational;

class simulate_command final : public command {
public:
    explicit simulate_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "simulate", "Compare a hard or average-hard model with its softmax counterpart at "
                        "inverse temperatures beta(n): exact score margins and ties, the measured "
                        "attention leak against its certified bound, layer differences with a "
                        "propagated bound, readout agreement, and the smallest certified beta");
        add_model_option(app_, model_);
        app_->add_option("--beta", betas_,
                         "Inverse temperature of the soft counterpart, a number or a formula in n "
                         "(\"100\", \"2*log(n)\", \"n*log(n)\"); repeatable")
            ->required();
        app_->add_option("--n", n_text_,
                         "Lengths n (eos included): one value, a list 16,64 or a range 16:4096:x2")
            ->required();
        app_->add_option("--inputs", inputs_,
                         "Random inputs per n, uniform over the alphabet (default 4, or 0 with "
                         "--pattern or --cube)")
            ->transform(decimal_integer())->check(CLI::Range(0, 10000));
        app_->add_option("--pattern", patterns_,
                         "An input given by a word repeated to length n - 1 (\"0\", \"10\"); "
                         "repeatable; with a pattern, --inputs defaults to 0");
        app_->add_flag("--cube", cube_,
                       "Every input of length n - 1 (refused above 4096 inputs per n)");
        add_seed_option(app_, seed_, "Seed of the random inputs");
        add_precision_option(app_, precision_, "of the Arb balls of the soft model")
            ->capture_default_str();
        app_->add_option("--precision-cap", precision_cap_,
                         "A beta left undecided (a comparison with its bound, or the soft "
                         "readout) is measured again at doubled precision, up to BITS")
            ->transform(decimal_integer())->check(CLI::Range(numeric::min_precision_bits, numeric::max_precision_bits))
            ->capture_default_str();
        app_->add_flag("--interval", interval_,
                       "Measure the soft model with certified double intervals first (fast); "
                       "what they leave undecided is measured again in Arb balls");
        app_->add_option("--out", out_,
                         "Report directory (default out/simulate-<model>-<seed>); refused when it "
                         "holds a report made with other options");
        app_->add_flag("--no-every-input", no_every_input_,
                       "Do not decide the margins and the certified beta over every input of each n "
                       "(docs/theory.md, section 4.5)");
        app_->add_flag("--figure-text", figure_text_,
                       "Draw each figure's title and caption in the image too (by default they are in report.md only)");
        app_->add_flag("--force", force_, "Replace a report in --out made with other options");
        app_->add_flag("--json", json_, "Print JSON instead of text");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& invocation) override {
        report::simulate_request q;
        q.betas = betas_;
        q.ns = parse_length_list(n_text_);
        q.patterns = patterns_;
        q.cube = cube_;
        q.random_inputs = inputs_ >= 0 ? inputs_ : (patterns_.empty() && !cube_ ? 4 : 0);
        q.seed = seed_;
        q.precision = precision_;
        q.precision_cap = precision_cap_;
        q.interval = interval_;
        q.every_input = !no_every_input_;
        auto path = resolve_model(model_);
        const model::model<rational> m = model::read_model_file(path.string());
        (void)report::check_simulate(m, q); // before the folder is claimed: bad usage is exit 2
        report::provenance made_by = invocation;
        const std::filesystem::path dir = out_dir();
        made_by.set_option("--out", dir.string());
        const out_policy policy = simulate_out_policy();
        if (claim_out_dir(dir, made_by, policy, force_) == out_found::replaced) remove_owned(dir, policy);
        prepare_out_dir(dir); // before the work: results are never lost for want of a folder
        set_activity("simulating " + m.name + " at n = " + n_text_);
        if (::isatty(2) != 0) q.on_length = [](long n) { std::cerr << "simulate: n = " << n << " done\n"; };
        const report::simulate_run run = report::run_simulate(m, q);
        const std::string not_written =
            try_write([&] { report::write_simulate_report(dir, run, made_by, figure_text_); });
        const int code = report::findings(run) ? exit_failed : exit_ok;
        if (json_) {
            json::value j = report::simulate_to_json(run, made_by);
            j.set("report_dir", not_written.empty() ? json::value::string(dir.string())
                                                    : json::value::null_value());
            std::cout << json::dump(j, 2) << "\n";
        } else {
            std::cout << report::simulate_to_text(run);
            if (not_written.empty()) {
                std::cout << "report: " << dir.string() << "/report.md (report.json, simulate.csv";
                for (const char* f : {"leak.svg", "leak.png", "beta.svg", "beta.png"})
                    if (std::filesystem::exists(dir / f)) std::cout << ", " << f;
                std::cout << ")\n";
            }
        }
        return not_written.empty() ? code : report_not_written(code, not_written);
    }

private:
    static out_policy simulate_out_policy() {
        out_policy p;
        p.command = "simulate";
        p.markers = {{"report.json", "attnprop-simulate-report"}};
        p.ignored = {"--out", "--json", "--force", "--figure-text"};
        p.owned_files = {"report.json", "report.md", "simulate.csv", "leak.svg", "leak.png", "beta.svg", "beta.png"};
        return p;
    }

    std::filesystem::path out_dir() const {
        if (!out_.empty()) return out_;
        return std::filesystem::path("out") /
               ("simulate-" + std::filesystem::path(model_).stem().string() + "-" +
                std::to_string(seed_));
    }

    CLI::App* app_ = nullptr;
    std::string model_, n_text_, out_;
    std::vector<std::string> betas_, patterns_;
    int inputs_ = -1;
    bool cube_ = false, interval_ = false, json_ = false, force_ = false, no_every_input_ = false,
         figure_text_ = false;
    std::uint64_t seed_ = 1;
    long precision_ = 128, precision_cap_ = 4096;
};

} // namespace

std::unique_ptr<command> make_simulate_command(CLI::App& parent) {
    return std::make_unique<simulate_command>(parent);
}

} // namespace attnprop::cli
