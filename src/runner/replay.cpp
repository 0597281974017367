#include "runner/replay.hpp"

#include "model/model_file.hpp"

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

} // namespace attnprop::runner
