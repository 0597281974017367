// The row analysis of the restriction builder (src/hard_limit/restriction_rows.cpp): the
// mixed-radix helpers of the dependency tables, and one row (i, h, z) of a hand-built layer 0 —
// its candidate set under the leftmost rule on exact ties, whether it is satisfied, the keys
// the greedy may pin, the scores it encloses and decides exactly, and the unsound rule of the
// negative control.
#include "hard_limit/restriction_rows.hpp"

#include "attention/common.hpp"
#include "hard_limit/restriction_internal.hpp"

#include "restriction_models.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <vector>

using namespace attnprop;
using namespace attnprop::analysis::detail;
using namespace attnprop::restriction_testing;

TEST_CASE("mixed-radix digits, projections and checked powers", "[restriction]") {
    const std::size_t s = 3;
    const std::vector<std::size_t> pw = {1, 3, 9, 27, 81};
    // w = 2 + 1*3 + 0*9 + 2*27 over positions {1, 4, 6, 9}.
    const std::size_t w = 2 + 3 + 2 * 27;
    CHECK(digit(w, 0, pw, s) == 2);
    CHECK(digit(w, 1, pw, s) == 1);
    CHECK(digit(w, 2, pw, s) == 0);
    CHECK(digit(w, 3, pw, s) == 2);
    const std::vector<std::size_t> super = {1, 4, 6, 9}, sub = {4, 9};
    CHECK(project(w, super, sub, pw, s) == 1 + 2 * 3);
    CHECK(positions_in(super, sub) == std::vector<std::size_t>{1, 3});
    CHECK(project_fast(w, positions_in(super, sub), pw, s) == 1 + 2 * 3);
    CHECK(project(w, super, {}, pw, s) == 0);
    CHECK(checked_power(2, 10, 1 << 20) == 1024);
    CHECK(checked_power(2, 30, 1000) == 1001); // above the cap: cap + 1
    CHECK(checked_power(0, 0, 5) == 1);
    CHECK(checked_power(7, 0, 5) == 1);
}

namespace {

/// Layer 0 of a model at length n with every input free: D_0(j) = {j} with one entry per
/// symbol, eos fixed; and the head_prep of head 0 of layer 1, as the builder makes them.
struct layer0 {
    model::model<rational> m;
    model::model<interval> mi;
    numeric::context ctx{53};
    std::size_t n, s;
    layer_data prev;
    head_prep hp;
    std::vector<std::size_t> pw;
    std::vector<std::vector<std::size_t>> occ;

    layer0(model::model<rational> given, long length)
        : m(std::move(given)), mi(model::to_scalar<interval>(m, ctx)),
          n(static_cast<std::size_t>(length)), s(m.sigma.symbols.size()) {
        pw = {1};
        for (int t = 0; t < 20; ++t) pw.push_back(pw.back() * s);
        prev.dep.assign(n, {});
        prev.y.assign(n, {});
        prev.yi.assign(n, {});
        prev.built.assign(n, true);
        occ.assign(n, {});
        for (std::size_t j = 0; j < n; ++j) {
            const long pos = static_cast<long>(j + 1);
            if (j + 1 == n) {
                prev.y[j].push_back(attention::initial_state(m, m.sigma.eos_index(), pos, length, ctx));
            } else {
                prev.dep[j] = {j};
                occ[j].push_back(j);
                for (std::size_t a = 0; a < s; ++a)
                    prev.y[j].push_back(attention::initial_state(m, static_cast<int>(a), pos, length, ctx));
            }
            for (const auto& v : prev.y[j]) prev.yi[j].push_back(model::convert<interval>(v, ctx));
        }
        const auto& head = m.layers[0].heads[0];
        hp.type = head_prep::kind::dot;
        hp.exact = &head;
        hp.filter = &mi.layers[0].heads[0];
        hp.off.assign(n + 1, 0);
        for (std::size_t j = 0; j < n; ++j) hp.off[j + 1] = hp.off[j] + prev.y[j].size();
        std::map<model::vec<rational>, std::uint32_t> ids;
        for (std::size_t j = 0; j < n; ++j)
            for (const auto& y : prev.y[j]) {
                auto [it, fresh] = ids.emplace(attention::key(head, y, ctx),
                                               static_cast<std::uint32_t>(ids.size()));
                if (fresh) {
                    hp.keys_exact.push_back(it->first);
                    hp.keys.push_back(model::convert<interval>(it->first, ctx));
                }
                hp.id.push_back(it->second);
            }
        hp.fast = numeric::dot_rows(head.score.K.out_dim());
        for (const auto& k : hp.keys) hp.fast.push_back(k.data());
    }

    row_analyser analyser() const { return row_analyser(prev, hp, ctx, n, s, pw, occ); }
};

} // namespace

TEST_CASE("a row with exact ties: every key left of p* that can reach G is a candidate",
          "[restriction]") {
    // first_one_or_eos scores key j by x_j (eos: 1); the eos query's row at n = 5.
    const layer0 l(first_one_or_eos(), 5);
    auto an = l.analyser();
    const std::vector<char> all(l.s, 1);
    const row_outcome o = an.analyse(4, 0, true, all, false);
    CHECK(o.satisfied); // eos attains G = 1 for every completion
    CHECK(o.cand == std::vector<std::uint32_t>{0, 1, 2, 3, 4});
    // Achievers: the keys left of p* = eos that reach G, each at its entry x_j = 1.
    REQUIRE(o.achievers.size() == 4);
    for (std::uint32_t j = 0; j < 4; ++j) {
        CHECK(o.achievers[j].key == j);
        CHECK(o.achievers[j].entries == std::vector<std::uint32_t>{1});
    }
    // Only '0' may be pinned: no key can be pinned to reach G.
    const std::vector<char> zero_only = {1, 0};
    CHECK(an.analyse(4, 0, true, zero_only, false).achievers.empty());
    // The scores: enclosures containing the exact values, which are x_j.
    CHECK(an.exact_score(4, 0, 1, 1) == 1);
    CHECK(an.exact_score(4, 0, 1, 0) == 0);
    const interval t = an.tight_score(4, 0, 2, 1);
    CHECK(t.lo() <= 1.0);
    CHECK(t.hi() >= 1.0);
    // The unsound rule of the negative control keeps p* alone.
    CHECK(an.analyse(4, 0, false, all, true).cand == std::vector<std::uint32_t>{4});
}

TEST_CASE("a row whose maximum is one fixed key has that key as its only candidate",
          "[restriction]") {
    // attend_three scores -(j - 3)^2: position 3 wins at every entry of every row.
    const layer0 l(attend_three(), 9);
    auto an = l.analyser();
    const std::vector<char> all(l.s, 1);
    for (std::size_t i : {0UL, 4UL, 8UL}) {
        const std::size_t entries = l.prev.y[i].size();
        for (std::size_t z = 0; z < entries; ++z) {
            const row_outcome o = an.analyse(i, z, true, all, false);
            CHECK(o.satisfied);
            CHECK(o.cand == std::vector<std::uint32_t>{2});
            CHECK(o.achievers.empty());
        }
    }
}
