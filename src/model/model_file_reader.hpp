// The reader of model files (model_file.cpp, model_file_maps.cpp): the JSON document walked
// with RFC 6901 pointers, every number exact, every part counted against the limits, every
// error located. Internal to the model folder.
#pragma once

#include "model/model_file.hpp"
#include "numeric/limits.hpp"

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
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnprop::model::file_reading {

using json::value;
using numeric::integer;

/// Largest accepted dimension (d, positional dim, matrix rows and columns, hash out_dim).
constexpr std::size_t max_dim = std::size_t{1} << 20;
/// Largest accepted number of entries of a matrix given by its size (sparse or identity).
constexpr std::size_t max_entries = std::size_t{1} << 24;
/// Largest accepted hash range.
constexpr long max_hash_range = 1L << 62;

inline const char* with_article(json::kind k) {
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
inline std::string in_quotes(std::string_view s) {
    constexpr std::size_t max_shown = 60;
    if (s.size() > max_shown) return "'" + std::string(s.substr(0, max_shown)) + "...'";
    return "'" + std::string(s) + "'";
}

inline std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string s;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        if (k > 0) s += sep;
        s += parts[k];
    }
    return s;
}

inline std::string show_vector(const std::vector<rational>& v) {
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

inline const std::vector<std::pair<std::string_view, activation>> activation_names = {
    {"identity", activation::identity}, {"relu", activation::relu}, {"tanh", activation::tanh},
    {"gelu", activation::gelu},         {"erf", activation::erf},   {"step", activation::step},
    {"floor", activation::floor}};

/// The ops a model file may name: every graph op but input (the reader makes an input node for
/// each input name a graph uses).
inline std::vector<std::string_view> file_op_names() {
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

inline op_form form_of(const graph_op<rational>& op) {
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
    /// A number (kept exactly) or a formula in n alone: an inverse temperature ("beta") or
    /// sigmoid attention's bias ("sigmoid_bias"), `what` naming it in messages.
    expr read_beta(const node& n, std::string_view what = "beta") const;
    void read_input(const node& n, model<rational>& m) const;
    layer<rational> read_layer(const node& n, std::size_t d) const;
    head<rational> read_head(const node& n, std::size_t d) const;
    /// A layer read under `kind`: "feature_map" only where the kind has the registry's
    /// feature_map; under such a kind every head scores by a dot product (the features are of
    /// q and k) without "scale", "length_scale" or "beta" (Katharopoulos et al.'s phi(q) . phi(k)
    /// is not scaled: attnprop refuses a factor it would ignore).
    void check_feature_map(const node& n, const layer<rational>& l,
                           const attention_kind_info& kind) const;
    void read_readout(const node& n, model<rational>& m) const;

    std::string file_;
    std::size_t bytes_;
    std::uint64_t budget_;
    mutable std::uint64_t numbers_ = 0;
};

/// Bookkeeping of a layer, a head, a graph node or an mlp layer, counted as this many numbers.
constexpr std::uint64_t part_numbers = 16;

} // namespace attnprop::model::file_reading
