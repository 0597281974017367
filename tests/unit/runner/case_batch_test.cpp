// A property's case sequence cut into batches (runner::run_case_batch), folded in order by
// runner::report_builder, gives the report of the whole sequence run at once
// (runner::run_property), with and without the wire between ranks in the middle: counts,
// reasons, measurements, the shrunk counterexample and its reproduce string, a give-up and a
// refusal. This is what makes `check` under MPI write the report of one process.
#include "dist/units.hpp"
#include "model/model_file.hpp"
#include "numeric/interrupt.hpp"
#include "numeric/limits.hpp"
#include "runner/check_report.hpp"
#include "runner/runner.hpp"
#include "model/json.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

namespace {

using namespace attnprop;

std::shared_ptr<const model::model<numeric::rational>> small_model() {
    static const auto m = std::make_shared<const model::model<numeric::rational>>(
        model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/hard-first.json"));
    return m;
}

/// A property of synthetic cases: x drawn in [0, 1000) (a quarter of the draws discarded by the
/// generator when `discard_every` is 4); x % 5 == 0 undecided (with agreeing sides when
/// x % 10 == 0), x % 7 == 0 undefined, x % 2 == 0 with a measurement; violated when x exceeds
/// `fail_above`, refused (a limit) when x exceeds `refuse_above`.
runner::property synthetic(std::string name, int discard_every, long fail_above, long refuse_above) {
    runner::property p;
    p.suite = "synthetic";
    p.name = std::move(name);
    p.statement = "a statement about x";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.generator = [discard_every](const runner::run_config&) {
        return rc::gen::map(rc::gen::inRange(0, 1000), [discard_every](int x) {
            if (discard_every > 0 && x % discard_every == 0) throw rc::GenerationFailure("x is a multiple");
            runner::test_case c;
            c.model = *small_model();
            c.inputs = {"0"};
            c.params = {{"x", x}, {"n", 1 + x % 300}};
            return c;
        });
    };
    p.check = [fail_above, refuse_above](const runner::test_case& c, const numeric::context&) {
        const long x = c.params.at("x");
        if (x > refuse_above) throw numeric::limit_error(numeric::limit::exact_bits, static_cast<std::uint64_t>(x), "x");
        if (x > fail_above) return runner::check_result::violated("x = " + std::to_string(x) + " is too large");
        if (x % 7 == 0) return runner::check_result::undefined("undefined at x = " + std::to_string(x % 21));
        runner::check_result r = x % 5 == 0
                                     ? runner::check_result::undecided_at_any_precision("undecided at x % 15 = " +
                                                                                        std::to_string(x % 15))
                                           .with_sides_agree(x % 10 == 0)
                                     : runner::check_result::holds();
        if (x % 2 == 0) r.with_measurement({"rate", x % 4 == 0 ? "consistent" : "inconclusive", "d"});
        return r;
    };
    p.tag = [](const runner::test_case& c) { return "x mod 3 = " + std::to_string(c.params.at("x") % 3); };
    return p;
}

runner::run_config config(int tests) {
    runner::run_config cfg;
    cfg.seed = 20261206;
    cfg.tests = tests;
    cfg.max_n = 64;
    return cfg;
}

/// The report folded from batches of `cut` attempts, each through the wire when `wire`; as
/// rank 0 folds them: batches until the run is over.
runner::property_report folded(const runner::property& p, const runner::run_config& cfg, std::uint64_t cut,
                               bool wire) {
    runner::report_builder b(p, cfg);
    double seconds = 0;
    while (!b.over()) {
        REQUIRE(b.attempts() < runner::max_attempts(cfg));
        runner::case_batch got = runner::run_case_batch(p, cfg, b.attempts(), cut);
        if (wire) got = dist::decode_case_batch(dist::encode_case_batch(got));
        REQUIRE(got.first == b.attempts());
        REQUIRE_FALSE(got.attempts.empty());
        seconds += got.seconds;
        b.add(got);
    }
    return b.finish(seconds);
}

std::string as_json(const runner::property_report& r) {
    runner::check_run run;
    run.suites = {r.suite};
    run.reports = {r};
    return json::dump(runner::check_to_json(run));
}

} // namespace

TEST_CASE("runner: batches of a property's attempts fold into the report of the whole run", "[unit][runner]") {
    const runner::run_config cfg = config(60);
    for (const auto& p : {synthetic("mixed", 4, 100000, 100000), synthetic("no-discards", 0, 100000, 100000),
                          synthetic("fails", 4, 600, 100000)}) {
        const runner::property_report whole = runner::run_property(p, cfg);
        INFO(p.name << " (seed " << cfg.seed << "): " << whole.status());
        if (p.name == "fails") {
            REQUIRE(whole.failed() == 1);
            REQUIRE(whole.cx.has_value());
            CHECK(whole.cx->shrink_steps > 0);
            CHECK(whole.cx->shrunk.value.params.at("x") == 601); // inRange shrinks towards 0
            CHECK_FALSE(whole.cx->reproduce.empty());
        } else {
            CHECK(whole.passed + whole.undecided + whole.undefined == cfg.tests);
            CHECK(whole.undecided > 0);
            CHECK(whole.undecided_equal > 0);
            CHECK(whole.undefined > 0);
            CHECK_FALSE(whole.measurements.empty());
        }
        for (std::uint64_t cut : {1, 3, 7, 64, 1000})
            for (bool wire : {false, true}) {
                INFO("batches of " << cut << (wire ? ", through the wire" : ""));
                const runner::property_report r = folded(p, cfg, cut, wire);
                CHECK(as_json(r) == as_json(whole));
                if (whole.cx) {
                    REQUIRE(r.cx.has_value());
                    CHECK(r.cx->reproduce == whole.cx->reproduce);
                    CHECK(r.cx->shrink_steps == whole.cx->shrink_steps);
                    CHECK(model::write_model(r.cx->original.value.model) ==
                          model::write_model(whole.cx->original.value.model));
                }
            }
    }
}

TEST_CASE("runner: a property that discards every case gives up after ten discards per case", "[unit][runner]") {
    const runner::run_config cfg = config(5);
    const runner::property p = synthetic("gives-up", 1, 100000, 100000);
    const runner::property_report whole = runner::run_property(p, cfg);
    INFO("seed " << cfg.seed);
    REQUIRE(whole.gave_up());
    CHECK(whole.passed == 0);
    CHECK(runner::max_attempts(cfg) == 4 + 51); // 4 cases and 51 discards at most
    for (std::uint64_t cut : {1, 4, 100}) {
        const runner::property_report r = folded(p, cfg, cut, true);
        CHECK(as_json(r) == as_json(whole));
    }
    // The builder decides the give-up at the 51st discard, not before.
    runner::report_builder b(p, cfg);
    const runner::case_batch all = runner::run_case_batch(p, cfg, 0, runner::max_attempts(cfg));
    REQUIRE(all.attempts.size() == runner::max_attempts(cfg));
    for (std::size_t k = 0; k < 50; ++k) CHECK_FALSE(b.add(all.attempts[k]));
    CHECK(b.add(all.attempts[50]));
}

TEST_CASE("runner: a refused attempt ends the property with its error, folded or not", "[unit][runner]") {
    const runner::run_config cfg = config(200);
    const runner::property p = synthetic("refused", 0, 100000, 700);
    CHECK_THROWS_AS(runner::run_property(p, cfg), numeric::limit_error);
    std::string whole_message;
    try {
        (void)runner::run_property(p, cfg);
    } catch (const numeric::limit_error& e) {
        whole_message = e.what();
    }
    REQUIRE_FALSE(whole_message.empty());
    for (std::uint64_t cut : {1, 9, 500}) {
        INFO("batches of " << cut);
        try {
            (void)folded(p, cfg, cut, true);
            FAIL("no refusal");
        } catch (const numeric::limit_error& e) {
            CHECK(std::string(e.what()) == whole_message);
        }
    }
    // A refusal after the run is over is never reached: the fold stops at the 5th case.
    const runner::run_config five = config(5);
    runner::case_batch ahead;
    ahead.attempts.assign(5, runner::attempt{});
    for (auto& a : ahead.attempts) a.what = runner::attempt::kind::passed;
    ahead.attempts.emplace_back();
    ahead.attempts.back().what = runner::attempt::kind::refused;
    ahead.attempts.back().refusal = std::make_exception_ptr(numeric::limit_error(numeric::limit::exact_bits, 9, "x"));
    ahead = dist::decode_case_batch(dist::encode_case_batch(ahead));
    runner::report_builder b(p, five);
    for (std::size_t k = 0; k < ahead.attempts.size() && !b.over(); ++k) b.add(ahead.attempts[k]);
    CHECK(b.finish(0).status() == "passed");
    runner::report_builder c(p, five);
    c.add(ahead.attempts[0]);
    CHECK_THROWS_AS(c.add(ahead.attempts.back()), numeric::limit_error);
}

TEST_CASE("runner: attempt sizes spread over [0, max_size] as RapidCheck's, from the index alone", "[unit][runner]") {
    runner::run_config cfg = config(100);
    cfg.max_size = 100;
    int before = 0;
    for (std::uint64_t i = 0; i < 100; ++i) {
        const int s = runner::size_for_attempt(cfg, i);
        CHECK(s >= before); // rising from 0 to max_size over the --tests attempts
        before = s;
    }
    CHECK(runner::size_for_attempt(cfg, 0) == 0);
    CHECK(runner::size_for_attempt(cfg, 99) == 100);
    CHECK(runner::size_for_attempt(cfg, 100) == 0); // after discards: the sizes again
    cfg.tests = 202; // two full cycles of the 101 sizes
    for (std::uint64_t i = 0; i < 202; ++i) CHECK(runner::size_for_attempt(cfg, i) == static_cast<int>(i % 101));
    cfg.tests = 10;
    int largest = 0;
    for (std::uint64_t i = 0; i < 10; ++i) {
        const int s = runner::size_for_attempt(cfg, i);
        CHECK(s >= 0);
        CHECK(s <= cfg.max_size);
        largest = std::max(largest, s);
    }
    CHECK(largest == cfg.max_size);
    cfg.tests = 1;
    CHECK(runner::size_for_attempt(cfg, 0) == 0);
    CHECK(runner::size_for_attempt(cfg, 7) == 0);
}

TEST_CASE("runner: a stop request ends a batch with a stopped attempt, and the report interrupted", "[unit][runner]") {
    const runner::run_config cfg = config(50);
    const runner::property p = synthetic("stopped", 0, 100000, 100000);
    numeric::request_stop();
    const runner::case_batch b = runner::run_case_batch(p, cfg, 3, 10);
    const runner::property_report r = runner::run_property(p, cfg);
    numeric::clear_stop_request();
    REQUIRE(b.attempts.size() == 1);
    CHECK(b.attempts[0].what == runner::attempt::kind::stopped);
    CHECK(r.interrupted());
    CHECK(r.passed == 0);
}

TEST_CASE("runner: rounds of batches end every run by the last round, with the whole run's report", "[unit][runner]") {
    // As `check` over MPI ranks: each round hands out attempts_for_round batches of every
    // property not over, and folds them after the round.
    for (const auto& [p, tests] : {std::pair{synthetic("mixed", 4, 100000, 100000), 60},
                                   std::pair{synthetic("gives-up", 1, 100000, 100000), 7},
                                   std::pair{synthetic("fails", 4, 600, 100000), 60}}) {
        const runner::run_config cfg = config(tests);
        INFO(p.name << " (seed " << cfg.seed << ")");
        const runner::property_report whole = runner::run_property(p, cfg);
        constexpr int rounds = 4;
        runner::report_builder b(p, cfg);
        std::uint64_t scheduled = 0;
        int used = 0;
        for (int round = 0; round < rounds && !b.over(); ++round, ++used) {
            const std::uint64_t want = runner::attempts_for_round(
                cfg, round, rounds, scheduled, static_cast<std::uint64_t>(b.counted()));
            REQUIRE(want > 0);
            std::vector<runner::case_batch> got;
            for (std::uint64_t f = scheduled; f < scheduled + want; f += 5)
                got.push_back(runner::run_case_batch(p, cfg, f, std::min<std::uint64_t>(5, scheduled + want - f)));
            scheduled += want;
            for (const auto& g : got)
                if (!b.over()) b.add(g);
        }
        REQUIRE(b.over());
        CHECK(as_json(b.finish(0)) == as_json(whole));
        if (p.name == "mixed") CHECK(used == 2); // a quarter discarded: one more round
        if (p.name == "gives-up") CHECK(used == 4); // nothing counted: every round, the last to the cap
        if (p.name == "fails") CHECK(used == 1);
        CHECK(scheduled <= runner::max_attempts(cfg));
    }
}
