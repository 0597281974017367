// Soft forward pass, one layer, d = 16, H = 2, every row: attnprop vs the straightforward loops.
#include "baselines.hpp"
#include "bench_models.hpp"
#include "paired.hpp"
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
const random_case& soft_case_for(std::size_t n) {
    model_shape shape;
    shape.positions = n;
    return cached_case(bench_kind::soft, shape, model_seed, input_seed);
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

template <class S, class Baseline>
void run_pair(benchmark::State& state, std::size_t n, long prec) {
    const random_case& sc = soft_case_for(n);
    const numeric::context ctx{prec};
    const model::model<S> m = model::to_scalar<S>(sc.exact, ctx);
    const std::vector<model::vec<S>> y0 = attention::initial_states(m, sc.x, ctx);
    std::unique_ptr<Baseline> base;
    if constexpr (std::is_same_v<S, double>) base = std::make_unique<Baseline>(m, y0);
    else base = std::make_unique<Baseline>(m, y0, prec);
    model::vec<S> y;
    std::vector<double> ya, yb;
    auto attnprop_call = [&] {
        auto out = attention::soft_forward(m, sc.x, ctx, attention::soft_options{.trace = true});
        benchmark::DoNotOptimize(out.y.data());
        y = std::move(out.y);
    };
    auto baseline_call = [&] {
        if constexpr (std::is_same_v<S, double>) {
            const double* r = base->run();
            yb.assign(r, r + m.d);
        } else {
            yb = base->run();
        }
        benchmark::DoNotOptimize(yb.data());
    };
    run_paired(state, attnprop_call, baseline_call);
    // The baseline must compute what attnprop computes (rounding aside).
    for (const auto& v : y) ya.push_back(approx(v));
    if (!agrees(ya, yb.data(), m.d, 1e-9)) state.SkipWithError("baseline and attnprop disagree");
}

void add(const std::string& kind, std::size_t n, int pairs,
         void (*fn)(benchmark::State&, std::size_t, long), long prec) {
    std::string name = "soft/" + kind + "/n:" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(),
                                 [fn, n, prec](benchmark::State& st) { fn(st, n, prec); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(pairs);
    registry().push_back({name, "soft", kind, "", n});
}

} // namespace

void register_soft_benchmarks(const bench_config& cfg) {
    const long p = cfg.precision;
    const std::string mp = "mpfr-" + std::to_string(p), ab = "arb-" + std::to_string(p);
    // (n, pairs) per kind: about 1-10 s per double case, 5-70 s per MPFR / Arb case.
    std::vector<std::pair<std::size_t, int>> fast{{256, 100}, {1024, 20}, {4096, 5}};
    std::vector<std::pair<std::size_t, int>> slow{{256, 5}, {1024, 3}};
    if (cfg.full) slow.push_back({4096, 1});
    if (cfg.quick) {
        fast = {{256, 10}};
        slow = {{256, 1}};
    }
    for (auto [n, pairs] : fast) add("double", n, pairs, run_pair<double, double_soft_baseline>, p);
    for (auto [n, pairs] : slow) {
        add(mp, n, pairs, run_pair<mpfr_real, mpfr_soft_baseline>, p);
        add(ab, n, pairs, run_pair<arb_ball, arb_soft_baseline>, p);
    }
}

} // namespace attnprop::bench
