// The five hypotheses of Claim 2 on small inline models (each one true, false and, where it
// can be, undecided), the Lipschitz analysis of maps, and the bundled models.
#include "soft_influence/hypotheses.hpp"
#include "soft_influence/norms.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

using namespace attnprop;
using analysis::hypothesis_result;
using numeric::arb_ball;
using numeric::rational;

namespace {

const numeric::context ctx{128};

/// A one-layer soft model on {0, 1} with d = 2; the pieces can be replaced.
struct model_text {
    std::string positional = R"({"kind": "formula", "dim": 2, "coordinates": ["(i-1)/n", 0]})";
    std::string input = R"("add")";
    std::string score = R"({"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]]})";
    std::string value = R"({"kind": "linear", "V": [[1, 0]]})";
    std::string update = R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "linear", "in": "y", "W": [[1, 1], [0, 1]]},
        {"id": "a", "op": "relu", "in": "h"},
        {"id": "o", "op": "linear", "in": "a", "W": [[1, 0], [0, 1]]},
        {"id": "r", "op": "add", "in": ["o", "y"]},
        {"id": "bb", "op": "linear", "in": "b1", "W": [[1], [0]]},
        {"id": "out", "op": "add", "in": ["r", "bb"]}], "output": "out"})";
    std::string token_dim_extra; // e.g. for concat

    std::string text() const {
        return R"({"format": "attnprop-model", "version": 1, "name": "hyp", "attention": "soft",
          "alphabet": ["0", "1"], "eos": "$", "d": 2,
          "token_embedding": {"0": [1, 0], "1": [0, 1], "$": [1, 1])" +
               token_dim_extra + R"(},
          "positional": )" + positional + R"(, "input": )" + input + R"(,
          "layers": [{"heads": [{"score": )" + score + R"(, "value": )" + value + R"(}],
                      "update": )" + update + R"(}],
          "readout": {"kind": "softmax", "symbols": ["a", "b"], "W": [[1, 0], [0, 1]]}})";
    }
    model::model<rational> parse() const { return model::parse_model(text(), "hyp.json"); }
};

hypothesis_result find(const std::vector<hypothesis_result>& v, const std::string& name) {
    for (const auto& h : v)
        if (h.name == name) return h;
    FAIL("no hypothesis " << name);
    return {};
}

std::vector<hypothesis_result> check(const model_text& t) {
    return analysis::check_hypotheses(t.parse());
}

/// An update graph with the given extra nodes between "y" and the output "out".
std::string graph(const std::string& nodes) {
    return R"({"kind": "graph", "nodes": [)" + nodes + R"(], "output": "out"})";
}

double upper_double(const arb_ball& x) { return numeric::to_double(analysis::upper(x)); }

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

} // namespace

TEST_CASE("the base model satisfies every hypothesis, in the fixed order", "[analysis][hypotheses]") {
    auto h = check(model_text{});
    REQUIRE(h.size() == 5);
    const char* names[] = {"dot-product-scores", "linear-values", "bounded-embeddings",
                           "bounded-initial-states", "lipschitz-updates"};
    for (std::size_t k = 0; k < 5; ++k) {
        INFO(h[k].name << ": " << h[k].reason);
        REQUIRE(h[k].name == names[k]);
        REQUIRE(certainly(h[k].holds));
        REQUIRE(!h[k].reason.empty());
    }
}

TEST_CASE("dot-product-scores: score maps fail, affine biases hold", "[analysis][hypotheses]") {
    model_text t;
    t.score = R"({"kind": "map", "map": {"kind": "hash", "seed": 1, "out_dim": 1, "range": 2,
                                          "denominator": 1}})";
    const auto h = find(check(t), "dot-product-scores");
    REQUIRE(certainly(!h.holds));
    REQUIRE(h.reason == "layer 1 head 1 scores with an arbitrary map (hash)");

    model_text b;
    b.score = R"({"kind": "dot", "Q": [[1, 0]], "q_bias": [2], "K": [[0, 1]], "k_bias": ["1/2"]})";
    const auto hb = find(check(b), "dot-product-scores");
    REQUIRE(certainly(hb.holds));
    REQUIRE(hb.reason.find("homogeneous") != std::string::npos);
}

