// The certified double soft-attention row (soft_impl.hpp, soft_rows<dinterval>).
//
// Notation (docs/scalars.md, "Soft-attention rows"): u = 2^-53; keys k_j = m_j +- r_j and
// values v_j = w_j +- t_j componentwise (midpoint, radius); the query q = a +- b. The exact row
// is b_c = N_c / D with e_j = exp(q . k_j - c) for any constant c, N_c = sum_j e_j v_jc and
// D = sum_j e_j. We compute in double:
//   s_j = fl(a . m_j)               |s_j - q . k_j| <= rho for every j, with
//   rho = |a|_inf max_j (g_dk |m_j|_1 + |r_j|_1) + |b|_inf max_j (|m_j|_1 + |r_j|_1)
//   (g_w = (w + 1) 2^-52 bounds the rounding of a w-term dot product in any order);
//   x_j = fl(s_j - M), M = max_j s_j, |x_j - (q . k_j - M)| <= rho' = rho + u (M - min_j s_j);
//   E_j = exp_fast(x_j) = e_j (1 + theta_j), |theta_j| <= tau = e^rho' (1 + eps) - 1
//   (eps = exp_fast_rel_error), for x_j >= -707; keys with x_j < -707 get E_j = 0 and
//   e_j in [0, e^(-707 + rho')] (their count times that bound is Z);
//   D^ = fl(sum E_j), N^_c = fl(sum E_j w_jc), S^_c = fl(sum E_j |w_jc|), each summed in
//   blocks of 64 keys (partial sums, then their sum).
// With g = g_(b + B) (b = min(n, 64) terms per block, B blocks: a product and b - 1 additions
// within a block, B - 1 between blocks, so every term passes through at most b + B roundings),
// T_c = max_j t_jc and V_c = max_j |w_jc|:
//   |D - D^| <= ((tau + g) D^) / (1 - g) + Z
//   |N_c - N^_c| <= ((tau + g) S^_c + (1 + tau) T_c D^) / (1 - g) + Z (V_c + T_c)
// Every bound is a sum of products of nonnegative doubles; computed with rounding to nearest
// (at most 8 operations, relative error below 8.1 u), multiplied by 1 + 2^-49 (itself rounded:
// a factor of at least 1 + 15 u) and increased by 2^-1000 (underflow) it is an upper bound.
// tau is rounded up explicitly: a value of e^rho' (1 + eps) rounded up, minus 1 (exact, by
// Sterbenz), one ulp up; the ulp covers 1 / (1 - eps) - (1 + eps) = O(eps^2). The output is [N^_c +- R_N] / [D^ +- R_D] in interval
// division (directed rounding).
#include "attention/soft.hpp"

#include "numeric/dinterval_raw.hpp"
#include "numeric/elementary.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnprop::attention {

namespace {

using numeric::dinterval;
using numeric::interval;
using numeric::interval_detail::next_up;

constexpr double u = 0x1p-53;
constexpr double slack = 1.0 + 0x1p-49;
constexpr double tiny = 0x1p-1000;
constexpr double max_finite = std::numeric_limits<double>::max();


/// g_w = (w + 1) 2^-52 >= w u / (1 - w u), the relative bound of a w-term dot product.
double gamma_of(std::size_t w) { return static_cast<double>(w + 1) * 0x1p-52; }

/// e2[j] = fl(E[j] X[j]) where that is at least 2^-1000, else 0 (NaN included); whether some
/// product is below. Two lanes at a time by the compiler's vector extensions (GCC and Clang:
/// the same products and comparisons as the scalar loop, which its vectoriser leaves scalar).
bool scaled_products(const double* __restrict E, const double* __restrict X, double* __restrict e2,
                     std::size_t n) {
    using v2d = double __attribute__((vector_size(16)));
    using v2i = long long __attribute__((vector_size(16)));
    const v2d lim = {0x1p-1000, 0x1p-1000};
    v2i small = {0, 0};
    std::size_t j = 0;
    for (; j + 2 <= n; j += 2) {
        v2d e, x;
        std::memcpy(&e, E + j, sizeof e);
        std::memcpy(&x, X + j, sizeof x);
        const v2d v = e * x;
        const v2i keep = v >= lim;
        const v2d r = reinterpret_cast<v2d>(reinterpret_cast<v2i>(v) & keep);
        std::memcpy(e2 + j, &r, sizeof r);
        small |= ~keep;
    }
    bool any = (small[0] | small[1]) != 0;
    for (; j < n; ++j) {
        const double v = E[j] * X[j];
        const bool keep = v >= 0x1p-1000;
        e2[j] = keep ? v : 0.0;
        any = any || !keep;
    }
    return any;
}

} // namespace

