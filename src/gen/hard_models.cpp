// Random hard-attention models with arbitrary maps and their dyadic variant (generators.hpp:
// hard_model, dyadic_hard_model): a structural spec, then a genome read by the builder.
#include "gen/generators.hpp"

#include "attention/common.hpp"
#include "attention/hard.hpp"
#include "gen/genome.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <cassert>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace attnprop::gen {
namespace {

using namespace detail;

// ---------------------------------------------------------------------------------------------
// Structural specs of hard models.

/// What a map slot may hold. `simple` is the context's plain choice: a dot-product score, a
/// linear value, an affine update or input map, a threshold readout.
enum class map_kind { simple, table, hash, mlp, graph };

// Kind lists per slot; a kind listed twice is drawn twice as often. The first kind is where
// shrinking goes. Dot scores and linear values are frequent so that exact ties are frequent.
const std::vector<map_kind> score_kinds = {map_kind::simple, map_kind::simple, map_kind::table,
                                           map_kind::mlp, map_kind::hash};
const std::vector<map_kind> value_kinds = {map_kind::simple, map_kind::simple, map_kind::table,
                                           map_kind::hash};
const std::vector<map_kind> update_kinds = {map_kind::simple, map_kind::graph, map_kind::table,
                                            map_kind::mlp,    map_kind::graph, map_kind::hash};
const std::vector<map_kind> readout_kinds = {map_kind::simple, map_kind::table, map_kind::mlp,
                                             map_kind::hash};
const std::vector<map_kind> input_map_kinds = {map_kind::simple, map_kind::mlp, map_kind::hash};

/// Largest table size, graph size and MLP width code.
constexpr int max_width = 4;

/// One map slot: its kind, a width (table entries, graph nodes, MLP hidden width), the MLP's
/// hidden activation (or the affine bias flag) and the codes of table key picks (one per
/// entry) or graph nodes (four per node: op, first argument, second argument, width).
struct map_spec {
    map_kind kind = map_kind::simple;
    int width = 1;
    int act = 0;
    std::vector<int> codes;
};

/// Shrinks towards the context's first kind, width 1, activation 0, codes 0.
rc::Gen<map_spec> map_spec_gen(const std::vector<map_kind>& kinds) {
    return rc::gen::mapcat(
        rc::gen::tuple(rc::gen::inRange<std::size_t>(0, kinds.size()),
                       rc::gen::inRange(1, max_width + 1), rc::gen::inRange(0, 3)),
        [kinds](std::tuple<std::size_t, int, int> t) {
            const map_kind kind = kinds[std::get<0>(t)];
            const int width = std::get<1>(t);
            const int act = std::get<2>(t);
            const auto w = static_cast<std::size_t>(width);
            const std::size_t ncodes = kind == map_kind::graph   ? 4 * w
                                       : kind == map_kind::table ? w
                                                                 : 0;
            return rc::gen::map(
                rc::gen::container<std::vector<int>>(ncodes, rc::gen::inRange(0, code_values)),
                [kind, width, act](std::vector<int> codes) {
                    return map_spec{kind, width, act, std::move(codes)};
                });
        });
}

/// Head flags (hard): bit 0 query bias, bit 1 key bias, bit 2 explicit scale, bit 3 value bias.
struct hard_head_spec {
    map_spec score;
    std::size_t dk = 1;
    int flags = 0;
    map_spec value;
    std::size_t dv = 1;
};

struct hard_layer_spec {
    std::vector<hard_head_spec> heads;
    map_spec update;
};

struct hard_spec {
    bool dyadic = false;
    int max_dim = 1;
    int alphabet = 2;
    std::size_t d = 1;
    input_choice input = input_choice::add;
    std::size_t dtok = 1; ///< token embedding length
    std::size_t pdim = 1; ///< positional dimension
    std::vector<int> atoms;
    map_spec input_map;
    std::vector<hard_layer_spec> layers;
    map_spec readout;
};

/// Number of positional atoms per flavour (hard_atom_texts, dyadic_atom_texts).
constexpr int hard_atoms = 9;
constexpr int dyadic_atoms = 7;

/// The kinds of `kinds` allowed by the bounds (tables and hashes removed when not allowed).
std::vector<map_kind> allowed_kinds(const std::vector<map_kind>& kinds, const hard_bounds& b) {
    if (b.allow_exact_keyed_maps) return kinds;
    std::vector<map_kind> out;
    for (auto k : kinds)
        if (k != map_kind::table && k != map_kind::hash) out.push_back(k);
    return out;
}

rc::Gen<hard_spec> hard_spec_gen(const hard_bounds& b, bool dyadic) {
    const int max_dim = std::max(1, b.max_dim);
    const auto score_k = allowed_kinds(score_kinds, b), value_k = allowed_kinds(value_kinds, b),
               update_k = allowed_kinds(update_kinds, b),
               readout_k = allowed_kinds(readout_kinds, b),
               input_k = allowed_kinds(input_map_kinds, b);
    const int max_heads = std::max(1, b.max_heads);
    const int max_alpha = std::clamp(b.max_alphabet, 1, 36);
    const int min_alpha = std::min(2, max_alpha);

    auto head_gen = rc::gen::map(
        rc::gen::tuple(map_spec_gen(score_k), rc::gen::inRange(1, max_dim + 1),
                       rc::gen::inRange(0, 16), map_spec_gen(value_k),
                       rc::gen::inRange(1, max_dim + 1)),
        [](std::tuple<map_spec, int, int, map_spec, int> t) {
            hard_head_spec h;
            h.score = std::move(std::get<0>(t));
            h.dk = static_cast<std::size_t>(std::get<1>(t));
            h.flags = std::get<2>(t);
            h.value = std::move(std::get<3>(t));
            h.dv = static_cast<std::size_t>(std::get<4>(t));
            return h;
        });
    auto layer_gen = rc::gen::mapcat(rc::gen::inRange(1, max_heads + 1), [head_gen, update_k](int heads) {
        return rc::gen::map(
            rc::gen::tuple(rc::gen::container<std::vector<hard_head_spec>>(
                               static_cast<std::size_t>(heads), head_gen),
                           map_spec_gen(update_k)),
            [](std::tuple<std::vector<hard_head_spec>, map_spec> t) {
                return hard_layer_spec{std::move(std::get<0>(t)), std::move(std::get<1>(t))};
            });
    });

    auto top = rc::gen::tuple(rc::gen::inRange(min_alpha, max_alpha + 1),
                              rc::gen::inRange(1, max_dim + 1), rc::gen::inRange(0, 3),
                              rc::gen::inRange(0, code_values), rc::gen::inRange(1, max_dim + 1),
                              rc::gen::inRange(1, std::max(1, b.max_layers) + 1));
    return rc::gen::mapcat(top, [=](std::tuple<int, int, int, int, int, int> t) {
        hard_spec s;
        s.dyadic = dyadic;
        s.max_dim = max_dim;
        s.alphabet = std::get<0>(t);
        s.d = static_cast<std::size_t>(std::get<1>(t));
        s.input = static_cast<input_choice>(std::get<2>(t));
        if (s.input == input_choice::concat && s.d == 1) s.input = input_choice::add;
        split_dims(s.input, s.d, std::get<3>(t), std::get<4>(t), max_dim, s.dtok, s.pdim);
        const auto layers = static_cast<std::size_t>(std::get<5>(t));
        auto input_map = s.input == input_choice::map ? map_spec_gen(input_k)
                                                      : rc::gen::just(map_spec{});
        return rc::gen::map(
            rc::gen::tuple(
                rc::gen::container<std::vector<int>>(
                    s.pdim, rc::gen::inRange(0, dyadic ? dyadic_atoms : hard_atoms)),
                rc::gen::container<std::vector<hard_layer_spec>>(layers, layer_gen),
                map_spec_gen(readout_k), input_map),
            [s](std::tuple<std::vector<int>, std::vector<hard_layer_spec>, map_spec, map_spec> u) {
                hard_spec out = s;
                out.atoms = std::move(std::get<0>(u));
                out.layers = std::move(std::get<1>(u));
                out.readout = std::move(std::get<2>(u));
                out.input_map = std::move(std::get<3>(u));
                return out;
            });
    });
}

const std::vector<std::string> hard_atom_texts = {"1",   "(-1)^i",  "[i==1]", "i - 2*floor(i/2)",
                                                  "i/n", "(n-i)/n", "i",      "[i==n]",
                                                  "1/i"};
const std::vector<std::string> dyadic_atom_texts = {"1", "(-1)^i", "[i==1]", "i - 2*floor(i/2)",
                                                    "i", "[i==n]", "n - i"};

// ---------------------------------------------------------------------------------------------
// Pieces of the hard builder.

/// Short probe inputs (symbol indices, eos appended) on which table keys are observed: every
/// word of length <= 2 and a few patterned words of length 5.
std::vector<model::input_sequence> probe_inputs(int alphabet) {
    std::vector<model::input_sequence> out;
    const int eos = alphabet;
    out.push_back({eos});
    for (int a = 0; a < alphabet; ++a) {
        out.push_back({a, eos});
        for (int c = 0; c < alphabet; ++c) out.push_back({a, c, eos});
    }
    for (int pattern = 0; pattern < 3; ++pattern) {
        model::input_sequence x;
        for (int i = 0; i < 5; ++i)
            x.push_back(pattern == 0 ? i % alphabet
                        : pattern == 1 ? (2 * i + 1) % alphabet
                                       : (i % 2 == 0 ? alphabet - 1 : 0));
        x.push_back(eos);
        out.push_back(std::move(x));
    }
    return out;
}

/// The named parts of a map's input, the output dimension and what the builder knows about the
/// input's values.
struct map_io {
    std::vector<std::pair<std::string, std::size_t>> parts;
    bool has_b = false;   ///< update maps: also the name "b" for all head outputs
    std::size_t out_dim = 1;
    double in_bound = 1;  ///< bound on |input coordinates|
    double clamp_at = 0;  ///< dyadic updates: clamp the output when its bound exceeds this
    std::function<std::vector<vec<rational>>()> keys; ///< plausible inputs (tables)

