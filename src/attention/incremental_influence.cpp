// One-symbol updates for soft models with L <= 2 (incremental_influence.hpp): the generic members
// (every kind; the set-up is in incremental_setup.cpp, the raw MPFR kernels in
// incremental_mpfr.cpp, the certified double kernel in incremental_interval.cpp).
#include "attention/incremental_internal.hpp"
#include "util/precondition.hpp"

#include <cmath>
#include <limits>
#include <variant>

namespace attnprop::attention {

using namespace incremental_detail;
using model::vec;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;

template <class S> bool incremental_supports(const model::model<S>& m) {
    if (!model::info(m.attention).incremental) return false;
    if (m.layers.empty() || m.layers.size() > 2) return false;
    // Masks: a masked layer 1 of L = 2 keeps its rows' sums over their key ranges (row_end);
    // row n of the top layer attends to every key with or without one.
    for (const auto& l : m.layers)
        if (l.mask != model::mask_kind::none && l.mask != model::mask_kind::causal) return false;
    for (const auto& l : m.layers)
        for (const auto& h : l.heads) {
            if (h.score.type != model::score_spec<S>::kind::dot ||
                h.value.type != model::value_spec<S>::kind::linear)
                return false;
            // The scale must exist in S (a kind without sqrt, such as exact rationals, cannot
            // hold 1/sqrt(d_k); the check is made on the converted model).
            if constexpr (numeric::ExpScalar<S>)
                if (!h.score.scale) return false;
        }
    return true;
}

template <numeric::ExpScalar S>
S incremental_influence<S>::weight(std::size_t h, std::size_t i, std::size_t j) const {
    if constexpr (interval_kernel)
        if (!etab_.empty())
            return table_entry(etab_[h][j * n_ + i], {row_grow_lo_[h][i], row_grow_hi_[h][i]},
                               row_zero_hi_[h][i]);
    const auto& st = heads_[h];
    if constexpr (interval_kernel) {
        const double tau = row_tau_.empty() ? std::numeric_limits<double>::quiet_NaN() : row_tau_[h][i];
        if (!std::isnan(tau)) {
            // The constructor's entry from the certified row's E_j (soft_rows<dinterval>::sums):
            // the score of midpoints summed in index order, exp_fast of it minus the shift, 0
            // below exp_fast_min, then E_j [1 - tau_i, 1 + tau_i] one ulp outward. The same
            // operations in the same order, so the same bits (the test of tabled and untabled
            // kernels compares them).
            const std::size_t dk = st.q[i].size();
            double acc = 0.0;
            for (std::size_t t = 0; t < dk; ++t) {
                double a = 0, r = 0;
                numeric::mid_rad(st.q[i][t], a, r);
                acc += a * kmid_[h][j * dk + t];
            }
            const double x = acc - st.shift[i].lo();
            const bool in = x >= numeric::elementary_detail::exp_fast_min;
            const double e = in ? numeric::elementary_detail::exp_fast(x) : 0.0;
            return table_entry(e, row_growth(tau), row_zero_hi_[h][i]);
        }
    }
    return numeric::exp(dot(st.q[i], st.k[j], ctx_) - st.shift[i]);
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::changed_row_p_head(std::size_t p, int a, std::size_t h) const {
    if constexpr (interval_kernel) {
        if (!fold_mr_ || h >= heads_.size()) return {};
        const change ch = prepare(p, a);
        std::vector<vec<S>> b;
        if (row_p_heads(ch, b)) return b[h];
    }
    return {};
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::block_apply(std::size_t h, const vec<S>& x) const {
    const auto& W = affine_->W;
    const std::size_t lo = block_[h], hi = lo + x.size();
    vec<S> out(W.rows, numeric::zero<S>(ctx_));
    for (std::size_t r = 0; r < W.rows; ++r)
        for (std::size_t c : W.nonzero[r])
            if (c >= lo && c < hi) numeric::fma_acc(out[r], W.at(r, c), x[c - lo]);
    return out;
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::full_row(std::size_t h, const vec<S>& q, std::size_t p,
                                          const vec<S>& kp, const vec<S>& vp,
                                          std::size_t end) const {
    if constexpr (raw_kernels) {
        const long prec = ctx_.precision_bits;
        // raw_ is false for a masked layer 1 (the raw row is over every key).
        if (raw_ && end == n_ && uniform(q, prec) && uniform(kp, prec) && uniform(vp, prec))
            return full_row_raw(h, q, p, kp, vp);
    }
    const auto& st = heads_[h];
    std::vector<S> s;
    s.reserve(end);
    for (std::size_t j = 0; j < end; ++j) s.push_back(dot(q, j == p ? kp : st.k[j], ctx_));
    S mx = s.front();
    for (std::size_t j = 1; j < end; ++j)
        if (numeric::compare(s[j], mx) == numeric::order::greater) mx = s[j];
    const S shift = numeric::representative(mx);
    const std::size_t dv = vp.size();
    vec<S> num(dv, numeric::zero<S>(ctx_));
    S den = numeric::zero<S>(ctx_);
    for (std::size_t j = 0; j < end; ++j) {
        S e = numeric::exp(s[j] - shift);
        den += e;
        const vec<S>& v = j == p ? vp : st.v[j];
        for (std::size_t c = 0; c < dv; ++c) numeric::fma_acc(num[c], e, v[c]);
    }
    for (auto& c : num) c = c / den;
    return num;
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::top(const std::vector<vec<S>>& y1) const {
    try {
        if constexpr (raw_kernels)
            if (raw_ && uniform(y1, ctx_.precision_bits)) return top_raw(y1);
        if constexpr (interval_kernel) return top_interval(y1);
        return top_generic(y1);
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(2, nullptr, n_));
    }
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::top_generic(const std::vector<vec<S>>& y1) const {
    const auto& lay = m_.layers[1];
    const vec<S>& yn = y1[n_ - 1];
    const std::size_t d = yn.size();
    std::vector<vec<S>> b(lay.heads.size());
    for (std::size_t h = 0; h < lay.heads.size(); ++h) {
        const auto& hd = lay.heads[h];
        const auto [u, cst] = fold_scores(hd, yn, n_, ctx_);
        std::vector<S> s;
        s.reserve(n_);
        for (std::size_t j = 0; j < n_; ++j) s.push_back(dot(u, y1[j], ctx_) + cst);
        S mx = s.front();
        for (std::size_t j = 1; j < n_; ++j)
            if (numeric::compare(s[j], mx) == numeric::order::greater) mx = s[j];
        const S shift = numeric::representative(mx);
        vec<S> acc(d, numeric::zero<S>(ctx_));
        S den = numeric::zero<S>(ctx_);
        for (std::size_t j = 0; j < n_; ++j) {
            S e = numeric::exp(s[j] - shift);
            den += e;
            for (std::size_t c = 0; c < d; ++c) numeric::fma_acc(acc[c], e, y1[j][c]);
        }
        for (auto& c : acc) c = c / den;
        // sum_j w_j (V y_j + v_b) = V (sum_j w_j y_j) + v_b since the weights sum to 1.
        b[h] = model::apply_affine(hd.value.V, acc, ctx_);
    }
    return attention::update(lay, yn, b, ctx_);
}

template <numeric::ExpScalar S>
typename incremental_influence<S>::change incremental_influence<S>::prepare(std::size_t p,
                                                                         int a) const {
    if (p + 1 >= n_) throw precondition_error("incremental influence: position not before eos");
    if (a < 0 || static_cast<std::size_t>(a) >= m_.sigma.symbols.size())
        throw precondition_error("incremental influence: replacement is not a symbol of the alphabet");
    const auto& lay = m_.layers.front();
    const std::size_t H = heads_.size();
    change ch;
    ch.p = p;
    ch.a = a;
    ch.y0p = attention::initial_state(m_, a, static_cast<long>(p + 1), static_cast<long>(n_), ctx_);
    ch.kp.resize(H);
    ch.vp.resize(H);
    ch.qp.resize(H);
    for (std::size_t h = 0; h < H; ++h) {
        try {
            ch.kp[h] = attention::key(lay.heads[h], ch.y0p, ctx_);
            ch.vp[h] = attention::value(lay.heads[h], ch.y0p, ctx_);
            if (first_row_ <= p) ch.qp[h] = scaled_query(lay.heads[h], ch.y0p, n_, ctx_);
        } catch (const numeric::undefined_error& e) {
            throw e.located(attention::place(1, "value", p + 1, h + 1));
        }
    }
    // Affine F_1 (L = 2): A_h v_p and A_h v'_p once per change.
    if (affine_) {
        ch.av_old.resize(H);
        ch.av_new.resize(H);
        for (std::size_t h = 0; h < H; ++h) {
            ch.av_old[h] = block_apply(h, heads_[h].v[p]);
            ch.av_new[h] = block_apply(h, ch.vp[h]);
        }
    }
    return ch;
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::corrected_row(const change& ch, std::size_t i) const {
    try {
        return corrected_row_unlocated(ch, i);
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(1, nullptr, i + 1));
    }
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::corrected_row_unlocated(const change& ch, std::size_t i) const {
    const auto& lay = m_.layers.front();
    const std::size_t H = heads_.size();
    const std::size_t p = ch.p;
    const int a = ch.a;
    std::vector<vec<S>> b(H);
    const std::size_t r = i - first_row_;
    if (fault_ == incremental_fault::skip_row_correction && i != p && i + 1 != n_ && !y1_.empty())
        return y1_[i];
    // A masked layer 1: row i < p does not attend to key p (its range is j <= i).
    if (mask1_ && i < p && fault_ != incremental_fault::ignore_mask) return y1_[i];
    // The cancellation guard: the rest of the denominator must keep a 2^-16 share.
    const S guard = numeric::from_int<S>(65536, ctx_);
    const bool fold = affine_ != nullptr;
    // Per head: the full output b_h (recomputed rows), or the rank-1 coefficients.
    std::vector<S> lam(H), alpha(H), beta(H);
    bool folded = fold && i != p;
    for (std::size_t h = 0; h < H; ++h) {
        const auto& st = heads_[h];
        if (i == p) {
            b[h] = full_row(h, ch.qp[h], p, ch.kp[h], ch.vp[h], row_end(p));
            continue;
        }
        const std::size_t dv = ch.vp[h].size();
        const S e_old = numeric::exp(dot(st.q[r], st.k[p], ctx_) - st.shift[r]);
        const S e_new =
            st.ratio.empty() || a == x_[p]
                ? numeric::exp(dot(st.q[r], ch.kp[h], ctx_) - st.shift[r])
                : e_old * st.ratio[static_cast<std::size_t>(x_[p]) * m_.sigma.symbols.size() +
                                   static_cast<std::size_t>(a)][r];
        const bool keep = fault_ == incremental_fault::keep_old_term;
        S rest = keep ? st.den[r] : st.den[r] - e_old;
        if (!finite(e_new) || numeric::possibly_less(numeric::compare(rest * guard, st.den[r]))) {
            ++stats_.recomputed_rows;
            b[h] = full_row(h, st.q[r], p, ch.kp[h], ch.vp[h], row_end(i));
            folded = false;
            continue;
        }
        ++stats_.rank1_rows;
        S den = rest + e_new;
        // b'_h = lambda b_h + alpha v_p + beta v'_p, lambda - 1 = (e_old - e_new) / den'.
        lam[h] = ((keep ? numeric::zero<S>(ctx_) : e_old) - e_new) / den;
        alpha[h] = keep ? numeric::zero<S>(ctx_) : -(e_old / den);
        beta[h] = e_new / den;
        if (fold) continue; // b_h only if another head needs the full update
        vec<S> num = st.num[r];
        for (std::size_t c = 0; c < dv; ++c) {
            if (!keep) num[c] -= e_old * st.v[p][c];
            numeric::fma_acc(num[c], e_new, ch.vp[h][c]);
            num[c] = num[c] / den;
        }
        b[h] = std::move(num);
    }
    if (fold && !folded && i != p)
        for (std::size_t h = 0; h < H; ++h) {
            if (!b[h].empty()) continue;
            const auto& st = heads_[h];
            vec<S> bh = st.num[r];
            const S one_plus = numeric::one<S>(ctx_) + lam[h];
            for (std::size_t c = 0; c < bh.size(); ++c) {
                bh[c] = bh[c] / st.den[r] * one_plus;
                numeric::fma_acc(bh[c], alpha[h], st.v[p][c]);
                numeric::fma_acc(bh[c], beta[h], ch.vp[h][c]);
            }
            b[h] = std::move(bh);
        }
    if (folded) {
        vec<S> y = y1_[i];
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t c = 0; c < y.size(); ++c) {
                numeric::fma_acc(y[c], lam[h], g_[h][i][c]);
                numeric::fma_acc(y[c], alpha[h], ch.av_old[h][c]);
                numeric::fma_acc(y[c], beta[h], ch.av_new[h][c]);
            }
        return y;
    }
    return attention::update(lay, i == p ? ch.y0p : y0_[i], b, ctx_);
}

template <numeric::ExpScalar S>
vec<S> incremental_influence<S>::changed(std::size_t p, int a) const {
    // Every layer-1 row that attends to key p is corrected: every row, or the rows i >= p
    // under a causal mask (corrected_row returns x's row i < p as it is).
    const change ch = prepare(p, a);
    if constexpr (raw_kernels)
        if (raw_change_ok(ch)) return changed_raw(ch);
    if (m_.layers.size() == 1) return corrected_row(ch, n_ - 1);
    if constexpr (interval_kernel)
        if (fold_mr_) {
            fold_interval(ch, ywork_, ymid_work_, yrad_work_, moved_work_);
            try {
                return top_interval(ywork_, &ymid_work_, &yrad_work_);
            } catch (const numeric::undefined_error& e) {
                throw e.located(attention::place(2, nullptr, n_));
            }
        }
    std::vector<vec<S>> y1(n_);
    for (std::size_t i = 0; i < n_; ++i) y1[i] = corrected_row(ch, i);
    return top(y1);
}

template <numeric::ExpScalar S>
typename incremental_influence<S>::changed_states
incremental_influence<S>::changed_with_states(std::size_t p, int a) const {
    changed_states st;
    changed_with_states(p, a, st);
    return st;
}

template <numeric::ExpScalar S>
void incremental_influence<S>::changed_with_states(std::size_t p, int a, changed_states& st) const {
    const change ch = prepare(p, a);
    st.y0p = ch.y0p;
    if (m_.layers.size() == 1) {
        st.y1.clear();
        st.y = corrected_row(ch, n_ - 1);
        return;
    }
    bool folded = false;
    st.omega1.clear();
    st.omega_top.clear();
    st.y1_mid.clear();
    st.y1_rad.clear();
    st.y1_moved.clear();
    if constexpr (interval_kernel)
        if (fold_mr_) {
            fold_interval(ch, st.y1, st.y1_mid, st.y1_rad, st.y1_moved, &st.omega1);
            folded = true;
            try {
                st.y = top_interval(st.y1, &st.y1_mid, &st.y1_rad);
            } catch (const numeric::undefined_error& e) {
                throw e.located(attention::place(2, nullptr, n_));
            }
            return;
        }
    if (!folded) {
        st.y1.resize(n_);
        for (std::size_t i = 0; i < n_; ++i) st.y1[i] = corrected_row(ch, i);
    }
    st.y = top(st.y1);
}

template <numeric::ExpScalar S>
void incremental_influence<S>::changed_for_bound(std::size_t p, int a, changed_states& st) const {
    if constexpr (interval_kernel) {
        if (fold_mr_ && !top_old_.empty() && m_.layers.size() == 2) {
            const change ch = prepare(p, a);
            st.y0p = ch.y0p;
            fold_interval(ch, st.y1, st.y1_mid, st.y1_rad, st.y1_moved, &st.omega1, true);
            try {
                if (top_lean(ch, st)) return;
            } catch (const numeric::undefined_error& e) {
                throw e.located(attention::place(2, nullptr, n_));
            }
        }
    }
    changed_with_states(p, a, st);
}

#define ATTNPROP_INSTANTIATE(S) template class incremental_influence<S>;
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE
#define ATTNPROP_INSTANTIATE(S) template bool incremental_supports(const model::model<S>&);
ATTNPROP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

} // namespace attnprop::attention
