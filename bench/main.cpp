// attnprop_bench: Google Benchmark cases plus a compact table of ratios against the baselines.
//
//   attnprop_bench [--full] [--quick] [--quiet] [--precision=BITS] [--csv=FILE]
//                  [--benchmark_... flags]
//
// --full adds n = 4096 for the MPFR and Arb soft cases (several minutes each) and the influence
// profile (about 30 minutes); --quick runs the
// smallest sizes with few pairs (a smoke test); --quiet prints one line per case instead of
// Google Benchmark's table. Soft and hard cases time attnprop and the baseline alternately
// (paired.hpp); the table shows the medians of their CPU times and of the per-pair ratios.
#include "registry.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace attnprop::bench {

std::vector<bench_case>& registry() {
    static std::vector<bench_case> cases;
    return cases;
}

namespace {

struct measurement {
    double seconds = 0;      ///< CPU seconds (median or single run)
    double real_seconds = 0; ///< wall-clock seconds (median or single run)
    std::map<std::string, double> counters;
    std::string error;
};

/// The console reporter, also keeping the median (or the single run) of every case. With
/// `quiet`, prints one progress line per case to stderr instead of Google Benchmark's table.
class collecting_reporter : public benchmark::ConsoleReporter {
public:
    explicit collecting_reporter(bool quiet) : quiet_(quiet) {}

    bool ReportContext(const Context& context) override {
        return quiet_ || ConsoleReporter::ReportContext(context);
    }

