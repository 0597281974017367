// report::provenance: shell quoting of the command line, the JSON round trip, and the option
// comparison behind --out.
#include "report/provenance.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;

TEST_CASE("shell_quote leaves plain words and quotes the rest", "[report][provenance]") {
    CHECK(report::shell_quote("build/bin/attnprop") == "build/bin/attnprop");
    CHECK(report::shell_quote("--n=16:256:x4") == "--n=16:256:x4");
    CHECK(report::shell_quote("semantics,hard-limit") == "semantics,hard-limit");
    CHECK(report::shell_quote("") == "''");
    CHECK(report::shell_quote("a b") == "'a b'");
    CHECK(report::shell_quote("0$") == "'0$'");
    CHECK(report::shell_quote("it's") == "'it'\\''s'");
    const char* argv[] = {"attnprop", "eval", "--input", "0 1", "--model", ""};
    CHECK(report::shell_join(6, argv) == "attnprop eval --input '0 1' --model ''");
}

TEST_CASE("provenance survives report.json", "[report][provenance]") {
    report::provenance p;
    p.version = "0.1.0";
    p.commit = "unknown";
    p.command_line = "attnprop check";
    p.options = {{"--suite", "controls"}, {"--json", "false"}};
    json::value doc = json::value::object();
    doc.set("provenance", report::provenance_to_json(p));
    const json::value back_doc = json::parse(json::dump(doc, 2));
    const auto back = report::provenance_from_json(back_doc);
    REQUIRE(back);
    CHECK(back->commit == "unknown");
    CHECK_FALSE(back->dirty.has_value());
    CHECK(back_doc.find("provenance")->find("commit_dirty")->is_null());
    CHECK(back->options == p.options);
    // older reports and other files have none
    CHECK_FALSE(report::provenance_from_json(json::parse("{\"format\": \"attnprop-check-report\"}")));
    CHECK_FALSE(report::provenance_from_json(json::parse("[1]")));
    CHECK_FALSE(report::provenance_from_json(json::parse("{\"provenance\": {\"options\": {}}}")));
}

TEST_CASE("differing_options compares values and skips the ignored ones", "[report][provenance]") {
    report::provenance a, b;
    a.options = {{"--suite", "semantics"}, {"--seed", "1"}, {"--json", "false"}, {"--old", "x"}};
    b.options = {{"--suite", "controls"}, {"--seed", "1"}, {"--json", "true"}, {"--new", "y"}};
    CHECK(report::differing_options(a, b, {"--json"}) ==
          std::vector<std::string>{"--suite", "--new", "--old"});
    CHECK(report::differing_options(a, a, {}).empty());
    b.set_option("--suite", "semantics");
    CHECK(*b.option("--suite") == "semantics");
    CHECK(report::option_text("--language", "") == "--language ''");
}
