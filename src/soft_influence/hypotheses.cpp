#include "soft_influence/hypotheses.hpp"

#include "soft_influence/formula_range.hpp"
#include "soft_influence/norms.hpp"

#include <arb_hypgeom.h>

#include <algorithm>
#include <variant>

namespace attnprop::analysis {

namespace {

using numeric::arb_ball;
using numeric::rational;
using rmap = model::map<rational>;

std::string map_kind_name(const rmap& f) { return std::string(model::kind_name(f)); }

std::string where(std::size_t layer, std::size_t head) {
    return "layer " + std::to_string(layer + 1) + " head " + std::to_string(head + 1);
}

/// Columns [from, to) of an exact matrix.
model::matrix<rational> column_block(const model::matrix<rational>& w, std::size_t from,
                                     std::size_t to) {
    std::vector<rational> data;
    data.reserve(w.rows * (to - from));
    for (std::size_t r = 0; r < w.rows; ++r)
        for (std::size_t c = from; c < to; ++c) data.push_back(w.at(r, c));
    return model::make_matrix(w.rows, to - from, std::move(data));
}

/// Per-block spectral norms of the columns of W that a block covers, when W's columns are the
/// input range [in_off, in_off + W.cols) of the map.
std::vector<arb_ball> column_block_norms(const model::matrix<rational>& w, std::size_t in_off,
                                         const std::vector<input_block>& blocks,
                                         const numeric::context& ctx) {
    std::vector<arb_ball> out;
    for (const auto& b : blocks) {
        std::size_t lo = std::max(b.offset, in_off);
        std::size_t hi = std::min(b.offset + b.dim, in_off + w.cols);
        if (lo >= hi) out.push_back(zero_point(ctx.precision_bits));
        else out.push_back(spectral_norm_upper(column_block(w, lo - in_off, hi - in_off), ctx));
    }
    return out;
}

bool all_zero(const std::vector<arb_ball>& v) {
    for (const auto& x : v)
        if (!arb_is_zero(x.raw())) return false;
    return true;
}

std::vector<arb_ball> scaled(const std::vector<arb_ball>& v, const arb_ball& f) {
    std::vector<arb_ball> out;
    out.reserve(v.size());
    for (const auto& x : v) out.push_back(arb_is_zero(x.raw()) ? x : upper(x * f));
    return out;
}

/// max_c |x_c| as an upper-bound point.
arb_ball max_abs(const std::vector<arb_ball>& v, long prec) {
    arb_ball m = zero_point(prec);
    for (const auto& x : v) m = max_upper(m, numeric::abs(x));
    return m;
}

std::string decimal(const arb_ball& x) { return upper_decimal(x, 5); }

map_lipschitz analyse_graph(const model::graph_map<rational>& g, const rmap& f,
                            const std::vector<input_block>& blocks, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const std::size_t nb = blocks.size();
    struct info {
        std::vector<arb_ball> l;
        std::optional<std::string> failure; // not Lipschitz, with the reason
        std::vector<std::string> notes;
    };
    std::vector<info> nodes(g.nodes.size());
    auto constant_value = [&](std::size_t idx) -> std::vector<arb_ball> {
        auto mb = model::convert<arb_ball>(f, ctx);
        auto& gb = std::get<model::graph_map<arb_ball>>(mb.impl);
        gb.output = idx;
        std::vector<arb_ball> zero(f.in_dim, zero_point(prec));
        return model::detail::evaluate_graph(gb, zero, ctx);
    };
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
        const auto& nd = g.nodes[k];
        info& out = nodes[k];
        out.l.assign(nb, zero_point(prec));
        for (std::size_t a : nd.args) {
            if (nodes[a].failure && !out.failure) out.failure = nodes[a].failure;
            for (const auto& s : nodes[a].notes)
                if (std::find(out.notes.begin(), out.notes.end(), s) == out.notes.end())
                    out.notes.push_back(s);
        }
        auto arg_l = [&](std::size_t t) -> const std::vector<arb_ball>& {
            return nodes[nd.args[t]].l;
        };
        auto arg_const = [&](std::size_t t) { return all_zero(nodes[nd.args[t]].l); };
        auto sum_args = [&] {
            for (std::size_t t = 0; t < nd.args.size(); ++t)
                for (std::size_t b = 0; b < nb; ++b) out.l[b] = upper(out.l[b] + arg_l(t)[b]);
        };
        const std::string node_name = "node '" + nd.id + "'";
        std::visit(
            model::overloaded{
                [&](const model::input_op& p) {
                    for (std::size_t b = 0; b < nb; ++b) {
                        const auto& bl = blocks[b];
                        if (std::max(bl.offset, p.offset) <
                            std::min(bl.offset + bl.dim, p.offset + nd.dim))
                            out.l[b] = numeric::one<arb_ball>(ctx);
                    }
                },
                [&](const model::linear_op<rational>& p) {
                    const auto& argn = g.nodes[nd.args[0]];
                    if (const auto* in = std::get_if<model::input_op>(&argn.op)) {
                        out.l = column_block_norms(p.lin.W, in->offset, blocks, ctx);
                    } else if (!arg_const(0)) {
                        out.l = scaled(arg_l(0), spectral_norm_upper(p.lin.W, ctx));
                    }
                },
                [&](const model::add_op&) { sum_args(); },
                [&](const model::sub_op&) { sum_args(); },
                [&](const model::concat_op&) { sum_args(); },
                [&](const model::mul_op&) {
                    const bool c0 = arg_const(0), c1 = arg_const(1);
                    if (c0 && c1) return;
                    if (!c0 && !c1) {
                        if (!out.failure)
                            out.failure = "mul of two varying arguments is bilinear, not globally "
                                          "Lipschitz (" + node_name + ")";
                        return;
                    }
                    const std::size_t cst = c0 ? 0 : 1;
                    arb_ball factor = max_abs(constant_value(nd.args[cst]), prec);
                    out.l = scaled(arg_l(1 - cst), factor);
                },
                [&]<model::activation A>(const model::elementwise_op<A>&) {
                    // activation_lipschitz has no bound for a discontinuous activation; relu and
                    // tanh are 1-Lipschitz and keep the argument's bounds as they are.
                    const auto lip = activation_lipschitz(A, ctx);
                    if (!lip) {
                        if (!arg_const(0) && !out.failure)
                            out.failure = std::string(model::to_string(A)) + " is discontinuous (" +
                                          node_name + ")";
                    } else if (A == model::activation::relu || A == model::activation::tanh) {
                        out.l = arg_l(0);
                    } else if (!arg_const(0)) {
                        out.l = scaled(arg_l(0), *lip);
                    }
                },
                [&](const model::slice_op&) { out.l = arg_l(0); },
                [&](const model::scale_op<rational>& p) {
                    out.l = scaled(arg_l(0),
                                   upper(numeric::abs(arb_ball::from_rational(p.factor, ctx))));
                },
                [&](const model::layer_norm_op<rational>& p) {
                    if (arg_const(0)) return;
                    if (p.eps_exact == 0) {
                        if (!out.failure)
                            out.failure =
                                "layer norm with eps = 0 is not Lipschitz (" + node_name + ")";
                        return;
                    }
                    arb_ball gmax = numeric::one<arb_ball>(ctx);
                    if (!p.gamma.empty()) {
                        gmax = zero_point(prec);
                        for (const auto& q : p.gamma)
                            gmax = max_upper(gmax, numeric::abs(arb_ball::from_rational(q, ctx)));
                    }
                    arb_ball factor =
                        upper(gmax / numeric::sqrt(arb_ball::from_rational(p.eps_exact, ctx)));
                    out.l = scaled(arg_l(0), factor);
                    out.notes.push_back("layer norm " + node_name + " (eps = " +
                                        numeric::to_decimal_string(p.eps_exact, 6) +
                                        ") contributes max|gamma|/sqrt(eps) <= " + decimal(factor));
                },
            },
            nd.op);
    }
    const info& res = nodes[g.output];
    map_lipschitz r;
    if (res.failure) {
        r.lipschitz = false;
        r.reason = *res.failure;
        return r;
    }
    r.lipschitz = true;
    r.block_bounds = res.l;
    for (const auto& s : res.notes) r.reason += (r.reason.empty() ? "" : "; ") + s;
    return r;
}

map_lipschitz analyse_mlp(const model::mlp_map<rational>& p, const std::vector<input_block>& blocks,
                          const numeric::context& ctx) {
    map_lipschitz r;
    std::vector<arb_ball> l;
    for (std::size_t k = 0; k < p.layers.size(); ++k) {
        if (k == 0) l = column_block_norms(p.layers[0].W, 0, blocks, ctx);
        else if (!all_zero(l)) l = scaled(l, spectral_norm_upper(p.layers[k].W, ctx));
        const auto act = p.activations[k];
        if ((act == model::activation::step || act == model::activation::floor) && !all_zero(l)) {
            r.lipschitz = false;
            r.reason = "MLP layer " + std::to_string(k + 1) + ": " + model::to_string(act) +
                       " is discontinuous";
            return r;
        }
        if (act == model::activation::step || act == model::activation::floor)
            l.assign(l.size(), zero_point(ctx.precision_bits));
        else if ((act == model::activation::gelu || act == model::activation::erf) && !all_zero(l))
            l = scaled(l, *activation_lipschitz(act, ctx));
    }
    r.lipschitz = true;
    r.block_bounds = std::move(l);
    return r;
}

/// A point 1 <= i <= n <= 16 where the formula has no value ("i=2, n=2"), found by evaluating
/// it in Arb balls: a point counts when the evaluation reports an undefined value, or when the
/// enclosure is not finite at 128 bits and still not at 1024 (a pole, not a lack of
/// precision). nullopt when every such point has a value.
std::optional<std::string> undefined_point(const model::expr& f) {
    auto finite_at = [&](long i, long n, long bits) {
        try {
            return numeric::is_finite(f.eval<numeric::arb_ball>(i, n, numeric::context{bits}));
        } catch (const numeric::numeric_error&) {
            return false;
        }
    };
    for (long n = 1; n <= 16; ++n)
        for (long i = 1; i <= n; ++i)
            if (!finite_at(i, n, 128) && !finite_at(i, n, 1024))
                return "i=" + std::to_string(i) + ", n=" + std::to_string(n);
    return std::nullopt;
}

/// 1 when the positional formula coordinates are bounded, with reasons; see check_hypotheses.
hypothesis_result embeddings_hypothesis(const model::model<rational>& m) {
    hypothesis_result h{hypothesis_names[2], true, ""};
    const auto& pos = *m.positional;
    const std::string tokens = "token embeddings are finitely many vectors; ";
    switch (pos.type) {
    case model::positional_spec::kind::table:
        h.reason = tokens + "the positional embedding is a table (finitely many rows)";
        return h;
    case model::positional_spec::kind::sinusoidal:
        h.reason = tokens + "the sinusoidal positional embedding has every coordinate in [-1, 1]";
        return h;
    case model::positional_spec::kind::formula: break;
    }
    const numeric::context ctx{128};
    std::vector<std::string> unbounded, unknown, by_intervals;
    for (std::size_t c = 0; c < pos.formulas.size(); ++c) {
        if (!pos.formulas[c]) continue;
        const model::expr& f = *pos.formulas[c];
        const std::string coord = "coordinate " + std::to_string(c) + ": '" + f.text() + "'";
        // Bounded where defined is not enough: an embedding without a value at some position
        // is no bounded embedding (and the model is undefined there).
        if (!f.defined_everywhere()) {
            if (auto where = undefined_point(f))
                unbounded.push_back(coord + " is undefined at " + *where);
            else
                unknown.push_back("coordinate " + std::to_string(c) + ": cannot prove that '" +
                                  f.text() + "' is defined at every position");
            continue;
        }
        auto b = f.bounded();
        if (b == true) continue;
        if (b == false) {
            unbounded.push_back(coord + " grows without bound");
            continue;
        }
        if (auto r = formula_range(f, ctx)) {
            by_intervals.push_back(coord + " lies in [" + lower_decimal(r->lo, 5) +
                                   ", " + upper_decimal(r->hi, 5) + "]");
            continue;
        }
        unknown.push_back("coordinate " + std::to_string(c) + ": cannot decide whether '" +
                          f.text() + "' is bounded");
    }
    auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
        return s;
    };
    if (!unbounded.empty()) {
        h.holds = false;
        h.reason = join(unbounded);
    } else if (!unknown.empty()) {
        h.holds = numeric::indeterminate;
        h.reason = join(unknown);
    } else {
        h.reason = tokens + "every positional formula is defined and bounded for 1 <= i <= n";
        if (!by_intervals.empty()) h.reason += " (by interval analysis: " + join(by_intervals) + ")";
    }
    return h;
}

} // namespace

