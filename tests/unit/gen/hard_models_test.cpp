// The hard and dyadic model generators (src/gen/hard_models.cpp): bounds, coverage of map
// kinds, table keys that hit, exact evaluation, dyadic agreement across scalars, frequent exact
// ties and shrinking. Every sample and property runs from a fixed seed, printed with each
// failure.
#include "gen/generators.hpp"

#include "attention/hard.hpp"
#include "attention/hard_exact.hpp"
#include "lang/languages.hpp"
#include "model/json.hpp"
#include "gen_testing.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace attnprop;
using namespace attnprop::gen_testing;

namespace {

/// Whether some (layer, head, row) of a hard model's exact pass on x has its maximal score
/// attained more than once (heads with constant scores are not counted: every key ties there).
bool has_exact_tie(const exact_model& m, const model::input_sequence& x) {
    const auto out = attention::hard_forward(m, x, ctx, true);
    const auto& tr = *out.trace;
    for (std::size_t k = 0; k < m.layers.size(); ++k) {
        const auto& ys = tr.y[k];
        for (const auto& h : m.layers[k].heads) {
            if (attention::constant_scores(h)) continue;
            const bool dot = h.score.type == model::score_spec<rational>::kind::dot;
            std::vector<model::vec<rational>> keys;
            if (dot)
                for (const auto& yj : ys) keys.push_back(attention::key(h, yj, ctx));
            for (const auto& yi : ys) {
                const auto s = attention::hard_scores(h, yi, dot ? keys : ys, dot, ctx);
                const auto best = *std::max_element(s.begin(), s.end());
                if (std::count(s.begin(), s.end(), best) > 1) return true;
            }
        }
    }
    return false;
}


} // namespace

TEST_CASE("hard generators respect their bounds", "[gen]") {
    const gen::hard_bounds hb{2, 3, 2, 4};
    for (const auto& m : sample(gen::hard_model(hb), 7, 120)) {
        INFO(show(m));
        REQUIRE(m.num_layers() <= 2);
        REQUIRE(max_heads(m) <= 3);
        REQUIRE(m.d <= 2);
        REQUIRE(m.sigma.symbols.size() >= 2);
        REQUIRE(m.sigma.symbols.size() <= 4);
    }
    gen::hard_bounds keyed = hb;
    keyed.allow_exact_keyed_maps = false;
    for (const auto& m : sample(gen::hard_model(keyed), 9, 120)) {
        INFO(show(m));
        const std::string cls = gen::model_class(m);
        REQUIRE(cls.find("table") == std::string::npos);
        REQUIRE(cls.find("hash") == std::string::npos);
    }
}

TEST_CASE("the hard distribution covers every kind of map", "[gen]") {
    std::size_t graphs = 0, tables = 0, hashes = 0, mlps = 0;
    for (const auto& m : sample(gen::hard_model(), 11, 200)) {
        const std::string c = gen::model_class(m);
        graphs += c.find("graph") != std::string::npos;
        tables += c.find("table") != std::string::npos;
        hashes += c.find("hash") != std::string::npos;
        mlps += c.find("mlp") != std::string::npos;
    }
    INFO("graph " << graphs << ", table " << tables << ", hash " << hashes << ", mlp " << mlps
                  << " of 200 hard (seed 11)");
    REQUIRE(graphs >= 20);
    REQUIRE(tables >= 20);
    REQUIRE(hashes >= 20);
    REQUIRE(mlps >= 20);
}

TEST_CASE("table keys are taken from reachable values, so lookups hit", "[gen]") {
    // Over many hard models with a table update, some probe input must hit a table entry: the
    // keys are the update's real inputs on short probes, so an input of length <= 2 hits.
    std::size_t with_table = 0, hit = 0;
    for (const auto& m : sample(gen::hard_model(), 13, 150)) {
        bool table = false, found = false;
        for (const auto& l : m.layers) table = table || l.update.impl.index() == 3;
        if (!table) continue;
        ++with_table;
        for (std::size_t len = 0; len <= 2 && !found; ++len)
            for (const auto& w : lang::all_words(
                     [&] {
                         std::string a;
                         for (const auto& s : m.sigma.symbols) a += s;
                         return a;
                     }(),
                     len)) {
                const auto x = model::parse_input(m, w);
                const auto tr = *attention::hard_forward(m, x, ctx, true).trace;
                for (std::size_t k = 0; k < m.layers.size() && !found; ++k) {
                    const auto* t = std::get_if<model::table_map>(&m.layers[k].update.impl);
                    if (!t) continue;
                    for (std::size_t j = 0; j < x.size() && !found; ++j) {
                        auto key = tr.y[k][j];
                        for (std::size_t h = 0; h < m.layers[k].heads.size(); ++h) {
                            const auto b = attention::value(m.layers[k].heads[h],
                                                            tr.y[k][tr.choice[k][j][h]], ctx);
                            key.insert(key.end(), b.begin(), b.end());
                        }
                        found = t->entries.count(key) > 0;
                    }
                }
                if (found) break;
            }
        hit += found;
    }
    INFO(hit << " of " << with_table << " models with a table update hit an entry");
    REQUIRE(with_table >= 15);
    REQUIRE(hit * 10 >= with_table * 8);
}

TEST_CASE("hard models evaluate exactly on random inputs", "[gen]") {
    require_property("hard_forward_exact evaluates every generated hard model", 101, 150, [] {
        const auto m = *gen::hard_model();
        const long n = *gen::length(64);
        const auto x = model::parse_input(m, *gen::input(m.sigma, n));
        RC_ASSERT(static_cast<long>(x.size()) == n);
        const auto exact = attention::hard_forward_exact(m, x, ctx);
        RC_ASSERT(exact.y.size() == m.d);
        RC_ASSERT(attention::hard_forward(m, x, ctx).y == exact.y);
    });
}

