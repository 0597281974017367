#include "model/model_file.hpp"
#include "model/model_file_reader.hpp"
#include "numeric/limits.hpp"
#include "util/read_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <utility>

namespace attnprop::model {

// ---------------------------------------------------------------------------------------------
// model_file_error

namespace {

std::string format_error(const std::string& file, json::location where,
                         const std::string& pointer, const std::string& message) {
    std::string s = file;
    if (where.known())
        s += ":" + std::to_string(where.line) + ":" + std::to_string(where.column);
    s += ": error: " + message;
    if (!pointer.empty()) s += " (at " + pointer + ")";
    return s;
}

} // namespace

model_file_error::model_file_error(std::string file, json::location where, std::string pointer,
                                   std::string message)
    : std::runtime_error(format_error(file, where, pointer, message)), file_(std::move(file)),
      where_(where), pointer_(std::move(pointer)), message_(std::move(message)) {}

// ---------------------------------------------------------------------------------------------
// Reading

namespace file_reading {

model<rational> reader::read(const value& root) {
    const node top{root, ""};
    expect(top, json::kind::object);
    model<rational> m;

    // format and version first, so that a newer file gets a version error, not a key error.
    const value* fmt = root.find("format");
    if (!fmt)
        fail(top, "missing key 'format' (an attnprop model file starts with \"format\": "
                  "\"attnprop-model\")");
    node format = top.child("format", *fmt);
    if (string_value(format) != "attnprop-model")
        fail(format, "not an attnprop model file: format is " + in_quotes(format.v.as_string()) +
                         ", expected 'attnprop-model'");
    node version = required(top, "version");
    if (!version.v.is_number())
        fail(version, std::string("expected a number, got ") + with_article(version.v.type()));
    if (number(version) != 1)
        fail(version, "unsupported version " + version.v.raw_number() +
                          "; this attnprop reads version 1");

    check_keys(top, {"format", "version", "name", "description", "source", "attention",
                     "alphabet", "eos", "d", "token_embedding", "positional", "input", "layers",
                     "readout"});
    m.name = string_value(required(top, "name"));
    if (auto n = member(top, "description")) m.description = string_value(*n);
    if (auto n = member(top, "source")) m.source = string_value(*n);

    node attention = required(top, "attention");
    std::string a = string_value(attention);
    if (auto k = parse_attention_kind(a))
        m.attention = *k;
    else
        fail(attention, "attention must be " + attention_kind_names() + ", got " + in_quotes(a));

    read_alphabet(top, m);
    m.d = dimension(required(top, "d"), "d");
    read_tokens(required(top, "token_embedding"), m);
    m.positional = read_positional(required(top, "positional"));
    read_input(required(top, "input"), m);

    node layers = required(top, "layers");
    expect(layers, json::kind::array);
    within_limit(layers, numeric::limit::layers, layers.v.size(),
                 "the model has " + std::to_string(layers.v.size()) + " layers");
    for (std::size_t k = 0; k < layers.v.size(); ++k) {
        hold(layers.at(k), part_numbers);
        m.layers.push_back(read_layer(layers.at(k), m.d));
        if (const attention_kind_info& kind = info(m.attention);
            kind.weights != weighting::elementwise)
            if (auto b = member(layers.at(k), "sigmoid_bias"))
                fail(*b, "sigmoid_bias belongs to sigmoid attention; the model's attention is " +
                             in_quotes(std::string(kind.name)));
        check_feature_map(layers.at(k), m.layers.back(), info(m.attention));
    }

    read_readout(required(top, "readout"), m);
    return m;
}

void reader::check_feature_map(const node& n, const layer<rational>& l,
                               const attention_kind_info& kind) const {
    if (!kind.feature_map) {
        if (auto f = member(n, "feature_map"))
            fail(*f, "feature_map belongs to linear attention ('linear-normalised' or 'linear-sum'); the "
                     "model's attention is " + in_quotes(std::string(kind.name)));
        return;
    }
    node heads = required(n, "heads");
    for (std::size_t h = 0; h < l.heads.size(); ++h) {
        node score = required(heads.at(h), "score");
        if (l.heads[h].score.type != score_spec<rational>::kind::dot)
            fail(score, std::string(kind.name) + " attention weighs phi(q) . phi(k) of the query "
                        "and key vectors: a head must score by \"kind\": \"dot\"");
        for (const char* key : {"scale", "length_scale", "beta"})
            if (auto f = member(score, key))
                fail(*f, std::string(kind.name) + " attention's weights phi(q) . phi(k) are not "
                         "scaled (Katharopoulos et al. 2020): \"" + key + "\" does not apply");
    }
}

void reader::read_alphabet(const node& top, model<rational>& m) const {
    node sigma = required(top, "alphabet");
    expect(sigma, json::kind::array);
    if (sigma.v.empty()) fail(sigma, "the alphabet must not be empty");
    for (std::size_t k = 0; k < sigma.v.size(); ++k) {
        node s = sigma.at(k);
        std::string sym = string_value(s);
        if (sym.size() != 1 || static_cast<unsigned char>(sym[0]) >= 0x80)
            fail(s, "alphabet symbols must be single ASCII characters, got " + in_quotes(sym));
        auto c = static_cast<unsigned char>(sym[0]);
        if (c <= 0x20 || c == 0x7f)
            fail(s, "alphabet symbols must not be whitespace or control characters");
        if (sym == "*") fail(s, "'*' is reserved for free positions and cannot be a symbol");
        for (std::size_t j = 0; j < k; ++j)
            if (m.sigma.symbols[j] == sym)
                fail(s, "symbol " + in_quotes(sym) + " appears twice in the alphabet");
        m.sigma.symbols.push_back(sym);
    }
    node eos = required(top, "eos");
    m.sigma.eos = string_value(eos);
    if (m.sigma.eos.empty()) fail(eos, "eos must not be empty");
    for (const auto& s : m.sigma.symbols)
        if (s == m.sigma.eos) fail(eos, "eos " + in_quotes(s) + " is also in the alphabet");
}

void reader::read_tokens(const node& n, model<rational>& m) const {
    expect(n, json::kind::object);
    const alphabet& sigma = m.sigma;
    for (const auto& [key, val] : n.v.members())
        if (sigma.index_of(key) < 0)
            fail(n.child(key, val), "unknown symbol " + in_quotes(key) + " (the alphabet is " +
                                        join(sigma.symbols, ", ") + " and eos " +
                                        in_quotes(sigma.eos) + ")");
    std::optional<node> first;
    for (int k = 0; k <= sigma.eos_index(); ++k) {
        const std::string& sym = sigma.name(k);
        auto e = member(n, sym);
        if (!e) fail(n, "symbol " + in_quotes(sym) + " has no embedding");
        vec<rational> v = vector(*e);
        if (v.empty()) fail(*e, "the embedding of " + in_quotes(sym) + " is empty");
        if (!m.token.empty() && v.size() != m.token.front().size())
            fail(*e, "the embedding of " + in_quotes(sym) + " has length " +
                         std::to_string(v.size()) + ", but that of " + in_quotes(sigma.name(0)) +
                         " has length " + std::to_string(m.token.front().size()));
        m.token.push_back(std::move(v));
    }
}

std::optional<expr> reader::read_formula(const node& n) const {
    if (n.v.is_number()) {
        if (number(n) == 0) return std::nullopt;
        try {
            return expr::parse(n.v.raw_number());
        } catch (const expr_error& e) {
            fail(n, "bad formula " + in_quotes(n.v.raw_number()) + ": " + e.message());
        }
    }
    if (!n.v.is_string())
        fail(n, std::string("expected a formula (a string or a number), got ") +
                    with_article(n.v.type()));
    const std::string& text = n.v.as_string();
    try {
        return expr::parse(text);
    } catch (const expr_error& e) {
        json::location where = n.v.where();
        // The string's opening quote is at where.column; its first character one further.
        if (where.known()) where.column += e.column();
        throw model_file_error(file_, where, n.ptr,
                               "bad formula " + in_quotes(text) + ": " + e.message() +
                                   " (column " + std::to_string(e.column()) + " of the formula)");
    }
}

// An inverse temperature: a number (kept exactly, 0 included) or a formula in n alone.
expr reader::read_beta(const node& n, std::string_view what) const {
    std::optional<expr> e;
    if (n.v.is_number()) {
        (void)number(n); // a malformed number is reported as such
        try {
            e = expr::parse(n.v.raw_number());
        } catch (const expr_error& err) {
            fail(n, "bad number " + in_quotes(n.v.raw_number()) + ": " + err.message());
        }
    } else {
        e = read_formula(n);
    }
    if (e->uses_i())
        fail(n, std::string(what) +
                    " is a formula in the length n alone; the position i is not defined here, "
                    "got " + in_quotes(e->text()));
    return std::move(*e);
}

std::shared_ptr<const positional_spec> reader::read_positional(const node& n) const {
    auto p = std::make_shared<positional_spec>();
    std::string kind = kind_of(n, {"formula", "table", "sinusoidal"});
    if (kind == "formula") {
        check_keys(n, {"kind", "dim", "coordinates"});
        p->type = positional_spec::kind::formula;
        p->dim = dimension(required(n, "dim"), "dim");
        hold(n, p->dim);
        p->formulas.assign(p->dim, std::nullopt);
        node coords = required(n, "coordinates");
        if (coords.v.is_array()) {
            if (coords.v.size() != p->dim)
                fail(coords, "coordinates has " + std::to_string(coords.v.size()) +
                                 " entries; expected dim = " + std::to_string(p->dim));
            for (std::size_t k = 0; k < p->dim; ++k) p->formulas[k] = read_formula(coords.at(k));
        } else if (coords.v.is_object()) {
            for (const auto& [key, val] : coords.v.members()) {
                node c = coords.child(key, val);
                bool digits = !key.empty() && key.size() <= 9 && (key == "0" || key[0] != '0');
                for (char ch : key) digits = digits && ch >= '0' && ch <= '9';
                if (!digits)
                    fail(c, "coordinate keys must be 0-based indices like \"3\", got " +
                                in_quotes(key));
                std::size_t k = std::stoul(key);
                if (k >= p->dim)
                    fail(c, "coordinate " + key + " is out of range (dim = " +
                                std::to_string(p->dim) + ")");
                p->formulas[k] = read_formula(c);
            }
        } else {
            fail(coords, std::string("expected an array or an object, got ") +
                             with_article(coords.v.type()));
        }
    } else if (kind == "table") {
        check_keys(n, {"kind", "rows"});
        p->type = positional_spec::kind::table;
        node rows = required(n, "rows");
        expect(rows, json::kind::array);
        if (rows.v.empty()) fail(rows, "the positional table needs at least one row");
        within_limit(rows, numeric::limit::table_entries, rows.v.size(),
                     "the positional table has " + std::to_string(rows.v.size()) + " rows");
        for (std::size_t r = 0; r < rows.v.size(); ++r) {
            node row = rows.at(r);
            vec<rational> v = vector(row);
            if (v.empty()) fail(row, "positional table rows must not be empty");
            if (r > 0 && v.size() != p->dim)
                fail(row, "row " + std::to_string(r) + " has length " + std::to_string(v.size()) +
                              "; row 0 has length " + std::to_string(p->dim));
            p->dim = v.size();
            p->table.push_back(std::move(v));
        }
    } else {
        check_keys(n, {"kind", "dim", "base"});
        p->type = positional_spec::kind::sinusoidal;
        p->dim = dimension(required(n, "dim"), "dim");
        hold(n, p->dim);
        if (auto b = member(n, "base")) {
            p->base = number(*b);
            if (p->base <= 1)
                fail(*b, "base must be > 1, got " + numeric::to_exact_string(p->base));
        }
    }
    return p;
}

void reader::read_input(const node& n, model<rational>& m) const {
    const std::size_t dt = m.token_dim();
    const std::size_t dp = m.positional->dim;
    const std::string dims = "the token embeddings have dimension " + std::to_string(dt) +
                             ", the positional embedding " + std::to_string(dp) + " and d = " +
                             std::to_string(m.d);
    if (n.v.is_string()) {
        const std::string& s = n.v.as_string();
        if (s == "add") {
            if (dt != m.d || dp != m.d) fail(n, "input 'add' needs equal dimensions, but " + dims);
            m.input = input_kind::add;
        } else if (s == "concat") {
            if (dt + dp != m.d)
                fail(n, "input 'concat' needs " + std::to_string(dt) + " + " +
                            std::to_string(dp) + " = d, but " + dims);
            m.input = input_kind::concat;
        } else {
            fail(n,
                 "input must be 'add', 'concat' or {\"kind\": \"map\", ...}, got " + in_quotes(s));
        }
        return;
    }
    if (!n.v.is_object())
        fail(n, std::string("expected a string or an object, got ") + with_article(n.v.type()));
    kind_of(n, {"map"});
    check_keys(n, {"kind", "map"});
    map_role role;
    role.inputs = {{"v", 0, dt, false}, {"p", dt, dp, false}};
    role.in_dim = dt + dp;
    role.out_dim = m.d;
    role.out_reason = "the input map must output d = " + std::to_string(m.d);
    m.input = input_kind::map;
    m.input_fn = read_map(required(n, "map"), role);
}

head<rational> reader::read_head(const node& n, std::size_t d) const {
    expect(n, json::kind::object);
    check_keys(n, {"score", "value"});
    head<rational> h;
    const std::string ds = "d = " + std::to_string(d);

    node score = required(n, "score");
    std::string sk = kind_of(score, {"dot", "map"});
    if (sk == "dot") {
        check_keys(score, {"kind", "Q", "K", "q_bias", "k_bias", "scale", "length_scale", "beta"});
        h.score.type = score_spec<rational>::kind::dot;
        h.score.Q.W = read_matrix(required(score, "Q"), "Q", d, ds);
        const std::size_t dk = h.score.Q.W.rows;
        h.score.K.W = read_matrix(required(score, "K"), "K", d, ds, dk,
                                  "as many as Q (" + std::to_string(dk) + ")");
        read_bias(member(score, "q_bias"), h.score.Q, "q_bias");
        read_bias(member(score, "k_bias"), h.score.K, "k_bias");
        h.score.default_scale = true;
        h.score.scale_factor = 1;
        h.score.scale_inv_sqrt = static_cast<long>(dk);
        if (auto s = member(score, "scale")) {
            if (s->v.is_string() && s->v.as_string() == "default") {
                // the default, written explicitly
            } else if (s->v.is_object()) {
                check_keys(*s, {"factor", "inv_sqrt"});
                h.score.default_scale = false;
                h.score.scale_factor = positive_number(required(*s, "factor"), "factor");
                h.score.scale_inv_sqrt = positive_number(required(*s, "inv_sqrt"), "inv_sqrt");
            } else {
                h.score.default_scale = false;
                h.score.scale_factor = positive_number(*s, "scale");
                h.score.scale_inv_sqrt = 1;
            }
        }
        if (h.score.scale_inv_sqrt == 1) h.score.scale = h.score.scale_factor;
        if (auto ls = member(score, "length_scale")) {
            if (!(ls->v.is_string() && ls->v.as_string() == "log"))
                fail(*ls, "length_scale must be \"log\" (or absent for no length scaling)");
            if (auto b = member(score, "beta"))
                fail(*b, "give either length_scale or beta (\"length_scale\": \"log\" is "
                         "\"beta\": \"log(n)\"), not both");
            // One code path for every inverse temperature: ln n is the formula log(n).
            h.score.length_scale = score_spec<rational>::length_scaling::log;
            h.score.beta = expr::parse("log(n)");
        }
        if (auto b = member(score, "beta")) h.score.beta = read_beta(*b);
    } else {
        check_keys(score, {"kind", "map", "beta"});
        if (auto b = member(score, "beta")) h.score.beta = read_beta(*b);
        h.score.type = score_spec<rational>::kind::map;
        map_role role;
        role.inputs = {{"q", 0, d, false}, {"k", d, d, false}};
        role.in_dim = 2 * d;
        role.out_dim = 1;
        role.out_reason = "a score map must output 1 value";
        h.score.fn = read_map(required(score, "map"), role);
    }

    node val = required(n, "value");
    std::string vk = kind_of(val, {"linear", "map"});
    if (vk == "linear") {
        check_keys(val, {"kind", "V", "bias"});
        h.value.type = value_spec<rational>::kind::linear;
        h.value.V.W = read_matrix(required(val, "V"), "V", d, ds);
        read_bias(member(val, "bias"), h.value.V, "bias");
    } else {
        check_keys(val, {"kind", "map"});
        h.value.type = value_spec<rational>::kind::map;
        map_role role;
        role.inputs = {{"y", 0, d, false}};
        role.in_dim = d;
        h.value.fn = read_map(required(val, "map"), role);
    }
    return h;
}

layer<rational> reader::read_layer(const node& n, std::size_t d) const {
    expect(n, json::kind::object);
    check_keys(n, {"heads", "update", "mask", "sigmoid_bias", "feature_map"});
    layer<rational> l;
    // Only a sigmoid model may have it: the caller refuses it elsewhere, knowing the kind.
    if (auto b = member(n, "sigmoid_bias")) l.sigmoid_bias = read_beta(*b, "sigmoid_bias");
    // Only a linear-attention model may have it: likewise.
    if (auto f = member(n, "feature_map")) {
        const std::string s = string_value(*f);
        if (s == "elu1")
            l.feature_map = feature_map_kind::elu1;
        else if (s == "relu")
            l.feature_map = feature_map_kind::relu;
        else
            fail(*f, "unknown feature_map " + in_quotes(s) + " (expected one of: elu1, relu)");
    }
    if (auto mk = member(n, "mask")) {
        const std::string s = string_value(*mk);
        if (s == "causal")
            l.mask = mask_kind::causal;
        else if (s == "none")
            l.mask = mask_kind::none;
        else
            fail(*mk, "unknown mask " + in_quotes(s) + " (expected one of: none, causal)");
    }
    node heads = required(n, "heads");
    expect(heads, json::kind::array);
    if (heads.v.empty()) fail(heads, "a layer needs at least one head");
    within_limit(heads, numeric::limit::heads, heads.v.size(),
                 "the layer has " + std::to_string(heads.v.size()) + " heads");
    map_role role;
    role.inputs.push_back({"y", 0, d, false});
    std::size_t offset = d;
    for (std::size_t k = 0; k < heads.v.size(); ++k) {
        hold(heads.at(k), part_numbers);
        l.heads.push_back(read_head(heads.at(k), d));
        const std::size_t dv = l.heads.back().value.out_dim();
        role.inputs.push_back({"b" + std::to_string(k + 1), offset, dv, false});
        offset += dv;
    }
    role.inputs.push_back({"b", d, offset - d, true});
    role.in_dim = offset;
    role.out_dim = d;
    role.out_reason = "the update must output d = " + std::to_string(d);
    l.update = read_map(required(n, "update"), role);
    return l;
}

void reader::read_readout(const node& n, model<rational>& m) const {
    std::string kind = kind_of(n, {"threshold", "map", "softmax"});
    readout<rational>& r = m.out;
    const std::string ds = "d = " + std::to_string(m.d);
    if (kind == "threshold") {
        check_keys(n, {"kind", "w", "t"});
        r.type = readout<rational>::kind::threshold;
        r.w_exact = vector(required(n, "w"), m.d, "w");
        r.w = r.w_exact;
        r.t_exact = number(required(n, "t"));
        r.t = r.t_exact;
    } else if (kind == "map") {
        check_keys(n, {"kind", "map"});
        r.type = readout<rational>::kind::map;
        map_role role;
        role.inputs = {{"y", 0, m.d, false}};
        role.in_dim = m.d;
        role.out_dim = 1;
        role.out_reason = "the readout map must output 1 value";
        r.fn = read_map(required(n, "map"), role);
    } else {
        check_keys(n, {"kind", "symbols", "W", "c"});
        r.type = readout<rational>::kind::softmax;
        node syms = required(n, "symbols");
        expect(syms, json::kind::array);
        if (syms.v.size() < 2) fail(syms, "a softmax readout needs at least 2 symbols");
        within_limit(syms, numeric::limit::readout_symbols, syms.v.size(),
                     "the readout has " + std::to_string(syms.v.size()) + " symbols");
        // Duplicates by sorting positions by name: O(k log k) for k symbols.
        r.symbols.reserve(syms.v.size());
        for (std::size_t k = 0; k < syms.v.size(); ++k) {
            node s = syms.at(k);
            std::string name = string_value(s);
            if (name.empty()) fail(s, "output symbols must not be empty");
            r.symbols.push_back(std::move(name));
        }
        std::vector<std::size_t> order(r.symbols.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return r.symbols[a] < r.symbols[b];
        });
        // The first repeated symbol in file order, as a left-to-right scan would report it.
        std::optional<std::size_t> twice;
        for (std::size_t k = 1; k < order.size(); ++k)
            if (r.symbols[order[k]] == r.symbols[order[k - 1]] && (!twice || order[k] < *twice))
                twice = order[k];
        if (twice)
            fail(syms.at(*twice), "output symbol " + in_quotes(r.symbols[*twice]) + " appears twice");
        const std::size_t ms = r.symbols.size();
        r.logits.W = read_matrix(required(n, "W"), "W", m.d, ds, ms,
                                 "one per output symbol (" + std::to_string(ms) + ")");
        read_bias(member(n, "c"), r.logits, "c");
    }
}

} // namespace file_reading

using file_reading::reader;


model<rational> parse_model(std::string_view text, const std::string& file_name) {
    json::value root;
    try {
        root = json::parse(text);
    } catch (const json::parse_error& e) {
        throw model_file_error(file_name, e.where(), "", e.message());
    }
    try {
        model<rational> m = reader(file_name, text.size()).read(root);
        m.file = file_name;
        return m;
    } catch (const std::bad_alloc&) {
        throw model_file_error(file_name, {}, "", "out of memory while reading the model");
    }
}

model<rational> read_model_file(const std::string& path) {
    // Only regular files, checked on the open descriptor: opening a FIFO would block, a
    // directory or a device (a link to /dev/zero) has no model.
    std::string text;
    if (std::string why = util::read_regular_file(path, text); !why.empty()) {
        if (why.ends_with(", not a file")) why.replace(why.size() - 4, 4, "a model file");
        throw model_file_error(path, {}, "", why);
    }
    return parse_model(text, path);
}

} // namespace attnprop::model
