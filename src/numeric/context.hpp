#pragma once
/// @file context.hpp
/// Numeric context: the working precision handed to every conversion and constant.

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace attnprop::numeric {

/// Working precision in bits for MPFR reals and Arb balls. Exact rationals and doubles ignore it.
/// Values carry their own precision once made; the context only says how to make new ones.
/// There is deliberately no global default precision anywhere in attnprop.
struct context {
    long precision_bits = 256;
};

/// Smallest and largest precision accepted from users.
inline constexpr long min_precision_bits = 16;
inline constexpr long max_precision_bits = 1L << 20;

/// The range of working precisions the MPFR and Arb wrappers accept: anything else (a
/// precision of 0 or -5 read from a file, 2^40 bits) would make MPFR or Arb abort the process or
/// exhaust memory. Wider than the user range, since escalation may double a precision.
inline constexpr long min_working_precision_bits = 2;
inline constexpr long max_working_precision_bits = 1L << 24;

/// Raised for numeric misuse that is not undecidability: an operation a scalar kind cannot
/// perform (exp of an exact rational, a layer norm over exact rationals), a working precision
/// that cannot be used (the subclass precision_error). A value of the model that does not exist
/// (NaN, division by zero, ...) is the subclass undefined_error: a result, not misuse. A value
/// too large to compute is numeric::limit_error (limits.hpp), no numeric_error.
class numeric_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A working precision the wrappers cannot use (a precision of 0 read from a file): bad input,
/// not a verdict on anything computed.
class precision_error : public numeric_error {
public:
    using numeric_error::numeric_error;
};

/// Throws precision_error ("working precision 0 bits is outside [2, 16777216]").
[[noreturn]] void throw_bad_precision(long bits);

/// Checks a working precision before MPFR or Arb sees it (see throw_bad_precision).
inline void require_working_precision(long bits) {
    if (bits < min_working_precision_bits || bits > max_working_precision_bits)
        throw_bad_precision(bits);
}

/// Where an undefined value arose. Every field is optional: the map that meets the value sets
/// the node, the forward pass adds the layer, position and head as the error propagates out.
struct undefined_location {
    std::optional<int> layer;             ///< 0 = input map and embeddings, 1..L, L+1 = readout
    std::string node;                     ///< graph node name, or "score", "softmax", "readout"...
    std::optional<std::size_t> position;  ///< 1-based position (query row)
    std::optional<int> head;              ///< 1-based head
};

/// "layer 2, node 'n1', position 4" (the parts that are known; "unknown place" when none).
std::string to_string(const undefined_location& where);

/// Raised when a value of the model does not exist at this input: NaN, division by zero, a
/// layer norm at zero variance with eps = 0, log of a non-positive number, overflow of a
/// double. Undefined is a *result* (eval prints it, sweeps keep the row, properties count it),
/// never bad input (exit 2) and never a pass. `precision_may_resolve` is true when the kind is
/// an enclosure that merely contains the pole (a variance ball that contains 0): a higher
/// precision may show the value is defined after all, and the runner retries.
class undefined_error : public numeric_error {
public:
    undefined_error(std::string reason, undefined_location where = {},
                    bool precision_may_resolve = false);
    const std::string& reason() const { return reason_; }
    const undefined_location& where() const { return where_; }
    bool precision_may_resolve() const { return may_resolve_; }
    /// The same error with the unknown fields of `where` filled from `outer`.
    undefined_error located(const undefined_location& outer) const;
    /// "undefined at layer 2, node 'n1', position 4 (layer norm with eps = 0 at zero variance)".
    std::string message() const;

private:
    std::string reason_;
    undefined_location where_;
    bool may_resolve_ = false;
};

} // namespace attnprop::numeric
