// --out semantics (src/cli/out_dir.cpp): which folders a command may write into, what
// --force replaces, and what remove_owned leaves alone. Each case works in its own folder
// under the system temp directory.
#include "cli/common.hpp"
#include "cli/out_dir.hpp"
#include "report/journal.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <unistd.h>

using namespace attnprop;
using cli::out_found;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("attnprop-out-dir-test-" + std::to_string(::getpid())) / name;
    fs::remove_all(d);
    return d;
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

cli::out_policy policy() {
    cli::out_policy p;
    p.command = "check";
    p.markers = {{"report.json", "attnprop-check-report"}};
    p.ignored = {"--out", "--json"};
    p.owned_files = {"report.json", "report.md", "counterexamples"};
    p.owned_folder_prefixes = {"counterexample-n"};
    return p;
}

report::provenance made_with(const std::string& suite, const std::string& json = "false") {
    report::provenance p;
    p.version = "0.1.0";
    p.commit = "unknown";
    p.command_line = "attnprop check";
    p.options = {{"--suite", suite}, {"--out", "x"}, {"--json", json}};
    return p;
}

void write_report(const fs::path& dir, const report::provenance& p) {
    json::value doc = json::value::object();
    doc.set("format", json::value::string("attnprop-check-report"));
    doc.set("provenance", report::provenance_to_json(p));
    write(dir / "report.json", json::dump(doc, 2));
}

