// attnprop replay: re-run one counterexample from its folder alone.
#include "cli/commands.hpp"
#include "runner/replay.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <new>
#include <sstream>

namespace attnprop::cli {

namespace {

namespace fs = std::filesystem;

class replay_command final : public command {
public:
    explicit replay_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "replay", "Re-run a counterexample folder and compare with its recorded verdict (exit 1 "
                      "if the failure reproduced, 5 if the verdict changed, 2 if the folder cannot "
                      "be read or run, or was edited)");
        app_->add_option("dir", dir_,
                         "Counterexample folder (with case.json), or a report directory holding "
                         "exactly one counterexample")
            ->required();
        app_->add_flag("--allow-edited", allow_edited_,
                       "Replay a folder whose fingerprint says it was edited since attnprop wrote "
                       "it (or that records none), as it is now");
        app_->add_flag("--json", json_, "Print the result as JSON");
    }
    CLI::App* app() override { return app_; }

    /// A folder that cannot be read or run throws report::case_file_error (a located model file
    /// error: exit 2 in main), as a bad model file does.
    int run(const report::provenance& /*made_by*/) override {
        const fs::path dir = resolve(dir_);
        const runner::replay_record rec = runner::read_counterexample(dir);
        const report::case_record& c = rec.folder.record;
        const std::string case_file = rec.folder.case_path.string();
        const bool intact = rec.folder.seal == report::seal_status::intact;
        if (!intact && !allow_edited_)
            throw report::case_file_error(case_file, {}, "",
                                          rec.folder.seal_detail +
                                              "; not replayed (--allow-edited replays the folder as it is now)");
        runner::registry reg;
        runner::register_all(reg);
        const runner::property* p = reg.find(c.property);
        if (!p)
            throw report::case_file_error(case_file, c.where("/property"), "/property",
                                          "unknown property '" + c.property + "' (see attnprop check --list)");
        runner::check_case(*p, rec);
        long prec = c.precision;
        runner::run_config cfg;
        cfg.precision = c.precision;
        cfg.precision_cap = c.precision_cap;
        runner::check_result r;
        try {
            r = runner::replay_case(*p, rec.value, cfg, &prec);
        } catch (const std::bad_alloc&) {
            throw report::case_file_error(case_file, {}, "",
                                          "the case needs more memory than is available "
                                          "(std::bad_alloc while running " + c.property + ")");
        }
        const runner::replay_comparison cmp = runner::compare_with_record(c, r);
        if (json_)
            std::cout << json::dump(replay_json(dir, rec, r, prec, cmp), 2) << "\n";
        else
            std::cout << replay_text(rec, *p, r, prec, cmp);
        // A failure now is never hidden; a verdict that changed is told apart from every
        // result of a reproduced one.
        if (r.status() == verdict::failed) return exit_failed;
        if (!cmp.reproduced) return exit_not_reproduced;
        return r.status() == verdict::undefined ? exit_undefined : exit_ok;
    }

private:
    static const char* seal_name(report::seal_status s) {
        switch (s) {
        case report::seal_status::intact: return "intact";
        case report::seal_status::edited: return "edited";
        case report::seal_status::missing: return "missing";
        }
        return "?";
    }

    static json::value replay_json(const fs::path& dir, const runner::replay_record& rec,
                                   const runner::check_result& r, long prec,
                                   const runner::replay_comparison& cmp) {
        using json::value;
        const report::case_record& c = rec.folder.record;
        value o = value::object();
        o.set("property", value::string(c.property));
        o.set("folder", value::string(dir.string()));
        o.set("fingerprint", value::string(seal_name(rec.folder.seal)));
        if (rec.folder.seal != report::seal_status::intact)
            o.set("edited", value::string(rec.folder.seal_detail));
        o.set("verdict", value::string(std::string(word(r.status()))));
        o.set("message", value::string(r.message));
        value nums = value::object();
        for (const auto& [k, v] : r.numbers) nums.set(k, value::string(v));
        o.set("numbers", std::move(nums));
        o.set("precision", value::number(prec));
        o.set("recorded_verdict", value::string(std::string(word(c.verdict))));
        o.set("reproduced", value::boolean(cmp.reproduced));
        o.set("numbers_compared", value::boolean(cmp.numbers_compared));
        value diff = value::array();
        for (const auto& d : cmp.differing) {
            value e = value::object();
            e.set("name", value::string(d.name));
            e.set("recorded", d.recorded ? value::string(*d.recorded) : value::null_value());
            e.set("now", value::string(d.now));
            diff.push_back(std::move(e));
        }
        o.set("numbers_differ", std::move(diff));
        o.set("replay", value::string(cmp.summary()));
        return o;
    }

    static std::string replay_text(const runner::replay_record& rec, const runner::property& p,
                                   const runner::check_result& r, long prec,
                                   const runner::replay_comparison& cmp) {
        const report::case_record& c = rec.folder.record;
        std::ostringstream os;
        if (rec.folder.seal != report::seal_status::intact)
            os << "folder     EDITED: " << rec.folder.seal_detail << "; replayed as it is now (--allow-edited)\n";
        os << "property   " << c.property << "\n";
        os << "statement  " << p.statement << "\n";
        os << "inputs    ";
        for (const auto& in : c.inputs) os << " \"" << in << "\"";
        os << "\n";
        for (const auto& [k, v] : c.params) os << "param      " << k << " = " << v << "\n";
        os << "recorded   " << word(c.verdict) << " at " << c.precision << " bits";
        if (!c.message.empty()) os << ": " << c.message;
        os << "\n";
        os << "verdict    " << word(r.status()) << " at " << prec << " bits";
        if (!r.message.empty()) os << ": " << r.message;
        os << "\n";
        for (const auto& [k, v] : r.numbers) {
            os << "  " << k << " = " << v;
            for (const auto& d : cmp.differing)
                if (d.name == k) os << "  (recorded: " << d.recorded.value_or("null") << ")";
            os << "\n";
        }
        os << "replay     " << cmp.summary();
        if (!cmp.numbers_compared && !c.numbers.empty())
            os << (c.numbers_from.empty()
                       ? " (the folder does not say what computed its recorded numbers: not compared)"
                       : " (the recorded numbers were measured by attnprop " + c.numbers_from +
                             ", not by the property's check: not compared)");
        os << "\n";
        return os.str();
    }

    static fs::path resolve(const std::string& arg) {
        fs::path d(arg);
        std::error_code ec;
        if (fs::is_regular_file(d / "case.json", ec)) return d;
        fs::path cx = d / "counterexamples";
        if (fs::is_directory(cx, ec)) {
            std::vector<fs::path> found;
            for (const auto& e : fs::directory_iterator(cx, ec))
                if (fs::is_regular_file(e.path() / "case.json", ec)) found.push_back(e.path());
            std::sort(found.begin(), found.end());
            if (found.size() == 1) return found.front();
            if (found.size() > 1) {
                std::string msg = arg + " holds " + std::to_string(found.size()) +
                                  " counterexamples; replay one folder:";
                for (const auto& f : found) msg += "\n  " + f.string();
                throw usage_error(msg);
            }
        }
        throw usage_error(arg + " is not a counterexample folder (no case.json)");
    }

    CLI::App* app_ = nullptr;
    std::string dir_;
    bool json_ = false, allow_edited_ = false;
};

} // namespace

std::unique_ptr<command> make_replay_command(CLI::App& parent) {
    return std::make_unique<replay_command>(parent);
}

} // namespace attnprop::cli