bool& soft_rows<dinterval>::drop_error_bound_for_testing() {
    static bool drop = false;
    return drop;
}

soft_rows<dinterval>::soft_rows(const std::vector<vec<I>>& keys, const std::vector<vec<I>>& values,
                                const numeric::context& ctx)
    : keys_(keys), values_(values), ctx_(ctx), n_(keys.size()), dk_(keys.front().size()),
      dv_(values.front().size()), kmid_(n_ * dk_), vmid_(n_ * dv_), vrad_(dv_, 0.0),
      vabs_(dv_, 0.0) {
    const double gk = gamma_of(dk_);
    const double norm_slack = 1.0 + gamma_of(dk_ + 4);
    for (std::size_t j = 0; j < n_ && finite_; ++j) {
        double m1 = 0, r1 = 0;
        for (std::size_t t = 0; t < dk_; ++t) {
            double m = 0, r = 0;
            if (!mid_rad(keys[j][t], m, r)) finite_ = false;
            kmid_[j * dk_ + t] = m;
            m1 += std::fabs(m);
            r1 += r;
        }
        // Sums of dk terms: relative rounding error below gamma_(dk + 2); the factor covers it.
        key_mid_term_ = std::max(key_mid_term_, (gk * m1 + r1) * norm_slack);
        key_rad_term_ = std::max(key_rad_term_, (m1 + r1) * norm_slack);
        for (std::size_t c = 0; c < dv_; ++c) {
            double m = 0, r = 0;
            if (!mid_rad(values[j][c], m, r)) finite_ = false;
            vmid_[j * dv_ + c] = m;
            vrad_[c] = std::max(vrad_[c], r);
            vabs_[c] = std::max(vabs_[c], std::fabs(m));
        }
    }
    if (!(key_rad_term_ <= max_finite)) finite_ = false;
    km_ = kmid_.data();
    vm_ = vmid_.data();
}

soft_rows<dinterval>::soft_rows(const std::vector<vec<I>>& rows, const double* mid, const double* rad,
                                const numeric::context& ctx)
    : keys_(rows), values_(rows), ctx_(ctx), n_(rows.size()), dk_(rows.front().size()),
      dv_(rows.front().size()), vrad_(dv_, 0.0), vabs_(dv_, 0.0) {
    // The same terms as the constructor from intervals, from the given midpoints and radii.
    const double gk = gamma_of(dk_);
    const double norm_slack = 1.0 + gamma_of(dk_ + 4);
    for (std::size_t j = 0; j < n_ && finite_; ++j) {
        const double* m = mid + j * dk_;
        const double* r = rad + j * dk_;
        double m1 = 0, r1 = 0;
        for (std::size_t t = 0; t < dk_; ++t) {
            m1 += std::fabs(m[t]);
            r1 += r[t];
            vrad_[t] = std::max(vrad_[t], r[t]);
            vabs_[t] = std::max(vabs_[t], std::fabs(m[t]));
        }
        if (!(m1 <= max_finite && r1 <= max_finite)) finite_ = false;
        key_mid_term_ = std::max(key_mid_term_, (gk * m1 + r1) * norm_slack);
        key_rad_term_ = std::max(key_rad_term_, (m1 + r1) * norm_slack);
    }
    if (!(key_rad_term_ <= max_finite)) finite_ = false;
    km_ = mid;
    vm_ = mid;
}

soft_rows<dinterval>::soft_rows(const std::vector<vec<I>>& rows, const double* mid, std::size_t d,
                                const double* m1, const double* r1, const double* vrad,
                                const double* vabs, const numeric::context& ctx)
    : keys_(rows), values_(rows), ctx_(ctx), n_(rows.size()), dk_(d), dv_(d), vrad_(vrad, vrad + d),
      vabs_(vabs, vabs + d) {
    // The terms of the constructor from midpoints and radii, from the given sums: the same
    // expressions of m1 and r1 (each a sum of d terms rounded to nearest, covered by
    // norm_slack as there).
    const double gk = gamma_of(dk_);
    const double norm_slack = 1.0 + gamma_of(dk_ + 4);
    for (std::size_t j = 0; j < n_; ++j) {
        if (!(m1[j] <= max_finite && r1[j] <= max_finite)) finite_ = false;
        key_mid_term_ = std::max(key_mid_term_, (gk * m1[j] + r1[j]) * norm_slack);
        key_rad_term_ = std::max(key_rad_term_, (m1[j] + r1[j]) * norm_slack);
    }
    for (std::size_t c = 0; c < d; ++c)
        if (!(vrad_[c] <= max_finite && vabs_[c] <= max_finite)) finite_ = false;
    if (!(key_rad_term_ <= max_finite)) finite_ = false;
    km_ = mid;
    vm_ = mid;
    abs_from_max_ = true;
}

