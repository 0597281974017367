#pragma once
/// @file registry.hpp
/// What the benchmark binary runs: every case registered with Google Benchmark is also listed
/// here with its group, scalar kind and n, so that main() can print the tables. Soft and hard
/// cases are paired (paired.hpp): one case times attnprop and its baseline alternately.

#include <cstddef>
#include <string>
#include <vector>

namespace attnprop::bench {

/// Options of one benchmark run (command-line flags of attnprop_bench).
struct bench_config {
    bool full = false;       ///< also n = 4096 for the MPFR and Arb soft cases (several minutes)
    bool quick = false;      ///< only the smallest sizes, few pairs (a smoke test)
    long precision = 256;    ///< bits for MPFR and Arb
};

/// One registered benchmark.
struct bench_case {
    std::string name;  ///< the Google Benchmark name
    std::string group; ///< "soft", "hard", "certified", "eval", "cc", "restrict", "influence" or
                       ///< "masked"
    std::string kind;  ///< "double", "mpfr-256", "arb-256" (soft), "exact/dbl" (hard), ...
    std::string model; ///< the bundled model (cc cases) or what is timed (restrict cases)
    std::size_t n = 0;
};

/// Every registered case, in registration order.
std::vector<bench_case>& registry();

/// Registration of the groups (soft_bench.cpp, hard_bench.cpp, cc_bench.cpp,
/// restrict_bench.cpp, influence_bench.cpp, certified_bench.cpp, every_input_bench.cpp,
/// masked_bench.cpp).
void register_soft_benchmarks(const bench_config& cfg);
void register_hard_benchmarks(const bench_config& cfg);
void register_cc_benchmarks(const bench_config& cfg);
void register_restrict_benchmarks(const bench_config& cfg);
void register_influence_benchmarks(const bench_config& cfg);
void register_certified_benchmarks(const bench_config& cfg);
void register_every_input_benchmarks(const bench_config& cfg);
void register_masked_benchmarks(const bench_config& cfg);

} // namespace attnprop::bench
