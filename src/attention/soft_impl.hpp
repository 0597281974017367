#pragma once
// Template bodies of soft.hpp.

#include "attention/linear_features.hpp"

#include <algorithm>
#include <memory>

namespace attnprop::attention {

namespace detail {

/// Small per-row memo of exp(s - shift) keyed by the exact representation of s. Paper
/// constructions on binary inputs produce a handful of distinct scores per row; random models
/// produce all-distinct ones, so the memo gives up after `limit` distinct values.
template <class S> class exp_memo {
public:
    explicit exp_memo(bool enabled) : enabled_(enabled) {}
    const S* find(const S& s) const {
        if (!enabled_) return nullptr;
        for (const auto& [key, val] : entries_)
            if (numeric::same_value(key, s)) return &val;
        return nullptr;
    }
    void add(const S& s, const S& e) {
        if (!enabled_) return;
        if (entries_.size() >= limit) {
            enabled_ = false;
            entries_.clear();
            return;
        }
        entries_.emplace_back(s, e);
    }

private:
    static constexpr std::size_t limit = 8;
    bool enabled_;
    std::vector<std::pair<S, S>> entries_;
};

} // namespace detail

template <numeric::Scalar S>
vec<S> mean_value(const std::vector<vec<S>>& values, const numeric::context& ctx) {
    const std::size_t dv = values.front().size();
    vec<S> acc(dv, numeric::zero<S>(ctx));
    for (const auto& v : values)
        for (std::size_t c = 0; c < dv; ++c) acc[c] += v[c];
    S n = numeric::from_int<S>(static_cast<long>(values.size()), ctx);
    for (auto& a : acc) a = a / n;
    return acc;
}

namespace detail {

/// The reference row algorithm for any ExpScalar: scores by model::dot, shift by a
/// representative of the first maximal score, exp (memoised when expensive), weighted sum;
/// over the keys [0, min(end, keys.size())) (a masked row's).
template <numeric::ExpScalar S>
vec<S> generic_soft_row(const vec<S>& scaled_query, const std::vector<vec<S>>& keys,
                        const std::vector<vec<S>>& values, const numeric::context& ctx,
                        vec<S>* weights, std::size_t end = all_keys) {
    const std::size_t n = std::min(keys.size(), end);
    const std::size_t dk = scaled_query.size();
    std::vector<S> s;
    s.reserve(n);
    for (const auto& k : keys) s.push_back(model::dot(scaled_query.data(), k.data(), dk, ctx));
    S shift = s.front();
    for (std::size_t j = 1; j < n; ++j)
        if (numeric::compare(s[j], shift) == numeric::order::greater) shift = s[j];
    shift = numeric::representative(shift);

    exp_memo<S> memo(numeric::scalar_traits<S>::expensive_exp);
    const std::size_t dv = values.front().size();
    vec<S> num(dv, numeric::zero<S>(ctx));
    S den = numeric::zero<S>(ctx);
    std::vector<S> e;
    if (weights) e.reserve(n);
    for (std::size_t j = 0; j < n; ++j) {
        S ej;
        if (const S* hit = memo.find(s[j])) {
            ej = *hit;
        } else {
            ej = numeric::exp(s[j] - shift);
            memo.add(s[j], ej);
        }
        den += ej;
        for (std::size_t c = 0; c < dv; ++c) numeric::fma_acc(num[c], ej, values[j][c]);
        if (weights) e.push_back(std::move(ej));
    }
    for (auto& v : num) v = v / den;
    if (weights) {
        for (auto& w : e) w = w / den;
        *weights = std::move(e);
    }
    return num;
}

} // namespace detail

/// The primary template runs detail::generic_soft_row; double, MPFR, Arb balls and certified
/// double intervals have specialisations (below, and soft_rows_interval.cpp).
template <numeric::ExpScalar S> class soft_rows {
public:
    soft_rows(const std::vector<vec<S>>& keys, const std::vector<vec<S>>& values,
              const numeric::context& ctx)
        : keys_(keys), values_(values), ctx_(ctx) {}
    /// b = sum_j w_j v_j with w = softmax(q . k_j) over the keys j < end (every key by
    /// default; a masked row's key range, model::key_end); the weights (end of them) into
    /// `weights` when non-null.
    vec<S> row(const vec<S>& scaled_query, vec<S>* weights, std::size_t end = all_keys) {
        return detail::generic_soft_row(scaled_query, keys_, values_, ctx_, weights, end);
    }

private:
    const std::vector<vec<S>>& keys_;
    const std::vector<vec<S>>& values_;
    numeric::context ctx_;
};

/// double: contiguous keys and values and a score buffer; the same operations in the same
/// order as generic_soft_row, so the results are identical.
template <> class soft_rows<double> {
public:
    soft_rows(const std::vector<vec<double>>& keys, const std::vector<vec<double>>& values,
              const numeric::context&)
        : n_(keys.size()), dk_(keys.front().size()), dv_(values.front().size()), s_(n_) {
        keys_.reserve(n_ * dk_);
        for (const auto& k : keys) keys_.insert(keys_.end(), k.begin(), k.end());
        values_.reserve(n_ * dv_);
        for (const auto& v : values) values_.insert(values_.end(), v.begin(), v.end());
    }

    vec<double> row(const vec<double>& q, vec<double>* weights, std::size_t end = all_keys) {
        const std::size_t dk = q.size(); // == dk_
        const std::size_t n = std::min(n_, end);
        for (std::size_t j = 0; j < n; ++j) {
            const double* k = &keys_[j * dk_];
            double acc = 0.0;
            for (std::size_t t = 0; t < dk; ++t) numeric::fma_acc(acc, q[t], k[t]);
            s_[j] = acc;
        }
        double shift = s_[0];
        for (std::size_t j = 1; j < n; ++j)
            if (numeric::compare(s_[j], shift) == numeric::order::greater) shift = s_[j];
        vec<double> num(dv_, 0.0);
        double den = 0.0;
        for (std::size_t j = 0; j < n; ++j) {
            const double e = numeric::exp(s_[j] - shift);
            den += e;
            const double* v = &values_[j * dv_];
            for (std::size_t c = 0; c < dv_; ++c) numeric::fma_acc(num[c], e, v[c]);
            s_[j] = e;
        }
        for (auto& v : num) v = v / den;
        if (weights) {
            weights->resize(n);
            for (std::size_t j = 0; j < n; ++j) (*weights)[j] = s_[j] / den;
        }
        return num;
    }

private:
    std::size_t n_, dk_, dv_;
    std::vector<double> keys_, values_, s_;
};

/// MPFR: the operations of generic_soft_row on raw mpfr_t scratch (no allocation per term),
/// identical results. Used when every key, value and query entry has the context's precision
/// (what to_scalar produces); otherwise generic_soft_row.
template <> class soft_rows<numeric::mpfr_real> {
    using R = numeric::mpfr_real;

public:
    soft_rows(const std::vector<vec<R>>& keys, const std::vector<vec<R>>& values,
              const numeric::context& ctx)
        : keys_(keys), values_(values), ctx_(ctx), prec_(ctx.precision_bits), t_(prec_),
          e_(prec_) {
        fast_ = uniform(keys) && uniform(values);
        if (fast_) s_.assign(keys.size(), R(prec_));
    }

    vec<R> row(const vec<R>& q, vec<R>* weights, std::size_t end = all_keys) {
        if (!fast_ || !uniform_vec(q))
            return detail::generic_soft_row(q, keys_, values_, ctx_, weights, end);
        const auto rnd = MPFR_RNDN;
        const std::size_t n = std::min(keys_.size(), end), dk = q.size(),
                          dv = values_.front().size();
        for (std::size_t j = 0; j < n; ++j) {
            mpfr_ptr acc = s_[j].raw();
            mpfr_set_zero(acc, 1);
            const vec<R>& k = keys_[j];
            for (std::size_t t = 0; t < dk; ++t) mpfr_fma(acc, q[t].raw(), k[t].raw(), acc, rnd);
        }
        std::size_t best = 0;
        for (std::size_t j = 1; j < n; ++j)
            if (numeric::compare(s_[j], s_[best]) == numeric::order::greater) best = j;
        mpfr_srcptr shift = s_[best].raw();
        detail::exp_memo<R> memo(true);
        vec<R> num(dv, R(prec_));
        R den(prec_);
        vec<R> e;
        if (weights) e.reserve(n);
        for (std::size_t j = 0; j < n; ++j) {
            if (const R* hit = memo.find(s_[j])) {
                mpfr_set(e_.raw(), hit->raw(), rnd);
            } else {
                mpfr_sub(t_.raw(), s_[j].raw(), shift, rnd);
                mpfr_exp(e_.raw(), t_.raw(), rnd);
                memo.add(s_[j], e_);
            }
            mpfr_add(den.raw(), den.raw(), e_.raw(), rnd);
            const vec<R>& v = values_[j];
            for (std::size_t c = 0; c < dv; ++c)
                mpfr_fma(num[c].raw(), e_.raw(), v[c].raw(), num[c].raw(), rnd);
            if (weights) e.push_back(e_);
        }
        for (auto& v : num) v = v / den;
        if (weights) {
            for (auto& w : e) w = w / den;
            *weights = std::move(e);
        }
        return num;
    }

private:
    bool uniform_vec(const vec<R>& v) const {
        for (const auto& x : v)
            if (x.precision() != prec_) return false;
        return true;
    }
    bool uniform(const std::vector<vec<R>>& vs) const {
        for (const auto& v : vs)
            if (!uniform_vec(v)) return false;
        return true;
    }

    const std::vector<vec<R>>& keys_;
    const std::vector<vec<R>>& values_;
    numeric::context ctx_;
    long prec_;
    bool fast_ = false;
    std::vector<R> s_;
    R t_, e_;
};

/// Certified double intervals: the row as plain double arithmetic on the midpoints (the
/// scores, one exp per key by numeric::elementary_detail::exp_fast, the weighted sums), with
/// one a-priori bound per row for everything that was not exact: the radii of queries, keys
/// and values, the rounding of every dot product and sum (gamma_n bounds, valid for any
/// summation order), the relative error of exp_fast, and the keys whose exponential is below
/// e^-707 (counted, enclosed by [0, e^(-707 + rho)]). The output is the interval quotient of
/// the numerator and denominator enclosures. Derivation: docs/scalars.md, "Soft-attention
/// rows". A row whose midpoints are not finite goes through generic_soft_row. Defined in
/// soft_rows_interval.cpp.
template <> class soft_rows<numeric::dinterval> {
    using I = numeric::dinterval;

public:
    soft_rows(const std::vector<vec<I>>& keys, const std::vector<vec<I>>& values,
              const numeric::context& ctx);
    /// Keys and values both the rows `rows` (n x d), given as midpoints `mid` and radii `rad`
    /// (n x d each, row after row) with every exact entry within mid +- rad: the midpoints are
    /// read in place (they must outlive the object), no interval is split again. `rows` (the
    /// intervals) is read only by the generic operations of a row that is not finite.
    soft_rows(const std::vector<vec<I>>& rows, const double* mid, const double* rad,
              const numeric::context& ctx);
    /// Keys and values both n rows of d midpoints `mid` (read in place), with every exact
    /// entry (k_j)_c within mid +- r_jc, described by per-row sums instead of the radii
    /// themselves: m1[j] = fl(sum_c |mid_jc|) and r1[j] >= fl(sum_c r_jc) (sums of d terms in
    /// rounding to nearest, any order), and per coordinate vrad[c] >= max_j r_jc and vabs[c] >=
    /// max_j |mid_jc|. No interval is read: a row that is not finite, or sums() that fails,
    /// has no generic fallback here (row() must not be called; `rows` may hold empty rows).
    /// The numerators' bound takes vabs[c] D^ for sum_j E_j |mid_jc| (abs_from_max_).
    soft_rows(const std::vector<vec<I>>& rows, const double* mid, std::size_t d, const double* m1,
              const double* r1, const double* vrad, const double* vabs,
              const numeric::context& ctx);
    /// The row of q over the keys j < end (every key by default; a masked row's): the bound's
    /// key and value terms stay the maxima over every key (a superset: still a bound).
    vec<I> row(const vec<I>& q, vec<I>* weights, std::size_t end = all_keys);

    /// The unnormalised row of a query, before the quotient: with the shift M (a double, the
    /// largest score midpoint) and e_j = exp(q . k_j - M) exactly, `den` encloses sum_j e_j and
    /// `num` (dv entries) sum_j e_j v_j, and every e_j lies in exp_mid[j] [1 - tau, 1 + tau]
    /// when exp_mid[j] > 0, in [0, zero_hi] when exp_mid[j] == 0 (a key below e^-707).
    /// exp_mid points into the object's scratch: valid until the next call.
    struct row_sums {
        double shift = 0;
        double tau = 0;
        double zero_hi = 0;
        const double* exp_mid = nullptr;
        numeric::interval den;
        std::vector<numeric::interval> num;
    };
    /// Fills `out` for q; false (out unspecified) when a midpoint is not finite, where row()
    /// takes the generic operations. With drop_error_bound_for_testing, tau, zero_hi and the
    /// radii of den and num are 0.
    bool sums(const vec<I>& q, row_sums& out);
    /// sums() of the keys and values with key j and value j replaced by kj and vj (row p of a
    /// one-symbol change: its new query, key and value): the same bound, its key and value
    /// terms the largest over the kept keys and values and the new ones (a superset). False
    /// when a midpoint is not finite. `drop` (tests only) leaves out the row's bound as
    /// drop_error_bound_for_testing does. Only for an object built from intervals.
    bool sums_replaced(const vec<I>& q, std::size_t j, const vec<I>& kj, const vec<I>& vj,
                       row_sums& out, bool drop = false);
    /// Factors X_j of a row's weights (n of them): every exact X_j lies in mid[j] [1 - xi,
    /// 1 + xi] and below hi_max; every mid[j] is positive and finite.
    struct weight_factors {
        const double* mid = nullptr;
        double xi = 0;
        double hi_max = 0;
    };
    /// sums(q) into `out`, bit for bit, and in the same pass over the values, for each of the
    /// `count` factor sets f[k], the sums of the row whose weights are q's times f[k]'s factors
    /// with key `skip` left out, relative to q's shift: with e_j = exp(q . k_j - out.shift)
    /// exactly, scaled[k].den encloses sum_{j != skip} e_j X_j and scaled[k].num sum_{j !=
    /// skip} e_j X_j v_j. (Row p of a change x_p <- a whose query moves by dq: X_j =
    /// exp(dq . k_j), and the new key p's term is added by the caller.) scaled_ok[k] says
    /// whether scaled[k] was formed: not where q's tau or f[k].xi is 1/2 or more, or a
    /// product is not finite. False (nothing formed) where sums(q) is false. `drop_scaled`
    /// (tests only) leaves out the scaled rows' bounds; q's row follows
    /// drop_error_bound_for_testing as sums() does. Derivation: docs/scalars.md, "Row p,
    /// prepared in the constructor".
    bool sums_scaled(const vec<I>& q, const weight_factors* f, std::size_t count, std::size_t skip,
                     row_sums& out, row_sums* scaled, bool* scaled_ok, bool drop_scaled = false);
    /// sums() of `count` queries qs[h] into out[h], over one pass of the keys and one of the
    /// values for all of them (each out[h].exp_mid valid until the next call); false when one
    /// of them fails.
    bool sums_many(const vec<I>* const* qs, std::size_t count, row_sums* out);
    /// sums_many with the scores given (query h's score of key j at scores[h n + j]): they must
    /// be the ones sums_many computes, fl(a . m_j) of the queries' midpoints a summed in index
    /// order from 0.0 (the caller computes them where the keys are at hand).
    bool sums_many_scored(const vec<I>* const* qs, std::size_t count, const double* scores,
                          row_sums* out);

    /// Testing only: when set, the row's error bound is dropped (the output is the quotient of
    /// the computed sums, rounded outward once): the negative control that the containment
    /// property semantics/soft-interval-encloses must catch.
    static bool& drop_error_bound_for_testing();

private:
    const std::vector<vec<I>>& keys_;
    const std::vector<vec<I>>& values_;
    numeric::context ctx_;
    std::size_t n_, dk_, dv_;
    bool sums_core(const vec<I>& q, row_sums& out, bool drop);
    bool sums_core_many(const vec<I>* const* qs, std::size_t count, row_sums* outs, bool drop,
                        const double* scores = nullptr);
    /// sums_core_many's first part: the scores, shifts, exponentials (query h's at e_[h n ...]),
    /// tau, zero_hi, and Z in den's lower end.
    bool exps_core(const vec<I>* const* qs, std::size_t count, row_sums* outs, bool drop,
                   const double* scores);
    /// The second part: the sums of rows 0 .. count - 1 of e_ and their bounds from each
    /// row_sums' tau and Z (den's lower end), row 0's into `first` and row h's into rest[h -
    /// 1]; row 0 without its bound when drop_first, the others when drop_rest.
    void sums_of_exps(std::size_t count, row_sums& first, row_sums* rest, bool drop_first,
                      bool drop_rest);
    bool finite_ = true;
    std::vector<double> kmid_, vmid_; ///< n x dk and n x dv midpoints (built from intervals)
    const double* km_ = nullptr;      ///< the keys' midpoints (kmid_, or the caller's)
    const double* vm_ = nullptr;      ///< the values' midpoints (vmid_, or the caller's)
    double key_mid_term_ = 0;  ///< max_j gamma_dk |k_m,j|_1 + |k_r,j|_1
    double key_rad_term_ = 0;  ///< max_j |k_m,j|_1 + |k_r,j|_1
    std::vector<double> vrad_, vabs_; ///< per value coordinate: max_j radius, max_j |midpoint|
    std::vector<double> s_, e_;       ///< per query and key: score midpoints, exponentials
    std::vector<double> acc_;         ///< the rows' sums and block sums (4 dv per query)
    std::vector<double> qmid_, rho_, dsum_; ///< per query: midpoints, score radius, denominator
    std::vector<double> save_;        ///< sums_replaced: the kept key, value and value terms
    row_sums sums_;                   ///< row()'s scratch
    /// The constructor from sums: the bound's S^_c (sum_j E_j |w_jc|) replaced by V_c D^ (the
    /// largest |midpoint| of the coordinate times the computed denominator), saving a third of
    /// the row's sums.
    bool abs_from_max_ = false;
};

namespace detail {

/// A contiguous Arb vector (arb_dot runs over it, with a stride for the values' columns).
class arb_vector {
public:
    explicit arb_vector(std::size_t len = 0)
        : v_(len ? _arb_vec_init(static_cast<slong>(len)) : nullptr), len_(len) {}
    ~arb_vector() {
        if (v_) _arb_vec_clear(v_, static_cast<slong>(len_));
    }
    arb_vector(const arb_vector&) = delete;
    arb_vector& operator=(const arb_vector&) = delete;
    arb_ptr operator[](std::size_t t) { return v_ + t; }
    arb_srcptr operator[](std::size_t t) const { return v_ + t; }

private:
    arb_ptr v_;
    std::size_t len_;
};

} // namespace detail

/// Arb: contiguous keys and values; every dot product (the scores and the strided weighted
/// sums) by arb_dot; the shift is the largest score midpoint (exact, so the enclosure does not
/// widen); exp memoised on identical balls as in generic_soft_row. A rigorous enclosure of the
/// same quantity as generic_soft_row (not the same ball: arb_dot rounds once per dot product).
template <> class soft_rows<numeric::arb_ball> {
    using B = numeric::arb_ball;

public:
    soft_rows(const std::vector<vec<B>>& keys, const std::vector<vec<B>>& values,
              const numeric::context& ctx)
        : n_(keys.size()), dk_(keys.front().size()), dv_(values.front().size()),
          prec_(ctx.precision_bits), keys_(n_ * dk_), values_(n_ * dv_), q_(dk_), s_(n_),
          e_(n_), t_(1), shift_(1), den_(1), memo_(2 * memo_limit) {
        for (std::size_t j = 0; j < n_; ++j) {
            for (std::size_t t = 0; t < dk_; ++t) {
                arb_set(keys_[j * dk_ + t], keys[j][t].raw());
                prec_ = std::max(prec_, keys[j][t].precision());
            }
            for (std::size_t c = 0; c < dv_; ++c) {
                arb_set(values_[j * dv_ + c], values[j][c].raw());
                prec_ = std::max(prec_, values[j][c].precision());
            }
        }
    }

    vec<B> row(const vec<B>& q, vec<B>* weights, std::size_t end = all_keys) {
        const std::size_t n = std::min(n_, end);
        long p = prec_;
        for (std::size_t t = 0; t < dk_; ++t) {
            arb_set(q_[t], q[t].raw());
            p = std::max(p, q[t].precision());
        }
        const auto sdk = static_cast<slong>(dk_);
        for (std::size_t j = 0; j < n; ++j)
            arb_dot(s_[j], nullptr, 0, q_[0], 1, keys_[j * dk_], 1, sdk, p);
        std::size_t best = 0;
        for (std::size_t j = 1; j < n; ++j) {
            arf_srcptr mj = arb_midref(s_[j]), mb = arb_midref(s_[best]);
            if (!arf_is_nan(mj) && (arf_is_nan(mb) || arf_cmp(mj, mb) > 0)) best = j;
        }
        arb_set_arf(shift_[0], arb_midref(s_[best]));
        // Memo of exp on identical score balls (paper constructions repeat a few scores).
        std::size_t memo_used = 0;
        bool memo_on = true;
        arb_zero(den_[0]);
        for (std::size_t j = 0; j < n; ++j) {
            bool hit = false;
            for (std::size_t m = 0; memo_on && m < memo_used; ++m) {
                if (arb_equal(memo_[2 * m], s_[j])) {
                    arb_set(e_[j], memo_[2 * m + 1]);
                    hit = true;
                    break;
                }
            }
            if (!hit) {
                arb_sub(t_[0], s_[j], shift_[0], p);
                arb_exp(e_[j], t_[0], p);
                if (memo_on && memo_used < memo_limit) {
                    arb_set(memo_[2 * memo_used], s_[j]);
                    arb_set(memo_[2 * memo_used + 1], e_[j]);
                    ++memo_used;
                } else {
                    memo_on = false;
                }
            }
            arb_add(den_[0], den_[0], e_[j], p);
        }
        vec<B> num;
        num.reserve(dv_);
        for (std::size_t c = 0; c < dv_; ++c) {
            B b(p);
            arb_dot(b.raw(), nullptr, 0, e_[0], 1, values_[c], static_cast<slong>(dv_),
                    static_cast<slong>(n), p);
            arb_div(b.raw(), b.raw(), den_[0], p);
            num.push_back(std::move(b));
        }
        if (weights) {
            weights->clear();
            weights->reserve(n);
            for (std::size_t j = 0; j < n; ++j) {
                B w(p);
                arb_div(w.raw(), e_[j], den_[0], p);
                weights->push_back(std::move(w));
            }
        }
        return num;
    }

private:
    static constexpr std::size_t memo_limit = 8;
    std::size_t n_, dk_, dv_;
    long prec_;
    detail::arb_vector keys_, values_, q_, s_, e_, t_, shift_, den_, memo_;
};

inline bool softmax_rows(model::attention_kind k) {
    switch (k) {
    case model::attention_kind::soft:
    case model::attention_kind::hard:         // read by its softmax counterpart
    case model::attention_kind::average_hard: // likewise
        return true;
    case model::attention_kind::stablemax:
    case model::attention_kind::sparsemax:
    case model::attention_kind::sigmoid:
    case model::attention_kind::entmax15:
    case model::attention_kind::softpick:
    case model::attention_kind::linear:
    case model::attention_kind::linear_sum: return false;
    }
    return true;
}

namespace detail {

/// StableMax's s(x) as 1 / (1 + max(-x, 0)) + max(x, 0): x + 1 for x >= 0 and 1 / (1 - x)
/// below, in one expression, so that an enclosure straddling 0 gets [s(lo), s(hi)] (s is
/// increasing) without deciding the sign.
template <numeric::Scalar S> S stablemax_term(const S& x, const numeric::context& ctx) {
    const S one = numeric::one<S>(ctx);
    return one / (one + numeric::relu(-x, ctx)) + numeric::relu(x, ctx);
}

/// Sparsemax's threshold tau of scores whose comparisons decide (exact or rounded): sorted
/// descending, the support is the longest prefix with 1 + k z_(k) > z_(1) + ... + z_(k), and
/// tau = (z_(1) + ... + z_(k) - 1) / k. Ties need no decision: tied scores are both in or both
/// out of the support.
template <numeric::Scalar T> T sparsemax_threshold(std::vector<T> z, const numeric::context& ctx) {
    std::sort(z.begin(), z.end(), [](const T& a, const T& b) {
        return numeric::compare(a, b) == numeric::order::greater;
    });
    const T one = numeric::one<T>(ctx);
    T cum = numeric::zero<T>(ctx), support_sum = z.front();
    std::size_t k = 1;
    for (std::size_t j = 0; j < z.size(); ++j) {
        cum += z[j];
        const T lead = one + numeric::from_int<T>(static_cast<long>(j + 1), ctx) * z[j];
        if (numeric::compare(lead, cum) != numeric::order::greater) break; // the prefix ends
        k = j + 1;
        support_sum = cum;
    }
    return (support_sum - one) / numeric::from_int<T>(static_cast<long>(k), ctx);
}

/// Sparsemax's weights max(z_j - tau, 0). For an enclosure kind tau is computed exactly at the
/// midpoints (exact rationals) and widened by the hull of every score's deviation from its
/// midpoint, taken with both signs: |tau(z) - tau(mid)| <= max_j |z_j - mid_j|.
template <numeric::Scalar S> vec<S> sparsemax(const vec<S>& z, const numeric::context& ctx) {
    const S tau = [&] {
        if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure) {
            std::vector<numeric::rational> mid;
            mid.reserve(z.size());
            std::optional<S> dev;
            for (const S& x : z) {
                const S c = numeric::representative(x);
                auto q = numeric::exact_of(c);
                if (!q)
                    throw numeric::undefined_error("a score of sparsemax has no finite midpoint");
                mid.push_back(std::move(*q));
                const S d = x - c;
                const S both = numeric::hull(d, -d);
                dev = dev ? numeric::hull(*dev, both) : both;
            }
            return numeric::from_rational<S>(sparsemax_threshold(std::move(mid), ctx), ctx) + *dev;
        } else {
            return sparsemax_threshold(z, ctx);
        }
    }();
    vec<S> w;
    w.reserve(z.size());
    for (const S& x : z) w.push_back(numeric::relu(x - tau, ctx));
    return w;
}

/// 1.5-entmax's support over u = z / 2 sorted descending, in T (exact rationals, or a rounded
/// kind whose comparisons decide): the weights are (u_j - tau)_+^2 with
/// f(tau) = sum_j (u_j - tau)_+^2 = 1, f decreasing, so tau >= u_(k+1) exactly when
/// f(u_(k+1)) = sum_{i <= k} (u_i - u_(k+1))^2 >= 1, and the support is the smallest such k
/// (every score when none). Tied scores are both in or both out. Returns k and the support's
/// sums of u and u^2.
template <numeric::Scalar T> struct entmax_support {
    std::size_t k = 0;
    T s1, s2;
};
template <numeric::Scalar T> entmax_support<T> entmax15_support(std::vector<T> u, const numeric::context& ctx) {
    std::sort(u.begin(), u.end(), [](const T& a, const T& b) {
        return numeric::compare(a, b) == numeric::order::greater;
    });
    const T one = numeric::one<T>(ctx), two = numeric::from_int<T>(2, ctx);
    entmax_support<T> out{0, numeric::zero<T>(ctx), numeric::zero<T>(ctx)};
    for (std::size_t j = 0; j < u.size(); ++j) {
        out.s1 += u[j];
        out.s2 += u[j] * u[j];
        out.k = j + 1;
        if (j + 1 == u.size()) break;
        const T& next = u[j + 1];
        const T f_next = out.s2 - two * next * out.s1 +
                         numeric::from_int<T>(static_cast<long>(out.k), ctx) * next * next;
        if (numeric::compare(f_next, one) != numeric::order::less) break; // tau >= u_(k+1)
    }
    return out;
}

/// The threshold of a support (k, s1, s2): the smaller root of k tau^2 - 2 s1 tau + s2 - 1 = 0,
/// tau = (s1 - sqrt(s1^2 - k (s2 - 1))) / k. The discriminant is k (1 - V) with V the support's
/// sum of squared deviations from its mean, below f(u_(k)) < 1: positive; a rounded kind may
/// round it below 0, which is read as 0.
template <numeric::ExpScalar S>
S entmax15_threshold(const S& s1, const S& s2, std::size_t k, const numeric::context& ctx) {
    const S kk = numeric::from_int<S>(static_cast<long>(k), ctx);
    const S disc = numeric::relu(s1 * s1 - kk * (s2 - numeric::one<S>(ctx)), ctx);
    return (s1 - numeric::sqrt_nonneg(disc)) / kk;
}

/// 1.5-entmax's weights (z_j / 2 - tau)_+^2 (Peters, Niculae and Martins 2019). For an
/// enclosure kind the support and the sums are taken exactly at the midpoints of u = z / 2,
/// tau there in S (its square root enclosed), then widened by the hull of every u's deviation
/// from its midpoint with both signs: tau is increasing in every u_j and tau(u + c) = tau(u) + c,
/// so |tau(u) - tau(mid)| <= max_j |u_j - mid_j|, without deciding the support at u.
template <numeric::ExpScalar S> vec<S> entmax15(const vec<S>& z, const numeric::context& ctx) {
    const S two = numeric::from_int<S>(2, ctx);
    vec<S> u;
    u.reserve(z.size());
    for (const S& x : z) u.push_back(x / two);
    const S tau = [&] {
        if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure) {
            std::vector<numeric::rational> mid;
            mid.reserve(u.size());
            std::optional<S> dev;
            for (const S& x : u) {
                const S c = numeric::representative(x);
                auto q = numeric::exact_of(c);
                if (!q)
                    throw numeric::undefined_error("a score of 1.5-entmax has no finite midpoint");
                mid.push_back(std::move(*q));
                const S d = x - c;
                const S both = numeric::hull(d, -d);
                dev = dev ? numeric::hull(*dev, both) : both;
            }
            const auto sup = entmax15_support(std::move(mid), ctx);
            return entmax15_threshold(numeric::from_rational<S>(sup.s1, ctx),
                                      numeric::from_rational<S>(sup.s2, ctx), sup.k, ctx) +
                   *dev;
        } else {
            const auto sup = entmax15_support(u, ctx);
            return entmax15_threshold(sup.s1, sup.s2, sup.k, ctx);
        }
    }();
    vec<S> w;
    w.reserve(u.size());
    for (const S& x : u) {
        const S r = numeric::relu(x - tau, ctx);
        w.push_back(r * r);
    }
    return w;
}

