#pragma once
/// @file restriction_internal.hpp
/// Helpers shared by restriction.cpp and restriction_check.cpp (not part of the public API).

#include <cstddef>
#include <functional>

namespace attnprop::analysis::detail {

/// base^exp, or cap + 1 when it exceeds cap.
std::size_t checked_power(std::size_t base, std::size_t exp, std::size_t cap);

/// The number of worker threads for a requested count (0: up to 2).
int worker_count(int requested);

/// Calls fn(index, worker) for index in [0, count) on `threads` workers (the calling thread is
/// worker 0). Rethrows the first exception of any worker. Work is handed out in small chunks;
/// callers write results by index, so results do not depend on the number of threads. Throws
/// numeric::interrupted_error between chunks once a stop was requested (SIGINT).
void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t, int)>& fn);

} // namespace attnprop::analysis::detail
