// The Chiang & Cholak constructions at n = 10^5, one evaluation as `attnprop eval` does it; and
// eval's --scalar auto against one certified-interval pass at n = 4096.
#include "bench_models.hpp"
#include "registry.hpp"

#include "attention/soft.hpp"
#include "cli/evaluate.hpp"
#include "numeric/dinterval.hpp"
#include "paired.hpp"
#include "model/model_file.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace attnprop::bench {

namespace {

constexpr std::uint64_t input_seed = 99;

void run_cc(benchmark::State& state, const std::string& file, analysis::scalar_choice kind,
            long prec, std::size_t n) {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + file);
    const auto x = random_input(n, input_seed);
    analysis::eval_options opt;
    opt.scalar = kind;
    opt.precision = prec;
    for (auto _ : state) {
        auto ev = analysis::evaluate(m, x, opt);
        benchmark::DoNotOptimize(ev.y.data());
    }
}

// eval --scalar auto (12 certified digits: the cheapest kind that certifies them) against one
// certified-interval forward pass of the same model and input, paired (paired.hpp).
void run_auto_vs_interval(benchmark::State& state, const std::string& file, std::size_t n) {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + file);
    const auto x = random_input(n, input_seed);
    analysis::eval_options opt; // auto, --digits 12 by default
    const numeric::context ctx{53};
    std::string answered;
    run_paired(
        state,
        [&] {
            auto ev = analysis::evaluate(m, x, opt);
            benchmark::DoNotOptimize(ev.y.data());
            answered = ev.scalar;
        },
        [&] {
            const auto mi = model::to_scalar<numeric::dinterval>(m, ctx);
            auto out = attention::soft_forward(mi, x, ctx, attention::soft_options{});
            benchmark::DoNotOptimize(out.y.data());
        });
    state.SetLabel("auto answered in " + answered);
}

} // namespace

void register_cc_benchmarks(const bench_config& cfg) {
    {
        const std::size_t n = cfg.quick ? 1024 : 4096;
        const std::string name = "eval-auto/cc-parity/interval-pass/n:" + std::to_string(n);
        benchmark::RegisterBenchmark(name.c_str(), [n](benchmark::State& st) {
            run_auto_vs_interval(st, "cc-parity.json", n);
        })
            ->Unit(benchmark::kMillisecond)
            ->Iterations(cfg.quick ? 3 : 9);
        registry().push_back({name, "eval", "auto/intvl", "cc-parity", n});
    }
    const std::size_t n = cfg.quick ? 10000 : 100000;
    const long p = cfg.precision;
    for (std::string model_name : {"cc-parity", "cc-first"}) {
        using analysis::scalar_choice;
        for (auto kind :
             {scalar_choice::of<numeric::mpfr_real>(), scalar_choice::of<numeric::arb_ball>()}) {
            const std::string kname =
                std::string(kind == scalar_choice::of<numeric::mpfr_real>() ? "mpfr-" : "arb-") +
                std::to_string(p);
            const std::string name = "cc/" + model_name + "/" + kname + "/n:" + std::to_string(n);
            const std::string file = model_name + ".json";
            benchmark::RegisterBenchmark(name.c_str(),
                                         [file, kind, p, n](benchmark::State& st) {
                                             run_cc(st, file, kind, p, n);
                                         })
                ->Unit(benchmark::kMillisecond)
                
                ->Iterations(1)
                ->Repetitions(cfg.quick ? 1 : 3)
                ->ReportAggregatesOnly(true);
            registry().push_back({name, "cc", kname, model_name, n});
        }
    }
}

} // namespace attnprop::bench
