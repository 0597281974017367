#pragma once
/// @file case_record.hpp
/// The counterexample folder: model.json and case.json (schema in docs/reports.md, "case.json"),
/// written by `attnprop check`, `restrict` and `influence` and read back by `attnprop replay`.
/// One record type, one field table for writing and reading, and a fingerprint (SHA-256 of the
/// model file and of the case) that tells an edited folder from the one attnprop wrote.

#include "model/json.hpp"
#include "model/model_file.hpp"
#include "report/provenance.hpp"
#include "util/verdict.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnprop::report {

/// The "format" of case.json.
inline constexpr const char* case_format = "attnprop-counterexample";
/// The version of case.json this attnprop writes and reads.
inline constexpr long case_version = 1;

/// A bad case.json, or a counterexample folder that cannot be read. The same located form as a
/// model file error, and caught as one (exit 2): `what()` is "FILE:LINE:COL: error: MESSAGE
/// (at /json/pointer)", without ":LINE:COL" when the position is unknown and without
/// " (at ...)" for the whole document.
class case_file_error : public model::model_file_error {
public:
    using model::model_file_error::model_file_error;
};

/// The fingerprint recorded in case.json: SHA-256 of the model file's bytes and of the case
/// (the compact serialisation of case.json without its "fingerprint" and "provenance" members).
struct case_fingerprint {
    std::string model_sha256;
    std::string case_sha256;
};

/// Everything case.json holds. Field by field as in docs/reports.md; optional members are left
/// out of the file when unset.
struct case_record {
    std::string property;                 ///< "suite/name" of the property that replays it
    std::string statement;
    std::string model = "model.json";     ///< the model file, relative to the folder
    std::vector<std::string> inputs;      ///< without eos; "n" is derived from them
    std::map<std::string, long> params;
    std::uint64_t seed = 1;               ///< the property's seed (decimal string in the file)
    std::uint64_t base_seed = 1;          ///< the run's seed
    std::string reproduce;                ///< RapidCheck reproduce string, or ""
    std::vector<std::string> scalar_kinds = {"exact"};
    long precision = 128;                 ///< bits the recorded verdict was reached at
    long precision_cap = 128;             ///< replay escalates up to this
    /// passed | failed | undecided | undefined (the per-case words of util/verdict.hpp; the
    /// words of earlier versions, holds and violated, are read as passed and failed).
    attnprop::verdict verdict = attnprop::verdict::failed;
    std::string message;
    /// Name -> decimal or exact text; null where the writer had no value.
    std::vector<std::pair<std::string, std::optional<std::string>>> numbers;
    /// Who computed `numbers`: "check" (the property's own check at `precision`, so a replay
    /// reports the same names and compares them) or the command that measured them in its own
    /// way ("influence", "restrict"; shown, not compared). Always written; "" when a folder
    /// written before the member existed is read (not compared).
    std::string numbers_from = "check";
    std::optional<long> shrink_steps;     ///< a shrunk case of `check`: accepted shrinks
    std::optional<std::string> original;  ///< ... and its original case's case.json
    std::optional<bool> shrunk;           ///< false for the original (unshrunk) case of `check`
    provenance made_by;                   ///< written as "provenance" unless empty
    /// As read (never written from here: the writer computes it); unset when the file has none.
    std::optional<case_fingerprint> fingerprint;
    /// Filled by the reader: where each member sits in the file, by JSON pointer ("/params/n",
    /// "/inputs/0"), so that later checks can name the line and column.
    std::map<std::string, json::location> locations;

    /// The location of a member (unknown when not read from a file).
    json::location where(const std::string& pointer) const;
};

/// case.json's document without the fingerprint, members in the order of the field table.
json::value case_to_json(const case_record& c);

/// Parses and validates case.json's text: format, version, every member's kind and range
/// (integers within `long`, seeds within 64 bits, precisions within
/// [numeric::min_precision_bits, numeric::max_precision_bits] with precision <= precision_cap,
/// `n` equal to the input lengths plus one, known verdict and scalar kinds, no unknown member),
/// as the record. `file_name` labels errors. Throws case_file_error. Never reads other files,
/// allocates in proportion to the text only, and is safe on any bytes.
case_record parse_case_record(std::string_view text, const std::string& file_name);

/// Writes DIR/case.json (with the fingerprint) and DIR/<c.model> (model_text), each through
/// write_file_atomic; creates DIR. Returns DIR. Throws std::runtime_error when a file cannot be
/// written.
std::filesystem::path write_case_folder(const std::filesystem::path& dir, const std::string& model_text,
                                        const case_record& c);

/// Whether a folder is the one attnprop wrote.
enum class seal_status {
    intact,  ///< both recorded hashes match the files
    edited,  ///< a hash differs: model.json or case.json was changed after it was written
    missing  ///< case.json records no fingerprint (hand-made, or the member was removed)
};

/// A counterexample folder read back.
struct case_folder {
    case_record record;
    std::filesystem::path case_path;   ///< DIR/case.json
    std::filesystem::path model_path;  ///< DIR/<record.model>
    std::string model_text;            ///< its bytes
    seal_status seal = seal_status::missing;
    /// For edited or missing: what differs, one sentence ("model.json was changed after the
    /// folder was written (its SHA-256 is ..., case.json records ...)").
    std::string seal_detail;
};

/// Reads DIR/case.json (parse_case_record) and the bytes of the model file it names, and checks
/// the fingerprint. Throws case_file_error when DIR has no readable case.json, when case.json
/// is bad, or when the model file cannot be read. Does not parse the model.
case_folder read_case_folder(const std::filesystem::path& dir);

} // namespace attnprop::report
