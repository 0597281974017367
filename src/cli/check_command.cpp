// attnprop check: run property suites with RapidCheck and write a report.
#include "cli/commands.hpp"
#include "cli/out_dir.hpp"
#include "cli/unit_journal.hpp"
#include "dist/units.hpp"
#include "dist/world.hpp"
#include "model/model_file.hpp"
#include "numeric/interrupt.hpp"
#include "report/sha256.hpp"
#include "runner/check_report.hpp"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <unistd.h>

namespace attnprop::cli {

namespace {

class check_command final : public command {
public:
    explicit check_command(CLI::App& parent) {
        app_ = parent.add_subcommand("check", "Run property suites on random models, or with "
                                              "--model on one given model, and write a report "
                                              "(all suites except 'controls' by default)");
        app_->add_option("--model,-m", model_,
                         "Check this model (a file, or the name of a bundled model): every "
                         "property that applies to it runs with the model fixed, drawing n, "
                         "inputs, positions and replacements; the others are listed with the reason");
        search_opt_ = app_->add_option("--search", search_budget_,
                         "With --model: inputs searched per case (0: none): by the soft pair "
                         "properties for the largest one-symbol change (every position and "
                         "replacement of each input), checked against the bounds too, and by "
                         "double-matches-exact for an input where double disagrees with exact")
            ->check(CLI::Range(0L, 1L << 30))
            ->capture_default_str();
        app_->add_option("--suite", suites_, "Suite to run (repeatable); see --list");
        app_->add_option("--property", properties_, "Single property to run, suite/name (repeatable)");
        add_seed_option(app_, cfg_.seed, "Base seed (each property derives its own)")
            ->capture_default_str();
        app_->add_option("--tests", cfg_.tests, "Successful cases per property")
            ->check(CLI::Range(1, 1000000))
            ->capture_default_str();
        app_->add_option("--max-n", cfg_.max_n, "Largest input length n (eos included)")
            ->check(CLI::Range(1L, 1L << 24))
            ->capture_default_str();
        app_->add_option("--precision", cfg_.precision,
                         "Starting precision in bits for MPFR and balls; undecided cases are "
                         "retried at doubled precision")
            ->check(CLI::Range(numeric::min_precision_bits, numeric::max_precision_bits))
            ->capture_default_str();
        app_->add_option("--precision-cap", cfg_.precision_cap,
                         "Highest precision tried before a case is reported as undecided")
            ->check(CLI::Range(numeric::min_precision_bits, numeric::max_precision_bits))
            ->capture_default_str();
        app_->add_option("--out", out_,
                         "Report directory (default out/check-<seed>); refused before the run when "
                         "it holds a report made with other options or cannot be written; the "
                         "properties journaled by an unfinished run of the same command are reused");
        app_->add_flag("--force", force_, "Replace a report in --out made with other options");
        app_->add_flag("--json", json_, "Print report.json to standard output instead of a table");
        app_->add_flag("--list", list_, "List the suites and properties and exit");
    }
    CLI::App* app() override { return app_; }
    bool distributed() const override { return true; }