vec<dinterval> soft_rows<dinterval>::row(const vec<I>& q, vec<I>* weights, std::size_t end) {
    if (!finite_) return detail::generic_soft_row(q, keys_, values_, ctx_, weights, end);
    // A masked row takes the keys [0, end): the sums run over n_ = end keys for this call (the
    // bound's key and value terms stay the maxima over every key, a superset).
    struct restore_count {
        std::size_t& n;
        std::size_t full;
        ~restore_count() { n = full; }
    } restore{n_, n_};
    n_ = std::min(n_, end);
    row_sums& rs = sums_;
    if (!sums(q, rs)) return detail::generic_soft_row(q, keys_, values_, ctx_, weights, end);
    vec<I> out;
    out.reserve(dv_);
    for (std::size_t c = 0; c < dv_; ++c) out.push_back(dinterval(rs.num[c] / rs.den));
    if (weights) {
        weights->clear();
        weights->reserve(n_);
        const interval grow(numeric::interval_detail::next_down(1.0 - rs.tau), next_up(1.0 + rs.tau));
        for (std::size_t j = 0; j < n_; ++j) {
            const double e = rs.exp_mid[j];
            const interval ej = e > 0 ? interval(e) * grow : interval(0.0, rs.zero_hi);
            weights->push_back(dinterval(ej / rs.den));
        }
    }
    return out;
}

bool soft_rows<dinterval>::sums(const vec<I>& q, row_sums& out) {
    return sums_core(q, out, drop_error_bound_for_testing());
}

bool soft_rows<dinterval>::sums_replaced(const vec<I>& q, std::size_t j, const vec<I>& kj,
                                         const vec<I>& vj, row_sums& out, bool drop) {
    if (!finite_ || km_ != kmid_.data() || j >= n_ || kj.size() != dk_ || vj.size() != dv_) return false;
    // Key j's and value j's midpoints replaced in place (restored below); the key and value
    // terms of the bound become the largest over the kept rows and the new ones.
    std::vector<double>& saved = save_; // key j, value j, vrad_, vabs_
    saved.resize(dk_ + 3 * dv_);
    double* krow = kmid_.data() + j * dk_;
    double* vrow = vmid_.data() + j * dv_;
    std::copy(krow, krow + dk_, saved.data());
    std::copy(vrow, vrow + dv_, saved.data() + dk_);
    std::copy(vrad_.begin(), vrad_.end(), saved.data() + dk_ + dv_);
    std::copy(vabs_.begin(), vabs_.end(), saved.data() + dk_ + 2 * dv_);
    const double key_mid = key_mid_term_, key_rad = key_rad_term_;
    bool ok = true;
    const double gk = gamma_of(dk_);
    const double norm_slack = 1.0 + gamma_of(dk_ + 4);
    double m1 = 0, r1 = 0;
    for (std::size_t t = 0; t < dk_; ++t) {
        double r = 0;
        if (!mid_rad(kj[t], krow[t], r)) ok = false;
        m1 += std::fabs(krow[t]);
        r1 += r;
    }
    key_mid_term_ = std::max(key_mid_term_, (gk * m1 + r1) * norm_slack);
    key_rad_term_ = std::max(key_rad_term_, (m1 + r1) * norm_slack);
    ok = ok && key_rad_term_ <= max_finite;
    for (std::size_t c = 0; c < dv_; ++c) {
        double r = 0;
        if (!mid_rad(vj[c], vrow[c], r)) ok = false;
        vrad_[c] = std::max(vrad_[c], r);
        vabs_[c] = std::max(vabs_[c], std::fabs(vrow[c]));
    }
    ok = ok && sums_core(q, out, drop);
    std::copy(saved.data(), saved.data() + dk_, krow);
    std::copy(saved.data() + dk_, saved.data() + dk_ + dv_, vrow);
    std::copy(saved.data() + dk_ + dv_, saved.data() + dk_ + 2 * dv_, vrad_.begin());
    std::copy(saved.data() + dk_ + 2 * dv_, saved.data() + dk_ + 3 * dv_, vabs_.begin());
    key_mid_term_ = key_mid;
    key_rad_term_ = key_rad;
    return ok;
}

