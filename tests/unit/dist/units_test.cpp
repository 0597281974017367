// What crosses between MPI ranks: every unit's result decodes to the value encoded, field for
// field, so rank 0 writes the same reports from a worker's result as from its own. Compared
// through the report writers (every field a report shows) and the doubles bit for bit.
#include "dist/units.hpp"
#include "dist/wire.hpp"
#include "dist/world.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"
#include "report/influence_report.hpp"
#include "runner/check_report.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace attnprop;

namespace {

model::model<numeric::rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

analysis::sweep_row full_row() {
    analysis::sweep_row r;
    r.n = 64;
    r.inputs = 3;
    r.positions = 8;
    r.pairs = 24;
    r.max_influence = "0.0123456789012 +/- 1e-30";
    r.mean_influence = "0.004";
    r.n_max_influence = "0.79";
    r.bound = "1.5";
    r.posterior_bound = "0.02";
    r.max_prob_change = "0.001";
    r.prob_bound = "0.375";
    r.below_bound = verdict::passed;
    r.below_posterior = verdict::undecided;
    r.prob_below_bound = verdict::failed;
    r.n_max_lower = "0.78";
    r.n_max_upper = "0.80";
    r.max_influence_approx = 0.1 + 0.2; // not a short decimal
    r.n_max_influence_approx = -0.0;
    analysis::cross_entropy_row ce;
    ce.n = 64;
    ce.language = lang::language::first;
    ce.exhaustive = true;
    ce.inputs = 4096;
    ce.correct = 4000;
    ce.mean_ce_bits = "0.9";
    ce.accuracy = "0.97";
    ce.eta = "0.1";
    ce.floor_bits = "0.86";
    ce.check = verdict::passed;
    ce.eta_zero_exactly = true;
    ce.mean_ce_approx = 1.0 / 3;
    r.cross_entropy = ce;
    r.witness_input = "0110";
    r.witness_position = 3;
    r.witness_bound = "probability";
    r.precision = 256;
    r.measured_in = "ball";
    return r;
}

} // namespace

TEST_CASE("dist: an influence row crosses ranks unchanged", "[unit][dist]") {
    const analysis::sweep_row a = full_row();
    const analysis::sweep_row b = dist::decode_sweep_row(dist::encode_sweep_row(a));
    CHECK(json::dump(report::row_to_json(a, 17)) == json::dump(report::row_to_json(b, 17)));
    CHECK(same_bits(a.max_influence_approx, b.max_influence_approx));
    CHECK(same_bits(a.n_max_influence_approx, b.n_max_influence_approx));
    CHECK(same_bits(a.cross_entropy->mean_ce_approx, b.cross_entropy->mean_ce_approx));
    CHECK(b.cross_entropy->eta_zero_exactly);
    CHECK(b.cross_entropy->language == lang::language::first);

    analysis::sweep_row u;
    u.n = 8;
    u.undefined = "undefined at layer 1, node 'norm', position 3 (input '01')";
    u.max_influence_approx = u.n_max_influence_approx = std::numeric_limits<double>::quiet_NaN();
    u.bound = "2";
    const analysis::sweep_row v = dist::decode_sweep_row(dist::encode_sweep_row(u));
    CHECK(v.undefined == u.undefined);
    CHECK(std::isnan(v.max_influence_approx));
    CHECK_FALSE(v.cross_entropy.has_value());
    CHECK(json::dump(report::row_to_json(u, 17)) == json::dump(report::row_to_json(v, 17)));
}

