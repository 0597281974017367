#pragma once
/// @file commands.hpp
/// Factories of the subcommands (one file each).

#include "cli/common.hpp"

#include <memory>

namespace attnprop::cli {

std::unique_ptr<command> make_eval_command(CLI::App& parent);
std::unique_ptr<command> make_models_command(CLI::App& parent);
std::unique_ptr<command> make_check_command(CLI::App& parent);
std::unique_ptr<command> make_replay_command(CLI::App& parent);
std::unique_ptr<command> make_restrict_command(CLI::App& parent);
std::unique_ptr<command> make_bound_command(CLI::App& parent);
std::unique_ptr<command> make_influence_command(CLI::App& parent);
std::unique_ptr<command> make_simulate_command(CLI::App& parent);
std::unique_ptr<command> make_format_command(CLI::App& parent);
std::unique_ptr<command> make_plot_command(CLI::App& parent);

} // namespace attnprop::cli
