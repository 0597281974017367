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
#include "props/every_input.hpp"
#include "props/hard_limit.hpp"
#include "props/masked.hpp"
#include "props/semantics.hpp"
#include "props/soft_hard.hpp"
#include "props/soft_influence.hpp"
#include "runner/check_report.hpp"
#include "runner/replay.hpp"
#include "runner/runner.hpp"
#include "broken.hpp"
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

/// The property with its default implementation does not fail on cfg's model: it passes or is
/// undecided, never failed, undefined or erred. Then a failure of a broken implementation on
/// the same model is the defect's, not the model's.
void require_default_does_not_fail(const runner::property& sound, const runner::run_config& cfg) {
    const auto r = runner::run_property(sound, cfg);
    INFO("default implementation: " << test::describe(r));
    REQUIRE(r.failed() == 0);
    REQUIRE(r.error().empty());
    REQUIRE_FALSE(r.gave_up());
    REQUIRE(r.undefined == 0);
    REQUIRE(r.passed + r.undecided > 0);
}

/// A negative control on a given model: the default does not fail there
/// (require_default_does_not_fail), and the broken implementation fails, shrinks, and its
/// shrunk case fails again.
runner::property_report fails_where_default_does_not(const runner::property& broken,
                                                     const runner::property& sound,
                                                     const runner::run_config& cfg) {
    require_default_does_not_fail(sound, cfg);
    return test::require_fails(broken, cfg);
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

    // A hard model whose readout is a softmax: no recognizer, so the restriction lemma's
    // properties make no claim (they were run, and refused the model with exit 2).
    auto soft_read = bundled("hard-first");
    soft_read.out = model::readout<rational>{};
    soft_read.out.type = model::readout<rational>::kind::softmax;
    soft_read.out.symbols = {"no", "yes"};
    soft_read.out.logits.W = model::make_matrix(2, soft_read.d, std::vector<rational>(2 * soft_read.d, rational(0)));
    soft_read.out.logits.W.at(1, 0) = 1;
    const auto read_soft = applicable_to(soft_read);
    CHECK(has(read_soft, "semantics/hard-filter-equals-exact"));
    for (const char* name : {"hard-limit/certificate-valid", "hard-limit/free-fraction", "hard-limit/parity-half",
                             "hard-limit/parity-pair"}) {
        INFO(name);
        CHECK_FALSE(has(read_soft, name));
        const auto why_r = runner::not_applicable(*all_properties().find(name), soft_read);
        REQUIRE(why_r);
        CHECK(why_r->find("recognizer") != std::string::npos);
    }

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
        REQUIRE(again.status() == runner::verdict::failed);
        CHECK(runner::compare_with_record(rec.folder.record, again).reproduced);
        std::filesystem::remove_all(dir);
    }
    SECTION("a filtered exact path with a wrong value, on hard-first") {
        // (The random-model control's filtered path computing in double is exact on
        // hard-first, whose numbers are small integers.)
        auto broken = [](const model::model<rational>& m, const model::input_sequence& x,
                         const numeric::context& ctx, bool trace) {
            auto r = attention::hard_forward_exact(m, x, ctx, trace);
            if (!r.y.empty()) r.y[0] += rational(1, 1000); // a wrong value
            return r;
        };
        fails_where_default_does_not(props::hard_filter_equals_exact(broken),
                                     props::hard_filter_equals_exact(), fixed(bundled("hard-first")));
    }
    SECTION("a too small a-posteriori bound, on cc-first-ln5 (the search finds the pair)") {
        auto cfg = fixed(bundled("cc-first-ln5"), 20, 64);
        cfg.search_budget = 4;
        auto r = fails_where_default_does_not(
            props::influence_below_bounds(test::broken::posterior_bound_over_n_squared()),
            props::influence_below_bounds(), cfg);
        CHECK(r.cx->shrunk.value.params.count("search_budget") == 1);
    }
    SECTION("the cross-entropy floor with eta / 4, on cc-parity-ln0") {
        fails_where_default_does_not(props::cross_entropy_above_chance(4),
                                     props::cross_entropy_above_chance(),
                                     fixed(bundled("cc-parity-ln0"), 20, 13));
    }
}

