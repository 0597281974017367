// Model files: every construct of docs/model-format.md, exact numbers, canonical writing and
// round trips, error messages with pointer and line:column, and the model.cpp helpers.

#include "model/model_file.hpp"
#include "numeric/limits.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

using namespace attnprop::model;
namespace json = attnprop::json;
namespace numeric = attnprop::numeric;
using numeric::rational;

namespace {

rational q(const char* text) { return *numeric::parse_rational(text); }

/// The worked example of docs/model-format.md: FIRST (accept iff x_1 = 1) with one hard layer.
const std::string first_model = R"json({
  "format": "attnprop-model",
  "version": 1,
  "name": "first",
  "attention": "hard",
  "alphabet": ["0", "1"],
  "eos": "$",
  "d": 2,
  "token_embedding": {"0": [0, 0], "1": [1, 0], "$": [0, 0]},
  "positional": {"kind": "formula", "dim": 2, "coordinates": [0, "[i==1]"]},
  "input": "add",
  "layers": [
    {
      "heads": [
        {
          "score": {"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[0, 1]]},
          "value": {"kind": "linear", "V": [[1, 0]]}
        }
      ],
      "update": {"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]}
    }
  ],
  "readout": {"kind": "threshold", "w": [1, 0], "t": 0.5}
}
)json";

/// Hard model: formula positions (object form, a numeric coordinate), a graph input map, dot
/// and map scores, linear, table and hash values, graph / mlp / affine maps, sparse and
/// identity matrices, p/q strings and exponents, a map readout.
const std::string hard_model = R"json({
  "format": "attnprop-model",
  "version": 1,
  "name": "every hard construct",
  "description": "unit-test model",
  "source": "model_file_test.cpp",
  "attention": "hard",
  "alphabet": ["a", "b", "c"],
  "eos": "<eos>",
  "d": 4,
  "token_embedding": {
    "<eos>": [0, 1],
    "a": [1, 0],
    "b": ["1/3", 0.1],
    "c": [1e-5, "-2.50E+1"]
  },
  "positional": {"kind": "formula", "dim": 3, "coordinates": {"2": "(-1)^i", "0": "i/n", "1": 7}},
  "input": {"kind": "map", "map": {"kind": "graph", "nodes": [
    {"id": "vp", "op": "concat", "in": ["v", "p"]},
    {"id": "h", "op": "linear", "in": "vp",
     "W": {"rows": 4, "cols": 5, "entries": [[0, 0, 1], [1, 1, 1], [2, 2, 1], [3, 4, "1/2"]]},
     "b": [0, 0, 0, 1]}
  ], "output": "h"}},
  "layers": [
    {
      "heads": [
        {
          "score": {"kind": "dot", "Q": {"identity": 4, "scale": 2},
                    "K": {"rows": 4, "cols": 4, "entries": [[0, 1, 1]]},
                    "q_bias": [0, 0, 0, 1], "k_bias": [1, 0, 0, 0],
                    "scale": {"factor": 3, "inv_sqrt": 2}},
          "value": {"kind": "linear", "V": [[1, 0, 0, 0], [0, 1, 0, 0]], "bias": ["-1/2", 0]}
        },
        {
          "score": {"kind": "map", "map": {"kind": "mlp", "layers": [
            {"W": [[1, 0, 0, 0, -1, 0, 0, 0], [0, 1, 0, 0, 0, -1, 0, 0], [0, 0, 1, 1, 0, 0, 1, 1]],
             "b": [0, 0, -1], "activation": "relu"},
            {"W": [[1, 1, -1]], "activation": "identity"}]}},
          "value": {"kind": "map", "map": {"kind": "table", "entries": [
            {"in": [0, 0, 0, 0], "out": [1]},
            {"in": [1, 0, "2/4", 0], "out": ["-7/3"]}], "default": [0]}}
        }
      ],
      "update": {"kind": "graph", "nodes": [
        {"id": "s", "op": "slice", "in": "b", "from": 1, "to": 3},
        {"id": "r", "op": "relu", "in": "y"},
        {"id": "t", "op": "tanh", "in": "r"},
        {"id": "st", "op": "step", "in": "y"},
        {"id": "fl", "op": "floor", "in": "st"},
        {"id": "sum", "op": "add", "in": ["y", "r", "fl"]},
        {"id": "diff", "op": "sub", "in": ["sum", "t"]},
        {"id": "prod", "op": "mul", "in": ["diff", "y"]},
        {"id": "sc", "op": "scale", "in": "prod", "factor": "2/3"},
        {"id": "ln", "op": "layer_norm", "in": "sc", "eps": 1e-5, "gamma": [1, 1, 1, 1],
         "beta": [0, 0, 0, 0.5]},
        {"id": "unused", "op": "relu", "in": "b2"},
        {"id": "cat", "op": "concat", "in": ["ln", "s", "b1"]},
        {"id": "out", "op": "linear", "in": "cat",
         "W": [[1, 0, 0, 0, 1, 0, 0, 0], [0, 1, 0, 0, 0, 1, 0, 0],
               [0, 0, 1, 0, 0, 0, 1, 0], [0, 0, 0, 1, 0, 0, 0, 1]],
         "b": [0, 0, 0, "1/1000"]}
      ], "output": "out"}
    },
    {
      "heads": [
        {
          "score": {"kind": "dot", "Q": [[1, 0, 0, 0]], "K": [[0, 1, 0, 0]], "scale": 0.25},
          "value": {"kind": "map", "map": {"kind": "hash", "seed": 18446744073709551615,
                                           "out_dim": 2, "range": 3, "denominator": 4}}
        }
      ],
      "update": {"kind": "affine",
                 "W": {"rows": 4, "cols": 6,
                       "entries": [[0, 0, 1], [1, 1, 1], [2, 2, 1], [3, 3, 1], [0, 4, 1]]}}
    }
  ],
  "readout": {"kind": "map", "map": {"kind": "affine", "W": [[1, -1, 0, 0]], "b": [0.5]}}
}
)json";

/// Soft model: a positional table, concatenated input, an mlp update, a softmax readout.
const std::string soft_model = R"json({
  "format": "attnprop-model",
  "version": 1,
  "name": "soft dyck",
  "attention": "soft",
  "alphabet": ["(", ")"],
  "eos": "$",
  "d": 3,
  "token_embedding": {"(": [1], ")": [-1], "$": [0]},
  "positional": {"kind": "table", "rows": [[1, 0], [0, 1], [1, 1], ["1/3", "2/3"]]},
  "input": "concat",
  "layers": [
    {
      "heads": [
        {
          "score": {"kind": "dot", "Q": [[1, 0, 0]], "K": [[0, 1, 0]], "scale": "default"},
          "value": {"kind": "linear", "V": {"identity": 3}}
        }
      ],
      "update": {"kind": "mlp", "layers": [
        {"W": [[1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1]], "b": [0, 0, 0],
         "activation": "identity"}]}
    }
  ],
  "readout": {"kind": "softmax", "symbols": ["(", ")", "$"],
              "W": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "c": [0, 0, "1/7"]}
}
)json";

/// Sinusoidal positions, added input, no layers, threshold readout.
const std::string sinus_model = R"json({
  "format": "attnprop-model", "version": 1, "name": "sinus", "attention": "soft",
  "alphabet": ["x"], "eos": "#", "d": 4,
  "token_embedding": {"x": [1, 2, 3, 4], "#": [0, 0, 0, 0]},
  "positional": {"kind": "sinusoidal", "dim": 4, "base": 100},
  "input": "add", "layers": [],
  "readout": {"kind": "threshold", "w": [1, 0, 0, 0], "t": "-1/3"}
})json";