    std::size_t in_dim() const {
        std::size_t s = 0;
        for (const auto& p : parts) s += p.second;
        return s;
    }
};

struct built_map {
    json::value json;
    double bound = 0; ///< bound on |output coordinates|
};

constexpr double graph_node_limit = 16777216.0; // 2^24
constexpr double graph_node_clamp = 65536.0;     // 2^16
constexpr double update_clamp = 4096.0;          // 2^12

// ---------------------------------------------------------------------------------------------
// Hard and dyadic models.

class hard_builder {
public:
    hard_builder(const hard_spec& s, const std::vector<int>& genes, bool dry)
        : s_(s), g_(genes), dry_(dry), probes_(probe_inputs(s.alphabet)) {}

    std::size_t consumed() const { return g_.consumed(); }

    json::value build();

private:
    rational coef() { return s_.dyadic ? rational(g_.integer(2)) : g_.fraction(4, 4); }
    rational small_int() { return rational(g_.integer(2)); }
    std::vector<rational> coefs(std::size_t k) {
        std::vector<rational> v;
        for (std::size_t t = 0; t < k; ++t) v.push_back(coef());
        return v;
    }
    dense matrix(std::size_t rows, std::size_t cols) { return {rows, cols, coefs(rows * cols)}; }
    dense int_matrix(std::size_t rows, std::size_t cols) {
        dense m{rows, cols, {}};
        for (std::size_t t = 0; t < rows * cols; ++t) m.a.push_back(small_int());
        return m;
    }
    std::size_t hidden_width(int width) const {
        return 1 + static_cast<std::size_t>(width - 1) % static_cast<std::size_t>(s_.max_dim);
    }

