#pragma once
/// @file interrupt.hpp
/// A process-wide request to stop long computations early (the command line sets it on
/// SIGINT). Long loops poll stop_requested() between units of work (a property's case, a
/// sweep's input, a restriction's length) and end with what they have finished; a unit in
/// progress is completed or dropped, never recorded half done.

#include <atomic>
#include <stdexcept>

namespace attnprop::numeric {

namespace detail {
/// Constant-initialised, so a signal handler never meets a guarded static initialisation.
inline std::atomic<bool> stop_flag{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
} // namespace detail

/// Whether a stop was requested. Cheap (one relaxed load); safe from any thread.
inline bool stop_requested() noexcept {
    return detail::stop_flag.load(std::memory_order_relaxed);
}

/// Requests a stop. Async-signal-safe (a lock-free atomic store).
inline void request_stop() noexcept { detail::stop_flag.store(true, std::memory_order_relaxed); }

/// Withdraws the request (tests).
inline void clear_stop_request() noexcept {
    detail::stop_flag.store(false, std::memory_order_relaxed);
}

/// Thrown by long loops when a stop was requested, to abandon the unit of work in progress;
/// the caller that owns the finished units catches it and ends with them.
class interrupted_error : public std::runtime_error {
public:
    interrupted_error() : std::runtime_error("interrupted") {}
};

/// Throws interrupted_error when a stop was requested.
inline void throw_if_stop_requested() {
    if (stop_requested()) throw interrupted_error();
}

} // namespace attnprop::numeric
