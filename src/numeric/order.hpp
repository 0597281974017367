#pragma once
/// @file order.hpp
/// Three-valued-plus-unknown comparison results shared by every scalar kind, and
/// uncertain<bool>: a truth value that may be undecided, with three-valued logic.

#include <stdexcept>
#include <string>
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

template <class T> class uncertain;

/// Thrown by uncertain<bool>::make_certain() when the value is undecided: a question the
/// arithmetic could not settle was treated as settled. Callers that can report an undecided
/// answer test is_certain() first; this exception marks the places that cannot.
class undecided_error : public std::logic_error {
public:
    explicit undecided_error(const std::string& what) : std::logic_error(what) {}
};

/// A truth value that is true, false or undecided (after CGAL's Uncertain<bool>): the answer
/// of a question about enclosures, or about a model, that may not be decidable. Undecided is a
/// value, never an exception, until make_certain() is asked for a bool. There is deliberately
/// no implicit conversion to bool and no == with bool: each use says whether it needs
/// certainty (certainly), allows doubt (possibly) or asks whether it was decided (is_certain).
template <> class uncertain<bool> {
public:
    /// Undecided.
    constexpr uncertain() noexcept = default;
    /// Decided (implicit: a bool is a certain answer).
    constexpr uncertain(bool b) noexcept : state_(b ? state::yes : state::no) {}

    /// The undecided value.
    static constexpr uncertain indeterminate() noexcept { return uncertain(); }

    /// True when the value is true or false (not undecided).
    constexpr bool is_certain() const noexcept { return state_ != state::unknown; }
    /// The decided value; throws undecided_error when undecided.
    bool make_certain() const {
        if (!is_certain()) throw undecided_error("an undecided truth value was used as certain");
        return state_ == state::yes;
    }

    /// Negation: undecided stays undecided.
    constexpr uncertain operator!() const noexcept {
        uncertain r;
        r.state_ = state_ == state::yes ? state::no : state_ == state::no ? state::yes : state::unknown;
        return r;
    }
    /// Kleene conjunction: false if either is false, true if both are true, else undecided.
    friend constexpr uncertain operator&&(uncertain a, uncertain b) noexcept {
        if (a.state_ == state::no || b.state_ == state::no) return false;
        if (a.state_ == state::yes && b.state_ == state::yes) return true;
        return uncertain();
    }
    /// Kleene disjunction: true if either is true, false if both are false, else undecided.
    friend constexpr uncertain operator||(uncertain a, uncertain b) noexcept {
        return !(!a && !b);
    }

    /// Certainly true: decided and true.
    friend constexpr bool certainly(uncertain u) noexcept { return u.state_ == state::yes; }
    /// Possibly true: not decided false.
    friend constexpr bool possibly(uncertain u) noexcept { return u.state_ != state::no; }
    friend constexpr bool is_certain(uncertain u) noexcept { return u.is_certain(); }
    friend constexpr bool is_indeterminate(uncertain u) noexcept { return !u.is_certain(); }

private:
    enum class state : unsigned char { unknown, no, yes };
    state state_ = state::unknown;
};

/// The undecided truth value.
inline constexpr uncertain<bool> indeterminate{};

/// a < b as a truth value: undecided when the comparison is unknown.
constexpr uncertain<bool> is_less(order o) noexcept {
    return o == order::unknown ? indeterminate : uncertain<bool>(o == order::less);
}
/// a > b as a truth value.
constexpr uncertain<bool> is_greater(order o) noexcept {
    return o == order::unknown ? indeterminate : uncertain<bool>(o == order::greater);
}
/// a <= b as a truth value.
constexpr uncertain<bool> is_less_or_equal(order o) noexcept { return !is_greater(o); }
/// a >= b as a truth value.
constexpr uncertain<bool> is_greater_or_equal(order o) noexcept { return !is_less(o); }

/// "true", "false" or "undecided".
constexpr std::string_view to_string(uncertain<bool> u) noexcept {
    return certainly(u) ? "true" : possibly(u) ? "undecided" : "false";
}

} // namespace attnprop::numeric
