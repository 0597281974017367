#pragma once
/// @file norms.hpp
/// Rigorous upper bounds on vector and matrix norms in Arb balls, for the soft-attention bounds
/// (bounds.hpp, posterior.hpp). Every function returns an *upper-bound point*
/// (numeric/ball_bounds.hpp): an exact ball (radius 0) whose value is at least the true
/// quantity, or +inf when no finite bound is known.

#include "model/matrix.hpp"
#include "numeric/ball_bounds.hpp"
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

// The upper-bound points of numeric/ball_bounds.hpp, by their short names in the analyses.
using numeric::finite;
using numeric::lower;
using numeric::lower_decimal;
using numeric::max_upper;
using numeric::min_upper;
using numeric::pos_inf;
using numeric::upper;
using numeric::upper_decimal;
using numeric::zero_point;

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

} // namespace attnprop::analysis
