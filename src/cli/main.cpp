// attnprop: formal-property verification and test harness for Hahn (2020)'s theorems on
// hard and soft attention. main() only parses arguments and maps errors to exit codes.
#include "cli/commands.hpp"
#include "dist/world.hpp"
#include "numeric/allocation.hpp"
#include "numeric/limits.hpp"

#include <iostream>
#include <new>
#include <sstream>

namespace {

using namespace attnprop;
using namespace attnprop::cli;

/// The command line, run by every rank under MPI: rank 0 prints (errors, help), the others
/// only take part in the commands that spread their work (command::distributed).
int run(int argc, char** argv) {
    const bool speaks = dist::is_root();
    CLI::App app{"attnprop " ATTNPROP_VERSION
                 ": check Hahn (2020)'s hard- and soft-attention theorems on concrete and random "
                 "transformers, exactly or at arbitrary precision.\n"
                 "Exit codes: 0 everything held, 1 a claim failed, 2 bad usage or input, "
                 "3 internal error, 4 a result is undefined (NaN, 0/0, a layer norm at zero "
                 "variance), located; 5 (replay) the recorded verdict did not reproduce.\n"
                 "Under mpirun (or srun), check, influence and restrict spread their work over "
                 "the ranks and write the report of one process (docs/cli.md, \"Running under "
                 "MPI\")."};
    app.set_version_flag("--version", ATTNPROP_VERSION);
    app.require_subcommand(1);
    std::vector<std::unique_ptr<command>> commands;
    commands.push_back(make_eval_command(app));
    commands.push_back(make_check_command(app));
    commands.push_back(make_replay_command(app));
    commands.push_back(make_restrict_command(app));
    commands.push_back(make_influence_command(app));
    commands.push_back(make_simulate_command(app));
    commands.push_back(make_bound_command(app));
    commands.push_back(make_models_command(app));
    commands.push_back(make_format_command(app));
    commands.push_back(make_plot_command(app));
    // Resource limits apply to every command that computes (not to `models`); given after the
    // command's name, so each command's --help lists the option.
    std::vector<std::string> limits;
    for (auto& c : commands)
        if (c->app()->get_name() != "models") add_limit_option(c->app(), limits);
    numeric::install_allocation_guard();
    if (argc > 1 && argv[1][0] != '-' && speaks) {
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
        std::ostringstream quiet;
        int code = speaks ? app.exit(e) : app.exit(e, quiet, quiet);
        return code == 0 ? exit_ok : exit_usage;
    }
    try {
        try {
            // ATTNPROP_LIMITS first (read on first use), then --limit over it.
            (void)numeric::limit_value(numeric::limit::exact_bits);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        try {
            for (const auto& l : limits) numeric::set_limit_text(l);
        } catch (const std::invalid_argument& e) {
            throw usage_error(std::string("--limit: ") + e.what());
        }
        for (auto& c : commands)
            if (c->app()->parsed()) {
                if (!speaks && !c->distributed()) return exit_ok; // rank 0 runs it alone
                // What made the reports: filled once here, completed by the command. Limits
                // decide whether a run finishes, never what it reports: left out.
                report::provenance made_by = invocation_provenance(argc, argv);
                made_by.options = option_values(*c->app());
                std::erase_if(made_by.options, [](const auto& o) { return o.first == "--limit"; });
                return c->run(made_by);
            }
        return exit_usage;
    } catch (const dist::ended_by_root& e) {
        return e.code; // rank 0 failed and says why
    } catch (...) {
        std::string printed;
        const int code = describe_failure(std::current_exception(), printed);
        if (speaks) std::cerr << printed << "\n";
        return code;
    }
}

} // namespace

int main(int argc, char** argv) {
    using namespace attnprop;
    using namespace attnprop::cli;
    try {
        dist::start(&argc, &argv);
    } catch (const std::exception& e) {
        std::cerr << "attnprop: error: " << e.what() << "\n";
        return exit_usage;
    }
    dist::set_failure_describer(describe_failure);
    return dist::finish(run(argc, argv));
}
