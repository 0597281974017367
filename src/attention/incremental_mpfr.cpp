// The raw MPFR path of the incremental one-symbol kernel (incremental_influence.hpp): the compact
// weight tables (detail::mpfr_table) and the explicit specialisations of the *_raw members.
#include "attention/incremental_internal.hpp"

#include <cstring>
#include <stdexcept>

namespace attnprop::attention {

using namespace incremental_detail;
using model::vec;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;

namespace detail {

mpfr_table::mpfr_table(std::size_t rows, std::size_t cols, long precision_bits)
    : cols_(cols),
      limbs_per_(mpfr_custom_get_size(static_cast<mpfr_prec_t>(precision_bits)) / sizeof(mp_limb_t)),
      prec_(precision_bits), limbs_(rows * cols * limbs_per_), exp_(rows * cols),
      kind_(rows * cols, static_cast<signed char>(MPFR_ZERO_KIND)) {}

std::size_t mpfr_table::entry_bytes(long precision_bits) {
    return mpfr_custom_get_size(static_cast<mpfr_prec_t>(precision_bits)) + sizeof(mpfr_exp_t) + 1;
}

void mpfr_table::set(std::size_t i, std::size_t j, mpfr_srcptr x) {
    if (mpfr_get_prec(x) != prec_) throw std::logic_error("mpfr_table: value of another precision");
    const std::size_t k = i * cols_ + j;
    const int kind = mpfr_custom_get_kind(x);
    kind_[k] = static_cast<signed char>(kind);
    if (kind == MPFR_REGULAR_KIND || kind == -MPFR_REGULAR_KIND) {
        exp_[k] = mpfr_custom_get_exp(x);
        std::memcpy(&limbs_[k * limbs_per_], mpfr_custom_get_significand(x),
                    limbs_per_ * sizeof(mp_limb_t));
    }
}

void mpfr_table::view(std::size_t i, std::size_t j, mpfr_ptr out) const {
    const std::size_t k = i * cols_ + j;
    // The view is only ever read: MPFR's custom interface takes a non-const significand.
    mpfr_custom_init_set(out, kind_[k], exp_[k], static_cast<mpfr_prec_t>(prec_),
                         const_cast<mp_limb_t*>(&limbs_[k * limbs_per_]));
}

} // namespace detail

// The raw MPFR kernels (incremental_raw_kernels<mpfr_real>): explicit specialisations of the
// *_raw members, which the generic members call under `if constexpr (raw_kernels)` only. The
// operations of full_row, corrected_row and top on preallocated mpfr_t scratch at the
// context's precision. Every operand has that precision (raw_ and the
// per-change checks), so each operation rounds as the generic one does; the rank-1
// coefficients use one reciprocal of the new denominator and three products instead of three
// quotients (results agree to working precision, not bit for bit).

template <>
bool incremental_influence<mpfr_real>::raw_change_ok(const change& ch) const {
    if (!raw_fold_ || m_.layers.size() != 2) return false;
    const long prec = ctx_.precision_bits;
    return uniform(ch.kp, prec) && uniform(ch.vp, prec) && uniform(ch.av_old, prec) &&
           uniform(ch.av_new, prec);
}

template <>
vec<mpfr_real> incremental_influence<mpfr_real>::full_row_raw(std::size_t h,
                                                            const vec<mpfr_real>& q, std::size_t p,
                                                            const vec<mpfr_real>& kp,
                                                            const vec<mpfr_real>& vp) const {
    const auto rnd = MPFR_RNDN;
    const long prec = ctx_.precision_bits;
    const auto& st = heads_[h];
    for (std::size_t j = 0; j < n_; ++j) raw_dot(swork_[j].raw(), q, j == p ? kp : st.k[j]);
    mpfr_srcptr shift = swork_[leftmost_max(swork_, n_)].raw();
    const std::size_t dv = vp.size();
    vec<mpfr_real> num(dv, mpfr_real(prec));
    mpfr_real den(prec), t(prec), e(prec);
    for (std::size_t j = 0; j < n_; ++j) {
        mpfr_sub(t.raw(), swork_[j].raw(), shift, rnd);
        mpfr_exp(e.raw(), t.raw(), rnd);
        mpfr_add(den.raw(), den.raw(), e.raw(), rnd);
        const vec<mpfr_real>& v = j == p ? vp : st.v[j];
        for (std::size_t c = 0; c < dv; ++c)
            mpfr_fma(num[c].raw(), e.raw(), v[c].raw(), num[c].raw(), rnd);
    }
    for (auto& c : num) c = c / den;
    return num;
}

template <>
vec<mpfr_real>
incremental_influence<mpfr_real>::top_raw(const std::vector<vec<mpfr_real>>& y1) const {
    const auto rnd = MPFR_RNDN;
    const long prec = ctx_.precision_bits;
    const auto& lay = m_.layers[1];
    const vec<mpfr_real>& yn = y1[n_ - 1];
    const std::size_t d = yn.size();
    std::vector<vec<mpfr_real>> b(lay.heads.size());
    mpfr_real t(prec), e(prec);
    for (std::size_t h = 0; h < lay.heads.size(); ++h) {
        const auto& hd = lay.heads[h];
        const auto [u, cst] = fold_scores(hd, yn, n_, ctx_);
        if (!uniform(u, prec) || cst.precision() != prec) return top_generic(y1);
        for (std::size_t j = 0; j < n_; ++j) {
            mpfr_ptr s = swork_[j].raw();
            raw_dot(s, u, y1[j]);
            mpfr_add(s, s, cst.raw(), rnd);
        }
        mpfr_srcptr shift = swork_[leftmost_max(swork_, n_)].raw();
        vec<mpfr_real> acc(d, mpfr_real(prec));
        mpfr_real den(prec);
        for (std::size_t j = 0; j < n_; ++j) {
            mpfr_sub(t.raw(), swork_[j].raw(), shift, rnd);
            mpfr_exp(e.raw(), t.raw(), rnd);
            mpfr_add(den.raw(), den.raw(), e.raw(), rnd);
            const vec<mpfr_real>& y = y1[j];
            for (std::size_t c = 0; c < d; ++c)
                mpfr_fma(acc[c].raw(), e.raw(), y[c].raw(), acc[c].raw(), rnd);
        }
        for (auto& c : acc) c = c / den;
        // sum_j w_j (V y_j + v_b) = V (sum_j w_j y_j) + v_b since the weights sum to 1.
        b[h] = model::apply_affine(hd.value.V, acc, ctx_);
    }
    return attention::update(lay, yn, b, ctx_);
}

template <>
vec<mpfr_real> incremental_influence<mpfr_real>::changed_raw(const change& ch) const {
    const auto rnd = MPFR_RNDN;
    const long prec = ctx_.precision_bits;
    const std::size_t H = heads_.size(), p = ch.p, sigma = m_.sigma.symbols.size();
    const bool keep = fault_ == incremental_fault::keep_old_term;
    const bool skip = fault_ == incremental_fault::skip_row_correction;
    ++stats_.raw_changes;
    mpfr_real t(prec), e_old(prec), e_new(prec), rest(prec), guarded(prec), den(prec), inv(prec);
    std::vector<mpfr_real> lam(H, mpfr_real(prec)), alpha(H, mpfr_real(prec)),
        beta(H, mpfr_real(prec));
    // f_in add or concat: the new term is the old one times the factor of (x_p, a).
    std::vector<const std::vector<mpfr_real>*> ratio(H, nullptr);
    if (ch.a != x_[p])
        for (std::size_t h = 0; h < H; ++h)
            if (!heads_[h].ratio.empty())
                ratio[h] = &heads_[h].ratio[static_cast<std::size_t>(x_[p]) * sigma +
                                            static_cast<std::size_t>(ch.a)];
    const bool tabled = !tables_.empty();
    __mpfr_struct cell[1]; // a view into a table (tables_[h].view)
    auto set_row = [&](vec<mpfr_real>& dst, const vec<mpfr_real>& src) {
        for (std::size_t c = 0; c < dst.size(); ++c) mpfr_set(dst[c].raw(), src[c].raw(), rnd);
    };
    for (std::size_t i = 0; i < n_; ++i) {
        vec<mpfr_real>& y = ywork_[i];
        if (i == p) {
            set_row(y, ch.a != x_[p] && !heads_.front().qratio.empty() ? row_p_factored(ch)
                                                                        : corrected_row(ch, i));
            continue;
        }
        if (skip && i + 1 != n_) {
            set_row(y, y1_[i]);
            continue;
        }
        bool ok = true;
        for (std::size_t h = 0; h < H && ok; ++h) {
            const auto& st = heads_[h];
            const vec<mpfr_real>& q = st.q[i];
            mpfr_srcptr eo = e_old.raw();
            if (tabled) {
                tables_[h].view(i, p, cell);
                eo = cell;
            } else {
                raw_dot(t.raw(), q, st.k[p]);
                mpfr_sub(t.raw(), t.raw(), st.shift[i].raw(), rnd);
                mpfr_exp(e_old.raw(), t.raw(), rnd);
            }
            if (ratio[h]) {
                mpfr_mul(e_new.raw(), eo, (*ratio[h])[i].raw(), rnd);
            } else {
                raw_dot(t.raw(), q, ch.kp[h]);
                mpfr_sub(t.raw(), t.raw(), st.shift[i].raw(), rnd);
                mpfr_exp(e_new.raw(), t.raw(), rnd);
            }
            if (keep) mpfr_set(rest.raw(), st.den[i].raw(), rnd);
            else mpfr_sub(rest.raw(), st.den[i].raw(), eo, rnd);
            // The cancellation guard of corrected_row: rest must keep a 2^-16 share.
            mpfr_mul_ui(guarded.raw(), rest.raw(), 65536, rnd);
            if (!mpfr_number_p(e_new.raw()) || mpfr_cmp(guarded.raw(), st.den[i].raw()) < 0) {
                ok = false;
                break;
            }
            mpfr_add(den.raw(), rest.raw(), e_new.raw(), rnd);
            mpfr_ui_div(inv.raw(), 1, den.raw(), rnd);
            // lambda - 1 = (e_old - e_new) / den', alpha = -e_old / den', beta = e_new / den'.
            if (keep) mpfr_neg(lam[h].raw(), e_new.raw(), rnd);
            else mpfr_sub(lam[h].raw(), eo, e_new.raw(), rnd);
            mpfr_mul(lam[h].raw(), lam[h].raw(), inv.raw(), rnd);
            if (keep) mpfr_set_zero(alpha[h].raw(), 1);
            else {
                mpfr_mul(alpha[h].raw(), eo, inv.raw(), rnd);
                mpfr_neg(alpha[h].raw(), alpha[h].raw(), rnd);
            }
            mpfr_mul(beta[h].raw(), e_new.raw(), inv.raw(), rnd);
        }
        if (!ok) { // this row is recomputed by the generic path (its counters included)
            set_row(y, corrected_row(ch, i));
            continue;
        }
        stats_.rank1_rows += H;
        const vec<mpfr_real>& y1 = y1_[i];
        for (std::size_t c = 0; c < y.size(); ++c) {
            mpfr_ptr yc = y[c].raw();
            mpfr_set(yc, y1[c].raw(), rnd);
            for (std::size_t h = 0; h < H; ++h) {
                mpfr_fma(yc, lam[h].raw(), g_[h][i][c].raw(), yc, rnd);
                mpfr_fma(yc, alpha[h].raw(), ch.av_old[h][c].raw(), yc, rnd);
                mpfr_fma(yc, beta[h].raw(), ch.av_new[h][c].raw(), yc, rnd);
            }
        }
    }
    try {
        return top_raw(ywork_);
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(2, nullptr, n_));
    }
}

