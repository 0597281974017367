#include "soft_influence/box_maps.hpp"

#include "soft_influence/hypotheses.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprop::analysis::boxes {

namespace {

using numeric::arb_ball;
using numeric::dinterval;
using numeric::interval_detail::next_down;
using numeric::interval_detail::next_up;

constexpr double inf = std::numeric_limits<double>::infinity();

/// sup |gelu'| = (1 + erf 1)/2 + 1/(e sqrt(pi)) = 1.12890..., and 2/sqrt(pi) = 1.12837...,
/// rounded up (theory.md §6; hypotheses.cpp computes them in balls).
constexpr double gelu_slope = 1.1289045;
constexpr double erf_slope = 1.1283792;

template <class S> using vecS = std::vector<S>;

/// |W| e for an affine map's matrix (rows x cols, e of length cols), rounded up.
template <class S> std::vector<double> abs_times(const model::matrix<S>& W, const double* e) {
    std::vector<double> out(W.rows, 0.0);
    for (std::size_t r = 0; r < W.rows; ++r) {
        double acc = 0;
        for (std::size_t c : W.nonzero[r]) acc = up_add(acc, up_mul(magnitude(W.at(r, c)), e[c]));
        out[r] = acc;
    }
    return out;
}

template <class S> void cap_by_width(box_diff<S>& v, double cap) {
    if (v.diff.empty()) return;
    for (std::size_t c = 0; c < v.box.size(); ++c) v.diff[c] = std::min(v.diff[c], up_mul(cap, width(v.box[c])));
}

/// The slope bound of an elementwise activation over one coordinate's box; nullopt where the
/// activation is discontinuous inside it (the change is then only bounded by the cap).
template <class S>
std::optional<double> activation_slope(model::activation a, const S& x, const numeric::context& ctx) {
    const double lo = down(x), hi = up(x);
    const double m = lo > 0 ? lo : (hi < 0 ? -hi : 0.0); // min |x| over the box
    switch (a) {
    case model::activation::identity: return 1.0;
    case model::activation::relu: return hi <= 0 ? 0.0 : 1.0;
    case model::activation::tanh: {
        if (m == 0) return 1.0;
        const dinterval t = numeric::tanh(dinterval(m));
        return std::min(1.0, up((dinterval(1.0) - t * t)));
    }
    case model::activation::erf: {
        if (m == 0) return erf_slope;
        return std::min(erf_slope, up_mul(erf_slope, up(numeric::exp(dinterval(-next_down(m * m) > 0 ? 0 : -(m * m))))));
    }
    case model::activation::gelu: return gelu_slope;
    case model::activation::step:
        return (lo > 0 || hi <= 0) ? std::optional<double>(0.0) : std::nullopt;
    case model::activation::floor:
        return std::isfinite(lo) && std::isfinite(hi) && std::floor(lo) == std::floor(hi)
                   ? std::optional<double>(0.0)
                   : std::nullopt;
    }
    (void)ctx;
    return std::nullopt;
}

template <class S>
box_diff<S> activation(model::activation a, const box_diff<S>& in, double cap, const numeric::context& ctx) {
    box_diff<S> out;
    out.box.reserve(in.box.size());
    for (const auto& v : in.box) out.box.push_back(model::detail::apply_activation(a, v, ctx));
    if (!in.diff.empty()) {
        out.diff.resize(in.box.size());
        for (std::size_t c = 0; c < in.box.size(); ++c) {
            const auto s = activation_slope(a, in.box[c], ctx);
            out.diff[c] = s ? up_mul(*s, in.diff[c]) : inf;
        }
    }
    cap_by_width(out, cap);
    return out;
}

template <class S>
box_diff<S> affine(const model::affine_map<S>& a, const box_diff<S>& in, double cap,
                   const numeric::context& ctx) {
    box_diff<S> out;
    model::apply_affine(a, in.box.data(), out.box, ctx);
    if (!in.diff.empty()) out.diff = abs_times(a.W, in.diff.data());
    cap_by_width(out, cap);
    return out;
}

/// The layer norm on a box (docs/bounds.md, "Layer norm on a box").
template <class S>
box_diff<S> layer_norm(const model::layer_norm_op<S>& p, const box_diff<S>& in, double cap,
                       const numeric::context& ctx) {
    const std::size_t d = in.box.size();
    box_diff<S> out;
    if (d == 0) return out;
    const S dd = numeric::from_int<S>(static_cast<long>(d), ctx);
    // x_c - mean = ((d - 1) x_c - Σ_{m != c} x_m) / d: each x_m once (no dependency loss).
    std::vector<S> prefix(d + 1, numeric::zero<S>(ctx)), suffix(d + 1, numeric::zero<S>(ctx));
    for (std::size_t c = 0; c < d; ++c) prefix[c + 1] = prefix[c] + in.box[c];
    for (std::size_t c = d; c-- > 0;) suffix[c] = suffix[c + 1] + in.box[c];
    std::vector<S> centred;
    centred.reserve(d);
    const S dm1 = numeric::from_int<S>(static_cast<long>(d) - 1, ctx);
    for (std::size_t c = 0; c < d; ++c)
        centred.push_back(d == 1 ? numeric::zero<S>(ctx) : (dm1 * in.box[c] - (prefix[c] + suffix[c + 1])) / dd);
    std::vector<double> lo(d), hi(d);
    for (std::size_t c = 0; c < d; ++c) {
        lo[c] = down(in.box[c]);
        hi[c] = up(in.box[c]);
    }
    const double var_lo = min_variance(lo, hi);
    double var_hi = 0;
    for (const auto& v : centred) var_hi = up_add(var_hi, up_mul(magnitude(v), magnitude(v)));
    var_hi = up_div(var_hi, static_cast<double>(d));
    const double eps_lo = std::max(0.0, down(p.eps)), eps_hi = up(p.eps);
    const double s_lo = var_lo + eps_lo > 0 ? std::max(0.0, next_down(std::sqrt(next_down(var_lo + eps_lo)))) : 0.0;
    const double s_hi = up_sqrt(up_add(var_hi, eps_hi));
    const double zmax = up_sqrt(static_cast<double>(d - 1)); // |z_c| <= sqrt(d - 1) where defined
    std::vector<double> zmag(d);
    out.box.reserve(d);
    for (std::size_t c = 0; c < d; ++c) {
        S z;
        if (s_lo > 0 && std::isfinite(s_hi)) {
            z = centred[c] / span<S>(s_lo, s_hi, ctx);
            const double zl = std::max(down(z), -zmax), zh = std::min(up(z), zmax);
            z = zl <= zh ? span<S>(zl, zh, ctx) : span<S>(-zmax, zmax, ctx);
        } else {
            // var + eps may reach 0: the output's range where it is defined.
            z = span<S>(-zmax, zmax, ctx);
        }
        zmag[c] = magnitude(z);
        S v = z;
        if (!p.gamma.empty()) v = v * p.gamma[c];
        if (!p.beta.empty()) v = v + p.beta[c];
        out.box.push_back(std::move(v));
    }
    if (!in.diff.empty()) {
        out.diff.assign(d, inf);
        if (s_lo > 0) {
            const double inv_s = up_div(1.0, s_lo);
            const double enorm = up_norm(in.diff);
            double esum = 0, zesum = 0;
            for (std::size_t m = 0; m < d; ++m) {
                esum = up_add(esum, in.diff[m]);
                zesum = up_add(zesum, up_mul(zmag[m], in.diff[m]));
            }
            const double dd_ = static_cast<double>(d);
            const double self = d >= 2 ? next_up(1.0 - 2.0 / dd_) : 0.0; // |P_cc| - 1/d >= 0 for d >= 2
            for (std::size_t c = 0; c < d; ++c) {
                const double g = p.gamma.empty() ? 1.0 : magnitude(p.gamma[c]);
                // Σ_m |J_cm| e_m <= (1/s) ((1 - 2/d) e_c + (Σ e)/d + z_c (Σ z e)/d).
                double row = up_mul(std::max(0.0, self), in.diff[c]);
                row = up_add(row, up_div(esum, dd_));
                row = up_add(row, up_div(up_mul(zmag[c], zesum), dd_));
                const double by_row = up_mul(g, up_mul(inv_s, row));
                const double by_norm = up_mul(g, up_mul(inv_s, enorm));
                out.diff[c] = std::min(by_row, by_norm);
            }
        }
    }
    cap_by_width(out, cap);
    return out;
}

template <class S>
box_diff<S> graph(const model::graph_map<S>& g, const box_diff<S>& in, double cap,
                  const numeric::context& ctx) {
    const bool diff = !in.diff.empty();
    std::vector<box_diff<S>> val(g.nodes.size());
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const auto& nd = g.nodes[k];
        box_diff<S>& out = val[k];
        auto arg = [&](std::size_t t) -> const box_diff<S>& { return val[nd.args[t]]; };
        auto slice = [&](const box_diff<S>& v, std::size_t from) {
            out.box.assign(v.box.begin() + static_cast<std::ptrdiff_t>(from),
                           v.box.begin() + static_cast<std::ptrdiff_t>(from + nd.dim));
            if (diff)
                out.diff.assign(v.diff.begin() + static_cast<std::ptrdiff_t>(from),
                                v.diff.begin() + static_cast<std::ptrdiff_t>(from + nd.dim));
        };
        try {
            std::visit(
                model::overloaded{
                    [&](const model::input_op& p) { slice(in, p.offset); },
                    [&](const model::linear_op<S>& p) { out = affine(p.lin, arg(0), cap, ctx); },
                    [&](const model::add_op&) {
                        out = arg(0);
                        for (std::size_t t = 1; t < nd.args.size(); ++t)
                            for (std::size_t c = 0; c < out.box.size(); ++c) {
                                out.box[c] += arg(t).box[c];
                                if (diff) out.diff[c] = up_add(out.diff[c], arg(t).diff[c]);
                            }
                        cap_by_width(out, cap);
                    },
                    [&](const model::sub_op&) {
                        out = arg(0);
                        for (std::size_t c = 0; c < out.box.size(); ++c) {
                            out.box[c] -= arg(1).box[c];
                            if (diff) out.diff[c] = up_add(out.diff[c], arg(1).diff[c]);
                        }
                        cap_by_width(out, cap);
                    },
                    [&](const model::mul_op&) {
                        const auto& a = arg(0);
                        const auto& b = arg(1);
                        out.box.clear();
                        out.diff.clear();
                        for (std::size_t c = 0; c < a.box.size(); ++c) {
                            out.box.push_back(a.box[c] * b.box[c]);
                            if (diff)
                                out.diff.push_back(up_add(up_mul(magnitude(a.box[c]), b.diff[c]),
                                                          up_mul(magnitude(b.box[c]), a.diff[c])));
                        }
                        cap_by_width(out, cap);
                    },
                    [&](const model::concat_op&) {
                        out.box.clear();
                        out.diff.clear();
                        for (std::size_t t = 0; t < nd.args.size(); ++t) {
                            out.box.insert(out.box.end(), arg(t).box.begin(), arg(t).box.end());
                            if (diff) out.diff.insert(out.diff.end(), arg(t).diff.begin(), arg(t).diff.end());
                        }
                    },
                    [&]<model::activation A>(const model::elementwise_op<A>&) {
                        out = activation(A, arg(0), cap, ctx);
                    },
                    [&](const model::layer_norm_op<S>& p) { out = layer_norm(p, arg(0), cap, ctx); },
                    [&](const model::scale_op<S>& p) {
                        out = arg(0);
                        const double f = magnitude(p.factor);
                        for (std::size_t c = 0; c < out.box.size(); ++c) {
                            out.box[c] = out.box[c] * p.factor;
                            if (diff) out.diff[c] = up_mul(f, out.diff[c]);
                        }
                        cap_by_width(out, cap);
                    },
                    [&](const model::slice_op& p) { slice(arg(0), p.from); },
                },
                nd.op);
        } catch (const numeric::undefined_error& e) {
            throw model::detail::at_node(e, nd.id.empty() ? std::string(model::op_name(nd.op)) : nd.id);
        }
        if (diff) {
            // Carry the first cause of an infinite bound, or name this node as one.
            for (std::size_t t = 0; t < nd.args.size() && out.unbounded.empty(); ++t)
                out.unbounded = val[nd.args[t]].unbounded;
            const bool in_finite = std::all_of(nd.args.begin(), nd.args.end(), [&](std::size_t a) {
                return std::all_of(val[a].diff.begin(), val[a].diff.end(), [](double v) { return std::isfinite(v); });
            }) && (!std::holds_alternative<model::input_op>(nd.op) ||
                   std::all_of(in.diff.begin(), in.diff.end(), [](double v) { return std::isfinite(v); }));
            const bool out_finite = std::all_of(out.diff.begin(), out.diff.end(), [](double v) { return std::isfinite(v); });
            if (out.unbounded.empty() && in_finite && !out_finite) {
                const std::string id = nd.id.empty() ? "" : " '" + nd.id + "'";
                using layer_norm = model::layer_norm_op<S>; // a map's kind, not a scalar kind
                out.unbounded = std::string(model::op_name(nd.op)) + id +
                                (std::holds_alternative<layer_norm>(nd.op)
                                     ? " (var + eps may be 0 on its box)"
                                     : " (not Lipschitz on its box)");
            }
        }
    }
    return std::move(val[g.output]);
}

} // namespace

