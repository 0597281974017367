// The compact distributions of `attnprop check` reports: n buckets in numeric order, the top
// model classes with "other", the undefined column and the measurements line, the same in the
// terminal table, report.md and report.json; and the provenance in all three files.
#include "runner/check_report.hpp"

#include <catch2/catch.hpp>

using namespace attnprop;

namespace {

runner::property_report crowded_report() {
    runner::property_report r;
    r.suite = "semantics";
    r.name = "crowded";
    r.statement = "a property with many model classes";
    r.kinds = {"exact"};
    r.passed = 90;
    r.undefined = 3;
    r.undefined_reasons = {"undefined at layer 1, node 'n1', position 2 (0/0)"};
    r.n_buckets = {{"n<=16", 191}, {"n<=4", 752}, {"n<=64", 57}, {"n>1024", 2}, {"n<=1024", 5}};
    for (int i = 0; i < 12; ++i) r.classes["class " + std::string(1, static_cast<char>('a' + i))] = i + 1;
    r.measurements = {{"rate: consistent", 312}, {"rate: inconclusive", 4}};
    return r;
}

runner::check_run crowded_run() {
    runner::check_run run;
    run.suites = {"semantics"};
    run.reports = {crowded_report()};
    return run;
}

} // namespace

TEST_CASE("n buckets come in numeric order", "[report][check]") {
    const auto b = runner::ordered_n_buckets(crowded_report().n_buckets);
    REQUIRE(b.size() == 5);
    CHECK(b[0].first == "n<=4");
    CHECK(b[1].first == "n<=16");
    CHECK(b[2].first == "n<=64");
    CHECK(b[3].first == "n<=1024");
    CHECK(b[4].first == "n>1024");
    for (long n : {1L, 4L, 5L, 16L, 17L, 256L, 1024L, 1025L}) {
        std::map<std::string, int> m = {{runner::n_bucket(n), 1}, {"zzz", 1}};
        CHECK(runner::ordered_n_buckets(m).back().first == "zzz"); // other labels last
    }
}

TEST_CASE("the n actually drawn: lower median and the share at n >= max-n/4", "[report][check]") {
    // 10 cases: n = 2 (3), 16 (2), 256 (4), 1024 (1); at --max-n 1024 the quarter is 256.
    const auto d = runner::drawn_of({{2, 3}, {16, 2}, {256, 4}, {1024, 1}}, 1024);
    CHECK(d.cases == 10);
    CHECK(d.median == 16); // the 5th of 10 in order (lower median)
    CHECK(d.quarter == 256);
    CHECK(d.at_least == 5);
    const auto one = runner::drawn_of({{7, 1}}, 2);
    CHECK(one.median == 7);
    CHECK(one.quarter == 1); // max(1, 2 / 4)
    CHECK(one.at_least == 1);
    CHECK(runner::drawn_of({}, 1024).cases == 0);
    auto run = crowded_run();
    run.cfg.max_n = 1024;
    run.reports.front().lengths = {{2, 3}, {16, 2}, {256, 4}, {1024, 1}};
    CHECK(runner::check_to_markdown(run).find("(drawn: median 16, 50.0% at n >= 256 over every case)") !=
          std::string::npos);
    CHECK(runner::check_to_text(run).find("(median 16, 50.0% at n >= 256)") != std::string::npos);
}

TEST_CASE("model classes: the top five by cases and then other", "[report][check]") {
    const auto s = runner::summarize_classes(crowded_report().classes);
    REQUIRE(s.top.size() == runner::top_model_classes);
    CHECK(s.top[0] == std::pair<std::string, int>{"class l", 12});
    CHECK(s.top[4] == std::pair<std::string, int>{"class h", 8});
    CHECK(s.other_classes == 7);
    CHECK(s.other_cases == 1 + 2 + 3 + 4 + 5 + 6 + 7);
    // ties by name; no "other" when everything fits
    const auto t = runner::summarize_classes({{"b", 2}, {"a", 2}, {"c", 1}});
    REQUIRE(t.top.size() == 3);
    CHECK(t.top[0].first == "a");
    CHECK(t.top[1].first == "b");
    CHECK(t.other_classes == 0);
    CHECK(t.other_cases == 0);
}

