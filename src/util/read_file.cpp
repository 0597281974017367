#include "util/read_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnprop::util {

namespace fs = std::filesystem;

std::string non_regular_kind(const fs::file_status& st) {
    if (fs::is_regular_file(st)) return "";
    if (fs::is_directory(st)) return "a folder";
    if (fs::is_fifo(st)) return "a FIFO (named pipe)";
    if (fs::is_character_file(st)) return "a character device";
    if (fs::is_block_file(st)) return "a block device";
    if (fs::is_socket(st)) return "a socket";
    return "not a regular file";
}

namespace {

std::string kind_of_mode(mode_t m) {
    if (S_ISDIR(m)) return "a folder";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

} // namespace

std::string read_regular_file(const fs::path& p, std::string& out) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. The check is
    // made on the open descriptor, so nothing can be swapped in between.
    const int fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        (void)::close(fd);
        return std::string("cannot open: ") + std::strerror(err);
    }
    if (!S_ISREG(st.st_mode)) {
        (void)::close(fd);
        const std::string kind = kind_of_mode(st.st_mode);
        return kind == "not a regular file" ? "is not a regular file" : "is " + kind + ", not a file";
    }
    // A regular file never blocks; reading to its end also takes what was appended since fstat.
    out.clear();
    if (st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
    char buf[65536];
    for (;;) {
        const ssize_t got = ::read(fd, buf, sizeof buf);
        if (got < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            (void)::close(fd);
            return std::string("cannot read: ") + std::strerror(err);
        }
        if (got == 0) break;
        out.append(buf, static_cast<std::size_t>(got));
    }
    (void)::close(fd);
    return "";
}

} // namespace attnprop::util
