// attnprop restrict: Hahn's hard-attention restriction for a concrete model and n, its
// certificate, and a language counterexample.
#include "attention/work.hpp"
#include "cli/evaluate.hpp"
#include "cli/commands.hpp"
#include "cli/out_dir.hpp"
#include "cli/unit_journal.hpp"
#include "dist/units.hpp"
#include "dist/world.hpp"
#include "hard_limit/restrict_plan.hpp"
#include "model/model_file.hpp"
#include "numeric/interrupt.hpp"
#include "report/restrict_report.hpp"
#include "report/sha256.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

namespace attnprop::cli {

namespace {

using numeric::rational;
using model::vec;

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A length's result as rank 0 holds it until it is printed, with the seconds it took.
using arrived_runs = std::vector<std::optional<std::pair<report::restrict_run, double>>>;

/// restrict's units over MPI ranks (docs/cli.md, "Running under MPI"), planned by
/// analysis::restrict_plan: what a unit returns is its result's bytes (dist/units.hpp), and
/// the journal names a part "N language" or "N block B".
class parts {
public:
    using plan = analysis::restrict_plan;

    parts(const model::model<rational>& m, const analysis::language_options& lo,
          std::optional<lang::language> l, const std::vector<long>& ns)
        : plan_(m, lo, l, ns), lang_(l), ns_(ns), restriction_bytes_(ns.size()) {}

    /// The unit of the first call: the restriction of length i.
    std::string restriction_unit(std::size_t i) const {
        const auto t0 = std::chrono::steady_clock::now();
        const analysis::restriction r = plan_.restriction_unit(i);
        return dist::encode_restriction(r, seconds_since(t0));
    }

    /// A unit of the second call: part u of length i, whose restriction is `input`.
    std::string part_unit(std::size_t u, std::size_t i, const std::string& input) {
        const auto t0 = std::chrono::steady_clock::now();
        if (i >= ns_.size() || plan::length_of(u) != i)
            throw std::runtime_error("attnprop: restrict part " + std::to_string(u) +
                                     " does not belong to length " + std::to_string(i));
        const auto r =
            plan_.hold_restriction(i, [&] { return dist::decode_restriction(input, nullptr); });
        const std::size_t k = plan::part_of(u);
        if (k == 0)
            return dist::encode_language_result(plan_.language_unit(*r), seconds_since(t0));
        return dist::encode_outputs(plan_.block_unit(*r, k - 1), seconds_since(t0));
    }

    // --- rank 0 ---

    /// Records length i's restriction (the bytes of restriction_unit).
    void add_restriction(std::size_t i, const std::string& bytes) {
        double s = 0;
        analysis::restriction r = dist::decode_restriction(bytes, &s);
        plan_.add_restriction(i, std::move(r), s);
        restriction_bytes_[i] = bytes;
    }

    /// Records part u (the bytes of part_unit).
    void add_part(std::size_t u, const std::string& bytes) {
        const std::size_t i = plan::length_of(u), k = plan::part_of(u);
        plan_.expect_part(i, k); // before decoding: a part out of place is named as such
        double s = 0;
        if (k == 0) plan_.add_language(i, dist::decode_language_result(bytes, &s), s);
        else plan_.add_block(i, k - 1, dist::decode_outputs(bytes, &s), s);
    }

    /// The journal's name of part u: "N language" or "N block B".
    std::string part_name(std::size_t u) const {
        const std::size_t i = plan::length_of(u), k = plan::part_of(u);
        return std::to_string(ns_.at(i)) +
               (k == 0 ? " language" : " block " + std::to_string(k - 1));
    }

    /// Reads the parts an earlier run journaled ("N restriction", "N language", "N block B")
    /// for the lengths not in `done`; returns how many. Throws std::runtime_error for a record
    /// that cannot be read.
    std::size_t reuse(const std::vector<report::journal_record>& found, const arrived_runs& done) {
        std::size_t count = 0;
        for (const auto& rec : found) {
            std::istringstream words(rec.unit);
            std::string n_text, kind, extra;
            words >> n_text >> kind;
            if (kind.empty()) continue; // a whole length, journaled by one process
            std::size_t i = 0;
            while (i < ns_.size() && std::to_string(ns_[i]) != n_text) ++i;
            if (i == ns_.size() || done[i]) continue;
            if (kind == "restriction") {
                if (plan_.started(i)) continue;
                add_restriction(i, rec.result);
            } else if (kind == "language") {
                add_part(i * plan::per_length, rec.result);
            } else if (kind == "block") {
                std::size_t b = 0;
                if (!(words >> b) || b >= plan::max_blocks)
                    throw std::runtime_error("unknown unit '" + rec.unit + "'");
                add_part(i * plan::per_length + 1 + b, rec.result);
            } else {
                throw std::runtime_error("unknown unit '" + rec.unit + "'");
            }
            if (words >> extra) throw std::runtime_error("unknown unit '" + rec.unit + "'");
            ++count;
        }
        return count;
    }

