// Influence sweeps: the --n list parser, the verdict logic on constructed rows, the
// cross-entropy corollary on a closed-form case, thread independence, and the bundled
// Chiang & Cholak models (with a too-small bound as the negative control). Seeds are fixed
// and printed on failure.
#include "soft_influence/sweep.hpp"
#include "cli/common.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"
#include "report/influence_report.hpp"
#include "sweep_fixtures.hpp"

#include "numeric/ball_bounds.hpp"

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

std::vector<analysis::hypothesis_result> all_hold() {
    std::vector<analysis::hypothesis_result> h;
    for (const char* n : analysis::hypothesis_names) h.push_back({n, true, "constructed"});
    return h;
}

analysis::sweep_row row(long n, double max_influence, verdict c) {
    analysis::sweep_row r;
    r.n = n;
    r.max_influence_approx = max_influence;
    r.below_bound = c;
    r.below_posterior = verdict::passed;
    return r;
}

std::string dump_rows(const analysis::sweep_result& r) {
    std::string s;
    for (const auto& row : r.rows) s += json::dump(report::row_to_json(row), 0) + "\n";
    return s;
}

} // namespace

TEST_CASE("the --n list parser reads lists and geometric ranges", "[sweep]") {
    REQUIRE(cli::parse_length_list("64") == std::vector<long>{64});
    REQUIRE(cli::parse_length_list("16,64,256") == std::vector<long>{16, 64, 256});
    REQUIRE(cli::parse_length_list("16:128:x2") == std::vector<long>{16, 32, 64, 128});
    REQUIRE(cli::parse_length_list("10:100:x3") == std::vector<long>{10, 30, 90});
}

TEST_CASE("the --n list parser rejects bad lists with a message", "[sweep]") {
    for (const char* bad : {"", "abc", "16,", "1", "8,1", "16:8:x2", "16:64:x1", "16:64", "16:64:+2",
                            "2000000"}) {
        INFO("list '" << bad << "'");
        REQUIRE_THROWS_AS(cli::parse_length_list(bad), cli::usage_error);
        try {
            cli::parse_length_list(bad);
        } catch (const cli::usage_error& e) {
            REQUIRE(std::string(e.what()).rfind("--n: ", 0) == 0);
        }
    }
}

TEST_CASE("the verdict follows the rows and hypotheses", "[sweep]") {
    analysis::sweep_result r;
    r.hypotheses = all_hold();
    r.rows = {row(16, 1.0 / 16, verdict::passed), row(32, 1.0 / 32, verdict::passed),
              row(64, 1.0 / 64, verdict::passed)};
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::passed);
    REQUIRE(r.fit);
    REQUIRE(std::abs(r.fit->slope + 1) < 1e-12);

    r.rows[1].below_bound = verdict::undecided;
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::undecided);

    r.rows[2].below_posterior = verdict::failed;
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::failed);
    REQUIRE(r.explanation.find("n = 64") != std::string::npos);

    r.hypotheses[4].holds = false;
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::not_applicable);
    REQUIRE(r.explanation.find("lipschitz-updates") != std::string::npos);
    REQUIRE(certainly(r.influence_vanished));

    for (auto& x : r.rows) x.max_influence_approx = 2.0; // constant influence: did not vanish
    analysis::decide_sweep(r);
    REQUIRE(certainly(!r.influence_vanished));

    r.hypotheses[4].holds = numeric::indeterminate;
    for (auto& x : r.rows) x.below_posterior = x.below_bound = verdict::passed;
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::undecided);

    r.hypotheses = all_hold();
    r.rows[0].below_bound = verdict::not_applicable; // no finite bound
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::undecided);
}

TEST_CASE("an exhaustive cross-entropy violation fails whatever the hypotheses", "[sweep]") {
    analysis::sweep_result r;
    r.hypotheses = all_hold();
    r.hypotheses[0].holds = false;
    r.rows = {row(8, 0.1, verdict::not_applicable)};
    analysis::cross_entropy_row ce;
    ce.exhaustive = true;
    ce.check = verdict::failed;
    r.rows[0].cross_entropy = ce;
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::failed);
}