bool soft_rows<dinterval>::sums_scaled(const vec<I>& q, const weight_factors* f, std::size_t count,
                                       std::size_t skip, row_sums& out, row_sums* scaled,
                                       bool* scaled_ok, bool drop_scaled) {
    const vec<I>* qs[1] = {&q};
    if (!exps_core(qs, 1, &out, drop_error_bound_for_testing(), nullptr))
        return false;
    // Rows 1 .. count of e_: E'_j = fl(E_j X_j) with X_j the factors' midpoints; 0 for key
    // `skip`, and 0 where the product is below 2^-1000 (counted: such a weight is below
    // 2^-998, and an E_j = 0 one below zero_hi hi_max).
    e_.resize((count + 1) * n_);
    out.exp_mid = e_.data();
    const double* E = e_.data();
    const double tau = out.tau;
    for (std::size_t k = 0; k < count; ++k) {
        row_sums& o = scaled[k];
        double* e2 = e_.data() + (k + 1) * n_;
        const double* X = f[k].mid;
        bool ok = skip < n_ && X != nullptr && tau >= 0 && tau < 0.5 && f[k].xi >= 0 &&
                  f[k].xi < 0.5 && f[k].hi_max <= max_finite;
        o.shift = out.shift;
        o.exp_mid = e2;
        o.tau = 0;
        o.zero_hi = 0;
        o.den = interval(0.0);
        if (!ok) {
            std::fill(e2, e2 + n_, 0.0);
            scaled_ok[k] = false;
            continue;
        }
        // The products (every X_j is positive and finite, every E_j finite and nonnegative: no
        // product is NaN; one that is +inf makes the sums' D^ +inf), then, where one is small,
        // the counts.
        std::size_t small_new = 0, small_old = 0;
        if (scaled_products(E, X, e2, n_))
            for (std::size_t j = 0; j < n_; ++j)
                if (e2[j] == 0.0)
                    ++(E[j] == 0.0 ? small_old : small_new);
        if (E[skip] == 0.0)
            --small_old;
        else if (e2[skip] == 0.0)
            --small_new;
        e2[skip] = 0.0;
        scaled_ok[k] = true;
        if (drop_scaled)
            continue;
        // 1 + tau' >= (1 + tau)(1 + xi) / (1 - u) and 1 - tau' <= (1 - tau)(1 - xi) / (1 + u):
        // four roundings to nearest below the factor 1 + 2^-50; t - 1 is exact (t in [1, 4)).
        const double t = ((1.0 + tau) * (1.0 + f[k].xi)) * (1.0 + 0x1p-50);
        o.tau = next_up(t - 1.0);
        const double zo = next_up(out.zero_hi * f[k].hi_max);
        o.zero_hi = std::max(zo, 0x1p-998);
        o.den = interval(
            (static_cast<double>(small_new) * 0x1p-998 + static_cast<double>(small_old) * zo) *
            slack);
    }
    sums_of_exps(count + 1, out, scaled, drop_error_bound_for_testing(), drop_scaled);
    for (std::size_t k = 0; k < count; ++k) {
        bool finite = std::isfinite(scaled[k].den.lo()) && std::isfinite(scaled[k].den.hi());
        for (const auto& c : scaled[k].num)
            finite = finite && std::isfinite(c.lo()) && std::isfinite(c.hi());
        scaled_ok[k] = scaled_ok[k] && finite;
    }
    return true;
}

bool soft_rows<dinterval>::sums_core(const vec<I>& q, row_sums& out, bool drop) {
    const vec<I>* qs[1] = {&q};
    return sums_core_many(qs, 1, &out, drop);
}

bool soft_rows<dinterval>::sums_many(const vec<I>* const* qs, std::size_t count, row_sums* out) {
    return sums_core_many(qs, count, out, drop_error_bound_for_testing());
}

bool soft_rows<dinterval>::sums_many_scored(const vec<I>* const* qs, std::size_t count,
                                            const double* scores, row_sums* out) {
    return scores && sums_core_many(qs, count, out, drop_error_bound_for_testing(), scores);
}

