// The certified double interval path of the incremental one-symbol kernel
// (incremental_influence.hpp): the explicit specialisations of the *_interval members for
// numeric::dinterval, with the fold's block kernels (fold_kernels.hpp) and arithmetic
// (fold_math.hpp).
#include "attention/incremental_internal.hpp"
#include "attention/fold_kernels.hpp"
#include "attention/fold_math.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

namespace attnprop::attention {

using namespace incremental_detail;
using model::vec;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;

// The certified double kernel (incremental_interval_kernel<dinterval>; docs/scalars.md,
// "One-symbol changes in certified double intervals"). Notation: u = 2^-53, an interval
// x = [lo, hi] is held as a midpoint and a radius (mid_rad: [lo, hi] within [m - r, m + r]).
// A folded row is y'_c = y_c + sum_k a_k b_kc over the w = 3H terms (a_k the coefficients
// lambda_h - 1, alpha_h, beta_h of the change, b_k the rows g_h[i], A_h v_p, A_h v'_p). We
// compute M_c = fl(y_m,c + sum_k a_m,k b_m,kc) (any order, fused or not: every term passes
// through at most w + 1 roundings, so the error is at most g_(w+1) (|y_m,c| + sum_k |a_m,k
// b_m,kc|), g_w = (w + 1) 2^-52 >= gamma_w) and, with |a b - a_m b_m| <= |a_m| r_b +
// r_a (|b_m| + r_b) for a in a_m +- r_a, b in b_m +- r_b, and B_k >= max_c |b_m,kc|,
// T_k >= max_c r_b,kc:
//   |y'_c - M_c| <= (r_y,c + g |y_m,c|) + sum_k (|a_m,k| T_k + r_a,k (B_k + T_k) + g |a_m,k| B_k).
// The first bracket is kept per row and coordinate (computed once), the sum once per row and
// change. Both are sums of products of nonnegative doubles, evaluated with rounding to nearest
// in at most 15 H + 5 operations (H <= 1024: fewer than 2^14), so multiplying the result by
// fold_slack = 1 + 2^-36 (> (1 - u)^-(2^14 + 1)) and adding 2^-1000 (underflow) bounds it from
// above. The output is M_c -+ R_c rounded outward.
namespace {

using fold::fold_slack;
using fold::fold_tiny;
using fold::weight_valid;
using fold::weight_widen;

/// Rows of a block of the fold (fold_interval).
constexpr std::size_t fold_block = 64;
/// Heads of layer 1 the interval kernel takes (keeps its operation count below 2^14).
constexpr std::size_t fold_max_heads = 1024;

/// g_w = (w + 1) 2^-52 >= gamma_w.
double gamma_of(std::size_t w) { return static_cast<double>(w + 1) * 0x1p-52; }

/// a + b rounded down without the exactness test: rounded to nearest, then one ulp
/// outward (an overflow gives DBL_MAX down, a valid lower bound, and NaN up, which the
/// callers' finiteness tests catch).
double add_down_loose(double a, double b) { return numeric::interval_detail::next_down(a + b); }

/// weight_upper's quotient before the division: the numerator and the denominator (rounded
/// down); weight_upper is next_up(num / den) when weight_valid (fold_math.hpp) takes them
/// (for several rows, next_up of the largest quotient: rounding to nearest and next_up are
/// monotone).
[[gnu::always_inline]] inline void weight_parts(double el, double eh, double nl, double nh,
                                                double rl, double rh, bool midpoint, double& num,
                                                double& den) {
    if (midpoint) {
        fold::weight_parts_midpoint(el, eh, nl, nh, rl, rh, num, den);
        return;
    }
    num = std::max(eh, nh);
    den = add_down_loose(std::min(el, nl), rl > 0 ? rl : 0.0);
}
/// The a-posteriori bound's weight of one row and change (posterior_cache::bound, layer 1),
/// in units of the row's shift: an upper bound of max(e, e') / (min(e, e') + (D - e)) for e in
/// [el, eh], e' in [nl, nh] and D - e >= max(0, rl) (a sum of positive terms): the larger
/// upper end over the smaller lower end plus rl (when positive), the sum rounded down and the
/// quotient up. +inf when a value is not finite or the denominator not positive. `midpoint`
/// (incremental_fault::midpoint_omega, tests only): the same from midpoints, no rounding.
[[gnu::always_inline]] inline double weight_upper(double el, double eh, double nl, double nh,
                                                  double rl, double rh, bool midpoint) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    double num = 0, den = 0;
    weight_parts(el, eh, nl, nh, rl, rh, midpoint, num, den);
    if (!weight_valid(num, den)) return inf;
    const double q = num / den;
    if (midpoint) return std::isfinite(q) ? q : inf;
    return q <= std::numeric_limits<double>::max() ? numeric::interval_detail::next_up(q) : inf;
}

/// The top layer's ω of the pair bound for a change at position i (changed_states::omega_top)
/// from the certified rows of row n over every key, of x (eo: its exponentials E_j, shift mo,
/// tau_o, zo: zero_hi, constant co = q . b_K) and of x' (the same, primed). With e_j =
/// exp(q . k_j - M) exactly, within E_j [1 - tau, 1 + tau] (within [0, zero_hi] when E_j = 0),
/// the scores are s_j = (c + M) + log e_j, so with F = exp((c + M) - (c' + M'))
///   ω = max(F e_i, e'_i) / sum_j min(F e_j, e'_j)
///     <= max(F_hi E_i (1 + tau), E'_i (1 + tau')) /
///        ((1 - t) (1 - (n + 5) 2^-52) fl(sum_j min(fl(F_lo E_j), E'_j))),
/// t = max(tau, tau'), F in [F_lo, F_hi] (certified exponentials of the interval exponent).
/// Each fl(F_lo E_j) is at most F_lo E_j (1 + u), the min of it and E'_j at most (1 + u) times
/// the exact min, and the n nonnegative terms summed in rounding to nearest at most (1 + u)^(n
/// - 1) times their exact sum: together (1 + u)^n <= 1 / (1 - (n + 5) 2^-52). Every product
/// of the bound rounded outward; +inf when a value is not finite or the denominator not
/// positive (ω <= 1 always holds). `loose` (incremental_fault::loose_top_omega, tests only):
/// x''s weight of key i alone, E'_i / sum_j E'_j (no minimum with x's weights).
double top_omega_bound(const double* eo, double mo, double tau_o, double zo, const dinterval& co,
                       const double* en, double mn, double tau_n, double zn, const dinterval& cn,
                       std::size_t n, std::size_t i, bool loose) {
    using numeric::interval_detail::mul_down;
    using numeric::interval_detail::mul_up;
    using numeric::interval_detail::next_down;
    using numeric::interval_detail::next_up;
    constexpr double inf = std::numeric_limits<double>::infinity();
    const dinterval delta = (co + dinterval(mo)) - (cn + dinterval(mn));
    if (!finite(delta) || i >= n || n >= (std::size_t{1} << 50)) return inf;
    if (loose) { // x''s weight of key i alone
        double s = 0;
        for (std::size_t j = 0; j < n; ++j) s += en[j];
        const double w = en[i] / s;
        return w <= std::numeric_limits<double>::max() ? w : inf;
    }
    const double f_lo = numeric::exp_enclosure(delta.lo()).lo(),
                 f_hi = numeric::exp_enclosure(delta.hi()).hi();
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) sum += std::min(f_lo * eo[j], en[j]);
    const double ei = eo[i] > 0 ? mul_up(eo[i], next_up(1.0 + tau_o)) : zo;
    const double ni = en[i] > 0 ? mul_up(en[i], next_up(1.0 + tau_n)) : zn;
    const double num = std::max(mul_up(f_hi, ei), ni);
    const double t = std::max(tau_o, tau_n);
    const double den =
        mul_down(mul_down(sum, 1.0 - static_cast<double>(n + 5) * 0x1p-52), next_down(1.0 - t));
    if (!(den > 0 && den <= std::numeric_limits<double>::max()) || std::isnan(num)) return inf;
    const double w = num / den;
    return w <= std::numeric_limits<double>::max() ? next_up(w) : inf;
}

} // namespace

