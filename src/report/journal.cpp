#include "report/journal.hpp"

#include "report/files.hpp"
#include "report/sha256.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace attnprop::report {

namespace fs = std::filesystem;
using json::value;

namespace {

/// The longest header line read: a provenance takes a few KiB; anything longer is not a header.
constexpr std::size_t max_header_bytes = std::size_t{1} << 20;

/// The fixed part of a record: the two lengths and the hash.
constexpr std::size_t record_head_bytes = 16 + 32;

void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(const char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
    return v;
}

/// The record's hash: over the fingerprint, so that a record cannot be carried into the journal
/// of another run, and over the lengths, so that a damaged length is caught as well.
std::array<std::uint8_t, 32> record_hash(const std::string& fingerprint, std::string_view lengths,
                                         std::string_view unit, std::string_view result) {
    sha256 h;
    h.update(fingerprint);
    h.update("\n");
    h.update(lengths);
    h.update(unit);
    h.update(result);
    return h.digest();
}

[[noreturn]] void cannot_write(const fs::path& p, int err) {
    throw std::runtime_error("cannot write " + p.string() + ": " + std::strerror(err));
}

/// The header line and its length in bytes (the line break included), or a problem.
struct header_line {
    std::optional<value> doc;
    std::uint64_t bytes = 0;
    std::string problem;
};

header_line read_header_line(std::ifstream& f) {
    header_line h;
    std::string line;
    char c = 0;
    while (f.get(c) && c != '\n') {
        if (line.size() >= max_header_bytes) {
            h.problem = "its first line is longer than a journal header";
            return h;
        }
        line += c;
    }
    if (c != '\n') {
        h.problem = line.empty() ? "it is empty" : "its first line is not complete";
        return h;
    }
    try {
        value doc = json::parse(line);
        const value* fmt = doc.is_object() ? doc.find("format") : nullptr;
        if (!fmt || !fmt->is_string()) {
            h.problem = "its first line is not a journal header (no \"format\")";
            return h;
        }
        h.doc = std::move(doc);
        h.bytes = line.size() + 1;
    } catch (const std::exception& e) {
        h.problem = std::string("its first line is not JSON (") + e.what() + ")";
    }
    return h;
}

std::string member(const value& doc, const char* name) {
    const value* v = doc.find(name);
    if (!v) return "";
    if (v->is_string()) return v->as_string();
    if (v->is_number()) return v->raw_number();
    return "";
}

} // namespace

std::optional<value> read_journal_header(const fs::path& p, std::string* problem) {
    std::ifstream f(p, std::ios::binary);
    if (!f) {
        if (problem) *problem = p.filename().string() + " cannot be opened";
        return std::nullopt;
    }
    header_line h = read_header_line(f);
    if (!h.doc && problem) *problem = p.filename().string() + ": " + h.problem;
    return std::move(h.doc);
}

std::string journal_record_bytes(const std::string& fingerprint, const journal_record& r) {
    std::string lengths;
    put_u64(lengths, r.unit.size());
    put_u64(lengths, r.result.size());
    const auto hash = record_hash(fingerprint, lengths, r.unit, r.result);
    std::string out = lengths;
    out.append(reinterpret_cast<const char*>(hash.data()), hash.size());
    out += r.unit;
    out += r.result;
    return out;
}