/// line:column of the first occurrence of `needle` in `text` (plus `offset` bytes).
std::string loc_of(const std::string& text, std::string_view needle, std::size_t offset = 0) {
    std::size_t pos = text.find(needle);
    REQUIRE(pos != std::string::npos);
    pos += offset;
    std::size_t line = 1, col = 1;
    for (std::size_t k = 0; k < pos; ++k) {
        if (text[k] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return std::to_string(line) + ":" + std::to_string(col);
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
    std::size_t pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    text.replace(pos, from.size(), to);
    return text;
}

/// Parses `text` expecting an error; returns it.
model_file_error error_of(const std::string& text) {
    try {
        parse_model(text, "m.json");
    } catch (const model_file_error& e) {
        return e;
    }
    FAIL("no error for:\n" << text);
    throw std::logic_error("unreachable");
}

struct expected_error {
    std::string message; ///< a substring of message()
    std::string pointer;
    std::string where;   ///< "line:col"
};

void require_error(const std::string& text, const expected_error& want) {
    model_file_error e = error_of(text);
    INFO(e.what());
    REQUIRE(e.message().find(want.message) != std::string::npos);
    REQUIRE(e.pointer() == want.pointer);
    REQUIRE(json::to_string(e.where()) == want.where);
    REQUIRE(e.file() == "m.json");
    std::string what = e.what();
    REQUIRE(what.rfind("m.json:" + want.where + ": error: ", 0) == 0);
    if (!want.pointer.empty())
        REQUIRE(what.size() >= want.pointer.size() + 6);
    if (!want.pointer.empty())
        REQUIRE(what.substr(what.size() - want.pointer.size() - 6) ==
                " (at " + want.pointer + ")");
}

/// Like require_error, with the expected position being where `needle` (plus `offset` bytes)
/// first occurs in `text`.
void require_error_at(const std::string& text, const std::string& message,
                      const std::string& pointer, std::string_view needle,
                      std::size_t offset = 0) {
    require_error(text, {message, pointer, loc_of(text, needle, offset)});
}

// --- field-by-field comparison of exact models ---------------------------------------------------

void require_same(const matrix<rational>& a, const matrix<rational>& b) {
    REQUIRE(a.rows == b.rows);
    REQUIRE(a.cols == b.cols);
    REQUIRE(a.data == b.data);
    REQUIRE(a.nonzero == b.nonzero);
}

void require_same(const affine_map<rational>& a, const affine_map<rational>& b) {
    require_same(a.W, b.W);
    REQUIRE(a.b == b.b);
    REQUIRE(a.b_is_zero == b.b_is_zero);
}

void require_same_op(const input_op& a, const input_op& b) {
    REQUIRE(a.input_name == b.input_name);
    REQUIRE(a.offset == b.offset);
}
void require_same_op(const linear_op<rational>& a, const linear_op<rational>& b) {
    require_same(a.lin, b.lin);
}
void require_same_op(const scale_op<rational>& a, const scale_op<rational>& b) {
    REQUIRE(a.factor == b.factor);
}
void require_same_op(const layer_norm_op<rational>& a, const layer_norm_op<rational>& b) {
    REQUIRE(a.eps_exact == b.eps_exact);
    REQUIRE(a.eps == b.eps);
    REQUIRE(a.gamma == b.gamma);
    REQUIRE(a.beta == b.beta);
}
void require_same_op(const slice_op& a, const slice_op& b) { REQUIRE(a.from == b.from); }
/// Ops without parameters.
template <class T> void require_same_op(const T&, const T&) {}

void require_same(const map<rational>& a, const map<rational>& b) {
    REQUIRE(a.in_dim == b.in_dim);
    REQUIRE(a.out_dim == b.out_dim);
    REQUIRE(a.impl.index() == b.impl.index());
    if (const auto* af = std::get_if<affine_map<rational>>(&a.impl)) {
        require_same(*af, std::get<affine_map<rational>>(b.impl));
    } else if (const auto* m = std::get_if<mlp_map<rational>>(&a.impl)) {
        const auto& n = std::get<mlp_map<rational>>(b.impl);
        REQUIRE(m->layers.size() == n.layers.size());
        REQUIRE(m->activations == n.activations);
        for (std::size_t k = 0; k < m->layers.size(); ++k) require_same(m->layers[k], n.layers[k]);
    } else if (const auto* g = std::get_if<graph_map<rational>>(&a.impl)) {
        const auto& h = std::get<graph_map<rational>>(b.impl);
        REQUIRE(g->output == h.output);
        REQUIRE(g->nodes.size() == h.nodes.size());
        for (std::size_t k = 0; k < g->nodes.size(); ++k) {
            const auto& x = g->nodes[k];
            const auto& y = h.nodes[k];
            REQUIRE(x.id == y.id);
            REQUIRE(x.op.index() == y.op.index());
            REQUIRE(x.args == y.args);
            REQUIRE(x.dim == y.dim);
            std::visit([&]<class T>(const T& p) { require_same_op(p, std::get<T>(y.op)); }, x.op);
        }
    } else if (const auto* t = std::get_if<table_map>(&a.impl)) {
        const auto& u = std::get<table_map>(b.impl);
        REQUIRE(t->entries == u.entries);
        REQUIRE(t->fallback == u.fallback);
    } else {
        const auto& x = std::get<hash_map>(a.impl);
        const auto& y = std::get<hash_map>(b.impl);
        REQUIRE(x.seed == y.seed);
        REQUIRE(x.range == y.range);
        REQUIRE(x.denominator == y.denominator);
    }
}

void require_same(const std::optional<map<rational>>& a, const std::optional<map<rational>>& b) {
    REQUIRE(a.has_value() == b.has_value());
    if (a) require_same(*a, *b);
}

void require_same(const model<rational>& a, const model<rational>& b) {
    REQUIRE(a.name == b.name);
    REQUIRE(a.description == b.description);
    REQUIRE(a.source == b.source);
    REQUIRE(a.attention == b.attention);
    REQUIRE(a.sigma.symbols == b.sigma.symbols);
    REQUIRE(a.sigma.eos == b.sigma.eos);
    REQUIRE(a.d == b.d);
    REQUIRE(a.token == b.token);
    const positional_spec& p = *a.positional;
    const positional_spec& r = *b.positional;
    REQUIRE(p.type == r.type);
    REQUIRE(p.dim == r.dim);
    REQUIRE(p.table == r.table);
    REQUIRE(p.base == r.base);
    REQUIRE(p.formulas.size() == r.formulas.size());
    for (std::size_t k = 0; k < p.formulas.size(); ++k) {
        REQUIRE(p.formulas[k].has_value() == r.formulas[k].has_value());
        if (p.formulas[k]) REQUIRE(p.formulas[k]->text() == r.formulas[k]->text());
    }
    REQUIRE(a.input == b.input);
    require_same(a.input_fn, b.input_fn);
    REQUIRE(a.layers.size() == b.layers.size());
    for (std::size_t k = 0; k < a.layers.size(); ++k) {
        const auto& x = a.layers[k];
        const auto& y = b.layers[k];
        REQUIRE(x.heads.size() == y.heads.size());
        for (std::size_t h = 0; h < x.heads.size(); ++h) {
            const auto& s = x.heads[h].score;
            const auto& t = y.heads[h].score;
            REQUIRE(s.type == t.type);
            require_same(s.Q, t.Q);
            require_same(s.K, t.K);
            REQUIRE(s.scale_factor == t.scale_factor);
            REQUIRE(s.scale_inv_sqrt == t.scale_inv_sqrt);
            REQUIRE(s.default_scale == t.default_scale);
            REQUIRE(s.scale == t.scale);
            REQUIRE(s.length_scale == t.length_scale);
            REQUIRE(s.beta.has_value() == t.beta.has_value());
            if (s.beta) {
                // A rational constant keeps its value (its spelling may change: 1e2 -> 100).
                REQUIRE(s.beta->constant_value() == t.beta->constant_value());
                if (!s.beta->constant_value()) REQUIRE(s.beta->text() == t.beta->text());
            }
            require_same(s.fn, t.fn);
            const auto& v = x.heads[h].value;
            const auto& w = y.heads[h].value;
            REQUIRE(v.type == w.type);
            require_same(v.V, w.V);
            require_same(v.fn, w.fn);
        }
        require_same(x.update, y.update);
    }
    REQUIRE(a.out.type == b.out.type);
    REQUIRE(a.out.w == b.out.w);
    REQUIRE(a.out.w_exact == b.out.w_exact);
    REQUIRE(a.out.t == b.out.t);
    REQUIRE(a.out.t_exact == b.out.t_exact);
    require_same(a.out.fn, b.out.fn);
    REQUIRE(a.out.symbols == b.out.symbols);
    require_same(a.out.logits, b.out.logits);
}

void require_round_trip(const std::string& text) {
    model<rational> m = parse_model(text, "in.json");
    std::string w1 = write_model(m);
    INFO(w1);
    model<rational> m2 = parse_model(w1, "written.json");
    require_same(m, m2);
    std::string w2 = write_model(m2);
    REQUIRE(w1 == w2);
    REQUIRE(w1.back() == '\n');
}

} // namespace

TEST_CASE("the worked example parses into the documented model", "[model_file]") {
    model<rational> m = parse_model(first_model, "first.json");
    REQUIRE(m.name == "first");
    REQUIRE(m.description.empty());
    REQUIRE(m.attention == attention_kind::hard);
    REQUIRE(m.sigma.symbols == std::vector<std::string>{"0", "1"});
    REQUIRE(m.sigma.eos == "$");
    REQUIRE(m.d == 2);
    REQUIRE(m.token == std::vector<vec<rational>>{{0, 0}, {1, 0}, {0, 0}});
    REQUIRE(m.positional->type == positional_spec::kind::formula);
    REQUIRE(m.positional->dim == 2);
    REQUIRE(!m.positional->formulas[0]);
    REQUIRE(m.positional->formulas[1]->text() == "[i==1]");
    REQUIRE(!m.positional->max_length());
    REQUIRE(!m.positional->needs_real_arithmetic());
    REQUIRE(m.input == input_kind::add);
    REQUIRE(!m.input_fn);
    REQUIRE(m.layers.size() == 1);
    const auto& h = m.layers[0].heads.at(0);
    REQUIRE(h.score.type == score_spec<rational>::kind::dot);
    REQUIRE(h.score.Q.W.rows == 1);
    REQUIRE(h.score.Q.W.cols == 2);
    REQUIRE(h.score.Q.W.is_zero());
    REQUIRE(h.score.Q.b == vec<rational>{1});
    REQUIRE(!h.score.Q.b_is_zero);
    REQUIRE(h.score.K.b.empty());
    REQUIRE(h.score.K.W.nonzero == std::vector<std::vector<std::size_t>>{{1}});
    REQUIRE(h.score.default_scale);
    REQUIRE(h.score.scale_factor == 1);
    REQUIRE(h.score.scale_inv_sqrt == 1);
    REQUIRE(h.score.scale == rational(1));
    REQUIRE(h.value.out_dim() == 1);
    const map<rational>& u = m.layers[0].update;
    REQUIRE(u.in_dim == 3);
    REQUIRE(u.out_dim == 2);
    REQUIRE(std::get<affine_map<rational>>(u.impl).W.nonzero ==
            std::vector<std::vector<std::size_t>>{{2}, {1}});
    REQUIRE(m.out.type == readout<rational>::kind::threshold);
    REQUIRE(m.out.w_exact == vec<rational>{1, 0});
    REQUIRE(m.out.t_exact == rational(1, 2));
    REQUIRE(m.out.t == rational(1, 2));
    REQUIRE(m.out.is_recognizer());
    REQUIRE(exact_blockers(m).empty());
}

TEST_CASE("every hard construct parses", "[model_file]") {
    model<rational> m = parse_model(hard_model, "hard.json");
    REQUIRE(m.description == "unit-test model");
    REQUIRE(m.source == "model_file_test.cpp");
    REQUIRE(m.sigma.eos == "<eos>");
    REQUIRE(m.sigma.eos_index() == 3);
    // Token embeddings are stored in alphabet order, eos last, whatever the file's key order.
    REQUIRE(m.token[0] == vec<rational>{1, 0});
    REQUIRE(m.token[1] == vec<rational>{rational(1, 3), rational(1, 10)});
    REQUIRE(m.token[2] == vec<rational>{rational(1, 100000), -25});
    REQUIRE(m.token[3] == vec<rational>{0, 1});

    const positional_spec& p = *m.positional;
    REQUIRE(p.dim == 3);
    REQUIRE(p.formulas[0]->text() == "i/n");
    REQUIRE(p.formulas[1]->text() == "7");
    REQUIRE(p.formulas[2]->text() == "(-1)^i");

    REQUIRE(m.input == input_kind::map);
    const auto& in = std::get<graph_map<rational>>(m.input_fn->impl);
    REQUIRE(m.input_fn->in_dim == 5);
    REQUIRE(m.input_fn->out_dim == 4);
    // Inputs v and p get nodes before their first use.
    REQUIRE(in.nodes.size() == 4);
    REQUIRE(std::holds_alternative<input_op>(in.nodes[0].op));
    REQUIRE(std::get<input_op>(in.nodes[0].op).input_name == "v");
    REQUIRE(std::get<input_op>(in.nodes[0].op).offset == 0);
    REQUIRE(in.nodes[0].dim == 2);
    REQUIRE(std::get<input_op>(in.nodes[1].op).input_name == "p");
    REQUIRE(std::get<input_op>(in.nodes[1].op).offset == 2);
    REQUIRE(in.nodes[1].dim == 3);
    REQUIRE(in.nodes[2].args == std::vector<std::size_t>{0, 1});
    REQUIRE(std::get<linear_op<rational>>(in.nodes[3].op).lin.W.at(3, 4) == rational(1, 2));
    REQUIRE(in.output == 3);

    const auto& l1 = m.layers.at(0);
    const auto& s1 = l1.heads[0].score;
    REQUIRE(s1.Q.W.at(2, 2) == 2);
    REQUIRE(s1.Q.W.at(2, 1) == 0);
    REQUIRE(s1.K.W.nonzero == std::vector<std::vector<std::size_t>>{{1}, {}, {}, {}});
    REQUIRE(!s1.default_scale);
    REQUIRE(s1.scale_factor == 3);
    REQUIRE(s1.scale_inv_sqrt == 2);
    REQUIRE(!s1.scale);
    REQUIRE(l1.heads[0].value.V.b == vec<rational>{rational(-1, 2), 0});
    REQUIRE(l1.heads[0].value.out_dim() == 2);
    REQUIRE(l1.heads[1].score.type == score_spec<rational>::kind::map);
    const auto& mlp = std::get<mlp_map<rational>>(l1.heads[1].score.fn->impl);
    REQUIRE(mlp.activations == std::vector<activation>{activation::relu, activation::identity});
    REQUIRE(l1.heads[1].score.fn->in_dim == 8);
    const auto& table = std::get<table_map>(l1.heads[1].value.fn->impl);
    REQUIRE(table.entries.at({1, 0, rational(1, 2), 0}) == vec<rational>{rational(-7, 3)});
    REQUIRE(table.fallback == vec<rational>{0});
    REQUIRE(l1.heads[1].value.out_dim() == 1);

    const map<rational>& up = l1.update;
    REQUIRE(up.in_dim == 4 + 2 + 1);
    const auto& g = std::get<graph_map<rational>>(up.impl);
    // b (slice of b1 b2), then y, then b2 and b1 as they are first used.
    REQUIRE(std::get<input_op>(g.nodes[0].op).input_name == "b");
    REQUIRE(std::get<input_op>(g.nodes[0].op).offset == 4);
    REQUIRE(g.nodes[0].dim == 3);
    REQUIRE(std::holds_alternative<slice_op>(g.nodes[1].op));
    REQUIRE(std::get<slice_op>(g.nodes[1].op).from == 1);
    REQUIRE(g.nodes[1].dim == 2);
    REQUIRE(std::get<input_op>(g.nodes[2].op).input_name == "y");
    const auto find = [&](const std::string& id) -> const graph_node<rational>& {
        for (const auto& nd : g.nodes)
            if (nd.id == id) return nd;
        FAIL("no node " << id);
        throw std::logic_error("unreachable");
    };
    const auto& ln = std::get<layer_norm_op<rational>>(find("ln").op);
    REQUIRE(ln.eps_exact == rational(1, 100000));
    REQUIRE(ln.eps == rational(1, 100000));
    REQUIRE(ln.beta == vec<rational>{0, 0, 0, rational(1, 2)});
    REQUIRE(std::get<scale_op<rational>>(find("sc").op).factor == rational(2, 3));
    REQUIRE(find("sum").args.size() == 3);
    REQUIRE(std::get<input_op>(find("b2").op).offset == 6);
    REQUIRE(std::get<input_op>(find("b1").op).offset == 4);
    REQUIRE(find("b1").dim == 2);
    REQUIRE(find("cat").dim == 8);
    REQUIRE(g.nodes[g.output].id == "out");
    REQUIRE(up.out_dim == 4);
    REQUIRE(needs_real_arithmetic(up));

    const auto& l2 = m.layers.at(1);
    REQUIRE(l2.heads[0].score.scale == rational(1, 4));
    REQUIRE(l2.heads[0].score.scale_inv_sqrt == 1);
    const auto& hm = std::get<hash_map>(l2.heads[0].value.fn->impl);
    REQUIRE(hm.seed == 18446744073709551615ULL);
    REQUIRE(hm.range == 3);
    REQUIRE(hm.denominator == 4);
    REQUIRE(l2.heads[0].value.out_dim() == 2);
    REQUIRE(l2.update.in_dim == 6);

    REQUIRE(m.out.type == readout<rational>::kind::map);
    REQUIRE(m.out.fn->out_dim == 1);
    REQUIRE(m.out.is_recognizer());
}

TEST_CASE("soft and sinusoidal models parse", "[model_file]") {
    model<rational> s = parse_model(soft_model, "soft.json");
    REQUIRE(s.attention == attention_kind::soft);
    REQUIRE(s.positional->type == positional_spec::kind::table);
    REQUIRE(s.positional->dim == 2);
    REQUIRE(s.positional->max_length() == 4L);
    REQUIRE(s.positional->table[3] == vec<rational>{rational(1, 3), rational(2, 3)});
    REQUIRE(s.input == input_kind::concat);
    const auto& sc = s.layers[0].heads[0].score;
    REQUIRE(sc.default_scale);
    REQUIRE(sc.scale_inv_sqrt == 1);
    REQUIRE(s.layers[0].heads[0].value.V.W.at(2, 2) == 1);
    REQUIRE(s.out.type == readout<rational>::kind::softmax);
    REQUIRE(!s.out.is_recognizer());
    REQUIRE(s.out.symbols == std::vector<std::string>{"(", ")", "$"});
    REQUIRE(s.out.logits.b == vec<rational>{0, 0, rational(1, 7)});

    model<rational> t = parse_model(sinus_model, "sinus.json");
    REQUIRE(t.positional->type == positional_spec::kind::sinusoidal);
    REQUIRE(t.positional->base == 100);
    REQUIRE(t.positional->needs_real_arithmetic());
    REQUIRE(t.layers.empty());
    REQUIRE(t.out.t_exact == rational(-1, 3));
}

TEST_CASE("default scale over several key dimensions is 1/sqrt(d_k)", "[model_file]") {
    std::string text =
        replaced(first_model, R"("Q": [[0, 0]], "q_bias": [1], "K": [[0, 1]])",
                 R"("Q": [[0, 0], [0, 0]], "q_bias": [1, 0], "K": [[0, 1], [1, 0]])");
    model<rational> m = parse_model(text, "m.json");
    const auto& s = m.layers[0].heads[0].score;
    REQUIRE(s.default_scale);
    REQUIRE(s.scale_factor == 1);
    REQUIRE(s.scale_inv_sqrt == 2);
    REQUIRE(!s.scale);
    // Hard attention never needs the scale.
    REQUIRE(exact_blockers(m).empty());
}

TEST_CASE("length-scaled scores parse, round-trip and reject other values", "[model_file]") {
    const std::string from = R"("K": [[0, 1]]})";
    std::string text = replaced(first_model, from, R"("K": [[0, 1]], "length_scale": "log"})");
    model<rational> m = parse_model(text, "m.json");
    REQUIRE(m.layers[0].heads[0].score.length_scale ==
            score_spec<rational>::length_scaling::log);
    REQUIRE(parse_model(first_model, "m.json").layers[0].heads[0].score.length_scale ==
            score_spec<rational>::length_scaling::none);
    require_round_trip(text);
    REQUIRE(write_model(m).find(R"("length_scale": "log")") != std::string::npos);
    REQUIRE(write_model(parse_model(first_model, "m.json")).find("length_scale") == std::string::npos);
    // Hard attention ignores the factor: no new blocker for the exact scalar.
    REQUIRE(exact_blockers(m).empty());
    require_error_at(replaced(first_model, from, R"("K": [[0, 1]], "length_scale": "sqrt"})"),
                     "length_scale must be \"log\"", "/layers/0/heads/0/score/length_scale",
                     R"("sqrt")");
    require_error_at(replaced(first_model, from, R"("K": [[0, 1]], "length_scale": 1})"),
                     "length_scale must be \"log\"", "/layers/0/heads/0/score/length_scale",
                     R"("length_scale": 1)", 16);
}

TEST_CASE("inverse temperatures parse, round-trip and are refused where they are wrong",
          "[model_file]") {
    const std::string from = R"("K": [[0, 1]]})";
    auto with = [&](const std::string& beta) {
        return replaced(first_model, from, R"("K": [[0, 1]], "beta": )" + beta + "}");
    };
    // A number is exact (0 included); a formula is in n alone.
    model<rational> m = parse_model(with("100"), "m.json");
    REQUIRE(m.layers[0].heads[0].score.beta->constant_value() == rational(100));
    REQUIRE(parse_model(with("0"), "m.json").layers[0].heads[0].score.beta->constant_value() ==
            rational(0));
    REQUIRE(parse_model(with("\"1/3\""), "m.json").layers[0].heads[0].score.beta->constant_value() ==
            rational(1, 3));
    m = parse_model(with("\"n*log(n)\""), "m.json");
    REQUIRE(m.layers[0].heads[0].score.beta->text() == "n*log(n)");
    REQUIRE(!m.layers[0].heads[0].score.beta->is_constant());
    for (const char* b : {"100", "1e2", "0.25", "\"2*log(n)\"", "\"n*log(n)\"", "\"exp(2)\""})
        require_round_trip(with(b));
    REQUIRE(write_model(parse_model(with("1e2"), "m.json")).find(R"("beta": 100)") != std::string::npos);
    REQUIRE(write_model(parse_model(with("\"2*log(n)\""), "m.json")).find(R"x("beta": "2*log(n)")x") !=
            std::string::npos);
    // "length_scale": "log" is the inverse temperature log(n), written back as it was given.
    m = parse_model(replaced(first_model, from, R"("K": [[0, 1]], "length_scale": "log"})"), "m.json");
    REQUIRE(m.layers[0].heads[0].score.beta->text() == "log(n)");
    REQUIRE(write_model(m).find("beta") == std::string::npos);
    // Map scores take one too.
    const std::string map_head =
        R"x("score": {"kind": "map", "map": {"kind": "affine", "W": [[0, 1, 0, 1]]}, "beta": "sqrt(n)"})x";
    std::string text = replaced(first_model,
                                R"("score": {"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[0, 1]]})",
                                map_head);
    require_round_trip(text);
    REQUIRE(parse_model(text, "m.json").layers[0].heads[0].score.beta->text() == "sqrt(n)");
    // Errors: the position, both spellings at once, a bad formula.
    require_error_at(with("\"i/n\""), "the position i is not defined here",
                     "/layers/0/heads/0/score/beta", R"("i/n")");
    require_error_at(replaced(first_model, from,
                              R"("K": [[0, 1]], "length_scale": "log", "beta": 2})"),
                     "give either length_scale or beta", "/layers/0/heads/0/score/beta", "2}");
    require_error_at(with("\"2*\""), "bad formula", "/layers/0/heads/0/score/beta", R"("2*")", 3);
    require_error_at(with("true"), "expected a formula", "/layers/0/heads/0/score/beta", "true");
}

