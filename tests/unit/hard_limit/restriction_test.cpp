// The restriction of theory.md §1.3 on hand-built models whose ρ, D_L(n) and c_obs are known,
// the leftmost candidate rule on exact ties, the certificate (and what it catches), and the
// PARITY / DYCK counterexamples checked against lang::member and the exact forward pass.
#include "hard_limit/restriction.hpp"
#include "attention/hard_exact.hpp"
#include "model/model_file.hpp"
#include "util/precondition.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace attnprop;
using analysis::restriction_options;
using numeric::rational;

namespace {

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

/// Scores every key by x_j (eos scores 1 and sits at position n); the value is [j == n], so
/// y = 1 iff no x_j = 1: the leftmost 1 wins, else eos. Exact ties everywhere at G = 1.
model::model<rational> first_one_or_eos() {
    return model::parse_model(R"({
      "format": "attnprop-model", "version": 1, "name": "first-one-or-eos", "attention": "hard",
      "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": [0, 0], "1": [1, 0], "$": [1, 0]},
      "positional": {"kind": "formula", "dim": 2, "coordinates": [0, "[i==n]"]},
      "input": "add",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[1, 0]]},
                             "value": {"kind": "linear", "V": [[0, 1]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0], "t": "1/2"}})",
                              "first-one-or-eos");
}

/// Attends to position 3 (score -(j-3)^2 from positional features) and copies x_3.
model::model<rational> attend_three(const std::string& alphabet_json = R"(["0", "1"])",
                                    const std::string& tokens = R"("0": [0, 0, 0, 0], "1": [1, 0, 0, 0])") {
    return model::parse_model(R"({
      "format": "attnprop-model", "version": 1, "name": "attend-three", "attention": "hard",
      "alphabet": )" + alphabet_json + R"(, "eos": "$", "d": 4,
      "token_embedding": {)" + tokens + R"(, "$": [0, 0, 0, 0]},
      "positional": {"kind": "formula", "dim": 4, "coordinates": [0, "i", "i^2", 1]},
      "input": "add",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 0, 0, 0]], "q_bias": [1],
                                       "K": [[0, 6, -1, -9]]},
                             "value": {"kind": "linear", "V": [[1, 0, 0, 0]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 0, 0, 1], [0, 1, 0, 0, 0],
                                                     [0, 0, 1, 0, 0], [0, 0, 0, 1, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0, 0, 0], "t": "1/2"}})",
                              "attend-three");
}

restriction_options no_pins(long n) {
    restriction_options o;
    o.free_fraction = rational(n - 1, n); // ⌈C n⌉ = n − 1: the greedy may not pin anything
    return o;
}

void require_valid(const model::model<rational>& m, const analysis::restriction& r) {
    auto cert = analysis::certify(m, r);
    INFO(cert.checks.back().detail);
    REQUIRE(cert.complete);
    REQUIRE(cert.valid);
}

} // namespace

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

TEST_CASE("the independence check catches a tracker that ignores ties", "[restriction]") {
    auto m = first_one_or_eos();
    const long n = 8;
    auto opt = no_pins(n);
    opt.unsound_ignore_ties_for_testing = true;
    auto r = analysis::build_restriction(m, n, opt);
    REQUIRE(r.c_obs() == 0); // the unsound rule keeps only p* = eos
    auto cert = analysis::certify(m, r);
    REQUIRE(cert.complete);
    REQUIRE_FALSE(cert.valid);
    REQUIRE_FALSE(cert.failing_inputs.empty());
}

