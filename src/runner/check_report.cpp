#include "runner/check_report.hpp"

#include "model/model_file.hpp"
#include "report/files.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <tuple>

namespace attnprop::runner {

namespace fs = std::filesystem;
using json::value;
using report::provenance_to_json;
using report::provenance_to_markdown;

namespace {

using namespace report::json_out;

/// Every property's lengths together.
std::map<long, int> all_lengths(const check_run& run) {
    std::map<long, int> all;
    for (const auto& r : run.reports)
        for (const auto& [n, cases] : r.lengths) all[n] += cases;
    return all;
}

value config_json(const run_config& cfg) {
    value o = value::object();
    o.set("seed", str(std::to_string(cfg.seed)));
    o.set("tests", num(cfg.tests));
    o.set("max_n", num(cfg.max_n));
    o.set("precision", num(cfg.precision));
    o.set("precision_cap", num(cfg.precision_cap));
    return o;
}

std::string pairs_line(const std::vector<std::pair<std::string, int>>& v) {
    std::string s;
    for (const auto& [k, n] : v) s += (s.empty() ? "" : ", ") + k + ": " + std::to_string(n);
    return s;
}

/// "median 45, 22.4% at n >= 256": the distribution of n actually drawn (empty without cases).
std::string drawn_text(const drawn_lengths& d) {
    if (d.cases == 0) return "";
    std::ostringstream os;
    os << "median " << d.median << ", " << std::fixed << std::setprecision(1)
       << 100.0 * static_cast<double>(d.at_least) / static_cast<double>(d.cases) << "% at n >= "
       << d.quarter;
    return os.str();
}

std::string lengths_line(const property_report& r, const run_config& cfg) {
    std::string s = pairs_line(ordered_n_buckets(r.n_buckets));
    const std::string d = drawn_text(drawn_of(r.lengths, cfg.max_n));
    if (!d.empty()) s += (s.empty() ? "" : " ") + ("(" + d + ")");
    return s.empty() ? "-" : s;
}

value drawn_json(const drawn_lengths& d) {
    value o = value::object();
    o.set("cases", num(static_cast<long long>(d.cases)));
    o.set("median", num(static_cast<long long>(d.median)));
    o.set("quarter_max_n", num(static_cast<long long>(d.quarter)));
    o.set("cases_at_least_quarter", num(static_cast<long long>(d.at_least)));
    return o;
}

std::string classes_line(const property_report& r) {
    const class_summary c = summarize_classes(r.classes);
    std::string s = pairs_line(c.top);
    if (c.other_classes > 0)
        s += (s.empty() ? "" : ", ") + std::string("other (") + std::to_string(c.other_classes) +
             (c.other_classes == 1 ? " class, " : " classes, ") + std::to_string(c.other_cases) +
             (c.other_cases == 1 ? " case)" : " cases)");
    return s.empty() ? "-" : s;
}

std::string measurements_line(const property_report& r) {
    std::string s;
    for (const auto& [k, n] : r.measurements) s += (s.empty() ? "" : ", ") + k + ": " + std::to_string(n);
    return s;
}

/// Sort key of an n-bucket label: "n<=X" -> (0, X, 0), "n>X" -> (0, X, 1), else (1, 0, 0).
std::tuple<int, long long, int> bucket_key(const std::string& label) {
    auto number = [](const std::string& digits, long long* out) {
        if (digits.empty() || digits.size() > 18 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return false;
        *out = std::stoll(digits);
        return true;
    };
    long long x = 0;
    if (label.starts_with("n<=") && number(label.substr(3), &x)) return {0, x, 0};
    if (label.starts_with("n>") && number(label.substr(2), &x)) return {0, x, 1};
    return {1, 0, 0};
}

/// The undecided count, with the cases whose two sides agreed to every bit ("7 (5 equal)").
std::string undecided_cell(const property_report& r) {
    std::string s = std::to_string(r.undecided);
    if (r.undecided_equal) s += " (" + std::to_string(r.undecided_equal) + " equal)";
    return s;
}

} // namespace

drawn_lengths drawn_of(const std::map<long, int>& lengths, long max_n) {
    drawn_lengths d;
    d.quarter = std::max(1L, max_n / 4);
    for (const auto& [n, cases] : lengths) {
        d.cases += cases;
        if (n >= d.quarter) d.at_least += cases;
    }
    long seen = 0;
    for (const auto& [n, cases] : lengths) {
        seen += cases;
        if (2 * seen > d.cases - 1) { // the lower median: the ((cases - 1) / 2)-th in order
            d.median = n;
            break;
        }
    }
    return d;
}

std::vector<std::pair<std::string, int>> ordered_n_buckets(const std::map<std::string, int>& buckets) {
    std::vector<std::pair<std::string, int>> out(buckets.begin(), buckets.end());
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return bucket_key(a.first) < bucket_key(b.first); // ties keep the map's string order
    });
    return out;
}