    int run(const report::provenance& invocation) override {
        runner::registry reg;
        runner::register_all(reg);
        if (list_) {
            for (const auto& p : reg.all())
                std::cout << p.suite << "/" << p.name << (p.expected_to_fail ? "  (control)" : "")
                          << "\n    " << p.statement << "\n";
            return exit_ok;
        }
        if (cfg_.precision_cap < cfg_.precision)
            throw usage_error("--precision-cap must be at least --precision");
        std::vector<const runner::property*> selected;
        std::vector<std::string> suites = suites_;
        for (const auto& s : suites) {
            auto all = reg.suites();
            if (std::find(all.begin(), all.end(), s) == all.end()) {
                std::string known;
                for (const auto& k : all) known += (known.empty() ? "" : ", ") + k;
                throw usage_error("unknown suite '" + s + "' (known: " + known + ")");
            }
        }
        for (const auto& name : properties_) {
            const runner::property* p = reg.find(name);
            if (!p) throw usage_error("unknown property '" + name + "' (see attnprop check --list)");
            selected.push_back(p);
        }
        if (suites.empty() && properties_.empty())
            for (const auto& s : reg.suites())
                if (s != "controls") suites.push_back(s);
        for (const auto& p : reg.all())
            if (std::find(suites.begin(), suites.end(), p.suite) != suites.end() &&
                std::find(selected.begin(), selected.end(), &p) == selected.end())
                selected.push_back(&p);

        report::provenance made_by = invocation;
        if (suites_.empty() && properties_.empty()) {
            std::string all;
            for (const auto& s : suites) all += (all.empty() ? "" : ",") + s;
            made_by.set_option("--suite", all); // the default, as run
        }
        runner::check_run run;
        if (model_.empty() && search_opt_->count() > 0)
            throw usage_error("--search needs --model (random models are searched by RapidCheck)");
        if (!model_.empty()) {
            cfg_.search_budget = search_budget_;
            const auto path = resolve_model(model_);
            auto m = std::make_shared<const model::model<numeric::rational>>(
                model::read_model_file(path.string()));
            run.model_name = m->name;
            run.model_file = model_;
            // Controls are false on purpose about random models; the others run when they
            // make a claim about this model.
            std::vector<const runner::property*> applicable;
            for (const auto* p : selected) {
                std::optional<std::string> why =
                    p->expected_to_fail
                        ? std::optional<std::string>("a deliberately false statement about random "
                                                     "models (a control of the machinery)")
                        : runner::not_applicable(*p, *m);
                if (why)
                    run.not_applicable.emplace_back(p->suite + "/" + p->name, *why);
                else
                    applicable.push_back(p);
            }
            selected = std::move(applicable);
            cfg_.fixed_model = std::move(m);
        }
        const std::string dir =
            !out_.empty()      ? out_
            : model_.empty()   ? "out/check-" + std::to_string(cfg_.seed)
                               : "out/check-" + std::filesystem::path(model_).stem().string() + "-" +
                                   std::to_string(cfg_.seed);
        made_by.set_option("--out", dir);
        const out_policy policy = check_out_policy();
        if (dist::launched() && !dist::is_root()) {
            // A worker runs the properties rank 0 hands it; rank 0 writes and prints everything.
            stop_on_interrupt();
            (void)properties_over_ranks(selected, {}, {}, nullptr);
            return exit_ok;
        }
        const out_found claim = claim_out_dir(dir, made_by, policy, force_);
        prepare_out_dir(dir); // before the work: a run is never lost for want of a folder

        // The journal: the properties an earlier run of the same command finished are reused.
        std::vector<std::string> names;
        for (const auto* p : selected) names.push_back(p->suite + "/" + p->name);
        unit_journal journal(dir, "check", journal_fingerprint("check", made_by, policy.ignored,
                                                               journal_content(), names),
                             made_by, claim == out_found::same_report);
        std::vector<std::optional<runner::property_report>> reused = reuse(journal, names);
        const auto reused_count = static_cast<std::size_t>(
            std::count_if(reused.begin(), reused.end(), [](const auto& r) { return r.has_value(); }));
        if (reused_count > 0)
            std::cerr << "check: reused " << reused_count << " of " << selected.size()
                      << " properties from " << journal.path().string() << "\n";

        const bool tty = isatty(fileno(stderr));
        std::size_t done = 0;
        progress_line line;
        auto on_case = [&](const runner::property& p, int counted) {
            line.show("[" + std::to_string(done + 1) + "/" + std::to_string(selected.size()) +
                      "] " + p.suite + "/" + p.name + ": " + std::to_string(counted) + "/" +
                      std::to_string(cfg_.tests) + " cases");
        };
        auto progress = [&](const runner::property_report& r, bool was_reused) {
            line.clear();
            ++done;
            std::cerr << "[" << done << "/" << selected.size() << "] " << r.suite << "/" << r.name
                      << ": " << r.status() << " (" << r.passed << " passed, " << r.undecided
                      << " undecided";
            if (r.undefined) std::cerr << ", " << r.undefined << " undefined";
            if (was_reused) std::cerr << ", reused";
            else if (tty) std::cerr << ", " << std::fixed << std::setprecision(1) << r.seconds << " s";
            std::cerr << ")\n";
        };
        run.cfg = cfg_;
        run.made_by = made_by;
        for (const auto* p : selected)
            if (std::find(run.suites.begin(), run.suites.end(), p->suite) == run.suites.end())
                run.suites.push_back(p->suite);
        set_activity("checking properties with up to n = " + std::to_string(cfg_.max_n));
        stop_on_interrupt();
        run.reports = dist::launched() ? properties_over_ranks(selected, progress, reused, &journal)
                                       : properties_here(selected, progress, on_case, reused, journal);
        line.clear();
        const bool interrupted = numeric::stop_requested();
        if (interrupted && run.reports.empty() && !selected.empty()) {
            std::cerr << "check: interrupted before the first property finished; nothing written\n";
            return exit_interrupted;
        }
        const std::string not_written = try_write([&] {
            remove_owned(dir, policy); // the report is rewritten whole: no stale counterexample
            runner::write_check_report(dir, run);
        });
        // A complete report holds every result of the journal; an interrupted one does not.
        if (not_written.empty() && !interrupted && run.reports.size() == selected.size())
            journal.remove();
        if (json_) {
            std::cout << json::dump(runner::check_to_json(run), 2) << "\n";
        } else {
            std::cout << runner::check_to_text(run);
            if (not_written.empty()) std::cout << "report: " << dir << "/report.md (and report.json)\n";
        }
        bool failed = false, errored = false, undefined = false;
        for (const auto& r : run.reports) {
            failed = failed || r.failed() > 0;
            errored = errored || !r.error().empty();
            undefined = undefined || r.undefined > 0;
        }
        int code = failed ? exit_failed : exit_ok;
        if (!failed && interrupted) {
            std::cerr << "check: interrupted; the report holds the " << run.reports.size() << " of "
                      << selected.size() << " properties run (the last one with the cases "
                      << "checked before the stop)\n";
            code = exit_interrupted;
        } else if (!failed) {
            code = errored ? exit_internal : undefined ? exit_undefined : exit_ok;
        }
        return not_written.empty() ? code : report_not_written(code, not_written);
    }

private:
    /// Called with each property's report as it is reused or arrives; true when reused.
    using report_fn = std::function<void(const runner::property_report&, bool)>;

