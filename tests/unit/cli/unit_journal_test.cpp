// The journal of check and restrict as the commands use it (src/cli/unit_journal.cpp): what the
// fingerprint covers, reuse only when asked and only of the same fingerprint, removal.
#include "cli/common.hpp"
#include "cli/unit_journal.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <unistd.h>

using namespace attnprop;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("attnprop-unit-journal-test-" + std::to_string(::getpid())) / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

report::provenance made_with(const std::string& seed, const std::string& out = "a") {
    report::provenance p;
    p.version = "0.1.0";
    p.commit = "0123abcd";
    p.dirty = false;
    p.command_line = "attnprop check";
    p.options = {{"--seed", seed}, {"--out", out}, {"--tests", "5"}};
    return p;
}

const std::vector<std::string> ignored = {"--out"};
const std::vector<std::string> units = {"semantics/a", "semantics/b"};

std::string fingerprint(const report::provenance& p, const std::string& content = "random models",
                        const std::vector<std::string>& u = units) {
    return cli::journal_fingerprint("check", p, ignored, content, u);
}

} // namespace

TEST_CASE("the journal's fingerprint covers the options, the content, the units and the build",
          "[cli][journal]") {
    const std::string base = fingerprint(made_with("7"));
    CHECK(base.size() == 64);
    CHECK(fingerprint(made_with("7", "elsewhere")) == base); // --out is not compared
    CHECK(fingerprint(made_with("8")) != base);
    CHECK(fingerprint(made_with("7"), "model text") != base);
    CHECK(fingerprint(made_with("7"), "random models", {"semantics/a"}) != base);
    CHECK(fingerprint(made_with("7"), "random models", {"semantics/b", "semantics/a"}) != base);
    CHECK(cli::journal_fingerprint("restrict", made_with("7"), ignored, "random models", units) != base);
    report::provenance other = made_with("7");
    other.commit = "0123abce";
    CHECK(fingerprint(other) != base);
    other = made_with("7");
    other.dirty = true;
    CHECK(fingerprint(other) != base);
    other = made_with("7");
    other.version = "0.2.0";
    CHECK(fingerprint(other) != base);
    // Values cannot run into the next part: "--seed" "7\noption --tests" is not two options.
    report::provenance joined = made_with("7");
    joined.options = {{"--seed", "7\noption --tests 5"}, {"--out", "a"}};
    CHECK(fingerprint(joined) != base);
}

TEST_CASE("a unit journal is reused by the same run only, and removed", "[cli][journal]") {
    const fs::path dir = fresh_dir("reuse");
    const std::string fp = fingerprint(made_with("7"));
    {
        cli::unit_journal j(dir, "check", fp, made_with("7"), true);
        CHECK(j.found().empty());
        CHECK_FALSE(fs::exists(j.path())); // nothing is written before the first unit
        j.record("semantics/a", "report a");
        CHECK(fs::exists(dir / "units.journal"));
    }
    {
        cli::unit_journal j(dir, "check", fp, made_with("7"), true);
        REQUIRE(j.found().size() == 1);
        CHECK(j.found()[0].unit == "semantics/a");
        CHECK(j.found()[0].result == "report a");
        j.record("semantics/b", "report b"); // continues the journal
    }
    CHECK(cli::unit_journal(dir, "check", fp, made_with("7"), true).found().size() == 2);
    // Not asked to reuse (an empty or replaced folder), or another run: nothing found.
    CHECK(cli::unit_journal(dir, "check", fp, made_with("7"), false).found().empty());
    CHECK(cli::unit_journal(dir, "check", fingerprint(made_with("8")), made_with("8"), true).found().empty());
    {
        cli::unit_journal j(dir, "check", fp, made_with("7"), true);
        j.discard_found("a test");
        CHECK(j.found().empty());
        j.record("semantics/b", "report b2"); // starts a new journal
    }
    {
        cli::unit_journal j(dir, "check", fp, made_with("7"), true);
        REQUIRE(j.found().size() == 1);
        CHECK(j.found()[0].result == "report b2");
        j.remove();
    }
    CHECK_FALSE(fs::exists(dir / "units.journal"));
}

TEST_CASE("ATTNPROP_KILL_AFTER_UNITS must be a positive integer", "[cli][journal]") {
    const fs::path dir = fresh_dir("kill");
    for (const char* bad : {"0", "-1", "x", "2x"}) {
        INFO(bad);
        ::setenv("ATTNPROP_KILL_AFTER_UNITS", bad, 1);
        CHECK_THROWS_AS(cli::unit_journal(dir, "check", "f", made_with("7"), false), cli::usage_error);
    }
    ::unsetenv("ATTNPROP_KILL_AFTER_UNITS");
    CHECK_NOTHROW(cli::unit_journal(dir, "check", "f", made_with("7"), false));
}
