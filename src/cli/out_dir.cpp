#include "cli/out_dir.hpp"

#include "cli/common.hpp"
#include "report/files.hpp"
#include "report/journal.hpp"
#include "util/read_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <unistd.h>

namespace attnprop::cli {

namespace fs = std::filesystem;
using json::value;

namespace {

/// A marker file read back: its document, or why it could not be used.
struct marker_read {
    std::optional<value> doc; ///< set when the file parses and carries the expected format
    std::string other;        ///< the format of an attnprop file of another kind
    std::string problem;      ///< why the file could not be read
};

marker_read read_marker(const fs::path& p, const std::string& format, bool journal) {
    marker_read r;
    if (journal) {
        std::optional<value> doc = report::read_journal_header(p, &r.problem);
        if (!doc) return r;
        const std::string got = doc->find("format")->as_string();
        if (got == format)
            r.doc = std::move(doc);
        else if (got.starts_with("attnprop-"))
            r.other = got;
        else
            r.problem = p.filename().string() + " is not an attnprop journal";
        return r;
    }
    std::string text;
    if (!util::read_regular_file(p, text).empty()) {
        r.problem = p.filename().string() + " cannot be opened";
        return r;
    }
    try {
        value doc = json::parse(text);
        const value* fmt = doc.is_object() ? doc.find("format") : nullptr;
        const std::string got = fmt && fmt->is_string() ? fmt->as_string() : std::string();
        if (got == format)
            r.doc = std::move(doc);
        else if (got.starts_with("attnprop-"))
            r.other = got;
        else
            r.problem = p.filename().string() + " is not an attnprop report";
    } catch (const std::exception& e) {
        r.problem = p.filename().string() + " is not readable JSON (" + e.what() + ")";
    }
    return r;
}

std::string options_text(const report::provenance& p, const std::vector<std::string>& names) {
    std::string s;
    for (const auto& k : names) {
        s += s.empty() ? "" : " ";
        const std::string* v = p.option(k);
        s += v ? report::option_text(k, *v) : k + " (not recorded)";
    }
    return s;
}

const char* replace_hint = ": use --out DIR or --force to replace it";

} // namespace

out_found claim_out_dir(const fs::path& dir, const report::provenance& now, const out_policy& policy,
                        bool force, const std::optional<std::string>& fingerprint) {
    std::error_code ec;
    const std::string where = dir.string();
    if (!fs::exists(dir, ec)) return out_found::nothing;
    if (!fs::is_directory(dir, ec))
        throw usage_error(where + " exists and is not a folder: use another --out DIR");
    if (fs::is_empty(dir, ec)) return out_found::nothing;

    std::optional<value> doc;
    std::string other, problem;
    for (const auto& [file, format, journal] : policy.markers) {
        if (!fs::is_regular_file(dir / file, ec)) continue;
        marker_read m = read_marker(dir / file, format, journal);
        if (m.doc) {
            doc = std::move(m.doc);
            break;
        }
        if (other.empty()) other = m.other;
        if (problem.empty()) problem = m.problem;
    }
    auto refuse_or_force = [&](const std::string& refusal, const std::string& note) {
        if (!force) throw usage_error(refusal);
        std::cerr << "attnprop: --force: " << note << "\n";
        return out_found::replaced;
    };
    if (!doc) {
        std::string why = !other.empty() ? " (it holds an " + other + ")"
                          : !problem.empty() ? " (" + problem + ")"
                                             : std::string();
        return refuse_or_force(where + " is not empty and holds no attnprop " + policy.command +
                                   " report" + why + ": use --out DIR, or --force to write into it",
                               "writing into " + where + ", which holds no attnprop " +
                                   policy.command + " report" + why);
    }
    const std::optional<report::provenance> recorded = report::provenance_from_json(*doc);
    if (fingerprint) {
        const value* fp = doc->find("fingerprint");
        const std::string old = fp && fp->is_string() ? fp->as_string() : std::string();
        if (old == *fingerprint) return out_found::same_report;
        const std::vector<std::string> diff =
            recorded ? report::differing_options(*recorded, now, policy.ignored)
                     : std::vector<std::string>{};
        std::string made;
        if (!diff.empty())
            made = " made with " + options_text(*recorded, diff) + "; this run has " +
                   options_text(now, diff);
        else
            made = " made from another model file content, other options or another attnprop "
                   "version (fingerprint " + old + "; this run has " + *fingerprint + ")";
        return refuse_or_force(where + " holds an " + policy.command + " report" + made + replace_hint,
                               "replacing the " + policy.command + " report in " + where + made);
    }
    if (!recorded)
        return refuse_or_force(where + " holds a " + policy.command +
                                   " report made by an attnprop that did not record its options" +
                                   replace_hint,
                               "replacing the " + policy.command + " report in " + where +
                                   " (its options were not recorded)");
    const std::vector<std::string> diff = report::differing_options(*recorded, now, policy.ignored);
    if (diff.empty()) return out_found::same_report;
    const std::string made = " made with " + options_text(*recorded, diff) + "; this run has " +
                             options_text(now, diff);
    return refuse_or_force(where + " holds a report" + made + replace_hint,
                           "replacing the " + policy.command + " report in " + where + made);
}

void remove_owned(const fs::path& dir, const out_policy& policy) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    std::vector<fs::path> doomed;
    for (const auto& f : policy.owned_files) {
        if (fs::exists(fs::symlink_status(dir / f, ec))) doomed.push_back(dir / f);
        // Temporaries of a killed run (a renderer's output, a write cut short), whatever
        // process made them: the files they were for are replaced.
        report::remove_temporaries(dir / f);
    }
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        for (const auto& prefix : policy.owned_folder_prefixes)
            if (name.starts_with(prefix) && e.is_directory(ec) &&
                fs::is_regular_file(e.path() / "case.json", ec)) {
                doomed.push_back(e.path());
                break;
            }
    }
    for (const auto& p : doomed) {
        fs::remove_all(p, ec);
        if (ec) throw usage_error("cannot remove " + p.string() + " (" + ec.message() + ")");
    }
}

