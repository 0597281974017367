#pragma once
/// @file elementary.hpp
/// Certified elementary functions in double arithmetic: exp, expm1, log, sqrt, tanh, sin, cos,
/// erf and erfc of a double, each returned as an interval [lo, hi] that is guaranteed to
/// contain the exact value of the function at the exact argument. These are the transcendental
/// operations of the certified double kind (numeric::dinterval) and of its soft-attention rows.
///
/// exp, expm1, log and tanh are our own: range reduction, a Taylor or atanh polynomial, and a
/// written-down bound of every error (truncation, coefficient rounding, Horner rounding,
/// reduction), proved in docs/scalars.md ("The certified double kind"). libm's functions give
/// no guaranteed bound, so they are never the enclosure. sqrt uses the correctly rounded IEEE
/// square root. sin and cos, which only positional formulas need (O(n d) calls, never O(n^2)),
/// and erf and erfc (the exact gelu of feed-forward blocks, O(n d) calls too) are evaluated
/// with Arb at 64 bits and rounded outward.
///
/// Assumptions: IEEE 754 binary64, rounding to nearest (the default floating-point
/// environment), no flush-to-zero. The library that contains this code is compiled with
/// -ffp-contract=off so that no expression is silently fused.

#include "numeric/interval.hpp"

#include <bit>
#include <cstdint>

namespace attnprop::numeric {

/// e^x. NaN gives the whole line; overflow gives [DBL_MAX, inf]; e^x below the smallest
/// subnormal gives [0, smallest subnormal].
interval exp_enclosure(double x);
/// e^x - 1, with relative accuracy near 0.
interval expm1_enclosure(double x);
/// ln x for x > 0; the whole line for x <= 0 or NaN (the value does not exist there).
interval log_enclosure(double x);
/// sqrt(x) for x >= 0 (a point when x is a perfect square); the whole line for x < 0.
interval sqrt_enclosure(double x);
/// tanh x.
interval tanh_enclosure(double x);
/// sin and cos of the interval x (any width): the hull of the function over x.
interval sin_enclosure(const interval& x);
interval cos_enclosure(const interval& x);
/// erf x and erfc x = 1 - erf x of a double, through Arb at 64 bits like sin and cos (the
/// FFN activations of exported PyTorch models need O(n d) calls per layer, never O(n^2)).
interval erf_enclosure(double x);
interval erfc_enclosure(double x);

namespace elementary_detail {

/// ln 2 = ln2_hi + ln2_lo + delta with |delta| <= 2^-80 (tested against MPFR). ln2_hi has 32
/// significant bits, so k * ln2_hi is exact for |k| < 2^21.
inline constexpr double ln2_hi = 0x1.62e42feep-1;
inline constexpr double ln2_lo = 0x1.a39ef35793c76p-33;
inline constexpr double log2e = 0x1.71547652b82fep0;

/// The argument range of exp_fast.
inline constexpr double exp_fast_min = -707.0;
inline constexpr double exp_fast_max = 709.0;
/// exp_fast(x) = e^x (1 + theta) with |theta| <= exp_fast_rel_error for x in
/// [exp_fast_min, exp_fast_max]. The proved bound is 4.3 * 2^-53 (docs/scalars.md); the
/// constant is 2^-50 = 8 * 2^-53, leaving room for the rounding of the bound's own uses.
inline constexpr double exp_fast_rel_error = 0x1p-50;

/// 1/i! rounded to nearest, i = 0..13 (1/i! is a correctly rounded division of exact doubles).
inline constexpr double exp_coeff[14] = {
    1.0,         1.0,          1.0 / 2,           1.0 / 6,          1.0 / 24,
    1.0 / 120,   1.0 / 720,    1.0 / 5040,        1.0 / 40320,      1.0 / 362880,
    1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0};

/// e^x to within a relative error exp_fast_rel_error, for x in [exp_fast_min, exp_fast_max]
/// (outside it the result is meaningless). Branch-free, so loops over it vectorise: k =
/// round(x / ln 2) by the 1.5 * 2^52 trick, r = x - k ln 2 in two steps (|r| <= 0.3467), a
/// degree-13 Taylor polynomial by Horner, and an exact scaling by 2^k (the result is a normal
/// double throughout the range).
inline double exp_fast(double x) {
    constexpr double shifter = 0x1.8p52;
    double kd = x * log2e + shifter;
    kd -= shifter;
    const double t = x - kd * ln2_hi;
    const double r = t - kd * ln2_lo;
    double p = exp_coeff[13];
    p = p * r + exp_coeff[12];
    p = p * r + exp_coeff[11];
    p = p * r + exp_coeff[10];
    p = p * r + exp_coeff[9];
    p = p * r + exp_coeff[8];
    p = p * r + exp_coeff[7];
    p = p * r + exp_coeff[6];
    p = p * r + exp_coeff[5];
    p = p * r + exp_coeff[4];
    p = p * r + exp_coeff[3];
    p = p * r + exp_coeff[2];
    p = p * r + exp_coeff[1];
    p = p * r + exp_coeff[0];
    const auto k = static_cast<std::int64_t>(kd);
    const double scale = std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
    return p * scale;
}

} // namespace elementary_detail

} // namespace attnprop::numeric