double up(const dinterval& x) { return x.hi(); }
double down(const dinterval& x) { return x.lo(); }
double up(const arb_ball& x) {
    if (!numeric::is_finite(x)) return inf;
    arf_t u;
    arf_init(u);
    arb_get_ubound_arf(u, x.raw(), 64);
    const double r = arf_get_d(u, ARF_RND_CEIL);
    arf_clear(u);
    return r;
}
double down(const arb_ball& x) {
    if (!numeric::is_finite(x)) return -inf;
    arf_t u;
    arf_init(u);
    arb_get_lbound_arf(u, x.raw(), 64);
    const double r = arf_get_d(u, ARF_RND_FLOOR);
    arf_clear(u);
    return r;
}

template <> dinterval point<dinterval>(double x, const numeric::context&) { return dinterval(x); }
template <> arb_ball point<arb_ball>(double x, const numeric::context& ctx) {
    return arb_ball::from_double(x, ctx);
}
template <> dinterval span<dinterval>(double lo, double hi, const numeric::context&) { return {lo, hi}; }
template <> arb_ball span<arb_ball>(double lo, double hi, const numeric::context& ctx) {
    return numeric::hull(arb_ball::from_double(lo, ctx), arb_ball::from_double(hi, ctx));
}
template <> dinterval from_dinterval<dinterval>(const dinterval& x, const numeric::context&) { return x; }
template <> arb_ball from_dinterval<arb_ball>(const dinterval& x, const numeric::context& ctx) {
    if (!numeric::is_finite(x)) {
        arb_ball r(ctx.precision_bits);
        arb_indeterminate(r.raw());
        return r;
    }
    return span<arb_ball>(x.lo(), x.hi(), ctx);
}

