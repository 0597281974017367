#include "soft_influence/posterior.hpp"

#include "soft_influence/bound_constants.hpp"
#include "soft_influence/norms.hpp"
#include "soft_influence/posterior_interval.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace attnprop::analysis {

using namespace bound_detail;
// The certified double fast path (posterior_interval.hpp): its overloads join the generic
// helpers below, and posterior_cache takes it for kinds with numeric::has_double_endpoints.
using namespace posterior_detail;

arb_ball posterior_bound(const rmodel& m, const attention::soft_trace<arb_ball>& tx,
                         const attention::soft_trace<arb_ball>& tx2, std::size_t i,
                         const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const std::size_t L = m.layers.size();
    // A masked layer: the bound per row and key over each row's key range (theory.md §2.5).
    if (model::any_masked(m)) return detail::masked_posterior_bound(m, tx, tx2, i, ctx);
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

template <class S> arb_ball distance_up(const model::vec<S>& a, const model::vec<S>& b, long prec) {
    model::vec<S> d;
    d.reserve(a.size());
    for (std::size_t t = 0; t < a.size(); ++t) d.push_back(a[t] - b[t]);
    return norm_up(d, prec);
}

/// The trace's y^(0), or an empty list for a trace without layers (which the constructor
/// rejects).
template <class S> const std::vector<model::vec<S>>& first_rows(const attention::soft_trace<S>& tx) {
    static const std::vector<model::vec<S>> none;
    return tx.y.empty() ? none : tx.y[0];
}

} // namespace

template <class S>
posterior_cache<S>::posterior_cache(const rmodel& m, const attention::soft_trace<S>& tx,
                                    const numeric::context& ctx)
    : m_(m), y0_(first_rows(tx)), ctx_(ctx) {
    const std::size_t L = m.layers.size();
    if (model::any_masked(m))
        throw precondition_error("posterior_cache: the a-posteriori bound is derived for unmasked "
                                 "layers");
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
    if (model::any_masked(m))
        throw precondition_error("posterior_cache: the a-posteriori bound is derived for unmasked "
                                 "layers");
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
        if constexpr (numeric::has_double_endpoints<S>) {
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
            if constexpr (numeric::has_double_endpoints<S>) {
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
        if constexpr (numeric::has_double_endpoints<S>) by_rows = first_layer_mid(st, ctx_);
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
    if constexpr (numeric::has_double_endpoints<S>) {
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
    if constexpr (numeric::has_double_endpoints<S>) {
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
            if constexpr (numeric::has_double_endpoints<S>) {
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
                if constexpr (numeric::has_double_endpoints<S>) {
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
                if constexpr (numeric::has_double_endpoints<S>) {
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
                if constexpr (numeric::has_double_endpoints<S>) {
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
