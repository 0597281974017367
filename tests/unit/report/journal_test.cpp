// The journal of check and restrict (report/journal.hpp): records read back exactly; a record cut
// at any byte (a run killed while writing it) or with any byte changed is ignored, never misread;
// a journal of another run is not used; a continued journal drops a torn tail before appending.
#include "report/journal.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace attnprop;
namespace fs = std::filesystem;

namespace {

const std::string format = "attnprop-check-journal";
const std::string fp = "5d1c0f3b7e2a4c6d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6";

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void spit(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << bytes;
}

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("attnprop-journal-test-" + name);
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

report::provenance made_by() {
    report::provenance p;
    p.version = "0.1.0";
    p.commit = "unknown";
    p.command_line = "attnprop check --seed 7";
    p.options = {{"--seed", "7"}, {"--tests", "5"}};
    return p;
}

/// Three records: a short one, one with every byte value (and line breaks), an empty result.
std::vector<report::journal_record> records() {
    std::string all;
    for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
    return {{"semantics/leftmost-tie-rule", "abc"}, {"16", all + "\n" + all}, {"controls/x", ""}};
}

void check_records(const std::vector<report::journal_record>& got, std::size_t count) {
    const auto want = records();
    REQUIRE(got.size() == count);
    for (std::size_t i = 0; i < count; ++i) {
        CHECK(got[i].unit == want[i].unit);
        CHECK(got[i].result == want[i].result);
    }
}

/// Writes the header and every record; returns the file's bytes and where the last record starts.
std::pair<std::string, std::size_t> write_all(const fs::path& p) {
    std::size_t last = 0;
    {
        report::journal_writer w(p, format, fp, made_by(), 0);
        for (const auto& r : records()) {
            last = static_cast<std::size_t>(fs::file_size(p));
            w.append(r);
        }
    }
    return {slurp(p), last};
}

} // namespace

TEST_CASE("journal records read back exactly, with a header claim_out_dir can read",
          "[report][journal]") {
    const fs::path p = fresh_dir("exact") / "units.journal";
    const auto [bytes, last] = write_all(p);
    const report::journal_contents c = report::read_journal(p, format, fp);
    check_records(c.records, 3);
    CHECK(c.note.empty());
    CHECK(c.valid_bytes == bytes.size());
    // The layout: a JSON header line, then each record's lengths, hash, name and result.
    CHECK(bytes.size() == last + 48 + records()[2].unit.size());
    std::string problem;
    const auto header = report::read_journal_header(p, &problem);
    REQUIRE(header);
    CHECK(header->find("format")->as_string() == format);
    CHECK(header->find("fingerprint")->as_string() == fp);
    REQUIRE(report::provenance_from_json(*header));
    CHECK(*report::provenance_from_json(*header)->option("--seed") == "7");
}

TEST_CASE("a journal cut at any byte of its last record gives the records before it",
          "[report][journal]") {
    const fs::path dir = fresh_dir("torn");
    const auto [bytes, last] = write_all(dir / "whole");
    for (std::size_t cut = last; cut < bytes.size(); ++cut) {
        INFO("cut at byte " << cut << " of " << bytes.size());
        spit(dir / "units.journal", bytes.substr(0, cut));
        const report::journal_contents c = report::read_journal(dir / "units.journal", format, fp);
        check_records(c.records, 2);
        CHECK(c.valid_bytes == last);
        CHECK((cut == last) == c.note.empty());
        if (cut > last) CHECK_THAT(c.note, Catch::Contains("incomplete"));
    }
    // Cut inside the middle record: only the first.
    const std::size_t second = last - (48 + 2 + 513); // where the second record starts
    spit(dir / "units.journal", bytes.substr(0, last - 1));
    const report::journal_contents c = report::read_journal(dir / "units.journal", format, fp);
    check_records(c.records, 1);
    CHECK(c.valid_bytes == second);
}

TEST_CASE("a record with any byte changed is rejected with what follows it", "[report][journal]") {
    const fs::path dir = fresh_dir("flipped");
    const auto [bytes, last] = write_all(dir / "whole");
    for (std::size_t at = last; at < bytes.size(); ++at) {
        INFO("byte " << at << " changed");
        std::string bad = bytes;
        bad[at] = static_cast<char>(bad[at] ^ 0x01);
        spit(dir / "units.journal", bad);
        const report::journal_contents c = report::read_journal(dir / "units.journal", format, fp);
        check_records(c.records, 2);
        CHECK(c.valid_bytes == last);
        CHECK_FALSE(c.note.empty());
    }
    // A changed byte in the first record's result: nothing after it is trusted either.
    const std::size_t header_end = bytes.find('\n') + 1;
    std::string bad = bytes;
    bad[header_end + 48 + records()[0].unit.size()] ^= 0x20;
    spit(dir / "units.journal", bad);
    const report::journal_contents c = report::read_journal(dir / "units.journal", format, fp);
    CHECK(c.records.empty());
    CHECK(c.valid_bytes == header_end);
    CHECK_THAT(c.note, Catch::Contains("record 1") && Catch::Contains("does not match its SHA-256"));
}

