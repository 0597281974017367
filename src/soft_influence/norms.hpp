#pragma once
/// @file norms.hpp
/// Rigorous upper bounds on vector and matrix norms in Arb balls, for the soft-attention bounds
/// (bounds.hpp). Every function returns an *upper-bound point*: an exact ball (radius 0) whose
/// value is at least the true quantity, or +inf when no finite bound is known. Working with
/// points keeps the recursions of bounds.cpp monotone and easy to audit: every later formula
/// only adds and multiplies non-negative upper bounds.

#include "model/matrix.hpp"
#include "numeric/scalar.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace attnprop::analysis {

using numeric::arb_ball;

/// A dense rows x cols matrix of balls, row-major (a workspace type of the norm code).
struct ball_matrix {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<arb_ball> a;
    const arb_ball& at(std::size_t r, std::size_t c) const { return a[r * cols + c]; }
    arb_ball& at(std::size_t r, std::size_t c) { return a[r * cols + c]; }
};

/// The exact point +inf at the given precision ("no finite bound").
arb_ball pos_inf(long precision_bits);
/// The exact point 0.
arb_ball zero_point(long precision_bits);
/// The smallest representable point >= every point of x (rounded up at x's precision);
/// +inf when x is not finite.
arb_ball upper(const arb_ball& x);
/// The largest representable point <= every point of x; -inf when x is not finite.
arb_ball lower(const arb_ball& x);
/// upper(max(a, b)) and upper(min(a, b)) of two balls.
arb_ball max_upper(const arb_ball& a, const arb_ball& b);
arb_ball min_upper(const arb_ball& a, const arb_ball& b);
/// Whether x is a finite ball.
bool finite(const arb_ball& x);

/// Upper bound of the Euclidean norm of v (0 for an empty vector).
arb_ball norm2_upper(const std::vector<arb_ball>& v, long precision_bits);
/// Upper bound of the Euclidean norm of a - b (equal lengths).
arb_ball distance_upper(const std::vector<arb_ball>& a, const std::vector<arb_ball>& b,
                        long precision_bits);

/// Converts an exact matrix (all entries) to balls at the context's precision.
ball_matrix to_ball_matrix(const model::matrix<numeric::rational>& m, const numeric::context& ctx);

/// Rigorous upper bound of the spectral norm ||M||_2 (largest singular value): the minimum of
/// the Frobenius norm, sqrt(||M||_1 ||M||_inf), and ||(M M^T)^(2^j)||_F^(1/2^(j+1)) for
/// j = 1..8 (repeated squaring of the Gram matrix; each is >= ||M||_2 because the Frobenius norm
/// of a symmetric positive semidefinite matrix is at least its largest eigenvalue, and the
/// sequence converges to ||M||_2 from above, within a factor rank^(1/2^(j+1))). All in balls;
/// 0 for a zero or empty matrix.
arb_ball spectral_norm_upper(const ball_matrix& m, const numeric::context& ctx);
arb_ball spectral_norm_upper(const model::matrix<numeric::rational>& m, const numeric::context& ctx);

/// A decimal string that is >= x's upper bound (rounded up to `digits` significant digits), e.g.
/// "1.7321" or "3.42e+225"; "inf" when unbounded (also beyond MPFR's exponent range), "0" for 0.
std::string upper_decimal(const arb_ball& x, int digits = 6);
/// A decimal string that is <= x's lower bound ("-inf" when unbounded below).
std::string lower_decimal(const arb_ball& x, int digits = 6);

} // namespace attnprop::analysis
