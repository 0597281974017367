// Every property suite at a small budget with fixed seeds; every semantics property also runs
// against a deliberately broken implementation (its negative control) and must fail; every
// control must fail, shrink to a small model and replay from its folder.
#include "model/model_file.hpp"
#include "props/semantics.hpp"
#include "broken.hpp"
#include "runner/check_report.hpp"
#include "runner/replay.hpp"
#include "runner/runner.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace attnprop;
using numeric::rational;

namespace {

runner::run_config small_budget(int tests = 100) { return test::budget(tests); }

const runner::registry& all_properties() {
    static const runner::registry reg = [] {
        runner::registry r;
        runner::register_all(r);
        return r;
    }();
    return reg;
}

void require_holds(const std::string& name, int tests = 100) {
    const runner::property* p = all_properties().find(name);
    REQUIRE(p != nullptr);
    test::require_holds(*p, small_budget(tests));
}

// The shrunk case must fail for the same reason when checked again.
void require_fails(const runner::property& p, int tests = 100) {
    test::require_fails(p, small_budget(tests));
}

} // namespace

TEST_CASE("semantics/hard-filter-equals-exact holds", "[props][semantics]") {
    require_holds("semantics/hard-filter-equals-exact");
}
TEST_CASE("semantics/hard-ball-encloses-exact holds", "[props][semantics]") {
    require_holds("semantics/hard-ball-encloses-exact");
}
TEST_CASE("semantics/hard-dyadic-kinds-agree holds", "[props][semantics]") {
    require_holds("semantics/hard-dyadic-kinds-agree");
}
TEST_CASE("semantics/double-matches-exact holds", "[props][semantics]") {
    require_holds("semantics/double-matches-exact");
}
TEST_CASE("negative control: double on near-tie models selects another position",
          "[props][negative]") {
    require_fails(props::double_matches_exact({}, gen::near_tie_hard_model()));
}
TEST_CASE("semantics/soft-kinds-agree holds", "[props][semantics]") {
    require_holds("semantics/soft-kinds-agree", 60);
}
TEST_CASE("semantics/soft-interval-encloses holds", "[props][semantics]") {
    require_holds("semantics/soft-interval-encloses", 60);
}
TEST_CASE("semantics/leftmost-tie-rule holds", "[props][semantics]") {
    require_holds("semantics/leftmost-tie-rule");
}
TEST_CASE("semantics/trace-last-row holds", "[props][semantics]") {
    require_holds("semantics/trace-last-row");
}
TEST_CASE("semantics/model-file-round-trip holds", "[props][semantics]") {
    require_holds("semantics/model-file-round-trip");
}

// ---- negative controls: each semantics property catches a broken implementation ----------

TEST_CASE("negative control: a 'filtered' path computing in double is caught",
          "[props][negative]") {
    require_fails(props::hard_filter_equals_exact(
        [](const model::model<rational>& m, const model::input_sequence& x,
           const numeric::context& ctx, bool trace) {
            auto md = model::to_scalar<double>(m, ctx);
            auto rd = attention::hard_forward(md, x, ctx, trace);
            attention::exact_hard_output out;
            for (double v : rd.y) out.y.push_back(numeric::rational_from_double(v));
            if (rd.trace) {
                out.trace.emplace();
                out.trace->choice = rd.trace->choice;
            }
            return out;
        }));
}

TEST_CASE("negative control: balls that drop their radius are caught", "[props][negative]") {
    require_fails(props::hard_ball_encloses_exact(test::broken::ball_without_radius()));
}

TEST_CASE("negative control: an extra rounding in the double kernel is caught",
          "[props][negative]") {
    require_fails(props::hard_dyadic_kinds_agree(
        [](const model::model<double>& m, const model::input_sequence& x,
           const numeric::context& ctx, bool trace) {
            auto r = attention::hard_forward(m, x, ctx, trace);
            for (auto& v : r.y) v = v * 0.1 / 0.1;
            return r;
        }));
}

TEST_CASE("negative control: a ball softmax without radius is caught", "[props][negative]") {
    require_fails(props::soft_kinds_agree(test::broken::soft_ball_without_radius()), 40);
}

TEST_CASE("negative control: an interval softmax row without its error bound is caught",
          "[props][negative]") {
    const test::broken::interval_rows_without_error_bound drop;
    require_fails(props::soft_interval_encloses(), 40);
}

TEST_CASE("negative control: ties broken towards the right are caught", "[props][negative]") {
    require_fails(props::leftmost_tie_rule(test::broken::ties_to_the_right()));
}

TEST_CASE("negative control: a readout from position 1 is caught", "[props][negative]") {
    require_fails(props::trace_last_row(test::broken::readout_from_position_1()));
}

TEST_CASE("negative control: a writer going through double is caught", "[props][negative]") {
    require_fails(props::model_file_round_trip(test::broken::writer_through_double()));
}

// ---- controls ------------------------------------------------------------------------------

