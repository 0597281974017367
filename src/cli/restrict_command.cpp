// attnprop restrict: Hahn's hard-attention restriction for a concrete model and n, its
// certificate, and a language counterexample.
#include "attention/work.hpp"
#include "cli/evaluate.hpp"
#include "cli/commands.hpp"
#include "cli/out_dir.hpp"
#include "cli/unit_journal.hpp"
#include "dist/units.hpp"
#include "dist/world.hpp"
#include "model/model_file.hpp"
#include "numeric/interrupt.hpp"
#include "report/restrict_report.hpp"
#include "report/sha256.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <optional>

namespace attnprop::cli {

namespace {

using numeric::rational;

class restrict_command final : public command {
public:
    explicit restrict_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "restrict", "Hahn's Theorem 1 for a hard model: build a restriction, certify the "
                        "dependency set of the output against the exact forward pass, and find "
                        "a language counterexample");
        add_model_option(app_, model_);
        app_->add_option("--n", n_text_,
                         "Length n (eos included): one value, a list 16,64 or a range 16:4096:x2")
            ->required();
        app_->add_option("--free-fraction", c_text_,
                         "C: keep at least ceil(C n) inputs free, 0 < C < 1 (exact: 0.5, 1/2)")
            ->capture_default_str();
        app_->add_option("--language", language_,
                         "parity, 1dyck or 2dyck (also first, contains-one, majority)");
        add_seed_option(app_, seed_, "Seed of the random trials, samples and pairs")
            ->capture_default_str();
        app_->add_option("--trials", trials_,
                         "Random restrictions tried before the greedy (Stage-3 analogue; 0: none)")
            ->check(CLI::Range(0, 1000))
            ->capture_default_str();
        app_->add_option("--samples", samples_,
                         "Random inputs checked against the exact forward pass (when not "
                         "exhaustive)")
            ->check(CLI::Range(2, 100000))
            ->capture_default_str();
        app_->add_flag("--fan-out", fan_out_, "Run the Stage-1 fan-out pass before each layer");
        app_->add_option("--threads", threads_, "Worker threads (0: up to 2)")
            ->check(CLI::Range(0, 64))
            ->capture_default_str();
        app_->add_option("--out", out_,
                         "Report directory (default out/restrict-<model>-<seed>, written for "
                         "several n or a counterexample); refused before the run when it holds a "
                         "report made with other options or cannot be written; the lengths "
                         "journaled by an unfinished run of the same command are reused");
        app_->add_flag("--force", force_, "Replace a report in --out made with other options");
        app_->add_flag("--json", json_, "Print JSON instead of text");
    }
    CLI::App* app() override { return app_; }
    bool distributed() const override { return true; }

