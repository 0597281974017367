// attnprop: formal-property verification and test harness for Hahn (2020)'s theorems on
// hard and soft attention. main() only parses arguments and maps errors to exit codes.
#include "cli/commands.hpp"
#include "model/model_file.hpp"

#include <iostream>

int main(int argc, char** argv) {
    using namespace attnprop;
    using namespace attnprop::cli;
    CLI::App app{"attnprop " ATTNPROP_VERSION
                 ": check Hahn (2020)'s hard- and soft-attention theorems on concrete and random "
                 "transformers, exactly or at arbitrary precision.\n"
                 "Exit codes: 0 everything held, 1 a claim failed, 2 bad usage or input, "
                 "3 internal error, 4 a result is undefined (NaN, 0/0, a layer norm at zero "
                 "variance), located."};
    app.set_version_flag("--version", ATTNPROP_VERSION);
    app.require_subcommand(1);
    std::vector<std::unique_ptr<command>> commands;
    commands.push_back(make_eval_command(app));
    commands.push_back(make_check_command(app));
    commands.push_back(make_replay_command(app));
    commands.push_back(make_restrict_command(app));
    commands.push_back(make_influence_command(app));
    commands.push_back(make_bound_command(app));
    commands.push_back(make_models_command(app));
    commands.push_back(make_format_command(app));
    if (argc > 1 && argv[1][0] != '-') {
        std::string word = argv[1];
        bool known = false;
        std::string names;
        for (auto& c : commands) {
            known = known || c->app()->get_name() == word;
            names += (names.empty() ? "" : ", ") + c->app()->get_name();
        }
        if (!known) {
            std::cerr << "attnprop: error: unknown subcommand '" << word << "' (known: " << names
                      << "; see attnprop --help)\n";
            return exit_usage;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? exit_ok : exit_usage;
    }
    try {
        for (auto& c : commands)
            if (c->app()->parsed()) {
                // What made the reports: filled once here, completed by the command.
                report::provenance made_by = invocation_provenance(argc, argv);
                made_by.options = option_values(*c->app());
                return c->run(made_by);
            }
        return exit_usage;
    } catch (const usage_error& e) {
        std::cerr << "attnprop: error: " << e.what() << "\n";
        return exit_usage;
    } catch (const model::model_file_error& e) {
        std::cerr << e.what() << "\n";
        return exit_usage;
    } catch (const model::input_error& e) {
        std::cerr << "attnprop: error: " << e.what() << "\n";
        return exit_usage;
    } catch (const numeric::undefined_error& e) {
        std::cerr << "attnprop: " << e.message() << "\n";
        return exit_undefined;
    } catch (const numeric::numeric_error& e) {
        std::cerr << "attnprop: error: " << e.what() << "\n";
        return exit_usage;
    } catch (const std::exception& e) {
        std::cerr << "attnprop: internal error: " << e.what() << "\n";
        return exit_internal;
    }
}
