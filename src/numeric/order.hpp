#pragma once
/// @file order.hpp
/// Three-valued-plus-unknown comparison results shared by every scalar kind.

#include <string_view>

namespace attnprop::numeric {

/// Result of comparing two scalars. Exact and rounded kinds always decide (less, equal or
/// greater); enclosures (balls, intervals) answer `unknown` when their sets overlap and are not
/// the same single point. `unknown` is a value, never an exception.
enum class order { less, equal, greater, unknown };

/// The comparison with operands swapped.
constexpr order reverse(order o) noexcept {
    switch (o) {
    case order::less: return order::greater;
    case order::greater: return order::less;
    default: return o;
    }
}

/// True only when the comparison proved a < b.
constexpr bool certainly_less(order o) noexcept { return o == order::less; }
/// True only when the comparison proved a > b.
constexpr bool certainly_greater(order o) noexcept { return o == order::greater; }
/// True unless the comparison proved a >= b (so `unknown` counts as possibly less).
constexpr bool possibly_less(order o) noexcept { return o == order::less || o == order::unknown; }
/// True unless the comparison proved a <= b.
constexpr bool possibly_greater(order o) noexcept {
    return o == order::greater || o == order::unknown;
}
/// True when a >= b was proved.
constexpr bool certainly_not_less(order o) noexcept {
    return o == order::greater || o == order::equal;
}

/// "less", "equal", "greater" or "unknown".
constexpr std::string_view to_string(order o) noexcept {
    switch (o) {
    case order::less: return "less";
    case order::equal: return "equal";
    case order::greater: return "greater";
    case order::unknown: return "unknown";
    }
    return "unknown";
}

} // namespace attnprop::numeric
