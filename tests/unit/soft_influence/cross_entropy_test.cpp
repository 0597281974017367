// The cross-entropy corollary: over the whole cube on a closed-form case (FIRST with layer norm
// eps = 0), equal to its floor, below its floor with eta divided (the negative control), and on
// 2DYCK forced-bracket pairs. Seeds are fixed and printed on failure.
#include "soft_influence/cross_entropy.hpp"
#include "soft_influence/sweep.hpp"
#include "model/model_file.hpp"
#include "sweep_fixtures.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

using namespace attnprop;

namespace {

using test::bundled;
using test::small;

/// models/soft-recency-2dyck.json: a next-closing-bracket predictor that satisfies every
/// hypothesis (eos attends with score 8 i/n; value [x_j = (] - [x_j = [] into the logit of ")").
model::model<numeric::rational> recency_dyck2() { return bundled("soft-recency-2dyck"); }

/// The unmatched openers of a bracket prefix (type 0 for "(", 1 for "["), or nullopt when a
/// closer does not match.
std::optional<std::vector<int>> open_stack(const model::model<numeric::rational>& m,
                                           const model::input_sequence& x) {
    std::vector<int> st;
    for (std::size_t t = 0; t + 1 < x.size(); ++t) {
        const std::string& s = m.sigma.symbols[static_cast<std::size_t>(x[t])];
        if (s == "(" || s == "[") st.push_back(s == "[" ? 1 : 0);
        else if (st.empty() || st.back() != (s == "]" ? 1 : 0)) return std::nullopt;
        else st.pop_back();
    }
    return st;
}

} // namespace

TEST_CASE("cross-entropy of FIRST with layer norm eps = 0 is log2(1 + e^-sqrt 6)", "[sweep]") {
    // z = ±sqrt(6) for every input (theory.md §8), so p(label) = 1/(1 + e^{-sqrt 6}) on every
    // input: CE = log2(1 + e^{-sqrt 6}) = 0.119473 bits, accuracy 1, and flipping bit 1 moves
    // p by 2/(1 + e^{-sqrt 6}) - 1 = tanh(sqrt(6)/2) = eta.
    const auto m = bundled("cc-first-ln0");
    const auto c = analysis::cube_cross_entropy(m, 5, lang::language::first, {128});
    const double ce = std::log2(1 + std::exp(-std::sqrt(6.0)));
    const double eta = std::tanh(std::sqrt(6.0) / 2);
    REQUIRE(c.cube == 16);
    REQUIRE(c.correct == 16);
    REQUIRE(std::abs(numeric::approx_double(c.ce_bits) - ce) < 1e-9);
    REQUIRE(std::abs(numeric::approx_double(c.eta) - eta) < 1e-9);
    REQUIRE(std::abs(numeric::approx_double(c.floor_bits) - (1 - std::log2(1 + eta))) < 1e-9);
    // Every input has the same confidence, so the inequality is tight: CE = -log2 p =
    // 1 - log2(1 + eta) exactly, and the balls overlap (never "less").
    REQUIRE(c.ce_vs_floor == numeric::order::unknown);
    REQUIRE(std::abs(numeric::approx_double(c.ce_bits) - numeric::approx_double(c.floor_bits)) < 1e-30);
    REQUIRE(c.flipped_bit == 1);
}

TEST_CASE("the cross-entropy corollary: CE above its floor holds, equal is undecided without "
          "changing the verdict", "[sweep]") {
    // cc-parity at n = 8 has the same margin on every input, so CE = 1 - log2(1 + eta)
    // exactly (undecided at any precision); at n = 13 CE is above its floor. Neither is a
    // failure and the influence verdict stays "holds".
    auto o = small({8, 13}, 7);
    o.language = lang::language::parity;
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("cc-parity"), o);
    INFO(r.explanation);
    REQUIRE(r.rows[0].cross_entropy->exhaustive);
    REQUIRE(r.rows[0].cross_entropy->check == verdict::undecided);
    REQUIRE(r.rows[1].cross_entropy->exhaustive);
    REQUIRE(r.rows[1].cross_entropy->check == verdict::passed);
    REQUIRE(r.verdict == verdict::passed);
    REQUIRE(r.explanation.find("the cross-entropy corollary is undecided at n = 8") != std::string::npos);
}

TEST_CASE("negative control: eta divided by 4 puts the confident eps = 0 model below its "
          "cross-entropy floor", "[sweep]") {
    auto o = small({8}, 7);
    o.language = lang::language::parity;
    o.bound_divisor = 4;
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("cc-parity-ln0"), o);
    INFO(r.explanation);
    REQUIRE(r.rows[0].cross_entropy->check == verdict::failed);
    REQUIRE(r.verdict == verdict::failed);
}

TEST_CASE("2DYCK forced-bracket pairs: unbalanced prefixes one opener flip apart", "[sweep]") {
    const auto m = recency_dyck2();
    for (long n : {2L, 3L, 8L, 33L, 200L})
        for (std::size_t k = 0; k < 20; ++k) {
            const auto fp = analysis::forced_pair(m, n, k, 5);
            INFO("n " << n << " k " << k << ": " << model::format_input(m.sigma, fp.x));
            REQUIRE(fp.x.size() == static_cast<std::size_t>(n));
            REQUIRE(fp.x.back() == m.sigma.eos_index());
            const auto sx = open_stack(m, fp.x), sy = open_stack(m, fp.y);
            REQUIRE(sx);
            REQUIRE(sy);
            REQUIRE(!sx->empty());
            REQUIRE(sx->back() == fp.label_x);
            REQUIRE(sy->back() == fp.label_y);
            REQUIRE(fp.label_x != fp.label_y);
            std::size_t diff = 0;
            for (std::size_t t = 0; t < fp.x.size(); ++t) diff += fp.x[t] != fp.y[t];
            REQUIRE(diff == 1);
            REQUIRE(fp.x[fp.position] != fp.y[fp.position]);
        }
    REQUIRE_THROWS_AS(analysis::forced_pair(bundled("cc-parity"), 8, 0, 5), std::invalid_argument);
}

TEST_CASE("the 2DYCK cross-entropy corollary on forced-bracket pairs holds, and fails with eta "
          "divided (negative control)", "[sweep]") {
    auto o = small({8, 16, 32}, 3);
    o.inputs = 6;
    o.language = lang::language::dyck2;
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(recency_dyck2(), o);
    INFO(r.explanation);
    for (const auto& row : r.rows) {
        INFO("n " << row.n);
        REQUIRE(row.cross_entropy);
        REQUIRE(row.cross_entropy->language == lang::language::dyck2);
        REQUIRE_FALSE(row.cross_entropy->exhaustive);
        REQUIRE(row.cross_entropy->inputs == 12);
        REQUIRE(row.cross_entropy->check == verdict::passed);
    }
    REQUIRE(r.verdict != verdict::failed);
    // The predictor does better than chance on the pairs (the top opener is often recent), so
    // with eta / 10^6 its cross-entropy is below the floor.
    o.bound_divisor = 1000000;
    const auto bad = analysis::influence_sweep(recency_dyck2(), o);
    INFO(bad.explanation);
    bool below_floor = false;
    for (const auto& row : bad.rows)
        below_floor = below_floor || row.cross_entropy->check == verdict::failed;
    REQUIRE(below_floor);
    REQUIRE(bad.verdict == verdict::failed);
    REQUIRE(bad.explanation.find("2DYCK forced-bracket pairs") != std::string::npos);
}
