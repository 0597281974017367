// Hahn's restriction (analysis::build_restriction + analysis::certify) on a random
// arbitrary-map hard model, L = 2, H = 2, binary alphabet, against one exact forward pass.
// main.cpp prints the ratio restrict / forward and checks the 60 s budget of a whole run.
#include "registry.hpp"

#include "hard_limit/restriction.hpp"
#include "attention/hard_exact.hpp"
#include "model/model_file.hpp"

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <random>
#include <string>

namespace attnprop::bench {

/// The restriction benchmark model: d = 3 (token bit, i/n, 1/i), two layers of two dot-product
/// heads with integer Q, K, V in [-2, 2] (and integer query biases), each layer's update an
/// arbitrary map (a seeded hash to {-3/2, ..., 3/2}^3), a threshold readout.
static std::string restrict_bench_model_json(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> small(-2, 2);
    auto row = [&]() {
        return "[[" + std::to_string(small(rng)) + ", " + std::to_string(small(rng)) + ", " +
               std::to_string(small(rng)) + "]]";
    };
    auto head = [&]() {
        std::string q = row(), b = std::to_string(small(rng)), k = row(), v = row();
        return R"({"score": {"kind": "dot", "Q": )" + q + R"(, "q_bias": [)" + b +
               R"(], "K": )" + k + R"(}, "value": {"kind": "linear", "V": )" + v + "}}";
    };
    std::string layers;
    for (int l = 0; l < 2; ++l) {
        std::string h1 = head(), h2 = head();
        layers += std::string(l ? ", " : "") + R"({"heads": [)" + h1 + ", " + h2 +
                  R"(], "update": {"kind": "hash", "seed": )" + std::to_string(seed * 10 + l) +
                  R"(, "out_dim": 3, "range": 3, "denominator": 2}})";
    }
    return R"({"format": "attnprop-model", "version": 1, "name": "bench-restrict",
      "attention": "hard", "alphabet": ["0", "1"], "eos": "$", "d": 3,
      "token_embedding": {"0": [0, 0, 0], "1": [1, 0, 0], "$": [0, 0, 1]},
      "positional": {"kind": "formula", "dim": 3, "coordinates": [0, "i/n", "1/i"]},
      "input": "add", "layers": [)" +
           layers + R"(], "readout": {"kind": "threshold", "w": [1, 0, 0], "t": 0}})";
}

namespace {

constexpr std::uint64_t restrict_model_seed = 1;

const model::model<numeric::rational>& restrict_model() {
    static const auto m = model::parse_model(restrict_bench_model_json(restrict_model_seed),
                                             "bench-restrict");
    return m;
}

void run_restrict(benchmark::State& state, std::size_t n) {
    const auto& m = restrict_model();
    analysis::restriction r;
    analysis::certificate c;
    for (auto _ : state) {
        r = analysis::build_restriction(m, static_cast<long>(n));
        c = analysis::certify(m, r);
        benchmark::DoNotOptimize(r.table.data());
    }
    if (!c.valid) state.SkipWithError("invalid restriction certificate");
    state.counters["c_obs"] = static_cast<double>(r.c_obs());
    state.counters["free"] = static_cast<double>(r.free_count);
    state.counters["assignments"] = static_cast<double>(c.assignments);
}

void run_forward(benchmark::State& state, std::size_t n) {
    const auto& m = restrict_model();
    model::input_sequence x(n, 0);
    std::mt19937_64 rng(11);
    for (std::size_t t = 0; t + 1 < n; ++t) x[t] = static_cast<int>(rng() & 1);
    x[n - 1] = m.sigma.eos_index();
    for (auto _ : state) {
        auto out = attention::hard_forward_exact(m, x, numeric::context{53});
        benchmark::DoNotOptimize(out.y.data());
    }
}

void add(const std::string& impl, std::size_t n, void (*fn)(benchmark::State&, std::size_t)) {
    std::string name = "restrict/" + impl + "/n:" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(), [fn, n](benchmark::State& st) { fn(st, n); })
        ->Unit(benchmark::kSecond)
        ->Iterations(1)
        ->Repetitions(impl == "forward" ? 3 : 1)
        ->UseRealTime()
        ->ReportAggregatesOnly(true);
    registry().push_back({name, "restrict", "exact", impl, n});
}

} // namespace

void register_restrict_benchmarks(const bench_config& cfg) {
    std::vector<std::size_t> sizes{1024, 4096};
    if (cfg.quick) sizes = {256};
    for (std::size_t n : sizes) {
        add("forward", n, run_forward);
        add("restrict", n, run_restrict);
    }
}

} // namespace attnprop::bench
