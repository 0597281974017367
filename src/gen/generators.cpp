// RapidCheck generators of random models and inputs (see generators.hpp for the design).

#include "gen/generators.hpp"

#include "attention/common.hpp"
#include "attention/hard.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <functional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace attnprop::gen {
namespace {

using model::vec;
using numeric::rational;
using exact_model = model::model<rational>;

// ---------------------------------------------------------------------------------------------
// Genome: coefficients from small integers that shrink towards 0.

/// Genes are in [0, gene_values).
constexpr int gene_values = 9;

/// 0, 1, -1, 2, -2, ... for g = 0, 1, 2, 3, 4, ...: shrinking g towards 0 shrinks |value|.
long zigzag(int g) { return g % 2 == 1 ? (g + 1) / 2 : -(g / 2); }

/// Reads coefficients from a genome, in order; a genome that runs out reads genes 0. Counts
/// what it read, so a dry run over an empty genome gives the genome length a spec needs.
class genome_reader {
public:
    explicit genome_reader(const std::vector<int>& genes) : genes_(&genes) {}

    std::size_t consumed() const { return pos_; }

    int gene() {
        const int g = pos_ < genes_->size() ? (*genes_)[pos_] : 0;
        ++pos_;
        return g;
    }
    /// An integer in [-max_abs, max_abs] (one gene), 0 for gene 0.
    long integer(int max_abs) { return zigzag(gene() % (2 * max_abs + 1)); }
    /// p / q with |p| <= max_abs, 1 <= q <= max_den (two genes), 0/1 for genes 0.
    rational fraction(int max_abs, int max_den) {
        const long p = integer(max_abs);
        const long q = 1 + gene() % max_den;
        return rational(p, q);
    }
    /// p / q with 1 <= p <= max_num, 1 <= q <= max_den (two genes), 1 for genes 0.
    rational positive(int max_num, int max_den) {
        const long p = 1 + gene() % max_num;
        const long q = 1 + gene() % max_den;
        return rational(p, q);
    }

private:
    const std::vector<int>* genes_;
    std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// JSON helpers.

json::value jnum(const rational& q) {
    std::string s = numeric::to_exact_string(q);
    if (s.find('/') == std::string::npos) return json::value::number_raw(std::move(s));
    return json::value::string(std::move(s));
}
json::value jint(std::size_t v) { return json::value::number(static_cast<long long>(v)); }
json::value jstr(std::string s) { return json::value::string(std::move(s)); }

json::value jvec(const std::vector<rational>& v) {
    json::value a = json::value::array();
    for (const auto& q : v) a.push_back(jnum(q));
    return a;
}

json::value jnames(const std::vector<std::string>& names) {
    if (names.size() == 1) return jstr(names.front());
    json::value a = json::value::array();
    for (const auto& s : names) a.push_back(jstr(s));
    return a;
}

double magnitude(const rational& q) { return std::fabs(numeric::to_double_nearest(q)); }

double max_abs(const std::vector<rational>& v) {
    double m = 0;
    for (const auto& q : v) m = std::max(m, magnitude(q));
    return m;
}

/// A dense exact matrix being built.
struct dense {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<rational> a; ///< row-major

