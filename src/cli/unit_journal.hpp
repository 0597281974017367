#pragma once
/// @file unit_journal.hpp
/// The journal of `check` and `restrict` in their report folder (DIR/units.journal,
/// report/journal.hpp; docs/reports.md, "Journals"): rank 0 (or the one process) records every
/// unit as it finishes, and a run restarted with the same command reuses the records instead
/// of computing those units again.

#include "report/journal.hpp"
#include "report/provenance.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnprop::cli {

/// The journal's file name in a report folder.
inline constexpr const char* journal_file = "units.journal";

/// The fingerprint of a run's units: SHA-256 (hex) of the journal format of `command`, the
/// attnprop version, commit and dirty flag of `made_by`, every recorded option but `ignored`
/// (name and value after defaults), `content` (what the units read besides the options: the
/// model in canonical form) and the unit names in order. Two runs with the same fingerprint
/// compute the same unit results.
std::string journal_fingerprint(const std::string& command, const report::provenance& made_by,
                                const std::vector<std::string>& ignored, const std::string& content,
                                const std::vector<std::string>& units);

/// A command's journal for one run.
class unit_journal {
public:
    /// The journal of `command` ("check", "restrict"; format "attnprop-COMMAND-journal") in
    /// `dir`. With `reuse` (the folder was claimed as holding a report of the same options) it
    /// reads DIR/units.journal and keeps the records of a run with `fingerprint`; what it could
    /// not use goes to standard error ("check: ..."). Writes nothing yet. Throws usage_error when
    /// ATTNPROP_KILL_AFTER_UNITS is set to anything but a positive integer.
    unit_journal(std::filesystem::path dir, std::string command, std::string fingerprint,
                 report::provenance made_by, bool reuse);
    ~unit_journal();
    unit_journal(const unit_journal&) = delete;
    unit_journal& operator=(const unit_journal&) = delete;

    /// The complete records of the earlier run, in file order.
    const std::vector<report::journal_record>& found() const { return found_; }
    /// Forgets the records found (one could not be decoded: says `why` on standard error); the
    /// journal then starts afresh at the first record.
    void discard_found(const std::string& why);

    /// Records a finished unit, durably (the record is on the disk when this returns). The first
    /// call creates the journal, or continues the earlier one after its last complete record. A
    /// journal that cannot be written is said once on standard error and not written again;
    /// the run goes on (the journal saves work, it holds no result the report needs).
    /// With ATTNPROP_KILL_AFTER_UNITS=K in the environment the process kills itself (SIGKILL)
    /// once this call has recorded its K-th unit: the tests' way to kill a run at a known point.
    void record(const std::string& unit, const std::string& result);

    /// Removes the journal, once the complete report is written. A failure is said on standard
    /// error (the journal then only makes the next run of the same command reuse its units).
    void remove();

    std::filesystem::path path() const { return dir_ / journal_file; }

private:
    std::filesystem::path dir_;
    std::string command_, format_, fingerprint_;
    report::provenance made_by_;
    std::vector<report::journal_record> found_;
    std::uint64_t keep_ = 0;   ///< valid bytes of the earlier journal (0: start a new one)
    std::unique_ptr<report::journal_writer> writer_;
    bool broken_ = false;      ///< a write failed: nothing more is written
    long recorded_ = 0;        ///< records written by this process
    long kill_after_ = 0;      ///< ATTNPROP_KILL_AFTER_UNITS, 0 when unset
};

} // namespace attnprop::cli