const model::affine_map<rational>* value_affine(const model::head<rational>& h) {
    if (h.value.type == model::value_spec<rational>::kind::linear) return &h.value.V;
    if (h.value.fn) return std::get_if<model::affine_map<rational>>(&h.value.fn->impl);
    return nullptr;
}

std::optional<arb_ball> activation_lipschitz(model::activation a, const numeric::context& ctx) {
    const long p = ctx.precision_bits;
    switch (a) {
    case model::activation::identity:
    case model::activation::relu:
    case model::activation::tanh: return numeric::one<arb_ball>(ctx);
    case model::activation::step:
    case model::activation::floor: return std::nullopt;
    case model::activation::erf: {
        // erf' = (2/sqrt(pi)) e^(-x^2), largest at 0.
        arb_ball r(p);
        arb_const_sqrt_pi(r.raw(), p);
        arb_ui_div(r.raw(), 2, r.raw(), p);
        return upper(r);
    }
    case model::activation::gelu: {
        // gelu' = Phi(x) + x phi(x) and gelu'' = phi(x) (2 - x^2): gelu' falls from 0 (at -inf)
        // to its minimum at -sqrt 2, rises to its maximum L = gelu'(sqrt 2) = Phi(sqrt 2) +
        // sqrt 2 phi(sqrt 2) = (1 + erf 1)/2 + 1/(e sqrt(pi)) and falls to 1 (at inf). As
        // gelu'(-x) = 1 - gelu'(x), the minimum is 1 - L, and sup |gelu'| = max(L, L - 1) = L.
        arb_ball e1(p), c(p), r(p);
        arb_one(e1.raw());
        arb_hypgeom_erf(e1.raw(), e1.raw(), p);
        arb_add_ui(r.raw(), e1.raw(), 1, p);
        arb_mul_2exp_si(r.raw(), r.raw(), -1);
        arb_const_sqrt_pi(c.raw(), p);
        arb_ball e(p);
        arb_const_e(e.raw(), p);
        c = c * e;
        arb_ui_div(c.raw(), 1, c.raw(), p);
        return upper(r + c);
    }
    }
    return std::nullopt;
}

