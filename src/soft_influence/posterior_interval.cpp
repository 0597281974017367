#include "soft_influence/posterior_interval.hpp"

#include <bit>
#include <cstdint>

namespace attnprop::analysis {

namespace posterior_detail {

double norm_up_abs(const double* a, std::size_t len) {
    double s = 0;
    bool small = false; // a square may have underflowed
    for (std::size_t c = 0; c < len; ++c) {
        const double x = std::fabs(a[c]);
        small = small || (x > 0 && x < 0x1p-500);
        s += x * x;
    }
    if (!(s <= std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
    if (s == 0 && !small) return 0.0; // every coordinate is 0
    return numeric::interval_detail::next_up(
        std::sqrt(s * (1.0 + 0x1p-40) + (small ? 0x1p-1000 : 0.0)));
}
double norm_hi(const model::vec<dinterval>& v) {
    if (v.size() > 4094) {
        dinterval acc{};
        for (const auto& x : v) numeric::fma_acc(acc, x, x);
        return numeric::sqrt_nonneg(acc).hi();
    }
    double a[4094];
    for (std::size_t c = 0; c < v.size(); ++c) a[c] = std::max(std::fabs(v[c].lo()), std::fabs(v[c].hi()));
    return norm_up_abs(a, v.size());
}

bool key_terms(const model::vec<dinterval>& k, double* mid, double& tm, double& tr) {
    const std::size_t dk = k.size();
    const double gk = static_cast<double>(dk + 1) * 0x1p-52;
    const double norm_slack = 1.0 + static_cast<double>(dk + 5) * 0x1p-52;
    double m1 = 0, r1 = 0;
    for (std::size_t t = 0; t < dk; ++t) {
        double r = 0;
        if (!mid_rad(k[t], mid[t], r)) return false;
        m1 += std::fabs(mid[t]);
        r1 += r;
    }
    tm = (gk * m1 + r1) * norm_slack;
    tr = (m1 + r1) * norm_slack;
    return tm <= std::numeric_limits<double>::max() && tr <= std::numeric_limits<double>::max();
}
arb_ball upper_of_max(double mx, long prec) {
    if (!(mx <= std::numeric_limits<double>::max())) return pos_inf(prec);
    return upper(numeric::to_ball(dinterval(mx)));
}
arb_ball max_norm_up(const std::vector<model::vec<dinterval>>& rows, long prec) {
    double mx = 0;
    for (const auto& y : rows) {
        const double v = norm_hi(y);
        if (!(v <= mx)) mx = v; // NaN (never expected) propagates
    }
    return upper_of_max(mx, prec);
}
arb_ball max_value_norm_up(const model::affine_map<dinterval>& V,
                           const std::vector<model::vec<dinterval>>& rows,
                           const numeric::context& ctx) {
    const std::size_t R = V.W.rows, C = V.W.cols;
    const long prec = ctx.precision_bits;
    if (R == 0 || R > 4094 || C > 4094 || R * C > (std::size_t{1} << 24)) {
        model::vec<dinterval> t;
        double mx = 0;
        for (const auto& y : rows) {
            model::apply_affine(V, y.data(), t, ctx);
            const double v = norm_hi(t);
            if (!(v <= mx)) mx = v;
        }
        return upper_of_max(mx, prec);
    }
    std::vector<double> Wm(R * C), Wr(R * C), bm(R, 0.0), br(R, 0.0);
    for (std::size_t k = 0; k < R * C; ++k)
        if (!mid_rad(V.W.data[k], Wm[k], Wr[k])) return pos_inf(prec);
    for (std::size_t r = 0; r < V.b.size() && r < R; ++r)
        if (!mid_rad(V.b[r], bm[r], br[r])) return pos_inf(prec);
    const double fm = norm_up_abs(Wm.data(), R * C), fr = norm_up_abs(Wr.data(), R * C);
    const double nbm = norm_up_abs(bm.data(), R), nbr = norm_up_abs(br.data(), R);
    const double g = static_cast<double>(C + 2) * 0x1p-52;
    std::vector<double> ym(C), yr(C), z(R);
    double mx = 0;
    for (const auto& y : rows) {
        if (y.size() != C) return pos_inf(prec);
        for (std::size_t t = 0; t < C; ++t)
            if (!mid_rad(y[t], ym[t], yr[t])) return pos_inf(prec);
        for (std::size_t r = 0; r < R; ++r) {
            const double* w = &Wm[r * C];
            double acc = bm[r];
            for (std::size_t t = 0; t < C; ++t) acc += w[t] * ym[t];
            z[r] = acc;
        }
        const double nz = norm_up_abs(z.data(), R), ny = norm_up_abs(ym.data(), C),
                     nr = norm_up_abs(yr.data(), C);
        const double v =
            (nz + fm * (nr + g * ny) + fr * (ny + nr) + nbr + g * nbm) * (1.0 + 0x1p-40) + 0x1p-1000;
        if (!(v <= mx)) mx = v;
    }
    return upper_of_max(mx, prec);
}

double upper_double(const arb_ball& x) {
    arf_t t;
    arf_init(t);
    arb_get_ubound_arf(t, x.raw(), 64);
    const double d = arf_get_d(t, ARF_RND_UP);
    arf_clear(t);
    return d <= std::numeric_limits<double>::max() ? d : std::numeric_limits<double>::infinity();
}

template <bool Scaled>
[[gnu::noinline]] std::optional<double> moved_max(const double* __restrict a,
                                                  const double* __restrict mv, std::size_t n,
                                                  double f, std::vector<std::size_t>& others) {
    constexpr double dmax = std::numeric_limits<double>::max();
    double m[4] = {0.0, 0.0, 0.0, 0.0};
    bool ok = true;
    others.clear();
    const std::size_t n4 = n - n % 4;
    auto term = [&](std::size_t j) {
        const double x = mv[j];
        if (!(x >= 0 && x <= dmax)) {
            others.push_back(j);
            return 0.0;
        }
        double t = x;
        if constexpr (Scaled)
            t = std::bit_cast<double>(std::bit_cast<std::uint64_t>(f * x) + 1);
        const double v = a[j] + t;
        ok = ok & (v <= dmax) & (v >= -dmax);
        return v;
    };
    for (std::size_t j = 0; j < n4; j += 4)
        for (std::size_t l = 0; l < 4; ++l) {
            const double v = term(j + l);
            m[l] = v > m[l] ? v : m[l];
        }
    for (std::size_t j = n4; j < n; ++j) {
        const double v = term(j);
        m[0] = v > m[0] ? v : m[0];
    }
    if (!ok) return std::nullopt;
    return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}
template std::optional<double> moved_max<false>(const double* __restrict, const double* __restrict,
                                              std::size_t, double, std::vector<std::size_t>&);
template std::optional<double> moved_max<true>(const double* __restrict, const double* __restrict,
                                             std::size_t, double, std::vector<std::size_t>&);

double top_omega(const model::vec<dinterval>& kq, const dinterval& qb,
                 const std::vector<model::vec<dinterval>>& y1, const std::vector<dinterval>& s_top,
                 std::size_t i, const change_hints& hints) {
    const std::size_t d = kq.size();
    std::vector<double> kqm(d);
    double kqm_inf = 0, kqr_inf = 0, qbm = 0, qbr = 0;
    for (std::size_t c = 0; c < d; ++c) {
        double r = 0;
        if (!mid_rad(kq[c], kqm[c], r)) return std::numeric_limits<double>::quiet_NaN();
        kqm_inf = std::max(kqm_inf, std::fabs(kqm[c]));
        kqr_inf = std::max(kqr_inf, r);
    }
    if (!mid_rad(qb, qbm, qbr)) return std::numeric_limits<double>::quiet_NaN();
    // The fold's midpoints and radii when given (no interval split again).
    const std::size_t n = y1.size();
    if (sized(hints.y1_mid, n * d) && sized(hints.y1_rad, n * d))
        return detail::top_omega_upper(kqm.data(), kqm_inf, kqr_inf, qbm, qbr, hints.y1_mid->data(),
                                       hints.y1_rad->data(), n, d, s_top, i);
    return detail::top_omega_upper(kqm.data(), kqm_inf, kqr_inf, qbm, qbr, y1, s_top, i);
}

} // namespace posterior_detail

namespace detail {

namespace {

using numeric::interval_detail::add_down;
using numeric::interval_detail::add_up;
using numeric::interval_detail::next_up;

constexpr double omega_slack = 1.0 + 0x1p-49;
constexpr double fast_min = numeric::elementary_detail::exp_fast_min;
constexpr double fast_max = numeric::elementary_detail::exp_fast_max;
constexpr double omega_tiny = 0x1p-1000;
constexpr double dmax = std::numeric_limits<double>::max();
constexpr double dinf = std::numeric_limits<double>::infinity();

/// g_w = (w + 1) 2^-52 >= gamma_w.
double gamma_w(std::size_t w) { return static_cast<double>(w + 1) * 0x1p-52; }
/// exp rounded up / down (the certified exp of a double).
double exp_up(double x) { return numeric::exp_enclosure(x).hi(); }
double exp_down(double x) { return numeric::exp_enclosure(x).lo(); }
/// a / b rounded up for a >= 0, b > 0 (rounded to nearest, then one ulp up; +inf on overflow).
double div_up(double a, double b) {
    const double q = a / b;
    return q <= dmax ? next_up(q) : dinf;
}

} // namespace

double layer1_omega_upper(const double* qm, const double* qa, const double* qr, const double* e_lo,
                          std::size_t rows, std::size_t skip, std::size_t dk, const double* km,
                          const double* kn, double key_mid, double key_rad, bool drop_radius) {
    double wmax = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        if (r == skip) continue;
        const double* a = qm + r * dk;
        double s1 = 0, s2 = 0;
        for (std::size_t t = 0; t < dk; ++t) {
            s1 += a[t] * km[t];
            s2 += a[t] * kn[t];
        }
        // |s - q . k| <= rho for both scores (the certified soft-attention row's bound).
        const double rho = drop_radius ? 0.0 : (qa[r] * key_mid + qr[r] * key_rad) * omega_slack + omega_tiny;
        const double h1 = add_up(s1, rho), h2 = add_up(s2, rho);
        const double lo = add_down(std::min(s1, s2), -rho);
        if (!(h1 <= dmax && h2 <= dmax && lo >= -dmax)) return dinf; // not finite: ω = 1
        const double e1 = exp_up(h1);
        const double num = h2 > h1 ? exp_up(h2) : e1;
        // rest = E_m - exp(s_m) >= 0: its lower end, or 0.
        double rest = add_down(e_lo[r], -e1);
        if (!(rest > 0)) rest = 0;
        const double den = add_down(exp_down(lo), rest);
        // A denominator that is not finite (never expected: E_m's lower end is finite) would
        // make the quotient 0: ω = 1 then.
        const double w = den > 0 && den <= dmax ? div_up(num, den) : dinf;
        if (!(w <= wmax)) wmax = w;
        if (wmax >= 1) return wmax;
    }
    return wmax;
}

double top_omega_upper(const double* kqm, double kqm_inf, double kqr_inf, double qbm, double qbr,
                       const std::vector<model::vec<numeric::dinterval>>& y,
                       const std::vector<numeric::dinterval>& s_top, std::size_t i,
                       bool drop_radius) {
    const std::size_t n = y.size();
    if (n == 0 || s_top.size() != n || i >= n) return std::numeric_limits<double>::quiet_NaN();
    const std::size_t d = y.front().size();
    std::vector<double> ym(n * d), yr(n * d);
    for (std::size_t j = 0; j < n; ++j) {
        if (y[j].size() != d) return std::numeric_limits<double>::quiet_NaN();
        for (std::size_t c = 0; c < d; ++c)
            if (!numeric::mid_rad(y[j][c], ym[j * d + c], yr[j * d + c]))
                return std::numeric_limits<double>::quiet_NaN();
    }
    return top_omega_upper(kqm, kqm_inf, kqr_inf, qbm, qbr, ym.data(), yr.data(), n, d, s_top, i,
                           drop_radius);
}

double top_omega_upper(const double* kqm, double kqm_inf, double kqr_inf, double qbm, double qbr,
                       const double* ym, const double* yr, std::size_t n, std::size_t d,
                       const std::vector<numeric::dinterval>& s_top, std::size_t i, bool drop_radius) {
    if (n == 0 || s_top.size() != n || i >= n) return std::numeric_limits<double>::quiet_NaN();
    const double g = gamma_w(d + 1);
    // The bound below passes through at most d + 10 roundings; 1 + (d + 12) 2^-52 (exact)
    // and one more rounding restore it.
    const double fix = 1.0 + static_cast<double>(d + 12) * 0x1p-52;
    double den = 0, num_hi = 0;
    for (std::size_t j = 0; j < n; ++j) {
        const double* m = ym + j * d;
        const double* r = yr + j * d;
        double acc = qbm, A = 0, R = 0;
        for (std::size_t c = 0; c < d; ++c) {
            acc += kqm[c] * m[c];
            A += std::fabs(m[c]);
            R += r[c];
        }
        // |s'_j - acc| <= g (|qbm| + |kq_m|_inf A) + |kq_m|_inf R + |kq_r|_inf (A + R) + qbr.
        const double rho =
            drop_radius ? 0.0
                        : (g * (std::fabs(qbm) + kqm_inf * A) + kqm_inf * R + kqr_inf * (A + R) + qbr) * fix +
                              omega_tiny;
        const double lo_new = add_down(acc, -rho);
        const double lo_old = s_top[j].lo();
        if (!(lo_new >= -dmax && lo_new <= dmax) || std::isnan(lo_old) || !(R <= dmax))
            return std::numeric_limits<double>::quiet_NaN();
        // exp_fast within its range (its relative error is taken once on the sum below), 0
        // below it (a lower bound), the certified exp's lower end above it.
        const double x = std::min(lo_old, lo_new);
        den += x < fast_min ? 0.0 : x <= fast_max ? numeric::elementary_detail::exp_fast(x) : exp_down(x);
        if (j == i) {
            const double hi = std::max(s_top[j].hi(), add_up(acc, rho));
            if (std::isnan(hi)) return std::numeric_limits<double>::quiet_NaN();
            num_hi = hi <= dmax ? exp_up(hi) : dinf;
        }
    }
    // n nonnegative terms summed in rounding to nearest: the exact sum is at least the
    // computed one times 1 - (n + 1) 2^-52; each term exp_fast(x) = e^x (1 + theta) with
    // |theta| <= 2^-50 is at most e^x (1 + 2^-50), so e^x >= exp_fast(x) (1 - 2^-50) (the
    // certified exp's lower end and 0 are below e^x already). Together a factor
    // 1 - (n + 5) 2^-52 (exact for n < 2^50), the product rounded down.
    // A sum that overflowed is no lower bound of the exact one: the interval operations then.
    if (!(den <= dmax) || n >= (std::size_t{1} << 50)) return std::numeric_limits<double>::quiet_NaN();
    const double den_lo = numeric::interval_detail::mul_down(den, 1.0 - static_cast<double>(n + 5) * 0x1p-52);
    return den_lo > 0 ? div_up(num_hi, den_lo) : dinf;
}

} // namespace detail

} // namespace attnprop::analysis