TEST_CASE("dist: a property's report crosses ranks with its counterexample", "[unit][dist]") {
    runner::property_report p;
    p.suite = "controls";
    p.name = "some-control";
    p.statement = "a statement";
    p.kinds = {"exact", "ball"};
    p.expected_to_fail = true;
    p.seed = 0xfedcba9876543210ULL; // above 2^63
    p.passed = 7;
    p.undecided = 2;
    p.undecided_equal = 1;
    p.undefined = 1;
    p.end = runner::outcomes::failed{};
    p.n_buckets = {{"n<=4", 3}, {"n<=16", 6}};
    p.lengths = {{3, 3}, {12, 4}, {16, 2}};
    p.classes = {{"hard", 9}};
    p.undecided_reasons = {"balls overlap"};
    p.undefined_reasons = {"undefined at layer 1"};
    p.measurements = {{"rate: consistent", 2}};
    p.seconds = 1.25;
    runner::counterexample cx;
    cx.original.value.model = bundled("hard-parity-attempt");
    cx.original.value.inputs = {"0110101"};
    cx.original.value.params = {{"n", 8}, {"position", 3}};
    cx.original.result = runner::check_result::violated("the output changed").with("y", "1/3");
    cx.original.precision = 128;
    cx.shrunk.value.model = bundled("hard-first");
    cx.shrunk.value.inputs = {"01"};
    cx.shrunk.value.params = {{"n", 3}};
    cx.shrunk.result = runner::check_result::violated("still changed")
                           .with("y", "-2/7")
                           .with_measurement({"rate", "consistent", "slope -1.0"});
    cx.shrunk.result = runner::check_result::undecided("still changed")
                           .with("y", "-2/7")
                           .with_measurement({"rate", "consistent", "slope -1.0"})
                           .with_sides_agree();
    cx.shrunk.precision = 512;
    cx.reproduce = "BASE64==";
    cx.shrink_steps = 5;
    cx.description = "Falsifiable after 3 tests";
    p.cx = cx;

    const runner::property_report q = dist::decode_property_report(dist::encode_property_report(p));
    runner::check_run a, b;
    a.suites = b.suites = {"controls"};
    a.reports = {p};
    b.reports = {q};
    CHECK(json::dump(runner::check_to_json(a)) == json::dump(runner::check_to_json(b)));
    CHECK(runner::check_to_markdown(a) == runner::check_to_markdown(b));
    REQUIRE(q.cx.has_value());
    CHECK(model::write_model(q.cx->original.value.model) == model::write_model(p.cx->original.value.model));
    CHECK(model::write_model(q.cx->shrunk.value.model) == model::write_model(p.cx->shrunk.value.model));
    CHECK(q.cx->shrunk.result.measured->detail == "slope -1.0");
    CHECK(q.cx->shrunk.result.sides_agree());
    CHECK(q.cx->original.result.status() == runner::verdict::failed);
    CHECK(q.end.index() == p.end.index());
    CHECK(q.lengths == p.lengths);
    CHECK(q.cx->description == p.cx->description);
    CHECK(q.seed == p.seed);
    CHECK(q.seconds == p.seconds);
}

TEST_CASE("dist: a counterexample without a model crosses ranks", "[unit][dist]") {
    // A property stopped by a limit while it shrank records the empty model, which no model
    // file can hold (an empty alphabet): it must still cross.
    runner::property_report p;
    p.suite = "semantics";
    p.name = "x";
    p.end = runner::outcomes::failed{};
    p.cx = runner::counterexample{};
    const runner::property_report q = dist::decode_property_report(dist::encode_property_report(p));
    REQUIRE(q.cx.has_value());
    CHECK(q.cx->shrunk.value.model.sigma.symbols.empty());
    CHECK(model::write_model(q.cx->shrunk.value.model) == model::write_model(p.cx->shrunk.value.model));
}

