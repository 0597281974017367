#pragma once
/// @file exact.hpp
/// Exact evaluation of rational subtrees: in GMP rationals (exact_value) and, without
/// allocating, in 64-bit fractions (fraction_value), which fails on overflow so that the caller
/// falls back to exact_value.

#include "model/formula/ast.hpp"

#include <cstdint>
#include <vector>

namespace attnprop::model::formula {

/// Exact value of node idx of `nodes` at (i, n), which must be a rational node. Returns false
/// when a power meets a non-integer exponent and strict is false (with strict it throws
/// numeric_error). Throws numeric::undefined_error on division by zero and 0^negative,
/// numeric::limit_error on results beyond the exact-size limit. Messages name no formula.
bool exact_value(const std::vector<node>& nodes, std::uint32_t idx, long i, long n,
                 numeric::rational& out, bool strict);

/// The value of node idx at (i, n) as p/q (q > 0, lowest terms) in 64-bit integers: false on
/// overflow, and on anything exact_value would reject or throw for.
bool fraction_value(const std::vector<node>& nodes, std::uint32_t idx, long i, long n,
                    long long& p, long long& q) noexcept;

/// Sets nd.small, small_num and small_den from nd.value when it fits in 64-bit integers.
void set_small(node& nd);

} // namespace attnprop::model::formula