class_summary summarize_classes(const std::map<std::string, int>& classes, std::size_t top) {
    std::vector<std::pair<std::string, int>> all(classes.begin(), classes.end());
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    class_summary s;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (i < top) {
            s.top.push_back(all[i]);
        } else {
            ++s.other_classes;
            s.other_cases += all[i].second;
        }
    }
    return s;
}

std::string counterexample_folder(const property_report& r) { return r.suite + "-" + r.name; }

value check_to_json(const check_run& run) {
    value o = value::object();
    o.set("format", str("attnprop-check-report"));
    o.set("version", num(1));
    if (!run.made_by.empty()) o.set("provenance", provenance_to_json(run.made_by));
    o.set("config", config_json(run.cfg));
    if (!run.model_file.empty()) {
        value m = value::object();
        m.set("name", str(run.model_name));
        m.set("file", str(run.model_file));
        o.set("model", std::move(m));
        value na = value::array();
        for (const auto& [name, why] : run.not_applicable) {
            value e = value::object();
            e.set("property", str(name));
            e.set("reason", str(why));
            na.push_back(std::move(e));
        }
        o.set("not_applicable", std::move(na));
    }
    o.set("suites", string_array(run.suites));
    value props = value::array();
    int failed = 0, undecided = 0, undefined = 0;
    for (const auto& r : run.reports) {
        value p = value::object();
        p.set("suite", str(r.suite));
        p.set("name", str(r.name));
        p.set("statement", str(r.statement));
        p.set("scalar_kinds", string_array(r.kinds));
        p.set("expected_to_fail", value::boolean(r.expected_to_fail));
        p.set("status", str(r.status()));
        p.set("seed", str(std::to_string(r.seed)));
        p.set("passed", num(r.passed));
        p.set("failed", num(r.failed()));
        p.set("undecided", num(r.undecided));
        p.set("undecided_equal", num(r.undecided_equal));
        p.set("undefined", num(r.undefined));
        p.set("gave_up", value::boolean(r.gave_up()));
        if (!r.error().empty()) p.set("error", str(r.error()));
        value nb = value::array();
        for (const auto& [k, v] : ordered_n_buckets(r.n_buckets)) {
            value b = value::object();
            b.set("bucket", str(k));
            b.set("cases", num(v));
            nb.push_back(std::move(b));
        }
        p.set("n_buckets", std::move(nb));
        p.set("n_drawn", drawn_json(drawn_of(r.lengths, run.cfg.max_n)));
        const class_summary cs = summarize_classes(r.classes);
        value top = value::array();
        for (const auto& [k, v] : cs.top) {
            value c = value::object();
            c.set("class", str(k));
            c.set("cases", num(v));
            top.push_back(std::move(c));
        }
        value other = value::object();
        other.set("classes", num(cs.other_classes));
        other.set("cases", num(cs.other_cases));
        value cl = value::object();
        cl.set("top", std::move(top));
        cl.set("other", std::move(other));
        p.set("model_classes", std::move(cl));
        value all = value::object();
        for (const auto& [k, v] : r.classes) all.set(k, num(v));
        p.set("model_classes_all", std::move(all));
        if (!r.undecided_reasons.empty()) p.set("undecided_reasons", string_array(r.undecided_reasons));
        if (!r.undefined_reasons.empty()) p.set("undefined_reasons", string_array(r.undefined_reasons));
        if (!r.measurements.empty()) {
            value ms = value::object();
            for (const auto& [k, v] : r.measurements) ms.set(k, num(v));
            p.set("measurements", std::move(ms));
        }
        if (r.cx) {
            value cx = value::object();
            cx.set("folder", str("counterexamples/" + counterexample_folder(r)));
            cx.set("message", str(r.cx->shrunk.result.message));
            cx.set("numbers", string_object(r.cx->shrunk.result.numbers));
            cx.set("inputs", string_array(r.cx->shrunk.value.inputs));
            cx.set("precision", num(r.cx->shrunk.precision));
            cx.set("reproduce", str(r.cx->reproduce));
            cx.set("shrink_steps", num(r.cx->shrink_steps));
            p.set("counterexample", std::move(cx));
        }
        failed += r.failed();
        undecided += r.undecided;
        undefined += r.undefined;
        props.push_back(std::move(p));
    }
    o.set("properties", std::move(props));
    value sum = value::object();
    sum.set("properties", num(static_cast<long long>(run.reports.size())));
    if (!run.model_file.empty())
        sum.set("not_applicable", num(static_cast<long long>(run.not_applicable.size())));
    sum.set("failed", num(failed));
    sum.set("undecided_cases", num(undecided));
    sum.set("undefined_cases", num(undefined));
    sum.set("n_drawn", drawn_json(drawn_of(all_lengths(run), run.cfg.max_n)));
    o.set("summary", std::move(sum));
    return o;
}

