// write_file_atomic (report/files.hpp): the file is replaced whole, and a temporary file that a
// killed writer left beside it is removed by the next write, while one of a live process stays.
#include "report/files.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace attnprop;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// The pid of a child that has exited and been reaped: no process has it (until reused).
long dead_pid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return static_cast<long>(child);
}

} // namespace

TEST_CASE("write_file_atomic replaces the file and removes a killed writer's temporary file",
          "[report][files]") {
    const fs::path dir = fs::temp_directory_path() / ("attnprop-files-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path p = dir / "rows.json";
    const fs::path stale = dir / ("rows.json.tmp" + std::to_string(dead_pid()));
    const fs::path live = dir / ("rows.json.tmp" + std::to_string(static_cast<long>(::getppid())));
    const fs::path other = dir / "other.json.tmp1";
    for (const auto& f : {stale, live, other}) std::ofstream(f) << "half";
    report::write_file_atomic(p, "first");
    CHECK(slurp(p) == "first");
    CHECK_FALSE(fs::exists(stale)); // its process is gone
    CHECK(fs::exists(live));        // a live process may still rename it
    CHECK(fs::exists(other));       // another file's
    report::write_file_atomic(p, "second");
    CHECK(slurp(p) == "second");
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
    CHECK(entries == 3); // rows.json, the live temporary, the other file's
    fs::remove_all(dir);
}
