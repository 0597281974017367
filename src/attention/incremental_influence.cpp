// One-symbol updates for soft models with L <= 2 (incremental_influence.hpp).
#include "attention/incremental_influence.hpp"
#include "attention/fold_kernels.hpp"
#include "attention/fold_math.hpp"
#include "attention/soft.hpp"
#include "numeric/dinterval_raw.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <variant>
#include <stdexcept>

namespace attnprop::attention {

using model::vec;
using numeric::arb_ball;
using numeric::dinterval;
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
            // The scale must exist in S (a kind without sqrt, such as exact rationals, cannot
            // hold 1/sqrt(d_k); the check is made on the converted model).
            if constexpr (numeric::ExpScalar<S>)
                if (!h.score.scale) return false;
        }
    return true;
}

namespace {

/// The certified soft-attention row's sums (soft_rows<dinterval>::row_sums) for the certified
/// double kernel's constructor; a placeholder for other kinds.
template <class S> struct row_sums_of {
    using type = int;
    struct factors {};
};
template <> struct row_sums_of<dinterval> {
    using type = attention::detail::soft_rows<dinterval>::row_sums;
    using factors = attention::detail::soft_rows<dinterval>::weight_factors;
};

/// A weight-table entry e_ij of the certified double kernel from the certified row's
/// exponential E_j (soft_rows<dinterval>::sums): E_j [1 - tau_i, 1 + tau_i] one ulp outward,
/// with grow = [next_down(1 - tau_i), next_up(1 + tau_i)] (row_growth), or [0, zero_hi] for a
/// key below e^-707 (E_j = 0). The constructor's tables and their recomputation share it.
std::pair<double, double> row_growth(double tau) {
    return {numeric::interval_detail::next_down(1.0 - tau), numeric::interval_detail::next_up(1.0 + tau)};
}
dinterval table_entry(double e, std::pair<double, double> grow, double zero_hi) {
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
bool uniform(const vec<mpfr_real>& v, long prec) {
    for (const auto& x : v)
        if (x.precision() != prec) return false;
    return true;
}
bool uniform(const std::vector<vec<mpfr_real>>& vs, long prec) {
    for (const auto& v : vs)
        if (!uniform(v, prec)) return false;
    return true;
}

/// acc = a . b (fused multiply-adds from 0, in order: model::dot's operations).
void raw_dot(mpfr_ptr acc, const vec<mpfr_real>& a, const vec<mpfr_real>& b) {
    mpfr_set_zero(acc, 1);
    for (std::size_t t = 0; t < a.size(); ++t) mpfr_fma(acc, a[t].raw(), b[t].raw(), acc, MPFR_RNDN);
}

/// The leftmost largest entry (numeric::compare: NaN is a numeric_error, as in the generic
/// kernels).
std::size_t leftmost_max(const std::vector<mpfr_real>& s, std::size_t n) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < n; ++j)
        if (numeric::compare(s[j], s[best]) == numeric::order::greater) best = j;
    return best;
}

} // namespace

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

