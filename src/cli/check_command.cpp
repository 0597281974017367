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
#include "runner/check_session.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
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
            ->transform(decimal_integer())->check(CLI::Range(0L, 1L << 30))
            ->capture_default_str();
        app_->add_option("--suite", suites_, "Suite to run (repeatable); see --list");
        app_->add_option("--property", properties_, "Single property to run, suite/name (repeatable)");
        add_seed_option(app_, cfg_.seed, "Base seed (each property derives its own)")
            ->capture_default_str();
        app_->add_option("--tests", cfg_.tests, "Successful cases per property")
            ->transform(decimal_integer())->check(CLI::Range(1, 1000000))
            ->capture_default_str();
        app_->add_option("--max-n", cfg_.max_n, "Largest input length n (eos included)")
            ->transform(decimal_integer())->check(CLI::Range(1L, 1L << 24))
            ->capture_default_str();
        app_->add_option("--precision", cfg_.precision,
                         "Starting precision in bits for MPFR and balls; undecided cases are "
                         "retried at doubled precision")
            ->transform(decimal_integer())->check(CLI::Range(numeric::min_precision_bits, numeric::max_precision_bits))
            ->capture_default_str();
        app_->add_option("--precision-cap", cfg_.precision_cap,
                         "Highest precision tried before a case is reported as undecided")
            ->transform(decimal_integer())->check(CLI::Range(numeric::min_precision_bits, numeric::max_precision_bits))
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
        runner::check_request q;
        q.suites = suites_;
        q.properties = properties_;
        if (model_.empty() && search_opt_->count() > 0)
            throw usage_error("--search needs --model (random models are searched by RapidCheck)");
        if (!model_.empty()) {
            cfg_.search_budget = search_budget_;
            cfg_.fixed_model = std::make_shared<const model::model<numeric::rational>>(
                model::read_model_file(resolve_model(model_).string()));
            q.model_file = model_;
        }
        q.cfg = cfg_;
        const runner::check_selection selection = runner::select_properties(reg, q);
        const std::vector<const runner::property*>& selected = selection.properties;
        runner::check_run run = runner::start_check(q, selection, invocation);
        report::provenance& made_by = run.made_by;
        const std::string dir = !out_.empty() ? out_ : runner::default_check_dir(q);
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

        auto record = [&journal](const runner::property& p, const runner::property_report& r) {
            journal.record(p.suite + "/" + p.name, dist::encode_property_report(r));
        };
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
        set_activity("checking properties with up to n = " + std::to_string(cfg_.max_n));
        stop_on_interrupt();
        run.reports = dist::launched() ? properties_over_ranks(selected, progress, reused, &journal)
                                       : runner::run_selected(selected, cfg_, {on_case, progress, record}, reused);
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
        const std::string verdict = runner::check_verdict(run);
        int code = verdict == "failed" ? exit_failed : exit_ok;
        if (verdict != "failed" && interrupted) {
            std::cerr << "check: interrupted; the report holds the " << run.reports.size() << " of "
                      << selected.size() << " properties run (the last one with the cases "
                      << "checked before the stop)\n";
            code = exit_interrupted;
        } else if (verdict != "failed") {
            code = verdict == "error" ? exit_internal : verdict == "undefined" ? exit_undefined : exit_ok;
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

    /// The properties over MPI ranks (every rank calls it). A unit is a batch of a property's
    /// attempts (runner::run_case_batch: attempt i depends on the property's seed and i alone),
    /// folded on rank 0 in attempt order into the report one process writes
    /// (runner::report_builder). The batches go in rounds, every rank calling dist::run_units
    /// once per round: the first round covers each property's --tests attempts; a property that
    /// its attempts left short of --tests cases (discards) gets further attempts in the next
    /// rounds, as many as its discard rate says it needs and in the last round all it may take
    /// before it gives up. Rank 0 journals each whole report as it is folded and returns the
    /// reports in selection order (those of properties not run after a stop request left out),
    /// calling `progress` for each.
    std::vector<runner::property_report>
    properties_over_ranks(const std::vector<const runner::property*>& selected,
                          const report_fn& progress,
                          const std::vector<std::optional<runner::property_report>>& reused,
                          unit_journal* journal) const {
        std::string key = cfg_.fixed_model ? report::sha256_hex(model::write_model(*cfg_.fixed_model))
                                           : std::string("random models");
        for (const auto* p : selected) key += " " + p->suite + "/" + p->name;
        // A unit's number: the property's index, its first attempt and its number of attempts.
        constexpr unsigned count_bits = 26, first_bits = 26;
        const std::uint64_t cap = runner::max_attempts(cfg_);
        if (selected.size() >= (std::size_t{1} << (64 - count_bits - first_bits)) ||
            cap >= (std::uint64_t{1} << first_bits))
            throw std::runtime_error("check: too many properties or cases to number their batches");
        auto id_of = [&](std::size_t prop, std::uint64_t first, std::uint64_t count) {
            return static_cast<std::size_t>((std::uint64_t{prop} << (count_bits + first_bits)) |
                                            (first << count_bits) | count);
        };
        struct batch_ref {
            std::size_t prop;
            std::uint64_t first, count;
        };
        auto batch_of = [&](std::size_t id) {
            const auto v = static_cast<std::uint64_t>(id);
            const batch_ref b{static_cast<std::size_t>(v >> (count_bits + first_bits)),
                              (v >> count_bits) & ((std::uint64_t{1} << first_bits) - 1),
                              v & ((std::uint64_t{1} << count_bits) - 1)};
            if (b.prop >= selected.size() || b.count == 0 || b.first + b.count > cap)
                throw std::runtime_error("check: a batch out of range from another rank");
            return b;
        };

        struct state {
            std::optional<runner::report_builder> builder;
            std::map<std::uint64_t, runner::case_batch> arrived; ///< by first attempt
            std::uint64_t scheduled = 0;                         ///< attempts handed out so far
            double seconds = 0;
            bool refused = false;                                ///< a refused attempt was folded
            std::map<std::uint64_t, std::uint64_t> reused;      ///< journaled batches: first -> count
        };
        std::vector<state> st(selected.size());
        std::vector<std::optional<runner::property_report>> reports(selected.size());
        for (std::size_t i = 0; i < selected.size(); ++i) {
            if (i < reused.size() && reused[i]) {
                reports[i] = reused[i];
                if (progress) progress(*reports[i], true);
            } else if (dist::is_root()) {
                st[i].builder.emplace(*selected[i], cfg_);
            }
        }
        // About 16 batches per property (at most 1000 attempts each): enough to share one
        // property among many ranks, few enough that a batch's set-up (its generator, the
        // random generator's splits up to its first attempt) and its journal record stay small
        // beside its cases. The cut never changes a result; it depends on the options alone,
        // so that a rerun with another number of ranks reuses the journaled batches.
        const std::uint64_t tests = static_cast<std::uint64_t>(std::max(cfg_.tests, 1));
        const std::uint64_t batch = std::clamp<std::uint64_t>((tests + 15) / 16, 1, 1000);
        auto batch_name = [&](std::size_t i, std::uint64_t first, std::uint64_t count) {
            return selected[i]->suite + "/" + selected[i]->name + "@" + std::to_string(first) + "+" +
                   std::to_string(count);
        };
        // Folds what arrived of property i, in attempt order, as far as it reaches without a
        // gap, as each batch arrives: a property is reported and journaled as soon as it is
        // over. At the end of a round (`round_end`) a property not over waits for the next
        // round, or, at the last one or after a stop request (`last`), ends interrupted with
        // what was folded. A refused attempt on the way ends the command with its error (that
        // of the first such property in selection order) once the round's units are in.
        std::exception_ptr refusal;
        std::size_t refused_at = selected.size();
        // Properties whose report is folded (or refused): their batches not yet handed out are
        // skipped, and so are those after a failed attempt already received (one process stops
        // at the failure too). Read by rank 0's second thread.
        std::vector<std::atomic<bool>> finished(selected.size());
        std::vector<std::atomic<std::uint64_t>> failed_at(selected.size());
        for (auto& f : failed_at) f = std::numeric_limits<std::uint64_t>::max();
        auto fold = [&](std::size_t i, bool round_end, bool last) {
            state& s = st[i];
            if (!s.builder || reports[i] || s.refused) return;
            runner::report_builder& rb = *s.builder;
            try {
                for (auto it = s.arrived.find(rb.attempts()); !rb.over() && it != s.arrived.end();
                     it = s.arrived.find(rb.attempts())) {
                    rb.add(it->second);
                    s.arrived.erase(it);
                }
            } catch (...) {
                s.refused = true;
                finished[i] = true;
                s.arrived.clear();
                if (i < refused_at) {
                    refused_at = i;
                    refusal = std::current_exception();
                }
                return;
            }
            if (!rb.over()) {
                if (!round_end || !last) return; // more attempts to come
                if (!numeric::stop_requested())
                    throw std::logic_error("check: " + selected[i]->name + " not over after all its attempts");
                if (rb.attempts() == 0) return; // not run (a stop request)
            }
            reports[i] = rb.finish(s.seconds);
            finished[i] = true;
            s.arrived.clear();
            if (journal && !reports[i]->interrupted() && !numeric::stop_requested())
                journal->record(selected[i]->suite + "/" + selected[i]->name,
                                dist::encode_property_report(*reports[i]));
            if (progress) progress(*reports[i], false);
        };
        // The batches an earlier run journaled, of the properties it did not finish.
        if (journal && dist::is_root()) {
            std::size_t count_reused = 0;
            std::vector<std::size_t> touched;
            try {
                for (const auto& rec : journal->found()) {
                    const auto at = rec.unit.rfind('@');
                    const auto plus = rec.unit.find('+', at == std::string::npos ? 0 : at);
                    if (at == std::string::npos || plus == std::string::npos) continue;
                    const std::string prop = rec.unit.substr(0, at);
                    const auto it = std::find_if(selected.begin(), selected.end(), [&](const auto* p) {
                        return p->suite + "/" + p->name == prop;
                    });
                    const auto i = static_cast<std::size_t>(it - selected.begin());
                    if (it == selected.end() || !st[i].builder) continue;
                    const std::uint64_t first = std::stoull(rec.unit.substr(at + 1, plus - at - 1));
                    const std::uint64_t count = std::stoull(rec.unit.substr(plus + 1));
                    runner::case_batch b = dist::decode_case_batch(rec.result);
                    if (b.first != first || b.attempts.empty() || b.attempts.size() > count ||
                        rec.unit != batch_name(i, first, count))
                        throw std::runtime_error("the record of " + rec.unit + " holds other attempts");
                    st[i].seconds += b.seconds;
                    st[i].reused[first] = count;
                    st[i].arrived.emplace(first, std::move(b));
                    touched.push_back(i);
                    ++count_reused;
                }
            } catch (const std::exception& e) {
                std::cerr << "check: " << journal->path().string() << ": a batch record cannot be read ("
                          << e.what() << "); every batch is computed again\n";
                for (auto& x : st) {
                    x.reused.clear();
                    x.arrived.clear();
                    x.seconds = 0;
                }
                count_reused = 0;
                touched.clear();
            }
            if (count_reused > 0) {
                std::sort(touched.begin(), touched.end());
                touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
                std::cerr << "check: reused " << count_reused << (count_reused == 1 ? " batch" : " batches")
                          << " of cases of " << touched.size()
                          << (touched.size() == 1 ? " unfinished property" : " unfinished properties")
                          << " from " << journal->path().string() << "\n";
                for (std::size_t i : touched) fold(i, false, false);
            }
        }
        constexpr int rounds = 4;
        for (int round = 0; round < rounds; ++round) {
            std::vector<std::size_t> order;
            if (dist::is_root() && !numeric::stop_requested()) {
                for (std::size_t i = 0; i < selected.size(); ++i) {
                    state& s = st[i];
                    if (!s.builder || s.builder->over() || s.refused) continue;
                    const std::uint64_t want = runner::attempts_for_round(
                        cfg_, round, rounds, s.scheduled, static_cast<std::uint64_t>(s.builder->counted()));
                    for (std::uint64_t f = s.scheduled; f < s.scheduled + want; f += batch)
                        if (const std::uint64_t n = std::min(batch, s.scheduled + want - f);
                            s.reused.find(f) == s.reused.end() || s.reused.at(f) != n)
                            order.push_back(id_of(i, f, n));
                    s.scheduled += want;
                }
            }
            dist::run_units(
                key, order,
                [&](std::size_t id) {
                    const batch_ref b = batch_of(id);
                    return dist::encode_case_batch(runner::run_case_batch(*selected[b.prop], cfg_, b.first, b.count));
                },
                [&](std::size_t id, const std::string& bytes) {
                    const batch_ref b = batch_of(id);
                    runner::case_batch got = dist::decode_case_batch(bytes);
                    if (got.first != b.first) throw std::runtime_error("check: a batch out of place from another rank");
                    // A batch cut short by a stop request is not journaled: a rerun computes it.
                    if (journal && !(!got.attempts.empty() &&
                                     got.attempts.back().what == runner::attempt::kind::stopped))
                        journal->record(batch_name(b.prop, b.first, b.count), bytes);
                    st[b.prop].seconds += got.seconds;
                    if (got.cx) {
                        const std::uint64_t at = got.first + got.attempts.size() - 1;
                        if (at < failed_at[b.prop]) failed_at[b.prop] = at;
                    }
                    st[b.prop].arrived.insert_or_assign(b.first, std::move(got));
                    fold(b.prop, false, false);
                },
                [&](std::size_t id) {
                    const batch_ref b = batch_of(id);
                    return !finished[b.prop] && b.first <= failed_at[b.prop];
                });
            if (!dist::is_root()) continue;
            const bool stopped = numeric::stop_requested();
            for (std::size_t i = 0; i < selected.size(); ++i) fold(i, true, stopped || round + 1 == rounds);
            if (refusal) std::rethrow_exception(refusal);
        }
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
