// attnprop influence: one-symbol influence of a soft model across a ladder of n (Hahn's
// Lemma 5), its bounds, and the cross-entropy corollary.
#include "soft_influence/all_inputs.hpp"
#include "soft_influence/bounds.hpp"
#include "soft_influence/influence.hpp"
#include "soft_influence/sweep.hpp"
#include "soft_influence/sweep_units.hpp"
#include "soft_influence/worst_case.hpp"
#include "cli/commands.hpp"
#include "util/read_file.hpp"
#include "cli/out_dir.hpp"
#include "cli/unit_journal.hpp"
#include "dist/units.hpp"
#include "dist/world.hpp"
#include "model/model_file.hpp"
#include "numeric/interrupt.hpp"
#include "report/files.hpp"
#include "report/influence_report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
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
            ->transform(decimal_integer())->check(CLI::Range(1, 100000))
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
        // The kinds with exp, enclosures first (the list's order reversed).
        const auto kinds = numeric::choice_names<numeric::has_exp>(false, true);
        app_->add_option("--scalar,-s", scalar_,
                         "Scalar of the measurements: auto (certified double intervals, Arb balls "
                         "where a comparison is undecided or the a-posteriori bound is "
                         "computed), " +
                             numeric::join_choice_names(kinds, false))
            ->check(CLI::IsMember(numeric::choice_names<numeric::has_exp>(true, true)))
            ->capture_default_str();
        add_seed_option(app_, seed_, "Seed of the inputs")->capture_default_str();
        app_->add_option("--threads", threads_, "Worker threads (0: hardware concurrency)")
            ->transform(decimal_integer())->check(CLI::Range(0, 256))
            ->capture_default_str();
        app_->add_option("--bound-divisor", divisor_,
                         "Negative control: divide every bound by D (a sweep that must fail)")
            ->transform(decimal_integer())->check(CLI::Range(1L, 1L << 40))
            ->capture_default_str();
        app_->add_option("--posterior-max-n", posterior_max_n_,
                         "Compute the a-posteriori pair bound (O(n^2) per pair) up to this n only; 0: never")
            ->transform(decimal_integer())->check(CLI::Range(0L, 1L << 40))
            ->capture_default_str();
        app_->add_option("--precision-cap", precision_cap_,
                         "Balls: measure a row again at doubled precision, up to BITS, while a bound "
                         "comparison is undecided or the printed measurements certify fewer than "
                         "--digits digits")
            ->transform(decimal_integer())->check(CLI::Range(16L, 1L << 20))
            ->capture_default_str();
        app_->add_option("--digits", digits_,
                         "Significant digits the printed measurements must certify (max influence, "
                         "n*max, max dp, CE, eta, floor): a row whose enclosures are wider is "
                         "measured again (intervals, then balls up to --precision-cap); 0: no "
                         "requirement. Every number is printed with the digits it certifies (at "
                         "most 12) and its radius")
            ->transform(decimal_integer())->check(CLI::Range(0, 12))
            ->capture_default_str();
        app_->add_option("--search", search_,
                         "Also search each n for the worst one-symbol change: BUDGET inputs "
                         "profiled per n (every position and replacement), random restarts and "
                         "local moves, exhaustive when |Sigma|^(n-1) <= BUDGET; 0: no search. The "
                         "largest found is a lower bound on the worst case (the maximum only when "
                         "exhaustive); written to search.json")
            ->transform(decimal_integer())->check(CLI::Range(0L, 1L << 30))
            ->capture_default_str();
        app_->add_option("--search-seed", search_seed_,
                         "Seed of the worst-case search (the same seed finds the same changes)")
            ->transform(decimal_integer())->check(CLI::Range(std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max()))
            ->capture_default_str();
        app_->add_option("--out", out_,
                         "Report directory (default out/influence-<model>-<seed>); a report with "
                         "the same fingerprint is resumed, one made with other options refused, "
                         "and so is a folder that cannot be written, before the sweep");
        app_->add_flag("--no-every-input", no_every_input_,
                       "Do not bound the influence over every input at each n (docs/bounds.md): no "
                       "certified bound column, and the cross-entropy corollary stays decided on "
                       "the measured eta only");
        app_->add_flag("--figure-text", figure_text_,
                       "Draw each figure's title and caption in the image too (by default they are in report.md only)");
        app_->add_flag("--force", force_, "Replace a report in --out made with other options");
        app_->add_flag("--json", json_, "Print JSON instead of text");
    }
    CLI::App* app() override { return app_; }
    bool distributed() const override { return true; }

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
                                  "' (known: " + lang::language_names() + ")");
        }
        o.precision = precision_;
        o.scalar = *analysis::sweep_scalar::parse(scalar_); // checked by --scalar's IsMember
        o.seed = seed_;
        o.threads = static_cast<unsigned>(threads_);
        o.bound_divisor = divisor_;
        o.posterior_max_n = posterior_max_n_;
        if (precision_cap_ < precision_)
            throw usage_error("--precision-cap (" + std::to_string(precision_cap_) +
                              ") must be at least --precision (" + std::to_string(precision_) + ")");
        o.precision_cap = precision_cap_;
        o.digits = digits_;

        const fs::path path = resolve_model(model_);
        const model::model<numeric::rational> m = model::read_model_file(path.string());
        if (std::string why = analysis::influence_refusal(m); !why.empty())
            throw model::content_error(m.file, "/attention", why);
        if (search_ > 0 && !model::info(m.attention).soft_influence)
            throw usage_error(std::string("--search: the worst-case search maximises softmax's "
                                          "one-symbol change; ") +
                              m.name + " uses " + model::to_string(m.attention) + " attention");
        for (long n : o.ns) model::check_length(m, n);

        std::string bytes;
        if (std::string why = util::read_regular_file(path, bytes); !why.empty())
            throw usage_error("--model " + path.string() + " " + why);
        report::influence_meta meta;
        meta.model_file = model_;
        meta.fingerprint = report::influence_fingerprint(bytes, o);
        const fs::path dir = out_dir();
        meta.made_by = invocation;
        meta.figure_text = figure_text_;
        meta.made_by.set_option("--out", dir.string());
        const out_policy policy = influence_out_policy();
        if (dist::launched() && !dist::is_root()) {
            // A worker measures the rows rank 0 hands it; rank 0 writes and prints everything.
            stop_on_interrupt();
            (void)sweep_over_ranks(m, o, meta.fingerprint, nullptr);
            return exit_ok;
        }
        const out_found claim = claim_out_dir(dir, meta.made_by, policy, force_, meta.fingerprint);
        if (claim == out_found::replaced) remove_owned(dir, policy);
        prepare_out_dir(dir); // before the work: a sweep is never lost for want of a folder
        // Under MPI the units of rows not yet final are journaled too (units.journal), so that a
        // killed job loses no finished unit; one process journals whole rows (rows.json) and
        // only removes a journal an MPI run left once its own report is complete.
        unit_journal journal(dir, "influence", meta.fingerprint, meta.made_by,
                             dist::launched() && claim == out_found::same_report);
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
                          "/" + std::to_string(total) + " parts measured");
        };
        meta.options = o;
        set_activity("measuring the influence of " + m.name + " at n = " + n_text_);
        stop_on_interrupt();
        analysis::sweep_result r =
            dist::launched() ? sweep_over_ranks(m, o, meta.fingerprint, &journal) : analysis::influence_sweep(m, o);
        progress.clear();
        // The bounds over every input at each measured n (after the sweep: they need no inputs).
        std::vector<analysis::all_inputs_result> every;
        if (!no_every_input_ && analysis::bounds_for(m.attention).every_input && !r.rows.empty() &&
            !numeric::stop_requested()) {
            progress.show("influence: bounding every input");
            try {
                every = analysis::add_every_input_bounds(m, r, analysis::all_inputs_options{}, o.slope_tolerance);
            } catch (const numeric::interrupted_error&) {
                // A stop during the bounds: the report keeps the measured rows without them
                // (the rows change only once every bound is computed).
            }
            progress.clear();
        }
        if (!r.not_measured.empty() && r.rows.empty()) {
            std::cerr << "influence: interrupted before the first n finished; nothing written\n";
            return exit_interrupted;
        }
        std::size_t reused = 0;
        for (const auto& row : r.rows) reused += row.reused ? 1 : 0;
        if (not_written.empty())
            not_written = try_write([&] { report::write_influence_report(dir, r, meta); });
        int code = r.verdict == verdict::undefined ? exit_undefined : exit_ok;
        fs::path cx;
        if (r.verdict == verdict::failed) {
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
                    if (row.cross_entropy && row.cross_entropy->check == verdict::failed) {
                        cx = dir / ("counterexample-n" + std::to_string(row.n));
                        if (not_written.empty())
                            not_written = try_write(
                                [&] { report::write_cross_entropy_counterexample(cx, m, row, meta); });
                        break;
                    }
        }
        // The worst-case search (after the sweep, whose rows it does not change).
        std::vector<search_row> searched;
        if (search_ > 0 && r.not_measured.empty()) {
            for (long n : o.ns) {
                if (numeric::stop_requested()) break;
                progress.show("influence: searching n = " + std::to_string(n));
                searched.push_back(run_search(m, n, every));
            }
            progress.clear();
            for (const auto& row : searched)
                if (row.above_bound || row.above_certified) code = exit_failed;
                else if (row.result.undefined && code == exit_ok) code = exit_undefined;
            for (const auto& row : searched)
                if (row.result.found && !row.n_influence.empty())
                    r.searched.emplace_back(row.result.n, std::strtod(row.n_influence.c_str(), nullptr));
            if (not_written.empty())
                not_written = try_write([&] {
                    // The figures draw the search's changes beside the bound over every input.
                    report::write_influence_report(dir, r, meta);
                    report::write_file_atomic(dir / "search.json",
                                              json::dump(search_json(searched, m), 2) + "\n");
                    // report.md says what the search found (its verdict is part of the exit
                    // code), after the sweep's own sections.
                    std::ifstream in(dir / "report.md", std::ios::binary);
                    std::ostringstream md;
                    md << in.rdbuf() << search_markdown(searched, m);
                    report::write_file_atomic(dir / "report.md", md.str());
                });
        }
        if (!not_written.empty()) cx.clear(); // nothing to point at
        if (json_) {
            json::value j = report::influence_to_json(r, meta);
            j.set("report_dir", json::value::string(dir.string()));
            j.set("counterexample", cx.empty() ? json::value::null_value()
                                               : json::value::string(cx.string()));
            if (search_ > 0) j.set("search", search_json(searched, m));
            std::cout << json::dump(j, 2) << "\n";
        } else {
            std::cout << report::influence_to_text(r, meta);
            if (search_ > 0) std::cout << search_text(searched, m);
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
        // A complete report holds every row: the units journaled on the way are not needed.
        if (not_written.empty() && r.not_measured.empty() && fs::exists(journal.path())) journal.remove();
        if (!r.not_measured.empty() && code != exit_failed) {
            std::cerr << "influence: interrupted; the report holds the " << r.rows.size()
                      << " lengths finished (rerun to resume from rows.json)\n";
            code = exit_interrupted;
        }
        return not_written.empty() ? code : report_not_written(code, not_written);
    }

