#pragma once
/// @file registry.hpp
/// What the benchmark binary runs: every case registered with Google Benchmark is also listed
/// here with its group, scalar kind, implementation and n, so that main() can print ratios.

#include <cstddef>
#include <string>
#include <vector>

namespace attnprop::bench {

/// Options of one benchmark run (command-line flags of attnprop_bench).
struct bench_config {
    bool full = false;       ///< also n = 4096 for the MPFR and Arb soft cases (several minutes)
    bool quick = false;      ///< only the smallest sizes, one repetition (a smoke test)
    long precision = 256;    ///< bits for MPFR and Arb
};

/// One registered benchmark.
struct bench_case {
    std::string name;  ///< the Google Benchmark name
    std::string group; ///< "soft", "hard" or "cc"
    std::string kind;  ///< "double", "mpfr-256", "arb-256", "exact", ...
    std::string impl;  ///< "attnprop" or "baseline" (soft); "exact" or "double" (hard); model (cc)
    std::size_t n = 0;
};

/// Every registered case, in registration order.
std::vector<bench_case>& registry();

/// Registration of the three groups (soft_bench.cpp, hard_bench.cpp, cc_bench.cpp).
void register_soft_benchmarks(const bench_config& cfg);
void register_hard_benchmarks(const bench_config& cfg);
void register_cc_benchmarks(const bench_config& cfg);

} // namespace attnprop::bench