TEST_CASE("a hard model needs a positive inverse temperature where it is evaluated",
          "[model_file]") {
    const std::string from = R"("K": [[0, 1]]})";
    auto with = [&](const std::string& beta) {
        return parse_model(replaced(first_model, from, R"("K": [[0, 1]], "beta": )" + beta + "}"),
                           "m.json");
    };
    check_length(with("3"), 8);
    check_length(with("\"log(n)\""), 2);
    check_length(with("\"log(n)\""), 1); // one key: nothing to choose
    check_length(with("\"n - 4\""), 5);
    REQUIRE_THROWS_WITH(check_length(with("\"n - 4\""), 4),
                        Catch::Contains("layer 1 head 1") && Catch::Contains("is not positive (0)"));
    REQUIRE_THROWS_WITH(check_length(with("-1"), 3), Catch::Contains("not positive (-1)"));
    REQUIRE_THROWS_WITH(check_length(with("\"log(n) - log(3)\""), 3),
                        Catch::Contains("not certainly positive"));
    REQUIRE_THROWS_WITH(check_length(with("\"1/(n-3)\""), 3), Catch::Contains("no value"));
    // Named like a reader's error: the file and the pointer of the beta.
    REQUIRE_THROWS_WITH(check_length(with("-1"), 3),
                        Catch::StartsWith("m.json: error: layer 1 head 1: hard attention ignores") &&
                            Catch::EndsWith("(at /layers/0/heads/0/score/beta)"));
    REQUIRE_THROWS_AS(check_length(with("-1"), 3), content_error);
}