std::vector<input_block> update_blocks(const model::model<rational>& m, std::size_t k) {
    std::vector<input_block> out{{0, m.d}};
    std::size_t off = m.d;
    for (const auto& h : m.layers[k].heads) {
        const std::size_t dv = h.value.out_dim();
        out.push_back({off, dv});
        off += dv;
    }
    return out;
}

map_lipschitz lipschitz_analysis(const rmap& f, const std::vector<input_block>& blocks,
                                 const numeric::context& ctx) {
    auto arbitrary = [&] {
        map_lipschitz r;
        r.reason =
            "arbitrary map (" + map_kind_name(f) + "): cannot decide whether it is Lipschitz";
        return r;
    };
    return std::visit(model::overloaded{
                          [&](const model::affine_map<rational>& a) {
                              map_lipschitz r;
                              r.lipschitz = true;
                              r.block_bounds = column_block_norms(a.W, 0, blocks, ctx);
                              return r;
                          },
                          [&](const model::mlp_map<rational>& p) {
                              return analyse_mlp(p, blocks, ctx);
                          },
                          [&](const model::graph_map<rational>& g) {
                              return analyse_graph(g, f, blocks, ctx);
                          },
                          [&](const model::table_map&) { return arbitrary(); },
                          [&](const model::hash_map&) { return arbitrary(); },
                      },
                      f.impl);
}

