#include "model/model_file.hpp"
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

namespace {

using json::value;
using numeric::integer;

/// Largest accepted dimension (d, positional dim, matrix rows and columns, hash out_dim).
constexpr std::size_t max_dim = std::size_t{1} << 20;
/// Largest accepted number of entries of a matrix given by its size (sparse or identity).
constexpr std::size_t max_entries = std::size_t{1} << 24;
/// Largest accepted hash range.
constexpr long max_hash_range = 1L << 62;

const char* with_article(json::kind k) {
    switch (k) {
    case json::kind::null: return "null";
    case json::kind::boolean: return "a boolean";
    case json::kind::number: return "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
    }
    return "?";
}

/// 'text' for messages, shortened when long.
std::string in_quotes(std::string_view s) {
    constexpr std::size_t max_shown = 60;
    if (s.size() > max_shown) return "'" + std::string(s.substr(0, max_shown)) + "...'";
    return "'" + std::string(s) + "'";
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string s;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k > 0) s += sep;
        s += parts[k];
    }
    return s;
}

std::string show_vector(const std::vector<rational>& v) {
    std::vector<std::string> parts;
    for (const auto& q : v) parts.push_back(numeric::to_exact_string(q));
    return "(" + join(parts, ", ") + ")";
}

/// A value of the document together with its RFC 6901 pointer.
struct node {
    const value& v;
    std::string ptr;

    node child(std::string_view key, const value& c) const {
        return {c, ptr + "/" + json::pointer_escape(key)};
    }
    node at(std::size_t i) const { return {v[i], ptr + "/" + std::to_string(i)}; }
};

/// One named slice of a map's input.
struct role_input {
    std::string name;
    std::size_t offset = 0;
    std::size_t dim = 0;
    bool alias = false; ///< covers other inputs ("b" = b1 .. bH); left out of descriptions
};

/// Where a map is used: its input names and, possibly, a required output dimension.
struct map_role {
    std::vector<role_input> inputs;
    std::size_t in_dim = 0;
    std::optional<std::size_t> out_dim;
    std::string out_reason; ///< e.g. "the update must output d = 4"

    std::string describe_in() const {
        std::vector<std::string> parts;
        for (const auto& in : inputs)
            if (!in.alias) parts.push_back(in.name + ": " + std::to_string(in.dim));
        return std::to_string(in_dim) + " (" + join(parts, ", ") + ")";
    }
    std::string names() const {
        std::vector<std::string> parts;
        for (const auto& in : inputs) parts.push_back(in.name);
        return join(parts, ", ");
    }
    const role_input* find(std::string_view name) const {
        for (const auto& in : inputs)
            if (in.name == name) return &in;
        return nullptr;
    }
};

const std::vector<std::pair<std::string_view, activation>> activation_names = {
    {"identity", activation::identity}, {"relu", activation::relu}, {"tanh", activation::tanh},
    {"gelu", activation::gelu},         {"erf", activation::erf},   {"step", activation::step},
    {"floor", activation::floor}};

/// The ops a model file may name: every graph op but input (the reader makes an input node for
/// each input name a graph uses).
std::vector<std::string_view> file_op_names() {
    std::vector<std::string_view> out;
    for_each_alternative<graph_op<rational>>([&]<class T>(std::type_identity<T>) {
        if constexpr (!std::is_same_v<T, input_op>) out.push_back(T::name);
    });
    return out;
}

/// How a node of an op is written: its parameter keys (besides id, op and in) and how many
/// inputs it takes (max_inputs 0: no upper limit), of equal dimension or not.
struct op_form {
    std::vector<std::string_view> params;
    std::size_t min_inputs = 1;
    std::size_t max_inputs = 1;
    bool equal_dims = false;
};

op_form form_of(const graph_op<rational>& op) {
    return std::visit(overloaded{
                          [](const input_op&) { return op_form{}; },
                          [](const linear_op<rational>&) { return op_form{{"W", "b"}}; },
                          [](const add_op&) { return op_form{{}, 2, 0, true}; },
                          [](const sub_op&) { return op_form{{}, 2, 2, true}; },
                          [](const mul_op&) { return op_form{{}, 2, 2, true}; },
                          [](const concat_op&) { return op_form{{}, 1, 0}; },
                          []<activation A>(const elementwise_op<A>&) { return op_form{}; },
                          [](const layer_norm_op<rational>&) {
                              return op_form{{"eps", "gamma", "beta"}};
                          },
                          [](const scale_op<rational>&) { return op_form{{"factor"}}; },
                          [](const slice_op&) { return op_form{{"from", "to"}}; },
                      },
                      op);
}

