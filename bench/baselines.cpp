#include "baselines.hpp"

#include <cmath>
#include <stdexcept>
#include <variant>

namespace attnprop::bench {

namespace {

/// Pointers to the benchmark layer's parameters in attnprop's converted model, in the flat
/// layouts the baselines use: Q, K per head (dk x d, head-major), V (dv x d), the update's W
/// (d x du) and bias (d), the score scale per head.
template <class S> struct gathered {
    layer_dims dm;
    std::vector<const S*> q, k, v, uw, ub, scale;
};

template <class S> gathered<S> gather(const model::model<S>& m, std::size_t n) {
    if (m.layers.size() != 1) throw std::invalid_argument("baseline: one layer expected");
    const auto& lay = m.layers.front();
    gathered<S> g;
    g.dm.n = n;
    g.dm.d = m.d;
    g.dm.H = lay.heads.size();
    g.dm.dk = lay.heads.front().score.Q.W.rows;
    g.dm.dv = lay.heads.front().value.V.W.rows;
    for (const auto& hd : lay.heads) {
        if (hd.score.Q.W.rows != g.dm.dk || hd.value.V.W.rows != g.dm.dv || !hd.score.Q.b.empty() ||
            !hd.score.K.b.empty() || !hd.value.V.b.empty() || !hd.score.scale)
            throw std::invalid_argument("baseline: unexpected head shape");
        for (const auto& e : hd.score.Q.W.data) g.q.push_back(&e);
        for (const auto& e : hd.score.K.W.data) g.k.push_back(&e);
        for (const auto& e : hd.value.V.W.data) g.v.push_back(&e);
        g.scale.push_back(&*hd.score.scale);
    }
    const auto* up = std::get_if<model::affine_map<S>>(&lay.update.impl);
    if (!up || up->W.cols != g.dm.du() || up->b.size() != g.dm.d)
        throw std::invalid_argument("baseline: affine update with bias expected");
    for (const auto& e : up->W.data) g.uw.push_back(&e);
    for (const auto& e : up->b) g.ub.push_back(&e);
    return g;
}

} // namespace

// --- double --------------------------------------------------------------------------------

double_soft_baseline::double_soft_baseline(const model::model<double>& m,
                                           const std::vector<model::vec<double>>& y0) {
    gathered<double> g = gather(m, y0.size());
    dm_ = g.dm;
    scale_ = *g.scale.front();
    auto copy = [](const std::vector<const double*>& src) {
        std::vector<double> out;
        for (const double* p : src) out.push_back(*p);
        return out;
    };
    q_w_ = copy(g.q);
    k_w_ = copy(g.k);
    v_w_ = copy(g.v);
    u_w_ = copy(g.uw);
    u_b_ = copy(g.ub);
    for (const auto& row : y0) y_.insert(y_.end(), row.begin(), row.end());
    y1_.assign(dm_.n * dm_.d, 0.0);
    keys_.assign(dm_.H * dm_.n * dm_.dk, 0.0);
    values_.assign(dm_.H * dm_.n * dm_.dv, 0.0);
    q_.assign(dm_.dk, 0.0);
    s_.assign(dm_.n, 0.0);
    num_.assign(dm_.dv, 0.0);
    in_.assign(dm_.du(), 0.0);
}

const double* double_soft_baseline::run() {
    const std::size_t n = dm_.n, d = dm_.d, H = dm_.H, dk = dm_.dk, dv = dm_.dv, du = dm_.du();
    // Keys and values of every position.
    for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t j = 0; j < n; ++j) {
            const double* y = &y_[j * d];
            for (std::size_t r = 0; r < dk; ++r) {
                const double* w = &k_w_[(h * dk + r) * d];
                double acc = 0;
                for (std::size_t c = 0; c < d; ++c) acc += w[c] * y[c];
                keys_[(h * n + j) * dk + r] = acc;
            }
            for (std::size_t r = 0; r < dv; ++r) {
                const double* w = &v_w_[(h * dv + r) * d];
                double acc = 0;
                for (std::size_t c = 0; c < d; ++c) acc += w[c] * y[c];
                values_[(h * n + j) * dv + r] = acc;
            }
        }
    }
    // Every row: per head scores, max shift, exp, weighted sum; then the affine update.
    for (std::size_t i = 0; i < n; ++i) {
        const double* y = &y_[i * d];
        for (std::size_t h = 0; h < H; ++h) {
            for (std::size_t r = 0; r < dk; ++r) {
                const double* w = &q_w_[(h * dk + r) * d];
                double acc = 0;
                for (std::size_t c = 0; c < d; ++c) acc += w[c] * y[c];
                q_[r] = acc * scale_;
            }
            const double* keys = &keys_[h * n * dk];
            double mx = -HUGE_VAL;
            for (std::size_t j = 0; j < n; ++j) {
                double acc = 0;
                for (std::size_t r = 0; r < dk; ++r) acc += q_[r] * keys[j * dk + r];
                s_[j] = acc;
                if (acc > mx) mx = acc;
            }
            const double* values = &values_[h * n * dv];
            double den = 0;
            for (std::size_t c = 0; c < dv; ++c) num_[c] = 0;
            for (std::size_t j = 0; j < n; ++j) {
                const double e = std::exp(s_[j] - mx);
                den += e;
                for (std::size_t c = 0; c < dv; ++c) num_[c] += e * values[j * dv + c];
            }
            for (std::size_t c = 0; c < dv; ++c) in_[d + h * dv + c] = num_[c] / den;
        }
        for (std::size_t c = 0; c < d; ++c) in_[c] = y[c];
        for (std::size_t r = 0; r < d; ++r) {
            const double* w = &u_w_[r * du];
            double acc = u_b_[r];
            for (std::size_t c = 0; c < du; ++c) acc += w[c] * in_[c];
            y1_[i * d + r] = acc;
        }
    }
    return &y1_[(n - 1) * d];
}

