// The arithmetic of the certified double kernel's fold of one-symbol changes
// (incremental_influence<dinterval>; docs/scalars.md, "One-symbol changes in certified double
// intervals"), shared by incremental_influence.cpp and the fold's block kernels
// (fold_kernels.cpp, compiled once per instruction set). Everything here has internal linkage
// and uses builtins only, no function of the standard library that a translation unit could
// emit out of line: a copy compiled for AVX2 can then never stand in for another's.
#pragma once

#include <cstddef>

namespace attnprop::attention::fold {

namespace {

constexpr double dbl_max = __DBL_MAX__;
constexpr double fold_slack = 1.0 + 0x1p-36;
constexpr double fold_tiny = 0x1p-1000;

/// std::min's and std::max's results (b < a ? b : a, a < b ? b : a), NaN cases included.
[[gnu::always_inline]] inline double dmin(double a, double b) { return b < a ? b : a; }
[[gnu::always_inline]] inline double dmax(double a, double b) { return a < b ? b : a; }

/// An upper bound of ||y'_i - y_i||_2 for a folded row i (d <= 4094 coordinates): y'_c lies
/// within R_c of M_c and y_c within y_r,c of y_m,c, so y'_c - y_c = t_c (1 + delta_c) + e_c
/// with t_c = fl(M_c - y_m,c) (|delta_c| <= u: rounding to nearest, exact when subnormal) and
/// |e_c| <= R_c + y_r,c; so ||y' - y|| <= (1 + u) ||t|| + sum_c (R_c + y_r,c). t2 = fl(sum_c
/// t_c^2) is at least the exact sum times (1 - u)^(d + 1), which 1 + 2^-40 restores for
/// d <= 4094 (plus 2^-1000 when `small`: a nonzero |t_c| below 2^-500, whose square may
/// underflow); its square root s rounded to nearest (normal: the argument is 0 or at least
/// 2^-1074) is at least the exact one times 1 - u, and fl(s (1 + 2^-51)) >= s (1 + 4u)(1 - u)
/// bounds ||t||. trad =
/// fl(sum_c (R_c + y_r,c)) and the final sum pass through at most d + 4 roundings of
/// nonnegative terms: (1 - u)^-(d + 5) <= 1 + 2^-40, the factor applied (itself rounded: the
/// ulp it loses is far below the slack left). NaN when a sum is not finite. Branch-free (a
/// loop over rows vectorises). `drop` (incremental_fault::drop_moved_radius, tests only):
/// sqrt(t2) alone, the negative control.
[[gnu::always_inline]] inline double moved_bound(double t2, bool small, double trad, bool drop) {
    const double s = __builtin_sqrt(t2 * (1.0 + 0x1p-40) + (small ? 0x1p-1000 : 0.0));
    const double nt = ((t2 == 0) & !small) ? 0.0 : s * (1.0 + 0x1p-51);
    const double v = (nt * (1.0 + 0x1p-52) + trad) * (1.0 + 0x1p-40);
    const bool ok = (t2 <= dbl_max) & (trad <= dbl_max) & (v <= dbl_max);
    if (drop) return __builtin_sqrt(t2);
    return ok ? v : __builtin_nan("");
}

/// The pair bound's weight of one row and change as a quotient num / den, from midpoints and
/// without rounding (incremental_fault::midpoint_omega, tests only): e, e' and D - e at the
/// midpoints of [el, eh], [nl, nh] and [rl, rh], num = max(e, e'), den = min(e, e') + max(0,
/// D - e).
[[gnu::always_inline]] inline void weight_parts_midpoint(double el, double eh, double nl,
                                                         double nh, double rl, double rh,
                                                         double& num, double& den) {
    const double e = 0.5 * el + 0.5 * eh, en = 0.5 * nl + 0.5 * nh, r = 0.5 * rl + 0.5 * rh;
    num = dmax(e, en);
    den = dmin(e, en) + dmax(r, 0.0);
}
/// Whether a weight quotient num / den is taken (else the weight is +inf).
[[gnu::always_inline]] inline bool weight_valid(double num, double den) {
    return (num <= dbl_max) & (den > 0) & (den <= dbl_max);
}

/// An upper bound of the pair bound's weight from q, the largest of fl(w_num / w_den) over rows
/// (coefficients()): the exact weight of a row is at most (q + 2^-1075) (1 + u)^2 / (1 - u)^2
/// (the quotient's rounding, with an absolute 2^-1075 where it is subnormal; every sum and
/// difference of w_num and w_den rounds with a relative error of at most u, exact where the
/// result is subnormal), below fl(fl(q (1 + 2^-49)) + 2^-1000).
inline double weight_widen(double q) { return q * (1.0 + 0x1p-49) + 0x1p-1000; }

/// The rank-1 coefficients of one row and head, lambda - 1 = (e - e') / D', alpha = -e / D' and
/// beta = e' / D' with e' = e f and D' = (D - e) + e', for e in [el, eh], f in [fl, fh] and D in
/// [dl, dh] (el, fl >= 0, dl > 0), as midpoints m[t stride] computed in rounding to nearest and
/// radii r[t stride] from one a-priori bound each (docs/scalars.md, "One-symbol changes in
/// certified double intervals"): with u' = 2^-52 and e_m in [el, eh], e_r = fl(eh - el) (the
/// same for f and D),
///   n = e_m f_m                N_r = e_r (f_m + f_r) + e_m f_r + u' n
///   R = D_m - e_m              R_r = D_r + e_r + u' |R|
///   P = R + n                  P_r = R_r + N_r + u' P
///   i = 1 / P                  I_r = P_r i i (1 + 2^-18) + u' i      (P_r <= 2^-20 P)
///   x = e_m - n                X_r = e_r + N_r + u' |x|
///   lambda - 1 = x i           |x| I_r + i X_r + X_r I_r + u' |x i|
///   alpha = -(e_m i)           e_m I_r + i e_r + e_r I_r + u' |e_m i|
///   beta = n i                 n I_r + i N_r + N_r I_r + u' n i
/// every radius times 1 + 2^-40 (its own at most 20 roundings of nonnegative terms) plus
/// 2^-1000 (underflow; P >= 2^-20 keeps i below 2^20). Branch-free but for the result: false
/// when an input is not finite or out of range, the cancellation guard applies (D - e may
/// hold less than a 2^-16 share of D, (R - R_r) 2^16 <= D_m + D_r), P < 2^-20 or P_r > 2^-20 P,
/// or a result is not finite. w_num and w_den receive the pair bound's weight of the row as a
/// quotient, also when the guard applies: with e' in n -+ N_r S and D - e in R -+ R_r S (S = 1
/// + 2^-40) and e, e' >= 0, in rounding to nearest, w_num = max(eh, n + N_r S) and w_den =
/// max(0, min(el, n - N_r S)) + max(0, R - R_r S) (+inf when an input is not finite); the
/// exact weight is at most w_num / w_den (1 + u)^2 / (1 - u), and weight_widen turns the
/// largest rounded quotient into an upper bound. `Midpoint` (incremental_fault::midpoint_omega,
/// tests only): weight_parts_midpoint.
template <bool Midpoint>
[[gnu::always_inline]] inline bool coefficients(double el, double eh, double fl, double fh,
                                                double dl, double dh, double* m, double* r,
                                                std::size_t stride, double& w_num, double& w_den) {
    constexpr double up = 0x1p-52, S = 1.0 + 0x1p-40, T = 0x1p-1000;
    // Non-short-circuit & throughout: no branch, so a loop over rows vectorises.
    const bool in = (el >= 0) & (fl >= 0) & (dl > 0) & (eh <= 1e300) & (fh <= 1e300) &
                    (dh <= 1e300) & (el <= eh) & (fl <= fh) & (dl <= dh);
    const double em = dmin(dmax(el * 0.5 + eh * 0.5, el), eh), er = eh - el;
    const double fm = dmin(dmax(fl * 0.5 + fh * 0.5, fl), fh), fr = fh - fl;
    const double Dm = dmin(dmax(dl * 0.5 + dh * 0.5, dl), dh), Dr = dh - dl;
    const double n = em * fm;
    const double Nr = er * (fm + fr) + em * fr + up * n;
    const double R = Dm - em;
    const double Rr = Dr + er + up * __builtin_fabs(R);
    const double P = R + n;
    const double Pr = Rr + Nr + up * P;
    // The pair bound's weight from e, e' in n -+ N_r S and D - e in R -+ R_r S (e, e' >= 0),
    // in rounding to nearest: the caller widens the largest quotient (weight_widen).
    const double NrS = Nr * S, RrS = Rr * S;
    const bool w_in = in & (n + NrS + __builtin_fabs(R) + RrS <= 1e300); // no end overflows
    if constexpr (Midpoint) {
        weight_parts_midpoint(el, eh, n - NrS, n + NrS, R - RrS, R + RrS, w_num, w_den);
    } else {
        w_num = dmax(eh, n + NrS);
        w_den = dmax(0.0, dmin(el, n - NrS)) + dmax(0.0, R - RrS);
    }
    w_num = w_in ? w_num : __builtin_inf();
    const double i = 1.0 / P;
    const double Ir = Pr * i * i * (1.0 + 0x1p-18) + up * i;
    const double x = em - n;
    const double Xr = er + Nr + up * __builtin_fabs(x);
    const double lam = x * i, alpha = -(em * i), beta = n * i;
    const double r0 =
        (__builtin_fabs(x) * Ir + i * Xr + Xr * Ir + up * __builtin_fabs(lam)) * S + T;
    const double r1 = (em * Ir + i * er + er * Ir + up * __builtin_fabs(alpha)) * S + T;
    const double r2 = (n * Ir + i * Nr + Nr * Ir + up * beta) * S + T;
    m[0] = lam;
    m[stride] = alpha;
    m[2 * stride] = beta;
    r[0] = r0;
    r[stride] = r1;
    r[2 * stride] = r2;
    const bool guard = (R - Rr) * 65536.0 > Dm + Dr;
    const bool range = (P >= 0x1p-20) & (Pr * 0x1p20 <= P);
    const bool finite_out =
        __builtin_fabs(lam) + __builtin_fabs(alpha) + beta + r0 + r1 + r2 <= dbl_max;
    return in & guard & range & finite_out;
}

} // namespace

} // namespace attnprop::attention::fold