TEST_CASE("dyadic models agree exactly in double, MPFR and exact arithmetic", "[gen]") {
    // "" when double (and MPFR) give exactly the exact y_n^(L), else the first difference.
    auto disagreement = [](const exact_model& m, const model::input_sequence& x,
                           bool with_mpfr) -> std::string {
        const auto exact = attention::hard_forward_exact(m, x, ctx).y;
        const auto yd = attention::hard_forward(model::to_scalar<double>(m, ctx), x, ctx).y;
        for (std::size_t c = 0; c < exact.size(); ++c)
            if (c >= yd.size() || numeric::exact_of(yd[c]) != std::optional<rational>(exact[c]))
                return "double differs at coordinate " + std::to_string(c);
        if (!with_mpfr) return "";
        const auto mm = model::to_scalar<numeric::mpfr_real>(m, ctx);
        const auto ym = attention::hard_forward(mm, x, ctx).y;
        for (std::size_t c = 0; c < exact.size(); ++c)
            if (c >= ym.size() || numeric::exact_of(ym[c]) != std::optional<rational>(exact[c]))
                return "MPFR differs at coordinate " + std::to_string(c);
        return "";
    };
    require_property("dyadic models: double = MPFR = exact", 202, 120, [&] {
        const auto m = *gen::dyadic_hard_model();
        const long n = *gen::length(128);
        RC_ASSERT(disagreement(m, model::parse_input(m, *gen::input(m.sigma, n)), true) == "");
    });
    // n = 4096, where positional coordinates reach 2 * 4096, with one-layer models (only the
    // last row is computed, so this stays fast; two layers at this n take seconds exactly).
    require_property("one-layer dyadic models at n = 4096: double = exact", 203, 8, [&] {
        const auto m = *gen::dyadic_hard_model({1, 2, 3, 3});
        RC_ASSERT(disagreement(m, model::parse_input(m, *gen::input(m.sigma, 4096)), false) == "");
    });
}

TEST_CASE("exact ties occur in a good fraction of hard models", "[gen]") {
    const std::uint64_t seed = 404;
    const auto models = sample(gen::hard_model(), seed, 200);
    rc::Random random(seed + 1);
    std::size_t tied = 0;
    for (const auto& m : models) {
        const long n = 4 + static_cast<long>(random.next() % 13);
        const auto x = model::parse_input(m, one(gen::input(m.sigma, n), random.next()));
        tied += has_exact_tie(m, x);
    }
    INFO(tied << " of " << models.size() << " hard models have an exact tie (seed " << seed
              << ")");
    REQUIRE(tied * 4 >= models.size());
}

TEST_CASE("shrinking makes models smaller", "[gen]") {
    SECTION("a property failing on every model shrinks to the smallest model") {
        exact_model last;
        const auto result = run_property("model has no layer", 707, 100, [&] {
            const auto m = *gen::hard_model();
            last = m;
            RC_ASSERT(m.num_layers() == 0u);
        });
        REQUIRE(result.is<rc::detail::FailureResult>());
        const auto& failure = result.get<rc::detail::FailureResult>();
        REQUIRE(failure.counterExample.size() == 1);
        const std::string& shown = failure.counterExample.front().second;
        INFO("seed 707, counterexample: " << shown);
        REQUIRE(shown.rfind("hard L1 H1 affine: {", 0) == 0);
        REQUIRE(shown.find(unknown_placeholder) == std::string::npos);
        const exact_model m =
            model::parse_model(shown.substr(shown.find('{')), "counterexample");
        REQUIRE(m.num_layers() == 1);
        REQUIRE(max_heads(m) == 1);
        REQUIRE(m.d == 1);
        REQUIRE(model::write_model(m) == model::write_model(last));
    }
    SECTION("a large model shrinks to a 1-layer, 1-head, d = 1 model with zero coefficients") {
        // Find a full-size sample with two layers, two heads somewhere and d >= 2.
        std::uint64_t seed = 800;
        rc::Shrinkable<exact_model> big = gen::hard_model()(rc::Random(seed), rc::kNominalSize);
        auto is_big = [](const exact_model& m) {
            return m.num_layers() == 2 && max_heads(m) == 2 && m.d >= 2;
        };
        while (!is_big(big.value())) big = gen::hard_model()(rc::Random(++seed), rc::kNominalSize);
        INFO("seed " << seed << ": " << show(big.value()));
        const auto [small, steps] = rc::shrinkable::findLocalMin(
            big, [](const exact_model& m) { return m.num_layers() >= 1; });
        INFO("after " << steps << " shrink steps: " << show(small));
        REQUIRE(steps > 0);
        REQUIRE(small.num_layers() == 1);
        REQUIRE(max_heads(small) == 1);
        REQUIRE(small.d == 1);
        REQUIRE(small.sigma.symbols.size() == 2);
        REQUIRE(all_tokens_zero(small));
        REQUIRE(gen::model_class(small) == "hard L1 H1 affine");
        REQUIRE(model::write_model(small).size() < model::write_model(big.value()).size());
    }
    SECTION("a property failing on two-layer models keeps two layers and shrinks the rest") {
        exact_model last;
        const auto result = run_property("model has at most one layer", 708, 100, [&] {
            const auto m = *gen::hard_model();
            if (m.num_layers() >= 2) last = m;
            RC_ASSERT(m.num_layers() <= 1u);
        });
        REQUIRE(result.is<rc::detail::FailureResult>());
        INFO("seed 708, shrunk to: " << show(last));
        REQUIRE(last.num_layers() == 2);
        REQUIRE(max_heads(last) == 1);
        REQUIRE(last.d == 1);
        REQUIRE(all_tokens_zero(last));
    }
}