// --- MPFR ----------------------------------------------------------------------------------

mpfr_array::mpfr_array(std::size_t count, long precision_bits) : v_(count) {
    for (auto& x : v_) {
        mpfr_init2(&x, static_cast<mpfr_prec_t>(precision_bits));
        mpfr_set_zero(&x, 1);
    }
}

mpfr_array::~mpfr_array() {
    for (auto& x : v_) mpfr_clear(&x);
}

namespace {

void copy_mpfr(mpfr_array& dst, const std::vector<const numeric::mpfr_real*>& src) {
    for (std::size_t t = 0; t < src.size(); ++t) mpfr_set(dst[t], src[t]->raw(), MPFR_RNDN);
}

} // namespace

mpfr_soft_baseline::mpfr_soft_baseline(const model::model<numeric::mpfr_real>& m,
                                       const std::vector<model::vec<numeric::mpfr_real>>& y0,
                                       long p)
    : dm_(gather(m, y0.size()).dm), scale_(1, p), y_(dm_.n * dm_.d, p), y1_(dm_.n * dm_.d, p),
      q_w_(dm_.H * dm_.dk * dm_.d, p), k_w_(dm_.H * dm_.dk * dm_.d, p),
      v_w_(dm_.H * dm_.dv * dm_.d, p), u_w_(dm_.d * dm_.du(), p), u_b_(dm_.d, p),
      keys_(dm_.H * dm_.n * dm_.dk, p), values_(dm_.H * dm_.n * dm_.dv, p), q_(dm_.dk, p),
      s_(dm_.n, p), num_(dm_.dv, p), in_(dm_.du(), p), den_(1, p), e_(1, p), t_(1, p) {
    gathered<numeric::mpfr_real> g = gather(m, y0.size());
    mpfr_set(scale_[0], g.scale.front()->raw(), MPFR_RNDN);
    copy_mpfr(q_w_, g.q);
    copy_mpfr(k_w_, g.k);
    copy_mpfr(v_w_, g.v);
    copy_mpfr(u_w_, g.uw);
    copy_mpfr(u_b_, g.ub);
    for (std::size_t j = 0; j < dm_.n; ++j)
        for (std::size_t c = 0; c < dm_.d; ++c)
            mpfr_set(y_[j * dm_.d + c], y0[j][c].raw(), MPFR_RNDN);
}

