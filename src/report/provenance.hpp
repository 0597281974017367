#pragma once
/// @file provenance.hpp
/// Who made a report: the attnprop version, the git commit it was built from, the command line
/// and every option's value after defaults. Recorded in every report.json, report.md and
/// case.json that attnprop writes (docs/reports.md, "Provenance"); `--out` compares the
/// recorded options before it replaces a report (docs/cli.md, "--out and --force").

#include "model/json.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnprop::report {

/// The provenance of one run. Filled once per command (src/cli/main.cpp and the command) and
/// passed to the report writers; an empty `version` means "not recorded" (library callers),
/// and the writers then leave the provenance out.
struct provenance {
    std::string version;       ///< attnprop's version (CMake PROJECT_VERSION)
    std::string commit;        ///< git commit the binary was built from, or "unknown"
    std::optional<bool> dirty; ///< tracked files were modified at build time; unknown without a commit
    std::string command_line;  ///< argv, each word shell-quoted, joined by spaces
    /// Every option of the command, in registration order: "--name" -> its value after
    /// defaults ("true"/"false" for flags, comma-joined for repeatable options).
    std::vector<std::pair<std::string, std::string>> options;

    /// True when nothing was recorded.
    bool empty() const { return version.empty(); }
    /// The value of an option, or nullptr.
    const std::string* option(std::string_view name) const;
    /// Replaces (or appends) an option's value.
    void set_option(const std::string& name, std::string value);
};

/// `word` quoted for a POSIX shell: unchanged when it consists of letters, digits and
/// `_ - . / : , = + @ %` only (and is not empty), else in single quotes ('' for an empty word).
std::string shell_quote(std::string_view word);

/// The shell-quoted words of argv joined by spaces.
std::string shell_join(int argc, const char* const* argv);

/// The JSON object written as "provenance": attnprop_version, commit, commit_dirty (boolean,
/// or null when the commit is unknown), command_line, options (object, in order).
json::value provenance_to_json(const provenance& p);

/// The provenance read back from a report document: doc["provenance"] when doc is an object
/// with a well-formed provenance object; nullopt otherwise (older reports, other files).
std::optional<provenance> provenance_from_json(const json::value& doc);

/// A short Markdown section "## Provenance" (version and commit, the command line, the
/// options), ending in a newline.
std::string provenance_to_markdown(const provenance& p);

/// One option as it appears in messages: "--seed 7", "--language ''", "--json true" (the
/// value shell-quoted).
std::string option_text(const std::string& name, const std::string& value);

/// The options whose values differ between `recorded` and `now`, in the order of `now` (then
/// options only `recorded` has), skipping the names in `ignored`. An option missing on one
/// side counts as differing.
std::vector<std::string> differing_options(const provenance& recorded, const provenance& now,
                                           const std::vector<std::string>& ignored);

} // namespace attnprop::report
