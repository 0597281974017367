// Reading the maps of a model file: matrices (dense, sparse, identity), affine maps, MLPs,
// graphs, tables and hashes (the reader of model_file_reader.hpp).
#include "model/model_file_reader.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

namespace attnprop::model::file_reading {

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

} // namespace attnprop::model::file_reading