    /// What the units read besides the options: the model of --model in canonical form.
    std::string journal_content() const {
        return cfg_.fixed_model ? model::write_model(*cfg_.fixed_model) : std::string("random models");
    }

    /// The reports of the journal's records, by selected property (nullopt: to run). A record
    /// that does not decode to the report of its property discards them all.
    static std::vector<std::optional<runner::property_report>>
    reuse(unit_journal& journal, const std::vector<std::string>& names) {
        std::vector<std::optional<runner::property_report>> out(names.size());
        try {
            for (const auto& rec : journal.found()) {
                const auto it = std::find(names.begin(), names.end(), rec.unit);
                if (it == names.end()) continue;
                runner::property_report r = dist::decode_property_report(rec.result);
                if (r.suite + "/" + r.name != rec.unit)
                    throw std::runtime_error("it holds " + r.suite + "/" + r.name + " as " + rec.unit);
                auto& slot = out[static_cast<std::size_t>(it - names.begin())];
                if (!slot) slot = std::move(r);
            }
        } catch (const std::exception& e) {
            journal.discard_found(std::string("a record cannot be read (") + e.what() + ")");
            out.assign(names.size(), std::nullopt);
        }
        return out;
    }

    /// Whether a report may go into the journal: the property ran every case and shrank its
    /// failure to the end. After a stop request it may have done neither (a shrink attempt
    /// after the stop is rejected), so such a report is run again by the next run.
    static bool whole(const runner::property_report& r) {
        return !r.interrupted() && !numeric::stop_requested();
    }

