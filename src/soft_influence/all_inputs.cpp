#include "soft_influence/all_inputs.hpp"

#include "soft_influence/box_maps.hpp"
#include "soft_influence/hypotheses.hpp"
#include "soft_influence/norms.hpp"
#include "model/formula/class_range.hpp"
#include "util/precondition.hpp"
#include "util/thread_pool.hpp"
#include "numeric/elementary.hpp"

#include <flint/flint.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnprop::analysis {

namespace {

using namespace boxes;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::rational;

constexpr double inf = std::numeric_limits<double>::infinity();

/// a·n + b.
template <class S> struct lin {
    S a, b;
};

/// The lengths of a run as numbers.
struct span_n {
    double lo = 2, hi = 2; // hi may be +inf
    bool single() const { return lo == hi; }
};

template <class S> S at(const lin<S>& f, double n, const numeric::context& ctx) {
    return f.a * point<S>(n, ctx) + f.b;
}

/// sup (or inf) over n in the span of P(n)/Q(n), where Q > 0 must hold on the span; a ratio of
/// affine functions is monotone there, so its extremes are at the ends (or the limit
/// P.a/Q.a). std::nullopt when Q > 0 is not proved or the ratio is unbounded.
template <class S>
std::optional<std::pair<double, double>> mobius_range(const lin<S>& P, const lin<S>& Q,
                                                      const span_n& r, const numeric::context& ctx) {
    const S q_lo = at(Q, r.lo, ctx);
    if (!(down(q_lo) > 0)) return std::nullopt;
    const S v1 = at(P, r.lo, ctx) / q_lo;
    if (r.single()) return std::make_pair(down(v1), up(v1));
    S v2;
    if (std::isfinite(r.hi)) {
        const S q_hi = at(Q, r.hi, ctx);
        if (!(down(q_hi) > 0)) return std::nullopt;
        v2 = at(P, r.hi, ctx) / q_hi;
    } else if (down(Q.a) > 0) {
        v2 = P.a / Q.a;
    } else if (down(Q.a) >= 0 && up(Q.a) <= 0 && down(P.a) >= 0 && up(P.a) <= 0) {
        v2 = v1; // both constant in n
    } else {
        return std::nullopt;
    }
    return std::make_pair(std::min(down(v1), down(v2)), std::max(up(v1), up(v2)));
}

/// The largest coordinatewise extent between two different symbols' boxes:
/// max over t != t' of max(hi_t - lo_t', hi_t' - lo_t), rounded up (0 with one symbol).
template <class S> std::vector<double> pairwise_extent(const std::vector<std::vector<S>>& boxes_) {
    const std::size_t d = boxes_.empty() ? 0 : boxes_.front().size();
    std::vector<double> out(d, 0.0);
    for (std::size_t t = 0; t < boxes_.size(); ++t)
        for (std::size_t u = t + 1; u < boxes_.size(); ++u)
            for (std::size_t c = 0; c < d; ++c) {
                const double e = std::max(up_sub(up(boxes_[t][c]), down(boxes_[u][c])),
                                          up_sub(up(boxes_[u][c]), down(boxes_[t][c])));
                out[c] = std::max(out[c], std::max(0.0, e));
            }
    return out;
}

template <class S> std::vector<S> hull_boxes(const std::vector<std::vector<S>>& bs) {
    std::vector<S> out = bs.front();
    for (std::size_t t = 1; t < bs.size(); ++t)
        for (std::size_t c = 0; c < out.size(); ++c) out[c] = numeric::hull(out[c], bs[t][c]);
    return out;
}

double dot_up(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t c = 0; c < a.size(); ++c) s = up_add(s, up_mul(a[c], b[c]));
    return s;
}

/// e^x rounded down and up, for x <= 0 (exp_fast's relative error bound 2^-50, elementary.hpp).
double exp_down(double x) {
    using numeric::interval_detail::mul_down;
    if (!(x >= numeric::elementary_detail::exp_fast_min)) return 0.0;
    return mul_down(numeric::elementary_detail::exp_fast(std::min(x, 0.0)), 1.0 - 0x1p-49);
}
double exp_up(double x) {
    if (!(x >= numeric::elementary_detail::exp_fast_min)) x = numeric::elementary_detail::exp_fast_min;
    if (x > 0) return inf; // not reached: x is a score minus the largest score
    return up_mul(numeric::elementary_detail::exp_fast(x), 1.0 + 0x1p-48);
}
/// a / b rounded down (a >= 0, b > 0; 0 when b is not positive or infinite).
double div_down(double a, double b) {
    if (!(b > 0) || a == 0 || !std::isfinite(b)) return 0.0;
    if (!std::isfinite(a)) return inf;
    return std::max(0.0, numeric::interval_detail::next_down(a / b));
}

/// |A| e for an exact-pattern affine map's matrix, rounded up.
template <class S> std::vector<double> abs_apply(const model::affine_map<S>& a, const std::vector<double>& e) {
    std::vector<double> out(a.W.rows, 0.0);
    for (std::size_t r = 0; r < a.W.rows; ++r)
        for (std::size_t c : a.W.nonzero[r]) out[r] = up_add(out[r], up_mul(magnitude(a.W.at(r, c)), e[c]));
    return out;
}

