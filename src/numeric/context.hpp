#pragma once
/// @file context.hpp
/// Numeric context: the working precision handed to every conversion and constant.

#include <stdexcept>
#include <string>

namespace attnprop::numeric {

/// Working precision in bits for MPFR reals and Arb balls. Exact rationals and doubles ignore it.
/// Values carry their own precision once made; the context only says how to make new ones.
/// There is deliberately no global default precision anywhere in attnprop.
struct context {
    long precision_bits = 256;
};

/// Smallest and largest precision accepted from users.
inline constexpr long min_precision_bits = 16;
inline constexpr long max_precision_bits = 1L << 20;

/// Raised for numeric misuse that is not undecidability: NaN in a double computation, division
/// by an exact zero, an operation a scalar kind cannot perform (exp of an exact rational).
class numeric_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace attnprop::numeric
