// Random soft-attention models satisfying the hypotheses of Claim 2 (generators.hpp:
// soft_model): a structural spec, then a genome read by the builder.
#include "gen/generators.hpp"

#include "gen/genome.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <cassert>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace attnprop::gen {
namespace {

using namespace detail;

/// Positional atoms of soft models (bounded for every n, so the embeddings are bounded).
const std::vector<std::string> soft_atom_texts = {"1",   "(-1)^i",  "[i==1]", "i - 2*floor(i/2)",
                                                  "i/n", "(n-i)/n", "[i==n]", "1/i"};
constexpr int soft_atoms = 8;

struct soft_head_spec {
    std::size_t dk = 1;
    std::size_t dv = 1;
    bool scaled = false; ///< explicit positive rational scale instead of 1/sqrt(d_k)
};

struct soft_layer_spec {
    std::vector<soft_head_spec> heads;
    const char* act_name = "relu"; ///< the FFN activation's graph op: relu, tanh or gelu
    int ln = 0; ///< 0 none, 1 pre-LN (LN before the FFN), 2 post-LN (LN after the residual sum)
    std::size_t hidden = 1;
    int eps = 0; ///< 1/10, 1/100, 1/1000
    bool ln_affine = false;
};

struct soft_spec {
    int alphabet = 2;
    std::size_t d = 1;
    bool concat = false;
    std::size_t dtok = 1;
    std::size_t pdim = 1;
    bool sinusoidal = false;
    int base = 0; ///< 10000, 100, 10
    std::vector<int> atoms;
    std::vector<soft_layer_spec> layers;
    std::size_t outputs = 2;
    bool out_bias = false;
};

rc::Gen<soft_spec> soft_spec_gen(const soft_bounds& b) {
    const int max_dim = std::max(1, b.max_dim);
    const int max_alpha = std::clamp(b.max_alphabet, 1, 36);
    const int min_alpha = std::min(2, max_alpha);
    auto head_gen = rc::gen::map(
        rc::gen::tuple(rc::gen::inRange(1, max_dim + 1), rc::gen::inRange(1, max_dim + 1),
                       rc::gen::inRange(0, 2)),
        [](std::tuple<int, int, int> t) {
            return soft_head_spec{static_cast<std::size_t>(std::get<0>(t)),
                                  static_cast<std::size_t>(std::get<1>(t)), std::get<2>(t) == 1};
        });
    // relu first (what shrinking tends to), then the smooth activations the bounds allow.
    std::vector<const char*> act_names{"relu"};
    if (b.allow_tanh) act_names.push_back("tanh");
    if (b.allow_gelu) act_names.push_back("gelu");
    const int acts = static_cast<int>(act_names.size());
    const int lns = b.allow_layer_norm ? 3 : 1;
    auto layer_gen = rc::gen::mapcat(
        rc::gen::inRange(1, std::max(1, b.max_heads) + 1), [=](int heads) {
            return rc::gen::map(
                rc::gen::tuple(rc::gen::container<std::vector<soft_head_spec>>(
                                   static_cast<std::size_t>(heads), head_gen),
                               rc::gen::inRange(0, acts), rc::gen::inRange(0, lns),
                               rc::gen::inRange(1, max_dim + 1), rc::gen::inRange(0, 3),
                               rc::gen::inRange(0, 2)),
                [act_names](std::tuple<std::vector<soft_head_spec>, int, int, int, int, int> t) {
                    soft_layer_spec l;
                    l.heads = std::move(std::get<0>(t));
                    l.act_name = act_names[static_cast<std::size_t>(std::get<1>(t))];
                    l.ln = std::get<2>(t);
                    l.hidden = static_cast<std::size_t>(std::get<3>(t));
                    l.eps = std::get<4>(t);
                    l.ln_affine = std::get<5>(t) == 1;
                    return l;
                });
        });
    auto top = rc::gen::tuple(rc::gen::inRange(min_alpha, max_alpha + 1),
                              rc::gen::inRange(1, max_dim + 1), rc::gen::inRange(0, 2),
                              rc::gen::inRange(0, code_values), rc::gen::inRange(0, 2),
                              rc::gen::inRange(0, 3),
                              rc::gen::inRange(1, std::max(1, b.max_layers) + 1),
                              rc::gen::inRange(2, 4), rc::gen::inRange(0, 2));
    return rc::gen::mapcat(top, [=](std::tuple<int, int, int, int, int, int, int, int, int> t) {
        soft_spec s;
        s.alphabet = std::get<0>(t);
        s.d = static_cast<std::size_t>(std::get<1>(t));
        s.concat = std::get<2>(t) == 1 && s.d >= 2;
        std::size_t dtok = 0, pdim = 0;
        split_dims(s.concat ? input_choice::concat : input_choice::add, s.d, std::get<3>(t), 1,
                   max_dim, dtok, pdim);
        s.dtok = dtok;
        s.pdim = pdim;
        s.sinusoidal = std::get<4>(t) == 1;
        s.base = std::get<5>(t);
        const auto layers = static_cast<std::size_t>(std::get<6>(t));
        s.outputs = static_cast<std::size_t>(std::get<7>(t));
        s.out_bias = std::get<8>(t) == 1;
        const std::size_t natoms = s.sinusoidal ? 0 : s.pdim;
        return rc::gen::map(
            rc::gen::tuple(
                rc::gen::container<std::vector<int>>(natoms, rc::gen::inRange(0, soft_atoms)),
                rc::gen::container<std::vector<soft_layer_spec>>(layers, layer_gen)),
            [s](std::tuple<std::vector<int>, std::vector<soft_layer_spec>> u) {
                soft_spec out = s;
                out.atoms = std::move(std::get<0>(u));
                out.layers = std::move(std::get<1>(u));
                return out;
            });
    });
}

json::value soft_build(const soft_spec& s, genome_reader& g) {
    auto coef = [&] { return g.fraction(4, 4); };
    auto coefs = [&](std::size_t k) {
        std::vector<rational> v;
        for (std::size_t t = 0; t < k; ++t) v.push_back(coef());
        return v;
    };
    auto matrix = [&](std::size_t rows, std::size_t cols) {
        return dense{rows, cols, coefs(rows * cols)};
    };
    json::value doc = model_header("soft", "generated-soft",
                                   "random soft-attention model from attnprop's generator "
                                   "(gen::soft_model) satisfying the hypotheses of Claim 2",
                                   s.alphabet, s.d);
    json::value tokens = json::value::object();
    for (int k = 0; k <= s.alphabet; ++k)
        tokens.set(k == s.alphabet ? eos_name : symbol_name(k), jvec(coefs(s.dtok)));
    doc.set("token_embedding", std::move(tokens));

    json::value pos = json::value::object();
    if (s.sinusoidal) {
        static const long bases[] = {10000, 100, 10};
        pos.set("kind", jstr("sinusoidal"));
        pos.set("dim", jint(s.pdim));
        pos.set("base", json::value::number(bases[s.base]));
    } else {
        json::value coords = json::value::array();
        for (int a : s.atoms) {
            const rational c1 = coef(), c0 = coef();
            coords.push_back(coordinate(soft_atom_texts[static_cast<std::size_t>(a)], c1, c0));
        }
        pos.set("kind", jstr("formula"));
        pos.set("dim", jint(s.pdim));
        pos.set("coordinates", std::move(coords));
    }
    doc.set("positional", std::move(pos));
    doc.set("input", jstr(s.concat ? "concat" : "add"));

    static const char* const eps_text[] = {"1/10", "1/100", "1/1000"};
    json::value layers = json::value::array();
    for (const soft_layer_spec& ls : s.layers) {
        json::value heads = json::value::array();
        std::size_t bdim = 0;
        for (const soft_head_spec& hs : ls.heads) {
            json::value score = json::value::object();
            score.set("kind", jstr("dot"));
            score.set("Q", matrix(hs.dk, s.d).to_json());
            score.set("K", matrix(hs.dk, s.d).to_json());
            if (hs.scaled) score.set("scale", jnum(g.positive(4, 4)));
            json::value value = json::value::object();
            value.set("kind", jstr("linear"));
            value.set("V", matrix(hs.dv, s.d).to_json());
            json::value head = json::value::object();
            head.set("score", std::move(score));
            head.set("value", std::move(value));
            heads.push_back(std::move(head));
            bdim += hs.dv;
        }
        json::value nodes = json::value::array();
        auto node = [&](const std::string& id, const char* op, std::vector<std::string> in) {
            json::value nd = json::value::object();
            nd.set("id", jstr(id));
            nd.set("op", jstr(op));
            nd.set("in", jnames(in));
            return nd;
        };
        auto linear = [&](const std::string& id, const std::string& in, std::size_t rows,
                          std::size_t cols, bool bias) {
            json::value nd = node(id, "linear", {in});
            nd.set("W", matrix(rows, cols).to_json());
            if (bias) nd.set("b", jvec(coefs(rows)));
            nodes.push_back(std::move(nd));
        };
        auto layer_norm = [&](const std::string& id, const std::string& in) {
            json::value nd = node(id, "layer_norm", {in});
            nd.set("eps", jstr(eps_text[ls.eps]));
            if (ls.ln_affine) {
                nd.set("gamma", jvec(coefs(s.d)));
                nd.set("beta", jvec(coefs(s.d)));
            }
            nodes.push_back(std::move(nd));
        };
        linear("attn", "b", s.d, bdim, false);
        nodes.push_back(node("res", "add", {"y", "attn"}));
        std::string ffn_in = "res";
        if (ls.ln == 1) {
            layer_norm("ln", "res");
            ffn_in = "ln";
        }
        linear("h", ffn_in, ls.hidden, s.d, true);
        nodes.push_back(node("act", ls.act_name, {"h"}));
        linear("ffn", "act", s.d, ls.hidden, false);
        nodes.push_back(node("out", "add", {"res", "ffn"}));
        std::string output = "out";
        if (ls.ln == 2) {
            layer_norm("ln", "out");
            output = "ln";
        }
        json::value update = json::value::object();
        update.set("kind", jstr("graph"));
        update.set("nodes", std::move(nodes));
        update.set("output", jstr(output));
        json::value layer = json::value::object();
        layer.set("heads", std::move(heads));
        layer.set("update", std::move(update));
        layers.push_back(std::move(layer));
    }
    doc.set("layers", std::move(layers));

    json::value readout = json::value::object();
    readout.set("kind", jstr("softmax"));
    json::value symbols = json::value::array();
    for (std::size_t k = 0; k < s.outputs; ++k) {
        const int sk = static_cast<int>(k);
        symbols.push_back(jstr(sk < s.alphabet    ? symbol_name(sk)
                               : sk == s.alphabet ? std::string(eos_name)
                                                  : "out" + std::to_string(k)));
    }
    readout.set("symbols", std::move(symbols));
    readout.set("W", matrix(s.outputs, s.d).to_json());
    if (s.out_bias) readout.set("c", jvec(coefs(s.outputs)));
    doc.set("readout", std::move(readout));
    return doc;
}

} // namespace

rc::Gen<model::model<numeric::rational>> soft_model(const soft_bounds& b) {
    return rc::gen::mapcat(soft_spec_gen(b), [](soft_spec s) {
        const std::vector<int> none;
        genome_reader dry(none);
        soft_build(s, dry);
        // Genes are uniform whatever RapidCheck's size (inRange alone scales its range with
        // the size, so early cases would be mostly zero coefficients: zero value maps and
        // output projections, models whose influence is exactly 0); they still shrink to 0.
        return rc::gen::map(
            rc::gen::container<std::vector<int>>(dry.consumed(),
                                                 rc::gen::resize(100, rc::gen::inRange(0, gene_values))),
            [s](const std::vector<int>& genes) {
                genome_reader g(genes);
                json::value doc = soft_build(s, g);
                assert(g.consumed() == genes.size());
                return parse_doc(doc);
            });
    });
}

} // namespace attnprop::gen
