// The set-up of the incremental one-symbol kernel (incremental_influence.hpp): the constructor,
// which evaluates layer 1 of x once and keeps what every change reads.
#include "attention/incremental_internal.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <variant>

namespace attnprop::attention {

using namespace incremental_detail;
using model::vec;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;

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
    mask1_ = L == 2 && m.layers.front().mask != model::mask_kind::none;
    y0_ = attention::initial_states(m, x, ctx);
    const auto& lay = m.layers.front();
    heads_.resize(lay.heads.size());
    reserve_tables(table_bytes);
    const std::vector<unsigned char> prepared_row = rows_to_prepare(changed_positions);
    // Where an undefined value of layer 1 would be met (located on the way out).
    std::size_t at_pos = 0, at_head = 0;
    try {
        for (std::size_t h = 0; h < heads_.size(); ++h) {
            at_head = h + 1;
            init_head(h, prepared_row, at_pos);
        }
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(1, nullptr, at_pos, at_head));
    }
    init_raw();
    init_states();
    if constexpr (interval_kernel) init_interval_kernel();
    if (!raw_fold_) tables_.clear(); // only the raw kernel of changed_raw reads them
    if (!fold_mr_) etab_.clear();    // only the certified double kernel reads them
    init_table_growth();
}

template <numeric::ExpScalar S>
void incremental_influence<S>::reserve_tables([[maybe_unused]] std::size_t table_bytes) {
    [[maybe_unused]] const std::size_t L = m_.layers.size();
    if (mask1_) return; // the tables are read by kernels over every key
    if constexpr (raw_kernels) {
        const long prec = ctx_.precision_bits;
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
}

template <numeric::ExpScalar S>
std::vector<unsigned char> incremental_influence<S>::rows_to_prepare(
    [[maybe_unused]] const std::vector<std::size_t>* changed_positions) {
    [[maybe_unused]] const std::size_t L = m_.layers.size();
    [[maybe_unused]] const std::size_t sigma = m_.sigma.symbols.size();
    [[maybe_unused]] const auto& lay = m_.layers.front();
    // Certified double kernel, L = 2, f_in add or concat: the rows p of the changes at these
    // positions are prepared by init_head (every replacement).
    std::vector<unsigned char> prepared_row;
    if constexpr (interval_kernel)
        if (L == 2 && !mask1_ && sigma >= 2 && sigma <= max_prepared_symbols &&
            (m_.input == model::input_kind::add || m_.input == model::input_kind::concat)) {
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
                         static_cast<double>(1 + attention::value(hd, y0_.front(), ctx_).size()) *
                         static_cast<double>(sizeof(S));
            if (bytes <= static_cast<double>(max_prepared_bytes)) {
                rowp_.resize(heads_.size());
                rowp_ok_.resize(heads_.size());
            } else {
                prepared_row.clear();
            }
        }
    return prepared_row;
}

template <numeric::ExpScalar S>
void incremental_influence<S>::init_head(
    std::size_t h, [[maybe_unused]] const std::vector<unsigned char>& prepared_row,
    std::size_t& at_pos) {
    [[maybe_unused]] const std::size_t L = m_.layers.size();
    [[maybe_unused]] const std::size_t sigma = m_.sigma.symbols.size();
    const auto& lay = m_.layers.front();
    const auto& hd = lay.heads[h];
    auto& st = heads_[h];
    for (std::size_t j = 0; j < n_; ++j) {
        at_pos = j + 1;
        st.k.push_back(attention::key(hd, y0_[j], ctx_));
        st.v.push_back(attention::value(hd, y0_[j], ctx_));
    }
    const std::size_t dv = st.v.front().size();
    // Certified double kernel, L = 2: every row by the certified soft-attention row on
    // midpoints (one a-priori bound per row, exp_fast; docs/scalars.md, "Soft-attention
    // rows"), its exponentials E_j giving the table e_ij in E_j [1 - tau_i, 1 + tau_i];
    // a row it cannot take (a midpoint not finite) by the interval operations below.
    using rows_t = attention::soft_rows<S>;
    std::shared_ptr<rows_t> krows;
    if constexpr (interval_kernel)
        if (L == 2 && !mask1_) {
            krows = std::make_shared<rows_t>(st.k, st.v, ctx_);
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
                    ++present[static_cast<std::size_t>(x_[i])];
            for (auto& c : present)
                c = c >= min_prepared_positions ? 1 : 0;
            for (std::size_t b = 0; b < sigma; ++b)
                for (std::size_t a = 0; a < sigma && present[b]; ++a) {
                    if (a == b)
                        continue;
                    try {
                        const vec<S> dq = scaled_query_change(
                            hd, token_change(m_, y0_.front().size(), b, a, ctx_), n_, ctx_);
                        auto& mid = factor_mid[b * sigma + a];
                        mid.resize(n_);
                        double xi = 0, hi_max = 0;
                        bool ok = true;
                        for (std::size_t j = 0; j < n_ && ok; ++j) {
                            const S X = numeric::exp(dot(dq, st.k[j], ctx_));
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
            const std::size_t b = static_cast<std::size_t>(x_[i]);
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
        vec<S> q = scaled_query(hd, y0_[i], n_, ctx_);
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
        // Row i's keys: j < end (every key, or j <= i under a masked layer 1).
        const std::size_t end = row_end(i);
        std::vector<S> s;
        s.reserve(end);
        for (std::size_t j = 0; j < end; ++j) s.push_back(dot(q, st.k[j], ctx_));
        S mx = s.front();
        for (std::size_t j = 1; j < end; ++j)
            if (numeric::compare(s[j], mx) == numeric::order::greater) mx = s[j];
        S shift = numeric::representative(mx);
        vec<S> num(dv, numeric::zero<S>(ctx_));
        S den = numeric::zero<S>(ctx_);
        for (std::size_t j = 0; j < end; ++j) {
            S e = numeric::exp(s[j] - shift);
            if constexpr (raw_kernels)
                if (!tables_.empty()) {
                    if (e.precision() == ctx_.precision_bits) tables_[h].set(i, j, e.raw());
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
    init_ratios(h);
}

template <numeric::ExpScalar S>
void incremental_influence<S>::init_ratios(std::size_t h) {
    const std::size_t L = m_.layers.size();
    const std::size_t sigma = m_.sigma.symbols.size();
    const auto& hd = m_.layers.front().heads[h];
    auto& st = heads_[h];
    if (m_.input == model::input_kind::add || m_.input == model::input_kind::concat) {
        st.ratio.resize(sigma * sigma);
        for (std::size_t b = 0; b < sigma; ++b)
            for (std::size_t a = 0; a < sigma; ++a) {
                if (a == b) continue;
                // The change of y^(0) and of the key.
                const vec<S> delta = token_change(m_, y0_.front().size(), b, a, ctx_);
                model::affine_map<S> kw{hd.score.K.W, {}, true};
                const vec<S> dk = model::apply_affine(kw, delta, ctx_);
                auto& out = st.ratio[b * sigma + a];
                out.reserve(st.q.size());
                for (const auto& q : st.q) out.push_back(numeric::exp(dot(q, dk, ctx_)));
                // Raw kernels (MPFR), L = 2: the change of p's scaled query, f Q_W
                // delta, for row p (the certified double kernel prepared its rows p in
                // init_head).
                if (!raw_kernels || L != 2 || mask1_) continue;
                if (st.qratio.empty()) st.qratio.resize(sigma * sigma);
                const vec<S> dq = scaled_query_change(hd, delta, n_, ctx_);
                auto& qout = st.qratio[b * sigma + a];
                qout.reserve(n_);
                for (const auto& k : st.k) qout.push_back(numeric::exp(dot(dq, k, ctx_)));
            }
    }
}

template <numeric::ExpScalar S>
void incremental_influence<S>::init_raw() {
    if constexpr (raw_kernels) {
        const long prec = ctx_.precision_bits;
        raw_ = !mask1_ && uniform(y0_, prec);
        for (const auto& st : heads_) {
            raw_ = raw_ && uniform(st.q, prec) && uniform(st.k, prec) && uniform(st.v, prec) &&
                   uniform(st.shift, prec) && uniform(st.num, prec) && uniform(st.den, prec) &&
                   uniform(st.ratio, prec) && uniform(st.qratio, prec);
        }
        if (raw_) swork_.assign(n_, mpfr_real(prec));
    }
}

template <numeric::ExpScalar S>
void incremental_influence<S>::init_states() {
    const std::size_t L = m_.layers.size();
    const auto& lay = m_.layers.front();
    auto row_output = [&](std::size_t i) {
        std::vector<vec<S>> b(heads_.size());
        const std::size_t r = i - first_row_;
        for (std::size_t h = 0; h < heads_.size(); ++h) {
            const auto& st = heads_[h];
            b[h] = st.num[r];
            for (auto& c : b[h]) c = c / st.den[r];
        }
        try {
            return attention::update(lay, y0_[i], b, ctx_);
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
                const long prec = ctx_.precision_bits;
                raw_fold_ = raw_ && uniform(y1_, prec);
                for (const auto& gh : g_) raw_fold_ = raw_fold_ && uniform(gh, prec);
                if (raw_fold_) ywork_.assign(n_, vec<S>(y1_.front().size(), mpfr_real(prec)));
            }
        }
    }
}

template <numeric::ExpScalar S>
void incremental_influence<S>::init_table_growth() {
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

#define ATTNPROP_INSTANTIATE(S)                                                                    \
    template incremental_influence<S>::incremental_influence(                                      \
        const model::model<S>&, const model::input_sequence&, const numeric::context&,             \
        incremental_fault, std::size_t, const std::vector<std::size_t>*);                          \
    template void incremental_influence<S>::reserve_tables(std::size_t);                           \
    template std::vector<unsigned char> incremental_influence<S>::rows_to_prepare(                 \
        const std::vector<std::size_t>*);                                                          \
    template void incremental_influence<S>::init_head(std::size_t,                                 \
                                                      const std::vector<unsigned char>&,           \
                                                      std::size_t&);                               \
    template void incremental_influence<S>::init_ratios(std::size_t);                              \
    template void incremental_influence<S>::init_raw();                                            \
    template void incremental_influence<S>::init_states();                                         \
    template void incremental_influence<S>::init_table_growth();
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

} // namespace attnprop::attention