bool soft_rows<dinterval>::sums_core_many(const vec<I>* const* qs, std::size_t count,
                                          row_sums* outs, bool drop, const double* scores) {
    if (!exps_core(qs, count, outs, drop, scores))
        return false;
    sums_of_exps(count, outs[0], outs + 1, drop, drop);
    return true;
}

bool soft_rows<dinterval>::exps_core(const vec<I>* const* qs, std::size_t count, row_sums* outs,
                                     bool drop, const double* scores) {
    if (!finite_ || count == 0) return false;
    // Every query's midpoints (count x dk) and the radius bound rho of its scores.
    qmid_.resize(count * dk_);
    rho_.resize(count);
    for (std::size_t h = 0; h < count; ++h) {
        const vec<I>& q = *qs[h];
        if (q.size() != dk_) return false;
        double* a = qmid_.data() + h * dk_;
        double a_inf = 0, b_inf = 0;
        for (std::size_t t = 0; t < dk_; ++t) {
            double r = 0;
            if (!mid_rad(q[t], a[t], r)) return false;
            a_inf = std::max(a_inf, std::fabs(a[t]));
            b_inf = std::max(b_inf, r);
        }
        rho_[h] = (a_inf * key_mid_term_ + b_inf * key_rad_term_) * slack + tiny;
    }

    // Scores: each summed in index order from 0 (the order the weight tables' recomputation
    // repeats); every query's over one pass of the keys, four keys at a time for independent
    // chains. Query h's scores at s_[h n + j], or the caller's at scores[h n + j].
    if (!scores) s_.resize(count * n_);
    e_.resize(count * n_);
    const double* const all_scores = scores ? scores : s_.data();
    constexpr std::size_t key_block = 64; // keys per block, every query's scores of a block in turn
    for (std::size_t b0 = 0; b0 < n_ && !scores; b0 += key_block) {
        for (std::size_t h = 0; h < count; ++h) {
            const std::size_t b1 = std::min(n_, b0 + key_block);
            const double* a = qmid_.data() + h * dk_;
            double* s = s_.data() + h * n_;
            std::size_t j4 = b0;
            for (; j4 + 4 <= b1; j4 += 4) {
                const double* k0 = km_ + j4 * dk_;
                const double *k1 = k0 + dk_, *k2 = k1 + dk_, *k3 = k2 + dk_;
                double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
                for (std::size_t t = 0; t < dk_; ++t) {
                    c0 += a[t] * k0[t];
                    c1 += a[t] * k1[t];
                    c2 += a[t] * k2[t];
                    c3 += a[t] * k3[t];
                }
                s[j4] = c0;
                s[j4 + 1] = c1;
                s[j4 + 2] = c2;
                s[j4 + 3] = c3;
            }
            for (std::size_t j = j4; j < b1; ++j) {
                const double* k = km_ + j * dk_;
                double acc = 0.0;
                for (std::size_t t = 0; t < dk_; ++t) acc += a[t] * k[t];
                s[j] = acc;
            }
        }
    }

    // Per query: the shift, the exponentials (branch-free, vectorisable) and the count of keys
    // below e^-707, tau and Z. A NaN score (inf - inf in a dot product of finite midpoints)
    // fails the row: std::max would skip it, and its exponential would count as a key below
    // e^-707.
    const double lim = numeric::elementary_detail::exp_fast_min;
    const double eps = numeric::elementary_detail::exp_fast_rel_error;
    for (std::size_t h = 0; h < count; ++h) {
        const double* s = all_scores + h * n_;
        double* e = e_.data() + h * n_;
        double M = s[0], mn = s[0];
        bool nan_score = false;
        for (std::size_t j = 1; j < n_; ++j) {
            M = std::max(M, s[j]);
            mn = std::min(mn, s[j]);
            nan_score = nan_score || std::isnan(s[j]);
        }
        if (nan_score || !(std::isfinite(M) && std::isfinite(mn)) || !(rho_[h] <= 1e300))
            return false;
        const double rho1 = (rho_[h] + u * (M - mn)) * slack + tiny;
        std::size_t clamped = 0;
        for (std::size_t j = 0; j < n_; ++j) {
            const double x = s[j] - M;
            const bool in = x >= lim;
            const double ex = numeric::elementary_detail::exp_fast(in ? x : 0.0);
            e[j] = in ? ex : 0.0;
            clamped += in ? 0 : 1;
        }
        // tau = e^rho1 (1 + eps) - 1, rounded up; Z = clamped * e^(-707 + rho1).
        row_sums& out = outs[h];
        const double e_rho = numeric::exp_enclosure(rho1).hi();
        out.shift = M;
        out.tau = drop ? 0.0 : next_up(next_up(e_rho * (1.0 + eps)) - 1.0);
        out.zero_hi = clamped && !drop ? numeric::exp_enclosure(lim + rho1).hi() : 0.0;
        out.exp_mid = e;
        // Z, kept in out.den's lower end until the sums below.
        out.den = interval(static_cast<double>(clamped) * out.zero_hi * slack);
    }
    return true;
}