TEST_CASE("numbers are exact", "[model_file]") {
    std::string text = replaced(first_model, R"("t": 0.5)", R"("t": 0.1)");
    model<rational> m = parse_model(text, "m.json");
    REQUIRE(m.out.t_exact == rational(1, 10));
    REQUIRE(m.out.t_exact * 10 == 1);
    REQUIRE(write_model(m).find("\"t\": 0.1\n") != std::string::npos);

    // Leading zeros are decimal, never octal.
    text = replaced(first_model, R"("w": [1, 0], "t": 0.5)",
                    R"("w": [0.25, "010/3"], "t": 0.08)");
    m = parse_model(text, "m.json");
    REQUIRE(m.out.w_exact == vec<rational>{rational(1, 4), rational(10, 3)});
    REQUIRE(m.out.t_exact == rational(2, 25));

    text = replaced(first_model, R"("w": [1, 0], "t": 0.5)",
                    R"("w": [1e-5, "3/4"], "t": "-12.5e-1")");
    m = parse_model(text, "m.json");
    REQUIRE(m.out.w_exact == vec<rational>{rational(1, 100000), rational(3, 4)});
    REQUIRE(m.out.t_exact == rational(-5, 4));

    // Huge exponents and long fractions survive exactly (as "p/q" strings when long).
    text = replaced(first_model, R"("w": [1, 0], "t": 0.5)",
                    R"("w": [1E+80, "1/3"], "t": 0.000000000000000000000000000000000001)");
    m = parse_model(text, "m.json");
    REQUIRE(m.out.w_exact[0] == q("1e80"));
    REQUIRE(m.out.t_exact == q("1/1000000000000000000000000000000000000"));
    std::string w = write_model(m);
    REQUIRE(w.find("\"1/3\"") != std::string::npos);
    require_round_trip(text);
}

TEST_CASE("writing then reading gives the same model and the same text", "[model_file]") {
    require_round_trip(first_model);
    require_round_trip(hard_model);
    require_round_trip(soft_model);
    require_round_trip(sinus_model);
}

TEST_CASE("the writer is canonical", "[model_file]") {
    std::string w = write_model(parse_model(hard_model, "hard.json"));
    // Keys in a fixed order, sparse and identity forms, exact strings, omitted defaults.
    REQUIRE(w.rfind("{\n  \"format\": \"attnprop-model\",\n  \"version\": 1,\n  \"name\": ", 0) ==
            0);
    REQUIRE(w.find(R"("Q": {
              "identity": 4,
              "scale": 2
            })") != std::string::npos);
    REQUIRE(w.find(R"("entries": [
                [0, 1, 1]
              ])") != std::string::npos);
    // Token embeddings in alphabet order, eos last; 1/3 has no exact decimal.
    REQUIRE(w.find(R"("a": [1, 0],
    "b": ["1/3", 0.1],
    "c": [0.00001, -25],
    "<eos>": [0, 1])") != std::string::npos);
    REQUIRE(w.find(R"("bias": [-0.5, 0])") != std::string::npos);
    REQUIRE(w.find(R"("out": ["-7/3"])") != std::string::npos);
    REQUIRE(w.find(R"([0.00001, -25])") != std::string::npos);
    REQUIRE(w.find(R"("coordinates": ["i/n", "7", "(-1)^i"])") != std::string::npos);
    REQUIRE(w.find(R"("seed": 18446744073709551615)") != std::string::npos);

    std::string f = write_model(parse_model(first_model, "first.json"));
    REQUIRE(f.find("\"scale\"") == std::string::npos);
    REQUIRE(f.find("\"description\"") == std::string::npos);
    REQUIRE(f.find(R"("coordinates": [0, "[i==1]"])") != std::string::npos);

    std::string s = write_model(parse_model(soft_model, "soft.json"));
    REQUIRE(s.find(R"("V": {
              "identity": 3
            })") != std::string::npos);
    REQUIRE(s.find("\"default\"") == std::string::npos);
    REQUIRE(write_model(parse_model(sinus_model, "s.json")).find("\"base\": 100") !=
            std::string::npos);
    REQUIRE(model_to_json(parse_model(sinus_model, "s.json")) ==
            json::parse(write_model(parse_model(sinus_model, "s.json"))));
}

TEST_CASE("sparse formula coordinates are written as an object", "[model_file]") {
    std::string text =
        replaced(first_model, R"({"kind": "formula", "dim": 2, "coordinates": [0, "[i==1]"]})",
                 R"({"kind": "formula", "dim": 2, "coordinates": {"1": "[i==1]"}})");
    model<rational> m = parse_model(text, "m.json");
    REQUIRE(!m.positional->formulas[0]);
    std::string w = write_model(m);
    REQUIRE(w.find(R"("coordinates": [0, "[i==1]"])") != std::string::npos);
    text = replaced(text, R"("dim": 2, "coordinates": {"1": "[i==1]"})",
                    R"("dim": 5, "coordinates": {"1": "[i==1]"})");
    text = replaced(text, R"("input": "add")", R"("input": {"kind": "map", "map": {"kind": "affine",
       "W": [[1, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]]}})");
    m = parse_model(text, "m.json");
    w = write_model(m);
    REQUIRE(w.find(R"("coordinates": {
      "1": "[i==1]"
    })") != std::string::npos);
    require_round_trip(text);
}

TEST_CASE("files are read and written", "[model_file]") {
    const std::string path = "attnprop_model_file_test.json";
    model<rational> m = parse_model(hard_model, "hard.json");
    write_model_file(m, path);
    model<rational> back = read_model_file(path);
    require_same(m, back);
    std::remove(path.c_str());

    try {
        read_model_file("/nonexistent/dir/model.json");
        FAIL("no error");
    } catch (const model_file_error& e) {
        REQUIRE(std::string(e.what()) ==
                "/nonexistent/dir/model.json: error: cannot open: No such file or directory");
        REQUIRE(!e.where().known());
        REQUIRE(e.pointer().empty());
    }
    REQUIRE_THROWS_AS(write_model_file(m, "/nonexistent/dir/model.json"), model_file_error);
}

TEST_CASE("JSON syntax errors keep their position", "[model_file][errors]") {
    // Truncated file.
    model_file_error e = error_of(first_model.substr(0, first_model.find("\"attention\"")));
    REQUIRE(e.message() == "unexpected end of input");
    REQUIRE(json::to_string(e.where()) == "5:3");
    REQUIRE(e.pointer().empty());
    REQUIRE(std::string(e.what()) == "m.json:5:3: error: unexpected end of input");
    e = error_of(first_model.substr(0, 60));
    REQUIRE(e.message() == "unterminated string");
    REQUIRE(json::to_string(e.where()) == "4:11");
    // Duplicate key.
    e = error_of(replaced(first_model, R"("d": 2,)", R"("d": 2, "d": 3,)"));
    REQUIRE(e.message() == "duplicate key \"d\"");
    REQUIRE(json::to_string(e.where()) == "8:11");
}

