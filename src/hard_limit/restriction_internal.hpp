#pragma once
/// @file restriction_internal.hpp
/// Helpers shared by restriction.cpp and restriction_check.cpp (not part of the public API).

#include "util/thread_pool.hpp"

#include <cstddef>
#include <functional>

namespace attnprop::analysis::detail {

/// base^exp, or cap + 1 when it exceeds cap.
std::size_t checked_power(std::size_t base, std::size_t exp, std::size_t cap);

/// The number of worker threads for a requested count (0: up to 2).
inline int worker_count(int requested) { return util::worker_count(requested, 2); }

/// util::parallel_for over rows or assignments, handed out 8 at a time (short units of work).
inline void parallel_for(std::size_t count, int threads,
                         const std::function<void(std::size_t, int)>& fn) {
    util::parallel_for(count, threads, fn, {.chunk = 8, .on_thread_exit = {}});
}

} // namespace attnprop::analysis::detail