class reader {
public:
    /// A reader of the text of `file`, `bytes` long: what the model may hold once read is
    /// numeric::model_numbers_budget(bytes).
    reader(std::string file, std::size_t bytes)
        : file_(std::move(file)), bytes_(bytes), budget_(numeric::model_numbers_budget(bytes)) {}

    model<rational> read(const value& root);

private:
    // --- errors and JSON structure ------------------------------------------------------------
    [[noreturn]] void fail(const node& n, std::string message) const {
        throw model_file_error(file_, n.v.where(), n.ptr, std::move(message));
    }

    /// Fails at n, with the limit's message, when `value` exceeds the limit `which`.
    void within_limit(const node& n, numeric::limit which, std::size_t value,
                      const std::string& what) const {
        try {
            numeric::check_limit(which, value, what);
        } catch (const numeric::limit_error& e) {
            fail(n, e.what());
        }
    }

    /// Counts `count` more numbers the model holds once read (a matrix's entries however it
    /// was written, a vector, a graph node's value, a layer's or head's bookkeeping), and fails
    /// at n, before they are allocated, when the total passes the model-numbers budget of the
    /// file's size: an identity of d = 4096 is 16 million numbers from 20 bytes of text.
    void hold(const node& n, std::uint64_t count) const {
        numbers_ = count > budget_ - std::min(numbers_, budget_) ? budget_ + 1 : numbers_ + count;
        if (numbers_ <= budget_) return;
        const std::uint64_t total = numbers_;
        const std::uint64_t per_byte = bytes_ == 0 ? total : (total + bytes_ - 1) / bytes_;
        fail(n, numeric::limit_error(numeric::limit::model_numbers, per_byte,
                                     "the model holds more than " + std::to_string(budget_) +
                                         " numbers once read (its matrices written out in full) "
                                         "from a file of " + std::to_string(bytes_) + " bytes")
                    .what());
    }

    void expect(const node& n, json::kind k) const {
        if (n.v.type() != k)
            fail(n, std::string("expected ") + with_article(k) + ", got " +
                        with_article(n.v.type()));
    }

    /// Rejects keys outside `allowed` (n must be an object).
    void check_keys(const node& n, const std::vector<std::string_view>& allowed) const {
        for (const auto& [key, val] : n.v.members()) {
            bool ok = false;
            for (auto a : allowed) ok = ok || a == key;
            if (!ok) {
                std::vector<std::string> names(allowed.begin(), allowed.end());
                fail(n.child(key, val), "unknown key " + in_quotes(key) +
                                            " (allowed here: " + join(names, ", ") + ")");
            }
        }
    }

    std::optional<node> member(const node& n, std::string_view key) const {
        if (const value* c = n.v.find(key)) return n.child(key, *c);
        return std::nullopt;
    }

    node required(const node& n, std::string_view key) const {
        if (auto c = member(n, key)) return *c;
        fail(n, "missing key " + in_quotes(key));
    }

    std::string string_value(const node& n) const {
        expect(n, json::kind::string);
        return n.v.as_string();
    }

    /// The "kind" member of an object, which must be one of `kinds`.
    std::string kind_of(const node& n, const std::vector<std::string_view>& kinds) const {
        expect(n, json::kind::object);
        node k = required(n, "kind");
        std::string s = string_value(k);
        for (auto a : kinds)
            if (a == s) return s;
        std::vector<std::string> names(kinds.begin(), kinds.end());
        fail(k, "unknown kind " + in_quotes(s) + " (expected one of: " + join(names, ", ") + ")");
    }

    // --- numbers ------------------------------------------------------------------------------
    /// NUMBER: a JSON number (its exact decimal value) or a string with a decimal or "p/q".
    rational number(const node& n) const {
        std::string text;
        if (n.v.is_number()) {
            text = n.v.raw_number();
        } else if (n.v.is_string()) {
            text = n.v.as_string();
        } else {
            fail(n, std::string("expected a number, got ") + with_article(n.v.type()));
        }
        std::string error;
        auto q = numeric::parse_rational(text, &error);
        if (!q) {
            if (error == "zero denominator") fail(n, "zero denominator in " + in_quotes(text));
            if (error == "exponent too large")
                fail(n, "number " + in_quotes(text) + " is out of range (exponent too large)");
            fail(n, "malformed number " + in_quotes(text));
        }
        return *q;
    }