TEST_CASE("structural errors name the pointer and line:column", "[model_file][errors]") {
    const std::string& b = first_model;
    // Hand-counted positions.
    require_error("[1, 2]", {"expected an object, got an array", "", "1:1"});
    require_error(replaced(b, R"("d": 2,)", ""), {"missing key 'd'", "", "1:1"});
    require_error(replaced(b, R"("d": 2,)", R"("d": "2",)"),
                  {"expected an integer, got a string", "/d", "8:8"});
    require_error(replaced(b, R"("d": 2,)", R"("d": 0,)"), {"d must be in [1, ", "/d", "8:8"});
    require_error(replaced(b, R"("d": 2,)", R"("d": 2.5,)"),
                  {"expected an integer, got 2.5", "/d", "8:8"});
    require_error(replaced(b, R"("d": 2,)", R"("d": 2, "foo": null,)"),
                  {"unknown key 'foo'", "/foo", "8:18"});
    require_error(replaced(b, R"("alphabet": ["0", "1"])", R"("alphabet": "01")"),
                  {"expected an array, got a string", "/alphabet", "6:15"});
    require_error(replaced(b, R"("version": 1)", R"("version": 2)"),
                  {"unsupported version 2; this attnprop reads version 1", "/version", "3:14"});
    require_error(replaced(b, R"("format": "attnprop-model")", R"("format": "onnx")"),
                  {"not an attnprop model file", "/format", "2:13"});
    require_error(replaced(b, R"("format": "attnprop-model",)", ""),
                  {"missing key 'format'", "", "1:1"});
    require_error(replaced(b, R"(["0", "1"])", R"(["0", "01"])"),
                  {"single ASCII character", "/alphabet/1", "6:21"});
    require_error(replaced(b, R"("Q": [[0, 0]])", R"("Q": [[0, 0, 0]])"),
                  {"Q has 3 columns; it must have d = 2", "/layers/0/heads/0/score/Q", "16:41"});
    require_error(replaced(b, R"("[i==1]")", R"("[i==1")"),
                  {"bad formula '[i==1'", "/positional/coordinates/1", "10:72"});

    // Positions found by searching the text.
    require_error_at(replaced(b, R"("w": [1, 0])", R"("w": [1, 0], "bias": 1)"),
                     "unknown key 'bias'", "/readout/bias", R"("bias": 1)", 8);
    require_error_at(replaced(b, R"(["0", "1"])", R"(["0", "*"])"), "reserved for free positions",
                     "/alphabet/1", R"("*")");
    require_error_at(replaced(b, R"(["0", "1"])", R"(["0", " "])"), "whitespace", "/alphabet/1",
                     R"(" ")");
    require_error_at(replaced(b, R"(["0", "1"])", R"(["0", "0"])"), "appears twice",
                     "/alphabet/1", R"(, "0"])", 2);
    require_error_at(replaced(b, R"(["0", "1"])", "[]"), "must not be empty", "/alphabet", "[]");
    require_error_at(replaced(b, R"("eos": "$")", R"("eos": "1")"), "also in the alphabet", "/eos",
                     R"("1",)");
    require_error_at(replaced(b, R"("eos": "$")", R"("eos": "")"), "eos must not be empty", "/eos",
                     R"("",)");
    require_error_at(replaced(b, R"("1": [1, 0], )", ""), "symbol '1' has no embedding",
                     "/token_embedding", R"({"0")");
    require_error_at(replaced(b, R"("$": [0, 0]})", R"("$": [0, 0], "x": [1, 1]})"),
                     "unknown symbol 'x' (the alphabet is 0, 1 and eos '$')", "/token_embedding/x",
                     "[1, 1]");
    require_error_at(replaced(b, R"("1": [1, 0])", R"("1": [1, 0, 0])"),
                     "the embedding of '1' has length 3, but that of '0' has length 2",
                     "/token_embedding/1", "[1, 0, 0]");
    require_error_at(replaced(b, R"("1": [1, 0])", R"("1": [1, true])"),
                     "expected a number, got a boolean", "/token_embedding/1/1", "true");
    require_error_at(replaced(b, R"("layers": [)", R"("layers": 7, "x": [)"),
                     "unknown key 'x'", "/x", R"([)" "\n" R"(    {)");
}

TEST_CASE("number errors", "[model_file][errors]") {
    const std::string& b = first_model;
    auto t_is = [&](const std::string& t) { return replaced(b, R"("t": 0.5)", "\"t\": " + t); };
    require_error_at(t_is(R"("1.2.3")"), "malformed number '1.2.3'", "/readout/t", R"("1.2.3")");
    require_error_at(t_is(R"("abc")"), "malformed number 'abc'", "/readout/t", R"("abc")");
    require_error_at(t_is(R"("1/0")"), "zero denominator in '1/0'", "/readout/t", R"("1/0")");
    require_error_at(t_is(R"("1/-2")"), "malformed number '1/-2'", "/readout/t", R"("1/-2")");
    require_error_at(t_is("1e999999999"), "is out of range (exponent too large)", "/readout/t",
                     "1e999999999");
    require_error_at(t_is("null"), "expected a number, got null", "/readout/t", "null");
    require_error_at(t_is("[0.5]"), "expected a number, got an array", "/readout/t", "[0.5]");
}

TEST_CASE("positional errors", "[model_file][errors]") {
    const std::string& b = first_model;
    const std::string pos = R"({"kind": "formula", "dim": 2, "coordinates": [0, "[i==1]"]})";
    auto with_pos = [&](const std::string& p) { return replaced(b, pos, p); };
    {
        // The column of a formula error points into the string: 'foo' starts at column 5.
        std::string t = replaced(b, R"("[i==1]")", R"("i + foo")");
        require_error_at(t, "bad formula 'i + foo': unknown name 'foo'",
                         "/positional/coordinates/1", R"("i + foo")", 5);
    }
    require_error_at(replaced(b, R"([0, "[i==1]"])", R"([0])"),
                     "coordinates has 1 entries; expected dim = 2", "/positional/coordinates",
                     "[0]");
    require_error_at(replaced(b, R"([0, "[i==1]"])", R"({"2": "i"})"),
                     "coordinate 2 is out of range (dim = 2)", "/positional/coordinates/2",
                     R"("i"})");
    require_error_at(replaced(b, R"([0, "[i==1]"])", R"({"01": "i"})"), "0-based indices",
                     "/positional/coordinates/01", R"("i"})");
    require_error_at(replaced(b, R"([0, "[i==1]"])", R"([0, true])"),
                     "expected a formula (a string or a number), got a boolean",
                     "/positional/coordinates/1", "true");
    require_error_at(replaced(b, R"("kind": "formula")", R"("kind": "learned")"),
                     "unknown kind 'learned' (expected one of: formula, table, sinusoidal)",
                     "/positional/kind", R"("learned")");
    require_error_at(with_pos(R"({"kind": "table", "rows": [[0, 1], [1]]})"),
                     "row 1 has length 1; row 0 has length 2", "/positional/rows/1", "[1]]");
    require_error_at(with_pos(R"({"kind": "table", "rows": []})"), "at least one row",
                     "/positional/rows", "[]");
    require_error_at(with_pos(R"({"kind": "sinusoidal", "dim": 2, "base": 1})"), "base must be > 1",
                     "/positional/base", "1}");
    require_error_at(with_pos(R"({"kind": "sinusoidal", "dim": 2, "rows": 1})"),
                     "unknown key 'rows'", "/positional/rows", "1}");
    require_error_at(with_pos(R"({"kind": "sinusoidal"})"), "missing key 'dim'", "/positional",
                     R"({"kind": "sinusoidal"})");
    // How the input combines token and position.
    require_error_at(with_pos(R"({"kind": "sinusoidal", "dim": 3})"),
                     "input 'add' needs equal dimensions, but the token embeddings have dimension "
                     "2, the positional embedding 3 and d = 2",
                     "/input", R"("add")");
    require_error_at(replaced(b, R"("input": "add")", R"("input": "concat")"),
                     "input 'concat' needs 2 + 2 = d", "/input", R"("concat")");
    require_error_at(replaced(b, R"("input": "add")", R"("input": "mul")"),
                     "input must be 'add', 'concat'", "/input", R"("mul")");
    require_error_at(
        replaced(b, R"("input": "add")",
                 R"("input": {"kind": "map", "map": {"kind": "affine", "W": [[1, 1, 1, 1]]}})"),
        "the map's output dimension is 1; the input map must output d = 2", "/input/map",
        R"({"kind": "affine")");
    require_error_at(
        replaced(b, R"("input": "add")",
                 R"("input": {"kind": "map", "map": {"kind": "affine", "W": [[1, 1, 1]]}})"),
        "W has 3 columns; it must have the map's input dimension 4 (v: 2, p: 2)", "/input/map/W",
        "[[1, 1, 1]]");
}

TEST_CASE("layer errors", "[model_file][errors]") {
    const std::string& b = first_model;
    const std::string sc = "/layers/0/heads/0/score";
    require_error_at(replaced(b, R"("K": [[0, 1]])", R"("K": [[0, 1], [1, 0]])"),
                     "K has 2 rows; it must have as many as Q (1)", sc + "/K", "[[0, 1], [1, 0]]");
    require_error_at(replaced(b, R"("q_bias": [1])", R"("q_bias": [1, 2])"),
                     "q_bias has length 2; expected 1", sc + "/q_bias", "[1, 2]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": [[0, 0], [0]])"),
                     "row 1 has 1 entries; row 0 has 2", sc + "/Q/1", "[0]]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": [])"), "at least one row", sc + "/Q",
                     "[]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": [[]])"), "at least one column",
                     sc + "/Q/0", "[]]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": [1, 2])"),
                     "expected a matrix row (an array), got a number", sc + "/Q/0", "1, 2]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": "I")"),
                     "expected a matrix (an array of rows or an object), got a string", sc + "/Q",
                     R"("I")");
    require_error_at(
        replaced(b, R"("Q": [[0, 0]])",
                 R"("Q": {"rows": 1, "cols": 2, "entries": [[0, 1, 1], [0, 1, 2]]})"),
        "entry (0, 1) appears twice (first at /layers/0/heads/0/score/Q/entries/0)",
        sc + "/Q/entries/1", "[0, 1, 2]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])",
                              R"("Q": {"rows": 1, "cols": 2, "entries": [[0, 2, 1]]})"),
                     "the column index must be in [0, 1], got 2", sc + "/Q/entries/0/1", "2, 1]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])",
                              R"("Q": {"rows": 1, "cols": 2, "entries": [[0, 1]]})"),
                     "a sparse entry is [row, column, value]", sc + "/Q/entries/0", "[0, 1]]");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": {"rows": 1, "cols": 2})"),
                     "missing key 'entries'", sc + "/Q", R"({"rows")");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": {"identity": 5000})"), "too large",
                     sc + "/Q/identity", "5000");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": {"identity": 100000})"),
                     "identity is 100000, above the limit width = 16384 coordinates",
                     sc + "/Q/identity", "100000");
    require_error_at(replaced(b, R"("Q": [[0, 0]])", R"("Q": {"identity": 2, "scale": 2, "x": 1})"),
                     "unknown key 'x'", sc + "/Q/x", "1}");
    require_error_at(replaced(b, R"("K": [[0, 1]])", R"("K": [[0, 1]], "scale": 0)"),
                     "scale must be > 0, got 0", sc + "/scale", "0}");
    require_error_at(replaced(b, R"("K": [[0, 1]])", R"("K": [[0, 1]], "scale": {"factor": 1})"),
                     "missing key 'inv_sqrt'", sc + "/scale", R"({"factor")");
    require_error_at(replaced(b, R"("K": [[0, 1]])",
                              R"("K": [[0, 1]], "scale": {"factor": 1, "inv_sqrt": -2})"),
                     "inv_sqrt must be > 0, got -2", sc + "/scale/inv_sqrt", "-2}");
    require_error_at(replaced(b, R"("K": [[0, 1]])", R"("K": [[0, 1]], "scale": "big")"),
                     "malformed number 'big'", sc + "/scale", R"("big")");
    require_error_at(replaced(b, R"({"kind": "linear", "V": [[1, 0]]})", R"({"kind": "linear"})"),
                     "missing key 'V'", "/layers/0/heads/0/value", R"({"kind": "linear"})");
    require_error_at(replaced(b, R"("V": [[1, 0]])", R"("V": [[1, 0]], "b": [1])"),
                     "unknown key 'b' (allowed here: kind, V, bias)", "/layers/0/heads/0/value/b",
                     "[1]}");
    require_error_at(replaced(b, R"("W": [[0, 0, 1], [0, 1, 0]])", R"("W": [[0, 0, 1]])"),
                     "the map's output dimension is 1; the update must output d = 2",
                     "/layers/0/update", R"({"kind": "affine")");
    require_error_at(replaced(b, R"("W": [[0, 0, 1], [0, 1, 0]])", R"("W": [[0, 1], [1, 0]])"),
                     "W has 2 columns; it must have the map's input dimension 3 (y: 2, b1: 1)",
                     "/layers/0/update/W", "[[0, 1], [1, 0]]");

    // Whole layers replaced.
    const std::string layer_start = "[\n    {\n      \"heads\"";
    const std::size_t from = b.find(layer_start);
    const std::size_t to = b.find("  \"readout\"");
    REQUIRE(from != std::string::npos);
    REQUIRE(to != std::string::npos);
    auto with_layers = [&](const std::string& layers) {
        return b.substr(0, from) + layers + ",\n" + b.substr(to);
    };
    require_error_at(with_layers("7"), "expected an array, got a number", "/layers", "7,");
    require_error_at(
        with_layers(R"([{"heads": [], "update": {"kind": "affine", "W": [[1, 0], [0, 1]]}}])"),
        "a layer needs at least one head", "/layers/0/heads", "[],");
    require_error_at(
        with_layers(R"([{"heads": [{"score": {"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]]},
                                   "value": {"kind": "linear", "V": [[1, 0]]}}]}])"),
        "missing key 'update'", "/layers/0", R"({"heads")");
    require_error_at(
        with_layers(R"([{"heads": [{"score": {"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]]}}],
                                     "update": {"kind": "affine", "W": [[1, 0], [0, 1]]}}])"),
        "missing key 'value'", "/layers/0/heads/0", R"({"score")");
    // The update's input grows with every head's value dimension.
    require_error_at(
        with_layers(R"([{"heads": [
          {"score": {"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]]},
           "value": {"kind": "map", "map": {"kind": "hash", "seed": 1, "out_dim": 3, "range": 1,
                                            "denominator": 1}}},
          {"score": {"kind": "dot", "Q": [[1, 0]], "K": [[0, 1]]},
           "value": {"kind": "linear", "V": [[1, 0]]}}],
          "update": {"kind": "affine", "W": [[1, 0], [0, 1]]}}])"),
        "W has 2 columns; it must have the map's input dimension 6 (y: 2, b1: 3, b2: 1)",
        "/layers/0/update/W", "[[1, 0], [0, 1]]}}]");
}

