// Causal masks against no mask, in the same process on the same random model (L = 2, d = 16,
// H = 2 heads of 8, affine updates, binary alphabet) and input: the forward pass with trace
// (every row of every layer) and the incremental influence profile (64 positions spread over
// the input, one replacement each, no a-posteriori bound), in double and in certified double
// intervals. The masked model is the unmasked one with every layer causally masked; the two
// run alternately (paired.hpp), and the ratio is masked / unmasked (a mask halves the scores a
// pass computes and the rows a change corrects).
#include "bench_models.hpp"
#include "paired.hpp"
#include "registry.hpp"

#include "attention/soft.hpp"
#include "model/model_file.hpp"
#include "soft_influence/influence.hpp"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace attnprop::bench {

namespace {

constexpr std::uint64_t masked_model_seed = 3;
constexpr std::uint64_t masked_input_seed = 17;
constexpr std::size_t profile_positions = 64;

const random_case& unmasked_case(std::size_t n) {
    model_shape shape;
    shape.layers = 2;
    shape.positions = n;
    return cached_case(bench_kind::soft, shape, masked_model_seed, masked_input_seed);
}

model::model<numeric::rational> causal(model::model<numeric::rational> m) {
    for (auto& l : m.layers) l.mask = model::mask_kind::causal;
    return m;
}

template <class S> void run_forward(benchmark::State& state, std::size_t n) {
    const random_case& c = unmasked_case(n);
    const numeric::context ctx{53};
    const auto plain = model::to_scalar<S>(c.exact, ctx);
    const auto masked = model::to_scalar<S>(causal(c.exact), ctx);
    auto pass = [&](const model::model<S>& m) {
        return [&] {
            auto out = attention::soft_forward(m, c.x, ctx, attention::soft_options{.trace = true});
            benchmark::DoNotOptimize(out.y.data());
        };
    };
    run_paired(state, pass(masked), pass(plain));
}

template <class S> void run_profile(benchmark::State& state, std::size_t n) {
    const random_case& c = unmasked_case(n);
    const numeric::context ctx{53};
    const auto exact_masked = causal(c.exact);
    const auto plain = model::to_scalar<S>(c.exact, ctx);
    const auto masked = model::to_scalar<S>(exact_masked, ctx);
    analysis::influence_options opt;
    opt.method = analysis::influence_method::incremental;
    opt.posterior = false;
    for (std::size_t k = 0; k < profile_positions; ++k)
        opt.positions.push_back(k * (n - 1) / profile_positions);
    auto profile = [&](const model::model<S>& m, const model::model<numeric::rational>& exact) {
        return [&] {
            auto prof = analysis::influence_profile_of(m, exact, c.x, ctx, opt);
            benchmark::DoNotOptimize(prof.pairs.data());
        };
    };
    run_paired(state, profile(masked, exact_masked), profile(plain, c.exact));
}

void add(const std::string& kind, std::size_t n, int pairs, void (*fn)(benchmark::State&, std::size_t)) {
    std::string name = "masked/" + kind + "/n:" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(), [fn, n](benchmark::State& st) { fn(st, n); })
        ->Unit(benchmark::kSecond)
        ->Iterations(pairs);
    registry().push_back({name, "masked", kind, "", n});
}

} // namespace

void register_masked_benchmarks(const bench_config& cfg) {
    const std::size_t n = cfg.quick ? 256 : 4096;
    const int pairs = cfg.quick ? 2 : 3;
    add("forward/double", n, pairs, run_forward<double>);
    add("forward/interval", n, pairs, run_forward<numeric::dinterval>);
    add("profile/double", n, pairs, run_profile<double>);
    add("profile/interval", n, pairs, run_profile<numeric::dinterval>);
}

} // namespace attnprop::bench
