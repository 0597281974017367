// attnprop replay: re-run one counterexample from its folder alone (runner::replay_folder).
#include "cli/commands.hpp"
#include "runner/replay.hpp"

#include <iostream>

namespace attnprop::cli {

namespace {

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
        runner::registry reg;
        runner::register_all(reg);
        const runner::replay_outcome o =
            runner::replay_folder(runner::counterexample_dir(dir_), allow_edited_, reg);
        if (json_)
            std::cout << json::dump(runner::replay_to_json(o), 2) << "\n";
        else
            std::cout << runner::replay_to_text(o);
        // A failure now is never hidden; a verdict that changed is told apart from every
        // result of a reproduced one.
        if (o.result.status() == verdict::failed) return exit_failed;
        if (!o.cmp.reproduced) return exit_not_reproduced;
        return o.result.status() == verdict::undefined ? exit_undefined : exit_ok;
    }

private:
    CLI::App* app_ = nullptr;
    std::string dir_;
    bool json_ = false, allow_edited_ = false;
};

} // namespace

std::unique_ptr<command> make_replay_command(CLI::App& parent) {
    return std::make_unique<replay_command>(parent);
}

} // namespace attnprop::cli
