// The resume checkpoint of `attnprop influence` (rows.json): full-precision doubles, so that a
// resumed sweep computes the same slopes and figures, and an integrity hash, so that a
// hand-edited checkpoint is recomputed instead of trusted.
#include "report/influence_report.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace attnprop;
namespace fs = std::filesystem;

namespace {

analysis::sweep_row row(long n, double approx) {
    analysis::sweep_row r;
    r.n = n;
    r.inputs = 2;
    r.positions = 3;
    r.pairs = 6;
    r.max_influence = "0.1";
    r.mean_influence = "0.05";
    r.n_max_influence = std::to_string(n) + "e-1";
    r.max_influence_approx = approx;
    r.n_max_influence_approx = approx * static_cast<double>(n);
    r.precision = 128;
    analysis::cross_entropy_row ce;
    ce.n = n;
    ce.mean_ce_bits = "0.9";
    ce.accuracy = "0.5";
    ce.eta = "0.1";
    ce.floor_bits = "0.86";
    ce.mean_ce_approx = approx / 3;
    r.cross_entropy = ce;
    return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("attnprop-rows-test-" + name);
    fs::remove_all(d);
    return d;
}

} // namespace

TEST_CASE("rows.json keeps every double exactly", "[report][influence][resume]") {
    const fs::path dir = fresh_dir("exact");
    const double values[] = {0.1 + 0.2, 1.0 / 3.0, 0.17687542883769458, 1e-300, 4.9e-324, 123456789.123456789};
    std::vector<analysis::sweep_row> rows;
    long n = 8;
    for (double v : values) rows.push_back(row(n++, v));
    report::write_resume_rows(dir, "fp", rows);
    std::string note;
    const auto back = report::read_resume_rows(dir, "fp", &note);
    CHECK_THAT(note, Catch::StartsWith("resuming: 6 rows found"));
    REQUIRE(back.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        INFO("row " << i);
        CHECK(same_bits(back[i].max_influence_approx, rows[i].max_influence_approx));
        CHECK(same_bits(back[i].n_max_influence_approx, rows[i].n_max_influence_approx));
        CHECK(same_bits(back[i].cross_entropy->mean_ce_approx, rows[i].cross_entropy->mean_ce_approx));
    }
    // report.json keeps its six digits.
    CHECK(json::dump(*report::row_to_json(rows[0]).find("max_influence_approx"), -1) == "0.3");
    fs::remove_all(dir);
}

TEST_CASE("an edited rows.json is recomputed, not trusted", "[report][influence][resume]") {
    const fs::path dir = fresh_dir("edited");
    report::write_resume_rows(dir, "fp", {row(8, 0.25), row(16, 0.125)});
    const std::string text = slurp(dir / "rows.json");
    std::string note;

    SECTION("a changed value") {
        std::string t = text;
        const auto at = t.find("\"max_influence\": \"0.1\"");
        REQUIRE(at != std::string::npos);
        t.replace(at, 22, "\"max_influence\": \"0.2\"");
        std::ofstream(dir / "rows.json", std::ios::binary) << t;
        CHECK(report::read_resume_rows(dir, "fp", &note).empty());
        CHECK_THAT(note, Catch::Contains("were edited since attnprop wrote them") &&
                             Catch::Contains("recomputing every row"));
    }
    SECTION("a changed fingerprint with the old hash") {
        std::string t = text;
        const auto at = t.find("\"fingerprint\": \"fp\"");
        REQUIRE(at != std::string::npos);
        t.replace(at, 19, "\"fingerprint\": \"fq\"");
        std::ofstream(dir / "rows.json", std::ios::binary) << t;
        CHECK(report::read_resume_rows(dir, "fq", &note).empty());
        CHECK_THAT(note, Catch::Contains("were edited since attnprop wrote them"));
    }
    SECTION("no hash") {
        json::value doc = json::parse(text);
        json::value out = json::value::object();
        for (const auto& [k, v] : doc.members())
            if (k != "rows_sha256") out.set(k, v);
        std::ofstream(dir / "rows.json", std::ios::binary) << json::dump(out, 2);
        CHECK(report::read_resume_rows(dir, "fp", &note).empty());
        CHECK_THAT(note, Catch::Contains("records no rows_sha256"));
    }
    SECTION("whitespace is not an edit") {
        std::ofstream(dir / "rows.json", std::ios::binary) << json::dump(json::parse(text), -1);
        CHECK(report::read_resume_rows(dir, "fp", &note).size() == 2);
    }
    SECTION("another fingerprint starts fresh") {
        CHECK(report::read_resume_rows(dir, "other", &note).empty());
        CHECK_THAT(note, Catch::Contains("different model or options"));
    }
    fs::remove_all(dir);
}
