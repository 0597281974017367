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

TEST_CASE("write_file_atomic never writes through a link planted at its temporary's name",
          "[report][files]") {
    // The temporary is <p>.tmp<pid>: a symbolic link placed there by someone who guessed the
    // pid used to receive the report (O_CREAT | O_TRUNC followed it).
    const fs::path dir = fs::temp_directory_path() / ("attnprop-files-link-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path victim = dir / "victim";
    std::ofstream(victim) << "untouched";
    const fs::path p = dir / "report.md";
    const fs::path planted = dir / ("report.md.tmp" + std::to_string(static_cast<long>(::getpid())));
    fs::create_symlink(victim, planted);
    report::write_file_atomic(p, "the report");
    CHECK(slurp(p) == "the report");
    CHECK_FALSE(fs::is_symlink(fs::symlink_status(p)));
    CHECK(slurp(victim) == "untouched");
    CHECK_FALSE(fs::exists(fs::symlink_status(planted)));
    // A dangling link there, and a folder: removed too, never followed.
    fs::create_symlink(dir / "nowhere" / "x", planted);
    report::write_file_atomic(p, "again");
    CHECK(slurp(p) == "again");
    CHECK_FALSE(fs::exists(dir / "nowhere"));
    fs::create_directories(planted / "inside");
    report::write_file_atomic(p, "third");
    CHECK(slurp(p) == "third");
    fs::remove_all(dir);
}

TEST_CASE("a renderer's temporary folder: private, and removed by the next run or --force",
          "[report][files]") {
    const fs::path dir = fs::temp_directory_path() / ("attnprop-files-folder-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path png = dir / "influence.png";
    const fs::path stale = dir / ("influence.png.tmp" + std::to_string(dead_pid()));
    std::ofstream(stale) << "half a png"; // what rsvg-convert left when its caller was killed
    const fs::path folder = report::create_temporary_folder(png);
    CHECK(folder == dir / ("influence.png.tmp" + std::to_string(static_cast<long>(::getpid()))));
    CHECK(fs::is_directory(folder));
    CHECK((fs::status(folder).permissions() & fs::perms::all) == fs::perms::owner_all);
    CHECK_FALSE(fs::exists(stale));
    // --force removes every temporary of the file, a live process's included.
    const fs::path live = dir / ("influence.png.tmp" + std::to_string(static_cast<long>(::getppid())));
    std::ofstream(live) << "x";
    report::remove_temporaries(png);
    CHECK_FALSE(fs::exists(folder));
    CHECK_FALSE(fs::exists(live));
    fs::remove_all(dir);
}