std::vector<double> mpfr_soft_baseline::run() {
    const std::size_t n = dm_.n, d = dm_.d, H = dm_.H, dk = dm_.dk, dv = dm_.dv, du = dm_.du();
    const auto R = MPFR_RNDN;
    // acc = w . x over len terms, one mpfr_fma per term.
    auto dot = [R](mpfr_ptr acc, const mpfr_array& w, std::size_t wo, const mpfr_array& x,
                   std::size_t xo, std::size_t len) {
        mpfr_set_zero(acc, 1);
        for (std::size_t c = 0; c < len; ++c) mpfr_fma(acc, w[wo + c], x[xo + c], acc, R);
    };
    for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t j = 0; j < n; ++j) {
            for (std::size_t r = 0; r < dk; ++r)
                dot(keys_[(h * n + j) * dk + r], k_w_, (h * dk + r) * d, y_, j * d, d);
            for (std::size_t r = 0; r < dv; ++r)
                dot(values_[(h * n + j) * dv + r], v_w_, (h * dv + r) * d, y_, j * d, d);
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t h = 0; h < H; ++h) {
            for (std::size_t r = 0; r < dk; ++r) {
                dot(q_[r], q_w_, (h * dk + r) * d, y_, i * d, d);
                mpfr_mul(q_[r], q_[r], scale_[0], R);
            }
            std::size_t best = 0;
            for (std::size_t j = 0; j < n; ++j) {
                dot(s_[j], q_, 0, keys_, (h * n + j) * dk, dk);
                if (mpfr_greater_p(s_[j], s_[best])) best = j;
            }
            mpfr_set_zero(den_[0], 1);
            for (std::size_t c = 0; c < dv; ++c) mpfr_set_zero(num_[c], 1);
            for (std::size_t j = 0; j < n; ++j) {
                mpfr_sub(t_[0], s_[j], s_[best], R);
                mpfr_exp(e_[0], t_[0], R);
                mpfr_add(den_[0], den_[0], e_[0], R);
                for (std::size_t c = 0; c < dv; ++c)
                    mpfr_fma(num_[c], e_[0], values_[(h * n + j) * dv + c], num_[c], R);
            }
            for (std::size_t c = 0; c < dv; ++c) mpfr_div(in_[d + h * dv + c], num_[c], den_[0], R);
        }
        for (std::size_t c = 0; c < d; ++c) mpfr_set(in_[c], y_[i * d + c], R);
        for (std::size_t r = 0; r < d; ++r) {
            mpfr_ptr acc = y1_[i * d + r];
            mpfr_set(acc, u_b_[r], R);
            for (std::size_t c = 0; c < du; ++c) mpfr_fma(acc, u_w_[r * du + c], in_[c], acc, R);
        }
    }
    std::vector<double> out;
    for (std::size_t c = 0; c < d; ++c) out.push_back(mpfr_get_d(y1_[(n - 1) * d + c], R));
    return out;
}

// --- Arb -----------------------------------------------------------------------------------

arb_array::arb_array(std::size_t count)
    : v_(_arb_vec_init(static_cast<slong>(count))), size_(count) {}

arb_array::~arb_array() { _arb_vec_clear(v_, static_cast<slong>(size_)); }

namespace {

void copy_arb(arb_array& dst, const std::vector<const numeric::arb_ball*>& src) {
    for (std::size_t t = 0; t < src.size(); ++t) arb_set(dst[t], src[t]->raw());
}

} // namespace

