// The restriction builder of theory.md §1.3 (src/hard_limit/restriction.cpp) on hand-built
// models whose ρ, D_L(n) and c_obs are known: what the greedy pins, the leftmost candidate rule
// on exact ties, the growth and counting figures, bad arguments and thread independence.
#include "hard_limit/restriction.hpp"
#include "util/precondition.hpp"

#include "restriction_models.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace attnprop;
using namespace attnprop::restriction_testing;

TEST_CASE("hard-first: D_L(n) = {1}, nothing pinned", "[restriction]") {
    auto m = bundled("hard-first");
    for (long n : {2L, 16L, 200L}) {
        auto r = analysis::build_restriction(m, n);
        REQUIRE(r.status == analysis::restriction_status::complete);
        REQUIRE(r.rho_string(m.sigma) == std::string(static_cast<std::size_t>(n - 1), '*'));
        REQUIRE(r.dependency == std::vector<std::size_t>{0});
        REQUIRE(r.c_obs() == 1);
        REQUIRE(r.table.size() == 2);
        REQUIRE(r.free_budget_met());
        require_valid(m, r);
    }
}

TEST_CASE("hard-contains-one: the greedy pins x_1 = 1 and D_L(n) is empty", "[restriction]") {
    auto m = bundled("hard-contains-one");
    auto r = analysis::build_restriction(m, 64);
    REQUIRE(r.rho_string(m.sigma) == "1" + std::string(62, '*'));
    REQUIRE(r.c_obs() == 0);
    REQUIRE(r.figures.at(0).pinned_greedy == 1);
    require_valid(m, r);
    auto run = analysis::run_language(m, 64, lang::language::contains_one);
    REQUIRE(run.result.verdict == analysis::language_verdict::not_ruled_out);
}

TEST_CASE("a head attending to a fixed position depends on that position only", "[restriction]") {
    auto m = attend_three();
    auto r = analysis::build_restriction(m, 40);
    REQUIRE(r.dependency == std::vector<std::size_t>{2});
    REQUIRE(r.figures.at(0).k_obs == 1);
    require_valid(m, r);
}

TEST_CASE("exact ties: every key left of p* that can reach G is a candidate", "[restriction]") {
    auto m = first_one_or_eos();
    const long n = 8;
    auto r = analysis::build_restriction(m, n, no_pins(n));
    // G = 1 is attained for sure by eos (position n); every free key can tie with it and the
    // leftmost 1 wins, so all of them are candidates and the output depends on all of them.
    REQUIRE(r.c_obs() == static_cast<std::size_t>(n - 1));
    REQUIRE(r.figures.at(0).k_obs == static_cast<std::size_t>(n));
    require_valid(m, r);
    // The table is right on every input (exhaustive certificate: |Σ|^|Free| = 128 <= 256).
    auto cert = analysis::certify(m, r);
    REQUIRE(cert.exhaustive);
    REQUIRE(cert.assignments == 128);
    // With a free budget, the greedy pins x_1 = 1 and the output depends on nothing.
    auto g = analysis::build_restriction(m, n);
    REQUIRE(g.rho_string(m.sigma) == "1******");
    REQUIRE(g.c_obs() == 0);
    require_valid(m, g);
}

TEST_CASE("growth inequality and counting identity", "[restriction]") {
    auto m = bundled("hard-parity-attempt");
    auto r = analysis::build_restriction(m, 64);
    const auto& f = r.figures.at(0);
    REQUIRE(f.c_prev == 1);
    REQUIRE(f.k_obs == 1);
    REQUIRE(f.max_dependency == 8);
    // |D_1(n)| = 8 <= c (1 + H |Σ|^c k_obs) = 1 (1 + 8 * 2 * 1) = 17
    REQUIRE(f.growth_holds);
    REQUIRE(f.growth_detail.find("<= 17") != std::string::npos);
    REQUIRE(f.counting_holds);
    REQUIRE(f.high_fan_out == 0);
}

TEST_CASE("bad arguments are rejected clearly", "[restriction]") {
    auto m = bundled("hard-first");
    REQUIRE_THROWS_AS(analysis::build_restriction(m, 1), std::invalid_argument);
    restriction_options o;
    o.free_fraction = 1;
    REQUIRE_THROWS_AS(analysis::build_restriction(m, 8, o), std::invalid_argument);
    REQUIRE_THROWS_WITH(analysis::run_language(m, 9, lang::language::dyck1),
                        Catch::Contains("does not contain the 1dyck symbol"));
}

TEST_CASE("the result does not depend on the number of threads", "[restriction]") {
    auto m = first_one_or_eos();
    restriction_options a, b;
    a.threads = 1;
    b.threads = 2;
    auto ra = analysis::build_restriction(m, 64, a);
    auto rb = analysis::build_restriction(m, 64, b);
    REQUIRE(ra.rho == rb.rho);
    REQUIRE(ra.dependency == rb.dependency);
    REQUIRE(ra.table == rb.table);
}

