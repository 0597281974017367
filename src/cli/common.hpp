#pragma once
/// @file common.hpp
/// Shared command-line plumbing: exit codes, model lookup, error reporting.

#include "model/model.hpp"
#include "report/provenance.hpp"

#include <CLI/CLI.hpp>

#include <exception>
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
    exit_not_reproduced = 5, ///< replay: the case gives another verdict than the folder records
    /// stopped by SIGINT or SIGUSR1: the results finished before it are written (check, influence,
    /// restrict); exit_failed instead when a counterexample was found before the stop
    exit_interrupted = 130
};

/// Makes the first SIGINT or SIGUSR1 a stop request (numeric::request_stop): check, influence
/// and restrict then finish or drop the unit of work in progress and write what they finished;
/// a second one ends the process at once. Every rank of an MPI run calls it: Open MPI's mpirun
/// forwards SIGUSR1 to every rank, while it turns SIGINT into SIGTERM and SIGKILL (the journal
/// then keeps the finished units for a rerun). Only rank 0 prints the stop message.
void stop_on_interrupt();

/// One line of progress on standard error, rewritten in place, only when standard error is a
/// terminal (nothing otherwise, so logs and pipes stay clean). At most ~5 updates a second.
class progress_line {
public:
    progress_line();
    ~progress_line();
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;
    /// Shows `text` (throttled unless `force`).
    void show(const std::string& text, bool force = false);
    /// Erases the line (before other output on standard error).
    void clear();
    bool active() const { return tty_; }

private:
    bool tty_ = false;
    bool shown_ = false;
    long long last_ms_ = 0;
};

/// Raised for bad usage detected after parsing (conflicting options, bad values).
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The exit code and the message (one line, without its newline) of a command that ended with
/// exception `e`: bad usage or input, limits and allocation failures 2, undefined 4, anything
/// else an internal error 3; a unit that failed on another rank (dist::remote_failure) keeps
/// the code and message it had there. main prints them; a worker rank sends them to rank 0.
int describe_failure(std::exception_ptr e, std::string& printed);

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

/// The transform every integer option applies before its range check: the text must be a
/// decimal integer, an optional '-' and digits, and is read in base 10 whatever its leading
/// zeros ("020" is 20; CLI11 alone would read it as octal 16, "0x20" as 32). Anything else
/// ("0x20", "1e3", " 5") is refused: "--precision: '0x20' is not a decimal integer".
CLI::Validator decimal_integer();

/// The options several commands share, registered with one text everywhere:
/// --model,-m (required; a file or a bundled model's name) and --precision,-p (bits, in
/// [numeric::min_precision_bits, numeric::max_precision_bits], default shown).
CLI::Option* add_model_option(CLI::App* app, std::string& model);
CLI::Option* add_precision_option(CLI::App* app, long& bits, const std::string& what);

/// Reads an input for `m` from `path` ("-": standard input) in chunks, without holding the
/// file's text: every byte is either whitespace (space, tab, CR, LF, FF, VT; ignored, so an input
/// may be wrapped over lines and end with a newline) or one symbol of the alphabet. Throws
/// usage_error when the file cannot be read and model::input_error naming the file, line and
/// column of a byte outside the alphabet (eos included: it is appended). Eos is appended.
model::input_sequence read_input_file(const model::model<numeric::rational>& m,
                                      const std::string& path);

/// Registers --seed bound to `seed`: a decimal integer in [0, 2^64) without a sign (CLI11
/// alone would read -1 as 2^64 - 1 and saturate 2^64); the default is shown.
CLI::Option* add_seed_option(CLI::App* app, std::uint64_t& seed, const std::string& help);

/// Registers --limit NAME=VALUE (repeatable; numeric/limits.hpp) on a command, collecting the
/// values in `limits`; main applies them before the command runs.
CLI::Option* add_limit_option(CLI::App* app, std::vector<std::string>& limits);

/// What the command is computing, in words ("evaluating cc-first at n = 4096 (L = 2, H = 1,
/// d = 6)"): set by commands before their large allocations, so that an allocation failure
/// (std::bad_alloc, reported by main with exit code 2) names what was too large.
void set_activity(std::string what);
/// " while <activity>", or "" when none was set.
std::string activity_suffix();

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
    /// Whether the command spreads its work over MPI ranks (dist::run_units): every rank runs
    /// it. Otherwise rank 0 runs it alone and the other ranks wait for its exit code.
    virtual bool distributed() const { return false; }
};

} // namespace attnprop::cli
