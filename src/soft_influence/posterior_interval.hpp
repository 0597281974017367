#pragma once
/// @file posterior_interval.hpp
/// The certified double fast path of posterior_cache (posterior.hpp): for a kind whose values
/// are intervals of doubles (numeric::has_double_endpoints, the kind's trait), norms and value
/// norms bounded in double arithmetic on midpoints and radii with one a-priori error term, and
/// the weights ω of docs/scalars.md ("One-symbol changes in certified double intervals"),
/// instead of interval operations term by term. Internal to soft_influence/ (posterior.cpp is
/// its one user); posterior_interval.cpp holds what is not a template.

#include "attention/soft.hpp"
#include "numeric/dinterval_raw.hpp"
#include "numeric/elementary.hpp"
#include "soft_influence/norms.hpp"
#include "soft_influence/posterior.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace attnprop::analysis::posterior_detail {

using numeric::arb_ball;
using numeric::dinterval;
using numeric::mid_rad;

/// Enclosures of min(a, b) and max(a, b) of two intervals (exact).
inline dinterval enclosure_min(const dinterval& a, const dinterval& b, long) {
    return {std::min(a.lo(), b.lo()), std::min(a.hi(), b.hi())};
}
inline dinterval enclosure_max(const dinterval& a, const dinterval& b, long) {
    return {std::max(a.lo(), b.lo()), std::max(a.hi(), b.hi())};
}

/// An upper bound of ||v||_2: with a_c = max(|lo_c|, |hi_c|), S = sum a_c^2 is summed in
/// rounding to nearest (every term passes through at most d + 1 roundings, so the computed sum
/// is at least S (1 - u)^(d + 1)); multiplying by 1 + 2^-40 and rounding (one more rounding)
/// restores S for d <= 4094, 2^-1000 covers underflowed squares (at most d 2^-1074; only a
/// nonzero a_c below 2^-500 can underflow), and the square root rounded to nearest is within
/// half an ulp, so one ulp up bounds sqrt(S). Exactly 0 when every a_c is 0.
/// The same bound for the vector of |a[c]| (len <= 4094).
double norm_up_abs(const double* a, std::size_t len);
/// Upper bound of ||v||_2 from the ends of v's intervals (norm_up_abs up to 4094 entries).
double norm_hi(const model::vec<dinterval>& v);

/// The score terms of the certified soft-attention row for a key k = m +- r (midpoints into
/// `mid`): tm = (g_dk |m|_1 + |r|_1) (1 + g_(dk + 4)) and tr = (|m|_1 + |r|_1) (1 + g_(dk + 4)),
/// the factor covering the rounding of the sums (soft_rows_interval.cpp).
bool key_terms(const model::vec<dinterval>& k, double* mid, double& tm, double& tr);
/// The upper-bound point of a double maximum (+inf when not finite).
arb_ball upper_of_max(double mx, long prec);
/// max_j ||rows[j]|| (upper point): the largest upper bound of the norms, compared in doubles
/// (exact), and one ball at the end; +inf when one is not finite.
arb_ball max_norm_up(const std::vector<model::vec<dinterval>>& rows, long prec);
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
                           const numeric::context& ctx);
/// An arb upper bound rounded up to a double (+inf when not finite).
double upper_double(const arb_ball& x);
/// Whether v holds `len` entries.
inline bool sized(const std::vector<double>* v, std::size_t len) { return v && v->size() == len; }

/// The largest of 0 and v_j = a_j + t_j over the rows j < n with a moved bound mv_j in [0,
/// DBL_MAX], t_j = mv_j (Scaled false) or the double after fl(f mv_j) (Scaled true: its bit
/// pattern plus one, for f mv_j >= 0); the other rows' indices, in order, into `others`. None
/// when some v_j is not finite (the caller's row loop decides then). The largest of finite
/// values does not depend on the order, so it is that of a row loop; four running maxima, so
/// it costs about a cycle a row.
template <bool Scaled>
std::optional<double> moved_max(const double* __restrict a, const double* __restrict mv, std::size_t n,
                                double f, std::vector<std::size_t>& others);

/// ω of the top layer (detail::top_omega_upper) from kq = K^T q' and qb = q' . b_K in intervals.
double top_omega(const model::vec<dinterval>& kq, const dinterval& qb,
                 const std::vector<model::vec<dinterval>>& y1, const std::vector<dinterval>& s_top,
                 std::size_t i, const change_hints& hints);

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

} // namespace attnprop::analysis::posterior_detail
