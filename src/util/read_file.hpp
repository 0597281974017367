#pragma once
/// @file read_file.hpp
/// Reading a whole file that a user names (a model file, a counterexample's case.json and
/// model, a report in a folder about to be claimed): only regular files. A FIFO would block the
/// read for ever and a device (a link to /dev/zero) would grow memory without bound, so the file
/// is opened without blocking and checked on the descriptor itself, after any link is resolved,
/// before a byte is read.

#include <filesystem>
#include <string>

namespace attnprop::util {

/// Reads the regular file at `p` (links followed) into `out`. Returns "" on success, else why
/// not, as a phrase to follow the file's name: "is a FIFO (named pipe), not a file",
/// "is a character device, not a file", "is a folder, not a file", "cannot open: No such file
/// or directory", "cannot read: ...".
std::string read_regular_file(const std::filesystem::path& p, std::string& out);

/// What a file status is, for messages: "a folder", "a FIFO (named pipe)", "a character
/// device", "a block device", "a socket", "not a regular file"; "" for a regular file.
std::string non_regular_kind(const std::filesystem::file_status& st);

} // namespace attnprop::util