/// One head's parameters in S.
template <class S> struct head_data {
    model::affine_map<S> Q, K, V;
    std::vector<S> M;  ///< (d + 1) x (d + 1), scale·β·Q̂ᵀK̂, row-major
    S coef;            ///< scale·β
};

/// The positions' states of one layer: per class and symbol slot a box and the scaled change
/// bound ε = n·e_δ; per class the change bound e_Δ at the changed position.
template <class S> struct layer_state {
    std::vector<std::vector<std::vector<S>>> Y;
    std::vector<std::vector<std::vector<double>>> eps;
    std::vector<std::vector<double>> Delta;
};

template <class S> class engine {
public:
    engine(const model::model<rational>& m, const std::vector<position_class>& classes,
           const length_range& r, const all_inputs_options& opt, const numeric::context& ctx)
        : m_(m), ms_(model::to_scalar<S>(m, ctx)), classes_(classes), range_(r), opt_(opt), ctx_(ctx) {
        n_.lo = static_cast<double>(r.lo);
        n_.hi = r.hi ? static_cast<double>(*r.hi) : inf;
        d_ = m.d;
        threads_ = util::worker_count(opt.threads, 0);
    }

    all_inputs_result run() {
        all_inputs_result out;
        out.lengths = range_;
        out.applies = true;
        out.classes = classes_.size();
        layer_state<S> st = initial();
        if (opt_.keep_states) {
            out.states.emplace();
            out.states->classes = classes_;
            keep(*out.states, st);
        }
        for (std::size_t k = 0; k < m_.layers.size(); ++k) {
            all_inputs_layer info;
            st = layer(k, st, info);
            out.layers.push_back(info);
            if (opt_.keep_states) keep(*out.states, st);
        }
        const std::size_t eos = classes_.size() - 1;
        const std::vector<double>& e = st.eps[eos][0];
        out.n_influence = up_norm(e);
        if (!std::isfinite(out.n_influence)) out.reason = why_.empty() ? "a change bound is infinite" : why_;
        if (m_.out.type == model::readout<rational>::kind::softmax) out.n_prob = readout_factor(e);
        return out;
    }

private:
    static void keep(all_inputs_states& out, const layer_state<S>& st) {
        auto& box = out.box.emplace_back();
        for (const auto& per_class : st.Y) {
            auto& bc = box.emplace_back();
            for (const auto& b : per_class) {
                auto& bt = bc.emplace_back();
                for (const auto& v : b) bt.emplace_back(down(v), up(v));
            }
        }
        out.eps.push_back(st.eps);
        out.Delta.push_back(st.Delta);
    }

    std::size_t slots(std::size_t c) const { return classes_[c].eos ? 1 : m_.sigma.symbols.size(); }
    int symbol(std::size_t c, std::size_t t) const {
        return classes_[c].eos ? m_.sigma.eos_index() : static_cast<int>(t);
    }

    /// Keeps the first reason for an infinite bound.
    void note(const std::string& why) const {
        if (why_.empty()) why_ = why;
    }

    std::vector<S> positional(std::size_t c) const {
        const position_class& pc = classes_[c];
        if (!pc.bounded) note("the positional embedding is unbounded on " + pc.label + " at " + range_.to_string());
        if (pc.position && range_.single()) return m_.positional->at<S>(*pc.position, range_.lo, ctx_);
        std::vector<S> out;
        for (const auto& v : pc.positional) out.push_back(from_dinterval<S>(v, ctx_));
        return out;
    }

    /// y^(0) of one symbol on a positional box (no change tracked).
    std::vector<S> initial_box(const std::vector<S>& v, const std::vector<S>& p) const {
        switch (m_.input) {
        case model::input_kind::add: {
            std::vector<S> y = v;
            for (std::size_t c = 0; c < y.size(); ++c) y[c] += p[c];
            return y;
        }
        case model::input_kind::concat: {
            std::vector<S> y = v;
            y.insert(y.end(), p.begin(), p.end());
            return y;
        }
        case model::input_kind::map: {
            box_diff<S> in;
            in.box = v;
            in.box.insert(in.box.end(), p.begin(), p.end());
            return propagate(*ms_.input_fn, in, 1.0, ctx_).box;
        }
        }
        return v;
    }

    layer_state<S> initial() const {
        layer_state<S> st;
        const std::size_t C = classes_.size(), sig = m_.sigma.symbols.size();
        st.Y.resize(C);
        st.eps.resize(C);
        st.Delta.resize(C);
        // The largest |v_a - v_a'| over two different symbols, coordinatewise.
        std::vector<double> dv(m_.token_dim(), 0.0);
        for (std::size_t a = 0; a < sig; ++a)
            for (std::size_t b = a + 1; b < sig; ++b)
                for (std::size_t c = 0; c < dv.size(); ++c)
                    dv[c] = std::max(dv[c], magnitude(ms_.token[a][c] - ms_.token[b][c]));
        for (std::size_t c = 0; c < C; ++c) {
            const std::vector<S> p = positional(c);
            for (std::size_t t = 0; t < slots(c); ++t) {
                st.Y[c].push_back(initial_box(ms_.token[static_cast<std::size_t>(symbol(c, t))], p));
                st.eps[c].emplace_back(d_, 0.0);
            }
            if (classes_[c].eos) continue;
            if (m_.input == model::input_kind::map) {
                std::vector<std::vector<S>> vs;
                for (std::size_t a = 0; a < sig; ++a) vs.push_back(ms_.token[a]);
                box_diff<S> in;
                in.box = hull_boxes(vs);
                in.box.insert(in.box.end(), p.begin(), p.end());
                in.diff = dv;
                in.diff.resize(in.box.size(), 0.0);
                const box_diff<S> f = propagate(*ms_.input_fn, in, 1.0, ctx_);
                if (!f.unbounded.empty()) note("the input map: " + f.unbounded);
                std::vector<double> e = f.diff;
                const std::vector<double> ext = pairwise_extent(st.Y[c]);
                for (std::size_t q = 0; q < e.size(); ++q) e[q] = std::min(e[q], ext[q]);
                st.Delta[c] = std::move(e);
            } else {
                std::vector<double> e = dv;
                e.resize(d_, 0.0); // concat: the positional part does not change
                st.Delta[c] = std::move(e);
            }
        }
        return st;
    }

    head_data<S> head(std::size_t k, std::size_t h) const {
        const auto& hr = m_.layers[k].heads[h];
        const auto& hs = ms_.layers[k].heads[h];
        head_data<S> hd;
        hd.Q = hs.score.Q;
        hd.K = hs.score.K;
        hd.V = model::convert<S>(*value_affine(hr), ctx_);
        S beta = numeric::one<S>(ctx_);
        if (hr.score.beta) {
            if (range_.single()) {
                beta = hr.score.beta->template eval<S>(1, range_.lo, ctx_);
            } else {
                model::formula::position_domain dom;
                dom.n_lo = n_.lo;
                dom.n_hi = n_.hi;
                dom.i_lo = 1;
                dom.i_hi = n_.hi;
                dom.d_lo = 0;
                dom.d_hi = n_.hi;
                beta = from_dinterval<S>(model::formula::range_over_positions(hr.score.beta->ast(), dom), ctx_);
            }
        }
        hd.coef = *hs.score.scale * beta;
        if (!numeric::is_finite(beta))
            note("layer " + std::to_string(k + 1) + " head " + std::to_string(h + 1) +
                 ": beta(n) is unbounded at " + range_.to_string());
        const std::size_t dk = hd.Q.W.rows, D = d_ + 1;
        auto qhat = [&](std::size_t r, std::size_t c) -> S {
            if (c < d_) return hd.Q.W.at(r, c);
            return hd.Q.b.empty() ? numeric::zero<S>(ctx_) : hd.Q.b[r];
        };
        auto khat = [&](std::size_t r, std::size_t c) -> S {
            if (c < d_) return hd.K.W.at(r, c);
            return hd.K.b.empty() ? numeric::zero<S>(ctx_) : hd.K.b[r];
        };
        hd.M.assign(D * D, numeric::zero<S>(ctx_));
        for (std::size_t r = 0; r < dk; ++r)
            for (std::size_t c = 0; c < D; ++c) {
                const S q = qhat(r, c);
                if (down(q) == 0 && up(q) == 0) continue;
                for (std::size_t e = 0; e < D; ++e) numeric::fma_acc(hd.M[c * D + e], q, khat(r, e));
            }
        for (auto& v : hd.M) v = v * hd.coef;
        return hd;
    }

    /// |M ŷ| (rows 0..d-1) or |Mᵀ ŷ| over a box, rounded up.
    std::vector<double> m_times(const head_data<S>& hd, const std::vector<S>& y, bool transpose) const {
        const std::size_t D = d_ + 1;
        std::vector<double> out(d_);
        for (std::size_t c = 0; c < d_; ++c) {
            S acc = numeric::zero<S>(ctx_);
            for (std::size_t e = 0; e < D; ++e) {
                const S& mv = transpose ? hd.M[e * D + c] : hd.M[c * D + e];
                if (down(mv) == 0 && up(mv) == 0) continue;
                numeric::fma_acc(acc, mv, e < d_ ? y[e] : numeric::one<S>(ctx_));
            }
            out[c] = magnitude(acc);
        }
        return out;
    }

    /// What every query of a head reads of the keys.
    struct key_side {
        std::vector<std::vector<S>> kbox, vbox;
        std::vector<std::vector<double>> mk, ek, B, vlo, vhi;
        std::vector<double> osc, A1;
        std::vector<std::vector<std::size_t>> by_hi, by_lo; // per value coordinate
    };

    key_side keys(const head_data<S>& hd, const layer_state<S>& st, const std::vector<std::vector<S>>& hulls) const {
        key_side ks;
        const std::size_t C = classes_.size(), dv = hd.V.W.rows;
        ks.osc.assign(dv, 0.0);
        ks.A1.assign(dv, 0.0);
        std::vector<double> vmax(dv, -inf), vmin(dv, inf);
        for (std::size_t c = 0; c < C; ++c) {
            const std::vector<S>& y = hulls[c];
            ks.kbox.push_back(model::apply_affine(hd.K, y, ctx_));
            ks.vbox.push_back(model::apply_affine(hd.V, y, ctx_));
            ks.mk.push_back(m_times(hd, y, false));
            std::vector<double> e(d_, 0.0);
            for (const auto& et : st.eps[c])
                for (std::size_t q = 0; q < d_; ++q) e[q] = std::max(e[q], et[q]);
            const std::vector<double> ve = abs_apply(hd.V, e);
            for (std::size_t r = 0; r < dv; ++r) ks.A1[r] = std::max(ks.A1[r], ve[r]);
            ks.ek.push_back(std::move(e));
            ks.B.push_back(classes_[c].eos ? std::vector<double>(dv, 0.0) : abs_apply(hd.V, st.Delta[c]));
            std::vector<double> lo(dv), hi(dv);
            for (std::size_t r = 0; r < dv; ++r) {
                lo[r] = down(ks.vbox.back()[r]);
                hi[r] = up(ks.vbox.back()[r]);
                vmin[r] = std::min(vmin[r], lo[r]);
                vmax[r] = std::max(vmax[r], hi[r]);
            }
            ks.vlo.push_back(std::move(lo));
            ks.vhi.push_back(std::move(hi));
        }
        for (std::size_t r = 0; r < dv; ++r) {
            ks.osc[r] = std::max(0.0, up_sub(vmax[r], vmin[r]));
            std::vector<std::size_t> idx(C);
            std::iota(idx.begin(), idx.end(), 0);
            std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return ks.vhi[a][r] > ks.vhi[b][r]; });
            ks.by_hi.push_back(idx);
            std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return ks.vlo[a][r] < ks.vlo[b][r]; });
            ks.by_lo.push_back(std::move(idx));
        }
        return ks;
    }

    /// Bounds of the class masses (Wlo, Whi) and of n times one changed key's weight (nu) at a
    /// query of class c, from the score ranges [lo_j, hi_j] shifted by `top` (the weights are
    /// invariant under the shift): e^(s - top) in [elo, ehi] by exp_fast and its error bound.
    void weights(std::size_t c, const std::vector<double>& lo, const std::vector<double>& hi, double top,
                 std::vector<double>& Whi, std::vector<double>& Wlo, std::vector<double>& nu,
                 double& nu_max) const {
        using numeric::interval_detail::add_down;
        using numeric::interval_detail::mul_down;
        const std::size_t C = classes_.size();
        std::vector<double> elo(C), ehi(C);
        for (std::size_t j = 0; j < C; ++j) {
            elo[j] = exp_down(add_down(lo[j], -top));
            ehi[j] = exp_up(up_sub(hi[j], top));
        }
        auto skip_nu = [&](std::size_t j) { return classes_[j].eos || (classes_[j].one && j == c); };
        if (n_.single()) {
            // Exact class sizes: every quantity is a monotone function of elo and ehi.
            double Ylo = 0, Yhi = 0;
            for (std::size_t j = 0; j < C; ++j) {
                Ylo = add_down(Ylo, mul_down(classes_[j].count_lo, elo[j]));
                Yhi = up_add(Yhi, up_mul(classes_[j].count_hi, ehi[j]));
            }
            for (std::size_t j = 0; j < C; ++j) {
                const double cnt = classes_[j].count_lo;
                const double X = up_mul(cnt, ehi[j]);
                const double Z = std::max(0.0, add_down(Ylo, -up_mul(cnt, elo[j])));
                Whi[j] = std::min(1.0, up_div(X, add_down(X, Z)));
                const double X2 = mul_down(cnt, elo[j]);
                const double Z2 = up_sub(Yhi, mul_down(cnt, ehi[j]));
                Wlo[j] = std::max(0.0, std::min(Whi[j], div_down(X2, up_add(X2, Z2))));
                if (skip_nu(j)) continue;
                const double others = std::max(0.0, add_down(Ylo, -elo[j]));
                nu[j] = std::min(n_.hi, up_div(up_mul(n_.lo, ehi[j]), add_down(ehi[j], others)));
                nu_max = std::max(nu_max, nu[j]);
            }
            return;
        }
        // A range of lengths: class sizes affine in n, ratios bounded at the range's ends.
        using D = dinterval;
        const numeric::context ctx{53};
        lin<D> Ylo{D(0.0), D(0.0)}, Yhi = Ylo;
        for (std::size_t j = 0; j < C; ++j) {
            const position_class& pc = classes_[j];
            Ylo.a += D(pc.slope_lo) * D(elo[j]);
            Ylo.b += D(pc.count_lo) * D(elo[j]);
            Yhi.a += D(pc.slope_hi) * D(ehi[j]);
            Yhi.b += D(pc.count_hi) * D(ehi[j]);
        }
        for (std::size_t j = 0; j < C; ++j) {
            const position_class& pc = classes_[j];
            const D slo(pc.slope_lo), clo(pc.count_lo), shi(pc.slope_hi), chi(pc.count_hi);
            const D El(elo[j]), Eh(ehi[j]);
            const lin<D> X{shi * Eh, chi * Eh};
            const lin<D> den{X.a + Ylo.a - slo * El, X.b + Ylo.b - clo * El};
            if (auto v = mobius_range(X, den, n_, ctx)) Whi[j] = std::min(1.0, v->second);
            const lin<D> X2{slo * El, clo * El};
            const lin<D> den2{X2.a + Yhi.a - shi * Eh, X2.b + Yhi.b - chi * Eh};
            if (auto v = mobius_range(X2, den2, n_, ctx)) Wlo[j] = std::max(0.0, std::min(Whi[j], v->first));
            if (skip_nu(j)) continue;
            const lin<D> P{Eh, D(0.0)};
            const lin<D> Q{Ylo.a, Ylo.b + Eh - El};
            if (auto v = mobius_range(P, Q, n_, ctx)) nu[j] = std::min(n_.hi, v->second);
            else nu[j] = n_.hi;
            nu_max = std::max(nu_max, nu[j]);
        }
    }

    /// One query (class c, symbol slot t) of one head: the head output's box and the scaled
    /// change bound of the head output at a query i != p; `nu_max` receives the largest n·w̄.
    std::pair<std::vector<S>, std::vector<double>> query(const head_data<S>& hd, const key_side& ks,
                                                          std::size_t c, const std::vector<S>& y,
                                                          const std::vector<double>& eq, double& nu_max) const {
        const std::size_t C = classes_.size(), dv = hd.V.W.rows;
        const std::vector<S> qb = model::apply_affine(hd.Q, y, ctx_);
        const std::vector<double> mq = m_times(hd, y, true);
        // Score ranges, shifted by the largest upper end (the weights are invariant).
        std::vector<double> lo(C), hi(C);
        double top = -inf;
        for (std::size_t j = 0; j < C; ++j) {
            const S s = hd.coef * numeric::dot_acc(numeric::zero<S>(ctx_), qb.data(), ks.kbox[j].data(), qb.size());
            lo[j] = down(s);
            hi[j] = up(s);
            top = std::max(top, hi[j]);
        }
        std::vector<double> Whi(C, 1.0), Wlo(C, 0.0), nu(C, inf);
        if (std::isfinite(top)) weights(c, lo, hi, top, Whi, Wlo, nu, nu_max);
        else nu_max = inf;
        // The head output's box: the largest and smallest Σ W_j v_j over masses in
        // [Wlo, Whi] summing to 1 (weak duality at the greedy's threshold λ).
        std::vector<S> box;
        box.reserve(dv);
        for (std::size_t r = 0; r < dv; ++r) {
            double base = 0;
            for (std::size_t j = 0; j < C; ++j) base += Wlo[j];
            auto threshold = [&](const std::vector<std::size_t>& order, const std::vector<std::vector<double>>& v) {
                double rem = 1 - base, lam = v[order.back()][r];
                for (std::size_t j : order) {
                    const double capj = Whi[j] - Wlo[j];
                    if (capj >= rem) {
                        lam = v[j][r];
                        break;
                    }
                    rem -= capj;
                }
                return lam;
            };
            const double lu = threshold(ks.by_hi[r], ks.vhi), ll = threshold(ks.by_lo[r], ks.vlo);
            // upper = λ + Σ [Whi (vhi - λ)+ - Wlo (λ - vhi)+] rounded up; lower likewise down.
            using numeric::interval_detail::add_down;
            using numeric::interval_detail::mul_down;
            double upper = lu, lower = ll;
            for (std::size_t j = 0; j < C; ++j) {
                const double vh = ks.vhi[j][r], vl = ks.vlo[j][r];
                if (vh > lu) upper = up_add(upper, up_mul(Whi[j], up_sub(vh, lu)));
                else upper = up_sub(upper, mul_down(Wlo[j], add_down(lu, -vh)));
                if (vl < ll) lower = add_down(lower, -up_mul(Whi[j], up_sub(ll, vl)));
                else lower = add_down(lower, mul_down(Wlo[j], add_down(vl, -ll)));
            }
            double vmin = inf, vmax = -inf;
            for (std::size_t j = 0; j < C; ++j) {
                vmin = std::min(vmin, ks.vlo[j][r]);
                vmax = std::max(vmax, ks.vhi[j][r]);
            }
            upper = std::min(upper, vmax);
            lower = std::max(lower, vmin);
            if (!(lower <= upper)) lower = vmin, upper = vmax;
            box.push_back(span<S>(lower, upper, ctx_));
        }
        // The scaled change at a query i != p (docs/bounds.md, "The attention step").
        const bool own = classes_[c].one;
        double s_max = 0, s_p = 0;
        std::vector<double> t1 = ks.A1;
        for (std::size_t j = 0; j < C; ++j) {
            s_max = std::max(s_max, up_add(dot_up(eq, ks.mk[j]), dot_up(mq, ks.ek[j])));
            if (classes_[j].eos || (own && j == c)) continue;
            if (opt_.drop != dropped_term::changed_key)
                for (std::size_t r = 0; r < dv; ++r) t1[r] = std::max(t1[r], up_add(ks.A1[r], up_mul(nu[j], ks.B[j][r])));
            const double uj = up_add(up_div(dot_up(eq, ks.mk[j]), n_.lo), dot_up(mq, delta_of(j)));
            s_p = std::max(s_p, up_mul(nu[j], uj));
        }
        double t2 = std::min(n_.hi, up_add(s_max, s_p));
        if (opt_.drop == dropped_term::weight_change) t2 = 0;
        std::vector<double> db(dv);
        for (std::size_t r = 0; r < dv; ++r) db[r] = std::min(up_add(t1[r], up_mul(t2, ks.osc[r])), up_mul(n_.hi, width(box[r])));
        return {std::move(box), std::move(db)};
    }

    const std::vector<double>& delta_of(std::size_t j) const { return (*delta_)[j]; }

    layer_state<S> layer(std::size_t k, const layer_state<S>& st, all_inputs_layer& info) {
        const auto& L = ms_.layers[k];
        const std::size_t C = classes_.size(), H = L.heads.size();
        const bool top = k + 1 == m_.layers.size();
        delta_ = &st.Delta;
        std::vector<std::vector<S>> hulls;
        for (std::size_t c = 0; c < C; ++c) hulls.push_back(hull_boxes(st.Y[c]));
        // The queries: every (class, symbol), or only eos at the last layer.
        std::vector<std::pair<std::size_t, std::size_t>> qs;
        for (std::size_t c = top ? C - 1 : 0; c < C; ++c)
            for (std::size_t t = 0; t < slots(c); ++t) qs.emplace_back(c, t);
        // [query][head]: the head output's box and scaled change; [class][head]: e_Δ's part.
        std::vector<std::vector<std::vector<S>>> bbox(qs.size(), std::vector<std::vector<S>>(H));
        std::vector<std::vector<std::vector<double>>> beps(qs.size(), std::vector<std::vector<double>>(H));
        std::vector<std::vector<std::vector<double>>> bDelta(C, std::vector<std::vector<double>>(H));
        std::vector<double> nu_of(qs.size(), 0.0);
        util::parallel_options pool;
        pool.on_thread_exit = [] {
            flint_cleanup();
            mpfr_free_cache();
        };
        for (std::size_t h = 0; h < H; ++h) {
            const head_data<S> hd = head(k, h);
            const key_side ks = keys(hd, st, hulls);
            util::parallel_for(qs.size(), threads_, [&](std::size_t q, int) {
                const auto [c, t] = qs[q];
                auto [b, e] = query(hd, ks, c, st.Y[c][t], st.eps[c][t], nu_of[q]);
                bbox[q][h] = std::move(b);
                beps[q][h] = std::move(e);
            }, pool);
            if (top) continue;
            // The changed position's own head output (unscaled; docs/bounds.md).
            for (std::size_t c = 0; c < C; ++c) {
                if (classes_[c].eos) continue;
                const std::vector<double> mqh = m_times(hd, hulls[c], true);
                const std::size_t dv = hd.V.W.rows;
                const std::vector<double> own = abs_apply(hd.V, st.Delta[c]);
                double s = up_add(dot_up(st.Delta[c], ks.mk[c]), dot_up(mqh, st.Delta[c]));
                for (std::size_t j = 0; j < C; ++j)
                    s = std::max(s, up_add(dot_up(st.Delta[c], ks.mk[j]), up_div(dot_up(mqh, ks.ek[j]), n_.lo)));
                double t2 = std::min(1.0, s);
                if (opt_.drop == dropped_term::weight_change) t2 = 0;
                std::vector<std::vector<S>> per;
                for (std::size_t q = 0; q < qs.size(); ++q)
                    if (qs[q].first == c) per.push_back(bbox[q][h]);
                const std::vector<double> ext = pairwise_extent(per);
                std::vector<double> e(dv);
                for (std::size_t r = 0; r < dv; ++r)
                    e[r] = std::min(ext[r], up_add(std::max(up_div(ks.A1[r], n_.lo), own[r]), up_mul(t2, ks.osc[r])));
                bDelta[c][h] = std::move(e);
            }
        }
        for (double v : nu_of) info.max_weight = std::max(info.max_weight, v);
        if (!std::isfinite(info.max_weight))
            note("layer " + std::to_string(k + 1) + ": the weight a changed key can get is not O(1/n) at " +
                 range_.to_string() + " (the scores' ranges grow with n)");
        // The update F_k on the boxes, with the changes.
        layer_state<S> next;
        next.Y.resize(C);
        next.eps.resize(C);
        next.Delta.resize(C);
        std::vector<box_diff<S>> outs(qs.size());
        util::parallel_for(qs.size(), threads_, [&](std::size_t q, int) {
            const auto [c, t] = qs[q];
            box_diff<S> in;
            in.box = st.Y[c][t];
            in.diff = st.eps[c][t];
            for (std::size_t h = 0; h < H; ++h) {
                in.box.insert(in.box.end(), bbox[q][h].begin(), bbox[q][h].end());
                in.diff.insert(in.diff.end(), beps[q][h].begin(), beps[q][h].end());
            }
            outs[q] = propagate(L.update, in, n_.hi, ctx_);
        }, pool);
        for (const auto& o : outs)
            if (!o.unbounded.empty()) {
                note("layer " + std::to_string(k + 1) + " update: " + o.unbounded);
                break;
            }
        for (std::size_t q = 0; q < qs.size(); ++q) {
            const auto [c, t] = qs[q];
            next.Y[c].push_back(std::move(outs[q].box));
            next.eps[c].push_back(std::move(outs[q].diff));
            info.delta = std::max(info.delta, up_norm(next.eps[c].back()));
            for (const auto& v : next.Y[c].back()) info.box_width = std::max(info.box_width, width(v));
        }
        if (!top)
            for (std::size_t c = 0; c < C; ++c) {
                if (classes_[c].eos) continue;
                box_diff<S> in;
                in.box = hulls[c];
                in.diff = st.Delta[c];
                for (std::size_t h = 0; h < H; ++h) {
                    std::vector<std::vector<S>> per;
                    for (std::size_t q = 0; q < qs.size(); ++q)
                        if (qs[q].first == c) per.push_back(bbox[q][h]);
                    const std::vector<S> hb = hull_boxes(per);
                    in.box.insert(in.box.end(), hb.begin(), hb.end());
                    in.diff.insert(in.diff.end(), bDelta[c][h].begin(), bDelta[c][h].end());
                }
                const box_diff<S> f = propagate(L.update, in, 1.0, ctx_);
                if (!f.unbounded.empty()) note("layer " + std::to_string(k + 1) + " update: " + f.unbounded);
                std::vector<double> e = f.diff;
                const std::vector<double> ext = pairwise_extent(next.Y[c]);
                for (std::size_t q = 0; q < e.size(); ++q) e[q] = std::min(e[q], ext[q]);
                info.Delta = std::max(info.Delta, up_norm(e));
                next.Delta[c] = std::move(e);
            }
        delta_ = nullptr;
        return next;
    }

    /// max over pairs of rows of Σ_c |W_r,c - W_r',c| e_c / 4 (osc(Δz)/4 bounds ||Δp||_∞).
    double readout_factor(const std::vector<double>& e) const {
        const auto& W = m_.out.logits.W;
        const numeric::context ctx{64};
        double best = 0;
        for (std::size_t r = 0; r < W.rows; ++r)
            for (std::size_t s = r + 1; s < W.rows; ++s) {
                double acc = 0;
                for (std::size_t c = 0; c < W.cols; ++c) {
                    const rational diff = numeric::abs(W.at(r, c) - W.at(s, c));
                    if (diff == 0) continue;
                    acc = up_add(acc, up_mul(up(dinterval::from_rational(diff, ctx)), e[c]));
                }
                best = std::max(best, acc);
            }
        return up_div(best, 4.0);
    }

    const model::model<rational>& m_;
    model::model<S> ms_;
    const std::vector<position_class>& classes_;
    length_range range_;
    all_inputs_options opt_;
    numeric::context ctx_;
    span_n n_;
    std::size_t d_ = 0;
    int threads_ = 1;
    const std::vector<std::vector<double>>* delta_ = nullptr;
    mutable std::string why_;
};