private:
    /// The sweep over MPI ranks (every rank calls it). A unit is one unit of one attempt of a
    /// row (analysis::row_units: a block of an input's positions, or the row's cross-entropy),
    /// handed out largest cost first; its result depends on the model, the options, n, the
    /// attempt and the unit alone, and rank 0 assembles each row from its units with the
    /// one-process sweep's own operations (analysis::assemble_row), so the rows are those of
    /// one process, bit for bit. Attempts run in rounds: round r holds attempt r of every row
    /// that the earlier attempts left undecided (analysis::row_ladder, attempt_decides); every
    /// rank runs as many rounds as the longest ladder. Rank 0 reuses the rows of o.reuse,
    /// passes every row to o.on_row as it is final (the journal), and lists the lengths whose
    /// rows were not finished (a stop request) as not measured. With `journal` (rank 0) every
    /// unit's result is journaled as it arrives ("n=N attempt=A unit=U") and the units an earlier
    /// run journaled are reused: they are not handed out, and a row whose units all come from
    /// the journal is assembled at once.
    analysis::sweep_result sweep_over_ranks(const model::model<numeric::rational>& m,
                                            const analysis::sweep_options& o,
                                            const std::string& fingerprint, unit_journal* journal) const {
        analysis::check_sweep(m, o);
        const std::size_t count = o.ns.size();
        analysis::sweep_options unit = o;
        unit.on_progress = nullptr; // units are measured in other threads and processes
        unit.on_row = nullptr;
        unit.reuse.clear();
        std::vector<std::vector<analysis::row_attempt>> ladders(count);
        std::vector<std::vector<analysis::row_unit>> units(count);
        std::size_t rounds = 0, stride = 1;
        for (std::size_t i = 0; i < count; ++i) {
            ladders[i] = analysis::row_ladder(m, unit, o.ns[i]);
            units[i] = analysis::row_units(m, unit, o.ns[i]);
            rounds = std::max(rounds, ladders[i].size());
            stride = std::max(stride, units[i].size());
        }
        std::vector<std::optional<analysis::sweep_row>> rows(count);
        std::vector<bool> pending(count, false); // to be measured by the next round
        for (std::size_t i = 0; i < count; ++i) {
            const auto it = std::find_if(o.reuse.begin(), o.reuse.end(),
                                         [&](const analysis::sweep_row& r) { return r.n == o.ns[i]; });
            if (it == o.reuse.end()) {
                pending[i] = true;
                continue;
            }
            rows[i] = *it;
            rows[i]->reused = true;
            if (o.on_row) o.on_row(*rows[i]);
        }
        struct unit_id {
            std::size_t round, row, unit;
        };
        auto id_of = [&](const unit_id& u) { return (u.round * count + u.row) * stride + u.unit; };
        auto unit_of = [&](std::size_t id) {
            const unit_id u{id / stride / count, id / stride % count, id % stride};
            if (u.round >= ladders[u.row].size() || u.unit >= units[u.row].size())
                throw std::runtime_error("influence: a unit out of range from another rank");
            return u;
        };
        std::vector<std::vector<std::optional<analysis::unit_result>>> results(count);
        std::vector<std::size_t> outstanding(count, 0);
        std::string key = fingerprint + " n";
        for (long n : o.ns) key += " " + std::to_string(n);
        auto unit_name = [&](const unit_id& u) {
            return "n=" + std::to_string(o.ns[u.row]) + " attempt=" + std::to_string(u.round) +
                   " unit=" + std::to_string(u.unit);
        };
        // The units an earlier run journaled, by name (rank 0).
        std::map<std::string, const std::string*> journaled;
        if (journal)
            for (const auto& rec : journal->found()) journaled[rec.unit] = &rec.result;
        std::size_t units_reused = 0;
        std::vector<bool> rows_touched(count, false);
        // Row u.row's attempt u.round, once all its units are in: final, or measured again by
        // the next round.
        auto assemble = [&](std::size_t i, std::size_t round) {
            std::vector<analysis::unit_result> all;
            for (auto& r : results[i]) all.push_back(std::move(*r));
            results[i].clear();
            const analysis::row_attempt& a = ladders[i][round];
            analysis::row_measurement row = analysis::assemble_row(m, unit, o.ns[i], a, all);
            if (!analysis::attempt_decides(a, row, o.digits) && round + 1 < ladders[i].size())
                return; // measured again by the next round
            rows[i] = analysis::finish_row(std::move(row));
            pending[i] = false;
            if (o.on_row) o.on_row(*rows[i]);
        };
        for (std::size_t round = 0; round < rounds; ++round) {
            std::vector<std::size_t> order;
            if (dist::is_root() && !numeric::stop_requested()) {
                // The costliest units first (dynamic balancing: the last ones are the cheapest).
                std::vector<std::pair<double, std::size_t>> costed;
                std::vector<std::size_t> complete; // rows whose units all come from the journal
                for (std::size_t i = 0; i < count; ++i) {
                    if (!pending[i] || round >= ladders[i].size()) continue;
                    results[i].assign(units[i].size(), std::nullopt);
                    outstanding[i] = units[i].size();
                    for (std::size_t j = 0; j < units[i].size(); ++j) {
                        if (const auto it = journaled.find(unit_name({round, i, j})); it != journaled.end()) {
                            results[i][j] = dist::decode_unit_result(*it->second);
                            --outstanding[i];
                            ++units_reused;
                            rows_touched[i] = true;
                            continue;
                        }
                        costed.emplace_back(analysis::row_unit_cost(m, unit, o.ns[i], units[i][j]),
                                            id_of({round, i, j}));
                    }
                    if (outstanding[i] == 0) complete.push_back(i);
                }
                for (std::size_t i : complete) assemble(i, round);
                std::stable_sort(costed.begin(), costed.end(),
                                 [](const auto& a, const auto& b) { return a.first > b.first; });
                for (const auto& c : costed) order.push_back(c.second);
            }
            dist::run_units(
                key, order,
                [&](std::size_t id) {
                    const unit_id u = unit_of(id);
                    return dist::encode_unit_result(analysis::measure_unit(
                        m, unit, o.ns[u.row], ladders[u.row][u.round], units[u.row][u.unit], unit.threads));
                },
                [&](std::size_t id, const std::string& bytes) {
                    const unit_id u = unit_of(id);
                    results[u.row][u.unit] = dist::decode_unit_result(bytes);
                    if (journal) journal->record(unit_name(u), bytes);
                    if (--outstanding[u.row] > 0) return;
                    assemble(u.row, u.round);
                });
            // A row whose units did not all arrive (a stop request) is not measured.
            for (std::size_t i = 0; i < count; ++i)
                if (pending[i] && outstanding[i] > 0) pending[i] = false;
        }
        if (!dist::is_root()) return {};
        if (units_reused > 0)
            std::cerr << "influence: reused " << units_reused << (units_reused == 1 ? " unit" : " units")
                      << " of " << std::count(rows_touched.begin(), rows_touched.end(), true)
                      << (std::count(rows_touched.begin(), rows_touched.end(), true) == 1 ? " unfinished length"
                                                                                            : " unfinished lengths")
                      << " from " << journal->path().string() << "\n";
        std::vector<analysis::sweep_row> done;
        std::vector<long> not_measured;
        for (std::size_t i = 0; i < count; ++i)
            if (rows[i]) done.push_back(std::move(*rows[i]));
            else not_measured.push_back(o.ns[i]);
        return analysis::sweep_from_rows(m, o, std::move(done), std::move(not_measured));
    }

    /// Same report: the same fingerprint (model file content and every option that changes
    /// rows; the n list and --threads are not part of it), so the run resumes.
    static out_policy influence_out_policy() {
        out_policy p;
        p.command = "influence";
        p.markers = {{"rows.json", "attnprop-influence-rows"},
                     {"report.json", "attnprop-influence-report"},
                     {journal_file, "attnprop-influence-journal", true}};
        p.ignored = {"--n", "--threads", "--json", "--out", "--force", "--search", "--search-seed",
                     "--figure-text"};
        p.owned_files = {"search.json", "report.json", "report.md", "influence.csv", "influence.svg",
                         "influence.png",     "cross_entropy.svg", "cross_entropy.png", "rows.json",
                         journal_file};
        p.owned_folder_prefixes = {"counterexample-n"};
        return p;
    }

    fs::path out_dir() const {
        if (!out_.empty()) return out_;
        return fs::path("out") /
               ("influence-" + fs::path(model_).stem().string() + "-" + std::to_string(seed_));
    }

    /// One n of the worst-case search: the search's witness, measured again in Arb balls.
    struct search_row {
        analysis::search_result result;
        std::string influence;                 ///< ||Δy|| of the witness (ball, certified digits)
        std::string n_influence;               ///< n times it
        std::optional<std::string> bound;      ///< K(n)/n when the hypotheses hold
        bool above_bound = false;              ///< the ball is certainly above K(n)/n
        std::optional<std::string> certified;  ///< the bound over every input at n
        bool above_certified = false;          ///< the ball is certainly above it: a finding
    };

    search_row run_search(const model::model<numeric::rational>& m, long n,
                          const std::vector<analysis::all_inputs_result>& every) const {
        analysis::search_options so;
        so.budget = static_cast<std::size_t>(search_);
        so.seed = search_seed_;
        search_row row;
        row.result = analysis::worst_case_search(m, n, so);
        if (!row.result.found) return row;
        const numeric::context ctx{precision_};
        const auto mb = model::to_scalar<numeric::arb_ball>(m, ctx);
        analysis::influence_options opt;
        opt.positions = {row.result.position};
        try {
            const auto prof = analysis::influence_profile_of(mb, m, row.result.input, ctx, opt);
            for (const auto& pr : prof.pairs) {
                if (pr.replacement != row.result.replacement) continue;
                row.influence = numeric::certified_string(pr.dy, 12);
                const auto nd = pr.dy * numeric::from_int<numeric::arb_ball>(n, ctx);
                row.n_influence = numeric::certified_string(nd, 12);
                const auto rep = analysis::a_priori_bound(m, n, ctx);
                if (rep.hypotheses_hold() && rep.bound_at_n) {
                    row.bound = numeric::certified_string(*rep.bound_at_n, 12);
                    row.above_bound = numeric::compare(pr.dy, *rep.bound_at_n) == numeric::order::greater;
                }
                for (const auto& b : every)
                    if (b.lengths.lo == n && b.applies && std::isfinite(b.n_influence)) {
                        const double bound = b.influence_at(n);
                        row.certified = analysis::bound_decimal(bound, 12);
                        row.above_certified = numeric::compare(pr.dy, numeric::arb_ball::from_double(bound, ctx)) ==
                                              numeric::order::greater;
                    }
            }
        } catch (const numeric::undefined_error& e) {
            if (!row.result.undefined) row.result.undefined = e.message();
        }
        return row;
    }

    json::value search_json(const std::vector<search_row>& rows, const model::model<numeric::rational>& m) const {
        using namespace report::json_out;
        json::value o = json::value::object();
        o.set("budget", num(search_));
        o.set("seed", str(std::to_string(search_seed_)));
        o.set("objective", str("influence"));
        o.set("note", str("the largest change found is attained, so it is a lower bound on the worst "
                          "case at n; it is the maximum only where exhaustive is true"));
        json::value arr = json::value::array();
        for (const auto& row : rows) {
            const auto& r = row.result;
            json::value e = json::value::object();
            e.set("n", num(r.n));
            e.set("found", json::value::boolean(r.found));
            if (r.found) {
                e.set("input", str(model::format_input(m.sigma, r.input)));
                e.set("position", num(static_cast<long long>(r.position + 1)));
                e.set("replacement", str(m.sigma.symbols[static_cast<std::size_t>(r.replacement)]));
                e.set("influence_double", approx(r.value, 17));
                e.set("influence", opt_str(row.influence.empty() ? std::nullopt
                                                                  : std::optional<std::string>(row.influence)));
                e.set("n_influence", opt_str(row.n_influence.empty() ? std::nullopt
                                                                      : std::optional<std::string>(row.n_influence)));
                e.set("bound", opt_str(row.bound));
                e.set("above_bound", json::value::boolean(row.above_bound));
                e.set("every_input_bound", opt_str(row.certified));
                e.set("above_every_input_bound", json::value::boolean(row.above_certified));
                e.set("found_at", num(static_cast<long long>(r.found_at)));
            }
            e.set("evaluations", num(static_cast<long long>(r.evaluations)));
            e.set("restarts", num(static_cast<long long>(r.restarts)));
            e.set("exhaustive", json::value::boolean(r.exhaustive));
            e.set("undefined", opt_str(r.undefined));
            if (r.undefined && !r.undefined_input.empty())
                e.set("undefined_input", str(model::format_input(m.sigma, r.undefined_input)));
            arr.push_back(std::move(e));
        }
        o.set("rows", std::move(arr));
        return o;
    }

    std::string search_markdown(const std::vector<search_row>& rows,
                                const model::model<numeric::rational>& m) const {
        std::ostringstream os;
        os << "\n## Worst-case search\n\n"
           << search_ << " inputs per n (every position and replacement of each), seed "
           << search_seed_ << " (search.json). The largest change found is attained, so it is a "
           << "lower bound on the worst case at n; it is the maximum only where the search was "
           << "exhaustive. A change certainly above K(n)/n (the a-priori bound, when the "
           << "hypotheses hold) is a finding.\n\n"
           << "A change above the bound over every input (all lengths n, docs/bounds.md) is a finding "
              "too; the two bracket the true worst case.\n\n"
           << "| n | largest found | n · largest | position | replacement | found at | exhaustive | "
              "K(n)/n | every input |\n|---|---|---|---|---|---|---|---|---|\n";
        for (const auto& row : rows) {
            const auto& r = row.result;
            os << "| " << r.n << " | ";
            if (!r.found) {
                os << "no change measured | | | | | " << (r.exhaustive ? "yes" : "no") << " | | |\n";
            } else {
                os << (row.influence.empty() ? "-" : row.influence) << " | "
                   << (row.n_influence.empty() ? "-" : row.n_influence) << " | " << r.position + 1
                   << " | " << m.sigma.symbols[static_cast<std::size_t>(r.replacement)] << " | "
                   << r.found_at << "/" << r.evaluations << " | " << (r.exhaustive ? "yes" : "no")
                   << " | " << (row.bound ? *row.bound : std::string("-"))
                   << (row.above_bound ? " **below the change found: a finding**" : "") << " | "
                   << (row.certified ? *row.certified : std::string("-"))
                   << (row.above_certified ? " **below the change found: a finding**" : "") << " |\n";
            }
        }
        for (const auto& row : rows)
            if (row.result.undefined)
                os << "\nAt n = " << row.result.n << " a value is undefined: " << *row.result.undefined
                   << "\n";
        return os.str();
    }

    std::string search_text(const std::vector<search_row>& rows, const model::model<numeric::rational>& m) const {
        std::ostringstream os;
        os << "worst-case search: " << search_ << " inputs per n (every position and replacement), seed "
           << search_seed_ << "; the largest found is a lower bound on the worst case, the maximum "
           << "only where exhaustive\n";
        os << std::right << std::setw(8) << "n" << "  " << std::left << std::setw(33) << "largest found"
           << std::setw(33) << "n * largest" << std::setw(10) << "position" << std::setw(13)
           << "replacement" << std::setw(12) << "found at" << "exhaustive\n";
        for (const auto& row : rows) {
            const auto& r = row.result;
            os << std::right << std::setw(8) << r.n << "  " << std::left;
            if (!r.found) {
                os << "no change measured";
            } else {
                os << std::setw(32) << (row.influence.empty() ? "-" : row.influence) << " "
                   << std::setw(32) << (row.n_influence.empty() ? "-" : row.n_influence) << " "
                   << std::setw(10) << std::to_string(r.position + 1) << std::setw(13)
                   << m.sigma.symbols[static_cast<std::size_t>(r.replacement)] << std::setw(12) << (std::to_string(r.found_at) + "/" + std::to_string(r.evaluations))
                   << (r.exhaustive ? "yes" : "no");
                if (row.above_bound) os << "  ABOVE K(n)/n = " << *row.bound;
                if (row.certified) os << "  (every input: <= " << *row.certified << ")";
                if (row.above_certified) os << "  ABOVE THE BOUND OVER EVERY INPUT";
            }
            os << "\n";
            if (r.found && r.n <= 64)
                os << "          input " << model::format_input(m.sigma, r.input) << "\n";
            if (r.undefined) os << "          undefined: " << *r.undefined << "\n";
        }
        return os.str();
    }

    CLI::App* app_ = nullptr;
    std::string model_, n_text_, positions_text_ = "8", language_, scalar_ = "auto", out_;
    int inputs_ = 4, threads_ = 0;
    long precision_ = 128, divisor_ = 1, posterior_max_n_ = 4096, precision_cap_ = 1024;
    int digits_ = 12;
    std::uint64_t seed_ = 1, search_seed_ = 1;
    long search_ = 0;
    bool json_ = false, force_ = false, no_every_input_ = false, figure_text_ = false;
};

} // namespace

std::unique_ptr<command> make_influence_command(CLI::App& parent) {
    return std::make_unique<influence_command>(parent);
}

} // namespace attnprop::cli
