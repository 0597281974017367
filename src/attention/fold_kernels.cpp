// The fold's block kernels (fold_kernels.hpp). This file is compiled once as it is (the
// baseline set) and, where ATTNPROP_FOLD_AVX2 is defined, once more with -mavx2
// (fold_kernels_avx2.cpp): the names below are then in another namespace, and only the
// baseline compilation defines the dispatch. Nothing with external linkage but the kernel
// sets is defined here, and nothing of the standard library that could be emitted out of line
// is used (fold_math.hpp): an AVX2 copy of an inline function could otherwise be the one the
// linker keeps for every caller.
//
// Every kernel is a loop over the rows of a block with restrict-qualified pointers, in
// functions that are not inlined (so the qualifiers hold): the loops vectorise. Per row the
// operations and their order are those of a loop over one row's coordinates.
#include "attention/fold_kernels.hpp"
#include "attention/fold_math.hpp"

#include <cstdint>

#if defined(ATTNPROP_FOLD_AVX2) || defined(__SSE2__)
#include <immintrin.h>
#endif

#ifdef ATTNPROP_FOLD_AVX2
#define ATTNPROP_FOLD_ISA avx2
#else
#define ATTNPROP_FOLD_ISA baseline
#endif

namespace attnprop::attention::fold {

namespace ATTNPROP_FOLD_ISA {

namespace {

[[gnu::noinline]] void block_scores(const double* __restrict a, std::size_t d,
                                    const double* __restrict m, std::size_t stride,
                                    double* __restrict out, std::size_t B) {
    for (std::size_t b = 0; b < B; ++b) out[b] = 0.0;
    for (std::size_t c = 0; c < d; ++c) {
        const double ac = a[c];
        const double* mc = m + c * stride;
        for (std::size_t b = 0; b < B; ++b) out[b] += ac * mc[b];
    }
}

/// Where every tau is below 1/2, a positive E (at least e^-707 (1 - 2^-50)) times the lower
/// factor (in (1/2, 1]) is positive and below 2, and times the upper factor (in (1, 3/2])
/// finite, so one ulp outward is the neighbouring bit pattern, as mul_down_loose and
/// mul_up_loose give it.
[[gnu::noinline]] void table_column(const double* __restrict e, const double* __restrict glo,
                                    const double* __restrict ghi, const double* __restrict zero,
                                    double* __restrict lo, double* __restrict hi, std::size_t B) {
    for (std::size_t b = 0; b < B; ++b) {
        const double x = e[b];
        const std::uint64_t bl = __builtin_bit_cast(std::uint64_t, x * glo[b]) - 1;
        const std::uint64_t bh = __builtin_bit_cast(std::uint64_t, x * ghi[b]) + 1;
        lo[b] = x > 0 ? __builtin_bit_cast(double, bl) : 0.0;
        hi[b] = x > 0 ? __builtin_bit_cast(double, bh) : zero[b];
    }
}

template <bool Midpoint>
[[gnu::noinline]] void coefficient_loop(const double* __restrict el, const double* __restrict eh,
                                        const double* __restrict flo,
                                        const double* __restrict fhi,
                                        const double* __restrict dlo,
                                        const double* __restrict dhi, double* __restrict cm,
                                        double* __restrict cr, std::size_t stride,
                                        double* __restrict w_num, double* __restrict w_den,
                                        double* __restrict ok, std::size_t B) {
    for (std::size_t b = 0; b < B; ++b) {
        const bool o = coefficients<Midpoint>(el[b], eh[b], flo[b], fhi[b], dlo[b], dhi[b],
                                              cm + b, cr + b, stride, w_num[b], w_den[b]);
        ok[b] = o ? ok[b] : 0.0;
    }
}

void coefficient_rows(const coefficient_args& a) {
    if (a.midpoint)
        coefficient_loop<true>(a.el, a.eh, a.flo, a.fhi, a.dlo, a.dhi, a.cm, a.cr, a.stride,
                               a.w_num, a.w_den, a.ok, a.B);
    else
        coefficient_loop<false>(a.el, a.eh, a.flo, a.fhi, a.dlo, a.dhi, a.cm, a.cr, a.stride,
                                a.w_num, a.w_den, a.ok, a.B);
}

[[gnu::noinline]] double quotient_max(double* __restrict w_num, const double* __restrict w_den,
                                      std::size_t B, double q, bool& valid) {
    bool v = true;
    for (std::size_t b = 0; b < B; ++b) {
        v = v & weight_valid(w_num[b], w_den[b]);
        w_num[b] = w_num[b] / w_den[b];
    }
    for (std::size_t b = 0; b < B; ++b) q = dmax(q, w_num[b]);
    valid = valid && v;
    return q;
}

/// K's terms of the coefficient of A_h b_{i,h} (B_k and T_k per row).
[[gnu::noinline]] void k_rows(const double* __restrict am, const double* __restrict ar,
                              const double* __restrict Bv, const double* __restrict Tv, double g,
                              double* __restrict K, std::size_t B) {
    for (std::size_t b = 0; b < B; ++b) {
        const double a = __builtin_fabs(am[b]);
        K[b] += a * Tv[b] + ar[b] * (Bv[b] + Tv[b]) + g * (a * Bv[b]);
    }
}

/// K's terms of the coefficient of A_h v_p or A_h v'_p (one B_k and T_k).
[[gnu::noinline]] void k_shared(const double* __restrict am, const double* __restrict ar,
                                double Bs, double Ts, double g, double* __restrict K,
                                std::size_t B) {
    for (std::size_t b = 0; b < B; ++b) {
        const double a = __builtin_fabs(am[b]);
        K[b] += a * Ts + ar[b] * (Bs + Ts) + g * (a * Bs);
    }
}

/// One head's terms of one coordinate's midpoints, on top of y_m (First: the first head) or of
/// the previous heads' (om itself).
template <bool First>
[[gnu::noinline]] void midpoints(const double* __restrict ym, const double* __restrict a0,
                                 const double* __restrict a1, const double* __restrict a2,
                                 const double* __restrict g0, double b1, double b2,
                                 double* __restrict om, std::size_t B) {
    for (std::size_t b = 0; b < B; ++b)
        om[b] = (First ? ym[b] : om[b]) + (a0[b] * g0[b] + a1[b] * b1 + a2[b] * b2);
}

/// The last head's terms of one coordinate's midpoints with that coordinate's terms of the
/// moved bound's partial sums (midpoints, then moved_sums, in one pass).
template <bool First>
[[gnu::noinline]] void midpoints_moved(const double* __restrict ym, const double* __restrict a0,
                                       const double* __restrict a1, const double* __restrict a2,
                                       const double* __restrict g0, double b1, double b2,
                                       double* __restrict om, double* __restrict T2,
                                       double* __restrict M1, double* __restrict TM,
                                       std::size_t B) {
    constexpr double inf = __builtin_inf();
    for (std::size_t b = 0; b < B; ++b) {
        const double x = (First ? ym[b] : om[b]) + (a0[b] * g0[b] + a1[b] * b1 + a2[b] * b2);
        om[b] = x;
        const double t = x - ym[b];
        const double at = __builtin_fabs(t);
        TM[b] = dmin(TM[b], at > 0 ? at : inf);
        T2[b] += t * t;
        M1[b] += __builtin_fabs(x);
    }
}

/// One coordinate's terms of the moved bound's partial sums.
[[gnu::noinline]] void moved_sums(const double* __restrict om, const double* __restrict ym,
                                  double* __restrict T2, double* __restrict M1,
                                  double* __restrict TM, std::size_t B) {
    constexpr double inf = __builtin_inf();
    for (std::size_t b = 0; b < B; ++b) {
        const double t = om[b] - ym[b];
        const double at = __builtin_fabs(t);
        TM[b] = dmin(TM[b], at > 0 ? at : inf);
        T2[b] += t * t;
        M1[b] += __builtin_fabs(om[b]);
    }
}

/// The per-row terms: r1 = ((sum_c y_r,c + d K) fold_slack + d fold_tiny) (1 + 2^-40), trad =
/// r1 + sum_c y_r,c, m1 = sum_c |M_c| and the moved bound from the four partial sums each.
template <bool Fault>
[[gnu::noinline]] void row_terms(const double* __restrict Kb, const double* __restrict yrs,
                                 const double* __restrict t2v, const double* __restrict m1v,
                                 const double* __restrict tmin, std::size_t stride, double d,
                                 bool drop, bool drop_moved, double* __restrict r1v,
                                 double* __restrict tradv, double* __restrict m1s,
                                 double* __restrict mv, std::size_t B) {
    for (std::size_t b = 0; b < B; ++b) {
        double r1 = ((yrs[b] + d * Kb[b]) * fold_slack + d * fold_tiny) * (1.0 + 0x1p-40);
        if constexpr (Fault) r1 = drop ? 0.0 : r1;
        const double trad = r1 + yrs[b];
        const bool small = dmin(dmin(tmin[b], tmin[stride + b]),
                                dmin(tmin[2 * stride + b], tmin[3 * stride + b])) < 0x1p-500;
        r1v[b] = r1;
        tradv[b] = trad;
        m1s[b] = (m1v[b] + m1v[stride + b]) + (m1v[2 * stride + b] + m1v[3 * stride + b]);
        const double t2 = (t2v[b] + t2v[stride + b]) + (t2v[2 * stride + b] + t2v[3 * stride + b]);
        mv[b] = moved_bound(t2, small, trad, Fault && drop_moved);
    }
}

void block_rows(const block_rows_args& a) {
    const std::size_t S = a.stride, B = a.B, n = a.n, d = a.d, H = a.heads;
    double* Kb = a.K;
    for (std::size_t b = 0; b < B; ++b) Kb[b] = 0.0;
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t t = 0; t < 3; ++t) {
            const std::size_t k = 3 * h + t;
            if (t == 0)
                k_rows(a.cm + k * S, a.cr + k * S, a.gb + h * n, a.gt + h * n, a.g, Kb, B);
            else
                k_shared(a.cm + k * S, a.cr + k * S, a.bb[2 * h + t - 1], a.bt[2 * h + t - 1],
                         a.g, Kb, B);
        }
    // The moved bound's sums (M_c - y_m,c)^2, |M_c| and the smallest nonzero |M_c - y_m,c|
    // (below 2^-500 its square may underflow), in four partial sums each by c mod 4 (the last
    // d mod 4 coordinates in the first; every bound of these sums holds for any order).
    double* t2v = a.sums;
    double* m1v = t2v + 4 * S;
    double* tmin = t2v + 8 * S;
    for (std::size_t b = 0; b < 8 * S; ++b) t2v[b] = 0.0;
    for (std::size_t b = 0; b < 4 * S; ++b) tmin[b] = __builtin_inf();
    const std::size_t d4 = d - d % 4;
    // The midpoints M_c = y_m,c + sum_h (a_0 (A_h b_i)_c + a_1 (A_h v_p)_c + a_2 (A_h v'_p)_c),
    // head after head; the last head's pass adds each coordinate's terms of the sums.
    for (std::size_t h = 0; h < H; ++h) {
        const double* a0 = a.cm + 3 * h * S;
        for (std::size_t c = 0; c < d; ++c) {
            const double* g0 = a.gm + (h * d + c) * a.block_stride;
            const double b1 = a.bm[2 * h * d + c], b2 = a.bm[(2 * h + 1) * d + c];
            double* om = a.mid + c * S;
            const double* ym = a.ym + c * a.block_stride;
            const std::size_t l = (c < d4 ? c % 4 : 0) * S;
            if (h + 1 == H) {
                if (h == 0)
                    midpoints_moved<true>(ym, a0, a0 + S, a0 + 2 * S, g0, b1, b2, om, t2v + l,
                                          m1v + l, tmin + l, B);
                else
                    midpoints_moved<false>(ym, a0, a0 + S, a0 + 2 * S, g0, b1, b2, om, t2v + l,
                                           m1v + l, tmin + l, B);
            } else if (h == 0) {
                midpoints<true>(ym, a0, a0 + S, a0 + 2 * S, g0, b1, b2, om, B);
            } else {
                midpoints<false>(ym, a0, a0 + S, a0 + 2 * S, g0, b1, b2, om, B);
            }
        }
    }
    if (H == 0)
        for (std::size_t c = 0; c < d; ++c) {
            const std::size_t l = (c < d4 ? c % 4 : 0) * S;
            const double* ym = a.ym + c * a.block_stride;
            for (std::size_t b = 0; b < B; ++b) a.mid[c * S + b] = ym[b];
            moved_sums(a.mid + c * S, ym, t2v + l, m1v + l, tmin + l, B);
        }
    double* r1v = t2v + 12 * S;
    if (a.drop || a.drop_moved) // the negative controls (tests only)
        row_terms<true>(Kb, a.yrsum, t2v, m1v, tmin, S, static_cast<double>(d), a.drop,
                        a.drop_moved, r1v, r1v + S, r1v + 2 * S, r1v + 3 * S, B);
    else
        row_terms<false>(Kb, a.yrsum, t2v, m1v, tmin, S, static_cast<double>(d), false, false,
                         r1v, r1v + S, r1v + 2 * S, r1v + 3 * S, B);
}

[[gnu::noinline]] void to_rows(const double* __restrict mid, std::size_t stride, std::size_t d,
                               double* __restrict rows, std::size_t B) {
    std::size_t b = 0;
#ifdef ATTNPROP_FOLD_AVX2
    // 4 x 4 tiles through registers.
    const std::size_t d4 = d - d % 4;
    for (; b + 4 <= B; b += 4) {
        std::size_t c = 0;
        for (; c < d4; c += 4) {
            const __m256d r0 = _mm256_loadu_pd(mid + c * stride + b);
            const __m256d r1 = _mm256_loadu_pd(mid + (c + 1) * stride + b);
            const __m256d r2 = _mm256_loadu_pd(mid + (c + 2) * stride + b);
            const __m256d r3 = _mm256_loadu_pd(mid + (c + 3) * stride + b);
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
            const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            _mm256_storeu_pd(rows + b * d + c, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(rows + (b + 1) * d + c, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(rows + (b + 2) * d + c, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(rows + (b + 3) * d + c, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
        for (; c < d; ++c)
            for (std::size_t k = 0; k < 4; ++k) rows[(b + k) * d + c] = mid[c * stride + b + k];
    }
#elif defined(__SSE2__)
    // 2 x 2 tiles through registers.
    const std::size_t d2 = d - d % 2;
    for (; b + 2 <= B; b += 2) {
        std::size_t c = 0;
        for (; c < d2; c += 2) {
            const __m128d r0 = _mm_loadu_pd(mid + c * stride + b);
            const __m128d r1 = _mm_loadu_pd(mid + (c + 1) * stride + b);
            _mm_storeu_pd(rows + b * d + c, _mm_unpacklo_pd(r0, r1));
            _mm_storeu_pd(rows + (b + 1) * d + c, _mm_unpackhi_pd(r0, r1));
        }
        for (; c < d; ++c)
            for (std::size_t k = 0; k < 2; ++k) rows[(b + k) * d + c] = mid[c * stride + b + k];
    }
#endif
    for (; b < B; ++b)
        for (std::size_t c = 0; c < d; ++c) rows[b * d + c] = mid[c * stride + b];
}

[[gnu::noinline]] void abs_max(const double* __restrict mid, std::size_t stride, std::size_t d,
                               const double* __restrict mask, double* __restrict acc,
                               std::size_t B) {
    for (std::size_t c = 0; c < d; ++c) {
        const double* m = mid + c * stride;
        double* a = acc + c * stride;
        for (std::size_t b = 0; b < B; ++b)
            a[b] = dmax(a[b], mask[b] != 0 ? __builtin_fabs(m[b]) : 0.0);
    }
}

} // namespace

extern const kernel_set set;
const kernel_set set = {
#ifdef ATTNPROP_FOLD_AVX2
    "avx2",
#else
    "baseline",
#endif
    block_scores, table_column, coefficient_rows, quotient_max, block_rows, to_rows, abs_max,
};

} // namespace ATTNPROP_FOLD_ISA

#ifndef ATTNPROP_FOLD_AVX2
} // namespace attnprop::attention::fold

#include <cstdlib>
#include <cstring>

namespace attnprop::attention::fold {

#ifdef ATTNPROP_HAVE_AVX2_FOLD
namespace avx2 {
extern const kernel_set set;
}
#endif

const kernel_set& baseline_kernels() { return baseline::set; }

const kernel_set* avx2_kernels() {
#ifdef ATTNPROP_HAVE_AVX2_FOLD
    static const bool have = __builtin_cpu_supports("avx2");
    return have ? &avx2::set : nullptr;
#else
    return nullptr;
#endif
}

const kernel_set& kernels() {
    static const kernel_set& k = [] () -> const kernel_set& {
        const char* force = std::getenv("ATTNPROP_FOLD_KERNELS");
        if (force && std::strcmp(force, "baseline") == 0) return baseline::set;
        return avx2_kernels() ? *avx2_kernels() : baseline::set;
    }();
    return k;
}

#endif

} // namespace attnprop::attention::fold