template <>
bool incremental_influence<dinterval>::row_p_prepared(const change& ch,
                                                      std::vector<vec<dinterval>>& b) const {
    // The constructor's sums over the keys j != p (x's row p's weights times X_j), the new key
    // p's term e'_pp = exp(q'_p . k'_p - M_p) in interval arithmetic added, and the quotient.
    const std::size_t H = heads_.size(), p = ch.p, sigma = m_.sigma.symbols.size();
    if (rowp_.size() != H || p + 1 >= n_ || ch.a < 0 || static_cast<std::size_t>(ch.a) >= sigma ||
        ch.a == x_[p])
        return false;
    const std::size_t a = static_cast<std::size_t>(ch.a), xp = static_cast<std::size_t>(x_[p]);
    const std::size_t at = p * (sigma - 1) + (a < xp ? a : a - 1);
    const bool drop = fault_ == incremental_fault::drop_row_p_bound;
    for (std::size_t h = 0; h < H; ++h)
        if (rowp_ok_[h].size() <= at || !rowp_ok_[h][at] || ch.qp[h].empty())
            return false;
    b.assign(H, {});
    for (std::size_t h = 0; h < H; ++h) {
        const std::size_t dv = ch.vp[h].size();
        if (rowp_[h].size() < (at + 1) * (1 + dv))
            return false;
        const dinterval* pre = &rowp_[h][at * (1 + dv)];
        dinterval e = numeric::exp(dot(ch.qp[h], ch.kp[h], ctx_) - heads_[h].shift[p]);
        if (drop) {
            double mid = 0, r = 0;
            if (!numeric::mid_rad(e, mid, r))
                return false;
            e = dinterval(mid);
        }
        const dinterval den = pre[0] + e;
        if (!(den.lo() > 0) || !finite(den))
            return false;
        vec<dinterval> num(dv);
        for (std::size_t c = 0; c < dv; ++c)
            num[c] = (pre[1 + c] + e * ch.vp[h][c]) / den;
        b[h] = std::move(num);
    }
    ++stats_.prepared_rows_p;
    return true;
}