/// Why the bound does not apply to m, or empty.
std::string not_applicable(const model::model<rational>& m) {
    for (std::size_t k = 0; k < m.layers.size(); ++k)
        if (m.layers[k].mask != model::mask_kind::none)
            return "layer " + std::to_string(k + 1) +
                   " is causally masked (the bound over every input is derived for unmasked "
                   "layers, theory.md §2.4)";
    for (std::size_t k = 0; k < m.layers.size(); ++k)
        for (std::size_t h = 0; h < m.layers[k].heads.size(); ++h) {
            const auto& hd = m.layers[k].heads[h];
            const std::string where = "layer " + std::to_string(k + 1) + " head " + std::to_string(h + 1);
            if (hd.score.type != model::score_spec<rational>::kind::dot)
                return where + " scores with a map (the bound needs dot-product scores)";
            if (!value_affine(hd)) return where + "'s value is not affine";
        }
    if (m.out.type == model::readout<rational>::kind::softmax && m.out.logits.W.rows > 4096)
        return "the readout has more than 4096 rows";
    return {};
}

} // namespace

std::optional<std::string> all_inputs_unsupported(const model::model<rational>& m) {
    std::string why = not_applicable(m);
    if (why.empty()) return std::nullopt;
    return why;
}

const char* to_string(dropped_term t) {
    switch (t) {
    case dropped_term::none: return "none";
    case dropped_term::changed_key: return "changed-key";
    case dropped_term::weight_change: return "weight-change";
    }
    return "?";
}

