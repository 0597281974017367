#pragma once
/// @file common.hpp
/// Shared command-line plumbing: exit codes, model lookup, error reporting.

#include "model/model.hpp"
#include "report/provenance.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace attnprop::cli {

/// Exit codes of the command-line contract (docs/cli.md).
enum exit_code : int {
    exit_ok = 0,        ///< everything held
    exit_failed = 1,    ///< a claim failed (counterexample written)
    exit_usage = 2,     ///< bad usage or input
    exit_internal = 3,  ///< internal error
    exit_undefined = 4, ///< no claim failed, but a result is undefined (NaN, 0/0, ...), located
    exit_not_reproduced = 5 ///< replay: the case gives another verdict than the folder records
};

/// Raised for bad usage detected after parsing (conflicting options, bad values).
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The directories searched for bundled models, in order: $ATTNPROP_MODELS_DIR, the source
/// tree's models/, the installed share/attnprop/models.
std::vector<std::filesystem::path> model_dirs();

/// Resolves --model: an existing file path, or the name of a bundled model (with or without
/// ".json"). Throws usage_error listing the bundled models when nothing matches.
std::filesystem::path resolve_model(const std::string& arg);

/// Every bundled model file, sorted by name (first directory that exists wins).
std::vector<std::filesystem::path> bundled_models();

/// Parses an --n list: one length "64", a comma list "16,64,256" or a geometric range
/// FROM:TO:xFACTOR ("16:4096:x2": 16, 32, ..., 4096). Every n must be an integer in
/// [2, 2^20]. Throws usage_error with a message starting "--n: " otherwise.
std::vector<long> parse_length_list(const std::string& text);

/// The options several commands share, registered with one text everywhere:
/// --model,-m (required; a file or a bundled model's name) and --precision,-p (bits, in
/// [numeric::min_precision_bits, numeric::max_precision_bits], default shown).
CLI::Option* add_model_option(CLI::App* app, std::string& model);
CLI::Option* add_precision_option(CLI::App* app, long& bits, const std::string& what);

/// The provenance of this invocation without its options: attnprop's version, the git commit
/// and dirty flag of the build (generated header, src/cli/build_info.cpp) and argv,
/// shell-quoted.
report::provenance invocation_provenance(int argc, const char* const* argv);

/// Every option of `app` (its own, not its parent's or subcommands', without --help) with its
/// value after parsing and defaults, in registration order, named by its first long name:
/// flags "true" / "false", repeatable options their values joined by ",", others the bound
/// variable's value as text (so `--seed 007` reads "7").
std::vector<std::pair<std::string, std::string>> option_values(CLI::App& app);

/// A subcommand: registers its options on construction, runs when selected.
class command {
public:
    virtual ~command() = default;
    virtual CLI::App* app() = 0;
    /// Runs the parsed command; `made_by` is the invocation's provenance with this command's
    /// options, for the reports it writes.
    virtual int run(const report::provenance& made_by) = 0;
};

} // namespace attnprop::cli