    /// The properties in this process, in selection order: reused ones from `reused`, the
    /// others run and journaled as each finishes; after a stop request no further property
    /// starts (the reused ones are still reported).
    std::vector<runner::property_report>
    properties_here(const std::vector<const runner::property*>& selected, const report_fn& progress,
                    const runner::case_progress_fn& on_case,
                    const std::vector<std::optional<runner::property_report>>& reused,
                    unit_journal& journal) const {
        std::vector<runner::property_report> out;
        for (std::size_t i = 0; i < selected.size(); ++i) {
            if (reused[i]) {
                out.push_back(*reused[i]);
                progress(out.back(), true);
                continue;
            }
            if (numeric::stop_requested()) continue;
            out.push_back(runner::run_property(*selected[i], cfg_, on_case));
            if (whole(out.back()))
                journal.record(selected[i]->suite + "/" + selected[i]->name,
                               dist::encode_property_report(out.back()));
            progress(out.back(), false);
        }
        return out;
    }

    /// The properties over MPI ranks (every rank calls it): one unit per property, since a
    /// property's cases are one RapidCheck run from its own seed (runner::property_seed) whose
    /// case sequence and shrinking cannot be cut into batches without changing them. Units go
    /// out in selection order, those of `reused` (rank 0) excepted; rank 0 journals each
    /// report as it arrives and returns the reports in selection order (those of properties
    /// not run after a stop request left out), calling `progress` for each.
    std::vector<runner::property_report>
    properties_over_ranks(const std::vector<const runner::property*>& selected,
                          const report_fn& progress,
                          const std::vector<std::optional<runner::property_report>>& reused,
                          unit_journal* journal) const {
        std::string key = cfg_.fixed_model ? report::sha256_hex(model::write_model(*cfg_.fixed_model))
                                           : std::string("random models");
        for (const auto* p : selected) key += " " + p->suite + "/" + p->name;
        std::vector<std::optional<runner::property_report>> reports(selected.size());
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < selected.size(); ++i) {
            if (i < reused.size() && reused[i]) {
                reports[i] = reused[i];
                if (progress) progress(*reports[i], true);
            } else {
                order.push_back(i);
            }
        }
        // A result is its report's bytes after one byte saying whether the report is whole on
        // the rank that ran it (whole()): only whole reports go into the journal.
        dist::run_units(
            key, order,
            [&](std::size_t i) {
                runner::property_report r = runner::run_property(*selected[i], cfg_);
                return std::string(1, whole(r) ? 'w' : 'p') + dist::encode_property_report(r);
            },
            [&](std::size_t i, const std::string& bytes) {
                if (bytes.empty()) throw std::runtime_error("an empty result from another rank");
                const std::string body = bytes.substr(1);
                reports[i] = dist::decode_property_report(body);
                if (journal && bytes[0] == 'w')
                    journal->record(selected[i]->suite + "/" + selected[i]->name, body);
                if (progress) progress(*reports[i], false);
            });
        std::vector<runner::property_report> out;
        for (auto& r : reports)
            if (r) out.push_back(std::move(*r));
        return out;
    }

    static out_policy check_out_policy() {
        out_policy p;
        p.command = "check";
        // The journal first: after a run with --force was killed, it is newer than report.json.
        p.markers = {{journal_file, "attnprop-check-journal", true},
                     {"report.json", "attnprop-check-report"}};
        p.ignored = {"--out", "--json", "--list", "--force"};
        p.owned_files = {"report.json", "report.md", "counterexamples"};
        return p;
    }

    CLI::App* app_ = nullptr;
    runner::run_config cfg_;
    std::vector<std::string> suites_, properties_;
    std::string out_, model_;
    long search_budget_ = 16;
    CLI::Option* search_opt_ = nullptr;
    bool json_ = false, list_ = false, force_ = false;
};

} // namespace

std::unique_ptr<command> make_check_command(CLI::App& parent) {
    return std::make_unique<check_command>(parent);
}

} // namespace attnprop::cli