    /// Forgets every part (after a journal record could not be read).
    void clear() {
        plan_.clear();
        restriction_bytes_.assign(ns_.size(), std::string());
    }

    bool started(std::size_t i) const { return plan_.started(i); }
    std::vector<std::size_t> restriction_order(const arrived_runs& done) const {
        return plan_.restriction_order(arrived(done));
    }
    std::vector<std::size_t> part_order(const arrived_runs& done) const {
        return plan_.part_order(arrived(done));
    }

    /// Length i's restriction as its unit returned it: the parts' input.
    const std::string& restriction_bytes(std::size_t i) const { return restriction_bytes_.at(i); }
    dist::unit_inputs inputs() const {
        return {[](std::size_t u) { return plan::length_of(u); },
                [this](std::size_t i) { return restriction_bytes(i); }};
    }

    /// Length i once every part is in.
    std::optional<analysis::restrict_length_result> assemble(std::size_t i) const {
        return plan_.assemble(i);
    }
    /// The seconds length i's parts took, added up.
    double seconds(std::size_t i) const { return plan_.seconds(i); }

private:
    static std::vector<bool> arrived(const arrived_runs& done) {
        std::vector<bool> out(done.size());
        for (std::size_t i = 0; i < done.size(); ++i) out[i] = done[i].has_value();
        return out;
    }

