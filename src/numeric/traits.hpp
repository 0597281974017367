#pragma once
/// @file traits.hpp
/// The trait template every scalar kind specialises, in its own header, and the meaning of a
/// kind's results. Kept apart from scalar.hpp so that a kind's header can declare its traits
/// next to its type (scalar.hpp includes every kind through kind_list.hpp).

#include <string_view>

namespace attnprop::numeric {

/// What a scalar's results mean.
enum class scalar_kind {
    exact,    ///< the value is the true value
    rounded,  ///< an approximation with no error bound
    enclosure ///< a set guaranteed to contain the true value
};

/// "exact", "rounded" or "enclosure".
constexpr std::string_view to_string(scalar_kind k) {
    switch (k) {
    case scalar_kind::exact:
        return "exact";
    case scalar_kind::rounded:
        return "rounded";
    case scalar_kind::enclosure:
        return "enclosure";
    }
    return "?";
}

/// Per-type facts, conversions and hooks, specialised for every scalar type in the header that
/// defines the type (double's in scalar.hpp). Every kind has:
/// - `kind` (scalar_kind) and `name` (what `--scalar` and reports call it);
/// - `expensive_exp` (whether repeated exp arguments are worth caching), `checks_finite`
///   (whether require_finite checks its values), `variable_precision` (whether the context's
///   precision sets its precision);
/// - `from_rational(q, ctx)`, `from_long(v, ctx)`, `precision(x)`.
/// Optional members, found by generic code with `requires` (scalar.hpp, kinds.hpp):
/// - user kinds: `value_bytes(precision_bits)` (the memory of one value, for estimates);
///   `description` (words help texts add after the name); `display_digits` (significant
///   digits printed by default, when not what the precision supports);
/// - enclosure kinds: `unit(ctx)` (the set [0, 1]), `hull(a, b)`, `nonnegative_part(x)`;
/// - kinds with exp: `pi(ctx)`; rounded kinds: `nan(ctx)`; `no_value(ctx)` (a value standing
///   for "no value" in a trace, an optional); `check_value(x)` (what require_finite checks in
///   a kind that is never non-finite, e.g. the size of exact values).
template <class S> struct scalar_traits;

} // namespace attnprop::numeric