TEST_CASE("dot-product-scores: an inverse temperature that depends on n fails, a constant one "
          "holds", "[analysis][hypotheses]") {
    model_text t;
    t.score = R"({"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]], "beta": 100})";
    REQUIRE(certainly(find(check(t), "dot-product-scores").holds));
    t.score = R"x({"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]], "beta": "2*log(n)"})x";
    auto h = find(check(t), "dot-product-scores");
    REQUIRE(certainly(!h.holds));
    REQUIRE(h.reason.find("layer 1 head 1 multiplies its scores by the inverse temperature "
                          "beta(n) = '2*log(n)', which depends on n") == 0);
    REQUIRE(h.reason.find("unbounded") != std::string::npos);
    t.score = R"({"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]], "beta": "1 + 1/n"})";
    h = find(check(t), "dot-product-scores");
    REQUIRE(certainly(!h.holds));
    REQUIRE(h.reason.find("beta(n) is bounded") != std::string::npos);
    // The length scaling keeps its own wording.
    t.score = R"({"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]], "length_scale": "log"})";
    REQUIRE(find(check(t), "dot-product-scores").reason.find("log n") != std::string::npos);
}

TEST_CASE("linear-values: value maps fail unless affine", "[analysis][hypotheses]") {
    model_text t;
    t.value = R"({"kind": "map", "map": {"kind": "table", "entries": [{"in": [0, 0], "out": [1]}],
                                          "default": [0]}})";
    const auto h = find(check(t), "linear-values");
    REQUIRE(certainly(!h.holds));
    REQUIRE(h.reason == "layer 1 head 1 value is an arbitrary map (table)");

    model_text a;
    a.value = R"({"kind": "map", "map": {"kind": "affine", "W": [[1, 2]], "b": [3]}})";
    REQUIRE(certainly(find(check(a), "linear-values").holds));
    model_text bias;
    bias.value = R"({"kind": "linear", "V": [[1, 0]], "bias": [5]})";
    REQUIRE(certainly(find(check(bias), "linear-values").holds));
}

TEST_CASE("bounded-embeddings: tables, sinusoids and formulas", "[analysis][hypotheses]") {
    model_text table;
    table.positional = R"({"kind": "table", "rows": [[0, 1], [1, 0], [5, -7]]})";
    REQUIRE(certainly(find(check(table), "bounded-embeddings").holds));

    model_text sinus;
    sinus.positional = R"({"kind": "sinusoidal", "dim": 2})";
    REQUIRE(certainly(find(check(sinus), "bounded-embeddings").holds));

    model_text grows;
    grows.positional = R"({"kind": "formula", "dim": 2, "coordinates": [0, "i"]})";
    auto hg = check(grows);
    REQUIRE(certainly(!find(hg, "bounded-embeddings").holds));
    REQUIRE(find(hg, "bounded-embeddings").reason == "coordinate 1: 'i' grows without bound");
    REQUIRE(certainly(!find(hg, "bounded-initial-states").holds));

    model_text gen_atoms;
    gen_atoms.positional =
        R"({"kind": "formula", "dim": 2, "coordinates": ["i - 2*floor(i/2) + 1/i", "(-1)^i*[i==n]"]})";
    REQUIRE(certainly(find(check(gen_atoms), "bounded-embeddings").holds));

    model_text unknown;
    unknown.positional = R"J({"kind": "formula", "dim": 2, "coordinates": ["i*sin(i)", 0]})J";
    auto hu = check(unknown);
    const auto e = find(hu, "bounded-embeddings");
    INFO(e.reason);
    REQUIRE(is_indeterminate(e.holds));
    REQUIRE(e.reason == "coordinate 0: cannot decide whether 'i*sin(i)' is bounded");
}