    rational positive_number(const node& n, std::string_view what) const {
        rational q = number(n);
        if (q <= 0)
            fail(n, std::string(what) + " must be > 0, got " + numeric::to_exact_string(q));
        return q;
    }

    /// A JSON number whose exact value is an integer.
    integer integer_value(const node& n) const {
        if (!n.v.is_number())
            fail(n, std::string("expected an integer, got ") + with_article(n.v.type()));
        rational q = number(n);
        if (boost::multiprecision::denominator(q) != 1)
            fail(n, "expected an integer, got " + n.v.raw_number());
        return boost::multiprecision::numerator(q);
    }

    /// An integer in [lo, hi].
    long bounded_integer(const node& n, long lo, long hi, std::string_view what) const {
        integer k = integer_value(n);
        if (k < lo || k > hi) {
            std::string range = hi == std::numeric_limits<long>::max()
                                    ? ">= " + std::to_string(lo)
                                    : "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
            fail(n, std::string(what) + " must be " + range + ", got " + k.str());
        }
        return k.convert_to<long>();
    }

    /// A dimension in [1, max_dim], within the limit width.
    std::size_t dimension(const node& n, std::string_view what) const {
        const auto k = static_cast<std::size_t>(
            bounded_integer(n, 1, static_cast<long>(max_dim), what));
        within_limit(n, numeric::limit::width, k, std::string(what) + " is " + std::to_string(k));
        return k;
    }

    /// VEC: an array of NUMBER.
    vec<rational> vector(const node& n) const {
        expect(n, json::kind::array);
        hold(n, n.v.size());
        vec<rational> out;
        out.reserve(n.v.size());
        for (std::size_t k = 0; k < n.v.size(); ++k) out.push_back(number(n.at(k)));
        return out;
    }

    /// VEC of a required length.
    vec<rational> vector(const node& n, std::size_t len, std::string_view what) const {
        vec<rational> v = vector(n);
        if (v.size() != len)
            fail(n, std::string(what) + " has length " + std::to_string(v.size()) + "; expected " +
                        std::to_string(len));
        return v;
    }

    // --- matrices and maps --------------------------------------------------------------------
    matrix<rational> read_matrix(const node& n) const;
    /// A matrix with `cols` columns (and `rows` rows, when given).
    matrix<rational> read_matrix(const node& n, std::string_view what, std::size_t cols,
                                 std::string_view cols_reason,
                                 std::optional<std::size_t> rows = std::nullopt,
                                 std::string_view rows_reason = {}) const;
    map<rational> read_map(const node& n, const map_role& role) const;
    affine_map<rational> read_affine(const node& n, const map_role& role) const;
    mlp_map<rational> read_mlp(const node& n, const map_role& role) const;
    graph_map<rational> read_graph(const node& n, const map_role& role) const;
    table_map read_table(const node& n, const map_role& role) const;
    hash_map read_hash(const node& n, std::size_t& out_dim) const;
    /// b (optional VEC of length rows) into an affine map.
    void read_bias(const std::optional<node>& n, affine_map<rational>& a,
                   std::string_view what) const {
        if (!n) return;
        a.b = vector(*n, a.W.rows, what);
        a.b_is_zero = true;
        for (const auto& q : a.b) a.b_is_zero = a.b_is_zero && q == 0;
    }

    // --- the model ----------------------------------------------------------------------------
    void read_alphabet(const node& root, model<rational>& m) const;
    void read_tokens(const node& n, model<rational>& m) const;
    std::shared_ptr<const positional_spec> read_positional(const node& n) const;
    std::optional<expr> read_formula(const node& n) const;
    expr read_beta(const node& n) const;
    void read_input(const node& n, model<rational>& m) const;
    layer<rational> read_layer(const node& n, std::size_t d) const;
    head<rational> read_head(const node& n, std::size_t d) const;
    void read_readout(const node& n, model<rational>& m) const;

    std::string file_;
    std::size_t bytes_;
    std::uint64_t budget_;
    mutable std::uint64_t numbers_ = 0;
};