double all_inputs_result::influence_at(long n) const { return up_div(n_influence, static_cast<double>(n)); }
std::optional<double> all_inputs_result::prob_at(long n) const {
    if (!n_prob) return std::nullopt;
    return up_div(*n_prob, static_cast<double>(n));
}

template <class S>
all_inputs_result all_inputs_bound(const model::model<rational>& m, const length_range& r,
                                   const all_inputs_options& opt, const numeric::context& ctx) {
    if (r.lo < 2) throw precondition_error("the bound over every input needs n >= 2, got " + std::to_string(r.lo));
    all_inputs_result out;
    out.lengths = r;
    out.scalar = std::string(numeric::scalar_traits<S>::name);
    if (std::string why = not_applicable(m); !why.empty()) {
        out.reason = why;
        out.n_influence = inf;
        return out;
    }
    std::vector<position_class> classes;
    if (r.single()) model::check_length(m, r.lo);
    try {
        if (r.single()) {
            classes = classes_at(m, r.lo, opt.classes);
        } else {
            auto cl = classes_over(m, r, opt.classes);
            if (!cl) throw precondition_error("no classes of positions fit the lengths " + r.to_string());
            classes = std::move(*cl);
        }
        engine<S> e(m, classes, r, opt, ctx);
        out = e.run();
        out.scalar = std::string(numeric::scalar_traits<S>::name);
    } catch (const numeric::undefined_error& e) {
        out.applies = true;
        out.classes = classes.size();
        out.reason = "no bound: " + e.message();
        out.n_influence = inf;
    }
    return out;
}

