#include "report/restrict_report.hpp"

#include "report/case_record.hpp"
#include "report/files.hpp"
#include "report/plot.hpp"

#include "lang/languages.hpp"
#include "model/model_file.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attnprop::report {

namespace fs = std::filesystem;
using json::value;
using numeric::rational;

namespace {

using namespace json_out;

value vector_json(const std::vector<rational>& v) {
    value a = value::array();
    for (const auto& q : v) a.push_back(str(numeric::to_exact_string(q)));
    return a;
}

std::string vector_text(const std::vector<rational>& v) {
    std::string s = "[";
    for (std::size_t t = 0; t < v.size(); ++t) s += (t ? ", " : "") + numeric::to_exact_string(v[t]);
    return s + "]";
}

std::string positions_text(const std::vector<std::size_t>& v, std::size_t limit = 40) {
    std::string s;
    for (std::size_t t = 0; t < v.size() && t < limit; ++t) s += (t ? ", " : "") + std::to_string(v[t] + 1);
    if (v.size() > limit) s += ", ...";
    return "{" + s + "}";
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

double free_ratio(const restrict_run& r) {
    return static_cast<double>(r.restr.free_count) / static_cast<double>(r.n);
}

std::string language_line(const analysis::language_result& l) {
    std::string s = std::string(lang::to_string(l.language)) + ": ";
    switch (l.verdict) {
    case analysis::language_verdict::counterexample: s += "counterexample found"; break;
    case analysis::language_verdict::not_ruled_out: s += "language not ruled out"; break;
    case analysis::language_verdict::no_pair_found: s += "no counterexample at this n"; break;
    }
    return s;
}

} // namespace

std::string certificate_verdict(const analysis::certificate& c) {
    if (!c.complete) return "incomplete";
    return c.valid ? "valid" : "invalid";
}

json::value restrict_to_json(const model::model<rational>& m, const restrict_run& r) {
    const auto& R = r.restr;
    value o = value::object();
    o.set("model", str(r.model_name));
    o.set("n", num(r.n));
    o.set("rho", str(R.rho_string(m.sigma)));
    o.set("free", num(static_cast<long long>(R.free_count)));
    o.set("free_target", num(static_cast<long long>(R.free_target)));
    o.set("free_fraction", str(numeric::to_exact_string(R.free_fraction)));
    o.set("free_ratio", str(numeric::to_exact_string(rational(static_cast<long>(R.free_count), r.n))));
    o.set("free_met", value::boolean(R.free_budget_met()));
    o.set("status", str(R.status == analysis::restriction_status::complete ? "complete" : "too-large"));
    if (!R.stop_reason.empty()) o.set("stop_reason", str(R.stop_reason));
    value dep = value::array();
    for (std::size_t t : R.dependency) dep.push_back(num(static_cast<long long>(t + 1)));
    o.set("dependency", std::move(dep));
    o.set("c_obs", num(static_cast<long long>(R.c_obs())));
    value layers = value::array();
    for (const auto& f : R.figures) {
        value l = value::object();
        l.set("layer", num(static_cast<long long>(f.layer)));
        l.set("rows", num(static_cast<long long>(f.rows)));
        l.set("c_prev", num(static_cast<long long>(f.c_prev)));
        l.set("max_dependency", num(static_cast<long long>(f.max_dependency)));
        l.set("k_obs", num(static_cast<long long>(f.k_obs)));
        l.set("pinned", num(static_cast<long long>(f.pinned_greedy + f.pinned_fan_out + f.pinned_for_size)));
        l.set("pinned_greedy", num(static_cast<long long>(f.pinned_greedy)));
        l.set("pinned_fan_out", num(static_cast<long long>(f.pinned_fan_out)));
        l.set("pinned_for_size", num(static_cast<long long>(f.pinned_for_size)));
        l.set("triples", num(static_cast<long long>(f.triples)));
        l.set("unsatisfied", num(static_cast<long long>(f.unsatisfied)));
        l.set("rounds", num(static_cast<long long>(f.rounds)));
        layers.push_back(std::move(l));
    }
    o.set("layers", std::move(layers));
    o.set("certificate", str(certificate_verdict(r.cert)));
    value checks = value::array();
    for (const auto& c : r.cert.checks) {
        value ch = value::object();
        ch.set("name", str(c.name));
        ch.set("passed", value::boolean(c.passed));
        ch.set("soundness", value::boolean(c.soundness));
        ch.set("detail", str(c.detail));
        checks.push_back(std::move(ch));
    }
    o.set("checks", std::move(checks));
    o.set("assignments_checked", num(static_cast<long long>(r.cert.assignments)));
    o.set("exhaustive", value::boolean(r.cert.exhaustive));
    value notes = value::array();
    for (const auto& s : R.notes) notes.push_back(str(s));
    o.set("notes", std::move(notes));
    if (r.language) {
        const auto& l = *r.language;
        o.set("language", str(lang::to_string(l.language)));
        o.set("language_verdict", str(analysis::to_string(l.verdict)));
        o.set("explanation", str(l.explanation));
        if (l.accuracy) o.set("accuracy", str(numeric::to_exact_string(*l.accuracy)));
        if (l.verdict == analysis::language_verdict::counterexample) {
            value cx = value::object();
            value ins = value::array(), outs = value::array(), acc = value::array(), mem = value::array();
            for (int t = 0; t < 2; ++t) {
                ins.push_back(str(l.inputs[t]));
                outs.push_back(vector_json(l.outputs[t]));
                acc.push_back(value::boolean(l.accepted[t]));
                mem.push_back(value::boolean(l.member[t]));
            }
            cx.set("inputs", std::move(ins));
            cx.set("outputs", std::move(outs));
            cx.set("accepted", std::move(acc));
            cx.set("member", std::move(mem));
            cx.set("wrong", num(l.wrong));
            cx.set("wrong_input", str(l.inputs[l.wrong]));
            o.set("counterexample", std::move(cx));
        } else {
            o.set("counterexample", value::null_value());
        }
    } else {
        o.set("language", value::null_value());
        o.set("counterexample", value::null_value());
    }
    if (!r.cert.failing_inputs.empty()) {
        value f = value::object();
        value ins = value::array(), outs = value::array();
        for (std::size_t t = 0; t < r.cert.failing_inputs.size(); ++t) {
            ins.push_back(str(r.cert.failing_inputs[t]));
            outs.push_back(vector_json(r.cert.failing_outputs[t]));
        }
        f.set("inputs", std::move(ins));
        f.set("outputs", std::move(outs));
        f.set("table_entry", vector_json(r.cert.expected));
        o.set("certificate_failure", std::move(f));
    }
    return o;
}

std::string restrict_to_text(const model::model<rational>& m, const restrict_run& r) {
    const auto& R = r.restr;
    std::ostringstream os;
    os << "model        " << r.model_name << "\n";
    os << "n            " << r.n << " (" << (r.n - 1) << " inputs and eos)\n";
    os << "rho          " << R.rho_string(m.sigma) << "\n";
    os << "free         " << R.free_count << " of " << (r.n - 1) << " inputs, fraction "
       << fixed(free_ratio(r), 3) << " of n; required " << R.free_target << " (C = "
       << numeric::to_exact_string(R.free_fraction) << "): "
       << (R.free_budget_met() ? "met" : "NOT met (the greedy could not keep C·n free)") << "\n";
    if (R.status == analysis::restriction_status::complete) {
        os << "c_obs        " << R.c_obs() << "   D_L(n) = " << positions_text(R.dependency) << "\n";
    } else {
        os << "stopped      " << R.stop_reason << "\n";
    }
    for (const auto& f : R.figures) {
        os << "layer " << f.layer << "      max |D_k| " << f.max_dependency << ", k_obs " << f.k_obs
           << ", c_{k-1} " << f.c_prev << ", pinned " << (f.pinned_greedy + f.pinned_fan_out + f.pinned_for_size)
           << " (greedy " << f.pinned_greedy << ", fan-out " << f.pinned_fan_out << ", size "
           << f.pinned_for_size << "), unsatisfied " << f.unsatisfied << " of " << f.triples
           << " triples, " << f.rounds << " greedy rounds\n";
    }
    for (const auto& note : R.notes) os << "note         " << note << "\n";
    os << "certificate  " << certificate_verdict(r.cert) << "\n";
    for (const auto& c : r.cert.checks)
        os << "  [" << (c.passed ? "ok" : (c.soundness ? "FAIL" : "no")) << "] " << c.name << ": "
           << c.detail << "\n";
    if (!r.cert.failing_inputs.empty()) {
        for (std::size_t t = 0; t < r.cert.failing_inputs.size(); ++t)
            os << "  failing input " << (t + 1) << "  " << r.cert.failing_inputs[t] << "  y = "
               << vector_text(r.cert.failing_outputs[t]) << "\n";
        os << "  table entry      y = " << vector_text(r.cert.expected) << "\n";
    }
    if (r.language) {
        const auto& l = *r.language;
        os << "language     " << language_line(l) << "\n";
        os << "  " << l.explanation << "\n";
        if (l.verdict == analysis::language_verdict::counterexample) {
            for (int t = 0; t < 2; ++t)
                os << "  input " << (t + 1) << "  " << l.inputs[t] << "\n           y = "
                   << vector_text(l.outputs[t]) << ", " << (l.accepted[t] ? "accept" : "reject")
                   << ", " << (l.member[t] ? "member" : "not a member")
                   << (l.wrong == t ? "  <- misclassified" : "") << "\n";
        }
        if (l.accuracy) {
            os << "  accuracy on the ρ-subcube: " << numeric::to_exact_string(*l.accuracy)
               << " (counted from the certified table";
            if (l.accuracy_exhaustive) os << "; confirmed on every input of the subcube";
            os << "; " << l.pairs_checked << " sampled pairs x, x with one bit of Free \\ D_L(n) "
               << "flipped gave identical outputs)\n";
        }
    }
    return os.str();
}

double log2_slope(const std::vector<double>& x, const std::vector<double>& y) {
    const std::size_t k = std::min(x.size(), y.size());
    if (k < 2) return 0;
    double mx = 0, my = 0;
    for (std::size_t t = 0; t < k; ++t) {
        mx += std::log2(x[t]);
        my += y[t];
    }
    mx /= static_cast<double>(k);
    my /= static_cast<double>(k);
    double sxy = 0, sxx = 0;
    for (std::size_t t = 0; t < k; ++t) {
        const double dx = std::log2(x[t]) - mx;
        sxy += dx * (y[t] - my);
        sxx += dx * dx;
    }
    return sxx > 0 ? sxy / sxx : 0;
}

plot_figure restrict_figure(const std::string& model_name, const std::vector<restrict_run>& runs) {
    plot_figure f;
    f.title = model_name + ": restrictions keeping C·n inputs free, against n (Hahn's Theorem 1)";
    f.x_label = "n (input length, eos included)";
    f.marked_label = "invalid";
    f.missing_label = "stopped";
    std::vector<double> ns, fr, cs;
    std::optional<rational> c_requested;
    std::vector<double> invalid;
    for (const auto& r : runs) {
        const double n = static_cast<double>(r.n);
        if (r.restr.status != analysis::restriction_status::complete) {
            f.missing_x.push_back(n);
            continue;
        }
        if (!c_requested) c_requested = r.restr.free_fraction;
        if (certificate_verdict(r.cert) == "invalid") {
            f.marked_x.push_back(n);
            invalid.push_back(n);
            continue; // a point whose certificate fails is not a measurement of the theorem
        }
        ns.push_back(n);
        fr.push_back(free_ratio(r));
        cs.push_back(static_cast<double>(r.restr.c_obs()));
    }
    plot_panel_spec p1;
    p1.y_label = "free inputs |Free| / n (fraction of n)";
    p1.y_min = 0.0;
    p1.y_max = 1.0;
    p1.series.push_back({"free fraction |Free| / n", ns, fr, palette[0]});
    if (c_requested)
        p1.references.push_back({numeric::approx_double(*c_requested),
                                 "requested C = " + numeric::to_exact_string(*c_requested)});
    plot_panel_spec p2;
    p2.y_label = "c_obs = |D_L(n)|, inputs the output depends on (count)";
    p2.y_min = 0.0;
    p2.series.push_back({"c_obs", ns, cs, palette[1]});
    f.panels = {p1, p2};
    f.caption.push_back("Theorem 1: for every C < 1 there is a restriction with at least C·n free "
                        "inputs whose output depends on at most c of them, c independent of n. "
                        "Every drawn point is certified against the exact forward pass.");
    if (ns.size() >= 2)
        f.caption.push_back("c_obs changes by " + fixed(log2_slope(ns, cs), 3) +
                            " per doubling of n (least squares; Theorem 1: a constant, slope about 0).");
    if (!invalid.empty()) {
        std::string s;
        for (double n : invalid) s += (s.empty() ? "" : ", ") + std::to_string(static_cast<long>(n));
        f.caption.push_back("The certificate is invalid at n = " + s + " (marked on the axis; not drawn).");
    }
    if (!f.missing_x.empty()) {
        std::string s;
        for (double n : f.missing_x) s += (s.empty() ? "" : ", ") + std::to_string(static_cast<long>(n));
        f.caption.push_back("No restriction at n = " + s + ": the search stopped (marked on the axis).");
    }
    return f;
}

void write_restrict_sweep(const fs::path& dir, const model::model<rational>& m,
                          const std::vector<restrict_run>& runs, const provenance& made_by,
                          bool figure_text) {
    fs::create_directories(dir);
    value doc = value::object();
    doc.set("format", str("attnprop-restrict-report"));
    doc.set("version", num(1));
    if (!made_by.empty()) doc.set("provenance", provenance_to_json(made_by));
    doc.set("model", str(runs.empty() ? m.name : runs.front().model_name));
    value arr = value::array();
    std::vector<double> ns, fr, cs;
    std::ostringstream csv;
    csv << "n,free,free_ratio,free_target,free_met,c_obs,k_obs_max,max_dependency,certificate,"
           "language,language_verdict\n";
    for (const auto& r : runs) {
        arr.push_back(restrict_to_json(m, r));
        std::size_t kobs = 0, maxd = 0;
        for (const auto& f : r.restr.figures) {
            kobs = std::max(kobs, f.k_obs);
            maxd = std::max(maxd, f.max_dependency);
        }
        csv << r.n << "," << r.restr.free_count << "," << fixed(free_ratio(r), 6) << ","
            << r.restr.free_target << "," << (r.restr.free_budget_met() ? "yes" : "no") << ","
            << r.restr.c_obs() << "," << kobs << "," << maxd << "," << certificate_verdict(r.cert) << ","
            << (r.language ? lang::to_string(r.language->language) : "") << ","
            << (r.language ? analysis::to_string(r.language->verdict) : "") << "\n";
        if (r.restr.status == analysis::restriction_status::complete) {
            ns.push_back(static_cast<double>(r.n));
            fr.push_back(free_ratio(r));
            cs.push_back(static_cast<double>(r.restr.c_obs()));
        }
    }
    doc.set("runs", std::move(arr));
    const double slope = log2_slope(ns, cs);
    const double fslope = log2_slope(ns, fr);
    value trend = value::object();
    trend.set("c_obs_slope_per_doubling", value::number_raw(fixed(slope, 6)));
    trend.set("free_ratio_slope_per_doubling", value::number_raw(fixed(fslope, 6)));
    doc.set("trend", std::move(trend));
    write_file_atomic(dir / "report.json", json::dump(doc, 2) + "\n");
    write_file_atomic(dir / "restrict.csv", csv.str());
    std::vector<std::string> figures, figure_notes;
    std::string texts;
    if (!ns.empty()) {
        plot_figure f = restrict_figure(runs.empty() ? m.name : runs.front().model_name, runs);
        f.generator = figure_generator(made_by);
        texts = take_figure_text(f, "restrict", figure_text);
        figures = write_figure(dir, "restrict", f, figure_notes);
    }
    std::ostringstream md;
    md << "# Restriction sweep: " << (runs.empty() ? m.name : runs.front().model_name) << "\n\n";
    md << "Hahn (2020), Theorem 1, checked at each n (theory.md §1.3): a restriction ρ keeping "
          "at least ⌈C·n⌉ inputs free, the dependency set D_L(n) of the output, and a "
          "certificate checked against the exact forward pass.\n\n";
    md << "| n | free | free / n | required | c_obs | max k_obs | certificate | language |\n";
    md << "|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : runs) {
        std::size_t kobs = 0;
        for (const auto& f : r.restr.figures) kobs = std::max(kobs, f.k_obs);
        md << "| " << r.n << " | " << r.restr.free_count << " | " << fixed(free_ratio(r), 3) << " | "
           << r.restr.free_target << (r.restr.free_budget_met() ? "" : " (not met)") << " | "
           << r.restr.c_obs() << " | " << kobs << " | " << certificate_verdict(r.cert) << " | "
           << (r.language ? language_line(*r.language) : std::string("-")) << " |\n";
    }
    md << "\nTrend (least squares against log2 n): c_obs changes by " << fixed(slope, 3)
       << " per doubling of n (Theorem 1 predicts a constant c, slope ~0); the free fraction "
          "changes by "
       << fixed(fslope, 4) << " per doubling.\n\n";
    md << "Files: `restrict.csv` (one row per n), `report.json`";
    for (const auto& name : figures) md << ", `" << name << "`";
    md << ".\n";
    if (!figures.empty())
        md << "\nFigure: `restrict` draws the free fraction with the requested C as a reference line, "
              "and c_obs, against n (log scale).\n";
    if (!texts.empty()) md << "\n" << texts;
    for (const auto& note : figure_notes) md << "\nNo PNG: " << note << ".\n";
    if (!made_by.empty()) md << "\n" << provenance_to_markdown(made_by);
    write_file_atomic(dir / "report.md", md.str());
}

