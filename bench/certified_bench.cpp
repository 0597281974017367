// The certified double kind (`--scalar interval`) against its baselines, side by side in one
// run: attnprop's own double (the unverified answer of the same kernel structure), PyTorch
// float64 on one thread on the same model and input (bench/torch_baseline.py, driven through a
// pipe; "skipped" when python3-torch is missing), and Arb balls at 128 bits (the rigorous
// answer before this kind existed). Every soft forward pass computes every row (a trace), as
// PyTorch does. Shapes: L = 1, d = 16, H = 2 (affine update), and L = 2, d = 16, H = 2 with a
// ReLU feed-forward block. Each case also reports the largest relative radius of y_n.
#include "bench_models.hpp"
#include "paired.hpp"
#include "registry.hpp"

#include "attention/soft.hpp"
#include "model/model_file.hpp"

#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace attnprop::bench {

namespace {

using numeric::arb_ball;
using numeric::dinterval;

constexpr std::uint64_t model_seed = 20261204;
constexpr std::uint64_t input_seed = 11;

model_shape shape_of(std::size_t n, bool two_layers) {
    model_shape s;
    s.positions = n;
    if (two_layers) {
        s.layers = 2;
        s.ffn = true;
    }
    return s;
}

/// PyTorch float64 running bench/torch_baseline.py in a child process: one forward pass per
/// "run" line, its thread CPU time read back.
class torch_process {
public:
    torch_process(const std::string& model_json, const std::string& input) {
        dir_ = std::filesystem::temp_directory_path() /
               ("attnprop-torch-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
        std::filesystem::create_directories(dir_);
        const auto model_path = dir_ / "model.json";
        std::ofstream(model_path) << model_json;
        int to_child[2], from_child[2];
        if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) {
            status_ = "skipped: pipe failed";
            return;
        }
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(to_child[0], 0);
            ::dup2(from_child[1], 1);
            ::close(to_child[1]);
            ::close(from_child[0]);
            const std::string script = std::string(ATTNPROP_BENCH_DIR) + "/torch_baseline.py";
            ::execl("/usr/bin/python3", "python3", script.c_str(), model_path.c_str(),
                    input.c_str(), static_cast<char*>(nullptr));
            std::printf("skipped: /usr/bin/python3 not found\n");
            std::fflush(stdout);
            ::_exit(0);
        }
        ::close(to_child[0]);
        ::close(from_child[1]);
        in_ = ::fdopen(to_child[1], "w");
        out_ = ::fdopen(from_child[0], "r");
        status_ = read_line();
    }
    ~torch_process() {
        if (in_) {
            std::fputs("quit\n", in_);
            std::fclose(in_);
        }
        if (out_) std::fclose(out_);
        if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    bool ready() const { return status_ == "ready"; }
    const std::string& status() const { return status_; }
    /// One forward pass: its CPU seconds, and y_n into `y`.
    double run(std::vector<double>& y) {
        std::fputs("run\n", in_);
        std::fflush(in_);
        std::istringstream line(read_line());
        double seconds = 0;
        line >> seconds;
        y.clear();
        for (double v; line >> v;) y.push_back(v);
        return seconds;
    }

private:
    static int& counter() {
        static int c = 0;
        return c;
    }
    std::string read_line() {
        std::string s;
        if (!out_) return "skipped: no baseline process";
        for (int c; (c = std::fgetc(out_)) != EOF && c != '\n';) s.push_back(static_cast<char>(c));
        return s.empty() ? "skipped: the baseline process ended" : s;
    }
    std::filesystem::path dir_;
    pid_t pid_ = -1;
    std::FILE* in_ = nullptr;
    std::FILE* out_ = nullptr;
    std::string status_;
};

/// The largest radius of y relative to max(|y|, 1e-300).
double max_relative_radius(const model::vec<dinterval>& y) {
    double r = 0;
    for (const auto& v : y)
        r = std::max(r, numeric::radius_as_double(v) / std::max(std::fabs(numeric::to_double(v)), 1e-300));
    return r;
}

/// interval vs `Other` ("double", "torch", "arb") on the case of (n, two_layers).
void run_case(benchmark::State& state, std::size_t n, bool two_layers, const std::string& other) {
    const model_shape shape = shape_of(n, two_layers);
    const random_case& rc = cached_case(bench_kind::soft, shape, model_seed, input_seed);
    const numeric::context ctx{128};
    const auto mi = model::to_scalar<dinterval>(rc.exact, ctx);
    const attention::soft_options all_rows{.trace = true};
    model::vec<dinterval> yi;
    auto interval_call = [&] {
        auto out = attention::soft_forward(mi, rc.x, ctx, all_rows);
        benchmark::DoNotOptimize(out.y.data());
        yi = std::move(out.y);
    };
    std::vector<double> yo;
    if (other == "double") {
        const auto md = model::to_scalar<double>(rc.exact, ctx);
        run_paired(state, interval_call, [&] {
            auto out = attention::soft_forward(md, rc.x, ctx, all_rows);
            benchmark::DoNotOptimize(out.y.data());
            yo = out.y;
        });
    } else if (other == "arb") {
        const auto mb = model::to_scalar<arb_ball>(rc.exact, ctx);
        run_paired(state, interval_call, [&] {
            auto out = attention::soft_forward(mb, rc.x, ctx, all_rows);
            benchmark::DoNotOptimize(out.y.data());
            yo.clear();
            for (const auto& v : out.y) yo.push_back(numeric::to_double(v));
        });
    } else {
        std::string input;
        for (std::size_t i = 0; i + 1 < rc.x.size(); ++i) input += rc.exact.sigma.symbols[rc.x[i]];
        torch_process torch(random_soft_model_json(shape, model_seed), input);
        if (!torch.ready()) {
            state.SkipWithError(torch.status().c_str());
            for (auto _ : state) {}
            return;
        }
        // The paired loop times the torch call by its own thread CPU clock, read back.
        std::vector<double> ta, tb, ratio;
        bool a_first = true;
        for (auto _ : state) {
            double a = 0, b = 0;
            auto timed_a = [&] {
                const double t0 = thread_seconds();
                interval_call();
                a = thread_seconds() - t0;
            };
            if (a_first) {
                timed_a();
                b = torch.run(yo);
            } else {
                b = torch.run(yo);
                timed_a();
            }
            a_first = !a_first;
            ta.push_back(a);
            tb.push_back(b);
            ratio.push_back(b > 0 ? a / b : 0);
        }
        state.counters["attnprop_s"] = median(ta);
        state.counters["baseline_s"] = median(tb);
        state.counters["ratio"] = median(ratio);
        state.counters["pairs"] = static_cast<double>(ratio.size());
    }
    state.counters["rel_radius"] = max_relative_radius(yi);
    // Every baseline computes the same function: its y_n must lie in the interval, up to its
    // own rounding (1e-9 relative is far above double's error on these O(1) models).
    if (yo.size() != yi.size()) {
        state.SkipWithError("the baseline returned a different dimension");
        return;
    }
    for (std::size_t c = 0; c < yi.size(); ++c) {
        const double tol = 1e-9 * (1 + std::fabs(yo[c]));
        if (!(yo[c] >= yi[c].lo() - tol && yo[c] <= yi[c].hi() + tol)) {
            state.SkipWithError("the baseline's y_n lies outside the certified interval");
            return;
        }
    }
}

void add(const std::string& other, std::size_t n, bool two_layers, int pairs) {
    const std::string shape = two_layers ? "L2ffn" : "L1";
    const std::string name = "certified/" + shape + "/interval-vs-" + other + "/n:" + std::to_string(n);
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
        run_case(st, n, two_layers, other);
    })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(pairs);
    registry().push_back({name, "certified", "interval/" + other, shape, n});
}

} // namespace

void register_certified_benchmarks(const bench_config& cfg) {
    std::vector<std::pair<std::size_t, int>> sizes{{1024, 10}, {4096, 4}};
    if (cfg.quick) sizes = {{256, 5}};
    for (bool two : {false, true})
        for (auto [n, pairs] : sizes) {
            add("double", n, two, pairs);
            add("torch", n, two, pairs);
        }
    // Arb at 128 bits costs 20-60x more: one size, few pairs (both at --full).
    std::vector<std::pair<std::size_t, int>> arb{{1024, 2}};
    if (cfg.full) arb.push_back({4096, 1});
    if (cfg.quick) arb = {{256, 1}};
    for (bool two : {false, true})
        for (auto [n, pairs] : arb) add("arb", n, two, pairs);
}

} // namespace attnprop::bench
