#pragma once
/// @file files.hpp
/// Report plumbing shared by the sweep reports: atomic file writes and
/// replayable counterexample folders (model.json + case.json, read by `attnprop replay`; schema
/// in docs/reports.md).

#include "model/json.hpp"
#include "model/model.hpp"
#include "report/provenance.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace attnprop::report {

/// Writes `text` to a temporary file beside `p` and renames it over `p`, so that readers
/// (and a resumed run) never see a half-written file. Throws std::runtime_error on failure.
void write_file_atomic(const std::filesystem::path& p, const std::string& text);

/// What a counterexample folder records besides the model.
struct case_folder {
    std::string property;                 ///< "suite/name" of the property that replays it
    std::string statement;
    std::vector<std::string> inputs;      ///< without eos
    std::map<std::string, long> params;
    std::uint64_t seed = 1;
    std::vector<std::string> scalar_kinds = {"exact"};
    long precision = 128;
    std::string message;
    json::value numbers = json::value::object();
    provenance made_by;                   ///< written as "provenance" unless empty; replay ignores it
};

/// Writes DIR/{model.json, case.json}; returns DIR.
std::filesystem::path write_case_folder(const std::filesystem::path& dir,
                                        const model::model<numeric::rational>& m,
                                        const case_folder& c);

} // namespace attnprop::report
