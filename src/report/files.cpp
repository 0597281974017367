#include "report/files.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
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

} // namespace

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

void write_file_atomic(const fs::path& p, const std::string& text) {
    const fs::path tmp = p.string() + ".tmp" + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) cannot_write(p, errno);
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
