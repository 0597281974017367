#pragma once
/// @file replay.hpp
/// Replaying a counterexample folder (`attnprop replay`, docs/cli.md): reading it back as a
/// case of its property, checking that the property could have written it, and comparing the
/// replayed result with the recorded one.

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

} // namespace attnprop::runner