namespace {

void require_control_fails_small_and_replays(const std::string& name) {
    const runner::property* p = all_properties().find(name);
    REQUIRE(p != nullptr);
    REQUIRE(p->expected_to_fail);
    auto cfg = small_budget(100);
    auto r = runner::run_property(*p, cfg);
    INFO(test::describe(r));
    REQUIRE(r.failed() == 1);
    const auto& m = r.cx->shrunk.value.model;
    INFO("shrunk model: " << model::write_model(m));
    // Shrinking leaves a small model and a short input.
    REQUIRE(m.layers.size() <= 2);
    for (const auto& l : m.layers) REQUIRE(l.heads.size() <= 2);
    REQUIRE(m.d <= 4);
    const auto& shrunk = r.cx->shrunk.value;
    if (shrunk.inputs.empty())
        REQUIRE(shrunk.params.at("n") <= 17); // a case given by its length alone
    else
        REQUIRE(shrunk.inputs.front().size() <= 16);
    // The folder alone reproduces the failure.
    auto dir = std::filesystem::temp_directory_path() / ("attnprop-props-" + std::to_string(r.seed));
    std::filesystem::remove_all(dir);
    runner::check_run run;
    run.cfg = cfg;
    run.suites = {p->suite};
    run.reports = {r};
    runner::write_check_report(dir, run);
    auto rec = runner::read_counterexample(dir / "counterexamples" / runner::counterexample_folder(r));
    REQUIRE(rec.folder.record.property == name);
    REQUIRE(rec.folder.seal == report::seal_status::intact);
    REQUIRE_NOTHROW(runner::check_case(*p, rec)); // the folder has the property's shape
    auto again = runner::replay_case(*p, rec.value, rec.cfg);
    REQUIRE(again.status() == runner::verdict::failed);
    // The same numbers at the recorded precision: the record reproduces to the digit.
    const auto cmp = runner::compare_with_record(rec.folder.record, again);
    std::string differing;
    for (const auto& d : cmp.differing)
        differing += d.name + ": recorded " + d.recorded.value_or("(none)") + ", now " + d.now + "; ";
    INFO("differing numbers: " << differing);
    REQUIRE(cmp.reproduced);
    REQUIRE(cmp.numbers_compared);
    REQUIRE(cmp.differing.empty());
    REQUIRE(cmp.equal == rec.folder.record.numbers.size());
    std::filesystem::remove_all(dir);
}

} // namespace

TEST_CASE("controls/hard-output-ignores-x1 fails, shrinks and replays", "[props][controls]") {
    require_control_fails_small_and_replays("controls/hard-output-ignores-x1");
}
TEST_CASE("controls/soft-influence-below-1-over-n2 fails, shrinks and replays",
          "[props][controls]") {
    require_control_fails_small_and_replays("controls/soft-influence-below-1-over-n2");
}
TEST_CASE("controls/influence-decays-like-1-over-n2 fails, shrinks and replays",
          "[props][controls]") {
    require_control_fails_small_and_replays("controls/influence-decays-like-1-over-n2");
}
TEST_CASE("controls/double-equals-exact fails, shrinks and replays", "[props][controls]") {
    require_control_fails_small_and_replays("controls/double-equals-exact");
}

TEST_CASE("controls/hard-recognizes-language fails, shrinks and replays", "[props][controls]") {
    require_control_fails_small_and_replays("controls/hard-recognizes-language");
}

TEST_CASE("controls/soft-leak-vanishes-at-log-n-over-gamma fails, shrinks and replays",
          "[props][controls]") {
    require_control_fails_small_and_replays("controls/soft-leak-vanishes-at-log-n-over-gamma");
}
TEST_CASE("controls/soft-agrees-at-constant-beta fails, shrinks and replays", "[props][controls]") {
    require_control_fails_small_and_replays("controls/soft-agrees-at-constant-beta");
}
TEST_CASE("controls/soft-leak-vanishes-at-beta-n-gap-1-over-n fails, shrinks and replays",
          "[props][controls]") {
    require_control_fails_small_and_replays("controls/soft-leak-vanishes-at-beta-n-gap-1-over-n");
}

TEST_CASE("the same seed gives the same report", "[props][determinism]") {
    const runner::property* p = all_properties().find("controls/hard-output-ignores-x1");
    auto cfg = small_budget(30);
    runner::check_run a, b;
    a.cfg = b.cfg = cfg;
    a.suites = b.suites = {"controls"};
    a.reports = {runner::run_property(*p, cfg)};
    b.reports = {runner::run_property(*p, cfg)};
    REQUIRE(json::dump(runner::check_to_json(a)) == json::dump(runner::check_to_json(b)));
}

// A folder is replayed only when its case has its property's shape (runner::validate_case): every
// case the generators produce must have it, or check would write folders replay refuses. The
// shrunk cases of the controls are checked above through their folders.
TEST_CASE("every generated case has its property's shape", "[props][replay]") {
    const auto cfg = small_budget();
    for (const auto& p : all_properties().all()) {
        const rc::Gen<runner::test_case> gen = p.generator(cfg);
        for (int k = 0; k < 12; ++k) {
            const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(k);
            const runner::test_case c = gen(rc::Random(seed), 10 + 8 * k).value();
            const auto problem = runner::validate_case(p, c);
            INFO(p.suite << "/" << p.name << ", generator seed " << seed << ", size " << 10 + 8 * k
                         << ": " << (problem ? problem->pointer + ": " + problem->message : ""));
            CHECK_FALSE(problem.has_value());
        }
    }
}
