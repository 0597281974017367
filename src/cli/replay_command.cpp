// attnprop replay: re-run one counterexample from its folder alone.
#include "cli/commands.hpp"
#include "report/check_report.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace attnprop::cli {

namespace {

namespace fs = std::filesystem;

class replay_command final : public command {
public:
    explicit replay_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "replay", "Re-run a counterexample folder (exit 1 if it still fails, 0 if it holds)");
        app_->add_option("dir", dir_,
                         "Counterexample folder (with case.json), or a report directory holding "
                         "exactly one counterexample")
            ->required();
        app_->add_flag("--json", json_, "Print the result as JSON");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& /*made_by*/) override {
        fs::path dir = resolve(dir_);
        report::replay_record rec;
        try {
            rec = report::read_counterexample(dir);
        } catch (const std::runtime_error& e) {
            throw usage_error(e.what());
        }
        runner::registry reg;
        runner::register_all(reg);
        const runner::property* p = reg.find(rec.property);
        if (!p) throw usage_error("unknown property '" + rec.property + "' in " + (dir / "case.json").string());
        long prec = rec.cfg.precision;
        runner::run_config cfg;
        cfg.precision = rec.cfg.precision;
        cfg.precision_cap = rec.cfg.precision_cap;
        runner::check_result r = runner::replay_case(*p, rec.value, cfg, &prec);
        if (json_) {
            json::value o = json::value::object();
            o.set("property", json::value::string(rec.property));
            o.set("folder", json::value::string(dir.string()));
            o.set("verdict", json::value::string(runner::to_string(r.status)));
            o.set("message", json::value::string(r.message));
            json::value nums = json::value::object();
            for (const auto& [k, v] : r.numbers) nums.set(k, json::value::string(v));
            o.set("numbers", std::move(nums));
            o.set("precision", json::value::number(prec));
            std::cout << json::dump(o, 2) << "\n";
        } else {
            std::cout << "property   " << rec.property << "\n";
            std::cout << "statement  " << p->statement << "\n";
            std::cout << "inputs    ";
            for (const auto& in : rec.value.inputs) std::cout << " \"" << in << "\"";
            std::cout << "\n";
            for (const auto& [k, v] : rec.value.params) std::cout << "param      " << k << " = " << v << "\n";
            std::cout << "verdict    " << runner::to_string(r.status) << " at " << prec << " bits";
            if (!r.message.empty()) std::cout << ": " << r.message;
            std::cout << "\n";
            for (const auto& [k, v] : r.numbers) std::cout << "  " << k << " = " << v << "\n";
        }
        if (r.status == runner::verdict::violated) return exit_failed;
        return r.status == runner::verdict::undefined ? exit_undefined : exit_ok;
    }

private:
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
    bool json_ = false;
};

} // namespace

std::unique_ptr<command> make_replay_command(CLI::App& parent) {
    return std::make_unique<replay_command>(parent);
}

} // namespace attnprop::cli