/// Softpick's eps (Zuhri, Fuadi and Aji 2025): 10^-8, their reference implementation's default,
/// held as the exact rational so that no kind but double rounds it.
inline numeric::rational softpick_eps() { return numeric::rational(1, 100000000); }

/// Softpick, relu(e^(z_j) - 1) / (sum_k |e^(z_k) - 1| + eps), as defined: no shift by the row's
/// maximum, which would change the function (it is not shift invariant: eps and the 1 do not
/// scale with e^(-max)). The denominator is at least eps > 0, so every row is defined; a row
/// without a positive score weighs every key by exactly 0. Enclosures: each t_j = e^(z_j) - 1
/// enclosed once, relu and |.| of it rigorous; t_j occurs in the numerator and the denominator,
/// so the quotient encloses the weight without being tight. A double e^(z_j) that overflows
/// makes the row NaN (inf / inf), which the soft pass reports as undefined.
template <numeric::ExpScalar S> vec<S> softpick(const vec<S>& z, const numeric::context& ctx) {
    const S one = numeric::one<S>(ctx);
    vec<S> w;
    w.reserve(z.size());
    S den = numeric::from_rational<S>(softpick_eps(), ctx);
    for (const S& x : z) {
        const S t = numeric::exp(x) - one;
        den += numeric::abs(t);
        w.push_back(numeric::relu(t, ctx));
    }
    for (auto& v : w) v = v / den;
    return w;
}

} // namespace detail

