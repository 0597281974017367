#pragma once
/// @file model_file.hpp
/// Model files (docs/model-format.md, version 1): JSON text <-> `model<rational>`, exactly.
///
/// Every number is read from its decimal or "p/q" text with `parse_rational`, never through a
/// double, and written back as a short exact decimal or a "p/q" string, so reading, writing and
/// reading again gives an identical model. Every problem in a file is a `model_file_error` that
/// names the file, the line:column and the JSON pointer of the offending value; unknown keys,
/// missing keys, wrong JSON kinds and mismatched dimensions are all errors.

#include "model/json.hpp"
#include "model/model.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace attnprop::model {

/// A bad model file (or one that cannot be read or written).
/// `what()` is "FILE:LINE:COL: error: MESSAGE (at /json/pointer)"; the " (at ...)" part is left
/// out when the pointer is empty (the whole document, or a JSON syntax error), and the
/// ":LINE:COL" part when the location is unknown ("FILE: error: cannot open: ...").
class model_file_error : public std::runtime_error {
public:
    /// An error in `file` at `where` (0:0 if unknown), about the value at JSON pointer `pointer`
    /// (RFC 6901; "" for the document or none), described by `message`.
    model_file_error(std::string file, json::location where, std::string pointer,
                     std::string message);

    /// The file name as given to the reader.
    const std::string& file() const { return file_; }
    /// Line and column of the offending value (0:0 when unknown).
    json::location where() const { return where_; }
    /// RFC 6901 pointer of the offending value, "" for the document itself or none.
    const std::string& pointer() const { return pointer_; }
    /// The message without file, position and pointer.
    const std::string& message() const { return message_; }

private:
    std::string file_;
    json::location where_;
    std::string pointer_;
    std::string message_;
};

/// Parses and validates a model file's text. `file_name` only labels errors.
/// Throws model_file_error (JSON syntax errors too, with the syntax error's position).
model<rational> parse_model(std::string_view text, const std::string& file_name);

/// Reads and parses a model file. Throws model_file_error, also when the file cannot be read
/// ("FILE: error: cannot open: No such file or directory").
model<rational> read_model_file(const std::string& path);

/// The canonical JSON form of a model: keys in a fixed order; a matrix as rows, or sparse
/// entries when fewer than a quarter of its entries are nonzero, or {"identity": n, "scale": s}
/// for a nonzero multiple of an identity of size n >= 2; numbers as JSON numbers when they have
/// an exact decimal of at most 40 digits, else as "p/q" strings; formulas as their text;
/// optional members left out when they hold their default (empty bias, default scale, "").
/// Precondition: `m` is a valid model (as parse_model returns).
json::value model_to_json(const model<rational>& m);

/// `json::dump(model_to_json(m), 2)` plus a final newline; with every matrix written out in
/// full instead when the compact forms (identities, sparse matrices) would give a text that
/// holds more numbers than the limit model-numbers lets a file of its size hold, so that
/// what is written always reads back.
std::string write_model(const model<rational>& m);

/// Writes `write_model(m)` to `path`. Throws model_file_error when the file cannot be written.
void write_model_file(const model<rational>& m, const std::string& path);

} // namespace attnprop::model
