#include "soft_influence/bounds.hpp"

#include "soft_influence/bound_constants.hpp"
#include "soft_influence/formula_range.hpp"
#include "soft_influence/norms.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace attnprop::analysis {

using namespace bound_detail;

namespace {

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

} // namespace

namespace bound_detail {

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

} // namespace bound_detail

namespace {

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
    /// The masked constant C_L of theory.md §2.5: C_k = (α'_k + β_k) C_{k-1} + β_k Δ_{k-1},
    /// C_0 = 0, with α'_k = ℓ_y + 2 Σ_h ℓ_h a_h (independent of n).
    arb_ball K_mask;
};

recursion_result run_recursion(const std::vector<layer_constants>& lcs, const arb_ball& F0,
                               const arb_ball& Delta0, long n, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const arb_ball one = ball(1, ctx), two = ball(2, ctx), four = ball(4, ctx);
    const arb_ball nn = ball(n, ctx);
    recursion_result res;
    arb_ball F = F0, Delta = Delta0, delta = zero_point(prec);
    arb_ball C = zero_point(prec); // the masked recursion's C_{k-1}
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
        arb_ball alpha_mask = lc.ly;
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
                alpha_mask = up(alpha_mask + two * l * a);
            }
        }
        row.E = up(numeric::exp(two * row.A));
        row.alpha = alpha;
        row.beta = beta;
        row.F = up(lc.c + lc.ly * F + sumP);
        row.Delta = min_upper(two * row.F, lc.ly * Delta + two * sumP);
        row.delta = up(alpha * delta + beta / nn * Delta);
        // Δ is still Δ_{k-1} here.
        C = arb_is_zero(beta.raw()) ? up(alpha_mask * C)
                                    : up((alpha_mask + beta) * C + beta * Delta);
        row.C = C;
        F = row.F;
        delta = row.delta;
        Delta = row.Delta;
        Deltas.push_back(Delta);
        res.rows.push_back(std::move(row));
    }
    res.K_mask = C;
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

arb_ball masked_rate(const arb_ball& K, std::size_t layers, long n, const numeric::context& ctx) {
    if (n < 1) throw precondition_error("masked_rate: n must be at least 1");
    const arb_ball g = up(ball(1, ctx) + numeric::log(ball(n, ctx)));
    arb_ball r = K;
    for (std::size_t k = 1; k < layers; ++k) r = up(r * g);
    return up(r / ball(n, ctx));
}

bool a_priori_bounds_kind(model::attention_kind k) {
    const auto& a = model::info(k);
    return a.soft_influence || (a.weights == model::weighting::normaliser && !a.feature_map &&
                                a.influence == model::influence_law::vanishing);
}

bound_report a_priori_bound(const rmodel& m, long n, const numeric::context& ctx) {
    if (n < 1) throw precondition_error("a_priori_bound: n must be at least 1");
    const long prec = ctx.precision_bits;
    bound_report rep;
    rep.model_name = m.name;
    rep.attention = m.attention;
    rep.influence = model::influence_of(m);
    rep.influence_in_words = model::influence_in_words(m);
    rep.n = n;
    rep.precision = prec;
    rep.hypotheses = check_hypotheses(m);
    rep.masked = model::all_causal(m);
    if (model::any_masked(m) && !rep.masked)
        rep.hypotheses.push_back(
            {"uniform-mask", numeric::uncertain<bool>(false),
             "some layers are causally masked and others not: the bound is derived for every layer "
             "masked (theory.md §2.5) or none (§2.1)"});
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

    // What the bound says of the model's own kind (theory.md §2.6): softmax's K is computed with
    // E = e^(2A); a positive normaliser whose log is 1-Lipschitz has a smaller E, so the same K
    // bounds it; a kind whose influence need not vanish has no K, only its softmax reading.
    // An elementwise kind (sigmoid) has no K of its own even where its influence vanishes: its
    // head outputs are not convex combinations of the values, which softmax's K assumes.
    // Linear attention likewise: its weights are not a function of the scores, which the K
    // (from the scores' range) assumes.
    if (const auto& a = model::info(m.attention);
        !a.soft_influence && (a.weights == model::weighting::elementwise || a.feature_map)) {
        const std::string kind = std::string("the model uses ") + a.name.data() + " attention: ";
        const char* why = a.feature_map
                              ? "its weights are features of q and k, not of the scores the K "
                                "below is computed from"
                              : "its weights need not sum to 1, which the K below assumes";
        if (!rep.influence)
            rep.notes.push_back(kind + rep.influence_in_words + " (theory.md §2.6)");
        else if (*rep.influence == model::influence_law::vanishing)
            rep.notes.push_back(kind + rep.influence_in_words +
                                ", so one symbol's influence is O(1/n) (theory.md §2.6); "
                                "attnprop computes no constant for it (" + why + "); the bounds "
                                "below concern its softmax reading with the same parameters");
        else
            rep.notes.push_back(kind + "no bound exists for it: " + rep.influence_in_words +
                                " (theory.md §2.6); the bounds below concern its softmax "
                                "reading with the same parameters");
    } else if (!a.soft_influence) {
        const std::string kind = std::string("the model uses ") + a.name.data() + " attention: ";
        switch (a.influence) {
        case model::influence_law::vanishing:
            rep.notes.push_back(kind + std::string(a.influence_in_words) +
                                ", at most softmax's e^(2M): the a-priori K below (computed "
                                "with e^(2M)) bounds its influence too (theory.md §2.6); the "
                                "bounds over every input concern its softmax reading");
            break;
        case model::influence_law::not_vanishing:
            rep.notes.push_back(kind + "no bound exists for it: " +
                                std::string(a.influence_in_words) +
                                " (theory.md §2.6); the bounds below concern its softmax "
                                "reading with the same parameters");
            break;
        case model::influence_law::hard_theorem:
            rep.notes.push_back(kind + "the bound concerns its softmax reading with the same "
                                       "parameters");
            break;
        }
    }
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
    if (rep.masked) {
        // theory.md §2.5: ||Δy_n^(L)|| <= K_mask (1 + ln n)^(L-1) / n, K_mask = C_L.
        if (!finite(at_n.K_mask)) {
            rep.notes.push_back("no K: the bound exceeds the representable range");
            return rep;
        }
        rep.K = at_n.K_mask;
        rep.K_at_n = at_n.K_mask;
        rep.bound_at_n = masked_rate(*rep.K, m.layers.size(), n, ctx);
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

} // namespace attnprop::analysis