/// Bookkeeping of a layer, a head, a graph node or an mlp layer, counted as this many numbers.
constexpr std::uint64_t part_numbers = 16;

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
    }

    read_readout(required(top, "readout"), m);
    return m;
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
expr reader::read_beta(const node& n) const {
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
        fail(n, "beta is a formula in the length n alone; the position i is not defined here, "
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
    check_keys(n, {"heads", "update"});
    layer<rational> l;
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

// --- matrices ----------------------------------------------------------------------------------

matrix<rational> reader::read_matrix(const node& n) const {
    if (n.v.is_array()) {
        if (n.v.empty()) fail(n, "a matrix needs at least one row");
        std::size_t cols = 0;
        std::vector<rational> data;
        for (std::size_t r = 0; r < n.v.size(); ++r) {
            node row = n.at(r);
            if (!row.v.is_array())
                fail(row, std::string("expected a matrix row (an array), got ") +
                              with_article(row.v.type()));
            if (row.v.empty()) fail(row, "a matrix needs at least one column");
            if (r == 0) cols = row.v.size();
            if (row.v.size() != cols)
                fail(row, "row " + std::to_string(r) + " has " + std::to_string(row.v.size()) +
                              " entries; row 0 has " + std::to_string(cols));
            hold(row, cols);
            for (std::size_t c = 0; c < cols; ++c) data.push_back(number(row.at(c)));
        }
        return make_matrix(n.v.size(), cols, std::move(data));
    }
    if (!n.v.is_object())
        fail(n, std::string("expected a matrix (an array of rows or an object), got ") +
                    with_article(n.v.type()));
    if (auto id = member(n, "identity")) {
        check_keys(n, {"identity", "scale"});
        std::size_t size = dimension(*id, "identity");
        if (size * size > max_entries)
            fail(*id, "identity " + std::to_string(size) + " is too large (at most " +
                          std::to_string(max_entries) + " entries)");
        hold(n, static_cast<std::uint64_t>(size) * size);
        rational s = 1;
        if (auto sc = member(n, "scale")) s = number(*sc);
        std::vector<rational> data(size * size);
        for (std::size_t k = 0; k < size; ++k) data[k * size + k] = s;
        return make_matrix(size, size, std::move(data));
    }
    check_keys(n, {"rows", "cols", "entries"});
    std::size_t rows = dimension(required(n, "rows"), "rows");
    std::size_t cols = dimension(required(n, "cols"), "cols");
    if (rows * cols > max_entries)
        fail(n, "a " + std::to_string(rows) + " x " + std::to_string(cols) +
                    " matrix is too large (at most " + std::to_string(max_entries) + " entries)");
    hold(n, static_cast<std::uint64_t>(rows) * cols);
    node entries = required(n, "entries");
    expect(entries, json::kind::array);
    std::vector<rational> data(rows * cols);
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> seen;
    for (std::size_t k = 0; k < entries.v.size(); ++k) {
        node e = entries.at(k);
        expect(e, json::kind::array);
        if (e.v.size() != 3) fail(e, "a sparse entry is [row, column, value]");
        auto i = static_cast<std::size_t>(
            bounded_integer(e.at(0), 0, static_cast<long>(rows) - 1, "the row index"));
        auto j = static_cast<std::size_t>(
            bounded_integer(e.at(1), 0, static_cast<long>(cols) - 1, "the column index"));
        auto [it, fresh] = seen.emplace(std::pair{i, j}, k);
        if (!fresh)
            fail(e, "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                        ") appears twice (first at " + entries.ptr + "/" +
                        std::to_string(it->second) + ")");
        data[i * cols + j] = number(e.at(2));
    }
    return make_matrix(rows, cols, std::move(data));
}

matrix<rational> reader::read_matrix(const node& n, std::string_view what, std::size_t cols,
                                     std::string_view cols_reason, std::optional<std::size_t> rows,
                                     std::string_view rows_reason) const {
    matrix<rational> m = read_matrix(n);
    if (m.cols != cols)
        fail(n, std::string(what) + " has " + std::to_string(m.cols) +
                    " columns; it must have " + std::string(cols_reason));
    if (rows && m.rows != *rows)
        fail(n, std::string(what) + " has " + std::to_string(m.rows) + " rows; it must have " +
                    std::string(rows_reason));
    return m;
}

// --- maps ----------------------------------------------------------------------------------------

map<rational> reader::read_map(const node& n, const map_role& role) const {
    constexpr auto kinds = map_kind_names<rational>();
    const std::string kind =
        kind_of(n, std::vector<std::string_view>(kinds.begin(), kinds.end()));
    map<rational> m;
    m.in_dim = role.in_dim;
    m.impl = make_alternative<map_impl<rational>>(static_cast<std::size_t>(
        std::find(kinds.begin(), kinds.end(), kind) - kinds.begin()));
    std::visit(overloaded{
                   [&](affine_map<rational>& a) {
                       a = read_affine(n, role);
                       m.out_dim = a.out_dim();
                   },
                   [&](mlp_map<rational>& p) {
                       p = read_mlp(n, role);
                       m.out_dim = p.layers.back().out_dim();
                   },
                   [&](graph_map<rational>& g) {
                       g = read_graph(n, role);
                       m.out_dim = g.nodes[g.output].dim;
                   },
                   [&](table_map& t) {
                       t = read_table(n, role);
                       m.out_dim = t.fallback.size();
                   },
                   [&](hash_map& h) { h = read_hash(n, m.out_dim); },
               },
               m.impl);
    if (m.out_dim == 0) fail(n, "the map's output dimension is 0");
    if (role.out_dim && m.out_dim != *role.out_dim)
        fail(n, "the map's output dimension is " + std::to_string(m.out_dim) + "; " +
                    role.out_reason);
    return m;
}

affine_map<rational> reader::read_affine(const node& n, const map_role& role) const {
    check_keys(n, {"kind", "W", "b"});
    affine_map<rational> a;
    a.W = read_matrix(required(n, "W"), "W", role.in_dim,
                      "the map's input dimension " + role.describe_in());
    read_bias(member(n, "b"), a, "b");
    return a;
}

mlp_map<rational> reader::read_mlp(const node& n, const map_role& role) const {
    check_keys(n, {"kind", "layers"});
    mlp_map<rational> p;
    node layers = required(n, "layers");
    expect(layers, json::kind::array);
    if (layers.v.empty()) fail(layers, "an mlp needs at least one layer");
    within_limit(layers, numeric::limit::mlp_layers, layers.v.size(),
                 "the mlp has " + std::to_string(layers.v.size()) + " layers");
    for (std::size_t k = 0; k < layers.v.size(); ++k) {
        node l = layers.at(k);
        expect(l, json::kind::object);
        hold(l, part_numbers);
        check_keys(l, {"W", "b", "activation"});
        affine_map<rational> a;
        std::string reason = k == 0
                                 ? "the map's input dimension " + role.describe_in()
                                 : std::to_string(p.layers.back().out_dim()) +
                                       ", the output dimension of layer " + std::to_string(k - 1);
        std::size_t cols = k == 0 ? role.in_dim : p.layers.back().out_dim();
        a.W = read_matrix(required(l, "W"), "W", cols, reason);
        read_bias(member(l, "b"), a, "b");
        node act = required(l, "activation");
        std::string name = string_value(act);
        bool found = false;
        for (const auto& [s, v] : activation_names)
            if (s == name) {
                p.activations.push_back(v);
                found = true;
            }
        if (!found)
            fail(act, "unknown activation " + in_quotes(name) +
                          " (expected identity, relu, tanh, gelu, erf, step or floor)");
        p.layers.push_back(std::move(a));
    }
    return p;
}

graph_map<rational> reader::read_graph(const node& n, const map_role& role) const {
    check_keys(n, {"kind", "nodes", "output"});
    graph_map<rational> g;
    node nodes = required(n, "nodes");
    expect(nodes, json::kind::array);
    if (nodes.v.empty()) fail(nodes, "a graph needs at least one node");
    within_limit(nodes, numeric::limit::graph_nodes, nodes.v.size(),
                 "the graph has " + std::to_string(nodes.v.size()) + " nodes");

    // All ids, to tell a forward reference from an unknown name.
    std::set<std::string> all_ids;
    for (const auto& e : nodes.v.elements())
        if (e.is_object())
            if (const value* id = e.find("id"); id && id->is_string())
                all_ids.insert(id->as_string());

    std::map<std::string, std::size_t> index; // node id or used input name -> node index
    std::map<std::string, std::string> defined_at;
    auto resolve = [&](const node& ref) -> std::size_t {
        std::string name = string_value(ref);
        if (auto it = index.find(name); it != index.end()) return it->second;
        if (const role_input* in = role.find(name)) {
            g.nodes.push_back(
                graph_node<rational>{in->name, input_op{in->name, in->offset}, {}, in->dim});
            index.emplace(name, g.nodes.size() - 1);
            return g.nodes.size() - 1;
        }
        if (all_ids.count(name) != 0)
            fail(ref, "node " + in_quotes(name) +
                          " is used before it is defined (nodes must be listed in order)");
        fail(ref, "unknown input " + in_quotes(name) + ": neither an input of this map (" +
                      role.names() + ") nor the id of an earlier node");
    };

    for (std::size_t k = 0; k < nodes.v.size(); ++k) {
        node nd = nodes.at(k);
        expect(nd, json::kind::object);
        node idn = required(nd, "id");
        std::string id = string_value(idn);
        if (id.empty()) fail(idn, "node ids must not be empty");
        if (role.find(id)) fail(idn, "node id " + in_quotes(id) + " is an input name of this map");
        if (auto it = defined_at.find(id); it != defined_at.end())
            fail(idn, "duplicate node id " + in_quotes(id) + " (first at " + it->second + ")");

        node opn = required(nd, "op");
        std::string op_name = string_value(opn);
        static const std::vector<std::string_view> op_names = file_op_names();
        graph_node<rational> out;
        out.id = id;
        bool known = false;
        for_each_alternative<graph_op<rational>>([&]<class T>(std::type_identity<T>) {
            if (!std::is_same_v<T, input_op> && T::name == op_name) {
                out.op.template emplace<T>();
                known = true;
            }
        });
        if (!known) {
            std::vector<std::string> names(op_names.begin(), op_names.end());
            fail(opn, "unknown op " + in_quotes(op_name) +
                          " (expected one of: " + join(names, ", ") + ")");
        }
        const op_form form = form_of(out.op);
        std::vector<std::string_view> keys{"id", "op", "in"};
        keys.insert(keys.end(), form.params.begin(), form.params.end());
        check_keys(nd, keys);

        // Arguments.
        node in = required(nd, "in");
        if (in.v.is_string()) {
            out.args.push_back(resolve(in));
        } else if (in.v.is_array()) {
            for (std::size_t t = 0; t < in.v.size(); ++t) out.args.push_back(resolve(in.at(t)));
        } else {
            fail(in, std::string("expected a string or an array of strings, got ") +
                         with_article(in.v.type()));
        }
        const std::size_t argc = out.args.size();
        auto arg_dim = [&](std::size_t t) { return g.nodes[out.args[t]].dim; };
        if (argc < form.min_inputs || (form.max_inputs != 0 && argc > form.max_inputs)) {
            const std::size_t n_in = form.min_inputs;
            fail(in, "op '" + op_name + "' takes " + (form.max_inputs == 0 ? "at least " : "") +
                         std::to_string(n_in) + (n_in == 1 ? " input" : " inputs") + ", got " +
                         std::to_string(argc));
        }
        if (form.equal_dims)
            for (std::size_t t = 1; t < argc; ++t)
                if (arg_dim(t) != arg_dim(0))
                    fail(in, "op '" + op_name + "' needs inputs of equal dimension; input 0 has " +
                                 std::to_string(arg_dim(0)) + ", input " + std::to_string(t) +
                                 " has " + std::to_string(arg_dim(t)));

        // Dimension and parameters.
        std::visit(
            overloaded{
                [](input_op&) {},
                [&](linear_op<rational>& p) {
                    p.lin.W = read_matrix(required(nd, "W"), "W", arg_dim(0),
                                          "the input's dimension " + std::to_string(arg_dim(0)));
                    read_bias(member(nd, "b"), p.lin, "b");
                    out.dim = p.lin.out_dim();
                },
                [&](add_op&) { out.dim = arg_dim(0); },
                [&](sub_op&) { out.dim = arg_dim(0); },
                [&](mul_op&) { out.dim = arg_dim(0); },
                [&](concat_op&) {
                    for (std::size_t t = 0; t < argc; ++t) out.dim += arg_dim(t);
                },
                [&]<activation A>(elementwise_op<A>&) { out.dim = arg_dim(0); },
                [&](layer_norm_op<rational>& p) {
                    out.dim = arg_dim(0);
                    if (out.dim == 0) fail(in, "layer_norm needs an input of dimension at least 1");
                    node eps = required(nd, "eps");
                    p.eps_exact = number(eps);
                    if (p.eps_exact < 0)
                        fail(eps, "layer_norm eps must be >= 0, got " +
                                      numeric::to_exact_string(p.eps_exact));
                    p.eps = p.eps_exact;
                    if (auto gm = member(nd, "gamma")) p.gamma = vector(*gm, out.dim, "gamma");
                    if (auto bt = member(nd, "beta")) p.beta = vector(*bt, out.dim, "beta");
                },
                [&](scale_op<rational>& p) {
                    out.dim = arg_dim(0);
                    p.factor = number(required(nd, "factor"));
                },
                [&](slice_op& p) {
                    const std::size_t dim = arg_dim(0);
                    node from = required(nd, "from");
                    node to = required(nd, "to");
                    long f = bounded_integer(from, 0, std::numeric_limits<long>::max(), "from");
                    long t = bounded_integer(to, 0, std::numeric_limits<long>::max(), "to");
                    if (static_cast<std::size_t>(t) > dim)
                        fail(to, "slice 'to' = " + std::to_string(t) +
                                     " exceeds the input's dimension " + std::to_string(dim));
                    if (f >= t)
                        fail(from, "slice needs from < to, got from = " + std::to_string(f) +
                                       " and to = " + std::to_string(t));
                    p.from = static_cast<std::size_t>(f);
                    out.dim = static_cast<std::size_t>(t - f);
                },
            },
            out.op);
        // Concatenations can double a width node after node without a byte of text.
        within_limit(nd, numeric::limit::width, out.dim,
                     "node " + in_quotes(id) + " has dimension " + std::to_string(out.dim));
        hold(nd, part_numbers + out.dim);
        g.nodes.push_back(std::move(out));
        index.emplace(id, g.nodes.size() - 1);
        defined_at.emplace(id, idn.ptr);
    }

    node output = required(n, "output");
    std::string out_name = string_value(output);
    if (defined_at.count(out_name) == 0)
        fail(output, "output " + in_quotes(out_name) + " is not the id of a node");
    g.output = index.at(out_name);
    return g;
}

table_map reader::read_table(const node& n, const map_role& role) const {
    check_keys(n, {"kind", "entries", "default"});
    table_map t;
    node def = required(n, "default");
    t.fallback = vector(def);
    if (t.fallback.empty()) fail(def, "the default output must not be empty");
    node entries = required(n, "entries");
    expect(entries, json::kind::array);
    within_limit(entries, numeric::limit::table_entries, entries.v.size(),
                 "the table has " + std::to_string(entries.v.size()) + " entries");
    std::map<std::vector<rational>, std::size_t> first;
    for (std::size_t k = 0; k < entries.v.size(); ++k) {
        node e = entries.at(k);
        expect(e, json::kind::object);
        check_keys(e, {"in", "out"});
        node in = required(e, "in");
        vec<rational> key = vector(in);
        if (key.size() != role.in_dim)
            fail(in, "'in' has length " + std::to_string(key.size()) +
                         "; the map's input dimension is " + role.describe_in());
        vec<rational> out = vector(required(e, "out"), t.fallback.size(),
                                   "'out' (like 'default')");
        if (auto [it, fresh] = first.emplace(key, k); !fresh)
            fail(in, "duplicate table input " + show_vector(key) + " (first at " + entries.ptr +
                         "/" + std::to_string(it->second) + ")");
        t.entries.emplace(std::move(key), std::move(out));
    }
    t.lo = t.fallback;
    t.hi = t.fallback;
    for (const auto& [key, out] : t.entries)
        for (std::size_t c = 0; c < out.size(); ++c) {
            if (out[c] < t.lo[c]) t.lo[c] = out[c];
            if (out[c] > t.hi[c]) t.hi[c] = out[c];
        }
    return t;
}

hash_map reader::read_hash(const node& n, std::size_t& out_dim) const {
    check_keys(n, {"kind", "seed", "out_dim", "range", "denominator"});
    hash_map h;
    node seed = required(n, "seed");
    integer s = integer_value(seed);
    if (s < 0 || s >= (integer(1) << 64))
        fail(seed, "seed must be in [0, 2^64), got " + s.str());
    h.seed = s.convert_to<std::uint64_t>();
    out_dim = dimension(required(n, "out_dim"), "out_dim");
    hold(n, out_dim);
    h.range = bounded_integer(required(n, "range"), 0, max_hash_range, "range");
    h.denominator = bounded_integer(required(n, "denominator"), 1,
                                    std::numeric_limits<long>::max(), "denominator");
    return h;
}

} // namespace

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