arb_soft_baseline::arb_soft_baseline(const model::model<numeric::arb_ball>& m,
                                     const std::vector<model::vec<numeric::arb_ball>>& y0, long p)
    : dm_(gather(m, y0.size()).dm), prec_(p), scale_(1), y_(dm_.n * dm_.d), y1_(dm_.n * dm_.d),
      q_w_(dm_.H * dm_.dk * dm_.d), k_w_(dm_.H * dm_.dk * dm_.d), v_w_(dm_.H * dm_.dv * dm_.d),
      u_w_(dm_.d * dm_.du()), u_b_(dm_.d), keys_(dm_.H * dm_.n * dm_.dk),
      values_(dm_.H * dm_.n * dm_.dv), q_(dm_.dk), s_(dm_.n), e_(dm_.n), num_(dm_.dv),
      in_(dm_.du()), den_(1), shift_(1), t_(1) {
    gathered<numeric::arb_ball> g = gather(m, y0.size());
    arb_set(scale_[0], g.scale.front()->raw());
    copy_arb(q_w_, g.q);
    copy_arb(k_w_, g.k);
    copy_arb(v_w_, g.v);
    copy_arb(u_w_, g.uw);
    copy_arb(u_b_, g.ub);
    for (std::size_t j = 0; j < dm_.n; ++j)
        for (std::size_t c = 0; c < dm_.d; ++c) arb_set(y_[j * dm_.d + c], y0[j][c].raw());
}

std::vector<double> arb_soft_baseline::run() {
    const std::size_t n = dm_.n, d = dm_.d, H = dm_.H, dk = dm_.dk, dv = dm_.dv, du = dm_.du();
    const slong p = prec_;
    const auto sd = static_cast<slong>(d), sdk = static_cast<slong>(dk);
    const auto sdv = static_cast<slong>(dv), sdu = static_cast<slong>(du);
    for (std::size_t h = 0; h < H; ++h) {
        for (std::size_t j = 0; j < n; ++j) {
            for (std::size_t r = 0; r < dk; ++r)
                arb_dot(keys_[(h * n + j) * dk + r], nullptr, 0, k_w_[(h * dk + r) * d], 1,
                        y_[j * d], 1, sd, p);
            for (std::size_t r = 0; r < dv; ++r)
                arb_dot(values_[(h * n + j) * dv + r], nullptr, 0, v_w_[(h * dv + r) * d], 1,
                        y_[j * d], 1, sd, p);
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t h = 0; h < H; ++h) {
            for (std::size_t r = 0; r < dk; ++r) {
                arb_dot(q_[r], nullptr, 0, q_w_[(h * dk + r) * d], 1, y_[i * d], 1, sd, p);
                arb_mul(q_[r], q_[r], scale_[0], p);
            }
            std::size_t best = 0;
            for (std::size_t j = 0; j < n; ++j) {
                arb_dot(s_[j], nullptr, 0, q_[0], 1, keys_[(h * n + j) * dk], 1, sdk, p);
                if (arf_cmp(arb_midref(s_[j]), arb_midref(s_[best])) > 0) best = j;
            }
            arb_set_arf(shift_[0], arb_midref(s_[best]));
            arb_zero(den_[0]);
            for (std::size_t j = 0; j < n; ++j) {
                arb_sub(t_[0], s_[j], shift_[0], p);
                arb_exp(e_[j], t_[0], p);
                arb_add(den_[0], den_[0], e_[j], p);
            }
            for (std::size_t c = 0; c < dv; ++c) {
                arb_dot(num_[c], nullptr, 0, e_[0], 1, values_[h * n * dv + c], sdv,
                        static_cast<slong>(n), p);
                arb_div(in_[d + h * dv + c], num_[c], den_[0], p);
            }
        }
        for (std::size_t c = 0; c < d; ++c) arb_set(in_[c], y_[i * d + c]);
        for (std::size_t r = 0; r < d; ++r)
            arb_dot(y1_[i * d + r], u_b_[r], 0, u_w_[r * du], 1, in_[0], 1, sdu, p);
    }
    std::vector<double> out;
    for (std::size_t c = 0; c < d; ++c)
        out.push_back(arf_get_d(arb_midref(y1_[(n - 1) * d + c]), ARF_RND_NEAR));
    return out;
}

} // namespace attnprop::bench
