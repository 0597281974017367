// attnprop_bench: Google Benchmark cases plus a compact table of ratios against the baselines.
//
//   attnprop_bench [--full] [--quick] [--quiet] [--precision=BITS] [--csv=FILE]
//                  [--benchmark_... flags]
//
// --full adds n = 4096 for the MPFR and Arb soft cases (several minutes each); --quick runs the
// smallest sizes once (a smoke test); --quiet prints one line per case instead of Google
// Benchmark's table. The ratio table uses the median CPU time of the repetitions.
#include "registry.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::bench {

std::vector<bench_case>& registry() {
    static std::vector<bench_case> cases;
    return cases;
}

namespace {

struct measurement {
    double seconds = 0;
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
            for (const auto& [k, c] : r.counters) m.counters[k] = c.value;
            if (quiet_)
                std::fprintf(stderr, "  %-40s %12.4f s\n", name.c_str(), m.seconds);
        }
        if (!quiet_) ConsoleReporter::ReportRuns(runs);
    }
    std::map<std::string, measurement> results;

private:
    bool quiet_;
};

double budget_of(const bench_case& c) {
    if (c.group == "hard") return 3.0;
    if (c.group == "soft") return c.kind == "double" ? 1.5 : 1.2;
    return 0;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// Prints the ratio tables; appends CSV rows to `csv` when given.
void print_tables(const std::map<std::string, measurement>& res, std::ofstream* csv) {
    auto find = [&](const std::string& group, const std::string& kind, const std::string& impl,
                    std::size_t n) -> std::optional<measurement> {
        for (const auto& c : registry())
            if (c.group == group && c.kind == kind && c.impl == impl && c.n == n) {
                auto it = res.find(c.name);
                if (it != res.end() && it->second.error.empty()) return it->second;
            }
        return std::nullopt;
    };
    if (csv) *csv << "group,kind,n,attnprop_s,baseline_s,ratio,budget,holds\n";
    std::printf("\n== ratios (median CPU time) ==\n");
    std::printf("%-5s %-9s %7s %12s %12s %8s %7s %6s\n", "group", "kind", "n", "attnprop s",
                "baseline s", "ratio", "budget", "holds");
    for (const auto& c : registry()) {
        if ((c.group == "soft" && c.impl != "attnprop") || (c.group == "hard" && c.impl != "exact"))
            continue;
        if (c.group == "cc") continue;
        auto a = find(c.group, c.kind, c.impl, c.n);
        auto b = c.group == "soft" ? find("soft", c.kind, "baseline", c.n)
                                   : find("hard", "double", "double", c.n);
        if (!a || !b) continue;
        const double ratio = a->seconds / b->seconds, budget = budget_of(c);
        const char* holds = ratio <= budget ? "yes" : "NO";
        std::string label = c.group == "hard" ? "exact/dbl" : c.kind;
        std::printf("%-5s %-9s %7zu %12.4g %12.4g %8.3f %7.1f %6s\n", c.group.c_str(),
                    label.c_str(), c.n, a->seconds, b->seconds, ratio, budget, holds);
        if (csv)
            *csv << c.group << "," << label << "," << c.n << "," << fmt("%.6g", a->seconds) << ","
                 << fmt("%.6g", b->seconds) << "," << fmt("%.4f", ratio) << "," << budget << ","
                 << holds << "\n";
    }
    bool header = false;
    for (const auto& c : registry()) {
        if (c.group != "cc") continue;
        auto a = find(c.group, c.kind, c.impl, c.n);
        if (!a) continue;
        if (!header) {
            std::printf("\n== Chiang & Cholak constructions, one `eval` ==\n");
            std::printf("%-10s %-9s %7s %10s\n", "model", "kind", "n", "seconds");
            header = true;
        }
        std::printf("%-10s %-9s %7zu %10.3f\n", c.impl.c_str(), c.kind.c_str(), c.n, a->seconds);
        if (csv)
            *csv << "cc," << c.impl << "/" << c.kind << "," << c.n << ","
                 << fmt("%.6g", a->seconds) << ",,,,\n";
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
