// The one-symbol influence profile of a random soft model (L = 2, d = 16, H = 2 heads of 8,
// binary alphabet, affine updates), in MPFR at the configured precision and in certified double
// intervals with the a-posteriori pair bound: the incremental profile
// (every position, one replacement each) against one full forward pass with trace (every
// position of every layer: docs/performance.md's reference pass), and the naive profile. The naive
// profile is n forward passes (days at n = 4096), so it is timed on a few changed inputs and
// extrapolated linearly to n passes (the base input and n - 1 changes); main.cpp prints it
// marked as extrapolated.
#include "bench_models.hpp"
#include "registry.hpp"

#include "soft_influence/influence.hpp"
#include "attention/soft.hpp"
#include "model/model_file.hpp"

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

namespace attnprop::bench {

namespace {

using numeric::mpfr_real;

constexpr std::uint64_t influence_model_seed = 3;
constexpr std::uint64_t influence_input_seed = 17;
/// Changed inputs the naive profile is timed on: 4, and 1 at n = 4096 (a pass takes minutes).
std::size_t naive_samples(std::size_t n) { return n >= 4096 ? 1 : 4; }

const random_case& case_for(std::size_t n) {
    model_shape shape;
    shape.layers = 2;
    shape.positions = n;
    return cached_case(bench_kind::soft, shape, influence_model_seed, influence_input_seed);
}

void run_forward(benchmark::State& state, std::size_t n, long prec) {
    const auto& c = case_for(n);
    const numeric::context ctx{prec};
    const auto m = model::to_scalar<mpfr_real>(c.exact, ctx);
    for (auto _ : state) {
        auto out = attention::soft_forward(m, c.x, ctx, attention::soft_options{.trace = true});
        benchmark::DoNotOptimize(out.y.data());
    }
}

void run_incremental(benchmark::State& state, std::size_t n, long prec) {
    const auto& c = case_for(n);
    const numeric::context ctx{prec};
    const auto m = model::to_scalar<mpfr_real>(c.exact, ctx);
    analysis::influence_options opt;
    opt.method = analysis::influence_method::incremental;
    std::size_t pairs = 0;
    for (auto _ : state) {
        auto prof = analysis::influence_profile_of(m, c.exact, c.x, ctx, opt);
        pairs = prof.pairs.size();
        benchmark::DoNotOptimize(prof.pairs.data());
    }
    state.counters["pairs"] = static_cast<double>(pairs);
}

/// The certified profile: certified double intervals, every position, one replacement each,
/// with the a-posteriori pair bound (posterior_cache; the a-priori bound is one per n), against
/// one certified forward pass with trace.
void run_forward_interval(benchmark::State& state, std::size_t n, long) {
    const auto& c = case_for(n);
    const numeric::context ctx{53};
    const auto m = model::to_scalar<numeric::dinterval>(c.exact, ctx);
    for (auto _ : state) {
        auto out = attention::soft_forward(m, c.x, ctx, attention::soft_options{.trace = true});
        benchmark::DoNotOptimize(out.y.data());
    }
}

void run_incremental_interval(benchmark::State& state, std::size_t n, long) {
    const auto& c = case_for(n);
    const numeric::context ctx{53};
    const auto m = model::to_scalar<numeric::dinterval>(c.exact, ctx);
    analysis::influence_options opt;
    opt.posterior = true;
    std::size_t pairs = 0, bounded = 0;
    for (auto _ : state) {
        auto prof = analysis::influence_profile_of(m, c.exact, c.x, ctx, opt);
        pairs = prof.pairs.size();
        bounded = 0;
        for (const auto& pr : prof.pairs) bounded += pr.posterior ? 1 : 0;
        benchmark::DoNotOptimize(prof.pairs.data());
    }
    state.counters["pairs"] = static_cast<double>(pairs);
    state.counters["posterior"] = static_cast<double>(bounded);
}

/// naive_samples(n) changed inputs (positions spread over the input), one forward pass each as
/// the naive profile does; counters hold the linear extrapolation to n passes.
void run_naive(benchmark::State& state, std::size_t n, long prec) {
    const auto& c = case_for(n);
    const numeric::context ctx{prec};
    const auto m = model::to_scalar<mpfr_real>(c.exact, ctx);
    const std::size_t samples = naive_samples(n);
    for (auto _ : state) {
        for (std::size_t k = 0; k < samples; ++k) {
            model::input_sequence x2 = c.x;
            const std::size_t p = (k * (n - 1)) / samples;
            x2[p] = 1 - x2[p];
            auto out = attention::soft_forward(m, x2, ctx);
            benchmark::DoNotOptimize(out.y.data());
        }
    }
    state.counters["samples"] = static_cast<double>(samples);
    state.counters["scale"] = static_cast<double>(n) / static_cast<double>(samples);
}

void add(const std::string& impl, std::size_t n, long prec,
         void (*fn)(benchmark::State&, std::size_t, long), const std::string& kind = "") {
    std::string name = "influence/" + impl + "/n:" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(), [fn, n, prec](benchmark::State& st) { fn(st, n, prec); })
        ->Unit(benchmark::kSecond)
        ->Iterations(1)
        ->Repetitions(1);
    registry().push_back({name, "influence", kind.empty() ? "mpfr-" + std::to_string(prec) : kind, impl, n});
}

} // namespace

void register_influence_benchmarks(const bench_config& cfg) {
    std::vector<std::size_t> sizes{256, 1024};
    if (cfg.full) sizes.push_back(4096);
    if (cfg.quick) sizes = {256};
    for (std::size_t n : sizes) {
        add("forward", n, cfg.precision, run_forward);
        add("incremental", n, cfg.precision, run_incremental);
        add("naive", n, cfg.precision, run_naive);
        add("forward-interval", n, cfg.precision, run_forward_interval, "interval");
        add("incremental-interval", n, cfg.precision, run_incremental_interval, "interval");
    }
    // The certified profile is cheap enough for n = 4096 in every run but --quick.
    if (!cfg.full && !cfg.quick) {
        add("forward-interval", 4096, cfg.precision, run_forward_interval, "interval");
        add("incremental-interval", 4096, cfg.precision, run_incremental_interval, "interval");
    }
}

} // namespace attnprop::bench
