#include "soft_influence/bounds.hpp"

#include "soft_influence/formula_range.hpp"
#include "soft_influence/norms.hpp"
#include "numeric/dinterval_raw.hpp"
#include "numeric/elementary.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <variant>

namespace attnprop::analysis {

namespace {

using numeric::arb_ball;
using numeric::rational;
using rmodel = model::model<rational>;

arb_ball ball(const rational& q, const numeric::context& ctx) {
    return arb_ball::from_rational(q, ctx);
}
arb_ball ball(long v, const numeric::context& ctx) { return numeric::from_int<arb_ball>(v, ctx); }

/// Upper bound of a sum / product of non-negative upper bounds.
arb_ball up(const arb_ball& x) { return upper(x); }

/// Constants of one head.
struct head_constants {
    arb_ball mu, nu, cv; // ||scale Q̂^T K̂||, ||V||, ||value bias|| (upper points; +inf unknown)
    bool score_bias = false;
};

/// Constants of one layer.
struct layer_constants {
    std::vector<head_constants> heads;
    arb_ball c;               // ||F_k(0, 0)||
    arb_ball ly;              // Lipschitz constant of F_k in y
    std::vector<arb_ball> lh; // ... in b_h
    bool ok = false;          // every constant finite and the hypotheses of the layer hold
};

/// scale = factor / sqrt(inv_sqrt) of a dot-product head, as a ball.
arb_ball score_scale(const model::score_spec<rational>& s, const numeric::context& ctx) {
    arb_ball f = ball(s.scale_factor, ctx);
    if (s.scale_inv_sqrt != 1) f = f / numeric::sqrt(ball(s.scale_inv_sqrt, ctx));
    return f;
}

/// A head's inverse temperature β(n) beside its fixed scale (ln n for a length-scaled head, 1
/// when absent): at a fixed n one more constant factor on the scaled queries; hc.mu is
/// multiplied by |β(n)| when β depends on n (compute_head has already taken a constant one).
arb_ball score_factor_at(const model::head<rational>& hd, head_constants& hc, std::size_t n,
                         const numeric::context& ctx) {
    const auto beta_n = model::beta_at<arb_ball>(hd.score, static_cast<long>(n), ctx);
    if (!beta_n) return ball(1, ctx);
    if (!hd.score.beta->is_constant()) hc.mu = up(hc.mu * numeric::abs(*beta_n));
    return *beta_n;
}

/// [W | b] (b absent = 0 column) when with_bias, else W.
model::matrix<rational> homogeneous(const model::affine_map<rational>& a, bool with_bias) {
    if (!with_bias) return a.W;
    std::vector<rational> data;
    data.reserve(a.W.rows * (a.W.cols + 1));
    for (std::size_t r = 0; r < a.W.rows; ++r) {
        for (std::size_t c = 0; c < a.W.cols; ++c) data.push_back(a.W.at(r, c));
        data.push_back(a.b.empty() ? rational(0) : a.b[r]);
    }
    return model::make_matrix(a.W.rows, a.W.cols + 1, std::move(data));
}

/// Q̂^T K̂, exactly.
model::matrix<rational> gram(const model::matrix<rational>& q, const model::matrix<rational>& k) {
    const std::size_t d = q.cols;
    std::vector<rational> data(d * d, rational(0));
    for (std::size_t r = 0; r < q.rows; ++r)
        for (std::size_t a : q.nonzero[r])
            for (std::size_t b : k.nonzero[r]) data[a * d + b] += q.at(r, a) * k.at(r, b);
    return model::make_matrix(d, d, std::move(data));
}

head_constants compute_head(const model::head<rational>& h, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    head_constants hc{pos_inf(prec), pos_inf(prec), pos_inf(prec), false};
    if (h.score.type == model::score_spec<rational>::kind::dot) {
        hc.score_bias = !h.score.Q.b_is_zero || !h.score.K.b_is_zero;
        if (h.score.Q.W.is_zero() && h.score.Q.b_is_zero) {
            hc.mu = zero_point(prec);
        } else {
            auto g = gram(homogeneous(h.score.Q, hc.score_bias), homogeneous(h.score.K, hc.score_bias));
            hc.mu = up(numeric::abs(score_scale(h.score, ctx)) * spectral_norm_upper(g, ctx));
            // A constant inverse temperature is one more fixed factor of the scores; one that
            // depends on n is applied where n is known (posterior_bound).
            if (h.score.beta && h.score.beta->is_constant())
                hc.mu = up(hc.mu * numeric::abs(h.score.beta->eval<arb_ball>(1, 1, ctx)));
        }
    }
    if (const auto* v = value_affine(h)) {
        hc.nu = spectral_norm_upper(v->W, ctx);
        hc.cv = v->b.empty() ? zero_point(prec) : norm2_upper(model::convert<arb_ball>(v->b, ctx), prec);
    }
    return hc;
}

layer_constants compute_layer(const rmodel& m, std::size_t k, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    layer_constants lc;
    bool heads_ok = true;
    for (const auto& h : m.layers[k].heads) {
        lc.heads.push_back(compute_head(h, ctx));
        heads_ok = heads_ok && finite(lc.heads.back().mu) && finite(lc.heads.back().nu);
    }
    map_lipschitz lip = lipschitz_analysis(m.layers[k].update, update_blocks(m, k), ctx);
    if (certainly(lip.lipschitz)) {
        lc.ly = lip.block_bounds.front();
        lc.lh.assign(lip.block_bounds.begin() + 1, lip.block_bounds.end());
        lc.c = value_at_zero_norm(m.layers[k].update, ctx);
        lc.ok = heads_ok && finite(lc.c);
    } else {
        lc.ly = pos_inf(prec);
        lc.lh.assign(m.layers[k].heads.size(), pos_inf(prec));
        lc.c = pos_inf(prec);
    }
    return lc;
}

/// The per-coordinate box of positional embeddings and a bound on ||p||.
struct positional_box {
    std::vector<arb_ball> lo, hi; // points, possibly infinite
    arb_ball norm;                // >= ||p_i|| for all i, n
    bool finite_box = true;
    std::vector<std::string> notes;
};

positional_box positional_bounds(const rmodel& m, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const auto& pos = *m.positional;
    positional_box box;
    switch (pos.type) {
    case model::positional_spec::kind::table: {
        box.norm = zero_point(prec);
        for (std::size_t c = 0; c < pos.dim; ++c) {
            arb_ball lo = ball(pos.table.front()[c], ctx), hi = lo;
            for (const auto& row : pos.table) {
                arb_ball v = ball(row[c], ctx);
                hi = max_upper(hi, v);
                lo = -max_upper(-lo, -v);
            }
            box.lo.push_back(lower(lo));
            box.hi.push_back(upper(hi));
        }
        for (const auto& row : pos.table)
            box.norm = max_upper(box.norm, norm2_upper(model::convert<arb_ball>(row, ctx), prec));
        break;
    }
    case model::positional_spec::kind::sinusoidal:
        for (std::size_t c = 0; c < pos.dim; ++c) {
            box.lo.push_back(ball(-1, ctx));
            box.hi.push_back(ball(1, ctx));
        }
        box.norm = up(numeric::sqrt(ball(static_cast<long>((pos.dim + 1) / 2), ctx)));
        break;
    case model::positional_spec::kind::formula: {
        std::vector<arb_ball> mags;
        for (std::size_t c = 0; c < pos.formulas.size(); ++c) {
            if (!pos.formulas[c]) {
                box.lo.push_back(zero_point(prec));
                box.hi.push_back(zero_point(prec));
                continue;
            }
            auto r = formula_range(*pos.formulas[c], ctx);
            if (!r) {
                box.finite_box = false;
                arb_ball inf = pos_inf(prec);
                box.lo.push_back(-inf);
                box.hi.push_back(inf);
                mags.push_back(inf);
                box.notes.push_back("no finite numeric range found for positional coordinate " +
                                    std::to_string(c) + ": '" + pos.formulas[c]->text() + "'");
                continue;
            }
            box.lo.push_back(r->lo);
            box.hi.push_back(r->hi);
            mags.push_back(max_upper(numeric::abs(r->lo), numeric::abs(r->hi)));
        }
        box.norm = box.finite_box ? norm2_upper(mags, prec) : pos_inf(prec);
        break;
    }
    }
    return box;
}

/// A ball containing [lo, hi] (points).
arb_ball interval_ball(const arb_ball& lo, const arb_ball& hi, long prec) {
    arb_ball r(prec);
    if (!finite(lo) || !finite(hi)) {
        arb_zero_pm_inf(r.raw());
        return r;
    }
    arb_set_interval_arf(r.raw(), arb_midref(lo.raw()), arb_midref(hi.raw()), prec);
    return r;
}

/// max over rows of ||f(v, row)|| or the box evaluation, for an input map.
arb_ball map_initial_norm(const model::map<arb_ball>& fb, const std::vector<arb_ball>& v,
                          const rmodel& m, const positional_box& box,
                          const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const auto& pos = *m.positional;
    try {
        if (pos.type == model::positional_spec::kind::table && pos.table.size() <= 4096) {
            arb_ball best = zero_point(prec);
            for (const auto& row : pos.table) {
                std::vector<arb_ball> x = v;
                for (const auto& q : row) x.push_back(ball(q, ctx));
                best = max_upper(best, norm2_upper(model::evaluate(fb, x, ctx), prec));
            }
            return best;
        }
        if (!box.finite_box) return pos_inf(prec);
        std::vector<arb_ball> x = v;
        for (std::size_t c = 0; c < box.lo.size(); ++c)
            x.push_back(interval_ball(box.lo[c], box.hi[c], prec));
        return norm2_upper(model::evaluate(fb, x, ctx), prec);
    } catch (const numeric::numeric_error&) {
        return pos_inf(prec);
    }
}

/// Everything the recursion needs at one n.
struct recursion_result {
    std::vector<layer_bound> rows;
    arb_ball K; // K(n) = Σ_k term_k
};

recursion_result run_recursion(const std::vector<layer_constants>& lcs, const arb_ball& F0,
                               const arb_ball& Delta0, long n, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const arb_ball one = ball(1, ctx), two = ball(2, ctx), four = ball(4, ctx);
    const arb_ball nn = ball(n, ctx);
    recursion_result res;
    arb_ball F = F0, Delta = Delta0, delta = zero_point(prec);
    std::vector<arb_ball> Deltas{Delta0};
    for (const auto& lc : lcs) {
        layer_bound row;
        row.mu = zero_point(prec);
        row.nu = zero_point(prec);
        row.A = zero_point(prec);
        row.L = lc.ly;
        for (const auto& l : lc.lh) row.L = max_upper(row.L, l);
        row.c = lc.c;
        arb_ball alpha = lc.ly, beta = zero_point(prec), sumP = zero_point(prec);
        for (std::size_t h = 0; h < lc.heads.size(); ++h) {
            const head_constants& hc = lc.heads[h];
            const arb_ball& l = lc.lh[h];
            row.mu = max_upper(row.mu, hc.mu);
            row.nu = max_upper(row.nu, hc.nu);
            arb_ball G = hc.score_bias ? up(numeric::sqrt(F * F + one)) : F;
            arb_ball P = up(hc.nu * F + hc.cv);
            arb_ball A = up(hc.mu * G * G);
            arb_ball E = up(numeric::exp(two * A));
            arb_ball a = up(hc.mu * G * P);
            row.A = max_upper(row.A, A);
            if (!arb_is_zero(l.raw())) {
                alpha = up(alpha + l * (hc.nu + four * a + two * a * E / nn));
                beta = up(beta + l * (hc.nu + two * a) * E);
                sumP = up(sumP + l * P);
            }
        }
        row.E = up(numeric::exp(two * row.A));
        row.alpha = alpha;
        row.beta = beta;
        row.F = up(lc.c + lc.ly * F + sumP);
        row.Delta = min_upper(two * row.F, lc.ly * Delta + two * sumP);
        row.delta = up(alpha * delta + beta / nn * Delta);
        F = row.F;
        delta = row.delta;
        Delta = row.Delta;
        Deltas.push_back(Delta);
        res.rows.push_back(std::move(row));
    }
    // Terms of (B): β_k Δ_{k-1} Π_{l>k} α_l.
    res.K = zero_point(prec);
    for (std::size_t k = 0; k < res.rows.size(); ++k) {
        arb_ball t = up(res.rows[k].beta * Deltas[k]);
        for (std::size_t l = k + 1; l < res.rows.size(); ++l) t = up(t * res.rows[l].alpha);
        if (arb_is_zero(res.rows[k].beta.raw()) || arb_is_zero(Deltas[k].raw())) t = zero_point(prec);
        res.rows[k].term = t;
        res.K = up(res.K + t);
    }
    return res;
}

} // namespace

bool bound_report::hypotheses_hold() const {
    for (const auto& h : hypotheses)
        if (!certainly(h.holds)) return false;
    return true;
}

const hypothesis_result* bound_report::first_failure() const {
    for (const auto& h : hypotheses)
        if (certainly(!h.holds)) return &h;
    for (const auto& h : hypotheses)
        if (!is_certain(h.holds)) return &h;
    return nullptr;
}

initial_bound initial_state_bound(const rmodel& m, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    initial_bound ib{zero_point(prec), zero_point(prec), {}};
    positional_box box = positional_bounds(m, ctx);
    ib.notes = box.notes;
    const auto& pos = *m.positional;
    const bool table = pos.type == model::positional_spec::kind::table;

    std::optional<model::map<arb_ball>> fb;
    std::optional<map_lipschitz> lip;
    arb_ball f0 = zero_point(prec);
    if (m.input == model::input_kind::map) {
        fb = model::convert<arb_ball>(*m.input_fn, ctx);
        const std::size_t dt = m.token_dim();
        lip = lipschitz_analysis(*m.input_fn, {{0, dt}, {dt, pos.dim}}, ctx);
        f0 = value_at_zero_norm(*m.input_fn, ctx);
    }

    for (const auto& tok : m.token) {
        std::vector<arb_ball> v = model::convert<arb_ball>(tok, ctx);
        arb_ball vn = norm2_upper(v, prec);
        arb_ball best = pos_inf(prec);
        switch (m.input) {
        case model::input_kind::add:
            if (table) {
                best = zero_point(prec);
                for (const auto& row : pos.table) {
                    std::vector<arb_ball> s;
                    for (std::size_t c = 0; c < v.size(); ++c) s.push_back(v[c] + ball(row[c], ctx));
                    best = max_upper(best, norm2_upper(s, prec));
                }
            } else {
                best = up(vn + box.norm);
                if (box.finite_box) {
                    std::vector<arb_ball> corner;
                    for (std::size_t c = 0; c < v.size(); ++c)
                        corner.push_back(max_upper(numeric::abs(v[c] + box.lo[c]),
                                                   numeric::abs(v[c] + box.hi[c])));
                    best = min_upper(best, norm2_upper(corner, prec));
                }
            }
            break;
        case model::input_kind::concat:
            best = up(numeric::sqrt(vn * vn + box.norm * box.norm));
            break;
        case model::input_kind::map:
            best = map_initial_norm(*fb, v, m, box, ctx);
            if (certainly(lip->lipschitz))
                best = min_upper(best, f0 + lip->block_bounds[0] * vn + lip->block_bounds[1] * box.norm);
            break;
        }
        ib.F0 = max_upper(ib.F0, best);
    }

    // Largest change of y_i^(0) when x_i changes within Σ (eos never changes).
    arb_ball vdiff = zero_point(prec);
    const std::size_t sigma = m.sigma.symbols.size();
    for (std::size_t a = 0; a < sigma; ++a)
        for (std::size_t b = a + 1; b < sigma; ++b)
            vdiff = max_upper(vdiff, distance_upper(model::convert<arb_ball>(m.token[a], ctx),
                                                    model::convert<arb_ball>(m.token[b], ctx), prec));
    if (m.input == model::input_kind::map) {
        ib.Delta0 = up(ball(2, ctx) * ib.F0);
        if (certainly(lip->lipschitz)) ib.Delta0 = min_upper(ib.Delta0, lip->block_bounds[0] * vdiff);
        if (sigma < 2) ib.Delta0 = zero_point(prec);
    } else {
        ib.Delta0 = vdiff;
    }
    if (!finite(ib.F0)) ib.notes.push_back("no finite bound on the initial states (F_0)");
    return ib;
}

bound_report a_priori_bound(const rmodel& m, long n, const numeric::context& ctx) {
    if (n < 1) throw precondition_error("a_priori_bound: n must be at least 1");
    const long prec = ctx.precision_bits;
    bound_report rep;
    rep.model_name = m.name;
    rep.attention = m.attention;
    rep.n = n;
    rep.precision = prec;
    rep.hypotheses = check_hypotheses(m);
    initial_bound ib = initial_state_bound(m, ctx);
    rep.F0 = ib.F0;
    rep.Delta0 = ib.Delta0;
    rep.notes = ib.notes;

    std::vector<layer_constants> lcs;
    bool constants_ok = true;
    for (std::size_t k = 0; k < m.layers.size(); ++k) {
        lcs.push_back(compute_layer(m, k, ctx));
        constants_ok = constants_ok && lcs.back().ok;
    }
    recursion_result at_n = run_recursion(lcs, rep.F0, rep.Delta0, n, ctx);
    rep.layers = at_n.rows;
    if (m.out.type == model::readout<rational>::kind::softmax)
        rep.probability_factor = logit_oscillation_factor(m.out, ctx);

    if (!model::info(m.attention).soft_influence)
        rep.notes.push_back(std::string("the model uses ") + model::to_string(m.attention) +
                            " attention: the bound concerns its softmax reading with the same "
                            "parameters");
    if (!rep.hypotheses_hold()) {
        const hypothesis_result* f = rep.first_failure();
        rep.notes.push_back("no K: hypothesis " + f->name +
                            (certainly(!f->holds) ? " fails" : " is undecided"));
        return rep;
    }
    if (!constants_ok || !finite(rep.F0)) {
        rep.notes.push_back("no K: some constant has no finite bound");
        return rep;
    }
    recursion_result at_1 = n == 1 ? at_n : run_recursion(lcs, rep.F0, rep.Delta0, 1, ctx);
    if (!finite(at_1.K) || !finite(at_n.K)) {
        rep.notes.push_back("no K: the bound exceeds the representable range");
        return rep;
    }
    rep.K = at_1.K;
    rep.K_at_n = min_upper(at_n.K, at_1.K);
    rep.bound_at_n = up(*rep.K_at_n / ball(n, ctx));
    return rep;
}

arb_ball logit_oscillation_factor(const model::readout<rational>& r, const numeric::context& ctx) {
    if (r.type != model::readout<rational>::kind::softmax)
        throw precondition_error("logit_oscillation_factor: not a softmax readout");
    const long prec = ctx.precision_bits;
    const auto& w = r.logits.W;
    arb_ball best = zero_point(prec);
    if (w.rows <= exact_oscillation_rows) {
        for (std::size_t a = 0; a < w.rows; ++a)
            for (std::size_t b = a + 1; b < w.rows; ++b) {
                std::vector<arb_ball> d;
                for (std::size_t c = 0; c < w.cols; ++c) d.push_back(ball(w.at(a, c) - w.at(b, c), ctx));
                best = max_upper(best, norm2_upper(d, prec));
            }
        return best;
    }
    // Many symbols: the pairs would take quadratic time. ||W_a - W_b|| <= ||W_a - m|| +
    // ||W_b - m|| <= 2 max_r ||W_r - m|| for any point m; m is the centre of the rows' bounding
    // box (exact), which makes the bound at most twice the largest pairwise distance.
    std::vector<rational> centre(w.cols);
    for (std::size_t c = 0; c < w.cols; ++c) {
        rational lo = w.at(0, c), hi = w.at(0, c);
        for (std::size_t a = 1; a < w.rows; ++a) {
            if (w.at(a, c) < lo) lo = w.at(a, c);
            if (w.at(a, c) > hi) hi = w.at(a, c);
        }
        centre[c] = (lo + hi) / 2;
    }
    for (std::size_t a = 0; a < w.rows; ++a) {
        std::vector<arb_ball> d;
        for (std::size_t c = 0; c < w.cols; ++c) d.push_back(ball(w.at(a, c) - centre[c], ctx));
        best = max_upper(best, norm2_upper(d, prec));
    }
    return up(best * ball(2, ctx));
}

arb_ball posterior_bound(const rmodel& m, const attention::soft_trace<arb_ball>& tx,
                         const attention::soft_trace<arb_ball>& tx2, std::size_t i,
                         const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const std::size_t L = m.layers.size();
    if (tx.y.size() != L + 1 || tx2.y.size() != L + 1)
        throw precondition_error("posterior_bound: the traces do not match the model's layers");
    const std::size_t n = tx.y[0].size();
    if (tx2.y[0].size() != n || i >= n)
        throw precondition_error("posterior_bound: lengths or changed position do not match");

    std::vector<layer_constants> lcs;
    for (std::size_t k = 0; k < L; ++k) {
        lcs.push_back(compute_layer(m, k, ctx));
        if (!lcs.back().ok) return pos_inf(prec);
    }
    const arb_ball one = ball(1, ctx), two = ball(2, ctx);
    auto max_norm = [&](std::size_t k) {
        arb_ball f = zero_point(prec);
        for (std::size_t j = 0; j < n; ++j) {
            f = max_upper(f, norm2_upper(tx.y[k][j], prec));
            f = max_upper(f, norm2_upper(tx2.y[k][j], prec));
        }
        return f;
    };

    arb_ball Delta = distance_upper(tx.y[0][i], tx2.y[0][i], prec);
    arb_ball delta = zero_point(prec);
    arb_ball Fprev = max_norm(0);
    for (std::size_t k = 0; k < L; ++k) {
        const auto& lc = lcs[k];
        const auto& ys = tx.y[k];
        const auto& ys2 = tx2.y[k];
        const bool top = k + 1 == L;
        const arb_ball Fk = max_norm(k + 1);
        arb_ball sum_db = zero_point(prec), sumP = zero_point(prec);
        for (std::size_t h = 0; h < m.layers[k].heads.size(); ++h) {
            const auto& hd = m.layers[k].heads[h];
            head_constants hc = lc.heads[h];
            const arb_ball factor_n = score_factor_at(hd, hc, n, ctx);
            const arb_ball& l = lc.lh[h];
            // Actual value norms.
            auto V = model::convert<arb_ball>(*value_affine(hd), ctx);
            arb_ball P = zero_point(prec);
            for (std::size_t j = 0; j < n; ++j) {
                P = max_upper(P, norm2_upper(model::apply_affine(V, ys[j], ctx), prec));
                P = max_upper(P, norm2_upper(model::apply_affine(V, ys2[j], ctx), prec));
            }
            // ω: the largest weight the changed key can get along the segment.
            arb_ball omega = zero_point(prec);
            if (arb_is_zero(hc.mu.raw())) {
                omega = up(one / ball(static_cast<long>(n), ctx)); // scores constant: uniform
            } else {
                auto Q = model::convert<arb_ball>(hd.score.Q, ctx);
                auto Kp = model::convert<arb_ball>(hd.score.K, ctx);
                const arb_ball scale = score_scale(hd.score, ctx) * factor_n;
                std::vector<std::vector<arb_ball>> q1, q2, k1, k2;
                for (std::size_t j = 0; j < n; ++j) {
                    auto qa = model::apply_affine(Q, ys[j], ctx);
                    auto qb = model::apply_affine(Q, ys2[j], ctx);
                    for (auto& x : qa) x = x * scale;
                    for (auto& x : qb) x = x * scale;
                    q1.push_back(std::move(qa));
                    q2.push_back(std::move(qb));
                    k1.push_back(model::apply_affine(Kp, ys[j], ctx));
                    k2.push_back(model::apply_affine(Kp, ys2[j], ctx));
                }
                const std::size_t dk = Q.W.rows;
                for (std::size_t mq = top ? n - 1 : 0; mq < n; ++mq) {
                    if (mq == i) continue;
                    arb_ball den(prec), t(prec);
                    arb_ball num_s(prec);
                    for (std::size_t j = 0; j < n; ++j) {
                        arb_ball s1 = model::dot(q1[mq].data(), k1[j].data(), dk, ctx);
                        arb_ball s2 = model::dot(q2[mq].data(), k2[j].data(), dk, ctx);
                        arb_min(t.raw(), s1.raw(), s2.raw(), prec);
                        den += numeric::exp(t);
                        if (j == i) arb_max(num_s.raw(), s1.raw(), s2.raw(), prec);
                    }
                    omega = max_upper(omega, numeric::exp(num_s) / den);
                }
                omega = min_upper(omega, one);
            }
            arb_ball G = hc.score_bias ? up(numeric::sqrt(Fprev * Fprev + one)) : Fprev;
            arb_ball muG = up(hc.mu * G);
            arb_ball dw = min_upper(two, two * (two * muG * delta + omega * muG * (delta + Delta)));
            arb_ball db = up(hc.nu * (delta + omega * Delta) + P * dw);
            if (!arb_is_zero(l.raw())) {
                sum_db = up(sum_db + l * db);
                sumP = up(sumP + l * P);
            }
        }
        arb_ball new_delta = min_upper(two * Fk, lc.ly * delta + sum_db);
        arb_ball new_Delta = min_upper(two * Fk, lc.ly * Delta + two * sumP);
        delta = new_delta;
        Delta = new_Delta;
        Fprev = Fk;
    }
    if (i + 1 == n) return Delta;
    return L == 0 ? zero_point(prec) : delta;
}

namespace {

using numeric::dinterval;

/// The helpers of posterior_cache<S>: the per-pair loops run in S, the recursion over layers
/// in balls (a constant number of operations per pair). Generic over the enclosure kinds
/// through their balls (numeric::to_ball, from_ball_as); overloads are faster forms.
template <class S> arb_ball upper_of(const S& x) { return upper(numeric::to_ball(x)); }

using numeric::from_ball_as;

/// Enclosures of min(a, b) and max(a, b).
arb_ball enclosure_min(const arb_ball& a, const arb_ball& b, long prec) {
    arb_ball r(prec);
    arb_min(r.raw(), a.raw(), b.raw(), prec);
    return r;
}
arb_ball enclosure_max(const arb_ball& a, const arb_ball& b, long prec) {
    arb_ball r(prec);
    arb_max(r.raw(), a.raw(), b.raw(), prec);
    return r;
}
dinterval enclosure_min(const dinterval& a, const dinterval& b, long) {
    return {std::min(a.lo(), b.lo()), std::min(a.hi(), b.hi())};
}
dinterval enclosure_max(const dinterval& a, const dinterval& b, long) {
    return {std::max(a.lo(), b.lo()), std::max(a.hi(), b.hi())};
}
template <class S> S enclosure_min(const S& a, const S& b, long prec) {
    const arb_ball ab = numeric::to_ball(a), bb = numeric::to_ball(b);
    return from_ball_as<S>(enclosure_min(ab, bb, prec));
}
template <class S> S enclosure_max(const S& a, const S& b, long prec) {
    const arb_ball ab = numeric::to_ball(a), bb = numeric::to_ball(b);
    return from_ball_as<S>(enclosure_max(ab, bb, prec));
}

/// Upper point of ||v||_2 (of ||a - b||_2).
template <class S> arb_ball norm_up(const model::vec<S>& v, long) {
    S acc{};
    for (const auto& x : v) numeric::fma_acc(acc, x, x);
    return upper_of(numeric::sqrt_nonneg(acc));
}
arb_ball norm_up(const model::vec<arb_ball>& v, long prec) { return norm2_upper(v, prec); }
/// max_j norm_up(rows[j]): one ball per row.
template <class S> arb_ball max_norm_up(const std::vector<model::vec<S>>& rows, long prec) {
    arb_ball out = zero_point(prec);
    for (const auto& y : rows) out = max_upper(out, norm_up(y, prec));
    return out;
}
/// max_j ||V rows[j]|| (upper point).
template <class S>
arb_ball max_value_norm_up(const model::affine_map<S>& V, const std::vector<model::vec<S>>& rows,
                           const numeric::context& ctx) {
    arb_ball out = zero_point(ctx.precision_bits);
    for (const auto& y : rows)
        out = max_upper(out, norm_up(model::apply_affine(V, y, ctx), ctx.precision_bits));
    return out;
}
/// Certified double intervals: the largest upper bound of the norms, compared in doubles
/// (exact), and one ball at the end; +inf when one is not finite.
/// An upper bound of ||v||_2: with a_c = max(|lo_c|, |hi_c|), S = sum a_c^2 is summed in
/// rounding to nearest (every term passes through at most d + 1 roundings, so the computed sum
/// is at least S (1 - u)^(d + 1)); multiplying by 1 + 2^-40 and rounding (one more rounding)
/// restores S for d <= 4094, 2^-1000 covers underflowed squares (at most d 2^-1074; only a
/// nonzero a_c below 2^-500 can underflow), and the square root rounded to nearest is within
/// half an ulp, so one ulp up bounds sqrt(S). Exactly 0 when every a_c is 0.
/// The same bound for the vector of |a[c]| (len <= 4094).
double norm_up_abs(const double* a, std::size_t len) {
    double s = 0;
    bool small = false; // a square may have underflowed
    for (std::size_t c = 0; c < len; ++c) {
        const double x = std::fabs(a[c]);
        small = small || (x > 0 && x < 0x1p-500);
        s += x * x;
    }
    if (!(s <= std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
    if (s == 0 && !small) return 0.0; // every coordinate is 0
    return numeric::interval_detail::next_up(
        std::sqrt(s * (1.0 + 0x1p-40) + (small ? 0x1p-1000 : 0.0)));
}
double norm_hi(const model::vec<dinterval>& v) {
    if (v.size() > 4094) {
        dinterval acc{};
        for (const auto& x : v) numeric::fma_acc(acc, x, x);
        return numeric::sqrt_nonneg(acc).hi();
    }
    double a[4094];
    for (std::size_t c = 0; c < v.size(); ++c) a[c] = std::max(std::fabs(v[c].lo()), std::fabs(v[c].hi()));
    return norm_up_abs(a, v.size());
}

using numeric::mid_rad;
/// The score terms of the certified soft-attention row for a key k = m +- r (midpoints into
/// `mid`): tm = (g_dk |m|_1 + |r|_1) (1 + g_(dk + 4)) and tr = (|m|_1 + |r|_1) (1 + g_(dk + 4)),
/// the factor covering the rounding of the sums (soft_rows_interval.cpp).
bool key_terms(const model::vec<dinterval>& k, double* mid, double& tm, double& tr) {
    const std::size_t dk = k.size();
    const double gk = static_cast<double>(dk + 1) * 0x1p-52;
    const double norm_slack = 1.0 + static_cast<double>(dk + 5) * 0x1p-52;
    double m1 = 0, r1 = 0;
    for (std::size_t t = 0; t < dk; ++t) {
        double r = 0;
        if (!mid_rad(k[t], mid[t], r)) return false;
        m1 += std::fabs(mid[t]);
        r1 += r;
    }
    tm = (gk * m1 + r1) * norm_slack;
    tr = (m1 + r1) * norm_slack;
    return tm <= std::numeric_limits<double>::max() && tr <= std::numeric_limits<double>::max();
}
arb_ball upper_of_max(double mx, long prec) {
    if (!(mx <= std::numeric_limits<double>::max())) return pos_inf(prec);
    return upper_of(dinterval(mx));
}
arb_ball max_norm_up(const std::vector<model::vec<dinterval>>& rows, long prec) {
    double mx = 0;
    for (const auto& y : rows) {
        const double v = norm_hi(y);
        if (!(v <= mx)) mx = v; // NaN (never expected) propagates
    }
    return upper_of_max(mx, prec);
}
/// For V = V_m + E, b = b_m + e_b, y = y_m + e (|E| <= V_r, |e_b| <= b_r, |e| <= y_r
/// entrywise), V y + b = (V_m y_m + b_m) + V_m e + E y + e_b, and z = fl(V_m y_m + b_m) is within
/// g_(C+1) (|b_m| + |V_m| |y_m|) of V_m y_m + b_m (C = columns, g_w = (w + 1) 2^-52), so
///   ||V y + b|| <= ||z|| + ||V_m||_F (||y_r|| + g ||y_m||) + ||V_r||_F (||y_m|| + ||y_r||)
///                  + ||b_r|| + g ||b_m||,
/// every norm the rounded-up bound of norm_up_abs; the sum (at most 12 roundings of
/// nonnegative terms) times 1 + 2^-40, plus 2^-1000 for underflowed products in z. O(R C)
/// double operations per row instead of R interval dot products.
arb_ball max_value_norm_up(const model::affine_map<dinterval>& V,
                           const std::vector<model::vec<dinterval>>& rows,
                           const numeric::context& ctx) {
    const std::size_t R = V.W.rows, C = V.W.cols;
    const long prec = ctx.precision_bits;
    if (R == 0 || R > 4094 || C > 4094 || R * C > (std::size_t{1} << 24)) {
        model::vec<dinterval> t;
        double mx = 0;
        for (const auto& y : rows) {
            model::apply_affine(V, y.data(), t, ctx);
            const double v = norm_hi(t);
            if (!(v <= mx)) mx = v;
        }
        return upper_of_max(mx, prec);
    }
    std::vector<double> Wm(R * C), Wr(R * C), bm(R, 0.0), br(R, 0.0);
    for (std::size_t k = 0; k < R * C; ++k)
        if (!mid_rad(V.W.data[k], Wm[k], Wr[k])) return pos_inf(prec);
    for (std::size_t r = 0; r < V.b.size() && r < R; ++r)
        if (!mid_rad(V.b[r], bm[r], br[r])) return pos_inf(prec);
    const double fm = norm_up_abs(Wm.data(), R * C), fr = norm_up_abs(Wr.data(), R * C);
    const double nbm = norm_up_abs(bm.data(), R), nbr = norm_up_abs(br.data(), R);
    const double g = static_cast<double>(C + 2) * 0x1p-52;
    std::vector<double> ym(C), yr(C), z(R);
    double mx = 0;
    for (const auto& y : rows) {
        if (y.size() != C) return pos_inf(prec);
        for (std::size_t t = 0; t < C; ++t)
            if (!mid_rad(y[t], ym[t], yr[t])) return pos_inf(prec);
        for (std::size_t r = 0; r < R; ++r) {
            const double* w = &Wm[r * C];
            double acc = bm[r];
            for (std::size_t t = 0; t < C; ++t) acc += w[t] * ym[t];
            z[r] = acc;
        }
        const double nz = norm_up_abs(z.data(), R), ny = norm_up_abs(ym.data(), C),
                     nr = norm_up_abs(yr.data(), C);
        const double v =
            (nz + fm * (nr + g * ny) + fr * (ny + nr) + nbr + g * nbm) * (1.0 + 0x1p-40) + 0x1p-1000;
        if (!(v <= mx)) mx = v;
    }
    return upper_of_max(mx, prec);
}

/// The value map of posterior_cache<dinterval>'s head as midpoints and radii with their norms
/// (max_value_norm_up's terms, kept once); false when that bound does not apply (sizes, or a
/// value that is not finite).
template <class HS> bool value_mid_init(HS& st) {
    const auto& V = st.V;
    const std::size_t R = V.W.rows, C = V.W.cols;
    st.vmid = false;
    if (R == 0 || R > 4094 || C > 4094 || R * C > (std::size_t{1} << 24)) return false;
    st.vWm.assign(R * C, 0.0);
    st.vWr.assign(R * C, 0.0);
    st.vbm.assign(R, 0.0);
    st.vbr.assign(R, 0.0);
    for (std::size_t k = 0; k < R * C; ++k)
        if (!mid_rad(V.W.data[k], st.vWm[k], st.vWr[k])) return false;
    for (std::size_t r = 0; r < V.b.size() && r < R; ++r)
        if (!mid_rad(V.b[r], st.vbm[r], st.vbr[r])) return false;
    st.vfm = norm_up_abs(st.vWm.data(), R * C);
    st.vfr = norm_up_abs(st.vWr.data(), R * C);
    st.vnbm = norm_up_abs(st.vbm.data(), R);
    st.vnbr = norm_up_abs(st.vbr.data(), R);
    st.vmid = true;
    return true;
}
/// max_value_norm_up's bound of ||V y + c|| for one row y within ym +- yr (C entries each),
/// from the kept midpoints (value_mid_init); z is scratch of R entries. +inf when not finite.
template <class HS> double value_norm_row(const HS& st, const double* ym, const double* yr, double* z) {
    const std::size_t R = st.V.W.rows, C = st.V.W.cols;
    const double g = static_cast<double>(C + 2) * 0x1p-52;
    for (std::size_t r = 0; r < R; ++r) {
        const double* w = &st.vWm[r * C];
        double acc = st.vbm[r];
        for (std::size_t t = 0; t < C; ++t) acc += w[t] * ym[t];
        z[r] = acc;
    }
    const double nz = norm_up_abs(z, R), ny = norm_up_abs(ym, C), nr = norm_up_abs(yr, C);
    const double v =
        (nz + st.vfm * (nr + g * ny) + st.vfr * (ny + nr) + st.vnbr + g * st.vnbm) * (1.0 + 0x1p-40) + 0x1p-1000;
    return v <= std::numeric_limits<double>::max() ? v : std::numeric_limits<double>::infinity();
}
/// The same for a row of intervals (split here); +inf when an entry is not finite.
template <class HS>
double value_norm_row(const HS& st, const model::vec<dinterval>& y, std::vector<double>& scratch) {
    const std::size_t R = st.V.W.rows, C = st.V.W.cols;
    if (y.size() != C) return std::numeric_limits<double>::infinity();
    scratch.resize(2 * C + R);
    for (std::size_t t = 0; t < C; ++t)
        if (!mid_rad(y[t], scratch[t], scratch[C + t])) return std::numeric_limits<double>::infinity();
    return value_norm_row(st, scratch.data(), scratch.data() + C, scratch.data() + 2 * C);
}
/// An arb upper bound rounded up to a double (+inf when not finite).
double upper_double(const arb_ball& x) {
    arf_t t;
    arf_init(t);
    arb_get_ubound_arf(t, x.raw(), 64);
    const double d = arf_get_d(t, ARF_RND_UP);
    arf_clear(t);
    return d <= std::numeric_limits<double>::max() ? d : std::numeric_limits<double>::infinity();
}
/// Whether v holds `len` entries.
bool sized(const std::vector<double>* v, std::size_t len) { return v && v->size() == len; }
/// The value norm bound of row j of x' without a moved bound (row p, a row the kernel
/// recomputed): from the kernel's midpoints and radii where given (`mids`), else from the
/// row's intervals. Never NaN.
template <class HS>
double unmoved_value_norm(const HS& st, const std::vector<model::vec<dinterval>>& y1,
                          const change_hints& hints, bool mids, std::size_t j,
                          std::vector<double>& scratch) {
    const std::size_t C = st.V.W.cols, R = st.V.W.rows;
    if (!mids) return value_norm_row(st, y1[j], scratch);
    scratch.resize(2 * C + R);
    return value_norm_row(st, hints.y1_mid->data() + j * C, hints.y1_rad->data() + j * C,
                          scratch.data() + 2 * C);
}

/// Certified double intervals, layer 1 below the top (posterior_cache's constructor): E_m =
/// e^M D_m from the certified soft-attention row's sums (M its shift, D_m its enclosure of
/// sum_l exp(s_ml - M)) instead of n interval exponentials per row, and the midpoints the
/// weights ω read per change (first_layer_omega). False when a midpoint is not finite (the
/// interval operations then).
template <class HS> bool first_layer_mid(HS& st, const numeric::context& ctx) {
    const std::size_t n = st.k.size(), rows = st.q.size(), dk = st.Q.W.rows;
    if (n == 0 || rows == 0 || dk == 0) return false;
    const std::vector<model::vec<dinterval>> no_values(n);
    attention::soft_rows<dinterval> krows(st.k, no_values, ctx);
    attention::soft_rows<dinterval>::row_sums rs;
    st.E.clear();
    st.qm.assign(rows * dk, 0.0);
    st.qa.assign(rows, 0.0);
    st.qr.assign(rows, 0.0);
    st.e_lo.assign(rows, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
        const auto& q = st.q[r];
        if (q.size() != dk || !krows.sums(q, rs)) return false;
        st.E.push_back(dinterval(numeric::exp_enclosure(rs.shift)) * dinterval(rs.den));
        st.e_lo[r] = st.E.back().lo();
        for (std::size_t t = 0; t < dk; ++t) {
            double m = 0, rad = 0;
            if (!mid_rad(q[t], m, rad)) return false;
            st.qm[r * dk + t] = m;
            st.qa[r] = std::max(st.qa[r], std::fabs(m));
            st.qr[r] = std::max(st.qr[r], rad);
        }
    }
    st.km.assign(n * dk, 0.0);
    st.key_mid = st.key_rad = 0;
    for (std::size_t j = 0; j < n; ++j) {
        double tm = 0, tr = 0;
        if (st.k[j].size() != dk || !key_terms(st.k[j], &st.km[j * dk], tm, tr)) return false;
        st.key_mid = std::max(st.key_mid, tm);
        st.key_rad = std::max(st.key_rad, tr);
    }
    st.mid = true;
    return true;
}

/// ω of layer 1 for a change at i with new key kn (detail::layer1_omega_upper); NaN when the
/// midpoints are not kept or kn's are not finite.
template <class HS>
double first_layer_omega(const HS& st, std::size_t i, const model::vec<dinterval>& kn) {
    const std::size_t dk = st.Q.W.rows, rows = st.q.size(), n = st.k.size();
    if (!st.mid || kn.size() != dk || i >= n) return std::numeric_limits<double>::quiet_NaN();
    double knm_stack[64];
    std::vector<double> knm_heap;
    double* knm = knm_stack;
    if (dk > 64) {
        knm_heap.resize(dk);
        knm = knm_heap.data();
    }
    double tm = 0, tr = 0;
    if (!key_terms(kn, knm, tm, tr)) return std::numeric_limits<double>::quiet_NaN();
    // The query rows kept: every row below the top (rows == n), row n at the top (rows == 1).
    const std::size_t first = n - rows;
    const std::size_t skip = i >= first ? i - first : rows;
    return detail::layer1_omega_upper(st.qm.data(), st.qa.data(), st.qr.data(), st.e_lo.data(), rows,
                                      skip, dk, &st.km[i * dk], knm, std::max(st.key_mid, tm),
                                      std::max(st.key_rad, tr));
}

/// ω of the top layer (detail::top_omega_upper) from kq = K^T q' and qb = q' . b_K in intervals.
double top_omega(const model::vec<dinterval>& kq, const dinterval& qb,
                 const std::vector<model::vec<dinterval>>& y1, const std::vector<dinterval>& s_top,
                 std::size_t i, const change_hints& hints) {
    const std::size_t d = kq.size();
    std::vector<double> kqm(d);
    double kqm_inf = 0, kqr_inf = 0, qbm = 0, qbr = 0;
    for (std::size_t c = 0; c < d; ++c) {
        double r = 0;
        if (!mid_rad(kq[c], kqm[c], r)) return std::numeric_limits<double>::quiet_NaN();
        kqm_inf = std::max(kqm_inf, std::fabs(kqm[c]));
        kqr_inf = std::max(kqr_inf, r);
    }
    if (!mid_rad(qb, qbm, qbr)) return std::numeric_limits<double>::quiet_NaN();
    // The fold's midpoints and radii when given (no interval split again).
    const std::size_t n = y1.size();
    if (sized(hints.y1_mid, n * d) && sized(hints.y1_rad, n * d))
        return detail::top_omega_upper(kqm.data(), kqm_inf, kqr_inf, qbm, qbr, hints.y1_mid->data(),
                                       hints.y1_rad->data(), n, d, s_top, i);
    return detail::top_omega_upper(kqm.data(), kqm_inf, kqr_inf, qbm, qbr, y1, s_top, i);
}

template <class S> arb_ball distance_up(const model::vec<S>& a, const model::vec<S>& b, long prec) {
    model::vec<S> d;
    d.reserve(a.size());
    for (std::size_t t = 0; t < a.size(); ++t) d.push_back(a[t] - b[t]);
    return norm_up(d, prec);
}

} // namespace

namespace detail {

namespace {

using numeric::interval_detail::add_down;
using numeric::interval_detail::add_up;
using numeric::interval_detail::next_up;

constexpr double omega_slack = 1.0 + 0x1p-49;
constexpr double fast_min = numeric::elementary_detail::exp_fast_min;
constexpr double fast_max = numeric::elementary_detail::exp_fast_max;
constexpr double omega_tiny = 0x1p-1000;
constexpr double dmax = std::numeric_limits<double>::max();
constexpr double dinf = std::numeric_limits<double>::infinity();

/// g_w = (w + 1) 2^-52 >= gamma_w.
double gamma_w(std::size_t w) { return static_cast<double>(w + 1) * 0x1p-52; }
/// exp rounded up / down (the certified exp of a double).
double exp_up(double x) { return numeric::exp_enclosure(x).hi(); }
double exp_down(double x) { return numeric::exp_enclosure(x).lo(); }
/// a / b rounded up for a >= 0, b > 0 (rounded to nearest, then one ulp up; +inf on overflow).
double div_up(double a, double b) {
    const double q = a / b;
    return q <= dmax ? next_up(q) : dinf;
}

} // namespace

double layer1_omega_upper(const double* qm, const double* qa, const double* qr, const double* e_lo,
                          std::size_t rows, std::size_t skip, std::size_t dk, const double* km,
                          const double* kn, double key_mid, double key_rad, bool drop_radius) {
    double wmax = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        if (r == skip) continue;
        const double* a = qm + r * dk;
        double s1 = 0, s2 = 0;
        for (std::size_t t = 0; t < dk; ++t) {
            s1 += a[t] * km[t];
            s2 += a[t] * kn[t];
        }
        // |s - q . k| <= rho for both scores (the certified soft-attention row's bound).
        const double rho = drop_radius ? 0.0 : (qa[r] * key_mid + qr[r] * key_rad) * omega_slack + omega_tiny;
        const double h1 = add_up(s1, rho), h2 = add_up(s2, rho);
        const double lo = add_down(std::min(s1, s2), -rho);
        if (!(h1 <= dmax && h2 <= dmax && lo >= -dmax)) return dinf; // not finite: ω = 1
        const double e1 = exp_up(h1);
        const double num = h2 > h1 ? exp_up(h2) : e1;
        // rest = E_m - exp(s_m) >= 0: its lower end, or 0.
        double rest = add_down(e_lo[r], -e1);
        if (!(rest > 0)) rest = 0;
        const double den = add_down(exp_down(lo), rest);
        // A denominator that is not finite (never expected: E_m's lower end is finite) would
        // make the quotient 0: ω = 1 then.
        const double w = den > 0 && den <= dmax ? div_up(num, den) : dinf;
        if (!(w <= wmax)) wmax = w;
        if (wmax >= 1) return wmax;
    }
    return wmax;
}

double top_omega_upper(const double* kqm, double kqm_inf, double kqr_inf, double qbm, double qbr,
                       const std::vector<model::vec<numeric::dinterval>>& y,
                       const std::vector<numeric::dinterval>& s_top, std::size_t i,
                       bool drop_radius) {
    const std::size_t n = y.size();
    if (n == 0 || s_top.size() != n || i >= n) return std::numeric_limits<double>::quiet_NaN();
    const std::size_t d = y.front().size();
    std::vector<double> ym(n * d), yr(n * d);
    for (std::size_t j = 0; j < n; ++j) {
        if (y[j].size() != d) return std::numeric_limits<double>::quiet_NaN();
        for (std::size_t c = 0; c < d; ++c)
            if (!numeric::mid_rad(y[j][c], ym[j * d + c], yr[j * d + c]))
                return std::numeric_limits<double>::quiet_NaN();
    }
    return top_omega_upper(kqm, kqm_inf, kqr_inf, qbm, qbr, ym.data(), yr.data(), n, d, s_top, i,
                           drop_radius);
}

double top_omega_upper(const double* kqm, double kqm_inf, double kqr_inf, double qbm, double qbr,
                       const double* ym, const double* yr, std::size_t n, std::size_t d,
                       const std::vector<numeric::dinterval>& s_top, std::size_t i, bool drop_radius) {
    if (n == 0 || s_top.size() != n || i >= n) return std::numeric_limits<double>::quiet_NaN();
    const double g = gamma_w(d + 1);
    // The bound below passes through at most d + 10 roundings; 1 + (d + 12) 2^-52 (exact)
    // and one more rounding restore it.
    const double fix = 1.0 + static_cast<double>(d + 12) * 0x1p-52;
    double den = 0, num_hi = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const double* m = ym + j * d;
        const double* r = yr + j * d;
        double acc = qbm, A = 0, R = 0;
        for (std::size_t c = 0; c < d; ++c) {
            acc += kqm[c] * m[c];
            A += std::fabs(m[c]);
            R += r[c];
        }
        // |s'_j - acc| <= g (|qbm| + |kq_m|_inf A) + |kq_m|_inf R + |kq_r|_inf (A + R) + qbr.
        const double rho =
            drop_radius ? 0.0
                        : (g * (std::fabs(qbm) + kqm_inf * A) + kqm_inf * R + kqr_inf * (A + R) + qbr) * fix +
                              omega_tiny;
        const double lo_new = add_down(acc, -rho);
        const double lo_old = s_top[j].lo();
        if (!(lo_new >= -dmax && lo_new <= dmax) || std::isnan(lo_old) || !(R <= dmax))
            return std::numeric_limits<double>::quiet_NaN();
        // exp_fast within its range (its relative error is taken once on the sum below), 0
        // below it (a lower bound), the certified exp's lower end above it.
        const double x = std::min(lo_old, lo_new);
        den += x < fast_min ? 0.0 : x <= fast_max ? numeric::elementary_detail::exp_fast(x) : exp_down(x);
        if (j == i) {
            const double hi = std::max(s_top[j].hi(), add_up(acc, rho));
            if (std::isnan(hi)) return std::numeric_limits<double>::quiet_NaN();
            num_hi = hi <= dmax ? exp_up(hi) : dinf;
        }
    }
    // n nonnegative terms summed in rounding to nearest: the exact sum is at least the
    // computed one times 1 - (n + 1) 2^-52; each term exp_fast(x) = e^x (1 + theta) with
    // |theta| <= 2^-50 is at most e^x (1 + 2^-50), so e^x >= exp_fast(x) (1 - 2^-50) (the
    // certified exp's lower end and 0 are below e^x already). Together a factor
    // 1 - (n + 5) 2^-52 (exact for n < 2^50), the product rounded down.
    // A sum that overflowed is no lower bound of the exact one: the interval operations then.
    if (!(den <= dmax) || n >= (std::size_t{1} << 50)) return std::numeric_limits<double>::quiet_NaN();
    const double den_lo = numeric::interval_detail::mul_down(den, 1.0 - static_cast<double>(n + 5) * 0x1p-52);
    return den_lo > 0 ? div_up(num_hi, den_lo) : dinf;
}

} // namespace detail

namespace {
/// The trace's y^(0), or an empty list for a trace without layers (which the constructor
/// rejects).
template <class S> const std::vector<model::vec<S>>& first_rows(const attention::soft_trace<S>& tx) {
    static const std::vector<model::vec<S>> none;
    return tx.y.empty() ? none : tx.y[0];
}

/// The largest of 0 and v_j = a_j + t_j over the rows j < n with a moved bound mv_j in [0,
/// DBL_MAX], t_j = mv_j (Scaled false) or the double after fl(f mv_j) (Scaled true: its bit
/// pattern plus one, for f mv_j >= 0); the other rows' indices, in order, into `others`. None
/// when some v_j is not finite (the caller's row loop decides then). The largest of finite
/// values does not depend on the order, so it is that of a row loop; four running maxima, so
/// it costs about a cycle a row.
template <bool Scaled>
[[gnu::noinline]] std::optional<double> moved_max(const double* __restrict a,
                                                  const double* __restrict mv, std::size_t n,
                                                  double f, std::vector<std::size_t>& others) {
    constexpr double dmax = std::numeric_limits<double>::max();
    double m[4] = {0.0, 0.0, 0.0, 0.0};
    bool ok = true;
    others.clear();
    const std::size_t n4 = n - n % 4;
    auto term = [&](std::size_t j) {
        const double x = mv[j];
        if (!(x >= 0 && x <= dmax)) {
            others.push_back(j);
            return 0.0;
        }
        double t = x;
        if constexpr (Scaled)
            t = std::bit_cast<double>(std::bit_cast<std::uint64_t>(f * x) + 1);
        const double v = a[j] + t;
        ok = ok & (v <= dmax) & (v >= -dmax);
        return v;
    };
    for (std::size_t j = 0; j < n4; j += 4)
        for (std::size_t l = 0; l < 4; ++l) {
            const double v = term(j + l);
            m[l] = v > m[l] ? v : m[l];
        }
    for (std::size_t j = n4; j < n; ++j) {
        const double v = term(j);
        m[0] = v > m[0] ? v : m[0];
    }
    if (!ok) return std::nullopt;
    return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}
} // namespace

template <class S>
posterior_cache<S>::posterior_cache(const rmodel& m, const attention::soft_trace<S>& tx,
                                    const numeric::context& ctx)
    : m_(m), y0_(first_rows(tx)), ctx_(ctx) {
    const std::size_t L = m.layers.size();
    if (L == 0 || L > 2)
        throw precondition_error("posterior_cache: one or two layers, got " + std::to_string(L));
    if (tx.y.size() != L + 1 || tx.y[0].empty() || tx.y[L].size() != tx.y[0].size())
        throw precondition_error("posterior_cache: the trace does not match the model's layers");
    init(L == 2 ? &tx.y[1] : nullptr, tx.y[L].back());
}

template <class S>
posterior_cache<S>::posterior_cache(const rmodel& m, const std::vector<model::vec<S>>& y0,
                                    const std::vector<model::vec<S>>& y1, const model::vec<S>& y_top,
                                    const numeric::context& ctx)
    : m_(m), y0_(y0), ctx_(ctx) {
    const std::size_t L = m.layers.size();
    if (L == 0 || L > 2)
        throw precondition_error("posterior_cache: one or two layers, got " + std::to_string(L));
    if (y0.empty() || (L == 2 && y1.size() != y0.size()))
        throw precondition_error("posterior_cache: the states do not match the model's layers");
    init(L == 2 ? &y1 : nullptr, y_top);
}

template <class S>
void posterior_cache<S>::init(const std::vector<model::vec<S>>* y1, const model::vec<S>& y_top) {
    const rmodel& m = m_;
    const numeric::context& ctx = ctx_;
    const long prec = ctx.precision_bits;
    const std::size_t L = m.layers.size();
    // x's rows entering layer k + 1.
    auto rows = [&](std::size_t k) -> const std::vector<model::vec<S>>& { return k == 0 ? y0_ : *y1; };
    n_ = y0_.size();
    F0_ = F1_ = Ftop_ = zero_point(prec);
    F0_ = max_norm_up(y0_, prec);
    f1_rows_.clear();
    if (L == 2) {
        if constexpr (std::is_same_v<S, dinterval>) {
            // Per row (bound() adds a change's moved bound to each).
            double mx = 0;
            for (const auto& y : *y1) {
                f1_rows_.push_back(norm_hi(y));
                if (!(f1_rows_.back() <= mx)) mx = f1_rows_.back();
            }
            F1_ = upper_of_max(mx, prec);
        } else {
            F1_ = max_norm_up(*y1, prec);
        }
    }
    Ftop_ = norm_up(y_top, prec);
    ok_ = true;
    for (std::size_t k = 0; k < L; ++k) {
        const layer_constants lc = compute_layer(m, k, ctx);
        if (!lc.ok) {
            ok_ = false;
            return;
        }
        const bool top = k + 1 == L;
        layer_state ls;
        ls.ly = lc.ly;
        for (std::size_t h = 0; h < m.layers[k].heads.size(); ++h) {
            const auto& hd = m.layers[k].heads[h];
            head_constants hc = lc.heads[h];
            const arb_ball factor_n = score_factor_at(hd, hc, n_, ctx);
            head_state st;
            st.mu = hc.mu;
            st.nu = hc.nu;
            st.l = lc.lh[h];
            st.score_bias = hc.score_bias;
            st.V = model::convert<S>(*value_affine(hd), ctx);
            st.P = zero_point(prec);
            [[maybe_unused]] bool per_row = false;
            if constexpr (std::is_same_v<S, dinterval>) {
                // The top layer of two: per row of x (bound() adds ν times a change's moved
                // bound to each), from the value map's midpoints.
                st.nu_up = upper_double(hc.nu);
                if (top && k == 1 && value_mid_init(st)) {
                    std::vector<double> scratch;
                    double mx = 0;
                    for (const auto& y : rows(k)) {
                        st.pv.push_back(value_norm_row(st, y, scratch));
                        if (!(st.pv.back() <= mx)) mx = st.pv.back();
                    }
                    st.P = upper_of_max(mx, prec);
                    per_row = true;
                }
            }
            if (!per_row) st.P = max_upper(st.P, max_value_norm_up(st.V, rows(k), ctx));
            st.constant_scores = arb_is_zero(hc.mu.raw()) != 0;
            if (!st.constant_scores) {
                st.Q = model::convert<S>(hd.score.Q, ctx);
                st.K = model::convert<S>(hd.score.K, ctx);
                st.scale = from_ball_as<S>(score_scale(hd.score, ctx) * factor_n);
                const std::size_t dk = st.Q.W.rows;
                for (const auto& y : rows(k)) st.k.push_back(model::apply_affine(st.K, y, ctx));
                // The query rows the bound reads: every row of layer 1 below the top, row n
                // at the top.
                for (std::size_t mq = top ? n_ - 1 : 0; mq < n_; ++mq) {
                    auto q = model::apply_affine(st.Q, rows(k)[mq], ctx);
                    for (auto& c : q) c = c * st.scale;
                    st.q.push_back(std::move(q));
                }
                if (k == 0) {
                    // E on first use (ensure_layer1).
                } else {
                    for (std::size_t j = 0; j < n_; ++j)
                        st.s_top.push_back(model::dot(st.q.front().data(), st.k[j].data(), dk, ctx));
                }
            }
            ls.heads.push_back(std::move(st));
        }
        layers_.push_back(std::move(ls));
    }
}

template <class S> void posterior_cache<S>::ensure_layer1(const head_state& cst) const {
    std::call_once(*cst.layer1_once, [&] {
        // The only writer of these members, once (call_once orders it before every reader).
        auto& st = const_cast<head_state&>(cst);
        [[maybe_unused]] bool by_rows = false;
        if constexpr (std::is_same_v<S, dinterval>) by_rows = first_layer_mid(st, ctx_);
        if (by_rows) return;
        const std::size_t dk = st.Q.W.rows;
        st.E.clear();
        st.mid = false;
        for (const auto& q : st.q) {
            S e = numeric::zero<S>(ctx_);
            for (std::size_t j = 0; j < n_; ++j)
                e += numeric::exp(model::dot(q.data(), st.k[j].data(), dk, ctx_));
            st.E.push_back(std::move(e));
        }
    });
}

template <class S>
template <class F>
bool posterior_cache<S>::top_value_norm_rows(std::size_t h, const std::vector<model::vec<S>>& y1,
                                             const change_hints& hints, bool drop_moved,
                                             F&& f) const {
    if constexpr (std::is_same_v<S, dinterval>) {
        if (!ok_ || layers_.size() != 2 || h >= layers_[1].heads.size() || y1.size() != n_) return false;
        const auto& st = layers_[1].heads[h];
        if (!st.vmid || st.pv.size() != n_) return false;
        const std::size_t C = st.V.W.cols;
        const bool moved = sized(hints.y1_moved, n_) && st.nu_up <= std::numeric_limits<double>::max();
        const bool mids = sized(hints.y1_mid, n_ * C) && sized(hints.y1_rad, n_ * C);
        std::vector<double> scratch;
        // next_up of a nonnegative double: its bit pattern plus one (no branch).
        const auto up = [](double x) {
            return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) + 1);
        };
        for (std::size_t j = 0; j < n_; ++j) {
            const double mv = moved ? (*hints.y1_moved)[j] : std::numeric_limits<double>::quiet_NaN();
            if (mv >= 0 && mv <= std::numeric_limits<double>::max()) {
                // ||V y'_j + c|| <= ||V y_j + c|| + ν ||y'_j - y_j||: a product and a sum of
                // nonnegative doubles, each rounded to nearest and one ulp up (the sum's ulp
                // left to f).
                f(j, drop_moved ? st.pv[j] : st.pv[j] + up(st.nu_up * mv), !drop_moved);
            } else {
                f(j, unmoved_value_norm(st, y1, hints, mids, j, scratch), false);
            }
        }
        return true;
    } else {
        (void)h;
        (void)y1;
        (void)hints;
        (void)drop_moved;
        (void)f;
        return false;
    }
}