template <numeric::ExpScalar S>
incremental_influence<S>::incremental_influence(const model::model<S>& m,
                                                const model::input_sequence& x,
                                                const numeric::context& ctx,
                                                incremental_fault fault, std::size_t table_bytes,
                                                const std::vector<std::size_t>* changed_positions)
    : m_(m), x_(x), ctx_(ctx), fault_(fault), n_(x.size()) {
    if (!incremental_supports(m))
        throw precondition_error("the incremental influence method does not apply to this model");
    if (n_ < 2) throw precondition_error("incremental influence needs n >= 2");
    const std::size_t L = m.layers.size();
    first_row_ = L == 1 ? n_ - 1 : 0;
    y0_ = attention::initial_states(m, x, ctx);
    const auto& lay = m.layers.front();
    heads_.resize(lay.heads.size());
    if constexpr (raw_kernels) {
        const long prec = ctx.precision_bits;
        const double need = static_cast<double>(n_) * static_cast<double>(n_) *
                            static_cast<double>(heads_.size()) *
                            static_cast<double>(detail::mpfr_table::entry_bytes(prec));
        if (L == 2 && need <= static_cast<double>(table_bytes))
            for (std::size_t h = 0; h < heads_.size(); ++h) tables_.emplace_back(n_, n_, prec);
    }
    if constexpr (interval_kernel) {
        const double need = static_cast<double>(n_) * static_cast<double>(n_) *
                            static_cast<double>(heads_.size()) * static_cast<double>(sizeof(double));
        if (L == 2 && need <= static_cast<double>(table_bytes)) {
            etab_.resize(heads_.size());
            for (auto& t : etab_) t.resize(n_ * n_); // not written here: the rows write it all
        }
    }
    // Certified double kernel, L = 2, f_in add or concat: the rows p of the changes at these
    // positions are prepared below (every replacement).
    const std::size_t sigma = m.sigma.symbols.size();
    std::vector<unsigned char> prepared_row;
    if constexpr (interval_kernel)
        if (L == 2 && sigma >= 2 && sigma <= max_prepared_symbols &&
            (m.input == model::input_kind::add || m.input == model::input_kind::concat)) {
            prepared_row.assign(n_, changed_positions ? 0 : 1);
            prepared_row[n_ - 1] = 0; // eos is never changed
            if (changed_positions)
                for (std::size_t p : *changed_positions)
                    if (p + 1 < n_)
                        prepared_row[p] = 1;
            // What the prepared sums keep (1 + d_v intervals per position, replacement and
            // head), within max_prepared_bytes.
            double bytes = 0;
            for (const auto& hd : lay.heads)
                bytes += static_cast<double>(n_) * static_cast<double>(sigma - 1) *
                         static_cast<double>(1 + attention::value(hd, y0_.front(), ctx).size()) *
                         static_cast<double>(sizeof(S));
            if (bytes <= static_cast<double>(max_prepared_bytes)) {
                rowp_.resize(heads_.size());
                rowp_ok_.resize(heads_.size());
            } else {
                prepared_row.clear();
            }
        }
    // Where an undefined value of layer 1 would be met (located on the way out).
    std::size_t at_pos = 0, at_head = 0;
    try {
        for (std::size_t h = 0; h < heads_.size(); ++h) {
            const auto& hd = lay.heads[h];
            auto& st = heads_[h];
            at_head = h + 1;
            for (std::size_t j = 0; j < n_; ++j) {
                at_pos = j + 1;
                st.k.push_back(attention::key(hd, y0_[j], ctx));
                st.v.push_back(attention::value(hd, y0_[j], ctx));
            }
            const std::size_t dv = st.v.front().size();
            // Certified double kernel, L = 2: every row by the certified soft-attention row on
            // midpoints (one a-priori bound per row, exp_fast; docs/scalars.md, "Soft-attention
            // rows"), its exponentials E_j giving the table e_ij in E_j [1 - tau_i, 1 + tau_i];
            // a row it cannot take (a midpoint not finite) by the interval operations below.
            using rows_t = attention::detail::soft_rows<S>;
            std::shared_ptr<rows_t> krows;
            if constexpr (interval_kernel)
                if (L == 2) {
                    krows = std::make_shared<rows_t>(st.k, st.v, ctx);
                    krows_.resize(heads_.size());
                    krows_[h] = krows; // row p of every change (fold_interval)
                }
            [[maybe_unused]] typename row_sums_of<S>::type rs{};
            // Row p of a change x_p <- a: the scaled query moves by dq = f Q_W delta (delta:
            // y^(0)'s change, token block first for concat), so its weights are x's row p's
            // times X_j = exp(dq . k_j). Per pair (b, a) of symbols with b at a prepared
            // position: the midpoints of X_j, their largest relative radius and upper end.
            using factors_t = typename row_sums_of<S>::factors;
            [[maybe_unused]] std::vector<factors_t> pair_factors;
            [[maybe_unused]] std::vector<std::vector<double>> factor_mid;
            [[maybe_unused]] std::vector<typename row_sums_of<S>::type> scaled_rs;
            [[maybe_unused]] std::vector<factors_t> row_factors;
            [[maybe_unused]] std::unique_ptr<bool[]> scaled_ok;
            if constexpr (interval_kernel)
                if (krows && !prepared_row.empty()) {
                    pair_factors.assign(sigma * sigma, factors_t{});
                    factor_mid.resize(sigma * sigma);
                    // A pair's factors cost about five rows (n interval exponentials): a
                    // symbol's pairs are formed where it is at min_prepared_positions of the
                    // positions at least.
                    std::vector<std::size_t> present(sigma, 0);
                    for (std::size_t i = 0; i < n_; ++i)
                        if (prepared_row[i])
                            ++present[static_cast<std::size_t>(x[i])];
                    for (auto& c : present)
                        c = c >= min_prepared_positions ? 1 : 0;
                    for (std::size_t b = 0; b < sigma; ++b)
                        for (std::size_t a = 0; a < sigma && present[b]; ++a) {
                            if (a == b)
                                continue;
                            try {
                                const vec<S> dq = scaled_query_change(
                                    hd, token_change(m, y0_.front().size(), b, a, ctx), n_, ctx);
                                auto& mid = factor_mid[b * sigma + a];
                                mid.resize(n_);
                                double xi = 0, hi_max = 0;
                                bool ok = true;
                                for (std::size_t j = 0; j < n_ && ok; ++j) {
                                    const S X = numeric::exp(dot(dq, st.k[j], ctx));
                                    double r = 0;
                                    ok = numeric::mid_rad(X, mid[j], r) && mid[j] > 0;
                                    xi =
                                        std::max(xi, numeric::interval_detail::next_up(r / mid[j]));
                                    hi_max = std::max(hi_max, X.hi());
                                }
                                if (ok)
                                    pair_factors[b * sigma + a] = factors_t{mid.data(), xi, hi_max};
                            } catch (const numeric::undefined_error&) {
                                // not prepared: such a change takes row p by the certified row
                            }
                        }
                    scaled_rs.resize(sigma - 1);
                    row_factors.resize(sigma - 1);
                    scaled_ok = std::make_unique<bool[]>(sigma - 1);
                    rowp_[h].assign(n_ * (sigma - 1) * (1 + dv), S());
                    rowp_ok_[h].assign(n_ * (sigma - 1), 0);
                }
            // x's row i by the certified row; with the rows p prepared, also the row p of each
            // change at i (stored in rowp_).
            auto certified_row = [&](const vec<S>& q, std::size_t i) {
                if constexpr (interval_kernel) {
                    if (!krows)
                        return false;
                    if (pair_factors.empty() || !prepared_row[i])
                        return krows->sums(q, rs);
                    const std::size_t b = static_cast<std::size_t>(x[i]);
                    for (std::size_t a = 0, k = 0; a < sigma; ++a)
                        if (a != b)
                            row_factors[k++] = pair_factors[b * sigma + a];
                    if (!krows->sums_scaled(q, row_factors.data(), sigma - 1, i, rs,
                                            scaled_rs.data(), scaled_ok.get(),
                                            fault_ == incremental_fault::drop_row_p_bound))
                        return false;
                    for (std::size_t k = 0; k < sigma - 1; ++k) {
                        const std::size_t at = i * (sigma - 1) + k;
                        if (!scaled_ok[k] || scaled_rs[k].num.size() != dv)
                            continue;
                        S* out = &rowp_[h][at * (1 + dv)];
                        out[0] = S(scaled_rs[k].den);
                        for (std::size_t c = 0; c < dv; ++c)
                            out[1 + c] = S(scaled_rs[k].num[c]);
                        rowp_ok_[h][at] = 1;
                    }
                    return true;
                } else {
                    (void)q;
                    (void)i;
                    return false;
                }
            };
            // The tables are written by tiles of `tile` rows (rows i of column j at [j n + i]:
            // a row alone would write one entry per cache line and page): each row's E_j are
            // kept until the tile is full, then written column after column.
            constexpr std::size_t tile = 8;
            std::vector<double> tile_e;
            std::vector<std::size_t> tile_row;
            auto flush_tile = [&] {
                if (!tile_row.empty() && !etab_.empty()) {
                    double* tab = etab_[h].data();
                    const std::size_t T = tile_row.size();
                    for (std::size_t j = 0; j < n_; ++j)
                        for (std::size_t r = 0; r < T; ++r) tab[j * n_ + tile_row[r]] = tile_e[r * n_ + j];
                }
                tile_row.clear();
            };
            for (std::size_t i = first_row_; i < n_; ++i) {
                at_pos = i + 1;
                vec<S> q = scaled_query(hd, y0_[i], n_, ctx);
                if constexpr (interval_kernel) {
                    if (krows && i == first_row_) {
                        // What weight() needs to recompute the entries (and the rows' part of
                        // a tabled entry).
                        kmid_.resize(heads_.size());
                        row_tau_.resize(heads_.size());
                        row_zero_hi_.resize(heads_.size());
                        const std::size_t dk = st.k.front().size();
                        kmid_[h].assign(n_ * dk, 0.0);
                        for (std::size_t j = 0; j < n_; ++j)
                            for (std::size_t t = 0; t < dk; ++t) {
                                double r = 0;
                                numeric::mid_rad(st.k[j][t], kmid_[h][j * dk + t], r);
                            }
                        row_tau_[h].assign(n_, std::numeric_limits<double>::quiet_NaN());
                        row_zero_hi_[h].assign(n_, 0.0);
                    }
                    if (certified_row(q, i)) {
                        if (!row_tau_.empty()) {
                            row_tau_[h][i] = rs.tau;
                            row_zero_hi_[h][i] = rs.zero_hi;
                        }
                        if (!etab_.empty()) {
                            tile_e.resize(tile * n_);
                            std::copy(rs.exp_mid, rs.exp_mid + n_,
                                      tile_e.begin() +
                                          static_cast<std::ptrdiff_t>(tile_row.size() * n_));
                            tile_row.push_back(i);
                            if (tile_row.size() == tile) flush_tile();
                        }
                        vec<S> num(dv);
                        for (std::size_t c = 0; c < dv; ++c) num[c] = S(rs.num[c]);
                        st.q.push_back(std::move(q));
                        st.shift.push_back(S(rs.shift));
                        st.num.push_back(std::move(num));
                        st.den.push_back(S(rs.den));
                        continue;
                    }
                }
                // A row of the interval operations: its entries are not E_j [1 - tau, 1 + tau],
                // so the tables go (weight() recomputes every entry).
                if constexpr (interval_kernel) {
                    etab_.clear();
                    etab_.shrink_to_fit();
                }
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
                    if constexpr (raw_kernels)
                        if (!tables_.empty()) {
                            if (e.precision() == ctx.precision_bits) tables_[h].set(i, j, e.raw());
                            else tables_.clear(); // another precision: no raw kernel either
                        }
                    den += e;
                    for (std::size_t c = 0; c < dv; ++c) numeric::fma_acc(num[c], e, st.v[j][c]);
                }
                st.q.push_back(std::move(q));
                st.shift.push_back(std::move(shift));
                st.num.push_back(std::move(num));
                st.den.push_back(std::move(den));
            }
            flush_tile();
            at_pos = 0;
            if (m.input == model::input_kind::add || m.input == model::input_kind::concat) {
                st.ratio.resize(sigma * sigma);
                for (std::size_t b = 0; b < sigma; ++b)
                    for (std::size_t a = 0; a < sigma; ++a) {
                        if (a == b) continue;
                        // The change of y^(0) and of the key.
                        const vec<S> delta = token_change(m, y0_.front().size(), b, a, ctx);
                        model::affine_map<S> kw{hd.score.K.W, {}, true};
                        const vec<S> dk = model::apply_affine(kw, delta, ctx);
                        auto& out = st.ratio[b * sigma + a];
                        out.reserve(st.q.size());
                        for (const auto& q : st.q) out.push_back(numeric::exp(dot(q, dk, ctx)));
                        // Raw kernels (MPFR), L = 2: the change of p's scaled query, f Q_W
                        // delta, for row p (the certified double kernel prepared its rows p
                        // above).
                        if (!raw_kernels || L != 2) continue;
                        if (st.qratio.empty()) st.qratio.resize(sigma * sigma);
                        const vec<S> dq = scaled_query_change(hd, delta, n_, ctx);
                        auto& qout = st.qratio[b * sigma + a];
                        qout.reserve(n_);
                        for (const auto& k : st.k) qout.push_back(numeric::exp(dot(dq, k, ctx)));
                    }
            }
        }
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(1, nullptr, at_pos, at_head));
    }
    if constexpr (raw_kernels) {
        const long prec = ctx.precision_bits;
        raw_ = uniform(y0_, prec);
        for (const auto& st : heads_) {
            raw_ = raw_ && uniform(st.q, prec) && uniform(st.k, prec) && uniform(st.v, prec) &&
                   uniform(st.shift, prec) && uniform(st.num, prec) && uniform(st.den, prec) &&
                   uniform(st.ratio, prec) && uniform(st.qratio, prec);
        }
        if (raw_) swork_.assign(n_, mpfr_real(prec));
    }
    auto row_output = [&](std::size_t i) {
        std::vector<vec<S>> b(heads_.size());
        const std::size_t r = i - first_row_;
        for (std::size_t h = 0; h < heads_.size(); ++h) {
            const auto& st = heads_[h];
            b[h] = st.num[r];
            for (auto& c : b[h]) c = c / st.den[r];
        }
        try {
            return attention::update(lay, y0_[i], b, ctx);
        } catch (const numeric::undefined_error& e) {
            throw e.located(attention::place(1, "update", i + 1));
        }
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
            if constexpr (raw_kernels) {
                const long prec = ctx.precision_bits;
                raw_fold_ = raw_ && uniform(y1_, prec);
                for (const auto& gh : g_) raw_fold_ = raw_fold_ && uniform(gh, prec);
                if (raw_fold_) ywork_.assign(n_, vec<S>(y1_.front().size(), mpfr_real(prec)));
            }
        }
    }
    if constexpr (interval_kernel) init_interval_kernel();
    if (!raw_fold_) tables_.clear(); // only the raw kernel of changed_raw reads them
    if (!fold_mr_) etab_.clear();    // only the certified double kernel reads them
    if constexpr (interval_kernel) {
        // The rows' growth factors of the tabled entries, and whether a column turns into
        // intervals by table_column (every tau below 1/2).
        table_fast_ = !etab_.empty() && row_tau_.size() == heads_.size();
        row_grow_lo_.assign(row_tau_.size(), {});
        row_grow_hi_.assign(row_tau_.size(), {});
        for (std::size_t h = 0; h < row_tau_.size(); ++h)
            for (double tau : row_tau_[h]) {
                const auto g = row_growth(tau);
                row_grow_lo_[h].push_back(g.first);
                row_grow_hi_[h].push_back(g.second);
                table_fast_ = table_fast_ && tau >= 0 && tau < 0.5;
            }
    }
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
                                          const vec<S>& kp, const vec<S>& vp) const {
    if constexpr (raw_kernels) {
        const long prec = ctx_.precision_bits;
        if (raw_ && uniform(q, prec) && uniform(kp, prec) && uniform(vp, prec))
            return full_row_raw(h, q, p, kp, vp);
    }
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
    // The cancellation guard: the rest of the denominator must keep a 2^-16 share.
    const S guard = numeric::from_int<S>(65536, ctx_);
    const bool fold = affine_ != nullptr;
    // Per head: the full output b_h (recomputed rows), or the rank-1 coefficients.
    std::vector<S> lam(H), alpha(H), beta(H);
    bool folded = fold && i != p;
    for (std::size_t h = 0; h < H; ++h) {
        const auto& st = heads_[h];
        if (i == p) {
            b[h] = full_row(h, ch.qp[h], p, ch.kp[h], ch.vp[h]);
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
            b[h] = full_row(h, st.q[r], p, ch.kp[h], ch.vp[h]);
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
    attention::detail::soft_rows<dinterval>::row_sums rs;
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
    if (m_.layers.size() != 2 || !affine_ || !fault_ok || heads_.size() > fold_max_heads) return;
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
        attention::detail::soft_rows<dinterval> rows(y1_, y1m_.data(), y1r_.data(), ctx_);
        attention::detail::soft_rows<dinterval>::row_sums rs;
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
    attention::detail::soft_rows<dinterval> rows(st.y1, st.y1_mid.data(), d, lean_m1_.data(),
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
    std::vector<attention::detail::soft_rows<dinterval>::row_sums> sums(H2);
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
    attention::detail::soft_rows<dinterval> rows =
        kept ? attention::detail::soft_rows<dinterval>(y1, mid->data(), rad->data(), ctx_)
             : attention::detail::soft_rows<dinterval>(y1, y1, ctx_);
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

#define ATTNPROP_INSTANTIATE(S) template class incremental_influence<S>;
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE
#define ATTNPROP_INSTANTIATE(S) template bool incremental_supports(const model::model<S>&);
ATTNPROP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

} // namespace attnprop::attention
