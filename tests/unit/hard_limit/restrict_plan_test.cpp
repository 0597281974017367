// The units of `attnprop restrict` over several lengths (src/hard_limit/restrict_plan.cpp):
// the blocks of a certificate's inputs, the order units are handed out in, a length assembled
// from its parts equal to the length computed in one piece, and parts out of place refused.
#include "hard_limit/restrict_plan.hpp"

#include "restriction_models.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <vector>

using namespace attnprop;
using namespace attnprop::restriction_testing;
using analysis::restrict_plan;

namespace {

void require_same(const analysis::restrict_length_result& a,
                  const analysis::restrict_length_result& b) {
    REQUIRE(a.restr.rho == b.restr.rho);
    REQUIRE(a.restr.dependency == b.restr.dependency);
    REQUIRE(a.restr.table == b.restr.table);
    REQUIRE(a.cert.valid == b.cert.valid);
    REQUIRE(a.cert.assignments == b.cert.assignments);
    REQUIRE(a.cert.checks.size() == b.cert.checks.size());
    for (std::size_t k = 0; k < a.cert.checks.size(); ++k)
        CHECK(a.cert.checks[k].detail == b.cert.checks[k].detail);
    REQUIRE(a.language.has_value() == b.language.has_value());
    if (a.language) {
        CHECK(a.language->verdict == b.language->verdict);
        CHECK(a.language->inputs[0] == b.language->inputs[0]);
        CHECK(a.language->inputs[1] == b.language->inputs[1]);
        CHECK(a.language->accuracy == b.language->accuracy);
    }
}

} // namespace

TEST_CASE("a certificate's inputs are cut into at most 16 blocks of nearly equal size",
          "[restrict-plan]") {
    CHECK(restrict_plan::blocks(0) == 0);
    CHECK(restrict_plan::blocks(5) == 5);
    CHECK(restrict_plan::blocks(1000) == 16);
    for (std::size_t count : {1UL, 7UL, 16UL, 17UL, 1000UL}) {
        std::size_t next = 0, smallest = count, largest = 0;
        for (std::size_t b = 0; b < restrict_plan::blocks(count); ++b) {
            const auto [first, size] = restrict_plan::block(count, b);
            CHECK(first == next);
            next = first + size;
            smallest = std::min(smallest, size);
            largest = std::max(largest, size);
        }
        CHECK(next == count);
        CHECK(largest - smallest <= 1);
        CHECK_THROWS_AS(restrict_plan::block(count, restrict_plan::blocks(count)), std::runtime_error);
    }
}

TEST_CASE("a length assembled from its units equals the length computed in one piece",
          "[restrict-plan]") {
    const auto m = bundled("hard-parity-attempt");
    const std::vector<long> ns = {16, 64, 32};
    for (const std::optional<lang::language> l :
         {std::optional<lang::language>{}, std::optional{lang::language::parity}}) {
        INFO("language: " << (l ? lang::to_string(*l) : "none"));
        analysis::language_options lo;
        lo.certify.samples = 20;
        lo.certify.threads = 1;
        restrict_plan plan(m, lo, l, ns);
        const std::vector<bool> none(ns.size(), false);
        // Restrictions first, largest n first.
        CHECK(plan.restriction_order(none) == std::vector<std::size_t>{1, 2, 0});
        CHECK(plan.restriction_order({false, true, false}) == std::vector<std::size_t>{2, 0});
        CHECK(plan.part_order(none).empty());
        for (std::size_t i : plan.restriction_order(none)) plan.add_restriction(i, plan.restriction_unit(i), 1.0);
        CHECK(plan.restriction_order(none).empty());
        // Parts, largest n first, the language analysis first within a length.
        const auto parts = plan.part_order(none);
        REQUIRE_FALSE(parts.empty());
        CHECK(restrict_plan::length_of(parts.front()) == 1);
        if (l) CHECK(restrict_plan::part_of(parts.front()) == 0);
        for (std::size_t u : parts) {
            const std::size_t i = restrict_plan::length_of(u), k = restrict_plan::part_of(u);
            CHECK_FALSE(plan.assemble(i).has_value());
            const auto r = plan.hold_restriction(i, [] () -> analysis::restriction {
                throw std::logic_error("held already");
            });
            if (k == 0) plan.add_language(i, plan.language_unit(*r), 0.5);
            else plan.add_block(i, k - 1, plan.block_unit(*r, k - 1), 0.25);
        }
        CHECK(plan.part_order(none).empty());
        for (std::size_t i = 0; i < ns.size(); ++i) {
            INFO("n = " << ns[i]);
            const auto x = plan.assemble(i);
            REQUIRE(x.has_value());
            require_same(*x, analysis::restrict_length(m, ns[i], l, lo));
            CHECK(plan.seconds(i) >= 1.0);
        }
        plan.clear();
        CHECK_FALSE(plan.started(0));
        CHECK(plan.restriction_order(none).size() == ns.size());
    }
}

TEST_CASE("parts out of place are refused", "[restrict-plan]") {
    const auto m = bundled("hard-parity-attempt");
    const std::vector<long> ns = {16, 32};
    analysis::language_options lo;
    lo.certify.threads = 1;
    restrict_plan plan(m, lo, std::nullopt, ns);
    CHECK_THROWS_WITH(plan.expect_part(0, 1), Catch::Contains("a part of n = 16 comes before its restriction"));
    CHECK_THROWS_WITH(plan.add_restriction(0, plan.restriction_unit(1), 0),
                      Catch::Contains("restriction of n = 32 as n = 16"));
    plan.add_restriction(0, plan.restriction_unit(0), 0);
    CHECK_THROWS_WITH(plan.expect_part(0, 0), Catch::Contains("without a language"));
    CHECK_THROWS_WITH(plan.expect_part(0, 1 + restrict_plan::max_blocks), Catch::Contains("block 16 of"));
    CHECK_THROWS_WITH(plan.add_block(0, 0, {}, 0), Catch::Contains("holds 0 outputs"));
    CHECK_THROWS_AS(plan.language_unit(*plan.hold_restriction(0, nullptr)), std::runtime_error);
}