std::string refusal(const fs::path& dir, const report::provenance& now, const cli::out_policy& pol,
                    const std::optional<std::string>& fp = std::nullopt) {
    try {
        cli::claim_out_dir(dir, now, pol, false, fp);
    } catch (const cli::usage_error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("out folder: a missing or empty folder is free", "[cli][out]") {
    const fs::path d = fresh_dir("empty");
    CHECK(cli::claim_out_dir(d, made_with("controls"), policy(), false) == out_found::nothing);
    fs::create_directories(d);
    CHECK(cli::claim_out_dir(d, made_with("controls"), policy(), false) == out_found::nothing);
}

TEST_CASE("out folder: same options rewrite and other options are refused unless forced", "[cli][out]") {
    const fs::path d = fresh_dir("other-options");
    write_report(d, made_with("semantics,hard-limit"));
    CHECK(cli::claim_out_dir(d, made_with("semantics,hard-limit", "true"), policy(), false) ==
          out_found::same_report); // --json is ignored
    CHECK(refusal(d, made_with("controls"), policy()) ==
          d.string() + " holds a report made with --suite semantics,hard-limit; this run has "
                       "--suite controls: use --out DIR or --force to replace it");
    CHECK(cli::claim_out_dir(d, made_with("controls"), policy(), true) == out_found::replaced);
}

TEST_CASE("out folder: folders without a comparable report", "[cli][out]") {
    const fs::path d = fresh_dir("foreign");
    write(d / "notes.txt", "mine");
    CHECK(refusal(d, made_with("controls"), policy()) ==
          d.string() + " is not empty and holds no attnprop check report: use --out DIR, or "
                       "--force to write into it");
    CHECK(cli::claim_out_dir(d, made_with("controls"), policy(), true) == out_found::replaced);

    const fs::path o = fresh_dir("older");
    write(o / "report.json", "{\"format\": \"attnprop-check-report\", \"version\": 1}");
    CHECK(refusal(o, made_with("controls"), policy()).find("did not record its options") !=
          std::string::npos);

    const fs::path k = fresh_dir("other-kind");
    write(k / "report.json", "{\"format\": \"attnprop-restrict-report\", \"version\": 1}");
    CHECK(refusal(k, made_with("controls"), policy()).find("(it holds an attnprop-restrict-report)") !=
          std::string::npos);

    const fs::path b = fresh_dir("broken");
    write(b / "report.json", "{\"format\": ");
    CHECK(refusal(b, made_with("controls"), policy()).find("report.json is not readable JSON") !=
          std::string::npos);

    const fs::path f = fresh_dir("file");
    write(f, "not a folder");
    CHECK(refusal(f, made_with("controls"), policy()).find("exists and is not a folder") !=
          std::string::npos);
    CHECK_THROWS_AS(cli::claim_out_dir(f, made_with("controls"), policy(), true), cli::usage_error);
}

TEST_CASE("out folder with a fingerprint: equal fingerprints resume", "[cli][out]") {
    const fs::path d = fresh_dir("fingerprint");
    json::value doc = json::value::object();
    doc.set("format", json::value::string("attnprop-check-report"));
    doc.set("provenance", report::provenance_to_json(made_with("a")));
    doc.set("fingerprint", json::value::string("00000000000000aa"));
    write(d / "report.json", json::dump(doc, 2));
    CHECK(cli::claim_out_dir(d, made_with("b"), policy(), false, "00000000000000aa") ==
          out_found::same_report);
    CHECK(refusal(d, made_with("b"), policy(), "00000000000000bb").find("made with --suite a; this run has --suite b") !=
          std::string::npos);
    CHECK(refusal(d, made_with("a"), policy(), "00000000000000bb")
              .find("made from another model file content, other options or another attnprop version "
                    "(fingerprint 00000000000000aa; this run has 00000000000000bb)") != std::string::npos);
}

TEST_CASE("out folder: a journal left by a killed run is a report of its options", "[cli][out]") {
    cli::out_policy pol = policy();
    pol.markers = {{"units.journal", "attnprop-check-journal", true},
                   {"report.json", "attnprop-check-report"}};
    auto journal = [](const fs::path& dir, const report::provenance& p) {
        fs::create_directories(dir);
        report::journal_writer w(dir / "units.journal", "attnprop-check-journal", "aa", p, 0);
        w.append({"semantics/x", std::string("\0\n{", 3)}); // binary records after the header
    };
    const fs::path d = fresh_dir("journal");
    journal(d, made_with("controls"));
    CHECK(cli::claim_out_dir(d, made_with("controls"), pol, false) == out_found::same_report);
    CHECK(refusal(d, made_with("semantics"), pol) ==
          d.string() + " holds a report made with --suite controls; this run has --suite semantics: "
                       "use --out DIR or --force to replace it");
    // The journal is newer than a report.json of other options beside it (a forced run, killed).
    write_report(d, made_with("semantics"));
    CHECK(cli::claim_out_dir(d, made_with("controls"), pol, false) == out_found::same_report);
    // Another command's journal, or a broken header: no report of this command.
    const fs::path k = fresh_dir("journal-other-kind");
    fs::create_directories(k);
    report::journal_writer(k / "units.journal", "attnprop-restrict-journal", "aa", made_with("x"), 0);
    CHECK(refusal(k, made_with("controls"), pol).find("(it holds an attnprop-restrict-journal)") !=
          std::string::npos);
    const fs::path b = fresh_dir("journal-broken");
    write(b / "units.journal", "{\"format\": \"attnprop-check-journal\"");
    CHECK(refusal(b, made_with("controls"), pol).find("units.journal: its first line is not complete") !=
          std::string::npos);
}

TEST_CASE("remove_owned removes the command's files only", "[cli][out]") {
    const fs::path d = fresh_dir("owned");
    write(d / "report.json", "{}");
    write(d / "report.md", "");
    write(d / "counterexamples" / "x" / "case.json", "{}");
    write(d / "counterexample-n8" / "case.json", "{}");
    write(d / "counterexample-notes" / "readme.txt", "no case.json: not ours");
    write(d / "notes.txt", "mine");
    cli::remove_owned(d, policy());
    CHECK_FALSE(fs::exists(d / "report.json"));
    CHECK_FALSE(fs::exists(d / "report.md"));
    CHECK_FALSE(fs::exists(d / "counterexamples"));
    CHECK_FALSE(fs::exists(d / "counterexample-n8"));
    CHECK(fs::exists(d / "counterexample-notes" / "readme.txt"));
    CHECK(fs::exists(d / "notes.txt"));
    fs::remove_all(d.parent_path());
}

TEST_CASE("prepare_out_dir creates and probes the folder, and refuses before the work", "[cli][out]") {
    const fs::path d = fresh_dir("prepare") / "a" / "b";
    cli::prepare_out_dir(d);
    CHECK(fs::is_directory(d));
    CHECK(fs::is_empty(d)); // the probe file is gone
    const fs::path file = fresh_dir("prepare-file");
    write(file, "x");
    CHECK_THROWS_WITH(cli::prepare_out_dir(file / "sub"), Catch::Contains("cannot create") &&
                                                              Catch::Contains("Not a directory"));
    CHECK_THROWS_WITH(cli::prepare_out_dir(file), Catch::Contains("exists and is not a folder"));
}

TEST_CASE("check_out_dir_creatable creates nothing", "[cli][out]") {
    const fs::path base = fresh_dir("creatable");
    fs::create_directories(base);
    REQUIRE_NOTHROW(cli::check_out_dir_creatable(base / "x" / "y"));
    CHECK_FALSE(fs::exists(base / "x"));
    write(base / "f", "x");
    CHECK_THROWS_WITH(cli::check_out_dir_creatable(base / "f" / "y"), Catch::Contains("is not a folder"));
    CHECK_THROWS_WITH(cli::check_out_dir_creatable(base / "f"), Catch::Contains("exists and is not a folder"));
}

TEST_CASE("a report that cannot be written keeps the run's exit code", "[cli][out]") {
    CHECK(cli::try_write([] {}).empty());
    CHECK(cli::try_write([] { throw std::runtime_error("cannot write x: No space left on device"); }) ==
          "cannot write x: No space left on device");
    // A failed claim (1) and an undefined result (4) are never hidden; a run that held becomes
    // exit 2, since its report is missing.
    CHECK(cli::report_not_written(cli::exit_failed, "x") == cli::exit_failed);
    CHECK(cli::report_not_written(cli::exit_undefined, "x") == cli::exit_undefined);
    CHECK(cli::report_not_written(cli::exit_ok, "x") == cli::exit_usage);
}