template <numeric::Scalar S>
vec<S> normalised_weights(model::attention_kind k, const vec<S>& z, const numeric::context& ctx) {
    // StableMax and sparsemax decide signs and orders of the scores: a non-finite score (a
    // double that overflowed, an enclosure that did: more precision may resolve it) is
    // undefined before it meets a comparison. Softmax keeps its own path (NaN reaches the
    // head's output, which the pass checks).
    const auto require_finite = [&] {
        for (const S& x : z)
            if (!numeric::is_finite(x))
                throw numeric::undefined_error(
                    std::string("a score of ") + model::to_string(k) + " attention is not finite",
                    {}, numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure);
    };
    switch (k) {
    case model::attention_kind::soft:
    case model::attention_kind::hard:
    case model::attention_kind::average_hard:
        if constexpr (numeric::ExpScalar<S>)
            return softmax(z, ctx);
        else
            throw precondition_error("softmax needs exp: the exact scalar does not evaluate it");
    case model::attention_kind::stablemax: {
        require_finite();
        vec<S> w;
        w.reserve(z.size());
        S den = numeric::zero<S>(ctx);
        for (const S& x : z) {
            w.push_back(detail::stablemax_term(x, ctx));
            den += w.back();
        }
        for (auto& v : w) v = v / den;
        return w;
    }
    case model::attention_kind::sparsemax: require_finite(); return detail::sparsemax(z, ctx);
    case model::attention_kind::sigmoid:
        // sigma(z) = 1 / (1 + e^(-z)), z already holding the layer's bias: z occurs once, so an
        // enclosure of z gives the tight enclosure of sigma (increasing). A non-finite score (a
        // double or an enclosure that overflowed) is undefined, as for the normalisers; e^(-z)
        // overflowing to +inf for a finite z is weight 0, the correct limit.
        if constexpr (numeric::ExpScalar<S>) {
            require_finite();
            vec<S> w;
            w.reserve(z.size());
            const S one = numeric::one<S>(ctx);
            for (const S& x : z) w.push_back(one / (one + numeric::exp(-x)));
            return w;
        } else {
            throw precondition_error("sigmoid needs exp: the exact scalar does not evaluate it");
        }
    case model::attention_kind::entmax15:
        if constexpr (numeric::ExpScalar<S>) {
            require_finite();
            return detail::entmax15(z, ctx);
        } else {
            throw precondition_error("1.5-entmax's threshold needs a square root: the exact scalar "
                                     "does not evaluate it");
        }
    case model::attention_kind::softpick:
        if constexpr (numeric::ExpScalar<S>) {
            require_finite();
            return detail::softpick(z, ctx);
        } else {
            throw precondition_error("softpick needs exp: the exact scalar does not evaluate it");
        }
    // Linear attention: z holds the kernel values phi(q) . phi(k_j) (the soft pass forms them
    // from the features, linear_features.hpp), not scores.
    case model::attention_kind::linear: require_finite(); return detail::linear_weights(z, true, ctx);
    case model::attention_kind::linear_sum: require_finite(); return detail::linear_weights(z, false, ctx);
    }
    throw precondition_error("normalised_weights: not an attention kind");
}