std::string check_to_markdown(const check_run& run) {
    std::ostringstream os;
    os << "# attnprop check report\n\n";
    if (!run.model_file.empty())
        os << "Model `" << run.model_name << "` (" << run.model_file
           << "): every case uses this model; n, inputs, positions and replacements are drawn.\n\n";
    os << "Seed " << run.cfg.seed << ", " << run.cfg.tests << " cases per property, n <= "
       << run.cfg.max_n;
    if (const std::string d = drawn_text(drawn_of(all_lengths(run), run.cfg.max_n)); !d.empty())
        os << " (drawn: " << d << " over every case)";
    os << ", precision " << run.cfg.precision << " bits (escalated to at most "
       << run.cfg.precision_cap << " when undecided). Suites:";
    for (const auto& s : run.suites) os << " `" << s << "`";
    os << ".\n\n";
    os << "| property | status | passed | undecided | undefined | failed | gave up | seed |\n";
    os << "|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : run.reports) {
        os << "| `" << r.suite << "/" << r.name << "`" << (r.expected_to_fail ? " (control)" : "")
           << " | " << r.status() << " | " << r.passed << " | " << undecided_cell(r) << " | "
           << r.undefined << " | " << r.failed() << " | " << (r.gave_up() ? "yes" : "no") << " | "
           << r.seed << " |\n";
    }
    if (!run.not_applicable.empty()) {
        os << "\nNot applicable to the model (no claim, not run):\n\n";
        for (const auto& [name, why] : run.not_applicable) os << "- `" << name << "`: " << why << "\n";
    }
    os << "\n## Statements and distributions\n\n";
    for (const auto& r : run.reports) {
        os << "- **" << r.suite << "/" << r.name << "**: " << r.statement << ".  \n";
        os << "  Scalar kinds: " << [&] {
            std::string s;
            for (const auto& k : r.kinds) s += (s.empty() ? "" : ", ") + k;
            return s;
        }() << ". Lengths: " << lengths_line(r, run.cfg) << ". Models: " << classes_line(r) << ".\n";
        if (!r.measurements.empty())
            os << "  Measurements (statistics beside the verdicts): " << measurements_line(r) << ".\n";
        if (r.undecided_equal)
            os << "  Of the undecided cases, " << r.undecided_equal
               << " have both sides agreeing to every bit tried: the model attains the bound.\n";
        for (const auto& why : r.undecided_reasons) os << "  Undecided: " << why << ".\n";
        for (const auto& where : r.undefined_reasons) os << "  Undefined: " << where << ".\n";
    }
    bool any = false;
    for (const auto& r : run.reports) {
        if (!r.cx) continue;
        if (!any) os << "\n## Counterexamples\n";
        any = true;
        const auto& cx = *r.cx;
        os << "\n### " << r.suite << "/" << r.name << (r.expected_to_fail ? " (control: expected)" : "")
           << "\n\n";
        os << cx.shrunk.result.message << "\n\n";
        os << "- inputs:";
        for (const auto& in : cx.shrunk.value.inputs) os << " `\"" << in << "\"`";
        os << "\n";
        for (const auto& [k, v] : cx.shrunk.value.params) os << "- " << k << " = " << v << "\n";
        for (const auto& [k, v] : cx.shrunk.result.numbers) os << "- " << k << " = `" << v << "`\n";
        os << "- precision: " << cx.shrunk.precision << " bits; shrunk in " << cx.shrink_steps
           << " steps from an original with inputs";
        for (const auto& in : cx.original.value.inputs) os << " `\"" << in << "\"`";
        os << "\n- files: `counterexamples/" << counterexample_folder(r)
           << "/` (model.json, case.json, original/)\n";
        os << "- replay: `attnprop replay " << "counterexamples/" << counterexample_folder(r)
           << "` (from the report directory)\n";
    }
    if (!run.made_by.empty()) os << "\n" << provenance_to_markdown(run.made_by);
    return os.str();
}

