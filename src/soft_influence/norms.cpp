#include "soft_influence/norms.hpp"

#include <arb_mat.h>
#include <flint/fmpq.h>

namespace attnprop::analysis {

namespace {

/// RAII holder of an arb_mat_t.
struct arb_matrix {
    arb_mat_t m;
    arb_matrix(std::size_t r, std::size_t c) {
        arb_mat_init(m, static_cast<slong>(r), static_cast<slong>(c));
    }
    ~arb_matrix() { arb_mat_clear(m); }
    arb_matrix(const arb_matrix&) = delete;
    arb_matrix& operator=(const arb_matrix&) = delete;
};

/// ||A||_F for an Arb matrix, as a ball.
arb_ball frobenius(const arb_mat_t a, long prec) {
    arb_ball r(prec);
    arb_mat_frobenius_norm(r.raw(), a, prec);
    return r;
}

} // namespace

arb_ball norm2_upper(const std::vector<arb_ball>& v, long prec) {
    arb_ball acc(prec);
    for (const auto& x : v) arb_addmul(acc.raw(), x.raw(), x.raw(), prec);
    arb_ball r(prec);
    // Squares are >= 0: the sum's negative part (from radii) is not a value of the norm.
    arb_nonnegative_part(acc.raw(), acc.raw());
    arb_sqrt(r.raw(), acc.raw(), prec);
    return upper(r);
}

arb_ball distance_upper(const std::vector<arb_ball>& a, const std::vector<arb_ball>& b,
                        long prec) {
    std::vector<arb_ball> d;
    d.reserve(a.size());
    for (std::size_t t = 0; t < a.size(); ++t) d.push_back(a[t] - b[t]);
    return norm2_upper(d, prec);
}

ball_matrix to_ball_matrix(const model::matrix<numeric::rational>& m, const numeric::context& ctx) {
    ball_matrix out;
    out.rows = m.rows;
    out.cols = m.cols;
    out.a.reserve(m.data.size());
    for (const auto& q : m.data) out.a.push_back(arb_ball::from_rational(q, ctx));
    return out;
}

arb_ball spectral_norm_upper(const ball_matrix& m, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    if (m.rows == 0 || m.cols == 0) return zero_point(prec);
    bool all_zero = true;
    for (const auto& x : m.a) all_zero = all_zero && arb_is_zero(x.raw());
    if (all_zero) return zero_point(prec);

    // Frobenius norm and sqrt(||M||_1 ||M||_inf).
    std::vector<arb_ball> flat(m.a.begin(), m.a.end());
    arb_ball best = norm2_upper(flat, prec);
    arb_ball n1(prec), ninf(prec);
    for (std::size_t c = 0; c < m.cols; ++c) {
        arb_ball s(prec);
        for (std::size_t r = 0; r < m.rows; ++r) s += numeric::abs(m.at(r, c));
        n1 = max_upper(n1, s);
    }
    for (std::size_t r = 0; r < m.rows; ++r) {
        arb_ball s(prec);
        for (std::size_t c = 0; c < m.cols; ++c) s += numeric::abs(m.at(r, c));
        ninf = max_upper(ninf, s);
    }
    best = min_upper(best, numeric::sqrt(n1 * ninf));

    // Gram matrix of the smaller side, then repeated squaring.
    const bool rows_side = m.rows <= m.cols;
    const std::size_t g = rows_side ? m.rows : m.cols;
    const std::size_t inner = rows_side ? m.cols : m.rows;
    arb_matrix a(g, g), b(g, g);
    for (std::size_t p = 0; p < g; ++p) {
        for (std::size_t q = 0; q < g; ++q) {
            arb_ptr e = arb_mat_entry(a.m, static_cast<slong>(p), static_cast<slong>(q));
            arb_zero(e);
            for (std::size_t t = 0; t < inner; ++t) {
                const arb_ball& x = rows_side ? m.at(p, t) : m.at(t, p);
                const arb_ball& y = rows_side ? m.at(q, t) : m.at(t, q);
                arb_addmul(e, x.raw(), y.raw(), prec);
            }
        }
    }
    // ||G^(2^j)||_F^(1/2^(j+1)) for j = 0.. : j = 0 is sqrt(||G||_F) (no better than the
    // Frobenius norm of M in general, but cheap).
    for (int j = 0; j <= 8; ++j) {
        arb_ball f = frobenius(a.m, prec);
        if (!finite(f)) break;
        arb_nonnegative_part(f.raw(), f.raw());
        for (int s = 0; s <= j; ++s) f = numeric::sqrt(f);
        arb_ball prev = best;
        best = min_upper(best, f);
        if (j >= 3 && arf_cmp(arb_midref(best.raw()), arb_midref(prev.raw())) == 0) break;
        if (j < 8) {
            arb_mat_sqr(b.m, a.m, prec);
            arb_mat_swap(a.m, b.m);
        }
    }
    return best;
}

arb_ball spectral_norm_upper(const model::matrix<numeric::rational>& m,
                             const numeric::context& ctx) {
    if (m.is_zero()) return zero_point(ctx.precision_bits);
    return spectral_norm_upper(to_ball_matrix(m, ctx), ctx);
}

} // namespace attnprop::analysis