template <numeric::ExpScalar S>
vec<S> soft_row(const vec<S>& scaled_query, const std::vector<vec<S>>& keys,
                const std::vector<vec<S>>& values, const numeric::context& ctx, vec<S>* weights,
                std::size_t end) {
    return soft_rows<S>(keys, values, ctx).row(scaled_query, weights, end);
}

template <numeric::Scalar S>
soft_output<S> soft_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, soft_options opt) {
    no_observer none;
    return soft_forward(m, x, ctx, opt, none);
}

namespace detail {

/// The row kernels of a softmax head in S: soft_rows<S> for a kind with exp, nothing
/// otherwise (a kind without exp evaluates only the normalisers that are exact).
struct no_rows {};
template <class S> struct softmax_rows_of {
    using type = no_rows;
};
template <numeric::ExpScalar S> struct softmax_rows_of<S> {
    using type = soft_rows<S>;
};

} // namespace detail

template <numeric::Scalar S, class Observer>
soft_output<S> soft_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, soft_options opt,
                            [[maybe_unused]] Observer& obs) {
    using score_kind = typename model::score_spec<S>::kind;
    soft_output<S> out;
    const bool with_trace = opt.trace || opt.trace_weights;
    const std::size_t n = x.size();
    const std::size_t L = m.layers.size();
    // Softmax's rows (soft_rows), or the scores then the kind's normalised_weights.
    const bool by_softmax = softmax_rows(m.attention);
    // An elementwise kind (sigmoid) or softpick: weights that need not sum to 1, so a head of
    // constant scores is not the mean of its values (only a kind whose weights sum to 1
    // averages; softpick's constant score s weighs every key by relu(e^s - 1) / (n |e^s - 1| +
    // eps), below 1/n).
    const bool elementwise = model::info(m.attention).weights == model::weighting::elementwise;
    const bool averages = model::info(m.attention).sums_to_one;
    // Linear attention: every row's weights from phi(q_i) and phi(k_j), unscaled.
    const bool features = model::info(m.attention).feature_map;
    if constexpr (!numeric::ExpScalar<S>)
        if (by_softmax)
            throw precondition_error(std::string("the soft pass over ") +
                                     std::string(numeric::scalar_traits<S>::name) +
                                     " cannot evaluate " +
                                     model::to_string(m.attention) +
                                     " attention (softmax needs exp)");
    std::vector<vec<S>> y = initial_states(m, x, ctx);
    if (with_trace) {
        out.trace.emplace();
        out.trace->y.push_back(y);
    }
    for (std::size_t k = 1; k <= L; ++k) {
        const auto& lay = m.layers[k - 1];
        const bool all_rows = with_trace || opt.all_rows || k < L;
        const std::size_t first = all_rows ? 0 : n - 1;
        const std::size_t H = lay.heads.size();
        std::vector<std::vector<vec<S>>> keys(H), values(H);
        std::vector<std::optional<vec<S>>> uniform(H);
        std::vector<std::vector<vec<S>>> prefix(H); // masked constant scores: sums of values j <= i
        std::vector<std::unique_ptr<typename detail::softmax_rows_of<S>::type>> rows(H);
        std::vector<std::optional<S>> qscale(H); // dot: scale·β(n); map: β(n) when set
        std::vector<std::vector<vec<S>>> key_features(H); // linear attention: phi(k_j)
        std::vector<vec<S>> next(n);
        // Sigmoid's bias b(n), added to every score of the layer (absent: 0); set below.
        std::optional<S> bias;
        std::vector<std::vector<vec<S>>> layer_weights;
        if (opt.trace_weights) layer_weights.assign(n, std::vector<vec<S>>(H));
        [[maybe_unused]] vec<S> observed_weights; // a row's weights for the observer alone
        // Where an undefined value would be met (located on the way out).
        std::size_t at_pos = 0, at_head = 0;
        const char* at_node = nullptr;
        try {
            if (elementwise) {
                at_node = "sigmoid bias";
                bias = model::sigmoid_bias_at<S>(lay, static_cast<long>(n), ctx);
            }
            for (std::size_t h = 0; h < H; ++h) {
                const auto& hd = lay.heads[h];
                at_head = h + 1;
                at_pos = 0;
                at_node = "score";
                if (features && hd.score.type != score_kind::dot)
                    throw precondition_error(std::string(model::to_string(m.attention)) +
                                             " attention needs a dot-product score");
                if (features) {
                    // No scale, no β(n): the reader refuses both for linear attention.
                } else if (hd.score.type == score_kind::dot)
                    qscale[h] = dot_scale(hd, n, ctx);
                else
                    qscale[h] = model::beta_at<S>(hd.score, static_cast<long>(n), ctx);
                values[h].reserve(n);
                at_node = "value";
                for (std::size_t j = 0; j < n; ++j) {
                    at_pos = j + 1;
                    values[h].push_back(value(hd, y[j], ctx));
                }
                if (averages && constant_scores(hd) && lay.mask == model::mask_kind::none) {
                    at_pos = 0;
                    uniform[h] = mean_value(values[h], ctx);
                } else if (averages && constant_scores(hd)) {
                    // Masked: row i takes the mean of the values j < end, from running sums
                    // (the row's sum is the one mean_value forms, in the same order).
                    at_pos = 0;
                    prefix[h].reserve(n);
                    vec<S> acc = values[h].front();
                    prefix[h].push_back(acc);
                    for (std::size_t j = 1; j < n; ++j) {
                        for (std::size_t c = 0; c < acc.size(); ++c) acc[c] += values[h][j][c];
                        prefix[h].push_back(acc);
                    }
                } else if (hd.score.type == score_kind::dot) {
                    keys[h].reserve(n);
                    at_node = "key";
                    for (std::size_t j = 0; j < n; ++j) {
                        at_pos = j + 1;
                        keys[h].push_back(key(hd, y[j], ctx));
                        if (features)
                            key_features[h].push_back(
                                detail::features_of(keys[h].back(), lay.feature_map, ctx));
                    }
                    if constexpr (numeric::ExpScalar<S>)
                        if (by_softmax)
                            rows[h] = std::make_unique<soft_rows<S>>(keys[h], values[h], ctx);
                }
            }
            // Row i attends to the keys [0, end): every key, or j <= i under a causal mask
            // (docs/architecture.md, "The per-layer mask").
            for (std::size_t i = first; i < n; ++i) {
                const std::size_t end = model::key_end(lay.mask, i, n);
                try {
                    std::vector<vec<S>> b(H);
                    at_pos = i + 1;
                    for (std::size_t h = 0; h < H; ++h) {
                        const auto& hd = lay.heads[h];
                        at_head = h + 1;
                        at_node = "score";
                        vec<S>* wout = opt.trace_weights ? &layer_weights[i][h] : nullptr;
                        if constexpr (Observer::wants_weights)
                            if (!wout && !uniform[h]) wout = &observed_weights;
                        if (uniform[h] || !prefix[h].empty()) {
                            const S t = numeric::from_int<S>(static_cast<long>(end), ctx);
                            if (uniform[h]) {
                                b[h] = *uniform[h];
                            } else {
                                b[h] = prefix[h][end - 1];
                                for (auto& c : b[h]) c = c / t;
                            }
                            if (wout) wout->assign(end, numeric::one<S>(ctx) / t);
                        } else if (rows[h]) {
                            vec<S> q = query(hd, y[i], ctx);
                            for (auto& c : q) c = c * *qscale[h];
                            if constexpr (numeric::ExpScalar<S>) b[h] = rows[h]->row(q, wout, end);
                        } else {
                            // An arbitrary score map (scores are not dot products), or a
                            // normaliser other than softmax: the row's scores, then its weights.
                            std::vector<S> s;
                            s.reserve(end);
                            if (features) {
                                s = detail::kernel_row(
                                    detail::features_of(query(hd, y[i], ctx), lay.feature_map, ctx),
                                    key_features[h], end, ctx);
                            } else if (hd.score.type == score_kind::dot) {
                                vec<S> q = query(hd, y[i], ctx);
                                for (auto& c : q) c = c * *qscale[h];
                                for (std::size_t j = 0; j < end; ++j)
                                    s.push_back(model::dot(q.data(), keys[h][j].data(), q.size(), ctx));
                            } else {
                                for (std::size_t j = 0; j < end; ++j) {
                                    s.push_back(map_score(hd, y[i], y[j], ctx));
                                    if (qscale[h]) s.back() = s.back() * *qscale[h]; // β(n)
                                }
                            }
                            if (bias)
                                for (auto& z : s) z = z + *bias;
                            at_node = by_softmax ? "softmax" : model::to_string(m.attention);
                            vec<S> w = normalised_weights(m.attention, s, ctx);
                            const std::size_t dv = values[h].front().size();
                            vec<S> acc(dv, numeric::zero<S>(ctx));
                            for (std::size_t j = 0; j < end; ++j)
                                for (std::size_t c = 0; c < dv; ++c) numeric::fma_acc(acc[c], w[j], values[h][j][c]);
                            b[h] = std::move(acc);
                            if (wout) *wout = std::move(w);
                        }
                        // A score that overflowed (double) leaves NaN in the head's output.
                        model::require_all_finite(b[h]);
                        if constexpr (Observer::active)
                            obs.head_row(soft_head_row<S>{
                                k, i, h, uniform[h] || !prefix[h].empty() ? nullptr : wout, &b[h]});
                    }
                    at_head = 0;
                    at_node = "update";
                    next[i] = update(lay, y[i], b, ctx);
                    if constexpr (Observer::active) obs.row(k, i, next[i]);
                } catch (const numeric::undefined_error&) {
                    // A row of the last layer other than n is only traced: y_n^(L) does not
                    // read it, so it gets "no value" instead of making the output undefined.
                    auto nv = with_trace && k == L && i + 1 < n ? no_value<S>(m.d, ctx)
                                                                : std::nullopt;
                    if (!nv) throw;
                    next[i] = std::move(*nv);
                }
            }
        } catch (const numeric::undefined_error& e) {
            throw e.located(place(k, at_node, at_pos, at_head));
        }
        if (with_trace) {
            out.trace->y.push_back(next);
            if (opt.trace_weights) out.trace->weights.push_back(std::move(layer_weights));
        }
        y = std::move(next);
    }
    out.y = std::move(y[n - 1]);
    return out;
}

} // namespace attnprop::attention