TEST_CASE("map errors", "[model_file][errors]") {
    const std::string& b = first_model;
    const std::string upd = R"({"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]})";
    std::string t;
    auto with_update = [&](const std::string& u) {
        t = replaced(b, upd, u);
        return t;
    };
    const std::string u = "/layers/0/update";

    require_error_at(with_update(R"({"kind": "mlp", "layers": [
        {"W": [[1, 0, 0], [0, 1, 0]], "activation": "relu"},
        {"W": [[1, 0, 0], [0, 1, 0]], "activation": "identity"}]})"),
                     "W has 3 columns; it must have 2, the output dimension of layer 0",
                     u + "/layers/1/W", R"([[1, 0, 0], [0, 1, 0]], "activation": "identity")");
    require_error_at(with_update(R"({"kind": "mlp", "layers": [
        {"W": [[1, 0, 0], [0, 1, 0]], "activation": "sigmoid"}]})"),
                     "unknown activation 'sigmoid'", u + "/layers/0/activation", R"("sigmoid")");
    require_error_at(with_update(R"({"kind": "mlp", "layers": [
        {"W": [[1, 0, 0], [0, 1, 0]]}]})"),
                     "missing key 'activation'", u + "/layers/0", R"({"W": [[1, 0, 0])");
    require_error_at(with_update(R"({"kind": "mlp", "layers": []})"), "at least one layer",
                     u + "/layers", "[]}");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "add", "in": ["y", "z"]}], "output": "h"})"),
                     "unknown input 'z': neither an input of this map (y, b1, b) nor the id of an "
                     "earlier node",
                     u + "/nodes/0/in/1", R"("z")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "add", "in": ["y", "later"]},
        {"id": "later", "op": "relu", "in": "y"}], "output": "h"})"),
                     "node 'later' is used before it is defined", u + "/nodes/0/in/1",
                     R"("later")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "relu", "in": "y"},
        {"id": "h", "op": "relu", "in": "y"}], "output": "h"})"),
                     "duplicate node id 'h' (first at /layers/0/update/nodes/0/id)",
                     u + "/nodes/1/id", "\"h\", \"op\": \"relu\", \"in\": \"y\"}],");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "y", "op": "relu", "in": "b1"}], "output": "y"})"),
                     "node id 'y' is an input name", u + "/nodes/0/id", R"("y", "op")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "add", "in": ["y", "b1"]}], "output": "h"})"),
                     "op 'add' needs inputs of equal dimension; input 0 has 2, input 1 has 1",
                     u + "/nodes/0/in", R"(["y", "b1"])");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "sub", "in": ["y", "y", "y"]}], "output": "h"})"),
                     "op 'sub' takes 2 inputs, got 3", u + "/nodes/0/in", R"(["y", "y", "y"])");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "relu", "in": ["y", "y"]}], "output": "h"})"),
                     "op 'relu' takes 1 input, got 2", u + "/nodes/0/in", R"(["y", "y"])");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "concat", "in": []}], "output": "h"})"),
                     "op 'concat' takes at least 1 input, got 0", u + "/nodes/0/in", "[]}");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "softplus", "in": "y"}], "output": "h"})"),
                     "unknown op 'softplus'", u + "/nodes/0/op", R"("softplus")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "input", "in": "y"}], "output": "h"})"),
                     "unknown op 'input'", u + "/nodes/0/op", R"("input", "in")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "layer_norm", "in": "y", "eps": -1e-5}], "output": "h"})"),
                     "layer_norm eps must be >= 0, got -1/100000", u + "/nodes/0/eps", "-1e-5");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "layer_norm", "in": "y"}], "output": "h"})"),
                     "missing key 'eps'", u + "/nodes/0", R"({"id": "h")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "layer_norm", "in": "y", "eps": 0, "gamma": [1]}], "output": "h"})"),
                     "gamma has length 1; expected 2", u + "/nodes/0/gamma", "[1]}");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "relu", "in": "y", "eps": 0}], "output": "h"})"),
                     "unknown key 'eps' (allowed here: id, op, in)", u + "/nodes/0/eps", "0}");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "slice", "in": "b", "from": 0, "to": 2}], "output": "h"})"),
                     "slice 'to' = 2 exceeds the input's dimension 1", u + "/nodes/0/to", "2}");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "slice", "in": "y", "from": 1, "to": 1}], "output": "h"})"),
                     "slice needs from < to", u + "/nodes/0/from", "1, \"to\"");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "linear", "in": "y", "W": [[1, 0, 0]]}], "output": "h"})"),
                     "W has 3 columns; it must have the input's dimension 2", u + "/nodes/0/W",
                     "[[1, 0, 0]]");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "scale", "in": "y"}], "output": "h"})"),
                     "missing key 'factor'", u + "/nodes/0", R"({"id": "h")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "relu", "in": "y"}], "output": "g"})"),
                     "output 'g' is not the id of a node", u + "/output", R"("g")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "relu", "in": "b1"}], "output": "h"})"),
                     "the map's output dimension is 1; the update must output d = 2", u,
                     R"({"kind": "graph")");
    require_error_at(with_update(R"({"kind": "graph", "nodes": [], "output": "h"})"),
                     "a graph needs at least one node", u + "/nodes", "[],");
    require_error_at(with_update(R"({"kind": "table", "entries": [
        {"in": [0, 0, 0], "out": [1, 1]}, {"in": [0, 0, "0/5"], "out": [2, 2]}],
        "default": [0, 0]})"),
                     "duplicate table input (0, 0, 0) (first at /layers/0/update/entries/0)",
                     u + "/entries/1/in", R"([0, 0, "0/5"])");
    require_error_at(with_update(R"({"kind": "table", "entries": [
        {"in": [0, 0], "out": [1, 1]}], "default": [0, 0]})"),
                     "'in' has length 2; the map's input dimension is 3 (y: 2, b1: 1)",
                     u + "/entries/0/in", "[0, 0], \"out\"");
    require_error_at(with_update(R"({"kind": "table", "entries": [
        {"in": [0, 0, 0], "out": [1]}], "default": [0, 0]})"),
                     "'out' (like 'default') has length 1; expected 2", u + "/entries/0/out",
                     "[1]}");
    require_error_at(with_update(R"({"kind": "table", "entries": []})"), "missing key 'default'", u,
                     R"({"kind": "table")");
    require_error_at(with_update(R"({"kind": "hash", "seed": 18446744073709551616, "out_dim": 2,
        "range": 1, "denominator": 1})"),
                     "seed must be in [0, 2^64), got 18446744073709551616", u + "/seed",
                     "18446744073709551616");
    require_error_at(with_update(R"({"kind": "hash", "seed": 1, "out_dim": 2, "range": -1,
        "denominator": 1})"),
                     "range must be in [0, ", u + "/range", "-1,");
    require_error_at(with_update(R"({"kind": "hash", "seed": 1, "out_dim": 2, "range": 1,
        "denominator": 0})"),
                     "denominator must be >= 1, got 0", u + "/denominator", "0}");
    require_error_at(with_update(R"({"kind": "hash", "seed": 1, "out_dim": 3, "range": 1,
        "denominator": 1})"),
                     "the map's output dimension is 3; the update must output d = 2", u,
                     R"({"kind": "hash")");
    require_error_at(with_update(R"({"kind": "conv"})"),
                     "unknown kind 'conv' (expected one of: affine, mlp, graph, table, hash)",
                     u + "/kind", R"("conv")");
    require_error_at(with_update(R"({"W": [[0, 0, 1], [0, 1, 0]]})"), "missing key 'kind'", u,
                     R"({"W")");
    require_error_at(with_update(R"({"kind": 1})"), "expected a string, got a number",
                     u + "/kind", "1}");
    // A score map must output one value; a value map's output dimension is free.
    require_error_at(
        replaced(
            b, R"({"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[0, 1]]})",
            R"({"kind": "map", "map": {"kind": "affine", "W": [[1, 0, 0, 1], [0, 1, 1, 0]]}})"),
        "the map's output dimension is 2; a score map must output 1 value",
        "/layers/0/heads/0/score/map", R"({"kind": "affine")");
}