namespace {

/// Creates, writes, flushes and removes a file in `dir`; throws usage_error when any step fails.
void probe_writable(const fs::path& dir) {
    const fs::path probe = dir / (".attnprop-write-test-" + std::to_string(::getpid()));
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        throw usage_error("cannot write into " + dir.string() + ": " + std::strerror(errno) +
                          ": use another --out DIR");
    const bool ok = ::write(fd, "attnprop\n", 9) == 9 && ::fsync(fd) == 0;
    const int err = errno;
    (void)::close(fd);
    (void)::unlink(probe.c_str());
    if (!ok)
        throw usage_error("cannot write into " + dir.string() + ": " + std::strerror(err) +
                          ": use another --out DIR");
}

} // namespace

namespace {

/// Refuses a dangling symbolic link as --out (creating the folder would fail with "File
/// exists", which names neither the link nor what is missing).
void refuse_dangling_link(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(dir, ec)) || fs::exists(dir, ec)) return;
    const fs::path target = fs::read_symlink(dir, ec);
    throw usage_error(dir.string() + " is a symbolic link to " +
                      (ec ? std::string("a path that cannot be read") : target.string()) +
                      ", which does not exist: use another --out DIR, or create the folder it names");
}

} // namespace

void prepare_out_dir(const fs::path& dir) {
    std::error_code ec;
    refuse_dangling_link(dir);
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw usage_error(dir.string() + " exists and is not a folder: use another --out DIR");
    fs::create_directories(dir, ec);
    if (ec) throw usage_error("cannot create " + dir.string() + ": " + ec.message() + ": use another --out DIR");
    if (!fs::is_directory(dir, ec))
        throw usage_error(dir.string() + " exists and is not a folder: use another --out DIR");
    probe_writable(dir);
}

void check_out_dir_creatable(const fs::path& dir) {
    std::error_code ec;
    refuse_dangling_link(dir);
    const fs::path full = fs::absolute(dir, ec);
    if (ec) throw usage_error("cannot create " + dir.string() + ": " + ec.message());
    if (fs::exists(full, ec)) {
        if (!fs::is_directory(full, ec))
            throw usage_error(dir.string() + " exists and is not a folder: use another --out DIR");
        probe_writable(full);
        return;
    }
    // The nearest existing ancestor: a file there makes the folder impossible, and creating an
    // entry needs write and search permission on it.
    fs::path up = full.parent_path();
    while (!up.empty() && !fs::exists(up, ec) && up != up.parent_path()) up = up.parent_path();
    if (!fs::is_directory(up, ec))
        throw usage_error("cannot create " + dir.string() + ": " + up.string() +
                          " is not a folder: use another --out DIR");
    if (::access(up.c_str(), W_OK | X_OK) != 0)
        throw usage_error("cannot create " + dir.string() + ": " + up.string() + ": " +
                          std::strerror(errno) + ": use another --out DIR");
}

std::string try_write(const std::function<void()>& write) {
    try {
        write();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

int report_not_written(int code, const std::string& what) {
    std::cerr << "attnprop: error: the report could not be written: " << what
              << " (the results are printed above)\n";
    return code == exit_ok ? exit_usage : code;
}

} // namespace attnprop::cli