void soft_rows<dinterval>::sums_of_exps(std::size_t count, row_sums& first, row_sums* rest,
                                        bool drop_first, bool drop_rest) {
    // The sums, in blocks of `block` keys (a partial sum per block, then the sum of the
    // partial sums): the rounding error is then bounded by g_(block + blocks) instead of g_n.
    // Every query's over one pass of the values. Query h's N, S and their block sums at
    // acc_[4 dv h ...].
    constexpr std::size_t block = 64;
    acc_.assign(4 * dv_ * count, 0.0);
    dsum_.assign(count, 0.0);
    for (std::size_t j0 = 0; j0 < n_; j0 += block) {
        const std::size_t j1 = std::min(n_, j0 + block);
        for (std::size_t h = 0; h < count; ++h)
            std::fill(acc_.data() + 4 * dv_ * h + 2 * dv_, acc_.data() + 4 * dv_ * (h + 1), 0.0);
        for (std::size_t h = 0; h < count; ++h) {
            const double* e = e_.data() + h * n_;
            double* bN = acc_.data() + 4 * dv_ * h + 2 * dv_;
            double* bS = bN + dv_;
            double bD = 0.0;
            if (abs_from_max_) {
                for (std::size_t j = j0; j < j1; ++j) {
                    const double ej = e[j];
                    bD += ej;
                    const double* v = vm_ + j * dv_;
                    for (std::size_t c = 0; c < dv_; ++c) bN[c] += ej * v[c];
                }
            } else {
                for (std::size_t j = j0; j < j1; ++j) {
                    const double ej = e[j];
                    bD += ej;
                    const double* v = vm_ + j * dv_; // dv_ may be 0 (scores only)
                    for (std::size_t c = 0; c < dv_; ++c) {
                        bN[c] += ej * v[c];
                        bS[c] += ej * std::fabs(v[c]);
                    }
                }
            }
            dsum_[h] += bD;
            double* N = acc_.data() + 4 * dv_ * h;
            double* S = N + dv_;
            for (std::size_t c = 0; c < dv_; ++c) {
                N[c] += bN[c];
                S[c] += bS[c];
            }
        }
    }
    const std::size_t blocks = (n_ + block - 1) / block;
    const double g = gamma_of(std::min(n_, block) + blocks);
    const double inv = 1.0 / (1.0 - g); // > 1; its rounding is covered by slack
    for (std::size_t h = 0; h < count; ++h) {
        row_sums& out = h == 0 ? first : rest[h - 1];
        const bool drop = h == 0 ? drop_first : drop_rest;
        const double D = dsum_[h], Z = out.den.lo(), tau = out.tau;
        double* N = acc_.data() + 4 * dv_ * h;
        double* S = N + dv_;
        // Without the sums of |w_jc|: sum_j E_j |w_jc| <= V_c sum_j E_j <= V_c D^ / (1 - g),
        // so V_c D^ takes S^_c's place in the bound (one more rounding, within the slack).
        if (abs_from_max_)
            for (std::size_t c = 0; c < dv_; ++c) S[c] = vabs_[c] * D;
        const double RD = drop ? 0.0 : (((tau + g) * D) * inv + Z) * slack + tiny;
        out.den = interval(D) + interval(-RD, RD);
        out.num.resize(dv_);
        for (std::size_t c = 0; c < dv_; ++c) {
            const double RN = drop ? 0.0
                                   : (((tau + g) * S[c] + (1.0 + tau) * vrad_[c] * D) * inv +
                                      Z * (vabs_[c] + vrad_[c])) *
                                             slack +
                                         tiny;
            out.num[c] = interval(N[c]) + interval(-RN, RN);
        }
    }
}

} // namespace attnprop::attention
