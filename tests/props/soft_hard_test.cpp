// Suite soft-hard at a small budget with a fixed seed: every property holds, and each one fails
// against a deliberately broken implementation (its negative control). The suite's
// deliberately false statements (controls/soft-*) are in suites_test.cpp with the other
// controls. Also: the margin generators keep their promises, and the exact gap pass agrees with
// the exact hard kernel on random models of both hard kinds.
#include "numeric/ball_bounds.hpp"
#include "soft_hard/simulate.hpp"
#include "attention/hard_exact.hpp"
#include "gen/generators.hpp"
#include "gen/margins.hpp"
#include "props/soft_hard.hpp"
#include "broken.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

using namespace attnprop;
using numeric::arb_ball;
using numeric::rational;

namespace {

runner::run_config small(int tests = 60) { return test::budget(tests, 32); }

} // namespace

TEST_CASE("soft-hard/leak-below-bound holds", "[props][soft-hard]") {
    test::require_holds(props::leak_below_bound(), small());
}
TEST_CASE("soft-hard/readout-agrees-when-certified holds", "[props][soft-hard]") {
    test::require_holds(props::readout_agrees_when_certified(), small());
}
TEST_CASE("soft-hard/ties-follow-average holds", "[props][soft-hard]") {
    test::require_holds(props::ties_follow_average(), small());
}

TEST_CASE("negative control: a leak bound that forgets the competing keys is caught",
          "[props][negative]") {
    test::require_fails(props::leak_below_bound(test::broken::leak_bound_without_competitors()),
                        small(100));
}

TEST_CASE("negative control: a certificate that ignores the propagated difference is caught",
          "[props][negative]") {
    test::require_fails(
        props::readout_agrees_when_certified(test::broken::certificate_ignoring_difference()),
        small(100));
}

TEST_CASE("negative control: an average-hard reference that breaks ties leftmost is caught",
          "[props][negative]") {
    test::require_fails(props::ties_follow_average(test::broken::unique_hard_reference()), small(100));
}

TEST_CASE("margin generators: exact layer-1 gaps, 1/n gaps and ties as promised",
          "[props][soft-hard][gen]") {
    rc::prop("exact-gap and exact-ties: layer-1 margins are multiples of the scale", [] {
        const auto f = *rc::gen::element(gen::margin_family::exact_gap, gen::margin_family::exact_ties);
        const auto m = *gen::margin_model(f);
        const long n = *rc::gen::inRange(2L, 20L);
        const auto w = *gen::input(m.sigma, n);
        const auto p = analysis::score_gaps(m, model::parse_input(m, w));
        RC_ASSERT((m.attention == model::attention_kind::average_hard) ==
                  (f == gen::margin_family::exact_ties));
        for (const auto& h : p.layers.front().heads)
            for (const auto& r : h.rows)
                if (r.margin) {
                    // margin / scale is a positive integer
                    const rational q = r.margin->a / h.scale.a;
                    RC_ASSERT(r.margin->g == h.scale.g);
                    RC_ASSERT(q > 0);
                    RC_ASSERT(denominator(q) == 1);
                }
    });
    rc::prop("shrinking-gap: a top level of several keys has the margin sigma c / n", [] {
        const auto m = *gen::margin_model(gen::margin_family::shrinking_gap);
        const long n = *rc::gen::inRange(2L, 20L);
        const auto w = *gen::input(m.sigma, n);
        const auto p = analysis::score_gaps(m, model::parse_input(m, w));
        for (const auto& h : p.layers.front().heads)
            for (const auto& r : h.rows) {
                RC_ASSERT(r.maximal.size() == 1); // the tie-break leaves one maximal key
                if (r.margin) RC_ASSERT(r.margin->a > 0);
            }
        RC_TAG(p.layers.front().min_margin &&
                       denominator(p.layers.front().min_margin->a) % n == 0
                   ? "margin ~ 1/n"
                   : "margin O(1)");
    });
}

TEST_CASE("the gap pass equals the exact hard kernel on random models of both kinds",
          "[props][soft-hard]") {
    rc::prop("score_gaps output == hard_forward_exact", [] {
        auto m = *gen::hard_model();
        if (*rc::gen::arbitrary<bool>()) m.attention = model::attention_kind::average_hard;
        const long n = *rc::gen::inRange(1L, 24L);
        const auto x = model::parse_input(m, *gen::input(m.sigma, n));
        const numeric::context ctx{64};
        const auto p = analysis::score_gaps(m, x, {.all_rows = true});
        const auto e = attention::hard_forward_exact(m, x, ctx, true);
        RC_ASSERT(p.output == e.y);
        for (std::size_t k = 0; k < p.layers.size(); ++k)
            for (std::size_t h = 0; h < p.layers[k].heads.size(); ++h)
                for (const auto& r : p.layers[k].heads[h].rows) {
                    const std::size_t i = r.position - 1;
                    RC_ASSERT(r.maximal.front() == e.trace->choice[k][i][h]);
                    if (m.attention == model::attention_kind::average_hard)
                        RC_ASSERT(r.maximal == e.trace->ties[k][i][h]);
                    RC_ASSERT(*p.y[k + 1][i] == e.trace->y[k + 1][i]);
                }
    });
}
