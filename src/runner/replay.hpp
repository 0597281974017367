#pragma once
/// @file replay.hpp
/// Replaying a counterexample folder (`attnprop replay`, docs/cli.md): reading it back as a
/// case of its property, checking that the property could have written it, and comparing the
/// replayed result with the recorded one.

#include "model/json.hpp"
#include "report/case_record.hpp"
#include "runner/runner.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::runner {

/// A counterexample folder read back.
struct replay_record {
    report::case_folder folder; ///< case.json as read, the model's bytes and the fingerprint check
    test_case value;            ///< the model parsed, the inputs and parameters
    run_config cfg;             ///< precision and precision cap as recorded
};

/// Reads DIR/case.json and the model file it names (report::read_case_folder, then the
/// model). Throws report::case_file_error for a folder or case.json that cannot be read, and
/// model::model_file_error for a bad model file. Does not look at the fingerprint's verdict
/// (folder.seal) and does not check the case against its property (check_case).
replay_record read_counterexample(const std::filesystem::path& dir);

/// Checks the case against its property's shape (validate_case) and throws
/// report::case_file_error naming case.json, the line:column and JSON pointer of the member
/// and the problem, in the words of the matching command-line option where there is one.
void check_case(const property& p, const replay_record& rec);

/// A recorded number that the replayed check reports with another value.
struct number_difference {
    std::string name;
    std::optional<std::string> recorded;
    std::string now;
};

/// How a replayed result compares with the folder's record.
struct replay_comparison {
    attnprop::verdict recorded_verdict = attnprop::verdict::failed;
    attnprop::verdict verdict = attnprop::verdict::failed; ///< the replayed one
    bool reproduced = false;       ///< the replayed verdict is the recorded one
    /// The record's numbers came from the property's check (numbers_from "check"), so the
    /// replay compares those it reports again; else they are shown, not compared.
    bool numbers_compared = false;
    std::vector<number_difference> differing; ///< compared and different
    std::size_t equal = 0;                    ///< compared and equal
    /// One line: "reproduced", "reproduced; 2 of 5 recorded numbers differ",
    /// "not reproduced: recorded failed, now passed".
    std::string summary() const;
};

/// Compares the replayed result with the record.
replay_comparison compare_with_record(const report::case_record& recorded, const check_result& now);

/// The counterexample folder an argument names: ARG itself when it holds case.json, else the
/// one folder of ARG/counterexamples that does. Throws precondition_error when there is none,
/// or several (listing them).
std::filesystem::path counterexample_dir(const std::string& arg);

/// A counterexample folder replayed.
struct replay_outcome {
    std::filesystem::path dir;
    replay_record rec;
    const property* prop = nullptr; ///< its property, in the registry replay_folder was given
    check_result result;            ///< the replayed check
    long precision = 0;             ///< the precision that decided it (bits)
    replay_comparison cmp;
};

/// Replays the counterexample folder `dir` (`attnprop replay`): reads it
/// (read_counterexample), refuses a folder whose fingerprint says it was edited unless
/// `allow_edited`, finds its property in `reg`, checks the case against it (check_case), runs
/// the property's check with the recorded precision and cap (replay_case) and compares with the
/// record. A folder that cannot be read or run throws report::case_file_error (located in
/// case.json), a bad model file model::model_file_error.
replay_outcome replay_folder(const std::filesystem::path& dir, bool allow_edited, const registry& reg);

/// What `attnprop replay --json` prints (docs/reports.md).
json::value replay_to_json(const replay_outcome& o);
/// What `attnprop replay` prints.
std::string replay_to_text(const replay_outcome& o);

} // namespace attnprop::runner