    json::value to_json() const {
        json::value m = json::value::array();
        for (std::size_t r = 0; r < rows; ++r) {
            json::value row = json::value::array();
            for (std::size_t c = 0; c < cols; ++c) row.push_back(jnum(a[r * cols + c]));
            m.push_back(std::move(row));
        }
        return m;
    }
    /// max_r sum_c |a_rc|: |W x|_inf <= row_norm() |x|_inf.
    double row_norm() const {
        double m = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            double s = 0;
            for (std::size_t c = 0; c < cols; ++c) s += magnitude(a[r * cols + c]);
            m = std::max(m, s);
        }
        return m;
    }
};

dense zero_matrix(std::size_t rows, std::size_t cols) {
    return {rows, cols, std::vector<rational>(rows * cols)};
}

// ---------------------------------------------------------------------------------------------
// Structural specs.

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
/// Structural codes of tables and graphs are in [0, code_values).
constexpr int code_values = 64;

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

enum class input_choice { add, concat, map };

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

/// Token dimension and positional dimension for an input choice.
void split_dims(input_choice in, std::size_t d, int split, int pdim_code, int max_dim,
                std::size_t& dtok, std::size_t& pdim) {
    switch (in) {
    case input_choice::add: dtok = pdim = d; break;
    case input_choice::concat:
        dtok = 1 + static_cast<std::size_t>(split) % (d - 1);
        pdim = d - dtok;
        break;
    case input_choice::map:
        dtok = 1 + static_cast<std::size_t>(split) % static_cast<std::size_t>(max_dim);
        pdim = static_cast<std::size_t>(pdim_code);
        break;
    }
}

/// Number of positional atoms per flavour (see atom_text).
constexpr int hard_atoms = 9;
constexpr int dyadic_atoms = 7;
constexpr int soft_atoms = 8;

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

// ---------------------------------------------------------------------------------------------
// Shared pieces of the builders.

std::string symbol_name(int k) {
    static const std::string chars = "0123456789abcdefghijklmnopqrstuvwxyz";
    return std::string(1, chars[static_cast<std::size_t>(k)]);
}

const char* const eos_name = "$";

/// Positional atom text and a bound on |atom| for n <= 4096.
std::pair<std::string, double> atom_text(int atom, const std::vector<std::string>& table) {
    const std::string& t = table[static_cast<std::size_t>(atom)];
    const double bound = (t == "i" || t == "n - i") ? 4096.0 : 1.0;
    return {t, bound};
}

const std::vector<std::string> hard_atom_texts = {"1",   "(-1)^i",  "[i==1]", "i - 2*floor(i/2)",
                                                  "i/n", "(n-i)/n", "i",      "[i==n]",
                                                  "1/i"};
const std::vector<std::string> dyadic_atom_texts = {"1", "(-1)^i", "[i==1]", "i - 2*floor(i/2)",
                                                    "i", "[i==n]", "n - i"};
const std::vector<std::string> soft_atom_texts = {"1",   "(-1)^i",  "[i==1]", "i - 2*floor(i/2)",
                                                  "i/n", "(n-i)/n", "[i==n]", "1/i"};

std::string paren(const rational& q) { return "(" + numeric::to_exact_string(q) + ")"; }

/// c1 * atom + c0 as a formula coordinate (a number when constant).
json::value coordinate(const std::string& atom, const rational& c1, const rational& c0) {
    if (atom == "1") return jnum(c1 + c0);
    if (c1 == 0) return jnum(c0);
    std::string text = (c1 == 1 ? std::string() : paren(c1) + "*") + "(" + atom + ")";
    if (c0 != 0) text += " + " + paren(c0);
    return jstr(std::move(text));
}

json::value model_header(const std::string& attention, const std::string& name,
                         const std::string& description, int alphabet, std::size_t d) {
    json::value doc = json::value::object();
    doc.set("format", jstr("attnprop-model"));
    doc.set("version", jint(1));
    doc.set("name", jstr(name));
    doc.set("description", jstr(description));
    doc.set("source", jstr("attnprop generator"));
    doc.set("attention", jstr(attention));
    json::value sigma = json::value::array();
    for (int k = 0; k < alphabet; ++k) sigma.push_back(jstr(symbol_name(k)));
    doc.set("alphabet", std::move(sigma));
    doc.set("eos", jstr(eos_name));
    doc.set("d", jint(d));
    return doc;
}

exact_model parse_doc(const json::value& doc) {
    return model::parse_model(json::dump(doc, -1), "<generated>");
}

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

// ---------------------------------------------------------------------------------------------
// Soft models.

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

// ---------------------------------------------------------------------------------------------
// Near ties.

struct near_tie_spec {
    int alphabet = 2;
    int base = 0;
    int exponent = 19;
    int mantissa = 1;
    int bumped = 1;
    std::vector<int> extras; ///< extra coordinates' token entries, (alphabet + 1) per coordinate
};

exact_model build_near_tie(const near_tie_spec& s) {
    static const std::pair<long, long> bases[] = {{1, 3}, {2, 3}, {1, 7}, {5, 9}, {3, 11}, {7, 13}};
    const rational base(bases[s.base].first, bases[s.base].second);
    rational eps(s.mantissa);
    for (int t = 0; t < s.exponent; ++t) eps /= 10;
    // Make sure base and base + eps round to the same double (the point of the model).
    while (numeric::to_double_nearest(base) != numeric::to_double_nearest(base + eps))
        eps /= 1000;
    const std::size_t extra = s.extras.size() / static_cast<std::size_t>(s.alphabet + 1);
    const std::size_t d = 2 + extra;
    json::value doc = model_header(
        "hard", "generated-hard",
        "random near-tie hard-attention model from attnprop's generator "
        "(gen::near_tie_hard_model): keys " + numeric::to_exact_string(base) + " and " +
            numeric::to_exact_string(base) + " + " + numeric::to_exact_string(eps) +
            " tie in double but not exactly, so double attends to a different position",
        s.alphabet, d);
    json::value tokens = json::value::object();
    for (int k = 0; k <= s.alphabet; ++k) {
        std::vector<rational> v;
        if (k == s.alphabet) {
            v = {base - 1, rational(0)};
        } else if (k == s.bumped) {
            v = {base + eps, rational(1)};
        } else {
            v = {base, rational(0)};
        }
        for (std::size_t e = 0; e < extra; ++e)
            v.emplace_back(zigzag(s.extras[e * static_cast<std::size_t>(s.alphabet + 1) +
                                           static_cast<std::size_t>(k)]));
        tokens.set(k == s.alphabet ? eos_name : symbol_name(k), jvec(v));
    }
    doc.set("token_embedding", std::move(tokens));
    json::value pos = json::value::object();
    pos.set("kind", jstr("formula"));
    pos.set("dim", jint(d));
    pos.set("coordinates", jvec(std::vector<rational>(d)));
    doc.set("positional", std::move(pos));
    doc.set("input", jstr("add"));

    auto unit_row = [&](std::size_t at, std::size_t cols) {
        dense m = zero_matrix(1, cols);
        m.a[at] = 1;
        return m;
    };
    json::value score = json::value::object();
    score.set("kind", jstr("dot"));
    score.set("Q", zero_matrix(1, d).to_json());
    score.set("q_bias", jvec({rational(1)}));
    score.set("K", unit_row(0, d).to_json());
    json::value value = json::value::object();
    value.set("kind", jstr("linear"));
    value.set("V", unit_row(1, d).to_json());
    json::value head = json::value::object();
    head.set("score", std::move(score));
    head.set("value", std::move(value));
    json::value heads = json::value::array();
    heads.push_back(std::move(head));
    // y' = (y_0, b, y_2, ...): the head's output replaces coordinate 1.
    dense w = zero_matrix(d, d + 1);
    for (std::size_t r = 0; r < d; ++r) w.a[r * (d + 1) + (r == 1 ? d : r)] = 1;
    json::value update = json::value::object();
    update.set("kind", jstr("affine"));
    update.set("W", w.to_json());
    json::value layer = json::value::object();
    layer.set("heads", std::move(heads));
    layer.set("update", std::move(update));
    json::value layers = json::value::array();
    layers.push_back(std::move(layer));
    doc.set("layers", std::move(layers));
    json::value readout = json::value::object();
    readout.set("kind", jstr("threshold"));
    std::vector<rational> wv(d);
    wv[1] = 1;
    readout.set("w", jvec(wv));
    readout.set("t", jstr("1/2"));
    doc.set("readout", std::move(readout));
    return parse_doc(doc);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Public generators.

rc::Gen<model::model<numeric::rational>> hard_model(const hard_bounds& b) {
    return hard_like(b, false);
}

rc::Gen<model::model<numeric::rational>> dyadic_hard_model(const hard_bounds& b) {
    return hard_like(b, true);
}

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

rc::Gen<model::model<numeric::rational>> near_tie_hard_model() {
    return rc::gen::mapcat(
        rc::gen::tuple(rc::gen::inRange(2, 4), rc::gen::inRange(0, 6), rc::gen::inRange(19, 23),
                       rc::gen::inRange(1, 10), rc::gen::inRange(0, 3), rc::gen::inRange(0, 3)),
        [](std::tuple<int, int, int, int, int, int> t) {
            near_tie_spec s;
            s.alphabet = std::get<0>(t);
            s.base = std::get<1>(t);
            s.exponent = std::get<2>(t);
            s.mantissa = std::get<3>(t);
            s.bumped = 1 + std::get<4>(t) % (s.alphabet - 1);
            const auto extra = static_cast<std::size_t>(std::get<5>(t));
            return rc::gen::map(
                rc::gen::container<std::vector<int>>(
                    extra * static_cast<std::size_t>(s.alphabet + 1), rc::gen::inRange(0, 5)),
                [s](std::vector<int> extras) {
                    near_tie_spec full = s;
                    full.extras = std::move(extras);
                    return build_near_tie(full);
                });
        });
}

rc::Gen<long> length(long max_n) {
    std::vector<long> ladder;
    for (long v = 1; v <= max_n; v *= 2) {
        ladder.push_back(v);
        if (v > max_n / 2) break;
    }
    if (ladder.empty()) ladder.push_back(1);
    return rc::gen::map(rc::gen::tuple(rc::gen::inRange(0, 8),
                                       rc::gen::inRange<std::size_t>(0, ladder.size()),
                                       rc::gen::inRange<long>(1, std::max(1L, max_n) + 1)),
                        [ladder](std::tuple<int, std::size_t, long> t) {
                            return std::get<0>(t) == 7 ? std::get<2>(t) : ladder[std::get<1>(t)];
                        });
}

namespace {

std::string symbol_chars(const model::alphabet& sigma) {
    std::string chars;
    for (const auto& s : sigma.symbols) chars += s.empty() ? '?' : s.front();
    return chars;
}

} // namespace

rc::Gen<std::string> input(const model::alphabet& sigma, long n) {
    const std::string chars = symbol_chars(sigma);
    const auto len = static_cast<std::size_t>(n > 1 ? n - 1 : 0);
    return rc::gen::map(
        rc::gen::container<std::vector<std::size_t>>(
            len, rc::gen::resize(rc::kNominalSize,
                                 rc::gen::inRange<std::size_t>(0, chars.size()))),
        [chars](const std::vector<std::size_t>& idx) {
            std::string w;
            w.reserve(idx.size());
            for (std::size_t k : idx) w += chars[k];
            return w;
        });
}

rc::Gen<std::string> language_input(lang::language l, const model::alphabet& sigma, long n) {
    const std::string chars = symbol_chars(sigma);
    const std::string lang_chars = lang::alphabet_of(l);
    const auto len = static_cast<std::size_t>(n > 1 ? n - 1 : 0);
    const bool dyck = l == lang::language::dyck1 || l == lang::language::dyck2;
    return rc::gen::map(
        rc::gen::resize(rc::kNominalSize,
                        rc::gen::tuple(rc::gen::inRange(0, 1 << 30), rc::gen::inRange(0, 2))),
        [=](std::tuple<int, int> t) {
            std::mt19937_64 rng(static_cast<std::uint64_t>(std::get<0>(t)));
            std::string w;
            if (dyck && std::get<1>(t) == 1) {
                w = lang::random_dyck_word(len - len % 2, l == lang::language::dyck1 ? 1 : 2, rng);
                if (len % 2 == 1) w += lang_chars.front();
            } else {
                w = lang::uniform_word(l, len, rng);
            }
            std::string out;
            out.reserve(w.size());
            for (char c : w) {
                const std::size_t k = lang_chars.find(c);
                out += chars[(k == std::string::npos ? 0 : k) % chars.size()];
            }
            return out;
        });
}

std::string model_class(const model::model<numeric::rational>& m) {
    std::size_t heads = 0;
    for (const auto& l : m.layers) heads = std::max(heads, l.heads.size());
    std::string out = std::string(model::to_string(m.attention)) +
                      " L" + std::to_string(m.layers.size()) + " H" + std::to_string(heads);
    constexpr auto kind_names = model::map_kind_names<rational>();
    std::array<bool, kind_names.size()> kinds{};
    bool relu = false, tanh = false, gelu = false, ln = false;
    model::for_each_map(m, [&](const model::map<rational>& f, const model::map_site&) {
        kinds[f.impl.index()] = true;
        const model::map_features ft = model::features(f);
        relu = relu || ft.uses(model::activation::relu);
        tanh = tanh || ft.uses(model::activation::tanh);
        gelu = gelu || ft.uses(model::activation::gelu);
        ln = ln || ft.layer_norm;
    });
    if (model::selects_maximum(m.attention)) {
        std::string tags;
        for (std::size_t k = 0; k < kinds.size(); ++k)
            if (kinds[k]) tags += (tags.empty() ? "" : "+") + std::string(kind_names[k]);
        if (!tags.empty()) out += " " + tags;
    } else {
        if (relu) out += " relu";
        if (tanh) out += " tanh";
        if (gelu) out += " gelu";
        if (ln) out += " ln";
        if (m.positional && m.positional->type == model::positional_spec::kind::sinusoidal)
            out += " sin";
    }
    return out;
}

} // namespace attnprop::gen

namespace attnprop::model {

void showValue(const model<numeric::rational>& m, std::ostream& os) {
    os << gen::model_class(m) << ": " << json::dump(model_to_json(m), -1);
}

} // namespace attnprop::model
