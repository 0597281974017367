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
                                              const layer_norm_op<S>& node) {
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
vec<S> layer_norm(const vec<S>& x, const layer_norm_op<S>& node, const numeric::context& ctx) {
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
        auto slice = [&](const vec<S>& v, std::size_t from) {
            out.assign(v.begin() + static_cast<std::ptrdiff_t>(from),
                       v.begin() + static_cast<std::ptrdiff_t>(from + nd.dim));
        };
        try {
            // Each op fills `out` and says whether it computed (and so may overflow a double)
            // rather than copied (input, concat, slice).
            const bool computed = std::visit(
                overloaded{
                    [&](const input_op& p) {
                        slice(x, p.offset);
                        return false;
                    },
                    [&](const linear_op<S>& p) {
                        apply_affine(p.lin, arg(0).data(), out, ctx);
                        return true;
                    },
                    [&](const add_op&) {
                        out = arg(0);
                        for (std::size_t t = 1; t < nd.args.size(); ++t)
                            for (std::size_t c = 0; c < out.size(); ++c) out[c] += arg(t)[c];
                        return true;
                    },
                    [&](const sub_op&) {
                        out = arg(0);
                        for (std::size_t c = 0; c < out.size(); ++c) out[c] -= arg(1)[c];
                        return true;
                    },
                    [&](const mul_op&) {
                        out = arg(0);
                        for (std::size_t c = 0; c < out.size(); ++c) out[c] *= arg(1)[c];
                        return true;
                    },
                    [&](const concat_op&) {
                        out.clear();
                        for (std::size_t t = 0; t < nd.args.size(); ++t)
                            out.insert(out.end(), arg(t).begin(), arg(t).end());
                        return false;
                    },
                    [&]<activation A>(const elementwise_op<A>&) {
                        out.clear();
                        out.reserve(arg(0).size());
                        for (const auto& v : arg(0)) out.push_back(apply_activation(A, v, ctx));
                        return true;
                    },
                    [&](const layer_norm_op<S>& p) {
                        out = layer_norm(arg(0), p, ctx);
                        return true;
                    },
                    [&](const scale_op<S>& p) {
                        out = arg(0);
                        for (auto& v : out) v = v * p.factor;
                        return true;
                    },
                    [&](const slice_op& p) {
                        slice(arg(0), p.from);
                        return false;
                    },
                },
                nd.op);
            if (computed) require_all_finite(out);
        } catch (const numeric::undefined_error& e) {
            throw at_node(e, nd.id.empty() ? std::string(op_name(nd.op)) : nd.id);
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

namespace detail {

/// A graph op with its parameters converted with from_rational<S>.
template <numeric::Scalar S>
graph_op<S> convert_op(const graph_op<rational>& op, const numeric::context& ctx) {
    return std::visit(
        overloaded{
            [](const input_op& p) -> graph_op<S> { return p; },
            [&](const linear_op<rational>& p) -> graph_op<S> {
                return linear_op<S>{convert<S>(p.lin, ctx)};
            },
            [](const add_op& p) -> graph_op<S> { return p; },
            [](const sub_op& p) -> graph_op<S> { return p; },
            [](const mul_op& p) -> graph_op<S> { return p; },
            [](const concat_op& p) -> graph_op<S> { return p; },
            []<activation A>(const elementwise_op<A>& p) -> graph_op<S> { return p; },
            [&](const layer_norm_op<rational>& p) -> graph_op<S> {
                return layer_norm_op<S>{p.eps_exact, numeric::from_rational<S>(p.eps_exact, ctx),
                                        convert<S>(p.gamma, ctx), convert<S>(p.beta, ctx)};
            },
            [&](const scale_op<rational>& p) -> graph_op<S> {
                return scale_op<S>{numeric::from_rational<S>(p.factor, ctx)};
            },
            [](const slice_op& p) -> graph_op<S> { return p; },
        },
        op);
}

} // namespace detail

template <numeric::Scalar S> map<S> convert(const map<rational>& m, const numeric::context& ctx) {
    map<S> out;
    out.in_dim = m.in_dim;
    out.out_dim = m.out_dim;
    out.impl = std::visit(
        overloaded{
            [&](const affine_map<rational>& a) -> map_impl<S> { return convert<S>(a, ctx); },
            [&](const mlp_map<rational>& p) -> map_impl<S> {
                mlp_map<S> r;
                for (const auto& l : p.layers) r.layers.push_back(convert<S>(l, ctx));
                r.activations = p.activations;
                return r;
            },
            [&](const graph_map<rational>& g) -> map_impl<S> {
                graph_map<S> r;
                r.output = g.output;
                for (const auto& nd : g.nodes)
                    r.nodes.push_back(
                        graph_node<S>{nd.id, detail::convert_op<S>(nd.op, ctx), nd.args, nd.dim});
                return r;
            },
            // Exact tables and hashes are the same for every scalar kind.
            [](const table_map& t) -> map_impl<S> { return t; },
            [](const hash_map& h) -> map_impl<S> { return h; },
        },
        m.impl);
    return out;
}

template <numeric::Scalar S>
vec<S> evaluate(const map<S>& m, const vec<S>& x, const numeric::context& ctx) {
    return std::visit(
        overloaded{
            [&](const affine_map<S>& a) {
                vec<S> out = apply_affine(a, x, ctx);
                require_all_finite(out);
                return out;
            },
            [&](const mlp_map<S>& p) {
                vec<S> cur = x, next;
                for (std::size_t l = 0; l < p.layers.size(); ++l) {
                    try {
                        apply_affine(p.layers[l], cur.data(), next, ctx);
                        if (p.activations[l] != activation::identity)
                            for (auto& v : next)
                                v = detail::apply_activation(p.activations[l], v, ctx);
                        require_all_finite(next);
                    } catch (const numeric::undefined_error& e) {
                        throw detail::at_node(e, "mlp layer " + std::to_string(l + 1));
                    }
                    std::swap(cur, next);
                }
                return cur;
            },
            [&](const graph_map<S>& g) { return detail::evaluate_graph(g, x, ctx); },
            [&](const table_map& t) {
                return detail::evaluate_exact_keyed<S>(
                    x, m.out_dim,
                    [&](const std::vector<rational>& key) -> const std::vector<rational>& {
                        auto it = t.entries.find(key);
                        return it == t.entries.end() ? t.fallback : it->second;
                    },
                    [&] {
                        if (!t.lo.empty()) return std::vector<std::vector<rational>>{t.lo, t.hi};
                        std::vector<std::vector<rational>> all{t.fallback};
                        for (const auto& [k, v] : t.entries) all.push_back(v);
                        return all;
                    },
                    ctx);
            },
            [&](const hash_map& h) {
                const std::size_t od = m.out_dim;
                return detail::evaluate_exact_keyed<S>(
                    x, od,
                    [&](const std::vector<rational>& key) { return hash_output(h, od, key); },
                    [&] {
                        std::vector<rational> lo(od, rational(-h.range, h.denominator));
                        std::vector<rational> hi(od, rational(h.range, h.denominator));
                        return std::vector<std::vector<rational>>{lo, hi};
                    },
                    ctx);
            },
        },
        m.impl);
}

template <class S> map_features features(const map<S>& m) {
    map_features f;
    auto real = [&](std::string what) {
        for (const auto& r : f.real_arithmetic)
            if (r == what) return;
        f.real_arithmetic.push_back(std::move(what));
    };
    auto nonlinearity = [&](activation a) {
        if (a == activation::identity) return;
        if (!f.uses(a)) f.activations.push_back(a);
        if (is_transcendental(a)) real(to_string(a));
    };
    std::visit(overloaded{
                   [](const affine_map<S>&) {},
                   [&](const mlp_map<S>& p) {
                       for (auto a : p.activations) nonlinearity(a);
                   },
                   [&](const graph_map<S>& g) {
                       for (const auto& nd : g.nodes)
                           std::visit(overloaded{
                                          [&]<activation A>(const elementwise_op<A>&) {
                                              nonlinearity(A);
                                          },
                                          [&](const layer_norm_op<S>& p) {
                                              real("layer_norm (needs a square root)");
                                              f.layer_norm = true;
                                              if (p.eps_exact == 0) f.singular_layer_norm = true;
                                          },
                                          [](const input_op&) {},
                                          [](const linear_op<S>&) {},
                                          [](const add_op&) {},
                                          [](const sub_op&) {},
                                          [](const mul_op&) {},
                                          [](const concat_op&) {},
                                          [](const scale_op<S>&) {},
                                          [](const slice_op&) {},
                                      },
                                      nd.op);
                   },
                   [](const table_map&) {},
                   [](const hash_map&) {},
               },
               m.impl);
    return f;
}

} // namespace attnprop::model
