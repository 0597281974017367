// Hard forward pass, L = 2, d = 16, H = 2: the exact filtered path vs hard_forward<double>.
#include "bench_models.hpp"
#include "paired.hpp"
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
    static std::map<std::size_t, std::unique_ptr<hard_case>> cache; // adds the double model
    auto& slot = cache[n];
    if (!slot) {
        model_shape shape;
        shape.positions = n;
        shape.layers = 2;
        const random_case& c = cached_case(bench_kind::hard, shape, model_seed, input_seed);
        slot = std::make_unique<hard_case>(
            hard_case{c.exact, model::to_scalar<double>(c.exact, numeric::context{}), c.x});
    }
    return *slot;
}

/// exact (attnprop::hard_forward_exact, from the exact model) against double
/// (hard_forward<double> on the model converted beforehand), paired.
void run_pair(benchmark::State& state, std::size_t n) {
    const hard_case& hc = hard_case_for(n);
    const numeric::context ctx{};
    attention::exact_hard_output ex;
    model::vec<double> y;
    auto exact_call = [&] {
        ex = attention::hard_forward_exact(hc.exact, hc.x, ctx);
        benchmark::DoNotOptimize(ex.y.data());
    };
    auto double_call = [&] {
        auto out = attention::hard_forward(hc.dbl, hc.x, ctx);
        benchmark::DoNotOptimize(out.y.data());
        y = std::move(out.y);
    };
    run_paired(state, exact_call, double_call);
    state.counters["rows_exact"] = static_cast<double>(ex.stats.rows_exact);
    // Without near-ties double and exact agree (up to rounding).
    for (std::size_t c = 0; c < y.size(); ++c) {
        double e = numeric::to_double_nearest(ex.y[c]);
        if (!(std::fabs(e - y[c]) <= 1e-9 * (1 + std::fabs(e)))) {
            state.SkipWithError("double and exact disagree: a near-tie in the benchmark model");
            return;
        }
    }
}

} // namespace

void register_hard_benchmarks(const bench_config& cfg) {
    std::vector<std::pair<std::size_t, int>> sizes{{256, 100}, {1024, 30}, {4096, 5}};
    if (cfg.quick) sizes = {{256, 10}};
    for (auto [n, pairs] : sizes) {
        std::string name = "hard/exact-vs-double/n:" + std::to_string(n);
        const std::size_t size = n;
        benchmark::RegisterBenchmark(name.c_str(),
                                     [size](benchmark::State& st) { run_pair(st, size); })
            ->Unit(benchmark::kMillisecond)
            ->Iterations(pairs);
        registry().push_back({name, "hard", "exact/dbl", "", n});
    }
}

} // namespace attnprop::bench
