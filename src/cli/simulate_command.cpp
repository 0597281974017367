// attnprop simulate: a hard (or average-hard) model against its soft counterpart at inverse
// temperatures beta(n): exact score gaps, measured and certified attention leaks, layer
// differences with a propagated bound, readout agreement, and the temperatures and lengths the
// margins certify.
#include "attention/work.hpp"
#include "cli/commands.hpp"
#include "cli/evaluate.hpp"
#include "cli/out_dir.hpp"
#include "model/model_file.hpp"
#include "report/simulate_report.hpp"

#include <cmath>
#include <iostream>
#include <random>

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
        app_->add_flag("--force", force_, "Replace a report in --out made with other options");
        app_->add_flag("--json", json_, "Print JSON instead of text");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& invocation) override {
        const std::vector<long> ns = parse_length_list(n_text_);
        auto path = resolve_model(model_);
        model::model<rational> m = model::read_model_file(path.string());
        if (!model::info(m.attention).simulate_source)
            throw model::content_error(m.file, "/attention",
                                       "simulate needs a hard or average-hard model (its soft "
                                       "counterpart is built from it); " + m.name + " is " +
                                           model::to_string(m.attention));
        std::vector<model::expr> betas;
        for (const auto& b : betas_) {
            try {
                betas.push_back(model::expr::parse(b));
            } catch (const model::expr_error& e) {
                throw usage_error("--beta: bad formula '" + b + "': " + e.what());
            }
            if (betas.back().uses_i())
                throw usage_error("--beta: '" + b + "' is a formula in n alone; i is not defined");
        }
        for (const auto& p : patterns_) {
            if (p.empty()) throw usage_error("--pattern: the pattern is empty");
            (void)model::parse_input(m, p); // symbols outside the alphabet: exit 2
        }
        const std::size_t sigma = m.sigma.symbols.size();
        const int random_inputs =
            inputs_ >= 0 ? inputs_ : (patterns_.empty() && !cube_ ? 4 : 0);
        if (cube_)
            for (long n : ns) {
                double count = std::pow(static_cast<double>(sigma), static_cast<double>(n - 1));
                if (count > 4096)
                    throw usage_error("--cube: " + std::to_string(sigma) + "^" +
                                      std::to_string(n - 1) + " inputs at n = " +
                                      std::to_string(n) + " exceed the budget of 4096 per n");
            }
        if (random_inputs == 0 && patterns_.empty() && !cube_)
            throw usage_error("no inputs: give --inputs K, --pattern WORD or --cube");

        report::simulate_run run;
        run.model_name = m.name;
        run.attention = model::to_string(m.attention);
        run.betas = betas_;
        run.precision = precision_;
        run.scalar = interval_ ? numeric::scalar_traits<numeric::dinterval>::name
                               : numeric::scalar_traits<numeric::arb_ball>::name;
        run.input_note = input_note(random_inputs);
        analysis::simulate_options opt;
        opt.precision = precision_;
        opt.interval = interval_;
        if (precision_cap_ < precision_)
            throw usage_error("--precision-cap (" + std::to_string(precision_cap_) +
                              ") must be at least --precision (" + std::to_string(precision_) + ")");
        opt.precision_cap = precision_cap_;
        run.precision_cap = precision_cap_;
        for (long n : ns) {
            model::check_length(m, n);
            attention::check_forward_work(m, static_cast<std::size_t>(n), precision_);
            // The bounds assume beta(n) > 0 (a non-positive beta would not concentrate on the
            // maximal scores); decided on a ball, so a beta that is not certainly positive is
            // refused rather than guessed.
            const numeric::context bctx{precision_};
            for (std::size_t b = 0; b < betas.size(); ++b) {
                numeric::arb_ball v;
                try {
                    v = betas[b].eval<numeric::arb_ball>(1, n, bctx);
                } catch (const numeric::numeric_error& e) {
                    throw usage_error("--beta '" + betas_[b] + "' has no value at n = " +
                                      std::to_string(n) + ": " + e.what());
                }
                if (numeric::sign(v, bctx) != numeric::order::greater)
                    throw usage_error("--beta '" + betas_[b] + "' is not certainly positive at n = " +
                                      std::to_string(n));
            }
        }
        report::provenance made_by = invocation;
        const std::filesystem::path dir = out_dir();
        made_by.set_option("--out", dir.string());
        const out_policy policy = simulate_out_policy();
        if (claim_out_dir(dir, made_by, policy, force_) == out_found::replaced) remove_owned(dir, policy);
        prepare_out_dir(dir); // before the work: results are never lost for want of a folder
        set_activity("simulating " + m.name + " at n = " + n_text_);
        const bool tty = ::isatty(2) != 0;

        for (long n : ns) {
            std::vector<std::string> inputs;
            for (const auto& p : patterns_) {
                std::string w;
                while (static_cast<long>(w.size()) < n - 1) w += p;
                w.resize(static_cast<std::size_t>(n - 1));
                inputs.push_back(std::move(w));
            }
            if (cube_) {
                const long count = std::lround(std::pow(static_cast<double>(sigma),
                                                        static_cast<double>(n - 1)));
                for (long c = 0; c < count; ++c) {
                    std::string w;
                    long v = c;
                    for (long t = 0; t < n - 1; ++t) {
                        w += m.sigma.symbols[static_cast<std::size_t>(v % static_cast<long>(sigma))];
                        v /= static_cast<long>(sigma);
                    }
                    inputs.push_back(std::move(w));
                }
            }
            std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(n));
            for (int t = 0; t < random_inputs; ++t) {
                std::string w;
                for (long j = 0; j + 1 < n; ++j) w += m.sigma.symbols[rng() % sigma];
                inputs.push_back(std::move(w));
            }
            run.rows.push_back(analysis::simulate_at(m, betas, n, inputs, opt));
            if (!no_every_input_) {
                // Every input at n: the margins, ties and readout slack, the smallest certified
                // beta, and each --beta's yes/no.
                const numeric::context ctx{precision_};
                report::every_input_row e;
                e.margins = analysis::every_input_margins_at(m, n, ctx);
                for (const auto& beta : betas) {
                    e.certified.push_back(analysis::certifies_every_input(e.margins, m, beta, false, ctx));
                    e.certified_off.push_back(analysis::certifies_every_input(e.margins, m, beta, true, ctx));
                }
                run.every_input.push_back(std::move(e));
            }
            if (tty) std::cerr << "simulate: n = " << n << " done\n";
        }
        // Constant temperatures: how far in n they stay certified.
        for (std::size_t b = 0; b < betas.size(); ++b) {
            if (!betas[b].is_constant() || run.rows.empty()) continue;
            report::certified_length l;
            l.beta = betas_[b];
            for (const auto& row : run.rows) {
                if (row.betas[b].certified != row.inputs.size()) break;
                l.in_list = row.n;
            }
            const auto& last = run.rows.back();
            l.extrapolated_from = last.n;
            const numeric::context ctx{precision_};
            l.extrapolated = analysis::largest_certified_n(
                last.data, betas[b].eval<numeric::arb_ball>(1, last.n, ctx), ctx);
            run.lengths.push_back(std::move(l));
        }
        const std::string not_written =
            try_write([&] { report::write_simulate_report(dir, run, made_by); });
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
    std::string input_note(int random_inputs) const {
        std::string s;
        for (const auto& p : patterns_) s += (s.empty() ? "" : ", ") + ("pattern \"" + p + "\"");
        if (cube_) s += (s.empty() ? "" : ", ") + std::string("every input");
        if (random_inputs > 0)
            s += (s.empty() ? "" : ", ") + std::to_string(random_inputs) +
                 " random input" + (random_inputs == 1 ? "" : "s") + " (seed " +
                 std::to_string(seed_) + ")";
        return s + " per n";
    }

    static out_policy simulate_out_policy() {
        out_policy p;
        p.command = "simulate";
        p.markers = {{"report.json", "attnprop-simulate-report"}};
        p.ignored = {"--out", "--json", "--force"};
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
    bool cube_ = false, interval_ = false, json_ = false, force_ = false, no_every_input_ = false;
    std::uint64_t seed_ = 1;
    long precision_ = 128, precision_cap_ = 4096;
};

} // namespace

std::unique_ptr<command> make_simulate_command(CLI::App& parent) {
    return std::make_unique<simulate_command>(parent);
}

} // namespace attnprop::cli