    void ReportRuns(const std::vector<Run>& runs) override {
        for (const auto& r : runs) {
            const std::string& name = r.run_name.function_name;
            if (r.error_occurred) {
                results[name].error = r.error_message;
                continue;
            }
            const bool single = r.run_type == Run::RT_Iteration && r.repetitions <= 1;
            const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
            if (!single && !median) continue;
            measurement& m = results[name];
            m.seconds = r.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
            m.real_seconds = r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
            for (const auto& [k, c] : r.counters) m.counters[k] = c.value;
            if (quiet_ && m.counters.count("ratio"))
                std::fprintf(stderr, "  %-30s attnprop %10.4f s  baseline %10.4f s  ratio %6.3f\n",
                             name.c_str(), m.counters["attnprop_s"], m.counters["baseline_s"],
                             m.counters["ratio"]);
            else if (quiet_)
                std::fprintf(stderr, "  %-30s %10.4f s\n", name.c_str(), m.seconds);
        }
        if (!quiet_) ConsoleReporter::ReportRuns(runs);
    }
    std::map<std::string, measurement> results;

private:
    bool quiet_;
};

double budget_of(const bench_case& c) {
    if (c.group == "hard") return 3.0;
    if (c.group == "certified") {
        // The certified kind: within 3x attnprop's own double and 2x PyTorch float64; against
        // Arb the ratio is a speed-up, not a budget.
        if (c.kind == "interval/double") return 3.0;
        if (c.kind == "interval/torch") return 2.0;
        return 0;
    }
    if (c.group == "soft") return c.kind == "double" ? 1.5 : 1.2;
    // A causal mask against none (masked_bench.cpp): at most 1.1x the unmasked work.
    if (c.group == "masked") return 1.1;
    // eval --scalar auto (12 certified digits) against one certified-interval pass.
    if (c.group == "eval") return 1.5;
    return 0;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// Prints the ratio table and the Chiang & Cholak times; writes the CSV when asked.
void print_tables(const std::map<std::string, measurement>& res, std::ofstream* csv) {
    if (csv) *csv << "group,kind,n,attnprop_s,baseline_s,ratio,budget,holds,pairs\n";
    std::printf("\n== attnprop / baseline: median CPU s per call, median of paired ratios ==\n");
    std::printf("%-5s %-9s %6s %12s %12s %7s %7s %6s %6s\n", "group", "kind", "n", "attnprop s",
                "baseline s", "ratio", "budget", "holds", "pairs");
    for (const auto& c : registry()) {
        if (c.group != "soft" && c.group != "hard" && c.group != "certified" && c.group != "eval" &&
            c.group != "masked")
            continue;
        auto it = res.find(c.name);
        if (it == res.end() || !it->second.error.empty()) continue;
        const auto& k = it->second.counters;
        auto get = [&](const char* key) {
            auto f = k.find(key);
            return f == k.end() ? 0.0 : f->second;
        };
        const double a = get("attnprop_s"), b = get("baseline_s"), ratio = get("ratio");
        const double budget = budget_of(c), pairs = get("pairs");
        const char* holds = budget <= 0 ? "-" : ratio <= budget ? "yes" : "NO";
        const std::string kind = c.group == "certified" ? c.model + " " + c.kind : c.kind;
        std::printf("%-5s %-9s %6zu %12.4g %12.4g %7.3f %7.1f %6s %6.0f\n",
                    c.group == "certified" ? "cert" : c.group == "masked" ? "mask" : c.group.c_str(),
                    kind.c_str(), c.n, a, b,
                    ratio, budget, holds, pairs);
        if (csv)
            *csv << c.group << "," << kind << "," << c.n << "," << fmt("%.6g", a) << ","
                 << fmt("%.6g", b) << "," << fmt("%.4f", ratio) << "," << budget << "," << holds
                 << "," << pairs << "\n";
    }
    // The restriction run against one exact forward pass at the same n (wall clock: the
    // restriction and its certificate use both cores), with the 60 s budget of a whole run.
    bool restrict_header = false;
    for (const auto& c : registry()) {
        if (c.group != "restrict" || c.model != "restrict") continue;
        auto it = res.find(c.name);
        auto fw = res.find("restrict/forward/n:" + std::to_string(c.n));
        if (it == res.end() || !it->second.error.empty() || fw == res.end()) continue;
        if (!restrict_header) {
            std::printf("\n== restrict (restriction + certificate) / one exact forward pass, "
                        "wall-clock s ==\n");
            std::printf("%6s %12s %12s %10s %8s %6s\n", "n", "restrict s", "forward s", "ratio",
                        "budget", "holds");
            restrict_header = true;
        }
        const double a = it->second.real_seconds, b = fw->second.real_seconds;
        const double ratio = b > 0 ? a / b : 0;
        const char* holds = a <= 60.0 ? "yes" : "NO";
        std::printf("%6zu %12.4g %12.4g %10.1f %7.0fs %6s\n", c.n, a, b, ratio, 60.0, holds);
        if (csv)
            *csv << "restrict,restrict/forward," << c.n << "," << fmt("%.6g", a) << ","
                 << fmt("%.6g", b) << "," << fmt("%.4f", ratio) << ",60s," << holds << ",\n";
    }
    // The influence profile (L = 2, every position, one replacement each) against one forward
    // pass with trace, with the 3x budget; the naive profile extrapolated from a few passes.
    std::string influence_header;
    for (const auto& c : registry()) {
        if (c.group != "influence" || (c.model != "incremental" && c.model != "incremental-interval"))
            continue;
        const bool certified = c.model == "incremental-interval";
        const std::string suffix = "/n:" + std::to_string(c.n);
        auto it = res.find(c.name);
        auto fw = res.find(std::string("influence/forward") + (certified ? "-interval" : "") + suffix);
        auto nv = certified ? res.end() : res.find("influence/naive" + suffix);
        if (it == res.end() || !it->second.error.empty() || fw == res.end()) continue;
        if (influence_header != c.kind) {
            std::printf("\n== influence profile (L = 2, %s%s, CPU s): %s / one forward pass "
                        "with trace; naive extrapolated ==\n",
                        c.kind.c_str(), certified ? ", a-posteriori bound per pair" : "",
                        c.model.c_str());
            std::printf("%6s %11s %13s %7s %7s %6s %14s %11s\n", "n", "forward s",
                        "incremental s", "ratio", "budget", "holds", "naive s (extr)",
                        "naive/incr");
            influence_header = c.kind;
        }
        const double a = it->second.seconds, b = fw->second.seconds;
        const double ratio = b > 0 ? a / b : 0;
        double naive = 0;
        if (nv != res.end() && nv->second.error.empty()) {
            auto sc = nv->second.counters.find("scale");
            if (sc != nv->second.counters.end()) naive = nv->second.seconds * sc->second;
        }
        // The certified profile's budget is stated at n = 4096 (smaller n: measured, no budget).
        const bool budgeted = !certified || c.n >= 4096;
        const char* holds = !budgeted ? "-" : ratio <= 3.0 ? "yes" : "NO";
        std::printf("%6zu %11.4g %13.4g %7.2f %7s %6s %14.4g %11.1f\n", c.n, b, a, ratio,
                    budgeted ? "3.0" : "-", holds, naive, a > 0 ? naive / a : 0);
        if (csv)
            *csv << "influence," << c.model << "/forward," << c.n << "," << fmt("%.6g", a) << ","
                 << fmt("%.6g", b) << "," << fmt("%.4f", ratio) << "," << (budgeted ? "3" : "")
                 << "," << holds << ",\n";
        if (csv && !certified)
            *csv << "influence,naive-extrapolated/incremental," << c.n << "," << fmt("%.6g", naive)
                 << "," << fmt("%.6g", a) << "," << fmt("%.4f", a > 0 ? naive / a : 0) << ",,,\n";
    }
    // Every other group (the Chiang & Cholak evaluations, ...): absolute times.
    bool header = false;
    for (const auto& c : registry()) {
        if (c.group == "soft" || c.group == "hard" || c.group == "restrict" ||
            c.group == "influence" || c.group == "certified" || c.group == "eval" ||
            c.group == "masked")
            continue;
        auto it = res.find(c.name);
        if (it == res.end() || !it->second.error.empty()) continue;
        if (!header) {
            std::printf("\n== absolute times (median CPU s per call) ==\n");
            std::printf("%-8s %-12s %-9s %7s %10s\n", "group", "model", "kind", "n", "seconds");
            header = true;
        }
        std::printf("%-8s %-12s %-9s %7zu %10.3f\n", c.group.c_str(), c.model.c_str(),
                    c.kind.c_str(), c.n, it->second.seconds);
        if (csv)
            *csv << c.group << "," << c.model << "/" << c.kind << "," << c.n << ","
                 << fmt("%.6g", it->second.seconds) << ",,,,,\n";
    }
    for (const auto& [name, m] : res)
        if (!m.error.empty()) std::printf("ERROR %s: %s\n", name.c_str(), m.error.c_str());
}

} // namespace

} // namespace attnprop::bench

