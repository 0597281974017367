// The counterexample record: one field table written and read back, the fingerprint that tells
// an edited folder from the one attnprop wrote, and located errors for every malformed member.
#include "report/case_record.hpp"

#include "model/json.hpp"
#include "report/sha256.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace attnprop;
using report::case_file_error;
using report::case_record;
namespace fs = std::filesystem;

namespace {

case_record sample_record() {
    case_record c;
    c.property = "controls/hard-output-ignores-x1";
    c.statement = "(false on purpose) a statement with \"quotes\" and ∑";
    c.inputs = {"10", ""};
    c.params = {{"position", 1}, {"symbol", 0}, {"seed", -3}};
    c.seed = 18446744073709551615ULL;
    c.base_seed = 7;
    c.reproduce = "abc";
    c.scalar_kinds = {"exact", "ball"};
    c.precision = 128;
    c.precision_cap = 4096;
    c.verdict = verdict::failed;
    c.message = "changing x_1 changes the output";
    c.numbers = {{"y", "[1]"}, {"bound", std::nullopt}};
    c.shrink_steps = 5;
    c.original = "original/case.json";
    c.made_by.version = "0.1.0";
    c.made_by.commit = "unknown";
    c.made_by.command_line = "attnprop check";
    c.made_by.options = {{"--seed", "7"}};
    return c;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

void spill(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("attnprop-case-record-" + name);
    fs::remove_all(d);
    return d;
}

/// case.json text of the sample with one member replaced by `raw` (JSON text), or removed when
/// `raw` is empty.
std::string with_member(const std::string& key, const std::string& raw) {
    json::value doc = report::case_to_json(sample_record());
    json::value out = json::value::object();
    for (const auto& [k, v] : doc.members()) {
        if (k != key) out.set(k, v);
        else if (!raw.empty()) out.set(k, json::parse(raw));
    }
    if (!doc.find(key) && !raw.empty()) out.set(key, json::parse(raw));
    return json::dump(out, 2);
}

std::string error_of(const std::string& text) {
    try {
        (void)report::parse_case_record(text, "case.json");
    } catch (const case_file_error& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST_CASE("case record: written and read back through the one field table", "[report][case]") {
    const case_record c = sample_record();
    const std::string text = json::dump(report::case_to_json(c), 2);
    const case_record back = report::parse_case_record(text, "case.json");
    CHECK(back.property == c.property);
    CHECK(back.statement == c.statement);
    CHECK(back.model == "model.json");
    CHECK(back.inputs == c.inputs);
    CHECK(back.params == c.params);
    CHECK(back.seed == c.seed);
    CHECK(back.base_seed == c.base_seed);
    CHECK(back.reproduce == c.reproduce);
    CHECK(back.scalar_kinds == c.scalar_kinds);
    CHECK(back.precision == c.precision);
    CHECK(back.precision_cap == c.precision_cap);
    CHECK(back.verdict == c.verdict);
    CHECK(back.message == c.message);
    CHECK(back.numbers == c.numbers);
    CHECK(back.numbers_from == "check");
    CHECK(back.shrink_steps == c.shrink_steps);
    CHECK(back.original == c.original);
    CHECK_FALSE(back.shrunk.has_value());
    CHECK(back.made_by.command_line == c.made_by.command_line);
    CHECK_FALSE(back.fingerprint.has_value());
    // The members of the file in the order of docs/reports.md.
    const json::value doc = json::parse(text);
    std::vector<std::string> keys;
    for (const auto& [k, v] : doc.members()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"format", "version", "property", "statement", "model", "inputs",
                                           "n", "params", "seed", "base_seed", "reproduce", "scalar_kinds",
                                           "precision", "precision_cap", "verdict", "message", "numbers",
                                           "numbers_from", "shrink_steps", "original", "provenance"});
    CHECK(json::dump(*doc.find("n"), -1) == "[3,1]");
    // Re-serialising what was read gives the same document.
    CHECK(json::dump(report::case_to_json(back), 2) == text);
    // Every user kind is a kind a property may declare, the certified double intervals too.
    CHECK(report::parse_case_record(with_member("scalar_kinds", "[\"interval\", \"ball\"]"), "case.json")
              .scalar_kinds == std::vector<std::string>{"interval", "ball"});
    // A folder written before numbers_from existed: read, with an unknown source.
    CHECK(report::parse_case_record(with_member("numbers_from", ""), "case.json").numbers_from.empty());
    // A folder written before the verdict words were one: holds and violated read as passed and
    // failed (util/verdict.hpp), and are written back in the words of today.
    CHECK(report::parse_case_record(with_member("verdict", "\"violated\""), "case.json").verdict == verdict::failed);
    CHECK(report::parse_case_record(with_member("verdict", "\"holds\""), "case.json").verdict == verdict::passed);
    CHECK(report::parse_case_record(with_member("verdict", "\"undecided\""), "case.json").verdict == verdict::undecided);
}

TEST_CASE("case record: a written folder is intact, an edited one is told apart", "[report][case]") {
    const fs::path dir = fresh_dir("seal");
    const std::string model_text = "{\"not\": \"parsed here\"}\n";
    report::write_case_folder(dir, model_text, sample_record());
    CHECK(slurp(dir / "model.json") == model_text);
    auto f = report::read_case_folder(dir);
    REQUIRE(f.seal == report::seal_status::intact);
    REQUIRE(f.record.fingerprint);
    CHECK(f.record.fingerprint->model_sha256 == report::sha256_hex(model_text));
    CHECK(f.model_text == model_text);
    CHECK(fs::equivalent(f.model_path, dir / "model.json"));
    const std::string case_text = slurp(dir / "case.json");

    SECTION("whitespace is not an edit") {
        spill(dir / "case.json", json::dump(json::parse(case_text), -1));
        CHECK(report::read_case_folder(dir).seal == report::seal_status::intact);
    }
    SECTION("an edited model file") {
        spill(dir / "model.json", model_text + " ");
        auto g = report::read_case_folder(dir);
        CHECK(g.seal == report::seal_status::edited);
        CHECK_THAT(g.seal_detail, Catch::Contains("model.json changed (its SHA-256 is"));
        CHECK_THAT(g.seal_detail, Catch::Contains("the folder was edited since attnprop wrote it"));
    }
    SECTION("an edited case field") {
        std::string t = case_text;
        const auto at = t.find("\"position\": 1");
        REQUIRE(at != std::string::npos);
        t.replace(at, 13, "\"position\": 2");
        spill(dir / "case.json", t);
        auto g = report::read_case_folder(dir);
        CHECK(g.seal == report::seal_status::edited);
        CHECK_THAT(g.seal_detail, Catch::Contains("case.json changed (the SHA-256 of its fields is"));
        CHECK(g.record.params.at("position") == 2); // still read: --allow-edited replays it
    }
    SECTION("a removed fingerprint") {
        json::value doc = json::parse(case_text);
        json::value out = json::value::object();
        for (const auto& [k, v] : doc.members())
            if (k != "fingerprint") out.set(k, v);
        spill(dir / "case.json", json::dump(out, 2));
        auto g = report::read_case_folder(dir);
        CHECK(g.seal == report::seal_status::missing);
        CHECK_THAT(g.seal_detail, Catch::Contains("records no fingerprint"));
    }
    SECTION("a forged fingerprint of the wrong shape is bad input") {
        std::string t = case_text;
        const auto at = t.find("\"algorithm\": \"sha256\"");
        REQUIRE(at != std::string::npos);
        t.replace(at, 21, "\"algorithm\": \"md5\"   ");
        spill(dir / "case.json", t);
        CHECK_THROWS_WITH(report::read_case_folder(dir),
                          Catch::Contains("unknown fingerprint algorithm \"md5\"") &&
                              Catch::Contains("(at /fingerprint/algorithm)"));
    }
    fs::remove_all(dir);
}

TEST_CASE("case record: a folder without files is located bad input", "[report][case]") {
    const fs::path dir = fresh_dir("missing");
    CHECK_THROWS_WITH(report::read_case_folder(dir), Catch::Contains("case.json: error: cannot open"));
    report::write_case_folder(dir, "{}", sample_record());
    fs::remove(dir / "model.json");
    CHECK_THROWS_WITH(report::read_case_folder(dir),
                      Catch::Contains("the model file") && Catch::Contains("cannot open") &&
                          Catch::Contains("(at /model)"));
    fs::remove_all(dir);
}

TEST_CASE("case record: every malformed member is named with its place", "[report][case]") {
    const std::pair<std::string, std::string> cases[] = {
        {with_member("version", "2"), "unsupported version 2 (this attnprop reads version 1) (at /version)"},
        {with_member("format", "\"x\""), "not an attnprop counterexample"},
        {with_member("seed", "\"abc\""), "\"abc\" is not a decimal unsigned 64-bit integer"},
        {with_member("seed", "\"18446744073709551616\""), "is not a decimal unsigned 64-bit integer (0 to"},
        {with_member("seed", "\"-1\""), "(at /seed)"},
        {with_member("seed", "7"), "expected string, got number (at /seed)"},
        {with_member("precision", "0"), "0 is outside [16, 1048576] (the range of --precision) (at /precision)"},
        {with_member("precision", "-5"), "-5 is outside [16, 1048576]"},
        {with_member("precision", "99999999999999999999"), "outside the range of a 64-bit integer (at /precision)"},
        {with_member("precision", "128.0"), "128.0 is not an integer (at /precision)"},
        {with_member("precision_cap", "64"), "precision_cap 64 is below precision 128"},
        {with_member("params", "{\"n\": 1e12}"), "1e12 is not an integer (at /params/n)"},
        {with_member("params", "{\"n\": \"7\"}"), "expected number, got string (at /params/n)"},
        {with_member("inputs", "[1]"), "expected string, got number (at /inputs/0)"},
        {with_member("n", "[3]"), "holds 1 lengths for 2 inputs (at /n)"},
        {with_member("n", "[4, 1]"), "n = 4 does not match input 0"},
        {with_member("verdict", "\"not-applicable\""), "unknown verdict \"not-applicable\" (known: passed, failed, undecided, undefined)"},
        {with_member("verdict", "\"below\""), "unknown verdict \"below\""},
        {with_member("scalar_kinds", "[\"quad\"]"), "unknown scalar kind \"quad\" (known: exact, double, mpfr, ball, interval) (at /scalar_kinds/0)"},
        {with_member("model", "\"../../etc/passwd\""), "is not a relative path inside the folder (at /model)"},
        {with_member("model", "\"/etc/passwd\""), "is not a relative path inside the folder"},
        {with_member("message", ""), "missing key \"message\""},
        {with_member("extra", "1"), "unknown key \"extra\" (at /extra)"},
        {with_member("numbers", "{\"y\": 3}"), "expected string, got number (at /numbers/y)"},
        {with_member("numbers_from", "\"eval\""), "unknown source \"eval\""},
        {with_member("shrink_steps", "-1"), "-1 is outside [0,"},
        {with_member("provenance", "{}"), "not a well-formed provenance object"},
        {with_member("fingerprint", "{\"algorithm\": \"sha256\", \"model\": \"00\", \"case\": \"00\"}"),
          "not a SHA-256 (64 lowercase hex digits) (at /fingerprint/model)"},
        {"[]", "expected an object, got array"},
        {"{\"format\": ", "case.json:1:12: error:"},
    };
    for (const auto& c : cases) {
        INFO(c.first);
        CHECK_THAT(error_of(c.first), Catch::Contains(c.second));
    }
    // The line and column of the member.
    CHECK_THAT(error_of(with_member("precision", "0")), Catch::StartsWith("case.json:") && Catch::Contains(": error: "));
    const std::string text = with_member("precision", "0");
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(text.find("\"precision\"")), '\n');
    CHECK_THAT(error_of(text), Catch::StartsWith("case.json:" + std::to_string(line) + ":"));
}

TEST_CASE("case record: any bytes give a record or a case_file_error", "[report][case]") {
    const std::string good = json::dump(report::case_to_json(sample_record()), 2);
    std::mt19937 rng(20261204);
    int parsed = 0, refused = 0;
    for (int k = 0; k < 3000; ++k) {
        std::string t = good;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = rng() % t.size();
            switch (rng() % 3) {
            case 0: t[at] = static_cast<char>(rng() % 256); break;
            case 1: t.erase(at, 1 + rng() % 8); break;
            default: t.insert(at, 1, "0123456789-.e\"{}[]:,"[rng() % 20]); break;
            }
            if (t.empty()) t = "x";
        }
        try {
            (void)report::parse_case_record(t, "case.json");
            ++parsed;
        } catch (const case_file_error&) {
            ++refused;
        }
    }
    CHECK(parsed + refused == 3000);
    CHECK(refused > 1000);
}