TEST_CASE("a journal of another run or kind is not used", "[report][journal]") {
    const fs::path dir = fresh_dir("other");
    const fs::path p = dir / "units.journal";
    (void)write_all(p);
    SECTION("another fingerprint") {
        const report::journal_contents c = report::read_journal(p, format, "0" + fp.substr(1));
        CHECK(c.records.empty());
        CHECK(c.valid_bytes == 0);
        CHECK_THAT(c.note, Catch::Contains("fingerprint " + fp));
    }
    SECTION("another format") {
        const report::journal_contents c = report::read_journal(p, "attnprop-restrict-journal", fp);
        CHECK(c.records.empty());
        CHECK(c.valid_bytes == 0);
        CHECK_THAT(c.note, Catch::Contains("another kind"));
    }
    SECTION("records carried over from a journal with another fingerprint") {
        // Same header as the reader expects, records hashed for another run: not one is used.
        std::string bytes = slurp(p);
        const std::string other = "f" + fp.substr(1);
        const std::size_t header_end = bytes.find('\n') + 1;
        std::string forged = bytes.substr(0, header_end);
        for (const auto& r : records()) forged += report::journal_record_bytes(other, r);
        spit(p, forged);
        const report::journal_contents c = report::read_journal(p, format, fp);
        CHECK(c.records.empty());
        CHECK(c.valid_bytes == header_end);
    }
    SECTION("no header line") {
        spit(p, "{\"format\": \"attnprop-check-journal\"");
        const report::journal_contents c = report::read_journal(p, format, fp);
        CHECK(c.records.empty());
        CHECK(c.valid_bytes == 0);
        CHECK_THAT(c.note, Catch::Contains("not a journal"));
        std::string problem;
        CHECK_FALSE(report::read_journal_header(p, &problem));
        CHECK_THAT(problem, Catch::Contains("not complete"));
    }
    SECTION("no file") {
        const report::journal_contents c = report::read_journal(dir / "none", format, fp);
        CHECK(c.records.empty());
        CHECK(c.note.empty());
    }
}

TEST_CASE("a continued journal drops its torn tail before the next record", "[report][journal]") {
    const fs::path dir = fresh_dir("continued");
    const fs::path p = dir / "units.journal";
    const auto [bytes, last] = write_all(p);
    spit(p, bytes.substr(0, last + 7)); // killed while writing the third record
    const report::journal_contents c = report::read_journal(p, format, fp);
    REQUIRE(c.records.size() == 2);
    {
        report::journal_writer w(p, format, fp, made_by(), c.valid_bytes);
        w.append(records()[2]);
    }
    CHECK(slurp(p) == bytes);
    check_records(report::read_journal(p, format, fp).records, 3);
}

TEST_CASE("a journal that is a link is neither read nor appended through", "[report][journal]") {
    const fs::path d = fresh_dir("link");
    const fs::path elsewhere = d / "elsewhere.journal";
    write_all(elsewhere);
    const std::string before = slurp(elsewhere);
    const fs::path p = d / "units.journal";
    fs::create_symlink(elsewhere, p);
    const report::journal_contents c = report::read_journal(p, format, fp);
    CHECK(c.records.empty());
    CHECK(c.valid_bytes == 0);
    CHECK_THAT(c.note, Catch::Contains("is not a regular file (a symbolic link): not read, starting fresh"));
    // Continuing a journal whose place became a link refuses (O_NOFOLLOW)...
    CHECK_THROWS_WITH(report::journal_writer(p, format, fp, made_by(), 10),
                      Catch::Contains("cannot write"));
    // ...and a fresh journal replaces the link, leaving its target as it was.
    {
        report::journal_writer w(p, format, fp, made_by(), 0);
        w.append(records()[0]);
    }
    CHECK_FALSE(fs::is_symlink(fs::symlink_status(p)));
    CHECK(slurp(elsewhere) == before);
    check_records(report::read_journal(p, format, fp).records, 1);
    fs::remove_all(d);
}

TEST_CASE("a torn last record is told as a stop or a full disk", "[report][journal]") {
    const fs::path d = fresh_dir("torn-note");
    const fs::path p = d / "units.journal";
    const auto [bytes, last] = write_all(p);
    spit(p, bytes.substr(0, last + 7));
    const report::journal_contents c = report::read_journal(p, format, fp);
    CHECK_THAT(c.note, Catch::Contains("a run stopped while writing it, killed or out of disk space"));
    fs::remove_all(d);
}