TEST_CASE("check --model: each applicable property's negative control fails on a given model",
          "[props][own-model][negative]") {
    SECTION("trace-last-row: a readout from position 1, on a generated hard model") {
        // (The bundled hard models compute the same final state at every row.)
        fails_where_default_does_not(props::trace_last_row(test::broken::readout_from_position_1()),
                                     props::trace_last_row(),
                                     fixed(gen::hard_model()(rc::Random(11), 30).value()));
    }
    SECTION("soft-kinds-agree: a ball softmax without radius, on cc-first-ln5") {
        fails_where_default_does_not(props::soft_kinds_agree(test::broken::soft_ball_without_radius()),
                                     props::soft_kinds_agree(), fixed(bundled("cc-first-ln5")));
    }
    SECTION("free-fraction: a builder miscounting its free inputs, on hard-parity-attempt") {
        fails_where_default_does_not(props::free_fraction(test::broken::free_count_plus_one()),
                                     props::free_fraction(), fixed(bundled("hard-parity-attempt")));
    }
    SECTION("parity-pair: a pair flipping a dependency position, on hard-parity-attempt") {
        fails_where_default_does_not(props::parity_pair(test::broken::pair_flipping_a_dependency()),
                                     props::parity_pair(), fixed(bundled("hard-parity-attempt")));
    }
    SECTION("influence-vanishes: the a-posteriori bound divided by n^2, on cc-first-ln5") {
        fails_where_default_does_not(props::influence_vanishes(props::vanishing_slope_tolerance, true, {},
                                                               test::broken::ladder_bound_over_n_squared()),
                                     props::influence_vanishes(), fixed(bundled("cc-first-ln5"), 5, 64));
    }
    SECTION("forced-bracket-cross-entropy: eta / 10^6, on soft-recency-2dyck") {
        fails_where_default_does_not(props::forced_bracket_cross_entropy(1000000),
                                     props::forced_bracket_cross_entropy(),
                                     fixed(bundled("soft-recency-2dyck"), 30, 16));
    }
    SECTION("hard-ball-encloses-exact: balls without radius, on hard-first-one-position") {
        // The head copies the position j/n of the first 1 (of position 1 when there is none),
        // which is not dyadic (n = 3: 1/3): y_n^(L) is a ball of nonzero radius, and its
        // midpoint alone excludes the exact value. (hard-first copies a symbol, 0 or 1: a point.)
        fails_where_default_does_not(props::hard_ball_encloses_exact(test::broken::ball_without_radius()),
                                  props::hard_ball_encloses_exact(),
                                  fixed(bundled("hard-first-one-position")));
    }
    SECTION("leftmost-tie-rule: ties broken towards the right, on hard-first") {
        // Its query is zero, so every key ties and the leftmost rule selects position 1; the
        // broken pass moves the choice to the last key embedded like x_1 (eos embeds like a 0).
        fails_where_default_does_not(props::leftmost_tie_rule(test::broken::ties_to_the_right()),
                                  props::leftmost_tie_rule(), fixed(bundled("hard-first")));
    }
    SECTION("model-file-round-trip: a writer through double, on a generated hard model") {
        // Every token embedding of the bundled models is a small integer, which double holds
        // exactly; this generated model has one that double does not.
        const auto m = gen::hard_model()(rc::Random(2), 30).value();
        bool inexact = false;
        for (const auto& v : m.token)
            for (const auto& q : v)
                inexact = inexact || numeric::rational_from_double(numeric::to_double_nearest(q)) != q;
        REQUIRE(inexact);
        fails_where_default_does_not(props::model_file_round_trip(test::broken::writer_through_double()),
                                  props::model_file_round_trip(), fixed(m));
    }
    SECTION("soft-interval-encloses: interval rows without their error bound, on cc-parity") {
        // Layer 1 attends uniformly (weights 1/3 at n = 3) and layer 2 scales its scores by
        // 1/sqrt(5): the softmax rows are rounded in double, and without their error bound the
        // interval of y_n^(L) misses the 512-bit ball (input "01": by a few 10^-16 in the
        // coordinate layer 2 writes).
        const auto cfg = fixed(bundled("cc-parity"));
        require_default_does_not_fail(props::soft_interval_encloses(), cfg);
        const test::broken::interval_rows_without_error_bound drop;
        test::require_fails(props::soft_interval_encloses(), cfg);
    }
    SECTION("certificate-valid: a candidate rule ignoring ties, on a generated hard model") {
        // No bundled hard model exposes it. Here the eos query scores a key 0 when it is a 0 or
        // eos and -7/6 when it is a 1, so a free x_1 = 0 ties with eos and the leftmost rule
        // gives it the head, whose value differs from eos's; the unsound rule drops that tie,
        // leaves x_1 outside D_L(n), and the table and independence checks see y_n^(L) change
        // with x_1 (n = 2).
        const auto m = gen::hard_model()(rc::Random(53), 30).value();
        auto r = fails_where_default_does_not(props::certificate_valid(true), props::certificate_valid(),
                                           fixed(m));
        CHECK(r.cx->shrunk.result.message.find("invalid certificate") != std::string::npos);
    }
    SECTION("parity-half: the measurement without Free ⊋ D_L(n), on hard-parity-attempt") {
        // At small n the output reads every free input (Free = D_L(n)), and the model
        // classifies the subcube right as a whole, not half of it.
        auto r = fails_where_default_does_not(props::parity_half(true), props::parity_half(),
                                           fixed(bundled("hard-parity-attempt")));
        CHECK(r.cx->shrunk.value.params.at("n") <= 4);
    }
    SECTION("prob-change-below-bound: 8 in place of 4, on soft-recency-2dyck") {
        // The logit of ')' is the coordinate of y_n^(L) that the head writes (4 times its
        // output) and that of ']' is 0, so factor = 1 and a change of the head moves the logit
        // by ||Δy_n^(L)||. On short inputs the head's output is near 0 and p near (1/2, 1/2),
        // where ||Δp||_inf is about ||Δy_n^(L)|| / 4 (n = 2: 0.0180 for 0.0719), twice the
        // halved bound.
        auto cfg = fixed(bundled("soft-recency-2dyck"), 30, 64);
        cfg.search_budget = 4;
        fails_where_default_does_not(props::prob_change_below_bound(8), props::prob_change_below_bound(),
                                  cfg);
    }
    SECTION("leak-below-bound: a row bound without the competing keys, on hard-first-one-position") {
        // With no 1 the head selects position 1 and the other keys trail it by gaps j/(2n), so
        // at n = 3 two keys leak (β = 1), more than the bound for one allows.
        fails_where_default_does_not(
            props::leak_below_bound(test::broken::leak_bound_without_competitors()),
            props::leak_below_bound(), fixed(bundled("hard-first-one-position")));
    }
    SECTION("readout-agrees-when-certified: a certificate ignoring the difference, on hard-first") {
        // The query is zero, so the soft counterpart (β = 1) averages every key: on "1" it
        // outputs 1/2 where the hard head copies x_1 = 1, and the readout (t = 1/2) no longer
        // accepts, though the hard readout has slack.
        fails_where_default_does_not(
            props::readout_agrees_when_certified(test::broken::certificate_ignoring_difference()),
            props::readout_agrees_when_certified(), fixed(bundled("hard-first")));
    }
    SECTION("ties-follow-average: a unique-hard reference, on average-ones-mean") {
        // Every 1 ties at the top: the unique-hard reference keeps only the first and bounds
        // the soft counterpart around its value, while the soft counterpart spreads its weight
        // over every 1 (as average-hard does) and leaves that bound.
        fails_where_default_does_not(props::ties_follow_average(test::broken::unique_hard_reference()),
                                  props::ties_follow_average(), fixed(bundled("average-ones-mean")));
    }
    SECTION("every-input-bound: the bound without the changed key's value, on cc-first") {
        // The change of x_1 reaches y_n through the value of key 1 itself; without that term the
        // bound keeps only the weights' change, and the drawn input's change exceeds it.
        auto cfg = fixed(bundled("cc-first"), 30, 16);
        cfg.search_budget = 4;
        fails_where_default_does_not(props::every_input_bound(analysis::dropped_term::changed_key),
                                     props::every_input_bound(), cfg);
    }
    SECTION("every-input-margin: a margin twice too large, on hard-first-one-position") {
        // The blocking defect of the random models' control changes nothing on the bundled
        // models (no key there blocks a second level); a doubled margin is not attained by its
        // witness input.
        analysis::margin_options defect;
        defect.double_margin_for_testing = true;
        fails_where_default_does_not(props::every_input_margin(defect), props::every_input_margin(),
                                     fixed(bundled("hard-first-one-position"), 30, 16));
    }
}

