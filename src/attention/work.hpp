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
/// head whose scores are constant (attention::constant_scores, no n^2 work). Saturates.
std::uint64_t forward_work(const model::model<numeric::rational>& m, std::size_t n);

/// Throws numeric::limit_error (limit attention-work) when forward_work(m, n) exceeds the
/// limit: one forward pass would take hours, or days.
void check_forward_work(const model::model<numeric::rational>& m, std::size_t n);

/// "1,234,567": a count with thousands separators, for the messages of the work and memory
/// limits.
std::string with_commas(std::uint64_t v);

} // namespace attnprop::attention