template <>
bool incremental_influence<dinterval>::row_p_heads(const change& ch, std::vector<vec<dinterval>>& b) const {
    // The constructor's prepared row p where there is one (row_p_prepared); else the certified
    // soft-attention row of each head (krows_, the constructor's) with p's new scaled query and
    // p's key and value replaced (sums_replaced: midpoints, one a-priori bound per row), and
    // its quotient.
    if (row_p_prepared(ch, b))
        return true;
    const std::size_t H = heads_.size(), p = ch.p;
    if (krows_.size() != H) return false;
    b.assign(H, {});
    attention::soft_rows<dinterval>::row_sums rs;
    for (std::size_t h = 0; h < H; ++h) {
        if (!krows_[h] || ch.qp[h].empty() ||
            !krows_[h]->sums_replaced(ch.qp[h], p, ch.kp[h], ch.vp[h], rs,
                                      fault_ == incremental_fault::drop_row_p_bound))
            return false;
        const dinterval den(rs.den);
        if (!(den.lo() > 0) || !finite(den)) return false;
        vec<dinterval> num(rs.num.size());
        for (std::size_t c = 0; c < num.size(); ++c) num[c] = dinterval(rs.num[c]) / den;
        b[h] = std::move(num);
    }
    return true;
}

template <>
void incremental_influence<dinterval>::init_interval_kernel() {
    fold_mr_ = false;
    const bool fault_ok = fault_ == incremental_fault::none || fault_ == incremental_fault::drop_fold_bound ||
                          fault_ == incremental_fault::midpoint_omega ||
                          fault_ == incremental_fault::drop_row_p_bound ||
                          fault_ == incremental_fault::drop_moved_radius ||
                          fault_ == incremental_fault::drop_outward_widening ||
                          fault_ == incremental_fault::loose_top_omega;
    // A masked layer 1 keeps its rows' sums over their key ranges: the generic members.
    if (m_.layers.size() != 2 || mask1_ || !affine_ || !fault_ok || heads_.size() > fold_max_heads)
        return;
    const std::size_t H = heads_.size(), d = y1_.front().size();
    const double g = gamma_of(3 * H + 1);
    y1m_.assign(n_ * d, 0.0);
    // The fold's operands by blocks of fold_block rows (zero-padded), each block's contiguous.
    const std::size_t nb = (n_ + fold_block - 1) / fold_block * fold_block;
    y1mt_.assign(nb * d, 0.0);
    y1r_.assign(n_ * d, 0.0);
    y1rsum_.assign(n_, 0.0);
    y1rmax_.assign(d, 0.0);
    for (std::size_t i = 0; i < n_; ++i)
        for (std::size_t c = 0; c < d; ++c) {
            double m = 0, r = 0;
            if (!mid_rad(y1_[i][c], m, r)) return;
            y1m_[i * d + c] = m;
            y1mt_[((i / fold_block) * d + c) * fold_block + i % fold_block] = m;
            y1r_[i * d + c] = r + g * std::fabs(m); // the first bracket of the row bound
            y1rsum_[i] += y1r_[i * d + c];
            y1rmax_[c] = std::max(y1rmax_[c], y1r_[i * d + c]);
        }
    gmt_.assign(H * nb * d, 0.0);
    gb_.assign(H * n_, 0.0);
    gt_.assign(H * n_, 0.0);
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < n_; ++i) {
            if (g_[h][i].size() != d) return;
            for (std::size_t c = 0; c < d; ++c) {
                double m = 0, r = 0;
                if (!mid_rad(g_[h][i][c], m, r)) return;
                gmt_[(((i / fold_block) * H + h) * d + c) * fold_block + i % fold_block] = m;
                gb_[h * n_ + i] = std::max(gb_[h * n_ + i], std::fabs(m));
                gt_[h * n_ + i] = std::max(gt_[h * n_ + i], r);
            }
        }
    den_lo_.assign(H * n_, 0.0);
    den_hi_.assign(H * n_, 0.0);
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < n_; ++i) {
            den_lo_[h * n_ + i] = heads_[h].den[i].lo();
            den_hi_[h * n_ + i] = heads_[h].den[i].hi();
        }
    fold_mr_ = std::isfinite(*std::max_element(y1r_.begin(), y1r_.end()));
    // x's row n of every layer-2 head by the certified row over y^(1) (y1r_ >= every radius):
    // the old side of the top layer's ω (changed_for_bound).
    top_old_.clear();
    if (!fold_mr_) return;
    try {
        attention::soft_rows<dinterval> rows(y1_, y1m_.data(), y1r_.data(), ctx_);
        attention::soft_rows<dinterval>::row_sums rs;
        std::vector<top_state> tops;
        for (const auto& hd : m_.layers[1].heads) {
            const auto f = fold_scores(hd, y1_[n_ - 1], n_, ctx_);
            if (!finite(f.c) || !rows.sums(f.u, rs)) return;
            top_state t;
            t.e.assign(rs.exp_mid, rs.exp_mid + n_);
            t.shift = rs.shift;
            t.tau = rs.tau;
            t.zero_hi = rs.zero_hi;
            t.c_lo = f.c.lo();
            t.c_hi = f.c.hi();
            tops.push_back(std::move(t));
        }
        top_old_ = std::move(tops);
    } catch (const numeric::undefined_error&) {
        top_old_.clear(); // the full kernel then, which locates the error
    }
}