template <>
vec<mpfr_real> incremental_influence<mpfr_real>::row_p_factored(const change& ch) const {
    const auto rnd = MPFR_RNDN;
    const long prec = ctx_.precision_bits;
    const std::size_t p = ch.p, H = heads_.size();
    const std::size_t pair = static_cast<std::size_t>(x_[p]) * m_.sigma.symbols.size() +
                             static_cast<std::size_t>(ch.a);
    std::vector<vec<mpfr_real>> b(H);
    mpfr_real t(prec), e(prec), den(prec), old(prec);
    __mpfr_struct cell[1];
    const bool tabled = !tables_.empty();
    for (std::size_t h = 0; h < H; ++h) {
        const auto& st = heads_[h];
        const auto& factor = st.qratio[pair];
        const std::size_t dv = ch.vp[h].size();
        vec<mpfr_real> num(dv, mpfr_real(prec));
        mpfr_set_zero(den.raw(), 1);
        // e'_pj = e_pj exp(dq . k_j) for j != p, relative to the old shift of row p; the
        // new key and value at j = p. Every term is positive: no cancellation.
        for (std::size_t j = 0; j < n_; ++j) {
            const vec<mpfr_real>* v = &st.v[j];
            if (j == p) {
                raw_dot(t.raw(), ch.qp[h], ch.kp[h]);
                mpfr_sub(t.raw(), t.raw(), st.shift[p].raw(), rnd);
                mpfr_exp(e.raw(), t.raw(), rnd);
                v = &ch.vp[h];
            } else {
                // e_pj from the table, or recomputed by the constructor's operations (the
                // same value, so results do not depend on the table memory).
                mpfr_srcptr epj = old.raw();
                if (tabled) {
                    tables_[h].view(p, j, cell);
                    epj = cell;
                } else {
                    raw_dot(t.raw(), st.q[p], st.k[j]);
                    mpfr_sub(t.raw(), t.raw(), st.shift[p].raw(), rnd);
                    mpfr_exp(old.raw(), t.raw(), rnd);
                }
                mpfr_mul(e.raw(), epj, factor[j].raw(), rnd);
            }
            mpfr_add(den.raw(), den.raw(), e.raw(), rnd);
            for (std::size_t c = 0; c < dv; ++c)
                mpfr_fma(num[c].raw(), e.raw(), (*v)[c].raw(), num[c].raw(), rnd);
        }
        // Overflow or underflow of the sum (far outside any model's range): from the keys.
        if (!mpfr_regular_p(den.raw())) return corrected_row(ch, p);
        for (auto& c : num) c = c / den;
        b[h] = std::move(num);
    }
    try {
        return attention::update(m_.layers.front(), ch.y0p, b, ctx_);
    } catch (const numeric::undefined_error& err) {
        throw err.located(attention::place(1, "update", p + 1));
    }
}

} // namespace attnprop::attention