double up_add(double a, double b) { return numeric::interval_detail::add_up(a, b); }
double up_sub(double a, double b) { return numeric::interval_detail::add_up(a, -b); }
double up_mul(double a, double b) {
    if (a == 0 || b == 0) return 0.0;
    return numeric::interval_detail::mul_up(a, b);
}
double up_div(double a, double b) {
    if (a == 0) return 0.0;
    if (b <= 0) return inf;
    if (!std::isfinite(a)) return inf;
    if (!std::isfinite(b)) return 0.0 < a ? next_up(0.0) : 0.0;
    const double q = a / b;
    return std::isfinite(q) ? next_up(q) : inf;
}
double up_sqrt(double a) {
    if (a <= 0) return 0.0;
    if (!std::isfinite(a)) return inf;
    return next_up(std::sqrt(a));
}
double up_norm(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s = up_add(s, up_mul(x, x));
    return up_sqrt(s);
}

double min_variance(const std::vector<double>& lo, const std::vector<double>& hi) {
    const std::size_t d = lo.size();
    if (d == 0) return 0;
    double max_lo = -inf, min_hi = inf;
    for (std::size_t m = 0; m < d; ++m) {
        max_lo = std::max(max_lo, lo[m]);
        min_hi = std::min(min_hi, hi[m]);
    }
    if (max_lo <= min_hi) return 0; // a constant vector lies in the box
    if (!std::isfinite(max_lo) || !std::isfinite(min_hi)) return 0;
    std::vector<double> breaks;
    breaks.reserve(2 * d);
    for (std::size_t m = 0; m < d; ++m) {
        if (std::isfinite(lo[m])) breaks.push_back(lo[m]);
        if (std::isfinite(hi[m])) breaks.push_back(hi[m]);
    }
    std::sort(breaks.begin(), breaks.end());
    breaks.erase(std::unique(breaks.begin(), breaks.end()), breaks.end());
    // On each open segment between breakpoints g(c) = A c^2 - 2 B c + C with fixed terms; its
    // minimum over the reals, C - B^2/A, bounds the segment's from below.
    double best = inf;
    for (std::size_t k = 0; k + 1 < breaks.size(); ++k) {
        const double mid = breaks[k] / 2 + breaks[k + 1] / 2;
        dinterval A(0.0), B(0.0), C(0.0);
        for (std::size_t m = 0; m < d; ++m) {
            if (hi[m] < mid) {
                const dinterval h(hi[m]);
                A += dinterval(1.0);
                B += h;
                C += h * h;
            } else if (lo[m] > mid) {
                const dinterval l(lo[m]);
                A += dinterval(1.0);
                B += l;
                C += l * l;
            }
        }
        if (A.hi() == 0) return 0; // g vanishes on the segment
        const double g = (C - B * B / A).lo();
        best = std::min(best, std::max(0.0, g));
    }
    if (!std::isfinite(best)) return 0;
    return std::max(0.0, next_down(best / static_cast<double>(d)));
}

