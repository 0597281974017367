#pragma once
/// @file files.hpp
/// Report plumbing shared by every report writer: atomic, durable file writes and the small
/// JSON output helpers (strings, optional strings, integers, approximate doubles, arrays).

#include "model/json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnprop::report {

/// Writes `text` to a temporary file beside `p` (`<p>.tmp<pid>`), flushes it to the disk
/// (fsync), renames it over `p` and flushes the directory, so that readers (and a resumed run)
/// never see a half-written file and a finished write survives a crash. Throws
/// std::runtime_error ("cannot write P: reason") on failure; the temporary file is removed.
/// The temporary is created with O_EXCL | O_NOFOLLOW (create_temporary). Temporaries of p
/// that a killed writer left (`<p>.tmp<pid>` of a process that no longer exists) are removed
/// first.
void write_file_atomic(const std::filesystem::path& p, const std::string& text);

/// Creates the temporary file `<p>.tmp<pid>` for writing (O_EXCL | O_NOFOLLOW: whatever is
/// found there, a planted symbolic link included, is removed, never written through) after
/// removing the stale temporaries of p; returns its open descriptor and sets `tmp`. Throws
/// std::runtime_error ("cannot write P: reason").
int create_temporary(const std::filesystem::path& p, std::filesystem::path& tmp);

/// Creates the private folder `<p>.tmp<pid>` (mode 0700; whatever is found there is removed
/// first, a link without following it) for a program that writes p by name, after removing
/// the stale temporaries of p; returns its path. Throws std::runtime_error.
std::filesystem::path create_temporary_folder(const std::filesystem::path& p);

/// Removes every temporary of p (`<p>.tmp<digits>`, a file, a link or a folder), whatever
/// process made it: what `--force` does to the files it replaces. Best effort.
void remove_temporaries(const std::filesystem::path& p);

/// Writes every byte of `bytes` to the open descriptor `fd`, retrying after EINTR and short
/// writes: 0, or the errno of the write that failed.
int write_all(int fd, std::string_view bytes);

/// The JSON output helpers of the report writers.
namespace json_out {

inline json::value str(const std::string& s) { return json::value::string(s); }
inline json::value opt_str(const std::optional<std::string>& s) {
    return s ? json::value::string(*s) : json::value::null_value();
}
inline json::value num(long long v) { return json::value::number(v); }
/// An approximate double as a JSON number with `digits` significant digits ("%.*g"); null
/// when not finite. 17 digits give the double back exactly when read.
json::value approx(double v, int digits = 6);
json::value string_array(const std::vector<std::string>& v);
/// An object of string members, in order.
json::value string_object(const std::vector<std::pair<std::string, std::string>>& v);

} // namespace json_out

} // namespace attnprop::report
