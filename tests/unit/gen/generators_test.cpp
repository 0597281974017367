// The RapidCheck model generators: every generated model is valid and round-trips through the
// model-file writer; hard models evaluate exactly; dyadic models agree across double, MPFR and
// exact; soft models give small balls; exact ties are frequent; near ties fool doubles; and
// shrinking makes models smaller. Every sample and property runs from a fixed seed, printed
// with each failure.
#include "gen/generators.hpp"

#include "soft_influence/hypotheses.hpp"
#include "attention/hard.hpp"
#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using namespace attnprop;
using numeric::rational;
using exact_model = model::model<rational>;

namespace {

const numeric::context ctx{256};

/// What RapidCheck prints for a value it cannot show (split to avoid a trigraph).
const std::string unknown_placeholder = std::string("<??") + "?>";

/// `count` values of `g` from a fixed seed, at sizes cycling through 0 .. kNominalSize.
template <class T> std::vector<T> sample(const rc::Gen<T>& g, std::uint64_t seed, int count) {
    rc::Random random(seed);
    std::vector<T> out;
    for (int k = 0; k < count; ++k)
        out.push_back(g(random.split(), k % (rc::kNominalSize + 1)).value());
    return out;
}

/// One value of `g` at `size` from a fixed seed.
template <class T> T one(const rc::Gen<T>& g, std::uint64_t seed, int size = rc::kNominalSize) {
    return g(rc::Random(seed), size).value();
}

/// Ignores RapidCheck's progress events, so that deliberately failing properties print no
/// "reproduce" hint at exit.
class quiet_listener : public rc::detail::TestListener {
public:
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

/// Runs a property with a fixed seed and budget (never from RC_PARAMS) and returns the result.
template <class Testable>
rc::detail::TestResult run_property(const std::string& description, std::uint64_t seed,
                                    int max_success, Testable&& testable) {
    rc::detail::TestParams params;
    params.seed = seed;
    params.maxSuccess = max_success;
    params.maxSize = rc::kNominalSize;
    rc::detail::TestMetadata meta;
    meta.id = description;
    meta.description = description;
    quiet_listener listener;
    return rc::detail::checkTestable(std::forward<Testable>(testable), meta, params, listener);
}

/// Runs a property that must hold; a failure prints the seed and RapidCheck's report.
template <class Testable>
void require_property(const std::string& description, std::uint64_t seed, int max_success,
                      Testable&& testable) {
    const auto result = run_property(description, seed, max_success,
                                     std::forward<Testable>(testable));
    std::ostringstream report;
    rc::detail::printResultMessage(result, report);
    INFO(description << " (seed " << seed << "):\n" << report.str());
    REQUIRE(result.template is<rc::detail::SuccessResult>());
}

std::string show(const exact_model& m) { return rc::toString(m); }

std::size_t max_heads(const exact_model& m) {
    std::size_t h = 0;
    for (const auto& l : m.layers) h = std::max(h, l.heads.size());
    return h;
}

bool all_tokens_zero(const exact_model& m) {
    for (const auto& v : m.token)
        for (const auto& q : v)
            if (q != 0) return false;
    return true;
}

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

TEST_CASE("generated models round-trip through the model-file writer", "[gen]") {
    struct family {
        const char* name;
        rc::Gen<exact_model> gen;
        int count;
    };
    const std::vector<family> families = {
        {"hard_model", gen::hard_model(), 200},
        {"dyadic_hard_model", gen::dyadic_hard_model(), 150},
        {"soft_model", gen::soft_model(), 150},
        {"near_tie_hard_model", gen::near_tie_hard_model(), 50},
        {"hard_model (larger bounds)", gen::hard_model({3, 3, 4, 4}), 40},
        {"soft_model (no ln, no tanh, no gelu)", gen::soft_model({2, 2, 3, 2, false, false, false}), 40},
    };
    const std::uint64_t seed = 20240601;
    for (const auto& f : families) {
        const auto models = sample(f.gen, seed, f.count);
        for (std::size_t k = 0; k < models.size(); ++k) {
            const exact_model& m = models[k];
            INFO(f.name << " sample " << k << " (seed " << seed << "): " << show(m));
            const std::string text = model::write_model(m);
            const exact_model again = model::parse_model(text, "round-trip");
            REQUIRE(model::write_model(again) == text);
            REQUIRE(json::dump(model::model_to_json(again), -1) ==
                    json::dump(model::model_to_json(m), -1));
            REQUIRE(m.source == "attnprop generator");
            REQUIRE_FALSE(m.description.empty());
            REQUIRE(m.num_layers() >= 1);
            const bool hard = m.attention == model::attention_kind::hard;
            REQUIRE(m.name == (hard ? "generated-hard" : "generated-soft"));
            if (hard) {
                REQUIRE(model::exact_blockers(m).empty());
            } else {
                REQUIRE_FALSE(model::has_singular_layer_norm(m));
                REQUIRE(m.out.type == model::readout<rational>::kind::softmax);
                REQUIRE(m.out.symbols.size() >= 2);
                REQUIRE(m.out.symbols.size() <= 3);
            }
            REQUIRE(show(m).find(unknown_placeholder) == std::string::npos);
        }
    }
}

TEST_CASE("generators respect their bounds", "[gen]") {
    const gen::hard_bounds hb{2, 3, 2, 4};
    for (const auto& m : sample(gen::hard_model(hb), 7, 120)) {
        INFO(show(m));
        REQUIRE(m.num_layers() <= 2);
        REQUIRE(max_heads(m) <= 3);
        REQUIRE(m.d <= 2);
        REQUIRE(m.sigma.symbols.size() >= 2);
        REQUIRE(m.sigma.symbols.size() <= 4);
    }
    const gen::soft_bounds sb{1, 1, 2, 2, false, false, false};
    for (const auto& m : sample(gen::soft_model(sb), 8, 80)) {
        INFO(show(m));
        REQUIRE(m.num_layers() == 1);
        REQUIRE(max_heads(m) == 1);
        REQUIRE(m.d <= 2);
        const std::string cls = gen::model_class(m);
        REQUIRE(cls.find("tanh") == std::string::npos);
        REQUIRE(cls.find("gelu") == std::string::npos);
        REQUIRE(cls.find(" ln") == std::string::npos);
    }
}

TEST_CASE("the generated distribution covers every kind of map", "[gen]") {
    std::size_t graphs = 0, tables = 0, hashes = 0, mlps = 0, lns = 0, tanhs = 0, gelus = 0,
                sins = 0;
    for (const auto& m : sample(gen::hard_model(), 11, 200)) {
        const std::string c = gen::model_class(m);
        graphs += c.find("graph") != std::string::npos;
        tables += c.find("table") != std::string::npos;
        hashes += c.find("hash") != std::string::npos;
        mlps += c.find("mlp") != std::string::npos;
    }
    for (const auto& m : sample(gen::soft_model(), 12, 100)) {
        const std::string c = gen::model_class(m);
        lns += c.find(" ln") != std::string::npos;
        tanhs += c.find("tanh") != std::string::npos;
        gelus += c.find("gelu") != std::string::npos;
        sins += c.find("sin") != std::string::npos;
    }
    INFO("graph " << graphs << ", table " << tables << ", hash " << hashes << ", mlp " << mlps
                  << " of 200 hard; ln " << lns << ", tanh " << tanhs << ", gelu " << gelus
                  << ", sin " << sins
                  << " of 100 soft");
    REQUIRE(graphs >= 20);
    REQUIRE(tables >= 20);
    REQUIRE(hashes >= 20);
    REQUIRE(mlps >= 20);
    REQUIRE(lns >= 10);
    REQUIRE(tanhs >= 10);
    REQUIRE(gelus >= 5); // gelu is drawn last: rarer at the small sizes of the sample
    REQUIRE(sins >= 10);
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

TEST_CASE("soft models evaluate in Arb balls with small radii", "[gen]") {
    require_property("soft_forward<arb_ball> gives finite, tight balls", 303, 80, [] {
        const auto m = *gen::soft_model();
        const long n = *gen::length(32);
        const auto x = model::parse_input(m, *gen::input(m.sigma, n));
        const auto mb = model::to_scalar<numeric::arb_ball>(m, ctx);
        const auto out = attention::soft_forward(mb, x, ctx);
        RC_ASSERT(out.y.size() == m.d);
        for (const auto& v : out.y) {
            RC_ASSERT(numeric::is_finite(v));
            RC_ASSERT(numeric::radius_as_double(v) < 1e-40);
        }
        const auto p = attention::softmax(attention::readout_logits(mb.out, out.y, ctx), ctx);
        for (const auto& v : p) {
            RC_ASSERT(numeric::is_finite(v));
            RC_ASSERT(numeric::radius_as_double(v) < 1e-40);
        }
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

TEST_CASE("near-tie models make double attend to a different position", "[gen]") {
    const std::uint64_t seed = 505;
    for (const auto& m : sample(gen::near_tie_hard_model(), seed, 60)) {
        INFO("seed " << seed << ": " << show(m));
        std::string a;
        for (const auto& s : m.sigma.symbols) a += s;
        const auto dm = model::to_scalar<double>(m, ctx);
        bool differs = false;
        for (std::size_t len = 1; len <= 2 && !differs; ++len)
            for (const auto& w : lang::all_words(a, len)) {
                const auto x = model::parse_input(m, w);
                const auto exact = attention::hard_forward_exact(m, x, ctx, true);
                const auto dbl = attention::hard_forward(dm, x, ctx, true);
                if (exact.trace->choice != dbl.trace->choice) {
                    differs = true;
                    REQUIRE(numeric::exact_of(dbl.y[1]) != std::optional<rational>(exact.y[1]));
                    break;
                }
            }
        REQUIRE(differs);
    }
}

TEST_CASE("lengths and inputs", "[gen]") {
    const auto ns = sample(gen::length(1000), 606, 400);
    std::size_t ladder = 0;
    for (long n : ns) {
        REQUIRE(n >= 1);
        REQUIRE(n <= 1000);
        ladder += (n & (n - 1)) == 0;
    }
    REQUIRE(ladder * 10 >= ns.size() * 7);
    REQUIRE(ladder < ns.size());
    REQUIRE(one(gen::length(1000), 1, 0) == 1);

    const auto m = one(gen::hard_model(), 607);
    std::size_t counts[36] = {};
    for (const auto& w : sample(gen::input(m.sigma, 201), 608, 20)) {
        REQUIRE(w.size() == 200);
        for (char c : w) {
            const int k = m.sigma.index_of(std::string(1, c));
            REQUIRE(k >= 0);
            ++counts[k];
        }
    }
    // Uniform at every size: each symbol about 4000 / |Σ| times.
    for (std::size_t k = 0; k < m.sigma.symbols.size(); ++k)
        REQUIRE(counts[k] * m.sigma.symbols.size() * 2 > 4000);
    REQUIRE(one(gen::input(m.sigma, 1), 609).empty());

    for (auto l : lang::all_languages()) {
        for (const auto& w : sample(gen::language_input(l, m.sigma, 12), 610, 30)) {
            REQUIRE(w.size() == 11);
            for (char c : w) REQUIRE(m.sigma.index_of(std::string(1, c)) >= 0);
        }
    }
    // 1DYCK's balanced sampler, mapped onto {0, 1}: balanced words of 0s and 1s occur.
    const model::alphabet binary{{"0", "1"}, "$"};
    std::size_t balanced = 0;
    for (const auto& w : sample(gen::language_input(lang::language::dyck1, binary, 11), 611, 40)) {
        std::string brackets;
        for (char c : w) brackets += c == '0' ? '(' : ')';
        balanced += lang::member(lang::language::dyck1, brackets);
    }
    REQUIRE(balanced >= 10);
}

TEST_CASE("model_class and showValue", "[gen]") {
    const auto m = one(gen::near_tie_hard_model(), 1, 0);
    REQUIRE(gen::model_class(m) == "hard L1 H1 affine");
    const std::string shown = show(m);
    REQUIRE(shown.rfind("hard L1 H1 affine: {\"format\":\"attnprop-model\"", 0) == 0);
    const auto s = one(gen::soft_model(), 1, 0);
    REQUIRE(gen::model_class(s) == "soft L1 H1 relu");
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

TEST_CASE("soft_model_violating breaks its hypothesis, and x_1 keeps its influence at every n",
          "[gen][soft]") {
    const numeric::context ctx{128};
    for (auto h : {gen::violated_hypothesis::bounded_embeddings,
                   gen::violated_hypothesis::dot_product_scores,
                   gen::violated_hypothesis::lipschitz_updates}) {
        const std::string name = gen::to_string(h);
        for (std::uint64_t seed = 1; seed <= 10; ++seed) {
            const exact_model m =
                gen::soft_model_violating(h)(rc::Random(seed), static_cast<int>(seed * 10)).value();
            INFO(name << ", seed " << seed << "\n" << model::write_model(m));
            REQUIRE(m.name == "violating-" + name);
            bool named = false;
            for (const auto& r : analysis::check_hypotheses(m)) {
                if (r.name == name) {
                    named = true;
                    REQUIRE(certainly(!r.holds));
                }
                // The other families keep dot-product scores and linear values.
                if ((r.name == "dot-product-scores" && h != gen::violated_hypothesis::dot_product_scores) ||
                    r.name == "linear-values")
                    REQUIRE(certainly(r.holds));
            }
            REQUIRE(named);
            // Flipping x_1 moves y_n by at least 0.1 at n = 8 and at n = 256.
            const auto mm = model::to_scalar<numeric::mpfr_real>(m, ctx);
            for (long n : {8L, 256L}) {
                model::input_sequence x(static_cast<std::size_t>(n), 0);
                for (long j = 0; j + 1 < n; ++j) x[static_cast<std::size_t>(j)] = (j * 7 + seed) % 3 == 0;
                x.back() = m.sigma.eos_index();
                auto flipped = x;
                flipped[0] = 1 - flipped[0];
                const auto a = attention::soft_forward(mm, x, ctx).y;
                const auto b = attention::soft_forward(mm, flipped, ctx).y;
                double change = 0;
                for (std::size_t c = 0; c < a.size(); ++c)
                    change = std::max(change, std::fabs(numeric::to_double(a[c] - b[c])));
                INFO("n " << n << ": change " << change);
                REQUIRE(change >= 0.1);
            }
        }
    }
}
