// Writing model files in the canonical form (docs/model-format.md, "Canonical form"): the
// model as JSON, every number exact, compact forms for identities and sparse matrices.
#include "model/model_file.hpp"
#include "numeric/limits.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace attnprop::model {

namespace {

/// A number as the canonical form writes it (docs/model-format.md, "Canonical form"): a plain
/// decimal when it is short, else in scientific notation when that is exact (1e-100000 is ten
/// characters, its plain decimal 100 002, and the reader takes exponents up to 100000), else
/// "p/q". Every form costs time linear in its text.
json::value num(const rational& q) {
    const std::optional<std::string> d = numeric::exact_decimal(q, 40);
    if (d && d->size() <= 48 && json::is_number_lexeme(*d)) return json::value::number_raw(*d);
    if (auto e = numeric::exact_scientific(q, 40)) {
        const long long expo = std::stoll(e->substr(e->find('e') + 1));
        if (expo >= -100000 && expo <= 100000 && json::is_number_lexeme(*e))
            return json::value::number_raw(*e);
    }
    if (d && json::is_number_lexeme(*d)) return json::value::number_raw(*d);
    return json::value::string(numeric::to_exact_string(q));
}

json::value size_value(std::size_t k) { return json::value::number(static_cast<long long>(k)); }

json::value vec_json(const vec<rational>& v) {
    json::value a = json::value::array();
    for (const auto& q : v) a.push_back(num(q));
    return a;
}

/// The writer's state on this thread: whether identities and sparse matrices are written in
/// their compact forms, and how many entries those forms left out of the text.
struct compaction {
    bool allowed = true;
    std::uint64_t implicit = 0;
};
thread_local compaction writing;

json::value matrix_json(const matrix<rational>& w) {
    std::size_t nnz = 0;
    for (const auto& row : w.nonzero) nnz += row.size();
    if (!writing.allowed) nnz = w.rows * w.cols; // written out in full
    else if (4 * nnz < w.rows * w.cols || nnz == w.rows) writing.implicit += w.rows * w.cols;
    // A nonzero multiple of an identity of size >= 2.
    if (w.rows == w.cols && w.rows >= 2 && nnz == w.rows && w.at(0, 0) != 0) {
        bool scaled_identity = true;
        for (std::size_t k = 0; k < w.rows; ++k)
            scaled_identity = scaled_identity && w.at(k, k) == w.at(0, 0);
        if (scaled_identity) {
            json::value o = json::value::object();
            o.set("identity", size_value(w.rows));
            if (w.at(0, 0) != 1) o.set("scale", num(w.at(0, 0)));
            return o;
        }
    }
    if (4 * nnz < w.rows * w.cols) {
        json::value o = json::value::object();
        o.set("rows", size_value(w.rows));
        o.set("cols", size_value(w.cols));
        json::value entries = json::value::array();
        for (std::size_t r = 0; r < w.rows; ++r)
            for (std::size_t c : w.nonzero[r]) {
                json::value e = json::value::array();
                e.push_back(size_value(r));
                e.push_back(size_value(c));
                e.push_back(num(w.at(r, c)));
                entries.push_back(std::move(e));
            }
        o.set("entries", std::move(entries));
        return o;
    }
    json::value rows = json::value::array();
    for (std::size_t r = 0; r < w.rows; ++r) {
        json::value row = json::value::array();
        for (std::size_t c = 0; c < w.cols; ++c) row.push_back(num(w.at(r, c)));
        rows.push_back(std::move(row));
    }
    return rows;
}

json::value str(std::string_view s) { return json::value::string(std::string(s)); }

json::value graph_json(const graph_map<rational>& g) {
    auto name_of = [&](std::size_t k) {
        const auto& nd = g.nodes[k];
        const auto* in = std::get_if<input_op>(&nd.op);
        return in ? in->input_name : nd.id;
    };
    json::value nodes = json::value::array();
    for (const auto& nd : g.nodes) {
        if (std::holds_alternative<input_op>(nd.op)) continue;
        json::value o = json::value::object();
        o.set("id", str(nd.id));
        o.set("op", str(op_name(nd.op)));
        if (nd.args.size() == 1) {
            o.set("in", str(name_of(nd.args[0])));
        } else {
            json::value in = json::value::array();
            for (auto a : nd.args) in.push_back(str(name_of(a)));
            o.set("in", std::move(in));
        }
        std::visit(overloaded{
                       [](const input_op&) {},
                       [&](const linear_op<rational>& p) {
                           o.set("W", matrix_json(p.lin.W));
                           if (!p.lin.b.empty()) o.set("b", vec_json(p.lin.b));
                       },
                       [](const add_op&) {},
                       [](const sub_op&) {},
                       [](const mul_op&) {},
                       [](const concat_op&) {},
                       []<activation A>(const elementwise_op<A>&) {},
                       [&](const layer_norm_op<rational>& p) {
                           o.set("eps", num(p.eps_exact));
                           if (!p.gamma.empty()) o.set("gamma", vec_json(p.gamma));
                           if (!p.beta.empty()) o.set("beta", vec_json(p.beta));
                       },
                       [&](const scale_op<rational>& p) { o.set("factor", num(p.factor)); },
                       [&](const slice_op& p) {
                           o.set("from", size_value(p.from));
                           o.set("to", size_value(p.from + nd.dim));
                       },
                   },
                   nd.op);
        nodes.push_back(std::move(o));
    }
    json::value o = json::value::object();
    o.set("kind", str(map_kind<graph_map<rational>>::name));
    o.set("nodes", std::move(nodes));
    o.set("output", str(name_of(g.output)));
    return o;
}

json::value map_json(const map<rational>& m) {
    json::value o = json::value::object();
    std::visit(overloaded{
                   [&](const affine_map<rational>& a) {
                       o.set("kind", str(map_kind<affine_map<rational>>::name));
                       o.set("W", matrix_json(a.W));
                       if (!a.b.empty()) o.set("b", vec_json(a.b));
                   },
                   [&](const mlp_map<rational>& p) {
                       o.set("kind", str(map_kind<mlp_map<rational>>::name));
                       json::value layers = json::value::array();
                       for (std::size_t k = 0; k < p.layers.size(); ++k) {
                           json::value l = json::value::object();
                           l.set("W", matrix_json(p.layers[k].W));
                           if (!p.layers[k].b.empty()) l.set("b", vec_json(p.layers[k].b));
                           l.set("activation", str(to_string(p.activations[k])));
                           layers.push_back(std::move(l));
                       }
                       o.set("layers", std::move(layers));
                   },
                   [&](const graph_map<rational>& g) { o = graph_json(g); },
                   [&](const table_map& t) {
                       o.set("kind", str(map_kind<table_map>::name));
                       json::value entries = json::value::array();
                       for (const auto& [in, out] : t.entries) {
                           json::value e = json::value::object();
                           e.set("in", vec_json(in));
                           e.set("out", vec_json(out));
                           entries.push_back(std::move(e));
                       }
                       o.set("entries", std::move(entries));
                       o.set("default", vec_json(t.fallback));
                   },
                   [&](const hash_map& h) {
                       o.set("kind", str(map_kind<hash_map>::name));
                       o.set("seed", json::value::number_raw(std::to_string(h.seed)));
                       o.set("out_dim", size_value(m.out_dim));
                       o.set("range", json::value::number(h.range));
                       o.set("denominator", json::value::number(h.denominator));
                   },
               },
               m.impl);
    return o;
}

json::value positional_json(const positional_spec& p) {
    json::value o = json::value::object();
    switch (p.type) {
    case positional_spec::kind::formula: {
        o.set("kind", str("formula"));
        o.set("dim", size_value(p.dim));
        std::size_t present = 0;
        for (const auto& f : p.formulas) present += f ? 1 : 0;
        if (p.dim > 1 && 2 * present < p.dim) {
            json::value c = json::value::object();
            for (std::size_t k = 0; k < p.formulas.size(); ++k)
                if (p.formulas[k]) c.set(std::to_string(k), str(p.formulas[k]->text()));
            o.set("coordinates", std::move(c));
        } else {
            json::value c = json::value::array();
            for (const auto& f : p.formulas)
                c.push_back(f ? str(f->text()) : json::value::number(0));
            o.set("coordinates", std::move(c));
        }
        break;
    }
    case positional_spec::kind::table: {
        o.set("kind", str("table"));
        json::value rows = json::value::array();
        for (const auto& r : p.table) rows.push_back(vec_json(r));
        o.set("rows", std::move(rows));
        break;
    }
    case positional_spec::kind::sinusoidal:
        o.set("kind", str("sinusoidal"));
        o.set("dim", size_value(p.dim));
        if (p.base != 10000) o.set("base", num(p.base));
        break;
    }
    return o;
}

json::value head_json(const head<rational>& h) {
    json::value score = json::value::object();
    if (h.score.type == score_spec<rational>::kind::dot) {
        score.set("kind", str("dot"));
        score.set("Q", matrix_json(h.score.Q.W));
        score.set("K", matrix_json(h.score.K.W));
        if (!h.score.Q.b.empty()) score.set("q_bias", vec_json(h.score.Q.b));
        if (!h.score.K.b.empty()) score.set("k_bias", vec_json(h.score.K.b));
        if (!h.score.default_scale) {
            if (h.score.scale_inv_sqrt == 1) {
                score.set("scale", num(h.score.scale_factor));
            } else {
                json::value s = json::value::object();
                s.set("factor", num(h.score.scale_factor));
                s.set("inv_sqrt", num(h.score.scale_inv_sqrt));
                score.set("scale", std::move(s));
            }
        }
        if (h.score.length_scale == score_spec<rational>::length_scaling::log)
            score.set("length_scale", str("log"));
    } else {
        score.set("kind", str("map"));
        score.set("map", map_json(*h.score.fn));
    }
    if (h.score.beta && h.score.length_scale != score_spec<rational>::length_scaling::log) {
        if (auto c = h.score.beta->constant_value())
            score.set("beta", num(*c));
        else
            score.set("beta", str(h.score.beta->text()));
    }
    json::value value = json::value::object();
    if (h.value.type == value_spec<rational>::kind::linear) {
        value.set("kind", str("linear"));
        value.set("V", matrix_json(h.value.V.W));
        if (!h.value.V.b.empty()) value.set("bias", vec_json(h.value.V.b));
    } else {
        value.set("kind", str("map"));
        value.set("map", map_json(*h.value.fn));
    }
    json::value o = json::value::object();
    o.set("score", std::move(score));
    o.set("value", std::move(value));
    return o;
}

json::value readout_json(const readout<rational>& r) {
    json::value o = json::value::object();
    switch (r.type) {
    case readout<rational>::kind::threshold:
        o.set("kind", str("threshold"));
        o.set("w", vec_json(r.w_exact));
        o.set("t", num(r.t_exact));
        break;
    case readout<rational>::kind::map:
        o.set("kind", str("map"));
        o.set("map", map_json(*r.fn));
        break;
    case readout<rational>::kind::softmax: {
        o.set("kind", str("softmax"));
        json::value syms = json::value::array();
        for (const auto& s : r.symbols) syms.push_back(str(s));
        o.set("symbols", std::move(syms));
        o.set("W", matrix_json(r.logits.W));
        if (!r.logits.b.empty()) o.set("c", vec_json(r.logits.b));
        break;
    }
    }
    return o;
}

} // namespace