TEST_CASE("the terminal table is compact and shows undefined and measurements", "[report][check]") {
    const std::string text = runner::check_to_text(crowded_run());
    CHECK(text.find("undefined") < text.find("failed"));
    CHECK(text.find("    lengths: n<=4: 752, n<=16: 191, n<=64: 57, n<=1024: 5, n>1024: 2\n") !=
          std::string::npos);
    CHECK(text.find("    models:  class l: 12, class k: 11, class j: 10, class i: 9, class h: 8, "
                    "other (7 classes, 28 cases)\n") != std::string::npos);
    CHECK(text.find("    measurements: rate: consistent: 312, rate: inconclusive: 4\n") !=
          std::string::npos);
    CHECK(text.find("    undefined: undefined at layer 1, node 'n1', position 2 (0/0)\n") !=
          std::string::npos);
    CHECK(text.find("class a") == std::string::npos);
}

TEST_CASE("report.md has the undefined column and the compact distributions", "[report][check]") {
    const std::string md = runner::check_to_markdown(crowded_run());
    CHECK(md.find("| property | status | passed | undecided | undefined | failed | gave up | seed |") !=
          std::string::npos);
    CHECK(md.find("| 90 | 0 | 3 | 0 | no |") != std::string::npos);
    CHECK(md.find("Lengths: n<=4: 752, n<=16: 191, n<=64: 57, n<=1024: 5, n>1024: 2.") !=
          std::string::npos);
    CHECK(md.find("other (7 classes, 28 cases).") != std::string::npos);
    CHECK(md.find("Measurements (statistics beside the verdicts): rate: consistent: 312, "
                  "rate: inconclusive: 4.") != std::string::npos);
    CHECK(md.find("  Undefined: undefined at layer 1") != std::string::npos);
    CHECK(md.find("class a") == std::string::npos);
    CHECK(md.find("Provenance") == std::string::npos); // nothing recorded, nothing written
}

TEST_CASE("report.json: ordered buckets and the short class table beside the full map", "[report][check]") {
    const json::value doc = runner::check_to_json(crowded_run());
    CHECK(doc.find("provenance") == nullptr);
    const json::value& p = doc.find("properties")->elements().at(0);
    const json::value& nb = *p.find("n_buckets");
    REQUIRE(nb.is_array());
    REQUIRE(nb.size() == 5);
    CHECK(nb[0].find("bucket")->as_string() == "n<=4");
    CHECK(nb[0].find("cases")->raw_number() == "752");
    CHECK(nb[4].find("bucket")->as_string() == "n>1024");
    const json::value& mc = *p.find("model_classes");
    REQUIRE(mc.find("top")->size() == 5);
    CHECK((*mc.find("top"))[0].find("class")->as_string() == "class l");
    CHECK(mc.find("other")->find("classes")->raw_number() == "7");
    CHECK(mc.find("other")->find("cases")->raw_number() == "28");
    CHECK(p.find("model_classes_all")->size() == 12);
    CHECK(p.find("undefined")->raw_number() == "3");
    CHECK(p.find("undefined_reasons")->size() == 1);
    CHECK(p.find("measurements")->find("rate: consistent")->raw_number() == "312");
    CHECK(doc.find("summary")->find("undefined_cases")->raw_number() == "3");
}

TEST_CASE("check reports record their provenance", "[report][check][provenance]") {
    runner::check_run run = crowded_run();
    run.made_by.version = "9.9.9";
    run.made_by.commit = "0123abcd";
    run.made_by.dirty = false;
    run.made_by.command_line = "attnprop check --seed 'a b'";
    run.made_by.options = {{"--seed", "1"}, {"--suite", "semantics"}};
    const json::value doc = runner::check_to_json(run);
    const auto back = report::provenance_from_json(doc);
    REQUIRE(back);
    CHECK(back->version == "9.9.9");
    CHECK(back->commit == "0123abcd");
    CHECK(back->dirty == false);
    CHECK(back->command_line == "attnprop check --seed 'a b'");
    CHECK(back->options == run.made_by.options);
    const std::string md = runner::check_to_markdown(run);
    CHECK(md.find("## Provenance\n\n- attnprop 9.9.9, commit `0123abcd` (clean)\n"
                  "- command: `attnprop check --seed 'a b'`\n"
                  "- options: `--seed 1` `--suite semantics`\n") != std::string::npos);
}