template <>
void incremental_influence<dinterval>::fold_interval(const change& ch, std::vector<vec<dinterval>>& y1,
                                                     std::vector<double>& mid, std::vector<double>& rad,
                                                     std::vector<double>& moved,
                                                     std::vector<double>* omega1, bool lean) const {
    const std::size_t H = heads_.size(), p = ch.p, d = y1_.front().size(), w = 3 * H;
    const std::size_t sigma = m_.sigma.symbols.size();
    const double g = gamma_of(w + 1);
    const bool drop = fault_ == incremental_fault::drop_fold_bound;
    y1.resize(n_);
    const bool midpoint_omega = fault_ == incremental_fault::midpoint_omega;
    const bool drop_moved = fault_ == incremental_fault::drop_moved_radius;
    if (omega1) omega1->assign(H, 0.0);
    // Every row as midpoints and radii (a folded row: M_c and R_c; the others split), and the
    // moved bounds (d <= 4094: the norm bound's limit); cleared when a row is not finite.
    // Lean: no radii, but per row m1 = sum_c |M_c| and r1 >= sum_c R_c and per coordinate the
    // largest R_c and |M_c| (the top row's terms, soft_rows' constructor from sums).
    bool arrays = d <= 4094;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    mid.resize(n_ * d);
    if (lean) {
        rad.clear();
        lean_m1_.resize(n_);
        lean_r1_.resize(n_);
        lean_vrad_.assign(d, 0.0);
        lean_vabs_.assign(d, 0.0);
    } else {
        rad.resize(n_ * d);
    }
    moved.assign(n_, nan);
    // A split row i's terms of the top row from its midpoints om and radii rr (lean only).
    auto lean_terms = [&](std::size_t i, const double* om, const double* rr) {
        double m1 = 0, r1 = 0;
        for (std::size_t c = 0; c < d; ++c) {
            const double a = std::fabs(om[c]), r = rr[c];
            m1 += a;
            r1 += r;
            lean_vabs_[c] = std::max(lean_vabs_[c], a);
            lean_vrad_[c] = std::max(lean_vrad_[c], r);
        }
        lean_m1_[i] = m1;
        lean_r1_[i] = r1;
    };
    if (lean) lean_split_.resize(d);
    auto split_row = [&](std::size_t i) {
        if (y1[i].size() != d) {
            arrays = false;
            return;
        }
        double* rr = lean ? lean_split_.data() : rad.data() + i * d;
        for (std::size_t c = 0; c < d && arrays; ++c)
            if (!mid_rad(y1[i][c], mid[i * d + c], rr[c])) arrays = false;
        if (lean && arrays) lean_terms(i, &mid[i * d], rr);
    };
    // A_h v_p and A_h v'_p as midpoints, with B_k (largest |midpoint|) and T_k (largest radius).
    bm_.assign(2 * H * d, 0.0);
    bb_.assign(2 * H, 0.0);
    bt_.assign(2 * H, 0.0);
    for (std::size_t k = 0; k < 2 * H; ++k) {
        const vec<dinterval>& src = k % 2 == 0 ? ch.av_old[k / 2] : ch.av_new[k / 2];
        for (std::size_t c = 0; c < d; ++c) {
            double m = 0, r = 0;
            if (src.size() != d || !mid_rad(src[c], m, r)) {
                for (std::size_t i = 0; i < n_; ++i) y1[i] = corrected_row(ch, i);
                if (omega1) omega1->assign(H, std::numeric_limits<double>::quiet_NaN());
                mid.clear();
                rad.clear();
                moved.clear();
                return;
            }
            bm_[k * d + c] = m;
            bb_[k] = std::max(bb_[k], std::fabs(m));
            bt_[k] = std::max(bt_[k], r);
        }
    }
    ratio_.assign(H, nullptr);
    if (ch.a != x_[p])
        for (std::size_t h = 0; h < H; ++h)
            if (!heads_[h].ratio.empty())
                ratio_[h] = &heads_[h].ratio[static_cast<std::size_t>(x_[p]) * sigma +
                                             static_cast<std::size_t>(ch.a)];
    const dinterval guard(65536.0);
    ++stats_.interval_changes;
    // Row p: the certified soft-attention row of each head (row_p_heads), then F_1; the
    // generic recomputation when that row cannot be taken.
    auto row_p = [&](vec<dinterval>& out) {
        std::vector<vec<dinterval>> b;
        if (!row_p_heads(ch, b)) return false;
        try {
            out = attention::update(m_.layers.front(), ch.y0p, b, ctx_);
        } catch (const numeric::undefined_error& err) {
            throw err.located(attention::place(1, "update", p + 1));
        }
        return true;
    };
    // A folded row's intervals: [M - R, M + R] rounded outward without a branch: with R >=
    // 2^-1000 and R' = fl(fl(R (1 + 2^-50)) + |M| 2^-52), R' (1 - u) >= R + u |M|, so
    // fl(M -+ R') lies beyond M -+ R (docs/scalars.md). False when an end is not finite.
    auto form_row = [&](vec<dinterval>& out, const double* om, const double* yr, double K) {
        if (out.size() != d) out.assign(d, dinterval());
        bool finite_row = true;
        for (std::size_t c = 0; c < d; ++c) {
            const double M = om[c];
            const double R = drop ? 0.0 : (yr[c] + K) * fold_slack + fold_tiny;
            const double Rw = drop ? 0.0
                              : fault_ == incremental_fault::drop_outward_widening
                                  ? R
                                  : R * (1.0 + 0x1p-50) + std::fabs(M) * 0x1p-52;
            const double lo = M - Rw, hi = M + Rw;
            finite_row = finite_row && std::isfinite(lo) && std::isfinite(hi);
            out[c] = dinterval(lo, hi);
        }
        return finite_row;
    };
    // The rows in blocks of row_block. Per block: the coefficients of every row and head, in a
    // structure of arrays (coefficient k = 3 h + t of the block's row b at [k row_block + b]);
    // then, coordinate after coordinate over the block's rows (independent rows: the loops
    // vectorise), the per-row part of the bound K, the midpoints and the moved bound's sums;
    // then each row in turn (row p, split rows, the moved bound, the intervals where formed).
    // Per row the operations and their order are those of a loop over one row's coordinates.
    // With every factor e'_ip = e_ip f_i (f_in add or concat: `batch`), coefficients() per row
    // and head, one a-priori bound each, and the pair bound's weight of each head as the
    // largest quotient of its rows, widened once at the end (weight_widen). Without, the
    // coefficients in interval arithmetic row by row, with the cancellation guard of the
    // generic kernel, and with omega1 every head's weight of the pair bound from the same e,
    // e' and D (weight_upper), also on a guarded row.
    constexpr std::size_t row_block = fold_block;
    const fold::kernel_set& kern = fold::kernels();
    const bool batch =
        std::all_of(ratio_.begin(), ratio_.end(), [](const auto* r) { return r != nullptr; });
    std::vector<double> q_max(batch ? H : 0, 0.0);
    std::vector<unsigned char> q_valid(batch ? H : 0, 1);
    blk_m_.resize(w * row_block);
    blk_r_.resize(w * row_block);
    blk_ok_.resize(row_block);
    blk_k_.resize(row_block);
    blk_mid_.resize(d * row_block);
    blk_sum_.resize(16 * row_block);
    if (batch) {
        w_num_.resize(row_block);
        w_den_.resize(row_block);
        blk_el_.resize(row_block);
        blk_eh_.resize(row_block);
        // The factors f_i of (x_p, a) as their ends (kept while the pair stays the same).
        const std::size_t pair =
            static_cast<std::size_t>(x_[p]) * sigma + static_cast<std::size_t>(ch.a);
        if (ratio_pair_ != pair || ratio_lo_.size() != H * n_) {
            ratio_lo_.resize(H * n_);
            ratio_hi_.resize(H * n_);
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < n_; ++i) {
                    const dinterval& f = (*ratio_[h])[i];
                    ratio_lo_[h * n_ + i] = f.lo();
                    ratio_hi_[h * n_ + i] = f.hi();
                }
            ratio_pair_ = pair;
        }
        if (!table_fast_) { // the column e_ip of every head (else from the tables per block)
            e_col_.resize(H * n_);
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < n_; ++i) e_col_[h * n_ + i] = weight(h, i, p);
        }
    }
    // The coefficients of rows [i0, i0 + B) into blk_m_, blk_r_ and blk_ok_.
    auto block_coefficients = [&](std::size_t i0, std::size_t B) {
        std::fill(blk_ok_.begin(), blk_ok_.begin() + static_cast<std::ptrdiff_t>(B), 1.0);
        if (!batch) {
            for (std::size_t b = 0; b < B; ++b) {
                const std::size_t i = i0 + b;
                if (i == p) continue;
                bool ok = true;
                for (std::size_t h = 0; h < H && (ok || omega1); ++h) {
                    const auto& st = heads_[h];
                    const dinterval e_old = weight(h, i, p);
                    double wt = std::numeric_limits<double>::infinity();
                    bool ok_h = false;
                    const dinterval e_new = numeric::exp(dot(st.q[i], ch.kp[h], ctx_) - st.shift[i]);
                    const dinterval rest = st.den[i] - e_old;
                    if (omega1 && finite(e_new) && finite(rest) && e_old.lo() >= 0)
                        wt = weight_upper(e_old.lo(), e_old.hi(), e_new.lo(), e_new.hi(), rest.lo(),
                                          rest.hi(), midpoint_omega);
                    if (ok && finite(e_new) &&
                        !numeric::possibly_less(numeric::compare(rest * guard, st.den[i]))) {
                        const dinterval inv = dinterval(1.0) / (rest + e_new);
                        const dinterval lam = (e_old - e_new) * inv, alpha = -(e_old * inv),
                                        beta = e_new * inv;
                        double* m = &blk_m_[3 * h * row_block + b];
                        double* r = &blk_r_[3 * h * row_block + b];
                        ok_h = mid_rad(lam, m[0], r[0]) &&
                               mid_rad(alpha, m[row_block], r[row_block]) &&
                               mid_rad(beta, m[2 * row_block], r[2 * row_block]);
                    }
                    ok = ok && ok_h;
                    if (omega1) {
                        // A weight that is not finite leaves the head to the cache's own ω (NaN).
                        double& o = (*omega1)[h];
                        if (!(wt <= std::numeric_limits<double>::max()))
                            o = std::numeric_limits<double>::quiet_NaN();
                        else if (wt > o)
                            o = wt;
                    }
                }
                blk_ok_[b] = ok ? 1.0 : 0.0;
            }
            return;
        }
        for (std::size_t h = 0; h < H; ++h) {
            double* El = blk_el_.data();
            double* Eh = blk_eh_.data();
            if (table_fast_) {
                kern.table_column(&etab_[h][p * n_ + i0], &row_grow_lo_[h][i0],
                                  &row_grow_hi_[h][i0], &row_zero_hi_[h][i0], El, Eh, B);
            } else {
                for (std::size_t b = 0; b < B; ++b) {
                    El[b] = e_col_[h * n_ + i0 + b].lo();
                    Eh[b] = e_col_[h * n_ + i0 + b].hi();
                }
            }
            fold::coefficient_args ca;
            ca.el = El;
            ca.eh = Eh;
            ca.flo = &ratio_lo_[h * n_ + i0];
            ca.fhi = &ratio_hi_[h * n_ + i0];
            ca.dlo = &den_lo_[h * n_ + i0];
            ca.dhi = &den_hi_[h * n_ + i0];
            ca.cm = blk_m_.data() + 3 * h * row_block;
            ca.cr = blk_r_.data() + 3 * h * row_block;
            ca.stride = row_block;
            ca.w_num = w_num_.data();
            ca.w_den = w_den_.data();
            ca.ok = blk_ok_.data();
            ca.B = B;
            ca.midpoint = midpoint_omega;
            kern.coefficient_rows(ca);
            if (!omega1) continue;
            // Rows m != p only; a weight that is not finite leaves the head to the cache's own
            // ω (NaN).
            if (p >= i0 && p < i0 + B) {
                w_num_[p - i0] = 0;
                w_den_[p - i0] = 1;
            }
            // The quotients first (a loop that vectorises), then their largest.
            bool valid = true;
            q_max[h] = kern.quotient_max(w_num_.data(), w_den_.data(), B, q_max[h], valid);
            q_valid[h] = static_cast<unsigned char>(q_valid[h] & (valid ? 1 : 0));
        }
    };
    // K, the midpoints, the moved bound's sums and the per-row terms of rows [i0, i0 + B),
    // every row (a row that is not folded is not read): fold::kernel_set::block_rows. The
    // per-row part of the bound: K = sum_k |a_m,k| T_k + r_a,k (B_k + T_k) + g |a_m,k| B_k. The
    // midpoints M_c = y_m,c + sum_h (a_0 (A_h b_i)_c + a_1 (A_h v_p)_c + a_2 (A_h v'_p)_c),
    // head after head. Per row: r1 >= sum_c R_c from the row's sum of y_r,c (kept once), r1 =
    // ((sum_c y_r,c + d K) fold_slack + d fold_tiny) (1 + 2^-40) (at most d + 8 roundings of
    // nonnegative terms on either side); trad = r1 + sum_c y_r,c; m1 and the moved bound.
    fold::block_rows_args ra;
    ra.cm = blk_m_.data();
    ra.cr = blk_r_.data();
    ra.stride = row_block;
    ra.n = n_;
    ra.block_stride = row_block;
    ra.bm = bm_.data();
    ra.bb = bb_.data();
    ra.bt = bt_.data();
    ra.heads = H;
    ra.d = d;
    ra.g = g;
    ra.drop = drop;
    ra.drop_moved = drop_moved;
    ra.K = blk_k_.data();
    ra.mid = blk_mid_.data();
    ra.sums = blk_sum_.data();
    auto block_rows = [&](std::size_t i0, std::size_t B) {
        ra.gb = gb_.data() + i0;
        ra.gt = gt_.data() + i0;
        ra.gm = gmt_.data() + i0 * H * d; // i0 / row_block blocks of H d row_block
        ra.ym = y1mt_.data() + i0 * d;
        ra.yrsum = y1rsum_.data() + i0;
        ra.B = B;
        kern.block_rows(ra);
    };
    // Lean: layer 2's queries of row n once its row of y'^(1) is formed (the last block goes
    // first), then every head's scores of each block's rows while its midpoints are at hand
    // (block_scores; a split row's from its midpoints as stored).
    const auto& top_layer = m_.layers.back();
    const std::size_t H2 = m_.layers.size() == 2 ? top_layer.heads.size() : 0;
    lean_scored_ = false;
    auto top_queries = [&] {
        if (!lean || H2 == 0 || y1[n_ - 1].size() != d) return false;
        lean_u_.resize(H2);
        lean_c_.resize(H2);
        lean_qmid_.resize(H2 * d);
        for (std::size_t h = 0; h < H2; ++h) {
            try {
                auto f = fold_scores(top_layer.heads[h], y1[n_ - 1], n_, ctx_);
                if (!finite(f.c) || f.u.size() != d) return false;
                for (std::size_t c = 0; c < d; ++c) {
                    double r = 0;
                    if (!mid_rad(f.u[c], lean_qmid_[h * d + c], r)) return false;
                }
                lean_u_[h] = std::move(f.u);
                lean_c_[h] = f.c;
            } catch (const numeric::undefined_error&) {
                return false; // top_lean meets it again and locates it
            }
        }
        lean_scores_.resize(H2 * n_);
        return true;
    };
    if (lean) {
        blk_folded_.resize(row_block);
        lean_vabs_blk_.assign(d * row_block, 0.0);
    }
    double k_max = 0; // lean: the largest K of a folded row
    bool folded_any = false;
    const std::size_t blocks = (n_ + row_block - 1) / row_block;
    for (std::size_t kb = 0; kb < blocks; ++kb) {
        const std::size_t i0 = (kb == 0 ? blocks - 1 : kb - 1) * row_block;
        const std::size_t B = std::min(n_ - i0, row_block);
        block_coefficients(i0, B);
        block_rows(i0, B);
        if (lean) std::fill(blk_folded_.begin(), blk_folded_.end(), 0.0);
        const double* r1v = blk_sum_.data() + 12 * row_block;
        const double* tradv = r1v + row_block;
        const double* m1s = tradv + row_block;
        const double* mv = m1s + row_block;
        // Every row's midpoints row-major (a row that is not folded overwrites its own below).
        kern.to_rows(blk_mid_.data(), row_block, d, &mid[i0 * d], B);
        // Lean, a block whose rows are all folded with a moved bound (no row p, not the last
        // row, every row taking its coefficients, finite sums and a moved bound that is not
        // NaN): the loop below's work for such rows, array by array.
        bool clean = lean && (p < i0 || p >= i0 + B) && i0 + B < n_;
        if (clean) {
            constexpr double dmax = std::numeric_limits<double>::max();
            bool all = true;
            for (std::size_t b = 0; b < B; ++b)
                all = all & (blk_ok_[b] != 0) & (m1s[b] <= dmax) & (tradv[b] <= dmax) &
                      (mv[b] == mv[b]); // not NaN
            clean = all;
        }
        if (clean) {
            std::copy(mv, mv + B, &moved[i0]);
            std::copy(m1s, m1s + B, &lean_m1_[i0]);
            std::copy(r1v, r1v + B, &lean_r1_[i0]);
            for (std::size_t b = 0; b < B; ++b) {
                y1[i0 + b].clear();
                k_max = std::max(k_max, blk_k_[b]);
                blk_folded_[b] = 1.0;
            }
            stats_.rank1_rows += H * B;
            folded_any = true;
        }
        for (std::size_t b = 0; b < B && !clean; ++b) {
            const std::size_t i = i0 + b;
            vec<dinterval>& out = y1[i];
            if (i == p) {
                if (!row_p(out)) out = corrected_row(ch, i);
                split_row(i);
                continue;
            }
            if (blk_ok_[b] == 0) { // the cancellation guard, or a coefficient not finite
                out = corrected_row(ch, i);
                split_row(i);
                continue;
            }
            const double K = blk_k_[b];
            const double* yr = &y1r_[i * d];
            const double* om = &mid[i * d];
            // The radii R_c = fl(fl(y_r,c + K) fold_slack) + fold_tiny.
            if (!lean)
                for (std::size_t c = 0; c < d; ++c)
                    rad[i * d + c] = drop ? 0.0 : (yr[c] + K) * fold_slack + fold_tiny;
            const double r1 = r1v[b], trad = tradv[b], m1 = m1s[b];
            // M_c and R_c are finite when these sums are (NaN and infinities propagate).
            const bool finite_row = m1 <= std::numeric_limits<double>::max() &&
                                    trad <= std::numeric_limits<double>::max();
            const bool form = !lean || i + 1 == n_;
            if (!finite_row || (form && !form_row(out, om, yr, K))) {
                out = corrected_row(ch, i);
                split_row(i);
                continue;
            }
            moved[i] = mv[b];
            stats_.rank1_rows += H;
            if (!lean) continue;
            // Lean: a row without a moved bound is formed as intervals after all (the pair
            // bound reads it), and the top row's terms of the row.
            if (std::isnan(moved[i]) && !form && !form_row(out, om, yr, K)) {
                out = corrected_row(ch, i);
                split_row(i);
                continue;
            }
            if (!form && !std::isnan(moved[i])) out.clear();
            lean_m1_[i] = m1;
            lean_r1_[i] = r1;
            k_max = std::max(k_max, K);
            folded_any = true;
            blk_folded_[b] = 1.0;
        }
        if (!lean) continue;
        // The folded rows' largest |M_c| per coordinate and row of the block (a split row's
        // are in lean_terms), into lean_vabs_ at the end: every M_c of a folded row is finite.
        kern.abs_max(blk_mid_.data(), row_block, d, blk_folded_.data(), lean_vabs_blk_.data(), B);
        if (kb == 0) lean_scored_ = top_queries();
        if (!lean_scored_ || mid.size() != n_ * d) continue;
        for (std::size_t h = 0; h < H2; ++h) {
            const double* a = &lean_qmid_[h * d];
            double* sc = &lean_scores_[h * n_ + i0];
            kern.block_scores(a, d, blk_mid_.data(), row_block, sc, B);
            for (std::size_t b = 0; b < B; ++b) {
                if (blk_folded_[b] != 0) continue;
                const double* m = &mid[(i0 + b) * d];
                double acc = 0.0;
                for (std::size_t c = 0; c < d; ++c) acc += a[c] * m[c];
                sc[b] = acc;
            }
        }
    }
    if (batch && omega1)
        for (std::size_t h = 0; h < H; ++h) {
            double q = q_max[h];
            if (!midpoint_omega && q <= std::numeric_limits<double>::max()) q = weight_widen(q);
            (*omega1)[h] = q_valid[h] && q <= std::numeric_limits<double>::max()
                               ? q
                               : std::numeric_limits<double>::quiet_NaN();
        }
    if (lean)
        for (std::size_t c = 0; c < d; ++c)
            for (std::size_t b = 0; b < row_block; ++b)
                lean_vabs_[c] = std::max(lean_vabs_[c], lean_vabs_blk_[c * row_block + b]);
    // Lean: the largest radius of each coordinate over the folded rows, R_c = fl(fl(y_r,c + K)
    // fold_slack) + fold_tiny at most that of the largest y_r,c and K (rounding is monotone).
    if (lean && folded_any)
        for (std::size_t c = 0; c < d; ++c)
            lean_vrad_[c] =
                std::max(lean_vrad_[c], drop ? 0.0 : (y1rmax_[c] + k_max) * fold_slack + fold_tiny);
    if (!arrays) {
        mid.clear();
        rad.clear();
        moved.clear();
    }
}