template all_inputs_result all_inputs_bound<dinterval>(const model::model<rational>&, const length_range&,
                                                       const all_inputs_options&, const numeric::context&);
template all_inputs_result all_inputs_bound<arb_ball>(const model::model<rational>&, const length_range&,
                                                      const all_inputs_options&, const numeric::context&);

all_inputs_result all_inputs_at(const model::model<rational>& m, long n, const all_inputs_options& opt) {
    length_range r;
    r.lo = n;
    r.hi = n;
    return all_inputs_bound<dinterval>(m, r, opt, numeric::context{53});
}

every_n_result every_n_bound(const model::model<rational>& m, const all_inputs_options& opt) {
    every_n_result res;
    if (std::string why = not_applicable(m); !why.empty()) {
        res.reason = why;
        return res;
    }
    const long small = std::max(opt.small_n, opt.classes.head + opt.classes.tail + 2);
    const auto max_len = m.positional->max_length();
    const long P = positional_period(m);
    auto take = [&](all_inputs_result r) {
        const bool first = res.parts.empty();
        if (first || r.n_influence > res.K_star) {
            res.K_star = r.n_influence;
            res.worst = res.parts.size();
        }
        if (r.n_prob) res.c_star = first ? *r.n_prob : std::max(res.c_star.value_or(0.0), *r.n_prob);
        res.parts.push_back(std::move(r));
    };
    for (long n = 2; n < small && (!max_len || n <= *max_len); ++n) take(all_inputs_at(m, n, opt));
    res.n0 = small;
    long lo = small;
    for (int j = 0; j <= opt.open_after; ++j) {
        if (max_len && lo > *max_len) break;
        length_range r;
        r.lo = lo;
        if (j < opt.open_after) r.hi = std::max(2L, opt.range_growth) * lo - 1;
        if (max_len && (!r.hi || *r.hi > *max_len)) r.hi = *max_len;
        r.period = P;
        for (long res_n = 0; res_n < P; ++res_n) {
            if (P > 1) r.residue = res_n;
            // Fewer cells: wider boxes but relatively tighter class sizes; every choice is a
            // bound, so the smallest is kept.
            std::optional<all_inputs_result> best;
            std::vector<std::size_t> tried;
            for (std::size_t cells : {opt.classes.cells, opt.classes.cells / 8, std::size_t{1}}) {
                if (cells < 1 || std::find(tried.begin(), tried.end(), cells) != tried.end()) continue;
                tried.push_back(cells);
                all_inputs_options o = opt;
                o.classes.cells = cells;
                all_inputs_result one = all_inputs_bound<dinterval>(m, r, o, numeric::context{53});
                if (!best || one.n_influence < best->n_influence) best = std::move(one);
            }
            take(std::move(*best));
        }
        if (!r.hi) break;
        lo = *r.hi + 1;
    }
    res.found = std::isfinite(res.K_star);
    if (!res.found) {
        const auto& w = res.parts[res.worst];
        res.reason = w.reason.empty() ? "no finite bound at " + w.lengths.to_string() +
                                            " (a quantity of the bound grows with n or a map is not "
                                            "Lipschitz on its box)"
                                      : w.reason;
    }
    return res;
}

numeric::arb_ball cross_entropy_floor(double eta, long precision_bits) {
    const numeric::context ctx{precision_bits};
    if (!std::isfinite(eta)) {
        arb_ball r(precision_bits);
        arb_neg_inf(r.raw());
        return r;
    }
    const arb_ball e = arb_ball::from_double(eta, ctx);
    const arb_ball one = numeric::one<arb_ball>(ctx);
    const arb_ball two = numeric::from_int<arb_ball>(2, ctx);
    // A cross-entropy is never negative: 0 is a floor too (the formula's is below it once
    // eta > 1).
    const arb_ball f = lower(one - numeric::log(one + e) / numeric::log(two));
    if (numeric::sign(f, ctx) == numeric::order::less) return numeric::zero<arb_ball>(ctx);
    return f;
}

std::string bound_decimal(double x, int digits) {
    if (!std::isfinite(x)) return "inf";
    return upper_decimal(arb_ball::from_double(x, numeric::context{64}), digits);
}

} // namespace attnprop::analysis