TEST_CASE("the certificate catches a corrupted table and a truncated dependency set",
          "[restriction]") {
    auto m = bundled("hard-parity-attempt");
    auto r = analysis::build_restriction(m, 16);
    REQUIRE(r.c_obs() == 8);
    require_valid(m, r);
    SECTION("corrupted entry") {
        auto bad = r;
        for (auto& e : bad.table) e[0] += 1;
        auto cert = analysis::certify(m, bad);
        REQUIRE_FALSE(cert.valid);
    }
    SECTION("a dependency position dropped") {
        auto bad = r;
        bad.dependency.pop_back(); // keep the entries whose dropped digit is 0
        bad.table.resize(bad.table.size() / 2);
        auto cert = analysis::certify(m, bad);
        REQUIRE_FALSE(cert.valid);
    }
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

TEST_CASE("PARITY counterexample on hard-parity-attempt at n = 64 and 1024", "[restriction]") {
    auto m = bundled("hard-parity-attempt");
    for (long n : {64L, 1024L}) {
        auto run = analysis::run_language(m, n, lang::language::parity);
        REQUIRE(run.cert.valid);
        REQUIRE(run.restr.c_obs() == 8);
        const auto& res = run.result;
        REQUIRE(res.verdict == analysis::language_verdict::counterexample);
        REQUIRE(res.accuracy == rational(1, 2));
        numeric::context ctx{53};
        model::vec<rational> y[2];
        for (int t = 0; t < 2; ++t) {
            REQUIRE(res.inputs[t].size() == static_cast<std::size_t>(n - 1));
            y[t] = attention::hard_forward_exact(m, model::parse_input(m, res.inputs[t]), ctx).y;
            REQUIRE(res.member[t] == lang::member(lang::language::parity, res.inputs[t]));
        }
        REQUIRE(y[0] == y[1]);
        REQUIRE(res.member[0] != res.member[1]);
        const bool accepted = attention::recognize(m.out, y[0], ctx) == attention::verdict::accept;
        REQUIRE(res.wrong >= 0);
        REQUIRE(accepted != res.member[res.wrong]);
        REQUIRE(accepted == res.member[1 - res.wrong]);
    }
}

TEST_CASE("PARITY accuracy is exactly 1/2 on a small subcube, enumerated", "[restriction]") {
    auto m = bundled("hard-first");
    analysis::language_options lo;
    auto run = analysis::run_language(m, 8, lang::language::parity, lo);
    REQUIRE(run.result.accuracy == rational(1, 2));
    REQUIRE(run.result.accuracy_exhaustive);
    REQUIRE(run.result.explanation.find("WARNING") == std::string::npos);
}

TEST_CASE("FIRST is not ruled out on hard-first", "[restriction]") {
    auto run = analysis::run_language(bundled("hard-first"), 64, lang::language::first);
    REQUIRE(run.cert.valid);
    REQUIRE(run.result.verdict == analysis::language_verdict::not_ruled_out);
}

TEST_CASE("1DYCK and 2DYCK counterexamples with the ends pre-fixed", "[restriction]") {
    auto m1 = attend_three(R"j(["(", ")"])j", R"j("(": [0, 0, 0, 0], ")": [1, 0, 0, 0])j");
    auto m2 = attend_three(
        R"j(["(", ")", "[", "]"])j",
        R"j("(": [0, 0, 0, 0], ")": [1, 0, 0, 0], "[": [0, 0, 0, 0], "]": [1, 0, 0, 0])j");
    for (auto [m, l] : {std::pair{m1, lang::language::dyck1}, std::pair{m2, lang::language::dyck2}}) {
        const long n = 41; // 40 inputs: words of even length exist
        auto run = analysis::run_language(m, n, l);
        REQUIRE(run.cert.valid);
        const std::string rho = run.restr.rho_string(m.sigma);
        REQUIRE(rho.substr(0, 8) == "((((((((");
        REQUIRE(rho.substr(32) == "))))))))");
        const auto& res = run.result;
        INFO(res.explanation);
        REQUIRE(res.verdict == analysis::language_verdict::counterexample);
        REQUIRE(lang::member(l, res.inputs[0]) != lang::member(l, res.inputs[1]));
        numeric::context ctx{53};
        auto y0 = attention::hard_forward_exact(m, model::parse_input(m, res.inputs[0]), ctx).y;
        auto y1 = attention::hard_forward_exact(m, model::parse_input(m, res.inputs[1]), ctx).y;
        REQUIRE(y0 == y1);
        REQUIRE(res.wrong >= 0);
    }
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

namespace {

/// The certificate assembled from the outputs of blocks [0, c1), [c1, c2), ..., as
/// `attnprop restrict` does over MPI ranks.
analysis::certificate certify_in_blocks(const model::model<rational>& m, const analysis::restriction& r,
                                        const analysis::certificate_options& opt, std::size_t block) {
    const std::size_t count = analysis::certificate_inputs(r, opt);
    std::vector<model::vec<rational>> ys;
    for (std::size_t first = 0; first < count; first += block) {
        auto part = analysis::certificate_outputs(m, r, opt, first, std::min(block, count - first));
        ys.insert(ys.end(), part.begin(), part.end());
    }
    return analysis::certify_outputs(m, r, opt, ys);
}

void require_same(const analysis::certificate& a, const analysis::certificate& b) {
    REQUIRE(a.valid == b.valid);
    REQUIRE(a.complete == b.complete);
    REQUIRE(a.exhaustive == b.exhaustive);
    REQUIRE(a.assignments == b.assignments);
    REQUIRE(a.checks.size() == b.checks.size());
    for (std::size_t k = 0; k < a.checks.size(); ++k) {
        CHECK(a.checks[k].name == b.checks[k].name);
        CHECK(a.checks[k].passed == b.checks[k].passed);
        CHECK(a.checks[k].detail == b.checks[k].detail);
    }
    CHECK(a.failing_inputs == b.failing_inputs);
    CHECK(a.failing_outputs == b.failing_outputs);
    CHECK(a.expected == b.expected);
}

} // namespace

TEST_CASE("the certificate in blocks of inputs equals the certificate in one piece",
          "[restriction]") {
    auto m = bundled("hard-parity-attempt");
    analysis::certificate_options opt;
    opt.threads = 1;
    SECTION("sampled inputs, valid") {
        opt.samples = 37;
        auto r = analysis::build_restriction(m, 64);
        REQUIRE(analysis::certificate_inputs(r, opt) == 37);
        const auto whole = analysis::certify(m, r, opt);
        REQUIRE(whole.valid);
        REQUIRE_FALSE(whole.exhaustive);
        for (std::size_t block : {1, 3, 16, 37}) require_same(certify_in_blocks(m, r, opt, block), whole);
        // The t-th input is the one the certificate's outputs are of.
        const auto ys = analysis::certificate_outputs(m, r, opt, 5, 1);
        CHECK(ys.front() ==
              attention::hard_forward_exact(m, analysis::certificate_input(m, r, opt, 5), numeric::context{53}).y);
    }
    SECTION("every assignment, invalid (a corrupted table)") {
        auto r = analysis::build_restriction(m, 8);
        for (auto& e : r.table) e[0] += 1;
        const auto whole = analysis::certify(m, r, opt);
        REQUIRE(whole.exhaustive);
        REQUIRE_FALSE(whole.valid);
        for (std::size_t block : {1, 5}) require_same(certify_in_blocks(m, r, opt, block), whole);
    }
    SECTION("an incomplete restriction has no inputs to evaluate") {
        analysis::restriction_options ro;
        ro.max_layer_entries = 1;
        auto r = analysis::build_restriction(m, 64, ro);
        REQUIRE(r.status != analysis::restriction_status::complete);
        CHECK(analysis::certificate_inputs(r, opt) == 0);
        require_same(analysis::certify_outputs(m, r, opt, {}), analysis::certify(m, r, opt));
    }
    SECTION("inputs out of range and a wrong number of outputs are refused") {
        opt.samples = 4;
        auto r = analysis::build_restriction(m, 64);
        CHECK_THROWS_AS(analysis::certificate_input(m, r, opt, 4), precondition_error);
        CHECK_THROWS_AS(analysis::certificate_outputs(m, r, opt, 3, 2), precondition_error);
        CHECK_THROWS_AS(analysis::certify_outputs(m, r, opt, analysis::certificate_outputs(m, r, opt, 0, 3)),
                        precondition_error);
    }
}