std::string check_to_text(const check_run& run) {
    std::ostringstream os;
    std::size_t w = 8;
    for (const auto& r : run.reports) w = std::max(w, r.suite.size() + r.name.size() + 1);
    os << std::left << std::setw(static_cast<int>(w) + 2) << "property" << std::setw(18) << "status"
       << std::right << std::setw(7) << "passed" << std::setw(16) << "undecided" << std::setw(10)
       << "undefined" << std::setw(7) << "failed" << std::setw(9) << "gave-up" << "  seed\n";
    for (const auto& r : run.reports) {
        os << std::left << std::setw(static_cast<int>(w) + 2) << (r.suite + "/" + r.name)
           << std::setw(18) << r.status() << std::right << std::setw(7) << r.passed << std::setw(16)
           << undecided_cell(r) << std::setw(10) << r.undefined << std::setw(7) << r.failed() << std::setw(9)
           << (r.gave_up() ? "yes" : "no") << "  " << r.seed << "\n";
        os << "    lengths: " << lengths_line(r, run.cfg) << "\n";
        os << "    models:  " << classes_line(r) << "\n";
        if (!r.measurements.empty()) os << "    measurements: " << measurements_line(r) << "\n";
        for (const auto& where : r.undefined_reasons) os << "    undefined: " << where << "\n";
        if (r.cx) os << "    counterexample: " << r.cx->shrunk.result.message << "\n";
    }
    if (!run.model_file.empty()) {
        os << "model " << run.model_name << " (" << run.model_file << "): " << run.reports.size()
           << " applicable propert" << (run.reports.size() == 1 ? "y" : "ies") << " run, "
           << run.not_applicable.size() << " not applicable\n";
        for (const auto& [name, why] : run.not_applicable)
            os << "  " << word(verdict::not_applicable) << "  " << name << ": " << why << "\n";
    }
    return os.str();
}

report::case_record case_record_of(const recorded_case& rc, const property_report& r,
                                   const counterexample& cx, const run_config& cfg, bool shrunk,
                                   const report::provenance& made_by) {
    report::case_record c;
    c.property = r.suite + "/" + r.name;
    c.statement = r.statement;
    c.inputs = rc.value.inputs;
    c.params = rc.value.params;
    c.seed = r.seed;
    c.base_seed = cfg.seed;
    c.reproduce = cx.reproduce;
    c.scalar_kinds = r.kinds;
    c.precision = rc.precision;
    c.precision_cap = cfg.precision_cap;
    c.verdict = rc.result.status();
    c.message = rc.result.message;
    for (const auto& [k, v] : rc.result.numbers) c.numbers.emplace_back(k, v);
    c.numbers_from = "check";
    if (shrunk) {
        c.shrink_steps = cx.shrink_steps;
        c.original = "original/case.json";
    } else {
        c.shrunk = false;
    }
    c.made_by = made_by;
    return c;
}

void write_check_report(const fs::path& dir, const check_run& run) {
    fs::create_directories(dir);
    report::write_file_atomic(dir / "report.json", json::dump(check_to_json(run), 2) + "\n");
    report::write_file_atomic(dir / "report.md", check_to_markdown(run));
    for (const auto& r : run.reports) {
        if (!r.cx) continue;
        const fs::path cxdir = dir / "counterexamples" / counterexample_folder(r);
        report::write_case_folder(cxdir, model::write_model(r.cx->shrunk.value.model),
                                  case_record_of(r.cx->shrunk, r, *r.cx, run.cfg, true, run.made_by));
        report::write_case_folder(cxdir / "original", model::write_model(r.cx->original.value.model),
                                  case_record_of(r.cx->original, r, *r.cx, run.cfg, false, run.made_by));
    }
}

} // namespace attnprop::runner
