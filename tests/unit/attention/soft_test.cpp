// Soft attention against hand-computed closed forms, across scalar kinds.
#include "attention/soft.hpp"
#include "test_models.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace attnprop;
using numeric::arb_ball;
using numeric::mpfr_real;
using numeric::rational;

namespace {

// y^(0)_j = (x_j, 1). One head: query = coordinate 1 (always 1), key = x_j, scale 1, so the
// score of key j is x_j. Value = x_j. F(y, b) = (b, 0). Softmax readout logits (0, y_0).
const char* exp_model = R"({"format": "attnprop-model", "version": 1, "name": "soft-hand",
  "attention": "soft", "alphabet": ["0", "1"], "eos": "$", "d": 2,
  "token_embedding": {"0": [0, 0], "1": [1, 0], "$": [0, 0]},
  "positional": {"kind": "formula", "dim": 2, "coordinates": [0, 1]},
  "input": "add",
  "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 1]], "K": [[1, 0]], "scale": 1},
                          "value": {"kind": "linear", "V": [[1, 0]]}}],
              "update": {"kind": "affine", "W": [[0, 0, 1], [0, 0, 0]]}}],
  "readout": {"kind": "softmax", "symbols": ["0", "1"], "W": [[0, 0], [1, 0]]}})";

// With k ones among n positions: b = k e / (k e + n - k), computed at 1024 bits.
mpfr_real closed_form(long k, long n) {
    numeric::context hi{1024};
    mpfr_real e = numeric::exp(numeric::one<mpfr_real>(hi));
    mpfr_real ke = numeric::from_int<mpfr_real>(k, hi) * e;
    return ke / (ke + numeric::from_int<mpfr_real>(n - k, hi));
}

} // namespace

TEST_CASE("soft attention matches the hand-computed closed form", "[attention][soft]") {
    auto m = test::inline_model(exp_model);
    for (std::string in : {"0110", "", "1", "0000000", "1111", "10101010101"}) {
        auto x = model::parse_input(m, in);
        long n = static_cast<long>(x.size());
        long k = static_cast<long>(std::count(in.begin(), in.end(), '1'));
        INFO("input '" << in << "'");
        mpfr_real want = closed_form(k, n);
        numeric::context c256{256};
        auto rb = attention::soft_forward(model::to_scalar<arb_ball>(m, c256), x, c256);
        REQUIRE(numeric::contains(rb.y[0], want));
        REQUIRE(numeric::radius_as_double(rb.y[0]) < 1e-70);
        auto rm = attention::soft_forward(model::to_scalar<mpfr_real>(m, c256), x, c256);
        mpfr_real err = numeric::abs(rm.y[0] - want);
        REQUIRE(numeric::to_double(err) < 1e-74);
        auto rd = attention::soft_forward(model::to_scalar<double>(m, c256), x, c256);
        REQUIRE(std::abs(rd.y[0] - numeric::to_double(want)) < 1e-15);
        // Readout: P("1") = e^b / (1 + e^b).
        auto z = attention::readout_logits(model::to_scalar<arb_ball>(m, c256).out, rb.y, c256);
        auto p = attention::softmax(z, c256);
        mpfr_real eb = numeric::exp(want);
        REQUIRE(numeric::contains(p[1], eb / (numeric::one<mpfr_real>(numeric::context{1024}) + eb)));
    }
}