    int run(const report::provenance& invocation) override {
        const std::vector<long> ns = parse_length_list(n_text_);
        if (ns.size() == 1) single_n_ = ns.front();
        std::string err;
        auto c = numeric::parse_rational(c_text_, &err);
        if (!c) throw usage_error("--free-fraction: '" + c_text_ + "' is not a number");
        if (!(*c > 0 && *c < 1))
            throw usage_error("--free-fraction must lie strictly between 0 and 1, got " + c_text_);
        std::optional<lang::language> lang;
        if (!language_.empty()) {
            lang = lang::parse_language(language_);
            if (!lang)
                throw usage_error("unknown language '" + language_ +
                                  "' (known: parity, 1dyck, 2dyck, first, contains-one, majority)");
        }
        auto path = resolve_model(model_);
        model::model<rational> m = model::read_model_file(path.string());
        if (m.attention == model::attention_kind::average_hard)
            throw usage_error("restrict needs a unique-hard model (Hahn's Theorem 1 is about the "
                              "leftmost maximal score); " + m.name + " uses average-hard "
                              "attention, which weighs every maximal position and is not covered");
        if (m.attention != model::attention_kind::hard)
            throw usage_error("restrict needs a hard-attention model; " + m.name + " is soft");
        if (!m.out.is_recognizer())
            throw usage_error("restrict needs a recognizer (threshold or map readout)");
        if (lang) (void)analysis::language_symbols(m, *lang);
        for (long n : ns) {
            model::check_length(m, n);
            attention::check_forward_work(m, static_cast<std::size_t>(n)); // all n, before any work
        }

        analysis::language_options lo;
        lo.restrict.free_fraction = *c;
        lo.restrict.seed = seed_;
        lo.restrict.trials = trials_;
        lo.restrict.fan_out_pass = fan_out_;
        lo.restrict.threads = threads_;
        lo.certify.seed = seed_;
        lo.certify.samples = samples_;
        lo.certify.threads = threads_;
        // One length: the restriction, its certificate and the language run. It depends on
        // the model, the options and n alone: the unit of a run over MPI ranks.
        auto compute = [&](long n) {
            report::restrict_run r;
            r.model_name = m.name;
            r.n = n;
            r.params = {{"n", n},
                        {"seed", static_cast<long>(seed_)},
                        {"c_num", numerator(*c).convert_to<long>()},
                        {"c_den", denominator(*c).convert_to<long>()},
                        {"trials", trials_},
                        {"samples", samples_},
                        {"fan_out", fan_out_ ? 1 : 0}};
            if (lang) {
                r.params["language"] = static_cast<long>(*lang);
                auto run = analysis::run_language(m, n, *lang, lo);
                r.restr = std::move(run.restr);
                r.cert = std::move(run.cert);
                r.language = std::move(run.result);
            } else {
                r.restr = analysis::build_restriction(m, n, lo.restrict);
                r.cert = analysis::certify(m, r.restr, lo.certify);
            }
            return r;
        };
        std::string model_bytes;
        {
            std::ifstream f(path, std::ios::binary);
            std::stringstream bytes;
            bytes << f.rdbuf();
            model_bytes = bytes.str();
        }
        std::string key = report::sha256_hex(model_bytes) + " n";
        for (long n : ns) key += " " + std::to_string(n);
        auto unit = [&](std::size_t i) {
            const auto t0 = std::chrono::steady_clock::now();
            report::restrict_run r = compute(ns[i]);
            return dist::encode_restrict_run(
                r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        };
        if (dist::launched() && !dist::is_root()) {
            // A worker computes the lengths rank 0 hands it; rank 0 writes and prints everything.
            stop_on_interrupt();
            dist::run_units(key, {}, unit, {});
            return exit_ok;
        }

        report::provenance made_by = invocation;
        made_by.set_option("--out", out_dir().string());
        // The folder is claimed before the first file goes into it: at the start when the
        // report is certain (several n, or --out), else at the first counterexample.
        const out_policy policy = restrict_out_policy();
        std::optional<out_found> claim;
        bool prepared = false;
        auto prepare_out = [&] {
            if (prepared) return;
            if (!claim) claim = claim_out_dir(out_dir(), made_by, policy, force_);
            // A replaced report goes whole; the same options rewrite the same files.
            if (*claim == out_found::replaced) remove_owned(out_dir(), policy);
            prepared = true;
        };
        // The journal of a folder claimed at the start: the lengths an earlier run of the same
        // command finished are reused (a single length without --out writes no folder to hold it).
        std::optional<unit_journal> journal;
        std::vector<std::optional<std::pair<report::restrict_run, double>>> reused(ns.size());
        if (ns.size() > 1 || !out_.empty()) {
            claim = claim_out_dir(out_dir(), made_by, policy, force_);
            prepare_out_dir(out_dir()); // before the work: a run is never lost for want of a folder
            // A replaced report goes before the journal is written beside it: a folder never
            // holds the journal of one run and the files of a report made with other options.
            prepare_out();
            std::vector<std::string> names;
            for (long n : ns) names.push_back(std::to_string(n));
            journal.emplace(out_dir(), "restrict",
                            journal_fingerprint("restrict", made_by, policy.ignored, model_bytes, names),
                            made_by, *claim == out_found::same_report);
            reused = reuse(*journal, ns);
            std::size_t count = 0;
            for (const auto& r : reused) count += r ? 1 : 0;
            if (count > 0)
                std::cerr << "restrict: reused " << count << " of " << ns.size() << " lengths from "
                          << journal->path().string() << "\n";
        } else {
            check_out_dir_creatable(out_dir()); // written only if a counterexample is found
        }
        std::string not_written; // the first write that failed; the run goes on without files
        auto write = [&](const std::function<void()>& w) {
            if (not_written.empty()) not_written = try_write(w);
            return not_written.empty();
        };

        std::vector<report::restrict_run> runs;
        std::vector<long> not_computed; // after a stop request (SIGINT)
        int code = exit_ok;
        stop_on_interrupt();
        progress_line progress;
        // Prints one length's result and writes its counterexamples, in n order.
        auto emit = [&](report::restrict_run r, double secs, bool was_reused) {
            if (!json_) {
                if (ns.size() > 1) std::cout << "== n = " << r.n << "\n";
                std::cout << report::restrict_to_text(m, r);
                if (was_reused)
                    std::cerr << "restrict: n = " << r.n << " reused (done in " << secs << " s)\n";
                else
                    std::cerr << "restrict: n = " << r.n << " done in " << secs << " s\n";
            }
            const long n = r.n;
            if (r.cert.complete && !r.cert.valid) {
                code = exit_failed;
                auto dir = out_dir() / ("counterexample-n" + std::to_string(n));
                if (write([&] {
                        prepare_out();
                        report::write_restrict_counterexample(dir, m, r, made_by);
                    }) &&
                    !json_)
                    std::cout << "counterexample written to " << dir.string()
                              << " (attnprop replay " << dir.string() << ")\n";
            }
            if (r.language && r.language->verdict == analysis::language_verdict::counterexample) {
                auto dir = out_dir() / ("language-counterexample-n" + std::to_string(n));
                if (write([&] {
                        prepare_out();
                        report::write_language_counterexample(dir, m, r, made_by);
                    }) &&
                    !json_)
                    std::cout << "language counterexample written to " << dir.string()
                              << " (attnprop replay " << dir.string()
                              << " exits 1 while the model misclassifies it)\n";
            }
            runs.push_back(std::move(r));
        };
        if (dist::launched()) {
            // Over MPI ranks: the largest n first; printed and written in n order as soon as
            // every smaller length has arrived.
            std::vector<std::size_t> order(ns.size());
            for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return ns[a] > ns[b]; });
            std::vector<bool> from_journal(ns.size());
            for (std::size_t i = 0; i < ns.size(); ++i) from_journal[i] = reused[i].has_value();
            std::erase_if(order, [&](std::size_t i) { return from_journal[i]; });
            auto arrived = std::move(reused); // a restriction's tables can be large: not copied
            std::size_t next = 0;
            auto emit_ready = [&] {
                for (; next < ns.size() && arrived[next]; ++next)
                    emit(std::move(arrived[next]->first), arrived[next]->second, from_journal[next]);
            };
            emit_ready();
            dist::run_units(key, order, unit, [&](std::size_t i, const std::string& bytes) {
                double secs = 0;
                arrived[i].emplace(dist::decode_restrict_run(bytes, &secs), secs);
                if (journal) journal->record(std::to_string(ns[i]), bytes);
                emit_ready();
            });
            for (; next < ns.size(); ++next)
                if (arrived[next])
                    emit(std::move(arrived[next]->first), arrived[next]->second, from_journal[next]);
                else
                    not_computed.push_back(ns[next]);
        } else {
            for (std::size_t i = 0; i < ns.size(); ++i) {
                const long n = ns[i];
                if (reused[i]) {
                    emit(std::move(reused[i]->first), reused[i]->second, true);
                    continue;
                }
                if (!not_computed.empty() || numeric::stop_requested()) {
                    not_computed.push_back(n);
                    continue;
                }
                progress.show("restrict: n = " + std::to_string(n) + " ...", true);
                set_activity("building the restriction of " + m.name + " at n = " + std::to_string(n));
                const auto t0 = std::chrono::steady_clock::now();
                report::restrict_run r;
                try {
                    r = compute(n);
                } catch (const numeric::interrupted_error&) {
                    not_computed.push_back(n); // the length in progress is dropped whole
                    continue;
                }
                progress.clear();
                const double secs =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (journal) journal->record(std::to_string(n), dist::encode_restrict_run(r, secs));
                emit(std::move(r), secs, false);
            }
        }
        progress.clear();
        if (!not_computed.empty() && runs.empty()) {
            std::cerr << "restrict: interrupted before the first n finished; nothing written\n";
            return exit_interrupted;
        }
        if (ns.size() > 1 || !out_.empty() || prepared) {
            // Every folder restrict writes holds a report, so that --out can compare options.
            const auto dir = out_dir();
            write([&] {
                prepare_out();
                report::write_restrict_sweep(dir, m, runs, made_by);
            });
            if (!json_) {
                std::vector<double> x, y;
                for (const auto& r : runs)
                    if (r.restr.status == analysis::restriction_status::complete) {
                        x.push_back(static_cast<double>(r.n));
                        y.push_back(static_cast<double>(r.restr.c_obs()));
                    }
                if (ns.size() > 1) {
                    std::cout << "\n   n    free  free/n  c_obs  certificate\n";
                    for (const auto& r : runs)
                        std::cout << "  " << r.n << "  " << r.restr.free_count << "  "
                                  << static_cast<double>(r.restr.free_count) / static_cast<double>(r.n)
                                  << "  " << r.restr.c_obs() << "  "
                                  << report::certificate_verdict(r.cert) << "\n";
                    std::cout << "trend: c_obs changes by " << report::log2_slope(x, y)
                              << " per doubling of n\n";
                }
                if (not_written.empty()) {
                    std::cout << "report: " << dir.string() << "/report.md (report.json, restrict.csv";
                    for (const char* f : {"restrict.svg", "restrict.png"})
                        if (std::filesystem::exists(dir / f)) std::cout << ", " << f;
                    std::cout << ")\n";
                }
            }
        }
        if (json_) {
            if (runs.size() == 1) {
                std::cout << json::dump(report::restrict_to_json(m, runs.front()), 2) << "\n";
            } else {
                json::value arr = json::value::array();
                for (const auto& r : runs) arr.push_back(report::restrict_to_json(m, r));
                json::value o = json::value::object();
                o.set("model", json::value::string(m.name));
                o.set("runs", std::move(arr));
                std::cout << json::dump(o, 2) << "\n";
            }
        }
        // A complete report holds every result of the journal; an interrupted one does not.
        if (journal && not_computed.empty() && not_written.empty()) journal->remove();
        if (!not_computed.empty()) {
            std::string left;
            for (long n : not_computed) left += (left.empty() ? "" : ", ") + std::to_string(n);
            std::cerr << "restrict: interrupted; n = " << left << " not computed\n";
            if (code != exit_failed) code = exit_interrupted;
        }
        return not_written.empty() ? code : report_not_written(code, not_written);
    }