journal_contents read_journal(const fs::path& p, const std::string& format,
                              const std::string& fingerprint) {
    journal_contents out;
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (!fs::exists(st)) return out;
    if (!fs::is_regular_file(st)) {
        // A link (planted to make the run read, or append to, a file elsewhere), a FIFO, a
        // device: never opened; the journal is started afresh by a rename over it.
        out.note = p.string() + " is not a regular file" +
                   (fs::is_symlink(st) ? std::string(" (a symbolic link)") : std::string()) +
                   ": not read, starting fresh";
        return out;
    }
    const std::uint64_t size = fs::file_size(p, ec);
    std::ifstream f(p, std::ios::binary);
    if (ec || !f) {
        out.note = p.string() + " cannot be read: starting fresh";
        return out;
    }
    header_line h = read_header_line(f);
    if (!h.doc) {
        out.note = p.string() + " is not a journal (" + h.problem + "): starting fresh";
        return out;
    }
    const std::string got_format = member(*h.doc, "format");
    const std::string got_version = member(*h.doc, "version");
    const std::string got_fingerprint = member(*h.doc, "fingerprint");
    if (got_format != format) {
        out.note = p.string() + " is a journal of another kind (" + got_format + "): starting fresh";
        return out;
    }
    if (got_version != std::to_string(journal_version)) {
        out.note = p.string() + " has journal version " + got_version + ", this attnprop writes " +
                   std::to_string(journal_version) + ": starting fresh";
        return out;
    }
    if (got_fingerprint != fingerprint) {
        out.note = p.string() + " was made from another model file content, other options or " +
                   "another attnprop build (fingerprint " + got_fingerprint + "; this run has " +
                   fingerprint + "): starting fresh";
        return out;
    }
    std::uint64_t at = h.bytes;
    out.valid_bytes = at;
    for (std::size_t k = 1;; ++k) {
        const std::uint64_t left = size - at;
        if (left == 0) break;
        if (left < record_head_bytes) {
            out.note = p.string() + ": the last record is incomplete (" + std::to_string(left) +
                       " bytes; a run stopped while writing it, killed or out of disk space): ignored";
            break;
        }
        std::array<char, record_head_bytes> head{};
        if (!f.read(head.data(), head.size())) {
            out.note = p.string() + " cannot be read past byte " + std::to_string(at) +
                       ": the records from there on are ignored";
            break;
        }
        const std::uint64_t units = get_u64(head.data()), results = get_u64(head.data() + 8);
        const std::uint64_t body = left - record_head_bytes;
        if (units > body || results > body - units) {
            out.note = p.string() + ": the last record is incomplete (" + std::to_string(left) +
                       " bytes; a run stopped while writing it, killed or out of disk space): ignored";
            break;
        }
        journal_record r;
        r.unit.resize(static_cast<std::size_t>(units));
        r.result.resize(static_cast<std::size_t>(results));
        if (!f.read(r.unit.data(), static_cast<std::streamsize>(units)) ||
            !f.read(r.result.data(), static_cast<std::streamsize>(results))) {
            out.note = p.string() + " cannot be read past byte " + std::to_string(at) +
                       ": the records from there on are ignored";
            break;
        }
        const auto want = record_hash(fingerprint, std::string_view(head.data(), 16), r.unit, r.result);
        if (std::memcmp(want.data(), head.data() + 16, want.size()) != 0) {
            const std::uint64_t after = body - units - results;
            out.note = p.string() + ": record " + std::to_string(k) + " (at byte " +
                       std::to_string(at) + ") does not match its SHA-256 (damaged, or torn by a " +
                       "kill): it" + (after ? " and the " + std::to_string(after) + " bytes after it" : "") +
                       " are ignored";
            break;
        }
        at += record_head_bytes + units + results;
        out.valid_bytes = at;
        out.records.push_back(std::move(r));
    }
    return out;
}

journal_writer::journal_writer(fs::path p, const std::string& format, const std::string& fingerprint,
                               const provenance& made_by, std::uint64_t keep)
    : path_(std::move(p)), fingerprint_(fingerprint) {
    if (keep == 0) {
        value h = value::object();
        h.set("format", value::string(format));
        h.set("version", value::number(journal_version));
        h.set("fingerprint", value::string(fingerprint));
        if (!made_by.empty()) h.set("provenance", provenance_to_json(made_by));
        write_file_atomic(path_, json::dump(h, -1) + "\n");
    }
    // O_NOFOLLOW: a link put in place of the journal is refused, never appended through.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0) cannot_write(path_, errno);
    if (keep > 0 && (::ftruncate(fd_, static_cast<off_t>(keep)) != 0 || ::fsync(fd_) != 0)) {
        const int err = errno;
        (void)::close(fd_);
        fd_ = -1;
        cannot_write(path_, err);
    }
}

journal_writer::~journal_writer() {
    if (fd_ >= 0) (void)::close(fd_);
}

void journal_writer::append(const journal_record& r) {
    // One write of the whole record: a kill leaves it whole or torn at the end of the file,
    // where the reader finds it incomplete or not matching its hash.
    const std::string bytes = journal_record_bytes(fingerprint_, r);
    if (const int err = write_all(fd_, bytes)) cannot_write(path_, err);
    if (::fdatasync(fd_) != 0) cannot_write(path_, errno);
}

} // namespace attnprop::report