TEST_CASE("sweep rows do not depend on the number of threads", "[sweep]") {
    const auto m = bundled("cc-parity");
    auto o = small({8, 16}, 5);
    o.inputs = 3;
    o.language = lang::language::parity;
    INFO("seed " << o.seed);
    const auto one = analysis::influence_sweep(m, o);
    o.threads = 2;
    const auto two = analysis::influence_sweep(m, o);
    REQUIRE(dump_rows(one) == dump_rows(two));
    REQUIRE(one.rows.size() == 2);
    REQUIRE(one.rows[0].cross_entropy);
    REQUIRE(one.rows[0].cross_entropy->exhaustive);
}

TEST_CASE("one input's positions split over threads give the same rows as a serial sweep",
          "[sweep]") {
    // Fewer inputs than threads: the positions of an input are measured in parts (with the
    // method of the whole profile) and concatenated; balls (naive, a-posteriori bound) and
    // MPFR (incremental, L = 2) alike.
    for (auto scalar : {analysis::sweep_scalar::of<numeric::arb_ball>(),
                        analysis::sweep_scalar::of<numeric::mpfr_real>()}) {
        const auto m = bundled("cc-first");
        auto o = small({16, 32}, 9);
        o.inputs = 1;
        o.positions = 0; // every position
        o.scalar = scalar;
        INFO("seed " << o.seed << ", scalar " << analysis::to_string(scalar));
        const auto serial = analysis::influence_sweep(m, o);
        for (unsigned threads : {2u, 3u, 5u}) {
            INFO("threads " << threads);
            o.threads = threads;
            const auto split = analysis::influence_sweep(m, o);
            REQUIRE(dump_rows(split) == dump_rows(serial));
        }
        REQUIRE(serial.rows[0].pairs == 15);
    }
}

TEST_CASE("layer norm with eps = 0 violates the Lipschitz hypothesis", "[sweep]") {
    const auto o = small({8, 16, 32}, 3);
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("cc-parity-ln0"), o);
    REQUIRE(r.verdict == verdict::not_applicable);
    REQUIRE(r.explanation.find("lipschitz-updates") != std::string::npos);
    for (const auto& row : r.rows) REQUIRE_FALSE(row.bound);
}

TEST_CASE("each bundled negative control is hypothesis-violated, names its hypothesis and "
          "does not vanish", "[sweep]") {
    struct expect {
        const char* model;
        const char* hypothesis;
    };
    for (const expect& e : {expect{"cc-parity-ln0", "lipschitz-updates"},
                            expect{"cc-first-logn", "dot-product-scores"},
                            expect{"soft-positional-i", "bounded-embeddings"},
                            expect{"soft-step-update", "lipschitz-updates"}}) {
        const auto o = small({16, 32, 64, 128}, 3);
        INFO(e.model << ", seed " << o.seed);
        const auto r = analysis::influence_sweep(bundled(e.model), o);
        INFO(r.explanation);
        REQUIRE(r.verdict == verdict::not_applicable);
        REQUIRE(r.explanation.find(std::string("hypotheses fail: ") + e.hypothesis) == 0);
        REQUIRE(certainly(!r.influence_vanished));
        REQUIRE(r.explanation.find("not consistent with 1/n") != std::string::npos);
        // The growth of n * influence is certified, not only fitted.
        REQUIRE(r.growth.has_value());
        REQUIRE(r.explanation.find("certainly grew") != std::string::npos);
        // n * influence grows: at least 4x from n = 16 to 128.
        REQUIRE(r.rows.back().n_max_influence_approx > 4 * r.rows.front().n_max_influence_approx);
        for (const auto& row : r.rows) REQUIRE_FALSE(row.bound);
    }
}


