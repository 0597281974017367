#pragma once
/// @file thread_pool.hpp
/// The one way attnprop computes in parallel: a fork-join loop over indices, with the results
/// written by index so that they never depend on the number of threads, the first exception of
/// any worker rethrown, and a stop request (SIGINT, numeric/interrupt.hpp) polled between units
/// of work. Used by the restriction builder and its certificate (src/hard_limit) and the
/// influence sweep (src/soft_influence/sweep.cpp); docs/architecture.md, "One thread pool".

#include <cstddef>
#include <functional>

namespace attnprop::util {

/// The number of workers for a requested count: `requested` when positive, else the hardware
/// concurrency (at least 1) capped at `cap` (0: no cap).
int worker_count(int requested, int cap = 0);

struct parallel_options {
    /// Indices a worker takes at a time (at least 1). Larger chunks cost fewer atomic
    /// operations for short units; a stop request is polled between chunks.
    std::size_t chunk = 1;
    /// Run by every thread the loop starts, just before it ends (never by the calling thread):
    /// per-thread caches (Arb's and MPFR's constants) are freed there.
    std::function<void()> on_thread_exit;
};

/// Calls fn(index, worker) for every index in [0, count) on min(threads, count) workers, the
/// calling thread being worker 0 (one worker: a plain loop on the calling thread). Workers take
/// the next `chunk` indices in turn; a worker index lets callers keep per-worker scratch space,
/// and callers write results by index, so that results do not depend on the number of
/// threads. The first exception of any worker stops the others from taking more work and is
/// rethrown once all have finished. Throws numeric::interrupted_error between chunks once a
/// stop was requested (numeric::request_stop).
void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t, int)>& fn,
                  const parallel_options& opt = {});

} // namespace attnprop::util
