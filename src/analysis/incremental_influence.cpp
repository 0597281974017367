// One-symbol updates for soft models with L <= 2 (incremental_influence.hpp).
#include "analysis/incremental_influence.hpp"
#include "attention/soft.hpp"

#include <cmath>
#include <variant>
#include <stdexcept>

namespace attnprop::analysis {

using model::vec;
using numeric::arb_ball;
using numeric::mpfr_real;
using numeric::rational;

template <class S> bool incremental_supports(const model::model<S>& m) {
    if (m.attention != model::attention_kind::soft) return false;
    if (m.layers.empty() || m.layers.size() > 2) return false;
    for (const auto& l : m.layers)
        for (const auto& h : l.heads) {
            if (h.score.type != model::score_spec<S>::kind::dot ||
                h.value.type != model::value_spec<S>::kind::linear)
                return false;
            // The scale must exist in S (exact rationals cannot hold 1/sqrt(d_k); the check
            // is made on the converted model).
            if constexpr (!std::is_same_v<S, rational>)
                if (!h.score.scale) return false;
        }
    return true;
}

namespace {

/// Whether x is a finite number (NaN and infinities send a row to the full recompute).
template <class S> bool finite(const S& x) {
    if constexpr (std::is_same_v<S, double>) return std::isfinite(x);
    else if constexpr (std::is_same_v<S, mpfr_real>) return mpfr_number_p(x.raw()) != 0;
    else return numeric::is_finite(x);
}

template <numeric::ExpScalar S>
vec<S> scaled_query(const model::head<S>& hd, const vec<S>& y, std::size_t n,
                    const numeric::context& ctx) {
    vec<S> q = attention::query(hd, y, ctx);
    const S f = attention::dot_scale(hd, n, ctx);
    for (auto& c : q) c = c * f;
    return q;
}

template <numeric::ExpScalar S> S dot(const vec<S>& a, const vec<S>& b, const numeric::context& ctx) {
    return model::dot(a.data(), b.data(), a.size(), ctx);
}

} // namespace

template <numeric::ExpScalar S>
incremental_influence<S>::incremental_influence(const model::model<S>& m,
                                                const model::input_sequence& x,
                                                const numeric::context& ctx,
                                                incremental_fault fault)
    : m_(m), x_(x), ctx_(ctx), fault_(fault), n_(x.size()) {
    if (!incremental_supports(m))
        throw std::invalid_argument("the incremental influence method does not apply to this model");
    if (n_ < 2) throw std::invalid_argument("incremental influence needs n >= 2");
    const std::size_t L = m.layers.size();
    first_row_ = L == 1 ? n_ - 1 : 0;
    y0_ = attention::initial_states(m, x, ctx);
    const auto& lay = m.layers.front();
    heads_.resize(lay.heads.size());
    for (std::size_t h = 0; h < heads_.size(); ++h) {
        const auto& hd = lay.heads[h];
        auto& st = heads_[h];
        for (std::size_t j = 0; j < n_; ++j) {
            st.k.push_back(attention::key(hd, y0_[j], ctx));
            st.v.push_back(attention::value(hd, y0_[j], ctx));
        }
        const std::size_t dv = st.v.front().size();
        for (std::size_t i = first_row_; i < n_; ++i) {
            vec<S> q = scaled_query(hd, y0_[i], n_, ctx);
            std::vector<S> s;
            s.reserve(n_);
            for (std::size_t j = 0; j < n_; ++j) s.push_back(dot(q, st.k[j], ctx));
            S mx = s.front();
            for (std::size_t j = 1; j < n_; ++j)
                if (numeric::compare(s[j], mx) == numeric::order::greater) mx = s[j];
            S shift = numeric::representative(mx);
            vec<S> num(dv, numeric::zero<S>(ctx));
            S den = numeric::zero<S>(ctx);
            for (std::size_t j = 0; j < n_; ++j) {
                S e = numeric::exp(s[j] - shift);
                den += e;
                for (std::size_t c = 0; c < dv; ++c) numeric::fma_acc(num[c], e, st.v[j][c]);
            }
            st.q.push_back(std::move(q));
            st.shift.push_back(std::move(shift));
            st.num.push_back(std::move(num));
            st.den.push_back(std::move(den));
        }
        if (m.input == model::input_kind::add || m.input == model::input_kind::concat) {
            const std::size_t sigma = m.sigma.symbols.size();
            st.ratio.resize(sigma * sigma);
            for (std::size_t b = 0; b < sigma; ++b)
                for (std::size_t a = 0; a < sigma; ++a) {
                    if (a == b) continue;
                    // The change of y^(0) (token block first for concat) and of the key.
                    vec<S> delta(y0_.front().size(), numeric::zero<S>(ctx));
                    for (std::size_t c = 0; c < m.token[a].size(); ++c)
                        delta[c] = m.token[a][c] - m.token[b][c];
                    model::affine_map<S> kw{hd.score.K.W, {}, true};
                    const vec<S> dk = model::apply_affine(kw, delta, ctx);
                    auto& out = st.ratio[b * sigma + a];
                    out.reserve(st.q.size());
                    for (const auto& q : st.q) out.push_back(numeric::exp(dot(q, dk, ctx)));
                }
        }
    }
    auto row_output = [&](std::size_t i) {
        std::vector<vec<S>> b(heads_.size());
        const std::size_t r = i - first_row_;
        for (std::size_t h = 0; h < heads_.size(); ++h) {
            const auto& st = heads_[h];
            b[h] = st.num[r];
            for (auto& c : b[h]) c = c / st.den[r];
        }
        return attention::update(lay, y0_[i], b, ctx);
    };
    if (L == 1) {
        base_ = row_output(n_ - 1);
    } else {
        y1_.reserve(n_);
        for (std::size_t i = 0; i < n_; ++i) y1_.push_back(row_output(i));
        base_ = top(y1_);
        affine_ = std::get_if<model::affine_map<S>>(&lay.update.impl);
        if (affine_) {
            std::size_t off = y0_.front().size();
            g_.resize(heads_.size());
            for (std::size_t h = 0; h < heads_.size(); ++h) {
                block_.push_back(off);
                off += heads_[h].v.front().size();
                g_[h].reserve(n_);
                for (std::size_t i = 0; i < n_; ++i) {
                    vec<S> b = heads_[h].num[i];
                    for (auto& c : b) c = c / heads_[h].den[i];
                    g_[h].push_back(block_apply(h, b));
                }
            }
        }
    }
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
                                          const vec<S>& kp, const vec<S>& vp) const {
    const auto& st = heads_[h];
    std::vector<S> s;
    s.reserve(n_);
    for (std::size_t j = 0; j < n_; ++j) s.push_back(dot(q, j == p ? kp : st.k[j], ctx_));
    S mx = s.front();
    for (std::size_t j = 1; j < n_; ++j)
        if (numeric::compare(s[j], mx) == numeric::order::greater) mx = s[j];
    const S shift = numeric::representative(mx);
    const std::size_t dv = vp.size();
    vec<S> num(dv, numeric::zero<S>(ctx_));
    S den = numeric::zero<S>(ctx_);
    for (std::size_t j = 0; j < n_; ++j) {
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
    const auto& lay = m_.layers[1];
    const vec<S>& yn = y1[n_ - 1];
    const std::size_t d = yn.size();
    std::vector<vec<S>> b(lay.heads.size());
    for (std::size_t h = 0; h < lay.heads.size(); ++h) {
        const auto& hd = lay.heads[h];
        const vec<S> q = scaled_query(hd, yn, n_, ctx_);
        // score_j = q . (K y_j + k_b) = u . y_j + c with u = K^T q, c = q . k_b.
        const auto& K = hd.score.K;
        vec<S> u(d, numeric::zero<S>(ctx_));
        for (std::size_t r = 0; r < K.W.rows; ++r)
            for (std::size_t c : K.W.nonzero[r]) numeric::fma_acc(u[c], K.W.at(r, c), q[r]);
        S cst = K.b.empty() ? numeric::zero<S>(ctx_) : dot(q, K.b, ctx_);
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
vec<S> incremental_influence<S>::changed(std::size_t p, int a) const {
    if (p + 1 >= n_) throw std::invalid_argument("incremental influence: position not before eos");
    if (a < 0 || static_cast<std::size_t>(a) >= m_.sigma.symbols.size())
        throw std::invalid_argument("incremental influence: replacement is not a symbol of the alphabet");
    const auto& lay = m_.layers.front();
    const std::size_t H = heads_.size();
    const vec<S> y0p = attention::initial_state(m_, a, static_cast<long>(p + 1),
                                                static_cast<long>(n_), ctx_);
    std::vector<vec<S>> kp(H), vp(H), qp(H);
    for (std::size_t h = 0; h < H; ++h) {
        kp[h] = attention::key(lay.heads[h], y0p, ctx_);
        vp[h] = attention::value(lay.heads[h], y0p, ctx_);
        if (first_row_ <= p) qp[h] = scaled_query(lay.heads[h], y0p, n_, ctx_);
    }
    // The cancellation guard: the rest of the denominator must keep a 2^-16 share.
    const S guard = numeric::from_int<S>(65536, ctx_);
    // Affine F_1 (L = 2): A_h v_p and A_h v'_p once per change.
    const bool fold = affine_ != nullptr;
    std::vector<vec<S>> av_old(fold ? H : 0), av_new(fold ? H : 0);
    if (fold)
        for (std::size_t h = 0; h < H; ++h) {
            av_old[h] = block_apply(h, heads_[h].v[p]);
            av_new[h] = block_apply(h, vp[h]);
        }
    auto corrected = [&](std::size_t i) {
        std::vector<vec<S>> b(H);
        const std::size_t r = i - first_row_;
        if (fault_ == incremental_fault::skip_row_correction && i != p && i + 1 != n_ && !y1_.empty())
            return y1_[i];
        // Per head: the full output b_h (recomputed rows), or the rank-1 coefficients.
        std::vector<S> lam(H), alpha(H), beta(H);
        bool folded = fold && i != p;
        for (std::size_t h = 0; h < H; ++h) {
            const auto& st = heads_[h];
            if (i == p) {
                b[h] = full_row(h, qp[h], p, kp[h], vp[h]);
                continue;
            }
            const std::size_t dv = vp[h].size();
            const S e_old = numeric::exp(dot(st.q[r], st.k[p], ctx_) - st.shift[r]);
            const S e_new =
                st.ratio.empty() || a == x_[p]
                    ? numeric::exp(dot(st.q[r], kp[h], ctx_) - st.shift[r])
                    : e_old * st.ratio[static_cast<std::size_t>(x_[p]) * m_.sigma.symbols.size() +
                                       static_cast<std::size_t>(a)][r];
            const bool keep = fault_ == incremental_fault::keep_old_term;
            S rest = keep ? st.den[r] : st.den[r] - e_old;
            if (!finite(e_new) ||
                numeric::possibly_less(numeric::compare(rest * guard, st.den[r]))) {
                b[h] = full_row(h, st.q[r], p, kp[h], vp[h]);
                folded = false;
                continue;
            }
            S den = rest + e_new;
            // b'_h = lambda b_h + alpha v_p + beta v'_p, lambda - 1 = (e_old - e_new) / den'.
            lam[h] = ((keep ? numeric::zero<S>(ctx_) : e_old) - e_new) / den;
            alpha[h] = keep ? numeric::zero<S>(ctx_) : -(e_old / den);
            beta[h] = e_new / den;
            if (fold) continue; // b_h only if another head needs the full update
            vec<S> num = st.num[r];
            for (std::size_t c = 0; c < dv; ++c) {
                if (!keep) num[c] -= e_old * st.v[p][c];
                numeric::fma_acc(num[c], e_new, vp[h][c]);
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
                    numeric::fma_acc(bh[c], beta[h], vp[h][c]);
                }
                b[h] = std::move(bh);
            }
        if (folded) {
            vec<S> y = y1_[i];
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t c = 0; c < y.size(); ++c) {
                    numeric::fma_acc(y[c], lam[h], g_[h][i][c]);
                    numeric::fma_acc(y[c], alpha[h], av_old[h][c]);
                    numeric::fma_acc(y[c], beta[h], av_new[h][c]);
                }
            return y;
        }
        return attention::update(lay, i == p ? y0p : y0_[i], b, ctx_);
    };
    if (m_.layers.size() == 1) return corrected(n_ - 1);
    std::vector<vec<S>> y1(n_);
    for (std::size_t i = 0; i < n_; ++i) y1[i] = corrected(i);
    return top(y1);
}

template class incremental_influence<double>;
template class incremental_influence<mpfr_real>;
template class incremental_influence<arb_ball>;
template bool incremental_supports(const model::model<double>&);
template bool incremental_supports(const model::model<mpfr_real>&);
template bool incremental_supports(const model::model<arb_ball>&);
template bool incremental_supports(const model::model<rational>&);

} // namespace attnprop::analysis
