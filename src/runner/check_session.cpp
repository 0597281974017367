#include "runner/check_session.hpp"

#include "numeric/interrupt.hpp"
#include "util/precondition.hpp"

#include <algorithm>

namespace attnprop::runner {

namespace fs = std::filesystem;

check_selection select_properties(const registry& reg, const check_request& q) {
    if (q.cfg.precision_cap < q.cfg.precision)
        throw precondition_error("--precision-cap must be at least --precision");
    if (!q.cfg.fixed_model && q.cfg.search_budget > 0)
        throw precondition_error("--search needs --model (random models are searched by RapidCheck)");
    const std::vector<std::string> all = reg.suites();
    for (const auto& s : q.suites) {
        if (std::find(all.begin(), all.end(), s) == all.end()) {
            std::string known;
            for (const auto& k : all) known += (known.empty() ? "" : ", ") + k;
            throw precondition_error("unknown suite '" + s + "' (known: " + known + ")");
        }
    }
    check_selection out;
    std::vector<const property*> selected;
    for (const auto& name : q.properties) {
        const property* p = reg.find(name);
        if (!p) throw precondition_error("unknown property '" + name + "' (see attnprop check --list)");
        if (std::find(selected.begin(), selected.end(), p) == selected.end()) selected.push_back(p);
    }
    out.suites = q.suites;
    out.default_suites = q.suites.empty() && q.properties.empty();
    if (out.default_suites)
        for (const auto& s : all)
            if (s != "controls") out.suites.push_back(s);
    for (const auto& p : reg.all())
        if (std::find(out.suites.begin(), out.suites.end(), p.suite) != out.suites.end() &&
            std::find(selected.begin(), selected.end(), &p) == selected.end())
            selected.push_back(&p);
    if (!q.cfg.fixed_model) {
        out.properties = std::move(selected);
        return out;
    }
    // Controls are false on purpose about random models; the others run when they make a
    // claim about this model.
    for (const auto* p : selected) {
        std::optional<std::string> why =
            p->expected_to_fail
                ? std::optional<std::string>("a deliberately false statement about random "
                                             "models (a control of the machinery)")
                : not_applicable(*p, *q.cfg.fixed_model);
        if (why)
            out.not_applicable.emplace_back(p->suite + "/" + p->name, *why);
        else
            out.properties.push_back(p);
    }
    return out;
}

std::string default_check_dir(const check_request& q) {
    const std::string seed = std::to_string(q.cfg.seed);
    if (!q.cfg.fixed_model) return "out/check-" + seed;
    const std::string stem = q.model_file.empty() ? q.cfg.fixed_model->name
                                                  : fs::path(q.model_file).stem().string();
    return "out/check-" + stem + "-" + seed;
}

check_run start_check(const check_request& q, const check_selection& s, report::provenance made_by) {
    check_run run;
    run.cfg = q.cfg;
    if (s.default_suites) {
        std::string all;
        for (const auto& x : s.suites) all += (all.empty() ? "" : ",") + x;
        made_by.set_option("--suite", all); // the default, as run
    }
    run.made_by = std::move(made_by);
    if (q.cfg.fixed_model) {
        run.model_name = q.cfg.fixed_model->name;
        run.model_file = q.model_file.empty() ? q.cfg.fixed_model->name : q.model_file;
    }
    run.not_applicable = s.not_applicable;
    for (const auto* p : s.properties)
        if (std::find(run.suites.begin(), run.suites.end(), p->suite) == run.suites.end())
            run.suites.push_back(p->suite);
    return run;
}

bool whole_report(const property_report& r) {
    return !r.interrupted() && !numeric::stop_requested();
}

std::vector<property_report> run_selected(const std::vector<const property*>& selected,
                                          const run_config& cfg, const check_hooks& hooks,
                                          const std::vector<std::optional<property_report>>& reused) {
    std::vector<property_report> out;
    for (std::size_t i = 0; i < selected.size(); ++i) {
        if (i < reused.size() && reused[i]) {
            out.push_back(*reused[i]);
            if (hooks.on_report) hooks.on_report(out.back(), true);
            continue;
        }
        if (numeric::stop_requested()) continue;
        out.push_back(run_property(*selected[i], cfg, hooks.on_case));
        if (hooks.on_whole && whole_report(out.back())) hooks.on_whole(*selected[i], out.back());
        if (hooks.on_report) hooks.on_report(out.back(), false);
    }
    return out;
}

std::string check_verdict(const check_run& run) {
    bool failed = false, errored = false, undefined = false;
    for (const auto& r : run.reports) {
        failed = failed || r.failed() > 0;
        errored = errored || !r.error().empty();
        undefined = undefined || r.undefined > 0;
    }
    return failed ? "failed" : errored ? "error" : undefined ? "undefined" : "passed";
}

} // namespace attnprop::runner