template <>
bool incremental_influence<dinterval>::top_lean(const change& ch, changed_states& st) const {
    const auto& lay = m_.layers[1];
    const std::size_t H2 = lay.heads.size(), d = y1_.front().size();
    if (top_old_.size() != H2 || st.y1_mid.size() != n_ * d || st.y1.size() != n_ ||
        st.y1[n_ - 1].size() != d || lean_m1_.size() != n_ || lean_vrad_.size() != d)
        return false;
    // Keys and values of layer 2's row n are the rows of y'^(1) (as in top_interval), read as
    // the fold's midpoints with its per-row sums: no interval of a folded row is formed.
    attention::soft_rows<dinterval> rows(st.y1, st.y1_mid.data(), d, lean_m1_.data(),
                                                 lean_r1_.data(), lean_vrad_.data(),
                                                 lean_vabs_.data(), ctx_);
    const vec<dinterval>& yn = st.y1[n_ - 1];
    std::vector<vec<dinterval>> b(H2);
    st.omega_top.assign(H2, std::numeric_limits<double>::quiet_NaN());
    const bool loose = fault_ == incremental_fault::loose_top_omega;
    // Every head's row over one pass of the rows (sums_many), with the fold's queries and
    // scores where it computed them.
    std::vector<folded_scores<dinterval>> fs;
    std::vector<const vec<dinterval>*> qs;
    const bool scored = lean_scored_ && lean_u_.size() == H2 && lean_scores_.size() == H2 * n_;
    fs.reserve(H2);
    for (std::size_t h = 0; h < H2; ++h) {
        fs.push_back(scored ? folded_scores<dinterval>{lean_u_[h], lean_c_[h]}
                            : fold_scores(lay.heads[h], yn, n_, ctx_));
        if (!finite(fs.back().c)) return false;
    }
    for (const auto& f : fs) qs.push_back(&f.u);
    std::vector<attention::soft_rows<dinterval>::row_sums> sums(H2);
    if (scored ? !rows.sums_many_scored(qs.data(), H2, lean_scores_.data(), sums.data())
               : !rows.sums_many(qs.data(), H2, sums.data()))
        return false;
    for (std::size_t h = 0; h < H2; ++h) {
        const auto& hd = lay.heads[h];
        const auto& f = fs[h];
        const auto& rs = sums[h];
        vec<dinterval> acc(d);
        for (std::size_t c = 0; c < d; ++c) {
            acc[c] = dinterval(rs.num[c] / rs.den);
            if (!numeric::is_finite(acc[c])) return false;
        }
        const top_state& old = top_old_[h];
        st.omega_top[h] = top_omega_bound(old.e.data(), old.shift, old.tau, old.zero_hi,
                                          dinterval(old.c_lo, old.c_hi), rs.exp_mid, rs.shift,
                                          rs.tau, rs.zero_hi, f.c, n_, ch.p, loose);
        b[h] = model::apply_affine(hd.value.V, acc, ctx_);
    }
    st.y = attention::update(lay, yn, b, ctx_);
    return true;
}

