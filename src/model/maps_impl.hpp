#pragma once
// Template bodies of maps.hpp.

#include <optional>
#include <stdexcept>
#include <string>

namespace attnprop::model {

template <numeric::Scalar S> void require_all_finite(const vec<S>& v) {
    if constexpr (numeric::checks_values<S>)
        for (const auto& c : v) numeric::require_finite(c);
    else
        (void)v;
}

namespace detail {

template <numeric::Scalar S> S apply_activation(activation a, const S& z, const numeric::context& ctx) {
    switch (a) {
    case activation::identity: return z;
    case activation::relu: return numeric::relu(z, ctx);
    case activation::step: return numeric::step(z, ctx);
    case activation::floor: return numeric::floor(z);
    case activation::tanh:
    case activation::gelu:
    case activation::erf:
        if constexpr (numeric::ExpScalar<S>) {
            if (a == activation::tanh) return numeric::tanh(z);
            if (a == activation::erf) return numeric::erf(z);
            return numeric::gelu(z, ctx);
        } else {
            throw numeric::numeric_error(std::string(to_string(a)) +
                                         " needs real arithmetic; not available for " +
                                         std::string(numeric::scalar_traits<S>::name) +
                                         " scalars (use --scalar mpfr or ball)");
        }
    }
    return z;
}

/// Why a layer norm has no value: var + eps is 0 (exact zero, or a rounded zero) or, for an
/// enclosure, may be 0 (precision_may_resolve: a higher precision may separate it from 0).
template <numeric::Scalar S>
numeric::undefined_error layer_norm_undefined(const S& s, numeric::order sign,
                                              const graph_node<S>& node) {
    const bool eps0 = node.eps_exact == 0;
    if (sign == numeric::order::equal || sign == numeric::order::less) {
        if (eps0) return numeric::undefined_error("layer norm with eps = 0 at zero variance");
        return numeric::undefined_error("layer norm at zero variance: eps = " +
                                        numeric::to_exact_string(node.eps_exact) + " is 0 in " +
                                        std::string(numeric::scalar_traits<S>::name));
    }
    const std::string bits = std::to_string(numeric::scalar_traits<S>::precision(s));
    if (eps0)
        return numeric::undefined_error(
            "layer norm with eps = 0: the variance enclosure contains 0 (undefined if it is "
            "exactly 0, not resolved at " + bits + " bits otherwise)",
            {}, true);
    return numeric::undefined_error("layer norm: the enclosure of var + eps contains 0 at " +
                                        bits + " bits",
                                    {}, true);
}

template <numeric::Scalar S>
vec<S> layer_norm(const vec<S>& x, const graph_node<S>& node, const numeric::context& ctx) {
    if constexpr (numeric::ExpScalar<S>) {
        const std::size_t d = x.size();
        S dd = numeric::from_int<S>(static_cast<long>(d), ctx);
        S mean = numeric::zero<S>(ctx);
        for (const auto& v : x) mean += v;
        mean = mean / dd;
        vec<S> centred;
        centred.reserve(d);
        S var = numeric::zero<S>(ctx);
        for (const auto& v : x) {
            // One coordinate is its own mean: centred exactly 0 (an enclosure of v - v would not
            // be the point 0).
            centred.push_back(d == 1 ? numeric::zero<S>(ctx) : v - mean);
            numeric::fma_acc(var, centred.back(), centred.back());
        }
        var = var / dd;
        // var + eps must be > 0: with eps = 0 a constant vector has no layer norm. The variance
        // is a mean of squares, so an enclosure may drop its negative part.
        S s = var + node.eps;
        if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure)
            s = numeric::relu(var, ctx) + node.eps;
        const numeric::order sign = numeric::sign(s, ctx);
        if (sign != numeric::order::greater) throw layer_norm_undefined(s, sign, node);
        S denom = numeric::sqrt(s);
        vec<S> out;
        out.reserve(d);
        for (std::size_t t = 0; t < d; ++t) {
            S v = centred[t] / denom;
            if (!node.gamma.empty()) v = v * node.gamma[t];
            if (!node.beta.empty()) v = v + node.beta[t];
            out.push_back(std::move(v));
        }
        return out;
    } else {
        (void)x;
        (void)node;
        (void)ctx;
        throw numeric::numeric_error("layer norm needs a square root; not available for " +
                                     std::string(numeric::scalar_traits<S>::name) +
                                     " scalars (use --scalar mpfr or ball)");
    }
}

/// e with the node filled in where it has none.
inline numeric::undefined_error at_node(const numeric::undefined_error& e, std::string node) {
    return e.located(numeric::undefined_location{std::nullopt, std::move(node), std::nullopt,
                                                 std::nullopt});
}

template <numeric::Scalar S>
vec<S> evaluate_graph(const graph_map<S>& g, const vec<S>& x, const numeric::context& ctx) {
    std::vector<vec<S>> val(g.nodes.size());
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const auto& nd = g.nodes[k];
        vec<S>& out = val[k];
        auto arg = [&](std::size_t t) -> const vec<S>& { return val[nd.args[t]]; };
        try {
            switch (nd.op) {
            case graph_op::input:
                out.assign(x.begin() + static_cast<std::ptrdiff_t>(nd.offset),
                           x.begin() + static_cast<std::ptrdiff_t>(nd.offset + nd.dim));
                break;
            case graph_op::linear: apply_affine(nd.lin, arg(0).data(), out, ctx); break;
            case graph_op::add:
                out = arg(0);
                for (std::size_t t = 1; t < nd.args.size(); ++t)
                    for (std::size_t c = 0; c < out.size(); ++c) out[c] += arg(t)[c];
                break;
            case graph_op::sub:
                out = arg(0);
                for (std::size_t c = 0; c < out.size(); ++c) out[c] -= arg(1)[c];
                break;
            case graph_op::mul:
                out = arg(0);
                for (std::size_t c = 0; c < out.size(); ++c) out[c] *= arg(1)[c];
                break;
            case graph_op::concat:
                out.clear();
                for (std::size_t t = 0; t < nd.args.size(); ++t)
                    out.insert(out.end(), arg(t).begin(), arg(t).end());
                break;
            case graph_op::relu:
            case graph_op::tanh:
            case graph_op::gelu:
            case graph_op::erf:
            case graph_op::step:
            case graph_op::floor: {
                activation a = nd.op == graph_op::relu   ? activation::relu
                               : nd.op == graph_op::tanh ? activation::tanh
                               : nd.op == graph_op::gelu ? activation::gelu
                               : nd.op == graph_op::erf  ? activation::erf
                               : nd.op == graph_op::step ? activation::step
                                                         : activation::floor;
                out.clear();
                out.reserve(arg(0).size());
                for (const auto& v : arg(0)) out.push_back(apply_activation(a, v, ctx));
                break;
            }
            case graph_op::layer_norm: out = layer_norm(arg(0), nd, ctx); break;
            case graph_op::scale:
                out = arg(0);
                for (auto& v : out) v = v * nd.factor;
                break;
            case graph_op::slice:
                out.assign(arg(0).begin() + static_cast<std::ptrdiff_t>(nd.offset),
                           arg(0).begin() + static_cast<std::ptrdiff_t>(nd.offset + nd.dim));
                break;
            }
            // Arithmetic nodes may overflow a double; copies (input, concat, slice) cannot.
            if (nd.op != graph_op::input && nd.op != graph_op::concat && nd.op != graph_op::slice)
                require_all_finite(out);
        } catch (const numeric::undefined_error& e) {
            throw at_node(e, nd.id.empty() ? std::string(to_string(nd.op)) : nd.id);
        }
    }
    return std::move(val[g.output]);
}