private:
    /// The runs of the journal's records, by length of `ns` (nullopt: to compute), with the
    /// seconds each took. A record that does not decode to the run of its length discards them
    /// all.
    static std::vector<std::optional<std::pair<report::restrict_run, double>>>
    reuse(unit_journal& journal, const std::vector<long>& ns) {
        std::vector<std::optional<std::pair<report::restrict_run, double>>> out(ns.size());
        try {
            for (const auto& rec : journal.found()) {
                std::size_t i = 0;
                while (i < ns.size() && std::to_string(ns[i]) != rec.unit) ++i;
                if (i == ns.size() || out[i]) continue;
                double secs = 0;
                report::restrict_run r = dist::decode_restrict_run(rec.result, &secs);
                if (r.n != ns[i])
                    throw std::runtime_error("it holds n = " + std::to_string(r.n) + " as n = " + rec.unit);
                out[i].emplace(std::move(r), secs);
            }
        } catch (const std::exception& e) {
            journal.discard_found(std::string("a record cannot be read (") + e.what() + ")");
            out.assign(ns.size(), std::nullopt);
        }
        return out;
    }

    static out_policy restrict_out_policy() {
        out_policy p;
        p.command = "restrict";
        // The journal first: after a run with --force was killed, it is newer than report.json.
        p.markers = {{journal_file, "attnprop-restrict-journal", true},
                     {"report.json", "attnprop-restrict-report"}};
        p.ignored = {"--out", "--json", "--threads", "--force"};
        p.owned_files = {"report.json", "report.md", "restrict.csv", "restrict.svg", "restrict.png",
                         journal_file};
        p.owned_folder_prefixes = {"counterexample-n", "language-counterexample-n"};
        return p;
    }

    /// --out, or out/restrict-<model>-<seed> (several n) or out/restrict-<model>-<seed>-n<N>
    /// (one n): one folder per report, so that runs at other lengths keep theirs.
    std::filesystem::path out_dir() const {
        if (!out_.empty()) return out_;
        std::string name = "restrict-" + std::filesystem::path(model_).stem().string() + "-" +
                           std::to_string(seed_);
        if (single_n_) name += "-n" + std::to_string(*single_n_);
        return std::filesystem::path("out") / name;
    }

    CLI::App* app_ = nullptr;
    std::string model_, n_text_, c_text_ = "0.5", language_, out_;
    std::uint64_t seed_ = 1;
    int trials_ = 0, samples_ = 32, threads_ = 0;
    bool fan_out_ = false, json_ = false, force_ = false;
    std::optional<long> single_n_; ///< the length when --n names one
};

} // namespace

std::unique_ptr<command> make_restrict_command(CLI::App& parent) {
    return std::make_unique<restrict_command>(parent);
}

} // namespace attnprop::cli
