#pragma once
/// @file journal.hpp
/// The journal of a report folder: the finished units of a run (a property of `check`, a length
/// of `restrict`), appended one record at a time as each finishes, so that a run killed at any
/// point and restarted with the same command reuses every finished unit (docs/reports.md,
/// "Journals").
///
/// The file is a header line, the compact JSON object
///     {"format": F, "version": 1, "fingerprint": FP, "provenance": {...}}
/// followed by records, each
///     8 bytes   U, the length of the unit's name (unsigned, little-endian)
///     8 bytes   R, the length of its result
///     32 bytes  SHA-256 of FP, a line break, the 16 length bytes, the name and the result
///     U bytes   the unit's name ("semantics/leftmost-tie-rule", "16")
///     R bytes   the unit's result (any bytes: the commands store the encoding of dist/units)
/// A record is appended with one write and flushed to the disk before the writer returns. A run
/// killed while writing leaves a torn last record: shorter than its lengths say, or with bytes
/// that do not match its hash; the reader ignores it (and everything after a damaged record),
/// never misreads it.

#include "report/provenance.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::report {

/// The version of the layout above, written in every header.
inline constexpr int journal_version = 1;

/// One finished unit.
struct journal_record {
    std::string unit;   ///< the unit's name, unique within a run
    std::string result; ///< its result, as the command encodes it
};

/// The header line of the journal at `p`, parsed: a JSON object with a "format" member (what
/// out_dir's claim of a folder reads). nullopt with `problem` set when the file cannot be
/// read, its first line (at most 1 MiB) is missing or longer, or is not such an object.
std::optional<json::value> read_journal_header(const std::filesystem::path& p, std::string* problem);

/// What read_journal found.
struct journal_contents {
    /// The complete, verified records in file order; empty unless the header carries `format`,
    /// journal_version and `fingerprint`.
    std::vector<journal_record> records;
    /// Bytes of the header and those records: where the next record goes when the journal is
    /// continued; 0 when it cannot be continued (no file, or a header of another run).
    std::uint64_t valid_bytes = 0;
    /// What was not used, and why, as a sentence naming the file ("" when every byte was used
    /// or there is no file): another fingerprint, an unreadable header, a torn last record, a
    /// record whose hash does not match.
    std::string note;
};

/// Reads the journal at `p` for a run whose journal has `format` and `fingerprint`. Never
/// throws for the file's content (what cannot be used is left out and named in `note`); reads
/// one record at a time, each bounded by the file's size.
journal_contents read_journal(const std::filesystem::path& p, const std::string& format,
                              const std::string& fingerprint);

/// The bytes of one record of a journal with `fingerprint` (the layout above).
std::string journal_record_bytes(const std::string& fingerprint, const journal_record& r);

/// Appends records to a journal file. Not copyable; closes the file when destroyed.
class journal_writer {
public:
    /// Continues the journal at `p` after its first `keep` bytes (journal_contents::valid_bytes:
    /// a torn or damaged tail is cut off and flushed before the first append), or, with `keep`
    /// 0, starts a new one: the header of `format`, `fingerprint` and `made_by` (left out when
    /// empty), written atomically over whatever `p` held. Throws std::runtime_error ("cannot
    /// write P: reason").
    journal_writer(std::filesystem::path p, const std::string& format,
                   const std::string& fingerprint, const provenance& made_by, std::uint64_t keep);
    ~journal_writer();
    journal_writer(const journal_writer&) = delete;
    journal_writer& operator=(const journal_writer&) = delete;

    /// Appends `r` with one write and flushes it to the disk (fdatasync) before returning.
    /// Throws std::runtime_error ("cannot write P: reason"); the file may then end in a torn
    /// record, so a writer that threw must not be used again.
    void append(const journal_record& r);

private:
    std::filesystem::path path_;
    std::string fingerprint_;
    int fd_ = -1;
};

} // namespace attnprop::report