template <class S>
std::vector<double> posterior_cache<S>::top_value_norms(std::size_t h, const std::vector<model::vec<S>>& y1,
                                                        const change_hints& hints, bool drop_moved) const {
    std::vector<double> out(n_);
    const bool ok = top_value_norm_rows(h, y1, hints, drop_moved, [&](std::size_t j, double v, bool up) {
        out[j] = up ? numeric::interval_detail::next_up(v) : v;
    });
    if (!ok) out.clear();
    return out;
}

template <class S>
std::optional<double> posterior_cache<S>::top_value_norm_max(std::size_t h,
                                                             const std::vector<model::vec<S>>& y1,
                                                             const change_hints& hints) const {
    // top_value_norms' values, the largest first and one ulp up once (rounding to nearest and
    // one ulp up are monotone; the ulp only enlarges a row's own bound); NaN propagates.
    double mx = 0;
    if constexpr (std::is_same_v<S, dinterval>) {
        // The rows with a moved bound by moved_max, the others (row p, rows the kernel
        // recomputed) as top_value_norm_rows takes them: the same largest value (no value is
        // NaN).
        if (ok_ && layers_.size() == 2 && h < layers_[1].heads.size() && y1.size() == n_ &&
            sized(hints.y1_moved, n_)) {
            const auto& st = layers_[1].heads[h];
            std::vector<std::size_t> others;
            if (st.vmid && st.pv.size() == n_ && st.nu_up <= std::numeric_limits<double>::max())
                if (const auto fast = moved_max<true>(st.pv.data(), hints.y1_moved->data(), n_,
                                                      st.nu_up, others)) {
                    const std::size_t C = st.V.W.cols;
                    const bool mids = sized(hints.y1_mid, n_ * C) && sized(hints.y1_rad, n_ * C);
                    std::vector<double> scratch;
                    mx = *fast;
                    for (std::size_t j : others) {
                        const double v = unmoved_value_norm(st, y1, hints, mids, j, scratch);
                        if (!(v <= mx)) mx = v;
                    }
                    return mx <= std::numeric_limits<double>::max()
                               ? numeric::interval_detail::next_up(mx)
                               : mx;
                }
        }
    }
    const bool ok = top_value_norm_rows(h, y1, hints, false, [&](std::size_t, double v, bool) {
        if (!(v <= mx)) mx = v;
    });
    if (!ok) return std::nullopt;
    return mx <= std::numeric_limits<double>::max() ? numeric::interval_detail::next_up(mx) : mx;
}

