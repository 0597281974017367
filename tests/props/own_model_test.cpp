// check --model: properties run with one model fixed (applicability, the spread of n, negative
// controls on a given model, counterexample folders that replay), and the worst-case search
// (reproducible, exhaustive on small cubes, and finding planted rare inputs that uniform
// sampling misses).
#include "soft_influence/bounds.hpp"
#include "soft_influence/influence.hpp"
#include "soft_influence/sweep.hpp"
#include "soft_influence/worst_case.hpp"
#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "gen/generators.hpp"
#include "lang/languages.hpp"
#include "model/model_file.hpp"
#include "props/hard_limit.hpp"
#include "props/semantics.hpp"
#include "props/soft_influence.hpp"
#include "runner/check_report.hpp"
#include "runner/replay.hpp"
#include "runner/runner.hpp"
#include "support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <memory>

using namespace attnprop;
using numeric::rational;

namespace {

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

const runner::registry& all_properties() {
    static const runner::registry reg = [] {
        runner::registry r;
        runner::register_all(r);
        return r;
    }();
    return reg;
}

runner::run_config fixed(const model::model<rational>& m, int tests = 30, long max_n = 64) {
    auto cfg = test::budget(tests, max_n);
    cfg.fixed_model = std::make_shared<const model::model<rational>>(m);
    return cfg;
}

std::vector<std::string> applicable_to(const model::model<rational>& m) {
    std::vector<std::string> out;
    for (const auto& p : all_properties().all())
        if (!p.expected_to_fail && !runner::not_applicable(p, m)) out.push_back(p.suite + "/" + p.name);
    return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

/// The largest one-symbol change (double) over `inputs` uniform inputs at n, every position
/// and replacement: plain sampling, as the influence sweep does.
double uniform_max(const model::model<rational>& m, long n, std::size_t inputs, std::uint64_t seed) {
    const numeric::context ctx{53};
    const auto md = model::to_scalar<double>(m, ctx);
    double best = 0;
    for (std::size_t k = 0; k < inputs; ++k) {
        const auto x = analysis::sweep_input(m, n, k, seed, std::nullopt);
        for (const auto& pr : analysis::influence_profile_of(md, m, x, ctx).pairs)
            best = std::max(best, pr.dy);
    }
    return best;
}

} // namespace

TEST_CASE("check --model: applicability follows attention kind, alphabet, readout and hypotheses",
          "[props][own-model]") {
    const auto hard = applicable_to(bundled("hard-parity-attempt"));
    CHECK(has(hard, "semantics/hard-filter-equals-exact"));
    CHECK(has(hard, "semantics/double-matches-exact"));
    CHECK(has(hard, "hard-limit/certificate-valid"));
    CHECK(has(hard, "hard-limit/parity-half"));
    CHECK_FALSE(has(hard, "soft-influence/influence-below-bounds"));
    CHECK_FALSE(has(hard, "semantics/hard-dyadic-kinds-agree"));
    const auto* p = all_properties().find("soft-influence/influence-below-bounds");
    const auto why = runner::not_applicable(*p, bundled("hard-first"));
    REQUIRE(why);
    CHECK(why->find("soft-attention") != std::string::npos);

    // Layer norm with eps = 0: no claim by Lemma 5, and the reason names the hypothesis.
    const auto ln0 = bundled("soft-majority-ln0");
    const auto why0 = runner::not_applicable(*p, ln0);
    REQUIRE(why0);
    CHECK(why0->find("lipschitz-updates") != std::string::npos);
    CHECK(has(applicable_to(ln0), "semantics/soft-kinds-agree"));
    CHECK(has(applicable_to(ln0), "soft-influence/cross-entropy-above-chance"));

    const auto ln5 = applicable_to(bundled("cc-first-ln5"));
    CHECK(has(ln5, "soft-influence/influence-below-bounds"));
    CHECK(has(ln5, "soft-influence/influence-vanishes"));
    CHECK_FALSE(has(ln5, "soft-influence/forced-bracket-cross-entropy"));
    CHECK(has(applicable_to(bundled("soft-recency-2dyck")), "soft-influence/forced-bracket-cross-entropy"));
}

TEST_CASE("check --model: n is spread log-uniformly up to --max-n, and failures shrink n",
          "[props][own-model]") {
    const auto m = bundled("hard-first");
    const auto cfg = fixed(m, 200, 4096);
    const auto* p = all_properties().find("semantics/hard-filter-equals-exact");
    const auto gen = p->generator(cfg);
    int small = 0, large = 0;
    for (int k = 0; k < 200; ++k) {
        const auto c = gen(rc::Random(static_cast<std::uint64_t>(k) + 1), 50).value();
        REQUIRE(write_model(c.model) == write_model(m)); // the model never changes
        const long n = static_cast<long>(c.inputs.front().size()) + 1;
        REQUIRE(n >= 1);
        REQUIRE(n <= 4096);
        small += n <= 64 ? 1 : 0;
        large += n > 512 ? 1 : 0;
    }
    // log-uniform over [1, 4096]: P(n <= 64) = 1/2, P(n > 512) = 1/4.
    INFO("n <= 64: " << small << ", n > 512: " << large);
    CHECK(small > 70);
    CHECK(small < 130);
    CHECK(large > 25);
}

TEST_CASE("check --model: negative controls fail on a given model, shrink and replay",
          "[props][own-model][negative]") {
    SECTION("double selects another position on a near-tie model") {
        const auto m = gen::near_tie_hard_model()(rc::Random(7), 10).value();
        const auto p = props::double_matches_exact();
        const auto cfg = fixed(m, 100, 256);
        auto r = test::require_fails(p, cfg);
        // Shrunk towards the shortest input (an input of length 2 already shows it; a shorter
        // n draws a new input, which need not fail).
        CHECK(r.cx->shrunk.value.inputs.front().size() <= r.cx->original.value.inputs.front().size());
        CHECK(r.cx->shrunk.value.inputs.front().size() <= 4);
        auto dir = std::filesystem::temp_directory_path() / "attnprop-own-model-double";
        std::filesystem::remove_all(dir);
        runner::check_run run;
        run.cfg = cfg;
        run.suites = {p.suite};
        run.reports = {r};
        run.model_name = m.name;
        run.model_file = "near-tie.json";
        runner::write_check_report(dir, run);
        auto rec = runner::read_counterexample(dir / "counterexamples" / runner::counterexample_folder(r));
        REQUIRE(rec.folder.seal == report::seal_status::intact);
        const auto* registered = all_properties().find("semantics/double-matches-exact");
        REQUIRE(registered != nullptr);
        REQUIRE_NOTHROW(runner::check_case(*registered, rec));
        auto again = runner::replay_case(*registered, rec.value, rec.cfg);
        REQUIRE(again.status() == runner::verdict::violated);
        CHECK(runner::compare_with_record(rec.folder.record, again).reproduced);
        std::filesystem::remove_all(dir);
    }
    SECTION("a filtered exact path that breaks ties to the right, on hard-first") {
        auto broken = [](const model::model<rational>& m, const model::input_sequence& x,
                         const numeric::context& ctx, bool trace) {
            auto r = attention::hard_forward_exact(m, x, ctx, trace);
            if (!r.y.empty()) r.y[0] += rational(1, 1000); // a wrong value
            return r;
        };
        test::require_fails(props::hard_filter_equals_exact(broken), fixed(bundled("hard-first")));
    }
    SECTION("a too small a-posteriori bound, on cc-first-ln5 (the search finds the pair)") {
        auto tiny = [](const model::model<rational>& m, const attention::soft_trace<numeric::arb_ball>& a,
                       const attention::soft_trace<numeric::arb_ball>& b, std::size_t i,
                       const numeric::context& ctx) {
            const auto n = static_cast<long>(a.y.front().size());
            return analysis::posterior_bound(m, a, b, i, ctx) /
                   numeric::from_int<numeric::arb_ball>(n * n, ctx);
        };
        auto cfg = fixed(bundled("cc-first-ln5"), 20, 64);
        cfg.search_budget = 4;
        auto r = test::require_fails(props::influence_below_bounds(tiny), cfg);
        CHECK(r.cx->shrunk.value.params.count("search_budget") == 1);
    }
    SECTION("the cross-entropy floor with eta / 4, on cc-parity-ln0") {
        test::require_fails(props::cross_entropy_above_chance(4), fixed(bundled("cc-parity-ln0"), 20, 13));
    }
}

TEST_CASE("check --model: each applicable property's negative control fails on a bundled model",
          "[props][own-model][negative]") {
    SECTION("trace-last-row: a readout from position 1, on a generated hard model") {
        // (The bundled hard models compute the same final state at every row.)
        test::require_fails(props::trace_last_row([](const model::model<rational>& m,
                                                      const model::input_sequence& x,
                                                      const numeric::context& ctx, bool) {
                                auto r = attention::hard_forward_exact(m, x, ctx, true);
                                r.y = r.trace->y.back().front();
                                return r;
                            }),
                            fixed(gen::hard_model()(rc::Random(11), 30).value()));
    }
    SECTION("soft-kinds-agree: a ball softmax without radius, on cc-first-ln5") {
        test::require_fails(props::soft_kinds_agree([](const model::model<numeric::arb_ball>& m,
                                                        const model::input_sequence& x,
                                                        const numeric::context& ctx,
                                                        attention::soft_options o) {
                                auto r = attention::soft_forward(m, x, ctx, o);
                                for (auto& v : r.y) v = numeric::representative(v);
                                return r;
                            }),
                            fixed(bundled("cc-first-ln5")));
    }
    SECTION("free-fraction: a builder miscounting its free inputs, on hard-parity-attempt") {
        test::require_fails(props::free_fraction([](const model::model<rational>& m, long n,
                                                    const analysis::restriction_options& o) {
                                auto r = analysis::build_restriction(m, n, o);
                                r.free_count += 1;
                                return r;
                            }),
                            fixed(bundled("hard-parity-attempt")));
    }
    SECTION("parity-pair: a pair flipping a dependency position, on hard-parity-attempt") {
        test::require_fails(
            props::parity_pair([](const model::model<rational>& m, const analysis::restriction& r) {
                analysis::language_options lo;
                lo.samples = 2;
                auto res = analysis::analyse_language(m, r, lang::language::parity, lo);
                if (res.verdict != analysis::language_verdict::counterexample || r.dependency.empty())
                    return res;
                std::string& w = res.inputs[1];
                w = res.inputs[0];
                const std::size_t b = r.dependency.front();
                w[b] = w[b] == '0' ? '1' : '0';
                return res;
            }),
            fixed(bundled("hard-parity-attempt")));
    }
    SECTION("influence-vanishes: the a-posteriori bound divided by n^2, on cc-first-ln5") {
        const props::bound_adjust_fn shrink = [](const numeric::arb_ball& b, std::size_t n,
                                                 const numeric::context& ctx) {
            return b / numeric::from_int<numeric::arb_ball>(static_cast<long>(n * n), ctx);
        };
        test::require_fails(props::influence_vanishes(props::vanishing_slope_tolerance, true, {}, shrink),
                            fixed(bundled("cc-first-ln5"), 5, 64));
    }
    SECTION("forced-bracket-cross-entropy: eta / 10^6, on soft-recency-2dyck") {
        test::require_fails(props::forced_bracket_cross_entropy(1000000),
                            fixed(bundled("soft-recency-2dyck"), 30, 16));
    }
}

TEST_CASE("check --model: the theorems hold on bundled models that satisfy their hypotheses",
          "[props][own-model]") {
    auto cfg = fixed(bundled("cc-first-ln5"), 8, 64);
    cfg.search_budget = 4;
    test::require_holds(props::influence_below_bounds(), cfg);
    // On the FIRST models no position but the first moves p, an exact zero that enclosures do
    // not prove (undecided); PARITY moves p at every position.
    auto parity = fixed(bundled("cc-parity-ln5"), 8, 64);
    parity.search_budget = 4;
    test::require_holds(props::prob_change_below_bound(), parity);
}

TEST_CASE("check --model: every generated case has its property's shape and the given model",
          "[props][own-model][replay]") {
    for (const char* name : {"hard-parity-attempt", "cc-first-ln5", "soft-recency-2dyck", "cc-parity-ln0",
                             "average-ones-mean"}) {
        const auto m = bundled(name);
        const auto given = write_model(m);
        auto cfg = fixed(m, 100, 256);
        cfg.search_budget = 8;
        for (const auto& p : all_properties().all()) {
            if (p.expected_to_fail || runner::not_applicable(p, m)) continue;
            const auto gen = rc::gen::resize(100, p.generator(cfg));
            for (int k = 0; k < 8; ++k) {
                const auto c = gen(rc::Random(static_cast<std::uint64_t>(k) + 1), 100).value();
                const auto problem = runner::validate_case(p, c);
                INFO(name << ": " << p.suite << "/" << p.name << ", generator seed " << k + 1 << ": "
                          << (problem ? problem->pointer + ": " + problem->message : ""));
                CHECK_FALSE(problem);
                CHECK(write_model(c.model) == given); // no generated model among the cases
            }
        }
    }
}

TEST_CASE("worst-case search: reproducible from its seed, exhaustive on small cubes",
          "[search]") {
    const auto m = bundled("cc-first-ln5");
    analysis::search_options o;
    o.budget = 40;
    o.seed = 11;
    const auto a = analysis::worst_case_search(m, 24, o);
    const auto b = analysis::worst_case_search(m, 24, o);
    REQUIRE(a.found);
    CHECK(a.input == b.input);
    CHECK(a.position == b.position);
    CHECK(a.replacement == b.replacement);
    CHECK(a.found_at == b.found_at);
    CHECK(a.value == b.value);
    CHECK_FALSE(a.exhaustive);
    CHECK(a.evaluations == 40);

    // |Σ|^(n-1) = 2^6 = 64 <= 64: every input, so the result is the maximum; it is the largest
    // change of a brute-force enumeration.
    o.budget = 64;
    const auto e = analysis::worst_case_search(m, 7, o);
    REQUIRE(e.exhaustive);
    CHECK(e.evaluations == 64);
    const numeric::context ctx{53};
    const auto md = model::to_scalar<double>(m, ctx);
    double brute = 0;
    for (int k = 0; k < 64; ++k) {
        model::input_sequence x(7);
        for (int i = 0; i < 6; ++i) x[static_cast<std::size_t>(i)] = (k >> i) & 1;
        x[6] = m.sigma.eos_index();
        for (const auto& pr : analysis::influence_profile_of(md, m, x, ctx).pairs)
            brute = std::max(brute, pr.dy);
    }
    CHECK(e.value == brute);
}

TEST_CASE("planted controls: uniform sampling misses the rare tie, the search finds it",
          "[search][planted]") {
    // Generated planted models (thresholds far from 1/2, eps = 10^-6 .. 10^-9).
    const auto models = gen::planted_tie_soft_model();
    for (std::uint64_t seed : {3u, 5u, 8u}) {
        const auto m = models(rc::Random(seed), 10).value();
        INFO(m.name << " (generator seed " << seed << ")");
        const long n = 96;
        // The sweep's default budget (4 inputs, every position here) and far more: nothing
        // above 10^-3 (the change is about eps / (n |#1/n - t|^3) at uniform counts).
        CHECK(uniform_max(m, n, 4, 1) < 1e-3);
        CHECK(uniform_max(m, n, 64, 2) < 1e-3);
        analysis::search_options o;
        o.budget = 256;
        o.seed = 1;
        const auto found = analysis::worst_case_search(m, n, o);
        REQUIRE(found.found);
        INFO("found " << found.value << " at evaluation " << found.found_at);
        CHECK(found.value > 1.0); // about 2 sqrt 2: the count crosses the threshold
        CHECK_FALSE(found.undefined);
    }
}

TEST_CASE("planted controls: with eps = 0 the search reaches the rare tie by its restarts",
          "[search][planted]") {
    // threshold 1/8 at n = 41: 1/8 * 41 = 5.125, so the change is 2 sqrt 2 between 5 and 6 ones
    // (40 symbols: uniform inputs have 20 +/- 3.2) and exactly 0 elsewhere; no exact tie.
    const auto m = gen::planted_tie_soft_model(rational(1, 8), rational(0));
    CHECK(uniform_max(m, 41, 64, 3) == 0.0);
    analysis::search_options o;
    o.budget = 512;
    o.seed = 2;
    const auto found = analysis::worst_case_search(m, 41, o);
    REQUIRE(found.found);
    CHECK(found.value > 2.8);
    // At n = 40 the tie #1 = 5 exists: the value there does not exist, which the search reports.
    const auto at_tie = analysis::worst_case_search(m, 40, o);
    REQUIRE(at_tie.undefined);
    CHECK(at_tie.undefined->find("layer norm") != std::string::npos);
}

TEST_CASE("hard claims: the search finds where double disagrees with exact, and proves none "
          "exhaustively where there is none", "[search]") {
    const auto near = gen::near_tie_hard_model()(rc::Random(7), 10).value();
    analysis::search_options o;
    o.budget = 64;
    o.seed = 3;
    const auto found = analysis::double_disagreement_search(near, 40, o);
    REQUIRE(found.found);
    CHECK(found.found_at <= 64);
    CHECK_FALSE(found.where.empty());
    // Reproducible from the seed.
    const auto again = analysis::double_disagreement_search(near, 40, o);
    CHECK(again.input == found.input);
    CHECK(again.found_at == found.found_at);
    // hard-first has small integer scores: double is exact, and |Σ|^(n-1) = 2^6 <= 64 inputs
    // are all evaluated.
    const auto none = analysis::double_disagreement_search(bundled("hard-first"), 7, o);
    CHECK_FALSE(none.found);
    CHECK(none.exhaustive);
    CHECK(none.evaluations == 64);
}