TEST_CASE("dist: a restriction run crosses ranks exactly", "[unit][dist]") {
    const auto m = bundled("hard-parity-attempt");
    analysis::language_options lo;
    lo.certify.samples = 8;
    const auto run = analysis::run_language(m, 10, lang::language::parity, lo);
    report::restrict_run r;
    r.model_name = m.name;
    r.n = 10;
    r.restr = run.restr;
    r.cert = run.cert;
    r.language = run.result;
    r.params = {{"n", 10}, {"seed", 1}, {"language", 0}};
    double secs = 0;
    const report::restrict_run s = dist::decode_restrict_run(dist::encode_restrict_run(r, 0.5), &secs);
    CHECK(secs == 0.5);
    CHECK(json::dump(report::restrict_to_json(m, r)) == json::dump(report::restrict_to_json(m, s)));
    CHECK(report::restrict_to_text(m, r) == report::restrict_to_text(m, s));
    CHECK(s.restr.table == r.restr.table);
    CHECK(s.restr.rho == r.restr.rho);
    CHECK(s.restr.figures.size() == r.restr.figures.size());
    CHECK(s.cert.failing_outputs == r.cert.failing_outputs);
    CHECK(s.params == r.params);
}

TEST_CASE("dist: the parts of a restriction run cross ranks exactly", "[unit][dist]") {
    const auto m = bundled("hard-parity-attempt");
    analysis::language_options lo;
    lo.certify.samples = 8;
    const auto run = analysis::run_language(m, 64, lang::language::parity, lo);
    double secs = 0;
    const analysis::restriction r = dist::decode_restriction(dist::encode_restriction(run.restr, 0.25), &secs);
    CHECK(secs == 0.25);
    CHECK(r.table == run.restr.table);
    CHECK(r.rho == run.restr.rho);
    CHECK(r.dependency == run.restr.dependency);
    CHECK(r.status == run.restr.status);
    const auto ys = analysis::certificate_outputs(m, run.restr, lo.certify, 2, 5);
    CHECK(dist::decode_outputs(dist::encode_outputs(ys, 1.5), &secs) == ys);
    CHECK(secs == 1.5);
    const analysis::language_result l =
        dist::decode_language_result(dist::encode_language_result(run.result, 2), &secs);
    CHECK(secs == 2);
    CHECK(l.verdict == run.result.verdict);
    CHECK(l.explanation == run.result.explanation);
    CHECK(l.inputs[0] == run.result.inputs[0]);
    CHECK(l.outputs[1] == run.result.outputs[1]);
    CHECK(l.accuracy == run.result.accuracy);
    CHECK(l.pairs_checked == run.result.pairs_checked);
    // The certificate from the parts is the one of the whole run.
    const auto cert = analysis::certify_outputs(m, r, lo.certify,
        analysis::certificate_outputs(m, r, lo.certify, 0, analysis::certificate_inputs(r, lo.certify)));
    CHECK(cert.valid == run.cert.valid);
    CHECK(cert.checks.back().detail == run.cert.checks.back().detail);
    const std::string bytes = dist::encode_outputs(ys, 0);
    CHECK_THROWS_AS(dist::decode_outputs(bytes.substr(0, bytes.size() - 1), nullptr), std::runtime_error);
}

TEST_CASE("dist: truncated or padded results are refused", "[unit][dist]") {
    const std::string bytes = dist::encode_sweep_row(full_row());
    CHECK_THROWS_AS(dist::decode_sweep_row(bytes.substr(0, bytes.size() - 3)), std::runtime_error);
    CHECK_THROWS_AS(dist::decode_sweep_row(bytes + "x"), std::runtime_error);
    dist::writer w;
    w.u64(std::uint64_t{1} << 60); // a string longer than the message
    const std::string huge = w.take();
    dist::reader r(huge);
    CHECK_THROWS_AS(r.str(), std::runtime_error);
    dist::writer q;
    q.rat(numeric::rational(-7, 3));
    const std::string qb = q.take();
    dist::reader rq(qb);
    CHECK(rq.rat() == numeric::rational(-7, 3));
    rq.finish();
}