json::value model_to_json(const model<rational>& m) {
    json::value o = json::value::object();
    o.set("format", str("attnprop-model"));
    o.set("version", json::value::number(1));
    o.set("name", str(m.name));
    if (!m.description.empty()) o.set("description", str(m.description));
    if (!m.source.empty()) o.set("source", str(m.source));
    o.set("attention", str(to_string(m.attention)));
    json::value sigma = json::value::array();
    for (const auto& s : m.sigma.symbols) sigma.push_back(str(s));
    o.set("alphabet", std::move(sigma));
    o.set("eos", str(m.sigma.eos));
    o.set("d", size_value(m.d));
    json::value tokens = json::value::object();
    for (std::size_t k = 0; k < m.token.size(); ++k)
        tokens.set(m.sigma.name(static_cast<int>(k)), vec_json(m.token[k]));
    o.set("token_embedding", std::move(tokens));
    if (m.positional) o.set("positional", positional_json(*m.positional));
    switch (m.input) {
    case input_kind::add: o.set("input", str("add")); break;
    case input_kind::concat: o.set("input", str("concat")); break;
    case input_kind::map: {
        json::value in = json::value::object();
        in.set("kind", str("map"));
        in.set("map", map_json(*m.input_fn));
        o.set("input", std::move(in));
        break;
    }
    }
    json::value layers = json::value::array();
    for (const auto& l : m.layers) {
        json::value lo = json::value::object();
        if (l.mask != mask_kind::none) lo.set("mask", str(to_string(l.mask)));
        if (l.sigmoid_bias) {
            if (auto c = l.sigmoid_bias->constant_value())
                lo.set("sigmoid_bias", num(*c));
            else
                lo.set("sigmoid_bias", str(l.sigmoid_bias->text()));
        }
        if (info(m.attention).feature_map) lo.set("feature_map", str(to_string(l.feature_map)));
        json::value heads = json::value::array();
        for (const auto& h : l.heads) heads.push_back(head_json(h));
        lo.set("heads", std::move(heads));
        lo.set("update", map_json(l.update));
        layers.push_back(std::move(lo));
    }
    o.set("layers", std::move(layers));
    o.set("readout", readout_json(m.out));
    return o;
}

std::string write_model(const model<rational>& m) {
    writing = compaction{};
    std::string text = json::dump(model_to_json(m), 2) + "\n";
    // The reader counts every entry of a compact matrix against the file's size (limit
    // model-numbers): a model read from a dense file of identities could otherwise be written
    // in a form it refuses to read back. Dense text holds at most one number per byte, so when
    // the compact forms' entries and the text's bytes fit the budget, it reads back; otherwise
    // it is read to make sure, and written out in full if it does not.
    if (writing.implicit + text.size() > numeric::model_numbers_budget(text.size())) {
        try {
            (void)parse_model(text, "the canonical form");
        } catch (const model_file_error&) {
            writing = compaction{false, 0};
            text = json::dump(model_to_json(m), 2) + "\n";
        }
    }
    writing = compaction{};
    return text;
}

void write_model_file(const model<rational>& m, const std::string& path) {
    const std::string text = write_model(m);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        throw model_file_error(path, {}, "", std::string("cannot write: ") + std::strerror(errno));
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    int err = errno;
    if (std::fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok)
        throw model_file_error(path, {}, "", std::string("cannot write: ") + std::strerror(err));
}

} // namespace attnprop::model