template <class S>
arb_ball posterior_cache<S>::bound(std::size_t i, const model::vec<S>& y0i,
                                   const std::vector<model::vec<S>>& y1,
                                   const model::vec<S>& y_top,
                                   const change_hints& hints) const {
    const std::vector<double>* omega1 = hints.omega1;
    auto top_hint = [&hints](std::size_t h) {
        return hints.omega_top && h < hints.omega_top->size() && !std::isnan((*hints.omega_top)[h]);
    };
    const long prec = ctx_.precision_bits;
    const arb_ball one = ball(1, ctx_), two = ball(2, ctx_);
    // A weight bound given as a double: at most 1 (ω <= 1 always).
    auto omega_of = [&](double w) {
        return w >= 1 ? one : min_upper(upper_of_max(w, prec), one);
    };
    if (!ok_) return pos_inf(prec);
    const std::size_t L = layers_.size();
    if (i + 1 >= n_) throw precondition_error("posterior_cache: the changed position is not before eos");
    if (L == 2 && y1.size() != n_) throw precondition_error("posterior_cache: y^(1) needs every row");
    const S zero = numeric::zero<S>(ctx_);
    // Rows of y^(1) may be left out (empty) where the hints bound them (a lean change of the
    // certified double kernel); where a left-out row would be read, the bound takes its
    // trivial value instead (+inf, or ω = 1).
    bool rows_complete = true;
    for (std::size_t j = 0; L == 2 && j < n_; ++j)
        rows_complete = rows_complete && y1[j].size() == y1[n_ - 1].size();
    arb_ball Delta = distance_up(y0_[i], y0i, prec);
    arb_ball delta = zero_point(prec);
    arb_ball Fprev = max_upper(F0_, norm_up(y0i, prec));
    for (std::size_t k = 0; k < L; ++k) {
        const auto& ls = layers_[k];
        const bool top = k + 1 == L;
        arb_ball Fk = top ? max_upper(Ftop_, norm_up(y_top, prec)) : F1_;
        if (!top) {
            bool by_moved = false;
            if constexpr (std::is_same_v<S, dinterval>) {
                // ||y'_j|| <= ||y_j|| + moved_j (rounded to nearest, one ulp up); a row without
                // a moved bound from its intervals.
                if (sized(hints.y1_moved, n_) && f1_rows_.size() == n_) {
                    // The largest sum first, one ulp up once (rounding to nearest and one ulp
                    // up are monotone); NaN propagates.
                    double mx = 0, mx_rows = 0;
                    // A row without a moved bound by its intervals (+inf where left out).
                    auto unmoved = [&](std::size_t j) {
                        const double v = y1[j].size() == y1[n_ - 1].size()
                                             ? norm_hi(y1[j])
                                             : std::numeric_limits<double>::infinity();
                        if (!(v <= mx_rows)) mx_rows = v;
                    };
                    // The rows with a moved bound by moved_max, the others in the same order as
                    // the loop below.
                    std::vector<std::size_t> others;
                    const auto fast = moved_max<false>(f1_rows_.data(), hints.y1_moved->data(),
                                                       n_, 1.0, others);
                    if (fast) {
                        mx = *fast;
                        for (std::size_t j : others) unmoved(j);
                    }
                    for (std::size_t j = 0; j < n_ && !fast; ++j) {
                        const double mv = (*hints.y1_moved)[j];
                        if (mv >= 0 && mv <= std::numeric_limits<double>::max()) {
                            const double v = f1_rows_[j] + mv;
                            if (!(v <= mx)) mx = v;
                        } else {
                            unmoved(j);
                        }
                    }
                    mx = numeric::interval_detail::next_up(mx);
                    if (!(mx_rows <= mx)) mx = mx_rows;
                    Fk = max_upper(Fk, upper_of_max(mx, prec));
                    by_moved = true;
                }
            }
            if (!by_moved)
                Fk = rows_complete ? max_upper(Fk, max_norm_up(y1, prec)) : pos_inf(prec);
        }
        arb_ball sum_db = zero_point(prec), sumP = zero_point(prec);
        for (std::size_t h = 0; h < ls.heads.size(); ++h) {
            const auto& st = ls.heads[h];
            // Value norms of both inputs: x's kept, x''s changed rows.
            arb_ball P = st.P;
            if (k == 0) {
                P = max_upper(P, norm_up(model::apply_affine(st.V, y0i, ctx_), prec));
            } else {
                bool per_row = false;
                if constexpr (std::is_same_v<S, dinterval>) {
                    if (const auto mx = top_value_norm_max(h, y1, hints)) {
                        P = max_upper(P, upper_of_max(*mx, prec));
                        per_row = true;
                    }
                }
                if (!per_row)
                    P = rows_complete ? max_upper(P, max_value_norm_up(st.V, y1, ctx_))
                                      : pos_inf(prec);
            }
            arb_ball omega = zero_point(prec);
            if (st.constant_scores) {
                omega = up(one / ball(static_cast<long>(n_), ctx_));
            } else if (k == 0) {
                // Layer 1: x and x' differ at row i only, so for a query m != i the keys differ
                // at i only and the query is x's. ω is the largest of the weights' upper ends.
                const std::size_t dk = st.Q.W.rows;
                const auto kn = model::apply_affine(st.K, y0i, ctx_);
                const std::size_t first = top ? n_ - 1 : 0;
                std::optional<S> w_max;
                bool done = false;
                if (omega1 && h < omega1->size() && !std::isnan((*omega1)[h])) {
                    omega = omega_of((*omega1)[h]);
                    done = true;
                } else {
                    ensure_layer1(st);
                }
                if constexpr (std::is_same_v<S, dinterval>) {
                    const double w = done ? std::numeric_limits<double>::quiet_NaN()
                                          : first_layer_omega(st, i, kn);
                    if (!std::isnan(w)) {
                        omega = omega_of(w);
                        done = true;
                    }
                }
                for (std::size_t mq = first; mq < n_ && !done; ++mq) {
                    if (mq == i) continue;
                    const auto& q = st.q[mq - first];
                    const S s1 = model::dot(q.data(), st.k[i].data(), dk, ctx_);
                    const S s2 = model::dot(q.data(), kn.data(), dk, ctx_);
                    // rest = Σ_{l != i} exp(s_ml) >= 0: its non-negative lower end when the
                    // difference reaches 0 (a lower bound of the denominator suffices).
                    // exp is increasing: exp(max(s1, s2)) = max(exp(s1), exp(s2)), the same
                    // for min, so two exponentials suffice.
                    const S e1 = numeric::exp(s1), e2 = numeric::exp(s2);
                    S rest = st.E[mq - first] - e1;
                    if (numeric::compare(rest, zero) != numeric::order::greater) rest = zero;
                    const S w = enclosure_max(e1, e2, prec) / (enclosure_min(e1, e2, prec) + rest);
                    w_max = w_max ? enclosure_max(*w_max, w, prec) : w;
                }
                if (!done) {
                    if (w_max) omega = upper_of(*w_max);
                    omega = min_upper(omega, one);
                }
            } else if (top_hint(h)) {
                // Layer 2, bounded by the kernel (change_hints::omega_top).
                omega = omega_of((*hints.omega_top)[h]);
            } else if (!rows_complete) {
                omega = one; // ω <= 1 always
            } else {
                // Layer 2 (the top): row n of both inputs, every key. x''s scores as
                // s'_j = (K^T q') . y'_j + q' . b_K: O(d) per key instead of O(d d_k).
                const std::size_t dk = st.Q.W.rows, d = st.K.W.cols;
                auto q2 = model::apply_affine(st.Q, y1[n_ - 1], ctx_);
                for (auto& c : q2) c = c * st.scale;
                model::vec<S> kq(d, zero);
                for (std::size_t r = 0; r < dk; ++r)
                    for (std::size_t c : st.K.W.nonzero[r]) numeric::fma_acc(kq[c], st.K.W.at(r, c), q2[r]);
                const S qb = st.K.b.empty() ? zero : model::dot(q2.data(), st.K.b.data(), dk, ctx_);
                S den = zero, num_s = zero;
                bool done = false;
                if constexpr (std::is_same_v<S, dinterval>) {
                    const double w = top_omega(kq, qb, y1, st.s_top, i, hints);
                    if (!std::isnan(w)) {
                        omega = omega_of(w);
                        done = true;
                    }
                }
                for (std::size_t j = 0; j < n_ && !done; ++j) {
                    const S s2 = model::dot(kq.data(), y1[j].data(), d, ctx_) + qb;
                    den += numeric::exp(enclosure_min(st.s_top[j], s2, prec));
                    if (j == i) num_s = enclosure_max(st.s_top[j], s2, prec);
                }
                if (!done) omega = min_upper(upper_of(numeric::exp(num_s) / den), one);
            }
            const arb_ball G = st.score_bias ? up(numeric::sqrt(Fprev * Fprev + one)) : Fprev;
            const arb_ball muG = up(st.mu * G);
            const arb_ball dw = min_upper(two, two * (two * muG * delta + omega * muG * (delta + Delta)));
            const arb_ball db = up(st.nu * (delta + omega * Delta) + P * dw);
            if (!arb_is_zero(st.l.raw())) {
                sum_db = up(sum_db + st.l * db);
                sumP = up(sumP + st.l * P);
            }
        }
        const arb_ball new_delta = min_upper(two * Fk, ls.ly * delta + sum_db);
        const arb_ball new_Delta = min_upper(two * Fk, ls.ly * Delta + two * sumP);
        delta = new_delta;
        Delta = new_Delta;
        Fprev = Fk;
    }
    return delta;
}

#define ATTNPROP_INSTANTIATE(S) template class posterior_cache<S>;
ATTNPROP_ENCLOSURE_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

} // namespace attnprop::analysis