TEST_CASE("dist: an influence unit's result crosses ranks unchanged", "[unit][dist]") {
    analysis::unit_result a;
    a.pairs.push_back({3, "3fb999999999999a", std::string("256 0.8f3@-1"), std::string("128 1a 3 0 0")});
    a.pairs.push_back({7, "bfd5555555555555", std::nullopt, std::nullopt});
    a.probabilities = std::vector<std::string>{"3fe0000000000000", "3fe0000000000000"};
    a.cross_entropy = full_row().cross_entropy;
    const analysis::unit_result b = dist::decode_unit_result(dist::encode_unit_result(a));
    REQUIRE(b.pairs.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(b.pairs[i].position == a.pairs[i].position);
        CHECK(b.pairs[i].dy == a.pairs[i].dy);
        CHECK(b.pairs[i].dp_max == a.pairs[i].dp_max);
        CHECK(b.pairs[i].posterior == a.pairs[i].posterior);
    }
    CHECK(b.probabilities == a.probabilities);
    REQUIRE(b.cross_entropy.has_value());
    CHECK(b.cross_entropy->floor_bits == a.cross_entropy->floor_bits);
    CHECK(same_bits(b.cross_entropy->mean_ce_approx, a.cross_entropy->mean_ce_approx));
    CHECK_FALSE(b.undefined.has_value());

    analysis::unit_result u;
    u.undefined = analysis::unit_undefined{"undefined at layer 1, node 'norm', position 3", true};
    const analysis::unit_result v = dist::decode_unit_result(dist::encode_unit_result(u));
    REQUIRE(v.undefined.has_value());
    CHECK(v.undefined->message == u.undefined->message);
    CHECK(v.undefined->may_resolve);
    CHECK(v.pairs.empty());
    CHECK_FALSE(v.probabilities.has_value());
    CHECK_FALSE(v.cross_entropy.has_value());
    const std::string bytes = dist::encode_unit_result(a);
    CHECK_THROWS_AS(dist::decode_unit_result(bytes.substr(0, bytes.size() - 1)), std::runtime_error);
    CHECK_THROWS_AS(dist::decode_unit_result(bytes + "x"), std::runtime_error);
}

TEST_CASE("dist: units that rank 0 no longer wants are skipped, in one process too", "[unit][dist]") {
    // As check skips the batches of a property after its failure: a result can make later
    // units unnecessary; those are neither computed nor returned.
    std::vector<std::size_t> computed, received;
    bool failed = false;
    const std::vector<std::size_t> done = dist::run_units(
        "key", {0, 1, 2, 3, 4, 5},
        [&](std::size_t u) {
            computed.push_back(u);
            return std::string(u == 2 ? "fail" : "ok");
        },
        [&](std::size_t u, const std::string& r) {
            received.push_back(u);
            if (r == "fail") failed = true;
        },
        [&](std::size_t u) { return !failed && u != 1; });
    CHECK(computed == std::vector<std::size_t>{0, 2});
    CHECK(received == computed);
    CHECK(done == computed);
}

TEST_CASE("dist: units read their input, made once per id, in one process too", "[unit][dist]") {
    // As restrict's certificate blocks read their length's restriction: units 0-2 read input
    // 0, units 10-11 input 1.
    std::vector<std::size_t> made;
    std::vector<std::string> results;
    const dist::unit_inputs inputs{[](std::size_t u) { return u / 10; },
                                   [&](std::size_t id) {
                                       made.push_back(id);
                                       return "input " + std::to_string(id);
                                   }};
    const std::vector<std::size_t> done = dist::run_units(
        "key", {10, 0, 1, 11, 2}, inputs,
        [&](std::size_t u, std::size_t id, const std::string& input) {
            return std::to_string(u) + " " + std::to_string(id) + " " + input;
        },
        [&](std::size_t, const std::string& r) { results.push_back(r); });
    CHECK(done == std::vector<std::size_t>{10, 0, 1, 11, 2});
    CHECK(made == std::vector<std::size_t>{1, 0});
    CHECK(results == std::vector<std::string>{"10 1 input 1", "0 0 input 0", "1 0 input 0",
                                              "11 1 input 1", "2 0 input 0"});
}