void write_restrict_single(const fs::path& dir, const model::model<rational>& m,
                           const restrict_run& r, const provenance& made_by) {
    write_restrict_sweep(dir, m, {r}, made_by);
}

namespace {

fs::path write_restrict_case(const fs::path& dir, const model::model<rational>& m,
                           const std::string& property, const std::string& statement,
                           const std::vector<std::string>& inputs, const restrict_run& r,
                           const std::string& message, value numbers, const provenance& made_by) {
    case_record c;
    c.property = property;
    c.statement = statement;
    c.inputs = inputs;
    c.params = r.params;
    c.seed = c.base_seed = static_cast<std::uint64_t>(r.params.count("seed") ? r.params.at("seed") : 1);
    c.message = message;
    for (const auto& [k, v] : numbers.members()) c.numbers.emplace_back(k, v.as_string());
    c.numbers_from = "restrict";
    c.made_by = made_by;
    return report::write_case_folder(dir, model::write_model(m), c);
}

} // namespace

fs::path write_restrict_counterexample(const fs::path& dir, const model::model<rational>& m,
                                       const restrict_run& r, const provenance& made_by) {
    std::string message;
    for (const auto& c : r.cert.checks)
        if (c.soundness && !c.passed) message += (message.empty() ? "" : "; ") + c.name + ": " + c.detail;
    value nums = value::object();
    for (std::size_t t = 0; t < r.cert.failing_outputs.size(); ++t)
        nums.set("y_" + std::to_string(t + 1), str(vector_text(r.cert.failing_outputs[t])));
    nums.set("table_entry", str(vector_text(r.cert.expected)));
    return write_restrict_case(dir, m, restriction_property,
                             "the restriction certificate is valid: the dependency table T_L(n) "
                             "equals the exact forward pass and y_n^(L) is independent of "
                             "Free \\ D_L(n)",
                             r.cert.failing_inputs, r, message, std::move(nums), made_by);
}

fs::path write_language_counterexample(const fs::path& dir, const model::model<rational>& m,
                                       const restrict_run& r, const provenance& made_by) {
    if (!r.language || r.language->verdict != analysis::language_verdict::counterexample)
        throw std::invalid_argument("write_language_counterexample: the run has no counterexample");
    const auto& lr = *r.language;
    value nums = value::object();
    nums.set("n", str(std::to_string(r.n)));
    nums.set("rho", str(r.restr.rho_string(m.sigma)));
    for (int t = 0; t < 2; ++t) {
        nums.set("input_" + std::to_string(t + 1), str(lr.inputs[t]));
        nums.set("y_" + std::to_string(t + 1), str(vector_text(lr.outputs[t])));
    }
    nums.set("wrong", str(std::to_string(lr.wrong + 1)));
    return write_restrict_case(dir, m, language_property,
                             std::string("(false by Hahn's Theorem 1) the hard model classifies "
                                         "every input of ") +
                                 lang::to_string(lr.language) + " correctly",
                             {lr.inputs[0], lr.inputs[1]}, r,
                             std::string("the model misclassifies a ") +
                                 lang::to_string(lr.language) + " input: " + lr.explanation,
                             std::move(nums), made_by);
}

} // namespace attnprop::report