/// Output of an arbitrary (exact-keyed) map: exact lookup when the input is known exactly,
/// otherwise the hull of every value the map can take (enclosure kinds only).
template <numeric::Scalar S, class Lookup, class AllValues>
vec<S> evaluate_exact_keyed(const vec<S>& x, std::size_t out_dim, Lookup lookup, AllValues all,
                            const numeric::context& ctx) {
    std::vector<rational> key;
    key.reserve(x.size());
    bool exact = true;
    for (const auto& v : x) {
        auto q = numeric::exact_of(v);
        if (!q) {
            exact = false;
            break;
        }
        key.push_back(std::move(*q));
    }
    if (exact) return convert<S>(lookup(key), ctx);
    // Not exactly known: for rounded kinds this cannot happen (their values are dyadic).
    std::vector<std::vector<rational>> values = all();
    vec<S> out;
    for (std::size_t c = 0; c < out_dim; ++c) {
        S h = numeric::from_rational<S>(values.front()[c], ctx);
        for (std::size_t r = 1; r < values.size(); ++r)
            h = numeric::hull(h, numeric::from_rational<S>(values[r][c], ctx));
        out.push_back(std::move(h));
    }
    return out;
}

} // namespace detail

template <numeric::Scalar S> map<S> convert(const map<rational>& m, const numeric::context& ctx) {
    map<S> out;
    out.in_dim = m.in_dim;
    out.out_dim = m.out_dim;
    std::visit(
        [&](const auto& impl) {
            using T = std::decay_t<decltype(impl)>;
            if constexpr (std::is_same_v<T, affine_map<rational>>) {
                out.impl = convert<S>(impl, ctx);
            } else if constexpr (std::is_same_v<T, mlp_map<rational>>) {
                mlp_map<S> r;
                for (const auto& l : impl.layers) r.layers.push_back(convert<S>(l, ctx));
                r.activations = impl.activations;
                out.impl = std::move(r);
            } else if constexpr (std::is_same_v<T, graph_map<rational>>) {
                graph_map<S> g;
                g.output = impl.output;
                for (const auto& nd : impl.nodes) {
                    graph_node<S> c;
                    c.id = nd.id;
                    c.op = nd.op;
                    c.args = nd.args;
                    c.dim = nd.dim;
                    c.input_name = nd.input_name;
                    c.offset = nd.offset;
                    c.lin = convert<S>(nd.lin, ctx);
                    c.factor_exact = nd.factor_exact;
                    c.factor = numeric::from_rational<S>(nd.factor_exact, ctx);
                    c.eps_exact = nd.eps_exact;
                    c.eps = numeric::from_rational<S>(nd.eps_exact, ctx);
                    c.gamma = convert<S>(nd.gamma_exact, ctx);
                    c.beta = convert<S>(nd.beta_exact, ctx);
                    c.gamma_exact = nd.gamma_exact;
                    c.beta_exact = nd.beta_exact;
                    g.nodes.push_back(std::move(c));
                }
                out.impl = std::move(g);
            } else {
                out.impl = impl;
            }
        },
        m.impl);
    return out;
}