TEST_CASE("bounded-initial-states: add, concat and input maps", "[analysis][hypotheses]") {
    model_text concat;
    concat.positional = R"({"kind": "formula", "dim": 1, "coordinates": ["i/n"]})";
    concat.input = R"("concat")";
    concat.token_dim_extra = "";
    // d = 2 = d_tok + dim needs one-coordinate tokens.
    std::string text = concat.text();
    for (auto [from, to] : {std::pair<std::string, std::string>{"[1, 0]", "[1]"},
                            {"[0, 1]", "[0]"},
                            {"[1, 1]", "[2]"}})
        text.replace(text.find(from), from.size(), to);
    auto hc = analysis::check_hypotheses(model::parse_model(text, "concat.json"));
    REQUIRE(certainly(find(hc, "bounded-initial-states").holds));
    REQUIRE(find(hc, "bounded-initial-states").reason.find("concatenation") != std::string::npos);

    model_text map;
    map.input = R"({"kind": "map", "map": {"kind": "graph", "nodes": [
        {"id": "s", "op": "add", "in": ["v", "p"]}, {"id": "out", "op": "step", "in": "s"}],
        "output": "out"}})";
    const auto hm = find(check(map), "bounded-initial-states");
    REQUIRE(certainly(hm.holds));
    REQUIRE(hm.reason.find("every map kind sends bounded sets to bounded sets") != std::string::npos);

    map.positional = R"({"kind": "formula", "dim": 2, "coordinates": ["n", 0]})";
    REQUIRE(is_indeterminate(find(check(map), "bounded-initial-states").holds));
}

TEST_CASE("lipschitz-updates: every op kind", "[analysis][hypotheses]") {
    auto lip = [](const std::string& nodes) {
        model_text t;
        t.update = graph(nodes);
        return find(check(t), "lipschitz-updates");
    };
    const std::string y = R"({"id": "w", "op": "linear", "in": "y", "W": [[1, 0], [0, 1]]})";

    auto ln0 = lip(y + R"(, {"id": "out", "op": "layer_norm", "in": "w", "eps": 0})");
    REQUIRE(certainly(!ln0.holds));
    REQUIRE(ln0.reason == "layer 1 update: layer norm with eps = 0 is not Lipschitz (node 'out')");

    auto ln = lip(y + R"(, {"id": "out", "op": "layer_norm", "in": "w", "eps": 0.25, "gamma": [2, -3]})");
    REQUIRE(certainly(ln.holds));
    REQUIRE(ln.reason.find("max|gamma|/sqrt(eps) <= 6") != std::string::npos);

    for (std::string op : {"step", "floor"}) {
        auto h = lip(y + R"(, {"id": "out", "op": ")" + op + R"(", "in": "w"})");
        REQUIRE(certainly(!h.holds));
        REQUIRE(h.reason == "layer 1 update: " + op + " is discontinuous (node 'out')");
    }
    auto mul = lip(y + R"(, {"id": "out", "op": "mul", "in": ["w", "y"]})");
    REQUIRE(certainly(!mul.holds));
    REQUIRE(mul.reason.find("bilinear") != std::string::npos);

    // Constant arguments: a step of a constant is constant; mul by a constant is linear.
    auto cst = lip(R"({"id": "z", "op": "linear", "in": "y", "W": [[0, 0], [0, 0]], "b": [1, -2]},
                      {"id": "s", "op": "step", "in": "z"},
                      {"id": "m", "op": "mul", "in": ["z", "y"]},
                      {"id": "out", "op": "add", "in": ["m", "s"]})");
    REQUIRE(certainly(cst.holds));
    REQUIRE(cst.reason.find("L_1 <= 2") != std::string::npos);

    auto misc = lip(R"({"id": "t", "op": "tanh", "in": "y"}, {"id": "c", "op": "concat", "in": ["t", "b1"]},
                       {"id": "sl", "op": "slice", "in": "c", "from": 0, "to": 2},
                       {"id": "out", "op": "scale", "in": "sl", "factor": -3})");
    REQUIRE(certainly(misc.holds));

    // A floor node that the output does not use does not matter.
    auto unused = lip(y + R"(, {"id": "f", "op": "floor", "in": "w"}, {"id": "out", "op": "relu", "in": "w"})");
    REQUIRE(certainly(unused.holds));

    model_text table;
    table.update = R"({"kind": "table", "entries": [], "default": [0, 0]})";
    const auto ht = find(check(table), "lipschitz-updates");
    REQUIRE(is_indeterminate(ht.holds));
    REQUIRE(ht.reason.find("layer 1 update: arbitrary map (table)") == 0);

    model_text mlp;
    mlp.update = R"({"kind": "mlp", "layers": [{"W": [[1, 0, 1], [0, 1, 0]], "activation": "relu"},
                                               {"W": [[1, 0], [0, 1]], "activation": "floor"}]})";
    const auto hmlp = find(check(mlp), "lipschitz-updates");
    REQUIRE(certainly(!hmlp.holds));
    REQUIRE(hmlp.reason == "layer 1 update: MLP layer 2: floor is discontinuous");
}