TEST_CASE("cc-parity holds at small n", "[sweep]") {
    const auto o = small({8, 16, 32}, 7);
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("cc-parity"), o);
    INFO(r.explanation);
    REQUIRE(r.verdict == verdict::passed);
    for (const auto& row : r.rows) {
        REQUIRE(row.bound);
        REQUIRE(row.posterior_bound);
        REQUIRE(row.below_bound == verdict::passed);
        REQUIRE(row.below_posterior == verdict::passed);
    }
}

TEST_CASE("negative control: a bound divided by 10^9 is exceeded", "[sweep]") {
    auto o = small({8, 16}, 7);
    o.bound_divisor = 1000000000;
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("cc-first"), o);
    REQUIRE(r.verdict == verdict::failed);
    REQUIRE_FALSE(r.rows.front().witness_input.empty());
    REQUIRE(r.rows.front().witness_position >= 1);
}

TEST_CASE("the a-posteriori bound is computed up to posterior_max_n only", "[sweep]") {
    auto o = small({8, 16}, 7);
    o.posterior_max_n = 8;
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("cc-first"), o);
    REQUIRE(r.rows[0].posterior_bound);
    REQUIRE(r.rows[0].below_posterior == verdict::passed);
    REQUIRE_FALSE(r.rows[1].posterior_bound);
    REQUIRE(r.rows[1].below_posterior == verdict::not_applicable);
    REQUIRE(r.verdict == verdict::passed);
}

TEST_CASE("a hard model and a too short n are refused", "[sweep]") {
    REQUIRE_THROWS_AS(analysis::influence_sweep(bundled("hard-first"), small({8})), std::invalid_argument);
    REQUIRE_THROWS_AS(analysis::influence_sweep(bundled("cc-first"), small({1})), std::invalid_argument);
}

TEST_CASE("each attention kind is compared only with the bounds that hold for it", "[sweep]") {
    using model::attention_kind;
    const auto softmax = analysis::bounds_for(attention_kind::soft);
    REQUIRE((softmax.a_priori && softmax.pair && softmax.every_input));
    // StableMax: within softmax's e^(2M) of 1/n, so the a-priori K bounds it; the pair bound and
    // the bounds over every input are softmax's derivations.
    const auto stable = analysis::bounds_for(attention_kind::stablemax);
    REQUIRE((stable.a_priori && !stable.pair && !stable.every_input));
    for (auto k : {attention_kind::sparsemax, attention_kind::entmax15, attention_kind::sigmoid,
                   attention_kind::softpick, attention_kind::linear, attention_kind::linear_sum}) {
        INFO(model::to_string(k));
        const auto b = analysis::bounds_for(k);
        REQUIRE_FALSE((b.a_priori || b.pair || b.every_input));
    }
    REQUIRE_FALSE(analysis::influence_refusal(bundled("hard-first")).empty());
    REQUIRE_FALSE(analysis::influence_refusal(bundled("average-ones-mean")).empty());
    REQUIRE(analysis::influence_refusal(bundled("sparsemax-first")).empty());
}

TEST_CASE("a kind whose influence need not vanish is measured and never compared with softmax's "
          "bounds: sparsemax's n * max influence grows, certified, and the verdict is "
          "not-applicable",
          "[sweep]") {
    // sparsemax-first reads x_1 one-hot: flipping it moves y_n by Theta(1) at every n. Were
    // softmax's a-priori K(n)/n compared with it, the rows would fail from the n where K/n drops
    // below that change (the negative control: the same rows on the model read as softmax pass
    // their bounds, so the bound is there to compare with).
    auto o = small({8, 32, 128}, 5);
    o.positions = 2; // the first position and the last before eos
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("sparsemax-first"), o);
    INFO(r.explanation);
    REQUIRE(r.verdict == verdict::not_applicable);
    REQUIRE_THAT(r.explanation, Catch::Contains("the model uses sparsemax attention"));
    REQUIRE_THAT(r.explanation, Catch::Contains("certainly grew"));
    for (const auto& row : r.rows) {
        REQUIRE_FALSE(row.bound);
        REQUIRE_FALSE(row.posterior_bound);
        REQUIRE(row.below_bound == verdict::not_applicable);
        REQUIRE(row.below_posterior == verdict::not_applicable);
    }
    auto soft = bundled("sparsemax-first");
    soft.attention = model::attention_kind::soft;
    const auto s = analysis::influence_sweep(soft, o);
    INFO(s.explanation);
    REQUIRE(s.rows.front().bound);
    REQUIRE(s.no_claim.empty());
}