std::optional<arb_ball> lipschitz_bound(const rmap& f, const numeric::context& ctx) {
    map_lipschitz r = lipschitz_analysis(f, {{0, f.in_dim}}, ctx);
    if (!certainly(r.lipschitz)) return std::nullopt;
    return r.block_bounds.front();
}

arb_ball value_at_zero_norm(const rmap& f, const numeric::context& ctx) {
    try {
        auto mb = model::convert<arb_ball>(f, ctx);
        std::vector<arb_ball> zero(f.in_dim, zero_point(ctx.precision_bits));
        return norm2_upper(model::evaluate(mb, zero, ctx), ctx.precision_bits);
    } catch (const numeric::numeric_error&) {
        return pos_inf(ctx.precision_bits);
    }
}

namespace {

/// Why an inverse temperature β(n) that depends on n breaks hypothesis 1.
std::string beta_reason(const model::expr& beta) {
    std::string s = " multiplies its scores by the inverse temperature beta(n) = '" + beta.text() +
                    "', which depends on n: Lemma 5 takes score maps fixed independently of n";
    const auto b = beta.bounded();
    if (b == false)
        s += ", and this beta(n) is unbounded, so the scores are not bounded uniformly in n and "
             "the attention weights need not be at most e^(2A)/(n-1) for one A (soft attention "
             "can then concentrate, as when it simulates hard attention)";
    else if (b == true)
        s += " (beta(n) is bounded, so the scores stay bounded, but the lemma as stated does "
             "not cover it)";
    else
        s += " (whether beta(n) stays bounded is not decided)";
    return s;
}

} // namespace