TEST_CASE("readout errors", "[model_file][errors]") {
    const std::string& b = first_model;
    const std::string ro = R"({"kind": "threshold", "w": [1, 0], "t": 0.5})";
    auto with_readout = [&](const std::string& r) { return replaced(b, ro, r); };
    require_error_at(with_readout(R"({"kind": "softmax", "symbols": ["a", "b", "c"],
    "W": [[1, 0], [0, 1]]})"),
                     "W has 2 rows; it must have one per output symbol (3)", "/readout/W",
                     "[[1, 0], [0, 1]]");
    require_error_at(with_readout(R"({"kind": "softmax", "symbols": ["a"], "W": [[1, 0]]})"),
                     "at least 2 symbols", "/readout/symbols", R"(["a"])");
    require_error_at(with_readout(R"({"kind": "softmax", "symbols": ["a", "a"], "W": [[1, 0]]})"),
                     "output symbol 'a' appears twice", "/readout/symbols/1", R"("a"], "W")");
    require_error_at(with_readout(R"({"kind": "softmax", "symbols": ["a", ""], "W": [[1, 0]]})"),
                     "must not be empty", "/readout/symbols/1", R"(""])");
    require_error_at(with_readout(R"({"kind": "softmax", "symbols": ["a", "b"],
    "W": [[1, 0], [0, 1]], "c": [1]})"),
                     "c has length 1; expected 2", "/readout/c", "[1]}");
    require_error_at(with_readout(R"({"kind": "threshold", "w": [1, 0, 0], "t": 0.5})"),
                     "w has length 3; expected 2", "/readout/w", "[1, 0, 0]");
    require_error_at(with_readout(R"({"kind": "threshold", "w": [1, 0]})"), "missing key 't'",
                     "/readout", R"({"kind": "threshold")");
    require_error_at(
        with_readout(R"({"kind": "map", "map": {"kind": "affine", "W": [[1, 0], [0, 1]]}})"),
        "the map's output dimension is 2; the readout map must output 1 value", "/readout/map",
        R"({"kind": "affine", "W": [[1, 0], [0, 1]]})");
    require_error_at(replaced(b, R"("attention": "hard")", R"("attention": "sparse")"),
                     "attention must be 'hard', 'soft', 'average-hard', 'stablemax', 'sparsemax' or 'sigmoid'",
                     "/attention", R"("sparse")");
    require_error_at(replaced(b, R"("name": "first")", R"("name": 5)"),
                     "expected a string, got a number", "/name", "5,");
}

TEST_CASE("a JSON document that is not a model says so", "[model_file][errors]") {
    require_error(R"({"name": "report", "results": []})",
                  {"missing key 'format' (an attnprop model file starts with \"format\": "
                   "\"attnprop-model\")",
                   "", "1:1"});
    require_error(R"({"format": "attnprop-model", "version": "1"})",
                  {"expected a number, got a string", "/version", "1:41"});
    require_error(R"({"format": "attnprop-model", "version": 1.5})",
                  {"unsupported version 1.5; this attnprop reads version 1", "/version", "1:41"});
    require_error(R"({"format": "attnprop-model"})", {"missing key 'version'", "", "1:1"});
    // Version 1.0 is version 1.
    REQUIRE_NOTHROW(parse_model(replaced(first_model, R"("version": 1)", R"("version": 1.0)"),
                                "m.json"));
}

TEST_CASE("every truncation of a model file is an error, never a crash", "[model_file][errors]") {
    // The last character is a newline: every shorter prefix lacks the closing brace. Every
    // prefix of the small model, every 13th of the large one (keeps the test fast).
    for (std::size_t k = 0; k + 1 < first_model.size(); ++k)
        REQUIRE_THROWS_AS(parse_model(first_model.substr(0, k), "m.json"), model_file_error);
    for (std::size_t k = 0; k + 1 < hard_model.size(); k += 13)
        REQUIRE_THROWS_AS(parse_model(hard_model.substr(0, k), "m.json"), model_file_error);
}

TEST_CASE("hash_output follows the documented algorithm", "[maps]") {
    // Expected values computed independently (Python) from docs/model-format.md.
    hash_map h;
    h.seed = 0;
    h.range = 5;
    h.denominator = 1;
    REQUIRE(hash_output(h, 3, {1, rational(1, 2), -3}) == std::vector<rational>{4, -1, -1});
    h.seed = 42;
    h.range = 100;
    h.denominator = 7;
    REQUIRE(hash_output(h, 4, {0}) ==
            std::vector<rational>{rational(-32, 7), rational(24, 7), 4, rational(61, 7)});
    h.seed = 18446744073709551615ULL;
    h.range = 3;
    h.denominator = 4;
    REQUIRE(hash_output(h, 2, {1, 0, 0, rational(-1, 3)}) ==
            std::vector<rational>{0, rational(3, 4)});
    h.seed = 7;
    h.range = 0;
    h.denominator = 1;
    REQUIRE(hash_output(h, 2, {5}) == std::vector<rational>{0, 0});

    // Deterministic and within range.
    h.seed = 12345;
    h.range = 9;
    h.denominator = 3;
    for (int k = 0; k < 200; ++k) {
        std::vector<rational> x{k, rational(k, 7)};
        auto a = hash_output(h, 5, x);
        REQUIRE(a == hash_output(h, 5, x));
        for (const auto& v : a) {
            REQUIRE(v >= rational(-9, 3));
            REQUIRE(v <= rational(9, 3));
        }
    }
    // Equal rationals hash equally however they were written.
    REQUIRE(hash_output(h, 3, {rational(2, 4)}) == hash_output(h, 3, {q("0.5")}));
    REQUIRE(hash_output(h, 3, {1}) != hash_output(h, 3, {2}));
}

TEST_CASE("make_matrix and the map names", "[maps]") {
    matrix<rational> m = make_matrix(2, 3, {0, 1, 0, 0, 0, 0});
    REQUIRE(m.nonzero == std::vector<std::vector<std::size_t>>{{1}, {}});
    REQUIRE(!m.is_zero());
    REQUIRE(make_matrix(1, 1, {0}).is_zero());
    REQUIRE_THROWS_AS(make_matrix(2, 2, {1}), std::invalid_argument);
    REQUIRE(std::string(to_string(activation::floor)) == "floor");
    REQUIRE(layer_norm_op<rational>::name == "layer_norm");
    REQUIRE(std::string(to_string(attention_kind::soft)) == "soft");
}

TEST_CASE("inputs are parsed and checked against the model", "[model]") {
    model<rational> m = parse_model(first_model, "first.json");
    REQUIRE(parse_input(m, "0110") == input_sequence{0, 1, 1, 0, 2});
    REQUIRE(parse_input(m, "") == input_sequence{2});
    REQUIRE(format_input(m.sigma, parse_input(m, "0110")) == "0110");
    REQUIRE(m.sigma.index_of("1") == 1);
    REQUIRE(m.sigma.index_of("$") == 2);
    REQUIRE(m.sigma.index_of("2") == -1);
    REQUIRE(m.sigma.name(2) == "$");
    REQUIRE_THROWS_AS(m.sigma.name(3), std::out_of_range);
    try {
        parse_input(m, "012");
        FAIL("no error");
    } catch (const input_error& e) {
        REQUIRE(std::string(e.what()) == "symbol '2' at position 3 is not in the alphabet {0, 1}");
    }
    try {
        parse_input(m, "01$");
        FAIL("no error");
    } catch (const input_error& e) {
        REQUIRE(std::string(e.what()) == "the input must not contain eos '$'; it is appended");
    }

    check_length(m, 1);
    check_length(m, 1000000);
    REQUIRE_THROWS_AS(check_length(m, 0), input_error);
    model<rational> s = parse_model(soft_model, "soft.json");
    check_length(s, 4);
    try {
        check_length(s, 5);
        FAIL("no error");
    } catch (const input_error& e) {
        REQUIRE(std::string(e.what()) == "soft.json: error: the model's positional table has 4 "
                                         "rows; an input of length n = 5 needs 5 (at /positional/rows)");
    }
    model<rational> h = parse_model(hard_model, "hard.json");
    REQUIRE(parse_input(h, "abc") == input_sequence{0, 1, 2, 3});
    REQUIRE_THROWS_AS(parse_input(h, "ab<eos>"), input_error);
}

TEST_CASE("exact_blockers lists what exact rationals cannot evaluate", "[model]") {
    REQUIRE(exact_blockers(parse_model(first_model, "first.json")).empty());
    REQUIRE(exact_blockers(parse_model(hard_model, "hard.json")) ==
            std::vector<std::string>{"layer 1 update: tanh",
                                     "layer 1 update: layer_norm (needs a square root)"});
    REQUIRE(exact_blockers(parse_model(soft_model, "soft.json")) ==
            std::vector<std::string>{"attention is soft (softmax needs exp)"});
    REQUIRE(exact_blockers(parse_model(sinus_model, "sinus.json")) ==
            std::vector<std::string>{"attention is soft (softmax needs exp)",
                                     "positional: sinusoidal encoding"});
    std::string text = replaced(first_model, R"([0, "[i==1]"])", R"x(["sin(i)", "[i==1]"])x");
    text = replaced(text, R"({"kind": "linear", "V": [[1, 0]]})",
                    R"({"kind": "map", "map": {"kind": "mlp", "layers": [
                        {"W": [[1, 0]], "activation": "tanh"}]}})");
    REQUIRE(exact_blockers(parse_model(text, "m.json")) ==
            std::vector<std::string>{"positional coordinate 0: 'sin(i)'",
                                     "layer 1 head 1 value map: tanh"});
}

