#pragma once
/// @file limits.hpp
/// Resource limits: where a user's input sets the cost of a computation (the size of exact
/// rationals, the number of readout symbols, graph nodes and table entries, the memory of a
/// trace, the work of a forward pass, the layers, heads, widths and numbers of a model), attnprop refuses what exceeds a limit with a message
/// naming the limit, the value and how to raise it, instead of hanging or being killed for its
/// memory.
///
/// Every limit has a name, a default (docs/reliability.md lists them) and one process-wide
/// value. The value starts at the default, or at what the environment variable ATTNPROP_LIMITS
/// says ("exact-bits=1M,graph-nodes=500000"), read once on first use; the command line sets it
/// with `--limit NAME=VALUE` (set_limit_text) before any work starts. Values are read with
/// relaxed atomic loads, so checking a limit costs nothing measurable and is safe from worker
/// threads; set them before starting threads.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnprop::numeric {

/// The guarded resources.
enum class limit {
    exact_bits,      ///< bits of the numerator or denominator of an exact rational
    readout_symbols, ///< output symbols of a softmax readout
    graph_nodes,     ///< nodes of one graph map
    table_entries,   ///< entries of one table map, rows of a positional table
    trace_bytes,     ///< estimated memory of an `eval --trace`
    attention_work,  ///< score terms of one forward pass: sum over layers of H n^2 d_k
    layers,          ///< layers of a model
    heads,           ///< heads of one layer
    mlp_layers,      ///< layers of one mlp map
    width,           ///< the width d, and every dimension of a model file or graph node
    model_numbers,   ///< numbers a model file holds once read, per byte of the file
};

/// What a model file of `file_bytes` bytes may hold once read, in numbers (limit
/// model-numbers): the limit's value times the file's size, and at least 2^18 whatever the
/// size (a small file may hold an identity of d = 512). Saturates.
std::uint64_t model_numbers_budget(std::uint64_t file_bytes);

/// What a limit is: its name on the command line, its default and what it counts.
struct limit_spec {
    limit id;
    std::string_view name;          ///< "exact-bits"
    std::uint64_t default_value;
    std::string_view unit;          ///< "bits", "symbols", "bytes", ...
    std::string_view description;   ///< one line for --help and the docs
};

/// Every limit, in the order of the enum.
std::span<const limit_spec> limit_specs();

/// The spec of one limit.
const limit_spec& spec_of(limit which);

/// The current value of a limit (the default unless set or given in ATTNPROP_LIMITS).
std::uint64_t limit_value(limit which);

/// Sets a limit for the rest of the process (values >= 1).
void set_limit(limit which, std::uint64_t value);

/// Parses and applies one "NAME=VALUE" (VALUE a positive integer with an optional binary
/// suffix K, M, G or T: 1M = 2^20). Throws std::invalid_argument naming the problem and the
/// known names ("unknown limit 'x' (known: ...)", "exact-bits: 'abc' is not a positive
/// integer ..."); a bad ATTNPROP_LIMITS makes every call throw, its message prefixed
/// "ATTNPROP_LIMITS: ".
void set_limit_text(std::string_view text);

/// Applies a comma-separated list of "NAME=VALUE" (the syntax of ATTNPROP_LIMITS).
void set_limits_text(std::string_view text);

/// Restores every limit to its default (tests).
void reset_limits();

/// A computation refused because it would exceed a limit. Not a numeric_error: no retry at a
/// higher precision helps, and nothing may count it as a property's verdict; the command ends
/// with exit code 2 and this message.
class limit_error : public std::runtime_error {
public:
    /// `what` describes the quantity ("the readout has 100000 symbols"); the message adds the
    /// limit and how to raise it.
    limit_error(limit which, std::uint64_t value, const std::string& what);
    limit which() const noexcept { return which_; }
    /// The value that exceeded the limit.
    std::uint64_t value() const noexcept { return value_; }
    /// The description of the quantity, without the limit.
    const std::string& quantity() const noexcept { return quantity_; }
    /// The same error with `where` appended to the quantity (" in formula 'i^i' at i=3").
    limit_error located(const std::string& where) const;

private:
    limit which_;
    std::uint64_t value_;
    std::string quantity_;
};

/// Throws limit_error when value > limit_value(which); `what` as for limit_error.
void check_limit(limit which, std::uint64_t value, const std::string& what);

/// "--limit exact-bits=N (or ATTNPROP_LIMITS=exact-bits=N)": how to raise a limit.
std::string how_to_raise(limit which);

} // namespace attnprop::numeric