std::vector<hypothesis_result> check_hypotheses(const model::model<rational>& m) {
    const numeric::context ctx{128};
    std::vector<hypothesis_result> out;

    // 1. Scores.
    {
        hypothesis_result h{hypothesis_names[0], true, ""};
        std::vector<std::string> bad;
        bool biases = false;
        for (std::size_t k = 0; k < m.layers.size(); ++k)
            for (std::size_t t = 0; t < m.layers[k].heads.size(); ++t) {
                const auto& hd = m.layers[k].heads[t];
                if (hd.score.type == model::score_spec<rational>::kind::map)
                    bad.push_back(where(k, t) + " scores with an arbitrary map (" +
                                  map_kind_name(*hd.score.fn) + ")");
                else if (hd.score.length_scale == model::score_spec<rational>::length_scaling::log)
                    bad.push_back(where(k, t) + " multiplies its scores by log n, so they are not "
                                  "bounded uniformly in n");
                else if (hd.score.beta && !hd.score.beta->is_constant())
                    bad.push_back(where(k, t) + beta_reason(*hd.score.beta));
                else if (!hd.score.Q.b_is_zero || !hd.score.K.b_is_zero)
                    biases = true;
            }
        if (!bad.empty()) {
            h.holds = false;
            for (const auto& s : bad) h.reason += (h.reason.empty() ? "" : "; ") + s;
        } else {
            h.reason = "every score is scale * (Q y_i + q) . (K y_j + k) with fixed Q, K";
            if (biases)
                h.reason += "; the biases make it a bilinear form of the homogeneous vectors "
                            "(y_i, 1), (y_j, 1)";
        }
        out.push_back(std::move(h));
    }

    // 2. Values.
    {
        hypothesis_result h{hypothesis_names[1], true, ""};
        std::vector<std::string> bad;
        for (std::size_t k = 0; k < m.layers.size(); ++k)
            for (std::size_t t = 0; t < m.layers[k].heads.size(); ++t) {
                const auto& hd = m.layers[k].heads[t];
                if (!value_affine(hd))
                    bad.push_back(where(k, t) + " value is an arbitrary map (" +
                                  map_kind_name(*hd.value.fn) + ")");
            }
        if (!bad.empty()) {
            h.holds = false;
            for (const auto& s : bad) h.reason += (h.reason.empty() ? "" : "; ") + s;
        } else {
            h.reason = "every value is V y + c, a linear map of (y, 1)";
        }
        out.push_back(std::move(h));
    }

    // 3. Embeddings.
    out.push_back(embeddings_hypothesis(m));
    const hypothesis_result& emb = out.back();

    // 4. Initial states.
    {
        hypothesis_result h{hypothesis_names[3], emb.holds, ""};
        // Failing only because a positional formula has no value somewhere: then y^(0) has
        // none there either, whatever the input map.
        const bool undefined_only = certainly(!emb.holds) &&
                                    emb.reason.find(" is undefined at ") != std::string::npos &&
                                    emb.reason.find("grows without bound") == std::string::npos;
        if (undefined_only) {
            h.reason = "y^(0) has no value where a positional embedding has none (" + emb.reason + ")";
        } else switch (m.input) {
        case model::input_kind::add:
            h.reason = certainly(emb.holds)  ? "y^(0) = v + p, a sum of bounded embeddings"
                       : certainly(!emb.holds) ? "y^(0) = v + p with unbounded positional "
                                              "embeddings (||v + p|| >= ||p|| - ||v||)"
                                            : "y^(0) = v + p: follows bounded-embeddings, "
                                              "which is undecided";
            break;
        case model::input_kind::concat:
            h.reason = certainly(emb.holds)  ? "y^(0) = (v, p), a concatenation of bounded embeddings"
                       : certainly(!emb.holds) ? "y^(0) = (v, p) with unbounded positional "
                                              "embeddings (||(v, p)|| >= ||p||)"
                                            : "y^(0) = (v, p): follows bounded-embeddings, "
                                              "which is undecided";
            break;
        case model::input_kind::map: {
            const std::string kind = map_kind_name(*m.input_fn);
            if (certainly(emb.holds)) {
                h.reason = "f_in is a map (" + kind +
                           ") of bounded embeddings, and every map kind sends bounded sets to "
                           "bounded sets (linear maps, relu, tanh, gelu, erf, step, floor, mul, "
                           "slices and layer norm are bounded on bounded sets; tables and hashes "
                           "have bounded outputs)";
            } else {
                h.holds = numeric::indeterminate;
                h.reason = "f_in is a map (" + kind +
                           ") of positional embeddings that are not known to be bounded: "
                           "cannot decide";
            }
            break;
        }
        }
        out.push_back(std::move(h));
    }

    // 5. Updates.
    {
        hypothesis_result h{hypothesis_names[4], true, ""};
        std::vector<std::string> bad, unknown, constants, notes;
        for (std::size_t k = 0; k < m.layers.size(); ++k) {
            map_lipschitz r = lipschitz_analysis(m.layers[k].update, update_blocks(m, k), ctx);
            const std::string prefix = "layer " + std::to_string(k + 1) + " update: ";
            if (certainly(!r.lipschitz)) {
                bad.push_back(prefix + r.reason);
            } else if (!is_certain(r.lipschitz)) {
                unknown.push_back(prefix + r.reason);
            } else {
                arb_ball lmax = zero_point(ctx.precision_bits);
                for (const auto& b : r.block_bounds) lmax = max_upper(lmax, b);
                constants.push_back("L_" + std::to_string(k + 1) + " <= " + decimal(lmax));
                if (!r.reason.empty()) notes.push_back(prefix + r.reason);
            }
        }
        auto join = [](const std::vector<std::string>& v) {
            std::string s;
            for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
            return s;
        };
        if (!bad.empty()) {
            h.holds = false;
            h.reason = join(bad);
        } else if (!unknown.empty()) {
            h.holds = numeric::indeterminate;
            h.reason = join(unknown);
        } else if (m.layers.empty()) {
            h.reason = "no layers";
        } else {
            h.reason = "every update is globally Lipschitz: " + join(constants);
            if (!notes.empty()) h.reason += " (" + join(notes) + ")";
        }
        out.push_back(std::move(h));
    }
    return out;
}

} // namespace attnprop::analysis
