// Hard forward pass, L = 2, d = 16, H = 2: the exact filtered path vs hard_forward<double>.
#include "bench_models.hpp"
#include "registry.hpp"

#include "attention/hard_exact.hpp"
#include "model/model_file.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

namespace attnprop::bench {

namespace {

constexpr std::uint64_t model_seed = 1234567;
constexpr std::uint64_t input_seed = 11;

struct hard_case {
    model::model<numeric::rational> exact;
    model::model<double> dbl;
    model::input_sequence x;
};

const hard_case& hard_case_for(std::size_t n) {
    static std::map<std::size_t, std::unique_ptr<hard_case>> cache;
    auto& slot = cache[n];
    if (!slot) {
        model_shape shape;
        shape.positions = n;
        shape.layers = 2;
        auto m = model::parse_model(random_hard_model_json(shape, model_seed), "bench-hard");
        auto md = model::to_scalar<double>(m, numeric::context{});
        slot = std::make_unique<hard_case>(
            hard_case{std::move(m), std::move(md), random_input(n, input_seed)});
    }
    return *slot;
}

void run_exact(benchmark::State& state, std::size_t n) {
    const hard_case& hc = hard_case_for(n);
    const numeric::context ctx{};
    attention::exact_path_stats stats;
    for (auto _ : state) {
        auto out = attention::hard_forward_exact(hc.exact, hc.x, ctx);
        benchmark::DoNotOptimize(out.y.data());
        stats = out.stats;
    }
    state.counters["rows_filtered"] = static_cast<double>(stats.rows_filtered);
    state.counters["rows_exact"] = static_cast<double>(stats.rows_exact);
}

void run_double(benchmark::State& state, std::size_t n) {
    const hard_case& hc = hard_case_for(n);
    const numeric::context ctx{};
    model::vec<double> y;
    for (auto _ : state) {
        auto out = attention::hard_forward(hc.dbl, hc.x, ctx);
        benchmark::DoNotOptimize(out.y.data());
        y = std::move(out.y);
    }
    // Not timed: without near-ties double and exact agree (up to rounding).
    auto ex = attention::hard_forward_exact(hc.exact, hc.x, ctx);
    for (std::size_t c = 0; c < y.size(); ++c) {
        double e = numeric::to_double_nearest(ex.y[c]);
        if (!(std::fabs(e - y[c]) <= 1e-9 * (1 + std::fabs(e)))) {
            state.SkipWithError("double and exact disagree: a near-tie in the benchmark model");
            return;
        }
    }
}

void add(const std::string& impl, std::size_t n, int reps,
         void (*fn)(benchmark::State&, std::size_t)) {
    std::string name = "hard/" + impl + "/n:" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(), [fn, n](benchmark::State& st) { fn(st, n); })
        ->Unit(benchmark::kMillisecond)
        
        ->MinTime(0.5)
        ->Repetitions(reps)
        ->ReportAggregatesOnly(true);
    registry().push_back({name, "hard", impl == "exact" ? "exact" : "double", impl, n});
}

} // namespace

void register_hard_benchmarks(const bench_config& cfg) {
    std::vector<std::size_t> sizes{256, 1024, 4096};
    if (cfg.quick) sizes = {256};
    const int reps = cfg.quick ? 1 : 5;
    for (std::size_t n : sizes) {
        add("exact", n, reps, run_exact);
        add("double", n, reps, run_double);
    }
}

} // namespace attnprop::bench