TEST_CASE("StableMax is measured against the a-priori bound, which holds for it", "[sweep]") {
    const auto o = small({8, 16}, 5);
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("stablemax-first"), o);
    INFO(r.explanation);
    REQUIRE(r.no_claim.empty());
    for (const auto& row : r.rows) {
        REQUIRE(row.bound);
        REQUIRE(row.below_bound != verdict::failed);
        REQUIRE_FALSE(row.posterior_bound);
    }
}

TEST_CASE("evenly spread positions include the first and the last", "[sweep]") {
    REQUIRE(analysis::sweep_positions(8, 0).size() == 7);
    REQUIRE(analysis::sweep_positions(8, 20).size() == 7);
    const auto p = analysis::sweep_positions(101, 5);
    REQUIRE(p == std::vector<std::size_t>{0, 25, 50, 74, 99});
}


TEST_CASE("undecided ball comparisons are measured again at doubled precision up to the cap",
          "[sweep]") {
    // cc-parity-ln5 at n = 16 and 16 bits: the layer norms' gain 1/sqrt(eps) widens the balls
    // until the bound comparisons are undecided; at a higher precision they are decided.
    auto o = small({16}, 4);
    o.inputs = 2;
    o.positions = 0;
    o.precision = 16;
    INFO("seed " << o.seed);
    const auto m = bundled("cc-parity-ln5");
    const auto fixed = analysis::influence_sweep(m, o);
    REQUIRE(fixed.rows[0].prob_below_bound == verdict::undecided);
    REQUIRE(fixed.rows[0].precision == 16);
    o.precision_cap = 1024;
    const auto escalated = analysis::influence_sweep(m, o);
    REQUIRE(escalated.rows[0].below_posterior == verdict::passed);
    REQUIRE(escalated.rows[0].below_bound == verdict::passed);
    REQUIRE(escalated.rows[0].prob_below_bound == verdict::passed);
    REQUIRE(escalated.rows[0].precision > 16);
    REQUIRE(escalated.rows[0].precision <= 1024);
    // The precision is kept in the checkpoint.
    const auto back = report::row_from_json(report::row_to_json(escalated.rows[0]));
    REQUIRE(back.precision == escalated.rows[0].precision);
}

TEST_CASE("a change far below the values' radius is decided as a differential enclosure",
          "[sweep]") {
    // soft-positional-i at n = 128: a change at position j moves y_n by about e^-j, below the
    // 2^-128 radius of y and y' for late j, so their difference cannot be told from zero; the
    // pair measured as a differential enclosure keeps relative accuracy, and the a-posteriori
    // comparison is decided at 128 bits without escalation.
    auto o = small({128}, 4);
    o.inputs = 1;
    o.positions = 0;
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("soft-positional-i"), o);
    REQUIRE(r.rows[0].below_posterior == verdict::passed);
    REQUIRE(r.rows[0].precision == 128);
}