TEST_CASE("exact_blockers: the pointers, and require_exact names the file", "[model]") {
    REQUIRE(exact_blocker_pointers(parse_model(hard_model, "hard.json")) ==
            std::vector<std::string>{"/layers/0/update", "/layers/0/update"});
    std::string text = replaced(first_model, R"([0, "[i==1]"])", R"x(["sin(i)", "[i==1]"])x");
    const model<rational> m = parse_model(text, "m.json");
    REQUIRE(exact_blocker_pointers(m) == std::vector<std::string>{"/positional/coordinates/0"});
    REQUIRE_THROWS_WITH(require_exact(m, "the exact scalar cannot evaluate this model"),
                        "m.json: error: the exact scalar cannot evaluate this model: positional "
                        "coordinate 0: 'sin(i)' (at /positional/coordinates/0)");
    REQUIRE_NOTHROW(require_exact(parse_model(first_model, "first.json"), "x"));
}

TEST_CASE("limits on layers, heads, mlp layers, widths and a file's numbers", "[model_file][limits]") {
    struct reset_guard {
        ~reset_guard() { numeric::reset_limits(); }
    } guard;
    auto error_of = [](const std::string& text) -> std::string {
        try {
            (void)parse_model(text, "m.json");
        } catch (const model_file_error& e) {
            return e.what();
        }
        return "no error";
    };
    // Layers and heads: counted at their arrays.
    numeric::set_limit(numeric::limit::layers, 1);
    const std::string open = "\"layers\": [";
    const auto a = first_model.find(open) + open.size();
    const auto b = first_model.find("\n  ],\n  \"readout\"");
    const std::string one = first_model.substr(a, b - a);
    const std::string two_layers = first_model.substr(0, a) + one + "," + one + first_model.substr(b);
    CHECK_THAT(error_of(two_layers),
               Catch::Contains("the model has 2 layers, above the limit layers = 1 layers") &&
                   Catch::EndsWith("(at /layers)"));
    numeric::reset_limits();
    REQUIRE_NOTHROW(parse_model(two_layers, "m.json"));
    numeric::set_limit(numeric::limit::heads, 1);
    const std::string head = R"({
          "score": {"kind": "dot", "Q": [[0, 0]], "q_bias": [1], "K": [[0, 1]]},
          "value": {"kind": "linear", "V": [[1, 0]]}
        })";
    std::string two_heads = replaced(first_model, head, head + ", " + head);
    two_heads = replaced(two_heads, R"("W": [[0, 0, 1], [0, 1, 0]])", R"("W": [[0, 0, 1, 0], [0, 1, 0, 0]])");
    CHECK_THAT(error_of(two_heads), Catch::Contains("the layer has 2 heads, above the limit heads = 1") &&
                                        Catch::EndsWith("(at /layers/0/heads)"));
    numeric::reset_limits();
    REQUIRE_NOTHROW(parse_model(two_heads, "m.json"));
    // An mlp's layers.
    numeric::set_limit(numeric::limit::mlp_layers, 1);
    const std::string mlp = replaced(first_model, R"({"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]})",
                                     R"({"kind": "mlp", "layers": [{"W": [[0, 0, 1], [0, 1, 0]], "activation": "relu"},
                                         {"W": [[1, 0], [0, 1]], "activation": "identity"}]})");
    CHECK_THAT(error_of(mlp), Catch::Contains("the mlp has 2 layers, above the limit mlp-layers = 1") &&
                                  Catch::EndsWith("(at /layers/0/update/layers)"));
    numeric::reset_limits();
    REQUIRE_NOTHROW(parse_model(mlp, "m.json"));
    // The width: d, and every dimension a file sets.
    numeric::set_limit(numeric::limit::width, 1);
    CHECK_THAT(error_of(first_model), Catch::Contains("d is 2, above the limit width = 1 coordinates") &&
                                          Catch::EndsWith("(at /d)"));
    numeric::reset_limits();
    // A file's numbers: an identity of 2048 from a few bytes is 4 million numbers, over the
    // 2^18 a small file may hold; refused at the matrix, before it is allocated.
    const std::string identity = replaced(first_model, R"("V": [[1, 0]])", R"("V": {"identity": 2048})");
    CHECK_THAT(error_of(identity),
               Catch::Contains("the model holds more than 262144 numbers once read") &&
                   Catch::Contains("above the limit model-numbers = 1 x the file's bytes, and at least 2^18 numbers") &&
                   Catch::EndsWith("(at /layers/0/heads/0/value/V)"));
    numeric::set_limit(numeric::limit::model_numbers, 16384);
    CHECK_THAT(error_of(identity), Catch::Contains("V has 2048 columns")); // read, then checked
    numeric::reset_limits();
    // A 600 x 600 identity written densely (720 KB of text) reads; its canonical form as
    // {"identity": 600} would hold 360 000 numbers in a few hundred bytes, more than 2^18, and
    // would not read back: the writer then writes every matrix out in full.
    std::string dense = "[";
    for (int r = 0; r < 600; ++r) {
        dense += r ? ",[" : "[";
        for (int c = 0; c < 600; ++c) dense += (c ? "," : "") + std::string(r == c ? "1" : "0");
        dense += "]";
    }
    dense += "]";
    std::string big = replaced(first_model, R"("d": 2)", R"("d": 600)");
    std::string zeros;
    for (int c = 1; c < 600; ++c) zeros += ",0";
    big = replaced(big, R"({"0": [0, 0], "1": [1, 0], "$": [0, 0]})",
                   "{\"0\": [0" + zeros + "], \"1\": [1" + zeros + "], \"$\": [0" + zeros + "]}");
    big = replaced(big, R"({"kind": "formula", "dim": 2, "coordinates": [0, "[i==1]"]})",
                   R"({"kind": "formula", "dim": 600, "coordinates": {"1": "[i==1]"}})");
    big = replaced(big, R"("Q": [[0, 0]])", R"("Q": )" + dense);
    big = replaced(big, R"("q_bias": [1], "K": [[0, 1]])", R"("K": )" + dense);
    big = replaced(big, R"("V": [[1, 0]])", R"("V": )" + dense);
    big = replaced(big, R"({"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]})",
                   R"({"kind": "graph", "nodes": [{"id": "o", "op": "slice", "in": "y", "from": 0, "to": 600}], "output": "o"})");
    big = replaced(big, R"("w": [1, 0])", "\"w\": [1" + zeros + "]");
    const model<rational> m = parse_model(big, "big.json");
    const std::string written = write_model(m);
    CHECK(written.find("\"identity\"") == std::string::npos);
    const model<rational> back = parse_model(written, "big-canonical.json");
    CHECK(write_model(back) == written);
    CHECK(back.layers[0].heads[0].score.Q.W.data == m.layers[0].heads[0].score.Q.W.data);
}

TEST_CASE("gelu and erf: graph ops and MLP activations parse, evaluate and round-trip",
          "[model_file][gelu]") {
    // A PyTorch-style FFN with the exact gelu, and erf as an MLP activation.
    std::string text = replaced(first_model, R"({"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]})",
                                R"({"kind": "graph", "nodes": [
        {"id": "h", "op": "linear", "in": "y", "W": [[1, 0], [0, 1]], "b": [0, -1]},
        {"id": "act", "op": "gelu", "in": "h"},
        {"id": "e", "op": "erf", "in": "act"},
        {"id": "out", "op": "add", "in": ["e", "y"]}], "output": "out"})");
    text = replaced(text, R"({"kind": "linear", "V": [[1, 0]]})",
                    R"({"kind": "map", "map": {"kind": "mlp", "layers": [
                        {"W": [[1, 0]], "activation": "gelu"},
                        {"W": [[2]], "activation": "erf"}]}})");
    text = replaced(text, R"("attention": "hard")", R"("attention": "soft")");
    require_round_trip(text);
    model<rational> m = parse_model(text, "g.json");
    const auto& g = std::get<graph_map<rational>>(m.layers[0].update.impl);
    REQUIRE(std::holds_alternative<gelu_op>(g.nodes[2].op));
    REQUIRE(std::holds_alternative<erf_op>(g.nodes[3].op));
    const auto& mlp = std::get<mlp_map<rational>>(m.layers[0].heads[0].value.fn->impl);
    REQUIRE(mlp.activations == std::vector<activation>{activation::gelu, activation::erf});
    REQUIRE(op_name(graph_op<rational>(gelu_op{})) == "gelu");
    REQUIRE(std::string(to_string(activation::erf)) == "erf");
    const std::string w = write_model(m);
    REQUIRE(w.find(R"("op": "gelu")") != std::string::npos);
    REQUIRE(w.find(R"("activation": "erf")") != std::string::npos);

    // Evaluated: update(y) = erf(gelu(y - (0, 1))) + y at y = (1, 1/2) (the head output unused).
    const numeric::context ctx{256};
    auto mb = convert<numeric::arb_ball>(m.layers[0].update, ctx);
    std::vector<numeric::arb_ball> y = {numeric::arb_ball::from_rational(rational(1), ctx),
                                        numeric::arb_ball::from_rational(rational(1, 2), ctx),
                                        numeric::arb_ball::from_rational(rational(0), ctx)};
    auto out = evaluate(mb, y, ctx);
    // gelu(1) = 0.8413447460685429..., erf of it = 0.7676...; gelu(-1/2) = -0.1542687694...
    REQUIRE(numeric::to_double(out[0]) == Approx(std::erf(0.8413447460685429) + 1).epsilon(1e-14));
    REQUIRE(numeric::to_double(out[1]) ==
            Approx(std::erf(-0.15426876936299347) + 0.5).epsilon(1e-14));
    REQUIRE(needs_real_arithmetic(m.layers[0].update));

    // Exact rationals refuse them, naming the op.
    REQUIRE(exact_blockers(m) == std::vector<std::string>{"attention is soft (softmax needs exp)",
                                                          "layer 1 head 1 value map: gelu",
                                                          "layer 1 head 1 value map: erf",
                                                          "layer 1 update: gelu",
                                                          "layer 1 update: erf"});
    std::vector<rational> yq = {1, rational(1, 2), 0};
    REQUIRE_THROWS_WITH(evaluate(m.layers[0].update, yq, ctx),
                        Catch::Contains("gelu needs real arithmetic; not available for exact"));

    // An unknown activation lists the new names.
    std::string bad = replaced(text, R"("activation": "gelu")", R"("activation": "silu")");
    REQUIRE_THROWS_WITH(parse_model(bad, "b.json"),
                        Catch::Contains("(expected identity, relu, tanh, gelu, erf, step or "
                                        "floor)"));
}