template <numeric::Scalar S>
vec<S> evaluate(const map<S>& m, const vec<S>& x, const numeric::context& ctx) {
    return std::visit(
        [&](const auto& impl) -> vec<S> {
            using T = std::decay_t<decltype(impl)>;
            if constexpr (std::is_same_v<T, affine_map<S>>) {
                vec<S> out = apply_affine(impl, x, ctx);
                require_all_finite(out);
                return out;
            } else if constexpr (std::is_same_v<T, mlp_map<S>>) {
                vec<S> cur = x, next;
                for (std::size_t l = 0; l < impl.layers.size(); ++l) {
                    try {
                        apply_affine(impl.layers[l], cur.data(), next, ctx);
                        if (impl.activations[l] != activation::identity)
                            for (auto& v : next) v = detail::apply_activation(impl.activations[l], v, ctx);
                        require_all_finite(next);
                    } catch (const numeric::undefined_error& e) {
                        throw detail::at_node(e, "mlp layer " + std::to_string(l + 1));
                    }
                    std::swap(cur, next);
                }
                return cur;
            } else if constexpr (std::is_same_v<T, graph_map<S>>) {
                return detail::evaluate_graph(impl, x, ctx);
            } else if constexpr (std::is_same_v<T, table_map>) {
                return detail::evaluate_exact_keyed<S>(
                    x, m.out_dim,
                    [&](const std::vector<rational>& key) -> const std::vector<rational>& {
                        auto it = impl.entries.find(key);
                        return it == impl.entries.end() ? impl.fallback : it->second;
                    },
                    [&] {
                        if (!impl.lo.empty())
                            return std::vector<std::vector<rational>>{impl.lo, impl.hi};
                        std::vector<std::vector<rational>> all{impl.fallback};
                        for (const auto& [k, v] : impl.entries) all.push_back(v);
                        return all;
                    },
                    ctx);
            } else {
                const std::size_t od = m.out_dim;
                return detail::evaluate_exact_keyed<S>(
                    x, od,
                    [&](const std::vector<rational>& key) { return hash_output(impl, od, key); },
                    [&] {
                        std::vector<rational> lo(od, rational(-impl.range, impl.denominator));
                        std::vector<rational> hi(od, rational(impl.range, impl.denominator));
                        return std::vector<std::vector<rational>>{lo, hi};
                    },
                    ctx);
            }
        },
        m.impl);
}

template <class S> bool needs_real_arithmetic(const map<S>& m) {
    if (const auto* p = std::get_if<mlp_map<S>>(&m.impl)) {
        for (auto a : p->activations)
            if (a == activation::tanh || a == activation::gelu || a == activation::erf) return true;
    }
    if (const auto* g = std::get_if<graph_map<S>>(&m.impl)) {
        for (const auto& nd : g->nodes)
            if (nd.op == graph_op::tanh || nd.op == graph_op::gelu || nd.op == graph_op::erf ||
                nd.op == graph_op::layer_norm)
                return true;
    }
    return false;
}

} // namespace attnprop::model