TEST_CASE("an inverse temperature multiplies dot and map scores; length_scale is beta = ln n",
          "[attention][soft]") {
    // beta = 3 on the dot head is the closed form with e^3 in place of e.
    std::string text = exp_model;
    text.replace(text.find("\"scale\": 1}"), 11, "\"scale\": 1, \"beta\": 3}");
    auto m = test::inline_model(text);
    numeric::context c{256}, hi{1024};
    for (std::string in : {"0110", "1", "10000000000"}) {
        auto x = model::parse_input(m, in);
        const long n = static_cast<long>(x.size());
        const long k = static_cast<long>(std::count(in.begin(), in.end(), '1'));
        INFO("input '" << in << "'");
        auto want = [&](const mpfr_real& beta) {
            mpfr_real ke = numeric::from_int<mpfr_real>(k, hi) * numeric::exp(beta);
            return ke / (ke + numeric::from_int<mpfr_real>(n - k, hi));
        };
        auto rb = attention::soft_forward(model::to_scalar<arb_ball>(m, c), x, c);
        REQUIRE(numeric::contains(rb.y[0], want(numeric::from_int<mpfr_real>(3, hi))));
        // The same temperature on an affine score map (score = x_j, as the dot head).
        std::string mt = text;
        const std::string dot = R"({"kind": "dot", "Q": [[0, 1]], "K": [[1, 0]], "scale": 1, "beta": 3})";
        mt.replace(mt.find(dot), dot.size(),
                   R"({"kind": "map", "map": {"kind": "affine", "W": [[0, 0, 1, 0]]}, "beta": 3})");
        auto rm = attention::soft_forward(model::to_scalar<arb_ball>(test::inline_model(mt), c), x, c);
        REQUIRE(numeric::contains(rm.y[0], want(numeric::from_int<mpfr_real>(3, hi))));
        // length_scale log and beta log(n) are one code path: identical balls.
        std::string a = exp_model, b = exp_model;
        a.replace(a.find("\"scale\": 1}"), 11, "\"scale\": 1, \"length_scale\": \"log\"}");
        b.replace(b.find("\"scale\": 1}"), 11, "\"scale\": 1, \"beta\": \"log(n)\"}");
        auto ra = attention::soft_forward(model::to_scalar<arb_ball>(test::inline_model(a), c), x, c);
        auto rl = attention::soft_forward(model::to_scalar<arb_ball>(test::inline_model(b), c), x, c);
        REQUIRE(numeric::same_value(ra.y[0], rl.y[0]));
        REQUIRE(numeric::contains(rl.y[0], want(numeric::log(numeric::from_int<mpfr_real>(n, hi)))));
        // The certified double kind agrees.
        auto ri = attention::soft_forward(model::to_scalar<numeric::dinterval>(m, c), x, c);
        REQUIRE(numeric::contains(ri.y[0], want(numeric::from_int<mpfr_real>(3, hi))));
    }
}

TEST_CASE("a head with zero query is uniform: b = mean of the values", "[attention][soft]") {
    std::string text = exp_model;
    text.replace(text.find("\"Q\": [[0, 1]]"), 13, "\"Q\": [[0, 0]]");
    auto m = test::inline_model(text);
    numeric::context c{128};
    auto mb = model::to_scalar<arb_ball>(m, c);
    REQUIRE(attention::constant_scores(mb.layers[0].heads[0]));
    auto x = model::parse_input(m, "011010");
    auto r = attention::soft_forward(mb, x, c);
    REQUIRE(numeric::contains(r.y[0], rational(3, 7)));
    REQUIRE(numeric::is_exact(r.y[0]) == false); // 3/7 is not dyadic
    REQUIRE(numeric::radius_as_double(r.y[0]) < 1e-35);
}

TEST_CASE("soft trace: weights sum to one and the last row is y_n", "[attention][soft]") {
    auto m = test::inline_model(exp_model);
    numeric::context c{128};
    auto mm = model::to_scalar<mpfr_real>(m, c);
    auto x = model::parse_input(m, "0110");
    attention::soft_options opt;
    opt.trace_weights = true;
    auto r = attention::soft_forward(mm, x, c, opt);
    REQUIRE(r.trace);
    REQUIRE(r.trace->weights.size() == 1);
    for (const auto& row : r.trace->weights[0]) {
        mpfr_real s = numeric::zero<mpfr_real>(c);
        for (const auto& w : row[0]) s += w;
        REQUIRE(std::abs(numeric::to_double(s) - 1.0) < 1e-30);
    }
    REQUIRE(numeric::same_value(r.trace->y[1][4][0], r.y[0]));
    // Weights of a key with x_j = 1 are e times those with x_j = 0.
    const auto& w = r.trace->weights[0][4][0];
    REQUIRE(std::abs(numeric::to_double(w[1] / w[0]) - std::exp(1.0)) < 1e-14);
}

TEST_CASE("softmax is stable for large logits and rigorous for balls", "[attention][soft]") {
    numeric::context c{128};
    std::vector<double> z = {1000.0, 1000.0 + std::log(3.0)};
    auto p = attention::softmax(z, c);
    REQUIRE(std::abs(p[0] - 0.25) < 1e-12);
    std::vector<arb_ball> zb = {numeric::from_int<arb_ball>(100000, c), numeric::from_int<arb_ball>(100000, c)};
    auto pb = attention::softmax(zb, c);
    REQUIRE(numeric::contains(pb[0], rational(1, 2)));
}