TEST_CASE("check --model: the masked bound without its log factor fails on causal-prefix-mean",
          "[props][own-model][negative][mask]") {
    // Flipping x_1 moves the witness's output by H_n/n > 3/n = K/n from n = 11 on.
    fails_where_default_does_not(props::masked_influence_below_bound(true),
                                 props::masked_influence_below_bound(),
                                 fixed(bundled("causal-prefix-mean"), 30, 256));
}

TEST_CASE("check --model: every property that applies to a bundled model has a negative control "
          "with a model fixed", "[props][own-model][negative]") {
    // The properties whose controls with a model fixed are above (keep in step with them and
    // with docs/properties.md): a property added to the registry that applies to a bundled
    // model must get one.
    const std::vector<std::string> controlled = {
        "semantics/hard-filter-equals-exact",      "semantics/hard-ball-encloses-exact",
        "semantics/double-matches-exact",          "semantics/soft-kinds-agree",
        "semantics/soft-interval-encloses",        "semantics/leftmost-tie-rule",
        "semantics/trace-last-row",                "semantics/model-file-round-trip",
        "hard-limit/certificate-valid",            "hard-limit/free-fraction",
        "hard-limit/parity-half",                  "hard-limit/parity-pair",
        "soft-influence/influence-below-bounds",   "soft-influence/prob-change-below-bound",
        "soft-influence/cross-entropy-above-chance", "soft-influence/forced-bracket-cross-entropy",
        "soft-influence/influence-vanishes",       "soft-hard/leak-below-bound",
        "soft-hard/readout-agrees-when-certified", "soft-hard/ties-follow-average",
        "soft-influence/every-input-bound",        "soft-hard/every-input-margin",
        "soft-influence/masked-influence-below-bound"};
    std::size_t models = 0;
    for (const auto& entry : std::filesystem::directory_iterator(ATTNPROP_MODELS_DIR)) {
        if (entry.path().extension() != ".json") continue;
        ++models;
        const auto name = entry.path().stem().string();
        for (const auto& p : applicable_to(bundled(name))) {
            INFO(p << " applies to " << name);
            CHECK(has(controlled, p));
        }
    }
    CHECK(models >= 18);
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

namespace {

/// soft-recency-2dyck with a bias `bias` on the logit of ')': it leans towards ')' everywhere,
/// so on a typical forced-bracket pair (whose top opener weighs little) the mean cross-entropy
/// is above 1 bit, and only pairs whose top opener is recent and whose other recent brackets
/// cancel the bias (a rare prefix pattern) are confidently right on both inputs.
model::model<rational> biased_recency(const rational& bias) {
    auto m = bundled("soft-recency-2dyck");
    m.name = "soft-recency-2dyck-biased";
    m.out.logits.b = {bias, rational(0)};
    m.out.logits.b_is_zero = false;
    return m;
}

} // namespace

TEST_CASE("forced-pair search: a smaller margin than plain sampling with the same budget",
          "[search][soft-influence]") {
    const auto m = biased_recency(rational(3, 2));
    for (const std::uint64_t seed : {1, 2, 3, 4, 5}) {
        analysis::forced_pair_search_options o;
        o.budget = 64;
        o.seed = seed;
        const auto searched = analysis::forced_pair_search(m, 16, o);
        o.sample_only = true;
        const auto sampled = analysis::forced_pair_search(m, 16, o);
        INFO("seed " << seed << ": search margin " << searched.margin << " (evaluation "
                     << searched.found_at << ", " << searched.pairs_measured
                     << " pairs), plain sampling " << sampled.margin << " ("
                     << sampled.pairs_measured << " pairs)");
        REQUIRE(searched.found);
        REQUIRE(sampled.found);
        CHECK(searched.evaluations == 64);
        CHECK(sampled.evaluations == 64);
        CHECK(searched.margin < sampled.margin);
        // The theorem holds for every set (eta_divisor 1): the margin found is not negative.
        CHECK(searched.margin > -1e-9);
        REQUIRE(searched.pairs.size() == 8);
        for (const auto& x : searched.pairs) CHECK(analysis::forced_pair_of(m, x));
        // Reproducible from the seed.
        o.sample_only = false;
        const auto again = analysis::forced_pair_search(m, 16, o);
        CHECK(again.pairs == searched.pairs);
        CHECK(again.found_at == searched.found_at);
    }
}

TEST_CASE("forced-bracket-cross-entropy: with eta / 10^6 the search finds a violation the drawn "
          "pairs miss, and its folder replays", "[props][own-model][negative][search]") {
    const auto m = biased_recency(rational(2));
    const auto control = props::forced_bracket_cross_entropy(1000000);
    auto cfg = fixed(m, 20, 32);
    // Plain sampling: the drawn pairs lean on the bias and stay above 1 bit.
    cfg.search_budget = 0;
    require_default_does_not_fail(control, cfg);
    // The search: the theorem still holds on every set it finds...
    cfg.search_budget = 64;
    require_default_does_not_fail(props::forced_bracket_cross_entropy(), cfg);
    // ... and the control's floor (eta / 10^6) is violated on the set it finds.
    auto r = test::require_fails(control, cfg);
    const auto& shrunk = r.cx->shrunk;
    const auto number = [&](const std::string& name) -> std::string {
        for (const auto& [k, v] : shrunk.result.numbers)
            if (k == name) return v;
        return "";
    };
    INFO(shrunk.result.message);
    CHECK(number("found_by") == "the worst-case search");
    CHECK(number("search_pairs").size() >= 8);
    CHECK(number("search_found_at").find("evaluations") != std::string::npos);
    CHECK(shrunk.value.params.count("search_budget") == 1);
    CHECK(shrunk.value.params.count("search_seed") == 1);
    // The folder replays the same search and the same violation.
    auto dir = std::filesystem::temp_directory_path() / "attnprop-own-model-forced-search";
    std::filesystem::remove_all(dir);
    runner::check_run run;
    run.cfg = cfg;
    run.suites = {control.suite};
    run.reports = {r};
    run.model_name = m.name;
    run.model_file = "biased.json";
    runner::write_check_report(dir, run);
    auto rec = runner::read_counterexample(dir / "counterexamples" / runner::counterexample_folder(r));
    REQUIRE(rec.folder.seal == report::seal_status::intact);
    REQUIRE_NOTHROW(runner::check_case(control, rec));
    auto again = runner::replay_case(control, rec.value, rec.cfg);
    REQUIRE(again.status() == runner::verdict::failed);
    CHECK(runner::compare_with_record(rec.folder.record, again).reproduced);
    std::filesystem::remove_all(dir);
}

TEST_CASE("check --model: a model the evaluation refuses ends the run, never as a failure",
          "[props][own-model][refusal]") {
    // A hard model whose beta is not positive: eval refuses it at every n >= 2 (exit 2). Under
    // check its cases used to become counterexamples "threw: ... not positive" (exit 1).
    model::model<rational> m = bundled("hard-first");
    m.layers[0].heads[0].score.beta = model::expr::parse("-1");
    m.file = "beta.json";
    for (const char* name : {"semantics/double-matches-exact", "hard-limit/certificate-valid",
                             "hard-limit/parity-pair"}) {
        const runner::property* p = all_properties().find(name);
        REQUIRE(p != nullptr);
        INFO(name);
        REQUIRE_THROWS_AS(runner::run_property(*p, fixed(m, 10, 16)), model::content_error);
        REQUIRE_THROWS_WITH(runner::run_property(*p, fixed(m, 10, 16)),
                            Catch::StartsWith("beta.json: error: layer 1 head 1: hard attention "
                                              "ignores the inverse temperature beta") &&
                                Catch::EndsWith("(at /layers/0/heads/0/score/beta)"));
    }
}

TEST_CASE("soft-kinds-agree: MPFR's exponent range is MPFR's limit, not a counterexample",
          "[props][own-model][mpfr]") {
    // The head puts weight e^-4e18 on every key but the first, so y_1 is about 1e-1.7e18: an
    // Arb ball holds it, MPFR (exponents down to about -2^30) rounds it to 0. That used to be
    // "the ball does not contain the high-precision MPFR value" (exit 1).
    const std::string text = R"({"format":"attnprop-model","version":1,"name":"underflow",
      "attention":"soft","alphabet":["0","1"],"eos":"$","d":2,
      "token_embedding":{"0":[0,0],"1":[1,0],"$":[0,0]},
      "positional":{"kind":"formula","dim":2,"coordinates":[0,"[i==1]"]},"input":"add",
      "layers":[{"heads":[{"score":{"kind":"dot","Q":[[0,0]],"q_bias":[4e18],"K":[[0,1]]},
                           "value":{"kind":"linear","V":[[1,0]]}}],
                 "update":{"kind":"affine","W":[[0,0,1],[0,1,0]]}}],
      "readout":{"kind":"threshold","w":[1,0],"t":0}})";
    const model::model<rational> m = model::parse_model(text, "underflow.json");
    const runner::property* p = all_properties().find("semantics/soft-kinds-agree");
    REQUIRE(p != nullptr);
    const auto r = runner::run_property(*p, fixed(m, 20, 16));
    INFO(test::describe(r));
    REQUIRE(r.failed() == 0);
    REQUIRE(r.undecided > 0);
    // One case by hand: undecided at any precision, with the reason.
    runner::test_case c;
    c.model = m;
    c.inputs = {"0111"};
    c.params["n"] = 5;
    const runner::check_result one = p->check(c, numeric::context{128});
    REQUIRE(one.status() == runner::verdict::undecided);
    REQUIRE_FALSE(one.precision_helps());
    REQUIRE_THAT(one.message, Catch::StartsWith("MPFR underflowed"));
}

TEST_CASE("soft-interval-encloses: where the interval and a ball both meet a layer norm's pole, "
          "the case is undefined, not undecided",
          "[props][semantics]") {
    // cc-parity-ln0 on the empty input (n = 1): layer 2's layer norm (eps = 0) sees a vector whose
    // variance no enclosure separates from 0. The interval declines; a ball meets the same pole,
    // so the case's result is the ball's undefined (retried by the runner like every property's).
    const runner::property* p = all_properties().find("semantics/soft-interval-encloses");
    REQUIRE(p != nullptr);
    runner::test_case c;
    c.model = bundled("cc-parity-ln0");
    c.inputs = {""};
    c.params["n"] = 1;
    try {
        const runner::check_result r = p->check(c, numeric::context{128});
        FAIL("expected the ball's undefined, got " << r.message);
    } catch (const numeric::undefined_error& e) {
        REQUIRE(e.precision_may_resolve());
        REQUIRE_THAT(e.message(), Catch::Contains("layer norm with eps = 0"));
    }
    // On a longer input both find the value, and the case holds.
    c.inputs = {"0110"};
    c.params["n"] = 5;
    REQUIRE(p->check(c, numeric::context{128}).status() == runner::verdict::passed);
}