    built_map build_map(const map_spec& spec, const map_io& io);
    built_map affine(const map_spec& spec, const map_io& io);
    built_map table(const map_spec& spec, const map_io& io);
    built_map hash(const map_io& io);
    built_map mlp(const map_spec& spec, const map_io& io);
    built_map graph(const map_spec& spec, const map_io& io);

    /// A valid model from the layers built so far plus `extra` layers and a dummy readout.
    json::value partial(const std::vector<json::value>& extra) const;
    /// Traces of `m` on every probe input.
    std::vector<attention::hard_trace<rational>> traces(const exact_model& m) const;

    const hard_spec& s_;
    genome_reader g_;
    bool dry_;
    std::vector<model::input_sequence> probes_;
    json::value doc_;
    json::value layers_ = json::value::array();
    numeric::context ctx_{};
};

json::value hard_builder::partial(const std::vector<json::value>& extra) const {
    json::value doc = doc_;
    json::value layers = layers_;
    for (const auto& l : extra) layers.push_back(l);
    doc.set("layers", std::move(layers));
    json::value r = json::value::object();
    r.set("kind", jstr("threshold"));
    r.set("w", jvec(std::vector<rational>(s_.d)));
    r.set("t", jint(0));
    doc.set("readout", std::move(r));
    return doc;
}

std::vector<attention::hard_trace<rational>> hard_builder::traces(const exact_model& m) const {
    std::vector<attention::hard_trace<rational>> out;
    for (const auto& x : probes_) out.push_back(*attention::hard_forward(m, x, ctx_, true).trace);
    return out;
}

/// Sorted distinct vectors.
std::vector<vec<rational>> distinct(std::set<vec<rational>> s) {
    return {std::make_move_iterator(s.begin()), std::make_move_iterator(s.end())};
}

/// A clamp block relu(x + M) - relu(x - M) - M appended to a graph's nodes; returns its id.
std::string append_clamp(json::value& nodes, const std::string& x, std::size_t dim, double m,
                         int& next_id) {
    auto fresh = [&] { return "n" + std::to_string(next_id++); };
    const rational big(static_cast<long>(m));
    auto identity = [&] {
        json::value id = json::value::object();
        id.set("identity", jint(dim));
        return id;
    };
    auto linear = [&](const std::string& in, const rational& bias) {
        const std::string id = fresh();
        json::value nd = json::value::object();
        nd.set("id", jstr(id));
        nd.set("op", jstr("linear"));
        nd.set("in", jstr(in));
        nd.set("W", identity());
        nd.set("b", jvec(std::vector<rational>(dim, bias)));
        nodes.push_back(std::move(nd));
        return id;
    };
    auto unary = [&](const std::string& op, const std::string& in) {
        const std::string id = fresh();
        json::value nd = json::value::object();
        nd.set("id", jstr(id));
        nd.set("op", jstr(op));
        nd.set("in", jstr(in));
        nodes.push_back(std::move(nd));
        return id;
    };
    const std::string up = unary("relu", linear(x, big));
    const std::string down = unary("relu", linear(x, -big));
    const std::string diff = fresh();
    json::value nd = json::value::object();
    nd.set("id", jstr(diff));
    nd.set("op", jstr("sub"));
    nd.set("in", jnames({up, down}));
    nodes.push_back(std::move(nd));
    return linear(diff, -big);
}

built_map hard_builder::build_map(const map_spec& spec, const map_io& io) {
    switch (spec.kind) {
    case map_kind::simple: return affine(spec, io);
    case map_kind::table: return table(spec, io);
    case map_kind::hash: return hash(io);
    case map_kind::mlp: return mlp(spec, io);
    case map_kind::graph: return graph(spec, io);
    }
    return affine(spec, io);
}

built_map hard_builder::affine(const map_spec& spec, const map_io& io) {
    const dense w = matrix(io.out_dim, io.in_dim());
    std::vector<rational> b;
    if (spec.act % 2 == 1) b = coefs(io.out_dim);
    const double bound = w.row_norm() * io.in_bound + max_abs(b);
    json::value o = json::value::object();
    if (io.clamp_at > 0 && bound > io.clamp_at) {
        // The same affine map as a graph node, clamped: concat the inputs, linear, clamp.
        json::value nodes = json::value::array();
        int next_id = 0;
        std::vector<std::string> names;
        for (const auto& p : io.parts) names.push_back(p.first);
        json::value all = json::value::object();
        all.set("id", jstr("all"));
        all.set("op", jstr("concat"));
        all.set("in", jnames(names));
        nodes.push_back(std::move(all));
        json::value lin = json::value::object();
        lin.set("id", jstr("lin"));
        lin.set("op", jstr("linear"));
        lin.set("in", jstr("all"));
        lin.set("W", w.to_json());
        if (!b.empty()) lin.set("b", jvec(b));
        nodes.push_back(std::move(lin));
        const std::string out = append_clamp(nodes, "lin", io.out_dim, io.clamp_at, next_id);
        o.set("kind", jstr("graph"));
        o.set("nodes", std::move(nodes));
        o.set("output", jstr(out));
        return {std::move(o), io.clamp_at};
    }
    o.set("kind", jstr("affine"));
    o.set("W", w.to_json());
    if (!b.empty()) o.set("b", jvec(b));
    return {std::move(o), bound};
}

built_map hard_builder::table(const map_spec& spec, const map_io& io) {
    std::vector<vec<rational>> keys;
    if (!dry_ && io.keys) keys = io.keys();
    json::value entries = json::value::array();
    std::set<vec<rational>> used;
    double bound = 0;
    for (int e = 0; e < spec.width; ++e) {
        std::vector<rational> out = coefs(io.out_dim); // consumed whether or not it is used
        bound = std::max(bound, max_abs(out));
        if (keys.empty()) continue;
        const auto& key = keys[static_cast<std::size_t>(spec.codes[static_cast<std::size_t>(e)]) %
                               keys.size()];
        if (!used.insert(key).second) continue;
        json::value entry = json::value::object();
        entry.set("in", jvec(key));
        entry.set("out", jvec(out));
        entries.push_back(std::move(entry));
    }
    std::vector<rational> fallback = coefs(io.out_dim);
    bound = std::max(bound, max_abs(fallback));
    json::value o = json::value::object();
    o.set("kind", jstr("table"));
    o.set("entries", std::move(entries));
    o.set("default", jvec(fallback));
    return {std::move(o), bound};
}

built_map hard_builder::hash(const map_io& io) {
    const int g1 = g_.gene(), g2 = g_.gene(), g3 = g_.gene();
    const long seed = g1 + gene_values * g2 + gene_values * gene_values * g3;
    const long range = s_.dyadic ? 1 + g_.gene() % 3 : 1 + g_.gene() % 4;
    const long den = s_.dyadic ? 1 : 1 + g_.gene() % 4;
    json::value o = json::value::object();
    o.set("kind", jstr("hash"));
    o.set("seed", json::value::number(seed));
    o.set("out_dim", jint(io.out_dim));
    o.set("range", json::value::number(range));
    o.set("denominator", json::value::number(den));
    return {std::move(o), static_cast<double>(range) / static_cast<double>(den)};
}

built_map hard_builder::mlp(const map_spec& spec, const map_io& io) {
    static const char* const acts[] = {"step", "relu", "floor"};
    const std::size_t hidden = hidden_width(spec.width);
    const dense w1 = matrix(hidden, io.in_dim());
    const std::vector<rational> b1 = coefs(hidden);
    // Dyadic models keep step hidden units, so the output stays bounded by construction.
    const int act = s_.dyadic ? 0 : spec.act;
    const dense w2 = matrix(io.out_dim, hidden);
    const std::vector<rational> b2 = coefs(io.out_dim);
    const double pre = w1.row_norm() * io.in_bound + max_abs(b1);
    const double hb = act == 0 ? 1.0 : act == 1 ? pre : pre + 1;
    json::value l1 = json::value::object();
    l1.set("W", w1.to_json());
    l1.set("b", jvec(b1));
    l1.set("activation", jstr(acts[act]));
    json::value l2 = json::value::object();
    l2.set("W", w2.to_json());
    l2.set("b", jvec(b2));
    l2.set("activation", jstr("identity"));
    json::value layers = json::value::array();
    layers.push_back(std::move(l1));
    layers.push_back(std::move(l2));
    json::value o = json::value::object();
    o.set("kind", jstr("mlp"));
    o.set("layers", std::move(layers));
    return {std::move(o), w2.row_norm() * hb + max_abs(b2)};
}

built_map hard_builder::graph(const map_spec& spec, const map_io& io) {
    struct slot {
        std::string name;
        std::size_t dim;
        double bound;
    };
    std::vector<slot> avail;
    for (const auto& p : io.parts) avail.push_back({p.first, p.second, io.in_bound});
    if (io.has_b) {
        std::size_t bdim = 0;
        for (std::size_t t = 1; t < io.parts.size(); ++t) bdim += io.parts[t].second;
        avail.push_back({"b", bdim, io.in_bound});
    }
    json::value nodes = json::value::array();
    int next_id = 0;
    auto clamp_last = [&](double m) {
        const slot last = avail.back();
        avail.push_back({append_clamp(nodes, last.name, last.dim, m, next_id), last.dim, m});
    };
    auto push = [&](json::value nd, std::size_t dim, double bound) {
        const std::string id = nd.find("id")->as_string();
        nodes.push_back(std::move(nd));
        avail.push_back({id, dim, bound});
        if (s_.dyadic && bound > graph_node_limit) clamp_last(graph_node_clamp);
    };
    auto node = [&](const char* op, std::vector<std::string> in) {
        json::value nd = json::value::object();
        nd.set("id", jstr("n" + std::to_string(next_id++)));
        nd.set("op", jstr(op));
        nd.set("in", jnames(in));
        return nd;
    };
    const auto max_dim = static_cast<std::size_t>(s_.max_dim);
    for (int t = 0; t < spec.width; ++t) {
        const auto* c = &spec.codes[4 * static_cast<std::size_t>(t)];
        const slot x = avail[static_cast<std::size_t>(c[1]) % avail.size()];
        switch (c[0] % 9) {
        case 0: { // linear
            const std::size_t od = 1 + static_cast<std::size_t>(c[3]) % max_dim;
            const dense w = matrix(od, x.dim);
            std::vector<rational> b;
            if (c[2] % 2 == 1) b = coefs(od);
            json::value nd = node("linear", {x.name});
            nd.set("W", w.to_json());
            if (!b.empty()) nd.set("b", jvec(b));
            push(std::move(nd), od, w.row_norm() * x.bound + max_abs(b));
            break;
        }
        case 1:
        case 2: { // add, sub: a second argument of the same dimension (possibly x itself)
            std::vector<slot> same;
            for (const auto& a : avail)
                if (a.dim == x.dim) same.push_back(a);
            const slot y = same[static_cast<std::size_t>(c[2]) % same.size()];
            push(node(c[0] % 9 == 1 ? "add" : "sub", {x.name, y.name}), x.dim, x.bound + y.bound);
            break;
        }
        case 3: { // concat
            const slot y = avail[static_cast<std::size_t>(c[2]) % avail.size()];
            push(node("concat", {x.name, y.name}), x.dim + y.dim, std::max(x.bound, y.bound));
            break;
        }
        case 4: push(node("relu", {x.name}), x.dim, x.bound); break;
        case 5: push(node("step", {x.name}), x.dim, 1.0); break;
        case 6: push(node("floor", {x.name}), x.dim, x.bound + 1); break;
        case 7: { // scale
            const rational f = coef();
            json::value nd = node("scale", {x.name});
            nd.set("factor", jnum(f));
            push(std::move(nd), x.dim, magnitude(f) * x.bound);
            break;
        }
        default: { // slice
            const std::size_t from = static_cast<std::size_t>(c[2]) % x.dim;
            const std::size_t to = from + 1 + static_cast<std::size_t>(c[3]) % (x.dim - from);
            json::value nd = node("slice", {x.name});
            nd.set("from", jint(from));
            nd.set("to", jint(to));
            push(std::move(nd), to - from, x.bound);
            break;
        }
        }
    }
    if (avail.back().dim != io.out_dim) {
        const slot last = avail.back();
        const dense w = matrix(io.out_dim, last.dim);
        json::value nd = node("linear", {last.name});
        nd.set("W", w.to_json());
        push(std::move(nd), io.out_dim, w.row_norm() * last.bound);
    }
    if (io.clamp_at > 0 && avail.back().bound > io.clamp_at) clamp_last(io.clamp_at);
    json::value o = json::value::object();
    o.set("kind", jstr("graph"));
    o.set("nodes", std::move(nodes));
    o.set("output", jstr(avail.back().name));
    return {std::move(o), avail.back().bound};
}

json::value hard_builder::build() {
    const hard_spec& s = s_;
    doc_ = model_header("hard", "generated-hard",
                        s.dyadic ? "random dyadic hard-attention model from attnprop's generator "
                                   "(gen::dyadic_hard_model): small-integer parameters, integer "
                                   "maps; double, MPFR and exact agree"
                                 : "random hard-attention model from attnprop's generator "
                                   "(gen::hard_model): arbitrary maps, exact rationals",
                        s.alphabet, s.d);

    // Token embedding.
    json::value tokens = json::value::object();
    double token_bound = 0;
    for (int k = 0; k <= s.alphabet; ++k) {
        std::vector<rational> v = coefs(s.dtok);
        token_bound = std::max(token_bound, max_abs(v));
        tokens.set(k == s.alphabet ? eos_name : symbol_name(k), jvec(v));
    }
    doc_.set("token_embedding", std::move(tokens));

    // Positional embedding: c1 * atom + c0 per coordinate.
    const auto& atoms = s.dyadic ? dyadic_atom_texts : hard_atom_texts;
    json::value coords = json::value::array();
    double pos_bound = 0;
    for (int a : s.atoms) {
        const auto [text, ab] = atom_text(a, atoms);
        const rational c1 = coef(), c0 = coef();
        pos_bound = std::max(pos_bound, magnitude(c1) * ab + magnitude(c0));
        coords.push_back(coordinate(text, c1, c0));
    }
    json::value pos = json::value::object();
    pos.set("kind", jstr("formula"));
    pos.set("dim", jint(s.pdim));
    pos.set("coordinates", std::move(coords));
    doc_.set("positional", std::move(pos));

    // Input map.
    double bound = 0;
    switch (s.input) {
    case input_choice::add:
        doc_.set("input", jstr("add"));
        bound = token_bound + pos_bound;
        break;
    case input_choice::concat:
        doc_.set("input", jstr("concat"));
        bound = std::max(token_bound, pos_bound);
        break;
    case input_choice::map: {
        map_io io;
        io.parts = {{"v", s.dtok}, {"p", s.pdim}};
        io.out_dim = s.d;
        io.in_bound = std::max(token_bound, pos_bound);
        built_map bm = build_map(s.input_map, io);
        json::value in = json::value::object();
        in.set("kind", jstr("map"));
        in.set("map", std::move(bm.json));
        doc_.set("input", std::move(in));
        bound = bm.bound;
        break;
    }
    }

    for (std::size_t k = 0; k < s.layers.size(); ++k) {
        const hard_layer_spec& ls = s.layers[k];
        // States y^(k) on the probes, computed once if some head needs them for table keys.
        std::optional<std::vector<vec<rational>>> states, pairs;
        auto observe = [&] {
            if (states) return;
            states.emplace();
            pairs.emplace();
            std::set<vec<rational>> st, pr;
            for (const auto& tr : traces(parse_doc(partial({})))) {
                const auto& ys = tr.y[k];
                for (const auto& yi : ys) {
                    st.insert(yi);
                    for (const auto& yj : ys) {
                        vec<rational> p = yi;
                        p.insert(p.end(), yj.begin(), yj.end());
                        pr.insert(std::move(p));
                    }
                }
            }
            *states = distinct(std::move(st));
            *pairs = distinct(std::move(pr));
        };

        json::value heads = json::value::array();
        std::vector<std::size_t> dvs;
        double value_bound = 0;
        for (const hard_head_spec& hs : ls.heads) {
            json::value head = json::value::object();
            json::value score = json::value::object();
            if (hs.score.kind == map_kind::simple) {
                const dense q = int_matrix(hs.dk, s.d);
                std::vector<rational> qb, kb;
                if (hs.flags & 1) {
                    for (std::size_t t = 0; t < hs.dk; ++t) qb.push_back(small_int());
                }
                const dense kk = int_matrix(hs.dk, s.d);
                if (hs.flags & 2) {
                    for (std::size_t t = 0; t < hs.dk; ++t) kb.push_back(small_int());
                }
                score.set("kind", jstr("dot"));
                score.set("Q", q.to_json());
                if (!qb.empty()) score.set("q_bias", jvec(qb));
                score.set("K", kk.to_json());
                if (!kb.empty()) score.set("k_bias", jvec(kb));
                if (!s.dyadic && (hs.flags & 4)) score.set("scale", jnum(g_.positive(4, 4)));
            } else {
                map_io io;
                io.parts = {{"q", s.d}, {"k", s.d}};
                io.out_dim = 1;
                io.in_bound = bound;
                io.keys = [&] {
                    observe();
                    return *pairs;
                };
                score.set("kind", jstr("map"));
                score.set("map", build_map(hs.score, io).json);
            }
            head.set("score", std::move(score));

            json::value value = json::value::object();
            if (hs.value.kind == map_kind::simple) {
                const dense v = matrix(hs.dv, s.d);
                std::vector<rational> vb;
                if (hs.flags & 8) vb = coefs(hs.dv);
                value.set("kind", jstr("linear"));
                value.set("V", v.to_json());
                if (!vb.empty()) value.set("bias", jvec(vb));
                value_bound = std::max(value_bound, v.row_norm() * bound + max_abs(vb));
            } else {
                map_io io;
                io.parts = {{"y", s.d}};
                io.out_dim = hs.dv;
                io.in_bound = bound;
                io.keys = [&] {
                    observe();
                    return *states;
                };
                built_map bm = build_map(hs.value, io);
                value.set("kind", jstr("map"));
                value.set("map", std::move(bm.json));
                value_bound = std::max(value_bound, bm.bound);
            }
            head.set("value", std::move(value));
            heads.push_back(std::move(head));
            dvs.push_back(hs.dv);
        }

        map_io io;
        io.parts = {{"y", s.d}};
        for (std::size_t h = 0; h < dvs.size(); ++h)
            io.parts.emplace_back("b" + std::to_string(h + 1), dvs[h]);
        io.has_b = true;
        io.out_dim = s.d;
        io.in_bound = std::max(bound, value_bound);
        io.clamp_at = s.dyadic ? update_clamp : 0;
        io.keys = [&] {
            // (y_j^(k), b_j1, ..., b_jH) on the probes, with this layer's heads in place.
            json::value layer = json::value::object();
            layer.set("heads", heads);
            json::value upd = json::value::object();
            upd.set("kind", jstr("affine"));
            upd.set("W", zero_matrix(s.d, io.in_dim()).to_json());
            layer.set("update", std::move(upd));
            const exact_model m = parse_doc(partial({layer}));
            std::set<vec<rational>> ks;
            for (const auto& tr : traces(m)) {
                const auto& ys = tr.y[k];
                for (std::size_t j = 0; j < ys.size(); ++j) {
                    vec<rational> key = ys[j];
                    for (std::size_t h = 0; h < m.layers[k].heads.size(); ++h) {
                        const auto& src = ys[tr.choice[k][j][h]];
                        vec<rational> b = attention::value(m.layers[k].heads[h], src, ctx_);
                        key.insert(key.end(), b.begin(), b.end());
                    }
                    ks.insert(std::move(key));
                }
            }
            return distinct(std::move(ks));
        };
        built_map upd = build_map(ls.update, io);
        bound = upd.bound;
        json::value layer = json::value::object();
        layer.set("heads", std::move(heads));
        layer.set("update", std::move(upd.json));
        layers_.push_back(std::move(layer));
    }
    doc_.set("layers", layers_);

    json::value readout = json::value::object();
    if (s.readout.kind == map_kind::simple) {
        readout.set("kind", jstr("threshold"));
        readout.set("w", jvec(coefs(s.d)));
        readout.set("t", jnum(coef()));
    } else {
        map_io io;
        io.parts = {{"y", s.d}};
        io.out_dim = 1;
        io.in_bound = bound;
        io.keys = [&] {
            std::set<vec<rational>> ks;
            for (const auto& tr : traces(parse_doc(partial({})))) ks.insert(tr.y.back().back());
            return distinct(std::move(ks));
        };
        readout.set("kind", jstr("map"));
        readout.set("map", build_map(s.readout, io).json);
    }
    doc_.set("readout", std::move(readout));
    return doc_;
}

std::size_t hard_genome_length(const hard_spec& s) {
    const std::vector<int> none;
    hard_builder b(s, none, true);
    b.build();
    return b.consumed();
}

exact_model build_hard(const hard_spec& s, const std::vector<int>& genes) {
    hard_builder b(s, genes, false);
    json::value doc = b.build();
    assert(b.consumed() == genes.size()); // consumption never depends on gene values
    return parse_doc(doc);
}

rc::Gen<exact_model> hard_like(const hard_bounds& b, bool dyadic) {
    return rc::gen::mapcat(hard_spec_gen(b, dyadic), [](hard_spec s) {
        const std::size_t count = hard_genome_length(s);
        return rc::gen::map(
            rc::gen::container<std::vector<int>>(count, rc::gen::inRange(0, gene_values)),
            [s](const std::vector<int>& genes) { return build_hard(s, genes); });
    });
}

} // namespace

rc::Gen<model::model<numeric::rational>> hard_model(const hard_bounds& b) {
    return hard_like(b, false);
}

rc::Gen<model::model<numeric::rational>> dyadic_hard_model(const hard_bounds& b) {
    return hard_like(b, true);
}

} // namespace attnprop::gen
