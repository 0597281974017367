// Soft forward pass, one layer, d = 16, H = 2, every row: attnprop vs the straightforward loops.
#include "baselines.hpp"
#include "bench_models.hpp"
#include "registry.hpp"

#include "attention/soft.hpp"
#include "model/model_file.hpp"

#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

namespace attnprop::bench {

namespace {

using numeric::arb_ball;
using numeric::mpfr_real;

constexpr std::uint64_t model_seed = 20240601;
constexpr std::uint64_t input_seed = 7;

/// The exact random model and input for one n (shared by every kind; built once).
struct soft_case {
    model::model<numeric::rational> exact;
    model::input_sequence x;
};

const soft_case& soft_case_for(std::size_t n) {
    static std::map<std::size_t, std::unique_ptr<soft_case>> cache;
    auto& slot = cache[n];
    if (!slot) {
        model_shape shape;
        shape.positions = n;
        slot = std::make_unique<soft_case>(soft_case{
            model::parse_model(random_soft_model_json(shape, model_seed), "bench-soft"),
            random_input(n, input_seed)});
    }
    return *slot;
}

double approx(double v) { return v; }
double approx(const mpfr_real& v) { return numeric::to_double(v); }
double approx(const arb_ball& v) { return numeric::to_double(v); }

/// Relative agreement of attnprop's y_n with a baseline's (both compute the same function).
bool agrees(const std::vector<double>& y, const double* ref, std::size_t d, double tol) {
    if (y.size() != d) return false;
    for (std::size_t c = 0; c < d; ++c) {
        double a = y[c];
        if (!(std::fabs(a - ref[c]) <= tol * (1 + std::fabs(ref[c])))) return false;
    }
    return true;
}

/// y_n of attnprop's last timed run per (kind, n), as doubles, for the baselines' check.
std::map<std::pair<std::string, std::size_t>, std::vector<double>>& attnprop_results() {
    static std::map<std::pair<std::string, std::size_t>, std::vector<double>> results;
    return results;
}

template <class S> void run_attnprop(benchmark::State& state, std::size_t n, long prec) {
    const soft_case& sc = soft_case_for(n);
    const numeric::context ctx{prec};
    const model::model<S> m = model::to_scalar<S>(sc.exact, ctx);
    model::vec<S> y;
    for (auto _ : state) {
        auto out = attention::soft_forward(m, sc.x, ctx, attention::soft_options{.trace = true});
        benchmark::DoNotOptimize(out.y.data());
        y = std::move(out.y);
    }
    std::vector<double> yd;
    for (const auto& v : y) yd.push_back(approx(v));
    attnprop_results()[{std::string(numeric::scalar_traits<S>::name), n}] = yd;
}

template <class S, class Baseline>
void run_baseline(benchmark::State& state, std::size_t n, long prec) {
    const soft_case& sc = soft_case_for(n);
    const numeric::context ctx{prec};
    const model::model<S> m = model::to_scalar<S>(sc.exact, ctx);
    const std::vector<model::vec<S>> y0 = attention::initial_states(m, sc.x, ctx);
    std::unique_ptr<Baseline> b;
    if constexpr (std::is_same_v<S, double>) b = std::make_unique<Baseline>(m, y0);
    else b = std::make_unique<Baseline>(m, y0, prec);
    std::vector<double> result;
    for (auto _ : state) {
        if constexpr (std::is_same_v<S, double>) {
            const double* r = b->run();
            result.assign(r, r + m.d);
        } else {
            result = b->run();
        }
        benchmark::DoNotOptimize(result.data());
    }
    // Not timed: the baseline must compute what attnprop computes (rounding aside). attnprop's
    // result of the case run just before is reused when there is one.
    const std::pair<std::string, std::size_t> key{std::string(numeric::scalar_traits<S>::name), n};
    if (!attnprop_results().count(key)) {
        auto out = attention::soft_forward(m, sc.x, ctx, attention::soft_options{.trace = true});
        std::vector<double> yd;
        for (const auto& v : out.y) yd.push_back(approx(v));
        attnprop_results()[key] = yd;
    }
    if (!agrees(attnprop_results()[key], result.data(), m.d, 1e-9))
        state.SkipWithError("baseline and attnprop disagree on y_n");
}

void add(const std::string& kind, const std::string& impl, std::size_t n, int reps,
         void (*fn)(benchmark::State&, std::size_t, long), long prec, bool timed_by_count) {
    std::string name = "soft/" + kind + "/" + impl + "/n:" + std::to_string(n);
    auto* b = benchmark::RegisterBenchmark(
        name.c_str(), [fn, n, prec](benchmark::State& st) { fn(st, n, prec); });
    b->Unit(benchmark::kMillisecond)->Repetitions(reps)->ReportAggregatesOnly(true);
    if (timed_by_count) b->Iterations(1);
    else b->MinTime(0.5);
    registry().push_back({name, "soft", kind, impl, n});
}

} // namespace

void register_soft_benchmarks(const bench_config& cfg) {
    const long p = cfg.precision;
    const std::string mp = "mpfr-" + std::to_string(p), ab = "arb-" + std::to_string(p);
    std::vector<std::size_t> sizes_fast{256, 1024, 4096};
    std::vector<std::size_t> sizes_slow{256, 1024};
    if (cfg.full) sizes_slow.push_back(4096);
    if (cfg.quick) sizes_fast = sizes_slow = {256};
    for (std::size_t n : sizes_fast) {
        const int reps = cfg.quick ? 1 : 5;
        add("double", "attnprop", n, reps, run_attnprop<double>, p, false);
        add("double", "baseline", n, reps, run_baseline<double, double_soft_baseline>, p, false);
    }
    for (std::size_t n : sizes_slow) {
        const int reps = cfg.quick ? 1 : (n <= 256 ? 5 : (n <= 1024 ? 3 : 1));
        add(mp, "attnprop", n, reps, run_attnprop<mpfr_real>, p, true);
        add(mp, "baseline", n, reps, run_baseline<mpfr_real, mpfr_soft_baseline>, p, true);
        add(ab, "attnprop", n, reps, run_attnprop<arb_ball>, p, true);
        add(ab, "baseline", n, reps, run_baseline<arb_ball, arb_soft_baseline>, p, true);
    }
}

} // namespace attnprop::bench
