// The bounds over every input (soft_influence/all_inputs.hpp) on cc-parity: the bound at one n
// (the whole propagation over classes of positions, certified double intervals) beside one
// certified forward pass of one input at the same n, and the constant K* for every n. Absolute
// times; docs/performance.md gives their ratio.
#include "bench_models.hpp"
#include "registry.hpp"

#include "cli/evaluate.hpp"
#include "soft_influence/all_inputs.hpp"
#include "model/model_file.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace attnprop::bench {

namespace {

constexpr std::uint64_t input_seed = 99;

model::model<numeric::rational> cc_parity() {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/cc-parity.json");
}

} // namespace

void register_every_input_benchmarks(const bench_config& cfg) {
    const std::size_t n = cfg.quick ? 10000 : 100000;
    const std::string suffix = "/n:" + std::to_string(n);
    const std::string bound = "every-input/cc-parity/bound" + suffix;
    benchmark::RegisterBenchmark(bound.c_str(),
                                 [n](benchmark::State& st) {
                                     const auto m = cc_parity();
                                     for (auto _ : st) {
                                         auto r = analysis::all_inputs_at(m, static_cast<long>(n));
                                         benchmark::DoNotOptimize(r.n_influence);
                                     }
                                 })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1)
        ->Repetitions(cfg.quick ? 1 : 3)
        ->ReportAggregatesOnly(true);
    registry().push_back({bound, "every-input", "interval", "cc-parity", n});
    const std::string forward = "every-input/cc-parity/forward" + suffix;
    benchmark::RegisterBenchmark(forward.c_str(),
                                 [n](benchmark::State& st) {
                                     const auto m = cc_parity();
                                     const auto x = random_input(n, input_seed);
                                     analysis::eval_options opt;
                                     opt.scalar = analysis::scalar_choice::of<numeric::dinterval>();
                                     for (auto _ : st) {
                                         auto ev = analysis::evaluate(m, x, opt);
                                         benchmark::DoNotOptimize(ev.y.data());
                                     }
                                 })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1)
        ->Repetitions(cfg.quick ? 1 : 3)
        ->ReportAggregatesOnly(true);
    registry().push_back({forward, "every-input", "interval", "cc-parity forward", n});
    if (cfg.quick) return;
    const std::string every = "every-input/cc-parity/every-n";
    benchmark::RegisterBenchmark(every.c_str(),
                                 [](benchmark::State& st) {
                                     const auto m = cc_parity();
                                     for (auto _ : st) {
                                         auto r = analysis::every_n_bound(m);
                                         benchmark::DoNotOptimize(r.K_star);
                                     }
                                 })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1)
        ->Repetitions(1);
    registry().push_back({every, "every-input", "interval", "cc-parity K*", 0});
}

} // namespace attnprop::bench