int main(int argc, char** argv) {
    using namespace attnprop::bench;
    bench_config cfg;
    std::string csv_path;
    bool quiet = false;
    std::vector<char*> rest{argv[0]};
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg == "--full") cfg.full = true;
        else if (arg == "--quick") cfg.quick = true;
        else if (arg.rfind("--precision=", 0) == 0) cfg.precision = std::stol(arg.substr(12));
        else if (arg.rfind("--csv=", 0) == 0) csv_path = arg.substr(6);
        else if (arg == "--quiet") quiet = true;
        else rest.push_back(argv[a]);
    }
    int rargc = static_cast<int>(rest.size());
    rest.push_back(nullptr);
    benchmark::Initialize(&rargc, rest.data());
    if (benchmark::ReportUnrecognizedArguments(rargc, rest.data())) return 2;
    register_soft_benchmarks(cfg);
    register_hard_benchmarks(cfg);
    register_cc_benchmarks(cfg);
    register_restrict_benchmarks(cfg);
    register_influence_benchmarks(cfg);
    register_certified_benchmarks(cfg);
    register_every_input_benchmarks(cfg);
    register_masked_benchmarks(cfg);
    collecting_reporter rep(quiet);
    benchmark::RunSpecifiedBenchmarks(&rep);
    std::ofstream csv;
    if (!csv_path.empty()) {
        csv.open(csv_path);
        if (!csv) {
            std::fprintf(stderr, "attnprop_bench: cannot write %s\n", csv_path.c_str());
            return 2;
        }
    }
    print_tables(rep.results, csv_path.empty() ? nullptr : &csv);
    benchmark::Shutdown();
    return 0;
}