TEST_CASE("the interval filter: auto rows are measured in intervals, a-posteriori bound included, "
          "and agree with balls", "[sweep]") {
    for (const char* name : {"cc-parity", "cc-first"}) {
        auto o = small({8, 16, 64}, 7);
        o.posterior_max_n = 8;
        o.language = lang::language::parity;
        o.digits = 0; // the comparisons alone: no row measured again for its digits
        INFO(name << ", seed " << o.seed);
        const auto m = bundled(name);
        o.scalar = analysis::sweep_scalar::of<numeric::arb_ball>();
        const auto balls = analysis::influence_sweep(m, o);
        o.scalar = analysis::sweep_scalar::automatic();
        const auto autos = analysis::influence_sweep(m, o);
        REQUIRE(autos.verdict == balls.verdict);
        REQUIRE(autos.rows.size() == balls.rows.size());
        for (std::size_t k = 0; k < autos.rows.size(); ++k) {
            const auto& a = autos.rows[k];
            const auto& b = balls.rows[k];
            INFO("n = " << a.n);
            REQUIRE(a.measured_in == "interval");
            REQUIRE(b.measured_in == "ball");
            REQUIRE(a.below_bound == b.below_bound);
            REQUIRE(a.prob_below_bound == b.prob_below_bound);
            REQUIRE(a.below_posterior == b.below_posterior);
            REQUIRE(a.posterior_bound.has_value() == (a.n <= 8));
            REQUIRE(a.pairs == b.pairs);
            // Both enclose n * max influence: the enclosures intersect.
            REQUIRE(a.n_max_lower);
            REQUIRE(b.n_max_upper);
            const auto alo = numeric::parse_rational(*a.n_max_lower), ahi = numeric::parse_rational(*a.n_max_upper);
            const auto blo = numeric::parse_rational(*b.n_max_lower), bhi = numeric::parse_rational(*b.n_max_upper);
            REQUIRE(*alo <= *bhi);
            REQUIRE(*blo <= *ahi);
            REQUIRE(a.precision == 53);
        }
    }
}

TEST_CASE("auto rows whose intervals certify fewer digits than asked for are measured again in "
          "balls", "[sweep][digits]") {
    // cc-parity-ln0: its layer norm with eps = 0 widens the intervals of max dp and eta.
    auto o = small({16}, 7);
    o.posterior_max_n = 0;
    o.language = lang::language::parity;
    o.scalar = analysis::sweep_scalar::automatic();
    INFO("seed " << o.seed);
    const auto m = bundled("cc-parity-ln0");
    o.digits = 0;
    const auto wide = analysis::influence_sweep(m, o);
    REQUIRE(wide.rows.front().measured_in == "interval");
    REQUIRE(wide.rows.front().max_prob_change);
    // The negative control of the escalation: the interval row's text certifies fewer than 12.
    REQUIRE(numeric::certified_digits(*wide.rows.front().max_prob_change) < 12);
    o.digits = 12;
    const auto r = analysis::influence_sweep(m, o);
    const auto& row = r.rows.front();
    REQUIRE(row.measured_in == "ball");
    REQUIRE(row.max_prob_change);
    CHECK(numeric::certified_digits(*row.max_prob_change) >= 12);
    CHECK(numeric::certified_digits(row.max_influence) >= 12);
    REQUIRE(row.cross_entropy);
    CHECK(numeric::certified_digits(row.cross_entropy->eta) >= 12);
    CHECK(numeric::certified_digits(row.cross_entropy->mean_ce_bits) >= 12);
    CHECK(numeric::certified_digits(row.cross_entropy->floor_bits) >= 12);
}

TEST_CASE("negative control of the interval filter: a bound divided by 10^9 is exceeded in "
          "intervals", "[sweep]") {
    auto o = small({16, 32}, 7);
    o.bound_divisor = 1000000000;
    o.posterior_max_n = 0;
    o.scalar = analysis::sweep_scalar::automatic();
    INFO("seed " << o.seed);
    const auto r = analysis::influence_sweep(bundled("cc-first"), o);
    REQUIRE(r.verdict == verdict::failed);
    REQUIRE(r.rows.front().measured_in == "interval");
    REQUIRE(r.rows.front().below_bound == verdict::failed);
}