template <>
vec<dinterval> incremental_influence<dinterval>::top_interval(const std::vector<vec<dinterval>>& y1,
                                                              const std::vector<double>* mid,
                                                              const std::vector<double>* rad) const {
    const auto& lay = m_.layers[1];
    const vec<dinterval>& yn = y1[n_ - 1];
    // Keys and values of layer 2's row n are the rows of y^(1) themselves (the key map folded
    // onto the query, the value map applied once to the weighted sum); the constant q . b_K of
    // every score cancels in the softmax. The fold's midpoints and radii when kept.
    const std::size_t d = yn.size();
    const bool kept = mid && rad && mid->size() == n_ * d && rad->size() == n_ * d && d > 0;
    attention::soft_rows<dinterval> rows =
        kept ? attention::soft_rows<dinterval>(y1, mid->data(), rad->data(), ctx_)
             : attention::soft_rows<dinterval>(y1, y1, ctx_);
    std::vector<vec<dinterval>> b(lay.heads.size());
    for (std::size_t h = 0; h < lay.heads.size(); ++h) {
        const auto& hd = lay.heads[h];
        const auto f = fold_scores(hd, yn, n_, ctx_);
        const vec<dinterval> acc = rows.row(f.u, nullptr);
        // One radius for every score can be too coarse where the generic operations (a radius
        // per score) still decide, e.g. nearly hard attention over wide layer-1 rows.
        for (const auto& c : acc)
            if (!numeric::is_finite(c)) return top_generic(y1);
        b[h] = model::apply_affine(hd.value.V, acc, ctx_);
    }
    return attention::update(lay, yn, b, ctx_);
}

} // namespace attnprop::attention
