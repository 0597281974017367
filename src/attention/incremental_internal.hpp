#pragma once
// What the translation units of the incremental one-symbol kernel share
// (incremental_influence.hpp): the set-up (incremental_setup.cpp), the generic members
// (incremental_influence.cpp), the raw MPFR kernels (incremental_mpfr.cpp) and the certified
// double kernel (incremental_interval.cpp). Not for other code.

#include "attention/incremental_influence.hpp"
#include "attention/soft.hpp"
#include "numeric/dinterval_raw.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace attnprop::attention::incremental_detail {

using model::vec;
using numeric::dinterval;
using numeric::mpfr_real;

/// The certified soft-attention row's sums (soft_rows<dinterval>::row_sums) for the certified
/// double kernel's constructor; a placeholder for other kinds.
template <class S> struct row_sums_of {
    using type = int;
    struct factors {};
};
template <> struct row_sums_of<dinterval> {
    using type = attention::soft_rows<dinterval>::row_sums;
    using factors = attention::soft_rows<dinterval>::weight_factors;
};

/// A weight-table entry e_ij of the certified double kernel from the certified row's
/// exponential E_j (soft_rows<dinterval>::sums): E_j [1 - tau_i, 1 + tau_i] one ulp outward,
/// with grow = [next_down(1 - tau_i), next_up(1 + tau_i)] (row_growth), or [0, zero_hi] for a
/// key below e^-707 (E_j = 0). The constructor's tables and their recomputation share it.
inline std::pair<double, double> row_growth(double tau) {
    return {numeric::interval_detail::next_down(1.0 - tau), numeric::interval_detail::next_up(1.0 + tau)};
}
inline dinterval table_entry(double e, std::pair<double, double> grow, double zero_hi) {
    if (!(e > 0)) return dinterval(0.0, zero_hi);
    return dinterval(numeric::interval_detail::mul_down_loose(e, grow.first),
                     numeric::interval_detail::mul_up_loose(e, grow.second));
}

/// Whether x is a finite number (NaN and infinities send a row to the full recompute).
template <class S> bool finite(const S& x) { return numeric::is_finite(x); }

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

/// y^(0)'s change at a position whose symbol b becomes a (f_in add or concat): the token
/// embeddings' difference (the token block first for concat), 0 elsewhere.
template <numeric::ExpScalar S>
vec<S> token_change(const model::model<S>& m, std::size_t dim, std::size_t b, std::size_t a,
                    const numeric::context& ctx) {
    vec<S> delta(dim, numeric::zero<S>(ctx));
    for (std::size_t c = 0; c < m.token[a].size(); ++c) delta[c] = m.token[a][c] - m.token[b][c];
    return delta;
}

/// A head's change of the scaled query for y^(0)'s change delta: f Q_W delta.
template <numeric::ExpScalar S>
vec<S> scaled_query_change(const model::head<S>& hd, const vec<S>& delta, std::size_t n,
                           const numeric::context& ctx) {
    model::affine_map<S> qw{hd.score.Q.W, {}, true};
    vec<S> dq = model::apply_affine(qw, delta, ctx);
    const S f = attention::dot_scale(hd, n, ctx);
    for (auto& c : dq) c = c * f;
    return dq;
}

/// A layer-2 head's key projection folded onto the query side: with q the scaled query of y_n,
/// score_j = q . (K y_j + k_b) = u . y_j + c, u = K^T q, c = q . k_b.
template <numeric::ExpScalar S> struct folded_scores {
    vec<S> u;
    S c;
};
template <numeric::ExpScalar S>
folded_scores<S> fold_scores(const model::head<S>& hd, const vec<S>& yn, std::size_t n,
                             const numeric::context& ctx) {
    const vec<S> q = scaled_query(hd, yn, n, ctx);
    const auto& K = hd.score.K;
    folded_scores<S> f{vec<S>(yn.size(), numeric::zero<S>(ctx)),
                       K.b.empty() ? numeric::zero<S>(ctx) : dot(q, K.b, ctx)};
    for (std::size_t r = 0; r < K.W.rows; ++r)
        for (std::size_t c : K.W.nonzero[r]) numeric::fma_acc(f.u[c], K.W.at(r, c), q[r]);
    return f;
}

/// Whether every entry has precision prec (then raw mpfr_t operations into prec-bit targets
/// round exactly as the generic operations do).
inline bool uniform(const vec<mpfr_real>& v, long prec) {
    for (const auto& x : v)
        if (x.precision() != prec) return false;
    return true;
}
inline bool uniform(const std::vector<vec<mpfr_real>>& vs, long prec) {
    for (const auto& v : vs)
        if (!uniform(v, prec)) return false;
    return true;
}

/// acc = a . b (fused multiply-adds from 0, in order: model::dot's operations).
inline void raw_dot(mpfr_ptr acc, const vec<mpfr_real>& a, const vec<mpfr_real>& b) {
    mpfr_set_zero(acc, 1);
    for (std::size_t t = 0; t < a.size(); ++t) mpfr_fma(acc, a[t].raw(), b[t].raw(), acc, MPFR_RNDN);
}

/// The leftmost largest entry (numeric::compare: NaN is a numeric_error, as in the generic
/// kernels).
inline std::size_t leftmost_max(const std::vector<mpfr_real>& s, std::size_t n) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < n; ++j)
        if (numeric::compare(s[j], s[best]) == numeric::order::greater) best = j;
    return best;
}


} // namespace attnprop::attention::incremental_detail