template <class S>
box_diff<S> propagate(const model::map<S>& f, const box_diff<S>& in, double cap,
                      const numeric::context& ctx) {
    return std::visit(
        model::overloaded{
            [&](const model::affine_map<S>& a) { return affine(a, in, cap, ctx); },
            [&](const model::mlp_map<S>& p) {
                box_diff<S> cur = in;
                for (std::size_t l = 0; l < p.layers.size(); ++l) {
                    try {
                        cur = affine(p.layers[l], cur, cap, ctx);
                        if (p.activations[l] != model::activation::identity) {
                            const bool finite = std::all_of(cur.diff.begin(), cur.diff.end(),
                                                            [](double v) { return std::isfinite(v); });
                            cur = activation(p.activations[l], cur, cap, ctx);
                            if (finite && cur.unbounded.empty() &&
                                !std::all_of(cur.diff.begin(), cur.diff.end(), [](double v) { return std::isfinite(v); }))
                                cur.unbounded = "mlp layer " + std::to_string(l + 1) + " " +
                                                model::to_string(p.activations[l]) + " (not Lipschitz on its box)";
                        }
                    } catch (const numeric::undefined_error& e) {
                        throw model::detail::at_node(e, "mlp layer " + std::to_string(l + 1));
                    }
                }
                return cur;
            },
            [&](const model::graph_map<S>& g) { return graph(g, in, cap, ctx); },
            [&](const model::table_map&) {
                box_diff<S> out;
                out.box = model::evaluate(f, in.box, ctx);
                if (!in.diff.empty()) out.diff.assign(out.box.size(), inf);
                cap_by_width(out, cap);
                out.unbounded = "a table map";
                return out;
            },
            [&](const model::hash_map&) {
                box_diff<S> out;
                out.box = model::evaluate(f, in.box, ctx);
                if (!in.diff.empty()) out.diff.assign(out.box.size(), inf);
                cap_by_width(out, cap);
                out.unbounded = "a hash map";
                return out;
            },
        },
        f.impl);
}

template box_diff<dinterval> propagate(const model::map<dinterval>&, const box_diff<dinterval>&, double,
                                       const numeric::context&);
template box_diff<arb_ball> propagate(const model::map<arb_ball>&, const box_diff<arb_ball>&, double,
                                      const numeric::context&);

} // namespace attnprop::analysis::boxes
