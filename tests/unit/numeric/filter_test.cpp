// The one precision filter (numeric/filter.hpp): the ladder of rungs, the order it tries them
// in, where it stops, and its statistics; and its compile-time form for hot loops.
#include "numeric/filter.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

using namespace attnprop;
using numeric::filter_end;
using numeric::filter_step;
using numeric::kind_choice;
using numeric::rung;

TEST_CASE("a doubling ladder doubles the precision while it stays within the cap",
          "[numeric][filter]") {
    const auto ball = kind_choice::of<numeric::arb_ball>();
    auto bits = [](const std::vector<rung>& l) {
        std::vector<long> b;
        for (const auto& r : l) b.push_back(r.bits);
        return b;
    };
    REQUIRE(bits(numeric::doubling_ladder(ball, 128, 4096)) == std::vector<long>{128, 256, 512, 1024, 2048, 4096});
    REQUIRE(bits(numeric::doubling_ladder(ball, 128, 4095)) == std::vector<long>{128, 256, 512, 1024, 2048});
    // The first rung always, even above the cap; a cap of 0 means never escalate.
    REQUIRE(bits(numeric::doubling_ladder(ball, 128, 64)) == std::vector<long>{128});
    REQUIRE(bits(numeric::doubling_ladder(ball, 128, 0)) == std::vector<long>{128});
    for (const auto& r : numeric::doubling_ladder(ball, 16, 1L << 20)) REQUIRE(r.kind == ball);
}

TEST_CASE("run_filter stops at the first certain answer, in ladder order", "[numeric][filter]") {
    const auto ladder = numeric::doubling_ladder(kind_choice::automatic(), 16, 1024); // 7 rungs
    std::vector<long> tried;
    numeric::filter_stats stats;
    // Certain from 128 bits on.
    auto f = numeric::run_filter(
        ladder,
        [&](const rung& r, std::size_t) -> std::optional<long> {
            tried.push_back(r.bits);
            return r.bits;
        },
        [](long bits, std::size_t) { return bits >= 128 ? filter_step::decided : filter_step::escalate; },
        &stats);
    REQUIRE(tried == std::vector<long>{16, 32, 64, 128});
    REQUIRE(f.answer == 128);
    REQUIRE(f.rung == 3);
    REQUIRE(f.end == filter_end::decided);
    REQUIRE(stats.attempts(0) == 1);
    REQUIRE(stats.attempts(3) == 1);
    REQUIRE(stats.attempts(4) == 0);
    REQUIRE(stats.decisions(3) == 1);
    REQUIRE(stats.decisions(0, 3) == 0);
    REQUIRE(stats.undecided_count() == 0);
}

TEST_CASE("run_filter ends undecided at the top of the ladder, or where the judge stops it",
          "[numeric][filter]") {
    const auto ladder = numeric::doubling_ladder(kind_choice::automatic(), 128, 512); // 3 rungs
    numeric::filter_stats stats;
    // Negative control: a question no rung decides reaches the top and says so.
    auto top = numeric::run_filter(
        ladder, [](const rung& r, std::size_t) -> std::optional<long> { return r.bits; },
        [](long, std::size_t) { return filter_step::escalate; }, &stats);
    REQUIRE(top.end == filter_end::top);
    REQUIRE(top.rung == 2);
    REQUIRE(top.answer == 512);
    REQUIRE(stats.undecided_count() == 1);
    REQUIRE(stats.decisions(0, stats.rungs()) == 0);
    // A judge that says more would not help stops at once.
    auto stopped = numeric::run_filter(
        ladder, [](const rung& r, std::size_t) -> std::optional<long> { return r.bits; },
        [](long, std::size_t) { return filter_step::stop; });
    REQUIRE(stopped.end == filter_end::stopped);
    REQUIRE(stopped.rung == 0);
}

TEST_CASE("a rung without an answer escalates; the last rung must answer", "[numeric][filter]") {
    const std::vector<rung> ladder = {{kind_choice::of<numeric::dinterval>(), 128},
                                      {kind_choice::of<numeric::arb_ball>(), 128}};
    auto f = numeric::run_filter(
        ladder,
        [](const rung& r, std::size_t) -> std::optional<std::string> {
            if (r.kind.is<numeric::dinterval>()) return std::nullopt; // met a pole
            return std::string(r.kind.name());
        },
        [](const std::string&, std::size_t) { return filter_step::decided; });
    REQUIRE(f.answer == "ball");
    REQUIRE(f.rung == 1);
    REQUIRE_THROWS_AS(numeric::run_filter(
                          ladder, [](const rung&, std::size_t) -> std::optional<int> { return std::nullopt; },
                          [](int, std::size_t) { return filter_step::decided; }),
                      std::logic_error);
    REQUIRE_THROWS_AS(numeric::run_filter(
                          std::vector<rung>{}, [](const rung&, std::size_t) -> std::optional<int> { return 1; },
                          [](int, std::size_t) { return filter_step::decided; }),
                      std::logic_error);
}

TEST_CASE("filter_cascade calls its stages in order up to the first that decides",
          "[numeric][filter]") {
    numeric::filter_stats stats(4);
    std::string calls;
    for (int decide_at : {0, 2, 3}) {
        const std::size_t by = numeric::filter_cascade(
            &stats,
            numeric::at_rung(0, [&] { calls += '0'; return decide_at == 0; }),
            numeric::at_rung(2, [&] { calls += '2'; return decide_at == 2; }),
            numeric::at_rung(3, [&] { calls += '3'; return decide_at == 3; }));
        REQUIRE(by == static_cast<std::size_t>(decide_at));
        calls += '|';
    }
    REQUIRE(calls == "0|02|023|");
    REQUIRE(stats.attempts(0) == 3);
    REQUIRE(stats.attempts(1) == 0);
    REQUIRE(stats.attempts(2) == 2);
    REQUIRE(stats.attempts(3) == 1);
    REQUIRE(stats.decisions(0) == 1);
    REQUIRE(stats.decisions(2) == 1);
    REQUIRE(stats.decisions(3) == 1);
    // Negative control: no stage decides.
    REQUIRE(numeric::filter_cascade(&stats, numeric::at_rung(0, [] { return false; })) == numeric::no_rung);
    REQUIRE(stats.undecided_count() == 1);
    numeric::filter_stats sum;
    sum += stats;
    sum += stats;
    REQUIRE(sum.attempts(0) == 8);
    REQUIRE(sum.undecided_count() == 2);
}
