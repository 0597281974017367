#pragma once
/// @file paired.hpp
/// Paired timing for a shared, loaded machine: attnprop and its baseline run alternately inside
/// one benchmark (a b, b a, a b, ...), each call timed by the thread's CPU clock, so both see
/// the same load; the ratio reported is the median of the per-pair ratios.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <vector>

namespace attnprop::bench {

/// CPU time of the calling thread, in seconds.
inline double thread_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// Each benchmark iteration calls `a` (attnprop) and `b` (the baseline) once, alternating which
/// goes first. Sets the counters attnprop_s and baseline_s (median CPU seconds per call) and
/// ratio (median of a / b over the pairs).
template <class A, class B> void run_paired(benchmark::State& state, A&& a, B&& b) {
    std::vector<double> ta, tb, ratio;
    bool a_first = true;
    auto timed = [](auto& f) {
        const double t0 = thread_seconds();
        f();
        return thread_seconds() - t0;
    };
    for (auto _ : state) {
        double x = 0, y = 0;
        if (a_first) {
            x = timed(a);
            y = timed(b);
        } else {
            y = timed(b);
            x = timed(a);
        }
        a_first = !a_first;
        ta.push_back(x);
        tb.push_back(y);
        ratio.push_back(x / y);
    }
    state.counters["attnprop_s"] = median(ta);
    state.counters["baseline_s"] = median(tb);
    state.counters["ratio"] = median(ratio);
    state.counters["pairs"] = static_cast<double>(ratio.size());
}

} // namespace attnprop::bench
