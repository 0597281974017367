// The certificate and the language analysis of a restriction
// (src/hard_limit/restriction_check.cpp): what the certificate catches (a tracker that ignores
// ties, a corrupted table, a truncated dependency set), the certificate in blocks, and the
// PARITY / DYCK counterexamples checked against lang::member and the exact forward pass.
#include "hard_limit/restriction.hpp"
#include "attention/hard_exact.hpp"
#include "util/precondition.hpp"

#include "restriction_models.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace attnprop;
using namespace attnprop::restriction_testing;

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
