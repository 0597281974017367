#pragma once
/// @file out_dir.hpp
/// `--out` semantics of the commands that write report folders (check, influence, restrict;
/// docs/cli.md, "--out and --force"): a folder holding a report made with other options is
/// never overwritten without `--force`.

#include "report/provenance.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::cli {

/// A file whose presence makes a folder a report of a command.
struct out_marker {
    std::string file;     ///< "report.json"
    std::string format;   ///< the "format" it must carry: "attnprop-check-report"
    /// A journal (report/journal.hpp): only its header line is read, and it holds the
    /// provenance the options are compared with.
    bool journal = false;
};

/// How one command treats its output folder.
struct out_policy {
    std::string command;                ///< "check", "influence", "restrict" (for messages)
    /// Files whose presence makes the folder a report of this command, tried in order: the
    /// first that reads as its format decides; {"report.json", "attnprop-check-report"}, ...
    std::vector<out_marker> markers;
    /// Options that never change the report (--out, --json, --threads, ...): not compared.
    std::vector<std::string> ignored;
    /// Entries the command writes into the folder: removed by remove_owned.
    std::vector<std::string> owned_files;
    /// Name prefixes of the counterexample folders the command writes ("counterexample-n"):
    /// sub-folders with such a name that hold a case.json are removed by remove_owned.
    std::vector<std::string> owned_folder_prefixes;
};

/// What claim_out_dir found.
enum class out_found {
    nothing,     ///< no folder, or an empty one
    same_report, ///< a report of this command made with the same options (or fingerprint)
    replaced     ///< anything else, accepted because of --force
};

/// Decides whether `dir` may receive this run's report, before the run starts. With
/// `fingerprint` (influence) a recorded report is the same when its "fingerprint" equals it;
/// otherwise when its recorded options equal `now.options`, ignoring `policy.ignored`.
/// Without `force`, throws usage_error (exit 2) when `dir` is not a folder, or holds a report
/// made with other options (naming the folder and the differing options, old and new values),
/// or a report of an attnprop that did not record its options, or is not empty and holds no
/// report of this command. With `force` it returns out_found::replaced in those cases and
/// prints one line on standard error saying what is replaced.
out_found claim_out_dir(const std::filesystem::path& dir, const report::provenance& now,
                        const out_policy& policy, bool force,
                        const std::optional<std::string>& fingerprint = std::nullopt);

/// Removes the entries of `policy.owned_files` and the owned counterexample folders from dir
/// (nothing else). Throws usage_error when an entry cannot be removed.
void remove_owned(const std::filesystem::path& dir, const out_policy& policy);

/// Makes sure the report can be written before any computation: creates `dir` (and its
/// parents) and creates, writes, flushes and removes a probe file in it. Throws usage_error
/// naming the folder and the reason ("cannot create out/x: Not a directory", "cannot write
/// into out/x: Permission denied") when it cannot.
void prepare_out_dir(const std::filesystem::path& dir);

/// The same test without creating anything, for a folder that is written only if the run finds
/// something (restrict with one length and no --out): `dir`, when it exists, must be a
/// writable folder (probed as above); otherwise its nearest existing ancestor must be a folder
/// this process may create entries in. Throws usage_error as prepare_out_dir.
void check_out_dir_creatable(const std::filesystem::path& dir);

/// The report writing at the end of a run, kept apart from the results: runs `write` and
/// returns the error message of what it threw (a filesystem or write error), or "" when it
/// succeeded. A command prints its results whatever this returns.
std::string try_write(const std::function<void()>& write);

/// The exit code of a run whose report could not be written: prints "attnprop: error: the
/// report could not be written: <what> (the results are printed above)" on standard error and
/// returns `code` when it is not exit_ok (a failed claim, exit 1, or an undefined result,
/// exit 4, is never hidden by a filesystem error), else exit_usage.
int report_not_written(int code, const std::string& what);

} // namespace attnprop::cli
