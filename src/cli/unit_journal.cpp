#include "cli/unit_journal.hpp"

#include "cli/common.hpp"
#include "report/sha256.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>

namespace attnprop::cli {

namespace fs = std::filesystem;

std::string journal_fingerprint(const std::string& command, const report::provenance& made_by,
                                const std::vector<std::string>& ignored, const std::string& content,
                                const std::vector<std::string>& units) {
    // Every part on its own line, so that no two runs' texts can run into each other (option
    // values are one line: the command line's words are not part of it).
    std::string text = "attnprop-" + command + "-journal " + std::to_string(report::journal_version) + "\n";
    text += "version " + made_by.version + "\n";
    text += "commit " + made_by.commit +
            (made_by.dirty ? (*made_by.dirty ? " dirty" : " clean") : " unknown") + "\n";
    for (const auto& [name, value] : made_by.options)
        if (std::find(ignored.begin(), ignored.end(), name) == ignored.end())
            text += "option " + name + " " + report::sha256_hex(value) + "\n";
    text += "content " + report::sha256_hex(content) + "\n";
    for (const auto& u : units) text += "unit " + report::sha256_hex(u) + "\n";
    return report::sha256_hex(text);
}

unit_journal::unit_journal(fs::path dir, std::string command, std::string fingerprint,
                           report::provenance made_by, bool reuse)
    : dir_(std::move(dir)), command_(std::move(command)), format_("attnprop-" + command_ + "-journal"),
      fingerprint_(std::move(fingerprint)), made_by_(std::move(made_by)) {
    if (const char* k = std::getenv("ATTNPROP_KILL_AFTER_UNITS"); k && *k) {
        char* end = nullptr;
        const long v = std::strtol(k, &end, 10);
        if (*end != '\0' || v < 1)
            throw usage_error(std::string("ATTNPROP_KILL_AFTER_UNITS: expected a positive integer, got '") +
                              k + "'");
        kill_after_ = v;
    }
    if (!reuse) return;
    report::journal_contents c = report::read_journal(path(), format_, fingerprint_);
    if (!c.note.empty()) std::cerr << command_ << ": " << c.note << "\n";
    found_ = std::move(c.records);
    keep_ = c.valid_bytes;
}

unit_journal::~unit_journal() = default;

void unit_journal::discard_found(const std::string& why) {
    std::cerr << command_ << ": " << path().string() << ": " << why << ": starting fresh\n";
    found_.clear();
    keep_ = 0;
}

void unit_journal::record(const std::string& unit, const std::string& result) {
    if (broken_) return;
    try {
        if (!writer_)
            writer_ = std::make_unique<report::journal_writer>(path(), format_, fingerprint_, made_by_, keep_);
        writer_->append({unit, result});
    } catch (const std::exception& e) {
        broken_ = true;
        writer_.reset();
        std::cerr << command_ << ": the journal cannot be written (" << e.what()
                  << "): a run killed from here on computes its unfinished units again\n";
        return;
    }
    if (kill_after_ > 0 && ++recorded_ == kill_after_) std::raise(SIGKILL);
}

void unit_journal::remove() {
    writer_.reset();
    std::error_code ec;
    fs::remove(path(), ec);
    if (ec)
        std::cerr << command_ << ": cannot remove " << path().string() << " (" << ec.message()
                  << "): the next run of the same command reuses its units\n";
}

} // namespace attnprop::cli
