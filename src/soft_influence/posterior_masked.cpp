// The a-posteriori pair bound for models with masked layers (posterior.hpp,
// detail::masked_posterior_bound; derived in docs/theory.md §2.5, "The a-posteriori pair bound
// under a mask"): one bound per row and layer, and per key of a row the largest weight the key
// can take along the segment from x's scores to x''s, over the row's key range.
#include "soft_influence/posterior.hpp"

#include "soft_influence/bound_constants.hpp"
#include "util/precondition.hpp"

#include <vector>

namespace attnprop::analysis::detail {

using namespace bound_detail;

arb_ball masked_posterior_bound(const rmodel& m, const attention::soft_trace<arb_ball>& tx,
                                const attention::soft_trace<arb_ball>& tx2, std::size_t i,
                                const numeric::context& ctx, bool ignore_mask) {
    const long prec = ctx.precision_bits;
    const std::size_t L = m.layers.size();
    if (tx.y.size() != L + 1 || tx2.y.size() != L + 1)
        throw precondition_error("posterior_bound: the traces do not match the model's layers");
    const std::size_t n = tx.y[0].size();
    if (n == 0 || tx2.y[0].size() != n || i >= n)
        throw precondition_error("posterior_bound: lengths or changed position do not match");
    for (std::size_t k = 0; k <= L; ++k)
        if (tx.y[k].size() != n || tx2.y[k].size() != n)
            throw precondition_error("posterior_bound: the traces do not hold every row");

    // ω bounds softmax weights along the segment of scores; other normalisers: no bound here.
    if (!attention::softmax_rows(m.attention)) return pos_inf(prec);
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
    // d[j] >= ||y_j^(k)(x') - y_j^(k)(x)|| for every row j (the rows other than i agree at
    // layer 0, which the distances give exactly).
    std::vector<arb_ball> d(n);
    for (std::size_t j = 0; j < n; ++j) d[j] = distance_upper(tx.y[0][j], tx2.y[0][j], prec);
    arb_ball Fprev = max_norm(0);
    for (std::size_t k = 0; k < L; ++k) {
        const auto& lc = lcs[k];
        const auto& lay = m.layers[k];
        const auto& ys = tx.y[k];
        const auto& ys2 = tx2.y[k];
        const bool top = k + 1 == L;
        const std::size_t first = top ? n - 1 : 0; // the rows the next layer (or y_n) reads
        const arb_ball Fk = max_norm(k + 1);
        // Per row: sum_h l_h ||Δb_{m,h}|| (upper points).
        std::vector<arb_ball> sum_db(n, zero_point(prec));
        for (std::size_t h = 0; h < lay.heads.size(); ++h) {
            const auto& hd = lay.heads[h];
            head_constants hc = lc.heads[h];
            const arb_ball factor_n = score_factor_at(hd, hc, n, ctx);
            const arb_ball& l = lc.lh[h];
            if (arb_is_zero(l.raw())) continue;
            // P >= ||V y_j + c|| over every row of both inputs.
            auto V = model::convert<arb_ball>(*value_affine(hd), ctx);
            arb_ball P = zero_point(prec);
            for (std::size_t j = 0; j < n; ++j) {
                P = max_upper(P, norm2_upper(model::apply_affine(V, ys[j], ctx), prec));
                P = max_upper(P, norm2_upper(model::apply_affine(V, ys2[j], ctx), prec));
            }
            const bool uniform = arb_is_zero(hc.mu.raw()) != 0;
            std::vector<std::vector<arb_ball>> q1, q2, k1, k2;
            std::size_t dk = 0;
            if (!uniform) {
                auto Q = model::convert<arb_ball>(hd.score.Q, ctx);
                auto Kp = model::convert<arb_ball>(hd.score.K, ctx);
                const arb_ball scale = score_scale(hd.score, ctx) * factor_n;
                dk = Q.W.rows;
                for (std::size_t j = 0; j < n; ++j) {
                    k1.push_back(model::apply_affine(Kp, ys[j], ctx));
                    k2.push_back(model::apply_affine(Kp, ys2[j], ctx));
                }
                q1.resize(n);
                q2.resize(n);
                for (std::size_t mq = first; mq < n; ++mq) {
                    q1[mq] = model::apply_affine(Q, ys[mq], ctx);
                    q2[mq] = model::apply_affine(Q, ys2[mq], ctx);
                    for (auto& x : q1[mq]) x = x * scale;
                    for (auto& x : q2[mq]) x = x * scale;
                }
            }
            const arb_ball G = hc.score_bias ? up(numeric::sqrt(Fprev * Fprev + one)) : Fprev;
            const arb_ball muG = up(hc.mu * G);
            for (std::size_t mq = first; mq < n; ++mq) {
                const std::size_t end = ignore_mask ? n : model::key_end(lay.mask, mq, n);
                // T >= sum_j w_j(t) d_j at every point t of the segment: at most the largest
                // d_j of the row, and at most sum_j ω_j d_j with ω_j >= every w_j(t).
                arb_ball dmax = zero_point(prec), T = zero_point(prec);
                if (uniform) {
                    const arb_ball w = one / ball(static_cast<long>(end), ctx);
                    for (std::size_t j = 0; j < end; ++j) {
                        dmax = max_upper(dmax, d[j]);
                        T = up(T + w * d[j]);
                    }
                } else {
                    std::vector<arb_ball> hi(end);
                    arb_ball den = zero_point(prec), t(prec);
                    for (std::size_t j = 0; j < end; ++j) {
                        const arb_ball s1 = model::dot(q1[mq].data(), k1[j].data(), dk, ctx);
                        const arb_ball s2 = model::dot(q2[mq].data(), k2[j].data(), dk, ctx);
                        arb_min(t.raw(), s1.raw(), s2.raw(), prec);
                        den += numeric::exp(t);
                        hi[j] = arb_ball(prec);
                        arb_max(hi[j].raw(), s1.raw(), s2.raw(), prec);
                    }
                    for (std::size_t j = 0; j < end; ++j) {
                        dmax = max_upper(dmax, d[j]);
                        if (arb_is_zero(d[j].raw())) continue;
                        const arb_ball omega = min_upper(numeric::exp(hi[j]) / den, one);
                        T = up(T + omega * d[j]);
                    }
                }
                T = min_upper(T, dmax);
                // ||w' - w||_1 <= 2 sup_t sum_j w_j(t) |u_j|, |u_j| <= μ G (d_m + d_j).
                const arb_ball dw = uniform ? zero_point(prec) : min_upper(two, two * muG * (d[mq] + T));
                // Δb = sum_j w_j V Δy_j + sum_j (w'_j - w_j) (V y'_j + c); both b in the hull.
                const arb_ball db = min_upper(up(two * P), up(hc.nu * T + P * dw));
                sum_db[mq] = up(sum_db[mq] + l * db);
            }
        }
        for (std::size_t mq = first; mq < n; ++mq)
            d[mq] = min_upper(up(two * Fk), up(lc.ly * d[mq] + sum_db[mq]));
        Fprev = Fk;
    }
    return d[n - 1];
}

} // namespace attnprop::analysis::detail
