// attnprop influence: one-symbol influence of a soft model across a ladder of n (Hahn's
// Lemma 5), its bounds, and the cross-entropy corollary.
#include "analysis/sweep.hpp"
#include "cli/commands.hpp"
#include "cli/out_dir.hpp"
#include "model/model_file.hpp"
#include "report/influence_report.hpp"

#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace attnprop::cli {

namespace {

namespace fs = std::filesystem;

class influence_command final : public command {
public:
    explicit influence_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "influence", "Hahn's Lemma 5 across n: the largest one-symbol change of y_n^(L), "
                         "n times it, the a-priori bound K(n)/n and the a-posteriori pair bound, "
                         "the probability change, the slope against n, and the cross-entropy "
                         "corollary on PARITY or FIRST");
        add_model_option(app_, model_);
        app_->add_option("--n", n_text_,
                         "Lengths (eos included): one value, a list 16,64 or a range 16:4096:x2")
            ->required();
        app_->add_option("--inputs", inputs_, "Random inputs per n")
            ->check(CLI::Range(1, 100000))
            ->capture_default_str();
        app_->add_option("--positions", positions_text_,
                         "Positions changed per input: all, or K evenly spread ones (first and "
                         "last included)")
            ->capture_default_str();
        app_->add_option("--language", language_,
                         "Sample inputs from this language (parity, first, majority, "
                         "contains-one, 1dyck, 2dyck); parity and first also give the "
                         "cross-entropy corollary");
        add_precision_option(app_, precision_, "Working precision in bits (mpfr, ball)");
        app_->add_option("--scalar,-s", scalar_, "Scalar of the measurements: ball, mpfr, double")
            ->check(CLI::IsMember({"ball", "mpfr", "double"}))
            ->capture_default_str();
        add_seed_option(app_, seed_, "Seed of the inputs")->capture_default_str();
        app_->add_option("--threads", threads_, "Worker threads (0: hardware concurrency)")
            ->check(CLI::Range(0, 256))
            ->capture_default_str();
        app_->add_option("--bound-divisor", divisor_,
                         "Negative control: divide every bound by D (a sweep that must fail)")
            ->check(CLI::Range(1L, 1L << 40))
            ->capture_default_str();
        app_->add_option("--posterior-max-n", posterior_max_n_,
                         "Compute the a-posteriori pair bound (O(n^2) per pair) up to this n only; 0: never")
            ->check(CLI::Range(0L, 1L << 40))
            ->capture_default_str();
        app_->add_option("--precision-cap", precision_cap_,
                         "Balls: measure a row again at doubled precision, up to BITS, while a bound "
                         "comparison is undecided")
            ->check(CLI::Range(16L, 1L << 20))
            ->capture_default_str();
        app_->add_option("--out", out_,
                         "Report directory (default out/influence-<model>-<seed>); a report with "
                         "the same fingerprint is resumed, one made with other options refused, "
                         "and so is a folder that cannot be written, before the sweep");
        app_->add_flag("--force", force_, "Replace a report in --out made with other options");
        app_->add_flag("--json", json_, "Print JSON instead of text");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& invocation) override {
        analysis::sweep_options o;
        o.ns = parse_length_list(n_text_);
        o.inputs = static_cast<std::size_t>(inputs_);
        if (positions_text_ == "all") {
            o.positions = 0;
        } else {
            std::size_t used = 0;
            long k = 0;
            try {
                k = std::stol(positions_text_, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != positions_text_.size() || k < 1)
                throw usage_error("--positions: 'all' or a positive integer, got '" + positions_text_ + "'");
            o.positions = static_cast<std::size_t>(k);
        }
        if (!language_.empty()) {
            o.language = lang::parse_language(language_);
            if (!o.language)
                throw usage_error("unknown language '" + language_ +
                                  "' (known: parity, first, majority, contains-one, 1dyck, 2dyck)");
        }
        o.precision = precision_;
        o.scalar = scalar_ == "mpfr" ? analysis::sweep_scalar::mpfr
                   : scalar_ == "double" ? analysis::sweep_scalar::dbl
                                         : analysis::sweep_scalar::ball;
        o.seed = seed_;
        o.threads = static_cast<unsigned>(threads_);
        o.bound_divisor = divisor_;
        o.posterior_max_n = posterior_max_n_;
        if (precision_cap_ < precision_)
            throw usage_error("--precision-cap (" + std::to_string(precision_cap_) +
                              ") must be at least --precision (" + std::to_string(precision_) + ")");
        o.precision_cap = precision_cap_;

        const fs::path path = resolve_model(model_);
        const model::model<numeric::rational> m = model::read_model_file(path.string());
        if (m.attention != model::attention_kind::soft)
            throw usage_error("influence needs a soft-attention model; " + m.name + " is hard");
        for (long n : o.ns) model::check_length(m, n);

        std::string bytes;
        {
            std::ifstream f(path, std::ios::binary);
            std::stringstream ss;
            ss << f.rdbuf();
            bytes = ss.str();
        }
        report::influence_meta meta;
        meta.model_file = model_;
        meta.fingerprint = report::influence_fingerprint(bytes, o);
        const fs::path dir = out_dir();
        meta.made_by = invocation;
        meta.made_by.set_option("--out", dir.string());
        const out_policy policy = influence_out_policy();
        if (claim_out_dir(dir, meta.made_by, policy, force_, meta.fingerprint) == out_found::replaced)
            remove_owned(dir, policy);
        prepare_out_dir(dir); // before the work: a sweep is never lost for want of a folder
        std::string note;
        o.reuse = report::read_resume_rows(dir, meta.fingerprint, &note);
        if (!note.empty()) std::cerr << "influence: " << note << "\n";
        const bool tty = ::isatty(2) != 0;
        progress_line progress;
        std::vector<analysis::sweep_row> done;
        std::string not_written; // the first write that failed; the sweep goes on without it
        o.on_row = [&](const analysis::sweep_row& row) {
            done.push_back(row);
            if (!row.reused && not_written.empty())
                not_written = try_write(
                    [&] { report::write_resume_rows(dir, meta.fingerprint, done, meta.made_by); });
            progress.clear();
            if (tty)
                std::cerr << "influence: n = " << row.n << (row.reused ? " reused" : " done")
                          << (row.undefined ? ", undefined" : ", max influence " + row.max_influence)
                          << "\n";
        };
        o.on_progress = [&](long n, std::size_t finished, std::size_t total) {
            progress.show("influence: n = " + std::to_string(n) + ": " + std::to_string(finished) +
                          "/" + std::to_string(total) + " inputs measured");
        };
        meta.options = o;
        set_activity("measuring the influence of " + m.name + " at n = " + n_text_);
        stop_on_interrupt();
        analysis::sweep_result r;
        try {
            r = analysis::influence_sweep(m, o);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        progress.clear();
        if (!r.not_measured.empty() && r.rows.empty()) {
            std::cerr << "influence: interrupted before the first n finished; nothing written\n";
            return exit_interrupted;
        }
        std::size_t reused = 0;
        for (const auto& row : r.rows) reused += row.reused ? 1 : 0;
        if (not_written.empty())
            not_written = try_write([&] { report::write_influence_report(dir, r, meta); });
        int code = r.verdict == analysis::sweep_verdict::undefined ? exit_undefined : exit_ok;
        fs::path cx;
        if (r.verdict == analysis::sweep_verdict::fails) {
            code = exit_failed;
            for (const auto& row : r.rows)
                if (!row.witness_bound.empty()) {
                    cx = dir / ("counterexample-n" + std::to_string(row.n));
                    if (not_written.empty())
                        not_written =
                            try_write([&] { report::write_influence_counterexample(cx, m, row, meta); });
                    break;
                }
            if (cx.empty())
                for (const auto& row : r.rows)
                    if (row.cross_entropy && row.cross_entropy->check == analysis::comparison::above) {
                        cx = dir / ("counterexample-n" + std::to_string(row.n));
                        if (not_written.empty())
                            not_written = try_write(
                                [&] { report::write_cross_entropy_counterexample(cx, m, row, meta); });
                        break;
                    }
        }
        if (!not_written.empty()) cx.clear(); // nothing to point at
        if (json_) {
            json::value j = report::influence_to_json(r, meta);
            j.set("report_dir", json::value::string(dir.string()));
            j.set("counterexample", cx.empty() ? json::value::null_value()
                                               : json::value::string(cx.string()));
            std::cout << json::dump(j, 2) << "\n";
        } else {
            std::cout << report::influence_to_text(r, meta);
            if (reused) std::cout << "reused " << reused << " rows from " << (dir / "rows.json").string() << "\n";
            if (!cx.empty())
                std::cout << "counterexample written to " << cx.string() << " (attnprop replay "
                          << cx.string() << ")\n";
            if (not_written.empty()) {
                std::cout << "report: " << dir.string() << "/report.md (report.json, influence.csv";
                for (const char* f : {"influence.svg", "influence.png", "cross_entropy.svg", "cross_entropy.png"})
                    if (std::filesystem::exists(dir / f)) std::cout << ", " << f;
                std::cout << ")\n";
            }
        }
        if (!r.not_measured.empty() && code != exit_failed) {
            std::cerr << "influence: interrupted; the report holds the " << r.rows.size()
                      << " lengths finished (rerun to resume from rows.json)\n";
            code = exit_interrupted;
        }
        return not_written.empty() ? code : report_not_written(code, not_written);
    }

private:
    /// Same report: the same fingerprint (model file content and every option that changes
    /// rows; the n list and --threads are not part of it), so the run resumes.
    static out_policy influence_out_policy() {
        out_policy p;
        p.command = "influence";
        p.markers = {{"rows.json", "attnprop-influence-rows"}, {"report.json", "attnprop-influence-report"}};
        p.ignored = {"--n", "--threads", "--json", "--out", "--force"};
        p.owned_files = {"report.json",       "report.md",         "influence.csv", "influence.svg",
                         "influence.png",     "cross_entropy.svg", "cross_entropy.png", "rows.json"};
        p.owned_folder_prefixes = {"counterexample-n"};
        return p;
    }

    fs::path out_dir() const {
        if (!out_.empty()) return out_;
        return fs::path("out") /
               ("influence-" + fs::path(model_).stem().string() + "-" + std::to_string(seed_));
    }

    CLI::App* app_ = nullptr;
    std::string model_, n_text_, positions_text_ = "8", language_, scalar_ = "ball", out_;
    int inputs_ = 4, threads_ = 0;
    long precision_ = 128, divisor_ = 1, posterior_max_n_ = 4096, precision_cap_ = 1024;
    std::uint64_t seed_ = 1;
    bool json_ = false, force_ = false;
};

} // namespace

std::unique_ptr<command> make_influence_command(CLI::App& parent) {
    return std::make_unique<influence_command>(parent);
}

} // namespace attnprop::cli
