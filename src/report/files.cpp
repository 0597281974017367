#include "report/files.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <string>
#include <system_error>
#include <utility>
#include <vector>
#include <stdexcept>
#include <unistd.h>

namespace attnprop::report {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void cannot_write(const fs::path& p, int err) {
    throw std::runtime_error("cannot write " + p.string() + ": " + std::strerror(err));
}

/// Flushes a directory's entries (the rename) to the disk. Best effort: some file systems
/// refuse fsync on a directory, and the data itself is already durable.
void sync_directory(const fs::path& dir) {
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)::fsync(fd);
    (void)::close(fd);
}

/// The temporaries `<name>.tmp<pid>` of p in its folder, with their process ids.
std::vector<std::pair<fs::path, long>> temporaries_of(const fs::path& p) {
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    const std::string prefix = p.filename().string() + ".tmp";
    std::vector<std::pair<fs::path, long>> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string digits = name.substr(prefix.size());
        if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
        out.emplace_back(it->path(), std::stol(digits));
    }
    return out;
}

/// Removes the temporaries `<name>.tmp<pid>` that an earlier writer of p left when it was
/// killed between creating and renaming one (a killed rank 0, a SIGKILL, a renderer's output
/// whose caller was killed): those of a process that no longer exists on this machine. Best
/// effort: a file that cannot be removed stays. remove_all removes a link, not its target.
void remove_stale_temporaries(const fs::path& p) {
    for (const auto& [path, pid] : temporaries_of(p)) {
        if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue; // alive, or unknown
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
}

} // namespace

void remove_temporaries(const fs::path& p) {
    for (const auto& tmp : temporaries_of(p)) {
        std::error_code ignored;
        fs::remove_all(tmp.first, ignored);
    }
}

fs::path create_temporary_folder(const fs::path& p) {
    remove_stale_temporaries(p);
    const fs::path tmp = p.string() + ".tmp" + std::to_string(::getpid());
    for (int attempt = 0;; ++attempt) {
        if (::mkdir(tmp.c_str(), 0700) == 0) return tmp;
        const int err = errno;
        if (err != EEXIST || attempt == 3) {
            if (err == EEXIST)
                throw std::runtime_error("cannot write " + p.string() + ": " + tmp.string() +
                                         " is created again each time it is removed");
            cannot_write(p, err);
        }
        std::error_code ec;
        fs::remove_all(tmp, ec);
        if (ec) cannot_write(p, ec.value());
    }
}

int write_all(int fd, std::string_view bytes) {
    const char* data = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, data, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        data += n;
        left -= static_cast<std::size_t>(n);
    }
    return 0;
}

int create_temporary(const fs::path& p, fs::path& tmp) {
    remove_stale_temporaries(p);
    tmp = p.string() + ".tmp" + std::to_string(::getpid());
    // O_EXCL | O_NOFOLLOW: a file, a folder or a symbolic link already there (planted to send
    // the report elsewhere, or left by an earlier process of the same id) is never written
    // through. It is removed (a link, not its target) and the creation tried again, a few
    // times, so that a link planted again at once ends in a refusal.
    for (int attempt = 0;; ++attempt) {
        const int fd =
            ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) return fd;
        const int err = errno;
        if (err != EEXIST || attempt == 3) {
            if (err == EEXIST)
                throw std::runtime_error("cannot write " + p.string() + ": " + tmp.string() +
                                         " is created again each time it is removed");
            cannot_write(p, err);
        }
        std::error_code ec;
        fs::remove_all(tmp, ec); // a link is removed, not followed
        if (ec) cannot_write(p, ec.value());
    }
}

void write_file_atomic(const fs::path& p, const std::string& text) {
    fs::path tmp;
    const int fd = create_temporary(p, tmp);
    auto fail = [&](int err) {
        (void)::close(fd);
        (void)::unlink(tmp.c_str());
        cannot_write(p, err);
    };
    if (const int err = write_all(fd, text)) fail(err);
    if (::fsync(fd) != 0) fail(errno);
    if (::close(fd) != 0) {
        const int err = errno;
        (void)::unlink(tmp.c_str());
        cannot_write(p, err);
    }
    if (::rename(tmp.c_str(), p.c_str()) != 0) {
        const int err = errno;
        (void)::unlink(tmp.c_str());
        cannot_write(p, err);
    }
    sync_directory(p.parent_path());
}

namespace json_out {

json::value approx(double v, int digits) {
    if (!std::isfinite(v)) return json::value::null_value();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return json::value::number_raw(buf);
}

json::value string_array(const std::vector<std::string>& v) {
    json::value a = json::value::array();
    for (const auto& s : v) a.push_back(str(s));
    return a;
}

json::value string_object(const std::vector<std::pair<std::string, std::string>>& v) {
    json::value o = json::value::object();
    for (const auto& [k, s] : v) o.set(k, str(s));
    return o;
}

} // namespace json_out

} // namespace attnprop::report