TEST_CASE("lipschitz_bound and value_at_zero_norm compose exactly on simple maps",
          "[analysis][hypotheses]") {
    auto map_of = [](const std::string& update) {
        model_text t;
        t.update = update;
        return t.parse().layers[0].update;
    };
    // Affine [[3, 4, 0], [0, 0, 0]] (in: y, b1): norm 5; F(0) = bias (3, 4): norm 5.
    auto aff = map_of(R"({"kind": "affine", "W": [[3, 4, 0], [0, 0, 0]], "b": [3, 4]})");
    auto l = analysis::lipschitz_bound(aff, ctx);
    REQUIRE(l);
    REQUIRE(upper_double(*l) == Approx(5.0).epsilon(1e-9));
    REQUIRE(upper_double(*l) >= 5.0);
    REQUIRE(upper_double(analysis::value_at_zero_norm(aff, ctx)) == Approx(5.0).epsilon(1e-12));

    // Per block: y through [[3, 4], [0, 0]] (5), b1 through [[0], [2]] (2).
    auto blocks = analysis::lipschitz_analysis(
        map_of(R"({"kind": "affine", "W": [[3, 4, 0], [0, 0, 2]]})"), {{0, 2}, {2, 1}}, ctx);
    REQUIRE(certainly(blocks.lipschitz));
    REQUIRE(upper_double(blocks.block_bounds[0]) == Approx(5.0).epsilon(1e-9));
    REQUIRE(upper_double(blocks.block_bounds[1]) == Approx(2.0).epsilon(1e-9));

    // Layer norm eps = 1/4, gamma (2, -3): 3 / (1/2) = 6, times |scale| 2.
    auto ln = map_of(graph(R"({"id": "n", "op": "layer_norm", "in": "y", "eps": 0.25, "gamma": [2, -3]},
                              {"id": "out", "op": "scale", "in": "n", "factor": -2})"));
    REQUIRE(upper_double(*analysis::lipschitz_bound(ln, ctx)) == Approx(12.0).epsilon(1e-9));
    // eps = 0 at zero variance: F(0) is undefined.
    auto ln0 = map_of(graph(R"({"id": "out", "op": "layer_norm", "in": "y", "eps": 0})"));
    REQUIRE(!analysis::lipschitz_bound(ln0, ctx));
    REQUIRE(!analysis::finite(analysis::value_at_zero_norm(ln0, ctx)));

    auto hash = map_of(R"({"kind": "hash", "seed": 3, "out_dim": 2, "range": 1, "denominator": 1})");
    REQUIRE(!analysis::lipschitz_bound(hash, ctx));
}

TEST_CASE("gelu and erf: the exact sup of |a'|, rounded up", "[analysis][hypotheses][gelu]") {
    // gelu'(x) = Phi(x) + x phi(x) at 256 bits, by MPFR (an independent evaluation).
    const numeric::context mp{256};
    auto gelu_slope = [&](const numeric::mpfr_real& x) {
        const auto two = numeric::from_int<numeric::mpfr_real>(2, mp);
        const auto one = numeric::from_int<numeric::mpfr_real>(1, mp);
        const auto pi = numeric::pi<numeric::mpfr_real>(mp);
        const auto phi = numeric::exp(-(x * x) / two) / numeric::sqrt(two * pi);
        const auto big_phi = (one + numeric::erf(x / numeric::sqrt(two))) / two;
        return big_phi + x * phi;
    };
    const auto sqrt2 = numeric::sqrt(numeric::from_int<numeric::mpfr_real>(2, mp));
    const numeric::mpfr_real sup = gelu_slope(sqrt2);
    const auto lg = analysis::activation_lipschitz(model::activation::gelu, ctx);
    REQUIRE(lg);
    // Rounded up, and tight: within 2^-100 of the maximum 1.12891...
    const numeric::mpfr_real lg_mp = numeric::mpfr_real::from_rational(*numeric::exact_of(*lg), mp);
    REQUIRE(numeric::compare(lg_mp, sup) != numeric::order::less);
    REQUIRE(upper_double(*lg) == Approx(1.1289041451851548).epsilon(1e-12));
    REQUIRE(numeric::to_double(lg_mp - sup) < 1e-30);
    // Negative control: a smaller constant is wrong. The slope of a secant near sqrt 2 exceeds
    // 1.12891 (the maximum is attained), and gelu' at +-sqrt 2 bounds every other slope.
    std::mt19937_64 rng(20261206);
    std::uniform_real_distribution<double> anywhere(-30, 30);
    for (int k = 0; k < 300; ++k) {
        const auto x = numeric::mpfr_real::from_double(anywhere(rng), mp);
        const auto s = gelu_slope(x);
        REQUIRE(numeric::compare(s, sup) != numeric::order::greater);
        REQUIRE(numeric::compare(-s, sup) == numeric::order::less);
    }
    const auto near = sqrt2 - numeric::mpfr_real::from_double(1e-6, mp);
    REQUIRE(numeric::to_double(sup - gelu_slope(near)) < 1e-12);
    REQUIRE(numeric::to_double(gelu_slope(-sqrt2)) ==
            Approx(1 - 1.1289041451851548).epsilon(1e-12));

    const auto le = analysis::activation_lipschitz(model::activation::erf, ctx);
    REQUIRE(upper_double(*le) == Approx(2 / std::sqrt(3.141592653589793)).epsilon(1e-14));
    REQUIRE(upper_double(*le) >= 2 / std::sqrt(3.141592653589793) * (1 - 1e-16));
    REQUIRE(!analysis::activation_lipschitz(model::activation::step, ctx));
    REQUIRE(upper_double(*analysis::activation_lipschitz(model::activation::tanh, ctx)) == 1.0);

    // In maps: graph nodes and MLP activations scale by the constant.
    auto map_of = [](const std::string& update) {
        model_text t;
        t.update = update;
        return t.parse().layers[0].update;
    };
    auto g = map_of(graph(R"({"id": "w", "op": "linear", "in": "y", "W": [[3, 0], [0, 1]]},
                             {"id": "out", "op": "gelu", "in": "w"})"));
    REQUIRE(upper_double(*analysis::lipschitz_bound(g, ctx)) ==
            Approx(3 * 1.1289041451851548).epsilon(1e-9));
    auto e = map_of(graph(R"({"id": "out", "op": "erf", "in": "y"})"));
    REQUIRE(upper_double(*analysis::lipschitz_bound(e, ctx)) ==
            Approx(1.1283791670955).epsilon(1e-9));
    auto m = map_of(R"({"kind": "mlp", "layers": [
        {"W": [[2, 0, 0], [0, 1, 0]], "activation": "gelu"},
        {"W": [[1, 0], [0, 1]], "activation": "erf"}]})");
    REQUIRE(upper_double(*analysis::lipschitz_bound(m, ctx)) ==
            Approx(2 * 1.1289041451851548 * 1.1283791670955).epsilon(1e-9));
    // A gelu of a constant is constant.
    auto c = map_of(graph(R"(
        {"id": "z", "op": "linear", "in": "y", "W": [[0, 0], [0, 0]], "b": [1, 2]},
        {"id": "g", "op": "gelu", "in": "z"},
        {"id": "out", "op": "add", "in": ["g", "y"]})"));
    REQUIRE(upper_double(*analysis::lipschitz_bound(c, ctx)) == Approx(1.0).epsilon(1e-12));
    model_text t;
    t.update = graph(R"({"id": "g", "op": "gelu", "in": "y"},
                        {"id": "out", "op": "add", "in": ["g", "y"]})");
    REQUIRE(certainly(find(check(t), "lipschitz-updates").holds));
}

TEST_CASE("bundled models: the Chiang & Cholak constructions and the hard examples",
          "[analysis][hypotheses]") {
    for (std::string name : {"cc-parity", "cc-first"}) {
        INFO(name);
        for (const auto& h : analysis::check_hypotheses(bundled(name))) {
            INFO(h.name << ": " << h.reason);
            REQUIRE(certainly(h.holds));
        }
    }
    for (std::string name : {"cc-parity-ln0", "cc-first-ln0"}) {
        auto h = analysis::check_hypotheses(bundled(name));
        const auto lip = find(h, "lipschitz-updates");
        INFO(name << ": " << lip.reason);
        REQUIRE(certainly(!lip.holds));
        REQUIRE(lip.reason.find("layer 1 update: layer norm with eps = 0 is not Lipschitz") == 0);
        for (std::size_t k = 0; k < 4; ++k) REQUIRE(certainly(h[k].holds));
    }
    {
        auto m = bundled("cc-parity-ln5");
        auto h = analysis::check_hypotheses(m);
        const auto lip = find(h, "lipschitz-updates");
        INFO(lip.reason);
        REQUIRE(certainly(lip.holds));
        REQUIRE(lip.reason.find("max|gamma|/sqrt(eps) <= 316.23") != std::string::npos);
        // The update's Lipschitz constant carries the 1/sqrt(eps) factor (twice: two norms).
        auto l = analysis::lipschitz_bound(m.layers[0].update, ctx);
        REQUIRE(l);
        REQUIRE(upper_double(*l) >= 1e5);
    }
    {
        auto h = analysis::check_hypotheses(bundled("hard-parity-attempt"));
        REQUIRE(certainly(find(h, "dot-product-scores").holds));
        REQUIRE(certainly(find(h, "linear-values").holds));
        REQUIRE(certainly(!find(h, "bounded-embeddings").holds));
        REQUIRE(find(h, "bounded-embeddings").reason.find("coordinate 1: 'i' grows without bound") == 0);
        REQUIRE(certainly(!find(h, "lipschitz-updates").holds));
        REQUIRE(find(h, "lipschitz-updates").reason.find("floor is discontinuous") != std::string::npos);
    }
    for (const auto& h : analysis::check_hypotheses(bundled("hard-first"))) REQUIRE(certainly(h.holds));
}

TEST_CASE("bundled negative controls: each violates the hypothesis it is named for",
          "[analysis][hypotheses]") {
    struct expect {
        const char* model;
        const char* hypothesis;
        const char* reason;
    };
    for (const expect& e : {expect{"cc-first-logn", "dot-product-scores",
                                   "layer 2 head 1 multiplies its scores by log n"},
                            expect{"soft-positional-i", "bounded-embeddings", "'i'"},
                            expect{"soft-step-update", "lipschitz-updates", "step"}}) {
        auto h = analysis::check_hypotheses(bundled(e.model));
        INFO(e.model);
        for (const auto& r : h) {
            INFO(r.name << ": " << r.reason);
            if (r.name == e.hypothesis) {
                REQUIRE(certainly(!r.holds));
                REQUIRE(r.reason.find(e.reason) != std::string::npos);
            } else if (std::string(e.hypothesis) == "bounded-embeddings" &&
                       r.name == "bounded-initial-states") {
                REQUIRE(certainly(!r.holds)); // y^(0) = v + p inherits the unbounded p
            } else {
                REQUIRE(certainly(r.holds));
            }
        }
    }
}
