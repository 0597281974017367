#pragma once
/// @file work.hpp
/// The work of one forward pass at length n, and the limit attention-work checked before any
/// pass that would take hours (every command that evaluates at a user-chosen n asks first).

#include "model/model.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnprop::attention {

/// The score terms of one forward pass at length n (the cost that grows with n): per layer and
/// head, n^2 d_k for a dot head (n^2 times the map's input dimension for a map head), or n for a
/// head whose scores are constant (attention::constant_scores, no n^2 work). A pass in a kind
/// of `precision_bits` > 256 (MPFR, balls) counts each term (precision_bits / 256)^2 times: a
/// product at 2^20 bits costs thousands of products at 256 bits, and an exponential more.
/// Saturates.
std::uint64_t forward_work(const model::model<numeric::rational>& m, std::size_t n,
                           long precision_bits = 0);

/// Throws numeric::limit_error (limit attention-work) when forward_work(m, n, precision_bits)
/// exceeds the limit: one forward pass would take hours, or days.
void check_forward_work(const model::model<numeric::rational>& m, std::size_t n,
                        long precision_bits = 0);

/// "1,234,567": a count with thousands separators, for the messages of the work and memory
/// limits.
std::string with_commas(std::uint64_t v);

} // namespace attnprop::attention
