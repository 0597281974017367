#include "runner/replay.hpp"

#include "model/model_file.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <new>
#include <sstream>
#include <system_error>

namespace attnprop::runner {

namespace fs = std::filesystem;

replay_record read_counterexample(const fs::path& dir) {
    replay_record rec;
    rec.folder = report::read_case_folder(dir);
    const report::case_record& c = rec.folder.record;
    rec.value.model = model::parse_model(rec.folder.model_text, rec.folder.model_path.string());
    rec.value.inputs = c.inputs;
    rec.value.params = c.params;
    rec.cfg.seed = c.base_seed;
    rec.cfg.precision = c.precision;
    rec.cfg.precision_cap = c.precision_cap;
    return rec;
}

void check_case(const property& p, const replay_record& rec) {
    if (auto problem = validate_case(p, rec.value)) {
        const report::case_record& c = rec.folder.record;
        // The member itself when the file has it (a missing parameter points at "params").
        json::location where = c.where(problem->pointer);
        std::string pointer = problem->pointer;
        if (!where.known() && pointer != "/model") where = c.where("/params");
        if (pointer == "/model")
            problem->message = rec.folder.model_path.filename().string() + ": " + problem->message;
        throw report::case_file_error(rec.folder.case_path.string(), where, pointer, problem->message);
    }
}

std::string replay_comparison::summary() const {
    if (!reproduced)
        return "not reproduced: recorded " + std::string(word(recorded_verdict)) + ", now " +
               std::string(word(verdict));
    std::string s = "reproduced";
    if (!differing.empty())
        s += "; " + std::to_string(differing.size()) + " of " + std::to_string(differing.size() + equal) +
             " recorded numbers differ";
    return s;
}

replay_comparison compare_with_record(const report::case_record& recorded, const check_result& now) {
    replay_comparison cmp;
    cmp.recorded_verdict = recorded.verdict;
    cmp.verdict = now.status();
    cmp.reproduced = cmp.recorded_verdict == cmp.verdict;
    cmp.numbers_compared = recorded.numbers_from == "check";
    if (!cmp.numbers_compared) return cmp;
    for (const auto& [name, value] : recorded.numbers)
        for (const auto& [k, v] : now.numbers)
            if (k == name) {
                if (value && *value == v)
                    ++cmp.equal;
                else
                    cmp.differing.push_back({name, value, v});
                break;
            }
    return cmp;
}

fs::path counterexample_dir(const std::string& arg) {
    const fs::path d(arg);
    std::error_code ec;
    if (fs::is_regular_file(d / "case.json", ec)) return d;
    const fs::path cx = d / "counterexamples";
    if (fs::is_directory(cx, ec)) {
        std::vector<fs::path> found;
        for (const auto& e : fs::directory_iterator(cx, ec))
            if (fs::is_regular_file(e.path() / "case.json", ec)) found.push_back(e.path());
        std::sort(found.begin(), found.end());
        if (found.size() == 1) return found.front();
        if (found.size() > 1) {
            std::string msg = arg + " holds " + std::to_string(found.size()) +
                              " counterexamples; replay one folder:";
            for (const auto& f : found) msg += "\n  " + f.string();
            throw precondition_error(msg);
        }
    }
    throw precondition_error(arg + " is not a counterexample folder (no case.json)");
}

replay_outcome replay_folder(const fs::path& dir, bool allow_edited, const registry& reg) {
    replay_outcome o;
    o.dir = dir;
    o.rec = read_counterexample(dir);
    const report::case_record& c = o.rec.folder.record;
    const std::string case_file = o.rec.folder.case_path.string();
    if (o.rec.folder.seal != report::seal_status::intact && !allow_edited)
        throw report::case_file_error(case_file, {}, "",
                                      o.rec.folder.seal_detail +
                                          "; not replayed (--allow-edited replays the folder as it is now)");
    o.prop = reg.find(c.property);
    if (!o.prop)
        throw report::case_file_error(case_file, c.where("/property"), "/property",
                                      "unknown property '" + c.property + "' (see attnprop check --list)");
    check_case(*o.prop, o.rec);
    o.precision = c.precision;
    run_config cfg;
    cfg.precision = c.precision;
    cfg.precision_cap = c.precision_cap;
    try {
        o.result = replay_case(*o.prop, o.rec.value, cfg, &o.precision);
    } catch (const std::bad_alloc&) {
        throw report::case_file_error(case_file, {}, "",
                                      "the case needs more memory than is available "
                                      "(std::bad_alloc while running " + c.property + ")");
    }
    o.cmp = compare_with_record(c, o.result);
    return o;
}

namespace {

const char* seal_name(report::seal_status s) {
    switch (s) {
    case report::seal_status::intact: return "intact";
    case report::seal_status::edited: return "edited";
    case report::seal_status::missing: return "missing";
    }
    return "?";
}

} // namespace

json::value replay_to_json(const replay_outcome& x) {
    using json::value;
    const report::case_record& c = x.rec.folder.record;
    const check_result& r = x.result;
    const replay_comparison& cmp = x.cmp;
    value o = value::object();
    o.set("property", value::string(c.property));
    o.set("folder", value::string(x.dir.string()));
    o.set("fingerprint", value::string(seal_name(x.rec.folder.seal)));
    if (x.rec.folder.seal != report::seal_status::intact)
        o.set("edited", value::string(x.rec.folder.seal_detail));
    o.set("verdict", value::string(std::string(word(r.status()))));
    o.set("message", value::string(r.message));
    value nums = value::object();
    for (const auto& [k, v] : r.numbers) nums.set(k, value::string(v));
    o.set("numbers", std::move(nums));
    o.set("precision", value::number(x.precision));
    o.set("recorded_verdict", value::string(std::string(word(c.verdict))));
    o.set("reproduced", value::boolean(cmp.reproduced));
    o.set("numbers_compared", value::boolean(cmp.numbers_compared));
    value diff = value::array();
    for (const auto& d : cmp.differing) {
        value e = value::object();
        e.set("name", value::string(d.name));
        e.set("recorded", d.recorded ? value::string(*d.recorded) : value::null_value());
        e.set("now", value::string(d.now));
        diff.push_back(std::move(e));
    }
    o.set("numbers_differ", std::move(diff));
    o.set("replay", value::string(cmp.summary()));
    return o;
}

std::string replay_to_text(const replay_outcome& x) {
    const report::case_record& c = x.rec.folder.record;
    const check_result& r = x.result;
    const replay_comparison& cmp = x.cmp;
    std::ostringstream os;
    if (x.rec.folder.seal != report::seal_status::intact)
        os << "folder     EDITED: " << x.rec.folder.seal_detail << "; replayed as it is now (--allow-edited)\n";
    os << "property   " << c.property << "\n";
    os << "statement  " << x.prop->statement << "\n";
    os << "inputs    ";
    for (const auto& in : c.inputs) os << " \"" << in << "\"";
    os << "\n";
    for (const auto& [k, v] : c.params) os << "param      " << k << " = " << v << "\n";
    os << "recorded   " << word(c.verdict) << " at " << c.precision << " bits";
    if (!c.message.empty()) os << ": " << c.message;
    os << "\n";
    os << "verdict    " << word(r.status()) << " at " << x.precision << " bits";
    if (!r.message.empty()) os << ": " << r.message;
    os << "\n";
    for (const auto& [k, v] : r.numbers) {
        os << "  " << k << " = " << v;
        for (const auto& d : cmp.differing)
            if (d.name == k) os << "  (recorded: " << d.recorded.value_or("null") << ")";
        os << "\n";
    }
    os << "replay     " << cmp.summary();
    if (!cmp.numbers_compared && !c.numbers.empty())
        os << (c.numbers_from.empty()
                   ? " (the folder does not say what computed its recorded numbers: not compared)"
                   : " (the recorded numbers were measured by attnprop " + c.numbers_from +
                         ", not by the property's check: not compared)");
    os << "\n";
    return os.str();
}

} // namespace attnprop::runner