    plan plan_;
    std::optional<lang::language> lang_;
    const std::vector<long>& ns_;
    std::vector<std::string> restriction_bytes_;
};

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
            ->transform(decimal_integer())->check(CLI::Range(0, 1000))
            ->capture_default_str();
        app_->add_option("--samples", samples_,
                         "Random inputs checked against the exact forward pass (when not "
                         "exhaustive)")
            ->transform(decimal_integer())->check(CLI::Range(2, 100000))
            ->capture_default_str();
        app_->add_flag("--fan-out", fan_out_, "Run the Stage-1 fan-out pass before each layer");
        app_->add_option("--threads", threads_, "Worker threads (0: up to 2)")
            ->transform(decimal_integer())->check(CLI::Range(0, 64))
            ->capture_default_str();
        app_->add_option("--out", out_,
                         "Report directory (default out/restrict-<model>-<seed>, written for "
                         "several n or a counterexample); refused before the run when it holds a "
                         "report made with other options or cannot be written; the lengths "
                         "journaled by an unfinished run of the same command are reused");
        app_->add_flag("--figure-text", figure_text_,
                       "Draw each figure's title and caption in the image too (by default they are in report.md only)");
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
                                  "' (known: " + lang::language_names() + ")");
        }
        auto path = resolve_model(model_);
        model::model<rational> m = model::read_model_file(path.string());
        report::restrict_request q;
        q.ns = ns;
        q.free_fraction = *c;
        q.language = lang;
        q.seed = seed_;
        q.trials = trials_;
        q.samples = samples_;
        q.fan_out = fan_out_;
        q.threads = threads_;
        report::check_restrict(m, q);
        const analysis::language_options lo = report::restrict_options(q);
        // One length: the restriction, its certificate and the language run. It depends on
        // the model, the options and n alone.
        auto head = [&](long n) { return report::restrict_head(m, q, n); };
        // The run of a length with its parameters.
        auto with_head = [&](long n, analysis::restrict_length_result x) {
            report::restrict_run r = head(n);
            r.restr = std::move(x.restr);
            r.cert = std::move(x.cert);
            r.language = std::move(x.language);
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
        // Over MPI ranks a length is cut into parts (docs/cli.md, "Running under MPI"), each a
        // unit: its restriction (a first call of dist::run_units), then its language analysis
        // and up to restrict_plan::max_blocks blocks of the certificate's inputs (a second call), which read
        // the restriction rank 0 sends with them. Rank 0 assembles a length when every part is
        // in: the parts are those of one process's run, so the run is the same.
        parts p{m, lo, lang, ns};
        if (dist::launched() && !dist::is_root()) {
            // A worker computes the parts rank 0 hands it; rank 0 writes and prints everything.
            stop_on_interrupt();
            dist::run_units(key, {}, [&](std::size_t i) { return p.restriction_unit(i); }, {});
            dist::run_units(key + " parts", {}, dist::unit_inputs{},
                            [&](std::size_t u, std::size_t i, const std::string& input) {
                                return p.part_unit(u, i, input);
                            },
                            {});
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
        // The parts of lengths a run over MPI ranks journaled (its restriction, language
        // analysis and certificate blocks) are reused with or without ranks now.
        std::vector<bool> from_journal(ns.size());
        for (std::size_t i = 0; i < ns.size(); ++i) from_journal[i] = reused[i].has_value();
        if (journal) {
            std::size_t units = 0;
            try {
                units = p.reuse(journal->found(), reused);
            } catch (const std::exception& e) {
                journal->discard_found(std::string("a record cannot be read (") + e.what() + ")");
                p.clear();
                reused.assign(ns.size(), std::nullopt);
                from_journal.assign(ns.size(), false);
            }
            std::size_t lengths = 0;
            for (std::size_t i = 0; i < ns.size(); ++i)
                lengths += !reused[i] && p.started(i) ? 1 : 0;
            if (units > 0)
                std::cerr << "restrict: reused " << units << " units of " << lengths
                          << " unfinished lengths from " << journal->path().string() << "\n";
        }
        // A length from its parts, once every part is in.
        auto from_parts = [&](std::size_t i) -> std::optional<report::restrict_run> {
            auto x = p.assemble(i);
            if (!x) return std::nullopt;
            return with_head(ns[i], std::move(*x));
        };
        if (dist::launched()) {
            // Over MPI ranks: the largest n first; printed and written in n order as soon as
            // every smaller length is complete.
            auto arrived = std::move(reused); // a restriction's tables can be large: not copied
            std::size_t next = 0;
            auto emit_ready = [&] {
                for (; next < ns.size() && arrived[next]; ++next)
                    emit(std::move(arrived[next]->first), arrived[next]->second, from_journal[next]);
            };
            auto assemble = [&](std::size_t i) {
                if (!arrived[i])
                    if (auto r = from_parts(i)) arrived[i].emplace(std::move(*r), p.seconds(i));
                emit_ready();
            };
            for (std::size_t i = 0; i < ns.size(); ++i) assemble(i);
            dist::run_units(
                key, p.restriction_order(arrived),
                [&](std::size_t i) { return p.restriction_unit(i); },
                [&](std::size_t i, const std::string& bytes) {
                    p.add_restriction(i, bytes);
                    if (journal) journal->record(std::to_string(ns[i]) + " restriction", bytes);
                    assemble(i);
                });
            dist::run_units(key + " parts", p.part_order(arrived), p.inputs(),
                            [&](std::size_t u, std::size_t i, const std::string& input) {
                                return p.part_unit(u, i, input);
                            },
                            [&](std::size_t u, const std::string& bytes) {
                                p.add_part(u, bytes);
                                if (journal) journal->record(p.part_name(u), bytes);
                                assemble(parts::plan::length_of(u));
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
                double secs = 0;
                try {
                    if (p.started(i)) {
                        // Parts journaled under MPI: the missing ones here, journaled likewise.
                        for (std::size_t u : p.part_order(reused))
                            if (parts::plan::length_of(u) == i) {
                                const std::string bytes = p.part_unit(u, i, p.restriction_bytes(i));
                                p.add_part(u, bytes);
                                if (journal) journal->record(p.part_name(u), bytes);
                            }
                        r = *from_parts(i);
                        secs = p.seconds(i);
                    } else {
                        r = with_head(n, analysis::restrict_length(m, n, lang, lo));
                        secs = seconds_since(t0);
                        if (journal)
                            journal->record(std::to_string(n), dist::encode_restrict_run(r, secs));
                    }
                } catch (const numeric::interrupted_error&) {
                    not_computed.push_back(n); // the length in progress is dropped (its parts kept)
                    continue;
                }
                progress.clear();
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
                report::write_restrict_sweep(dir, m, runs, made_by, figure_text_);
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
        p.ignored = {"--out", "--json", "--threads", "--force", "--figure-text"};
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
    bool fan_out_ = false, json_ = false, force_ = false, figure_text_ = false;
    std::optional<long> single_n_; ///< the length when --n names one
};

} // namespace

std::unique_ptr<command> make_restrict_command(CLI::App& parent) {
    return std::make_unique<restrict_command>(parent);
}

} // namespace attnprop::cli
