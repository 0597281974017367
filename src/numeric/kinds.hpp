#pragma once
/// @file kinds.hpp
/// The scalar kinds a user can choose by name (`--scalar NAME`), in one list. Names, parsing
/// and the run-time dispatch to a typed kernel are derived from it and from each kind's
/// scalar_traits, so a new kind is added by its own header, its traits specialisation, and
/// one entry here (docs/architecture.md, "Adding a scalar kind").

#include "numeric/scalar.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace attnprop::numeric {

template <class... S> struct kind_list {
    static constexpr std::size_t size = sizeof...(S);
    static constexpr std::array<std::string_view, sizeof...(S)> names = {scalar_traits<S>::name...};
};

/// Every kind a user can name, in the order help texts list them: exact rationals, double,
/// MPFR, Arb balls, certified double intervals.
using user_kinds = kind_list<rational, double, mpfr_real, arb_ball, dinterval>;

/// Whether `name` names a user kind.
constexpr bool is_user_kind(std::string_view name) {
    for (auto n : user_kinds::names)
        if (n == name) return true;
    return false;
}

/// The names of the user kinds satisfying a predicate on their traits, e.g. the kinds with exp.
template <template <class> class Pred> std::vector<std::string> user_kind_names_if() {
    std::vector<std::string> out;
    [&]<class... S>(kind_list<S...>) {
        ((Pred<S>::value ? out.emplace_back(scalar_traits<S>::name) : void()), ...);
    }(user_kinds{});
    return out;
}

template <class S> struct any_kind : std::true_type {};
template <class S> struct has_exp : std::bool_constant<ExpScalar<S>> {};
template <class S> struct is_enclosure
    : std::bool_constant<scalar_traits<S>::kind == scalar_kind::enclosure> {};

/// Calls f(std::type_identity<S>{}) for the user kind S named `name` and returns its result;
/// std::nullopt (or false for void f) when no kind has that name. `Pred` restricts the kinds
/// f is instantiated for (a command that only runs soft models asks for has_exp).
template <template <class> class Pred = any_kind, class F>
auto with_kind(std::string_view name, F&& f) {
    using first = std::type_identity<double>;
    using R = decltype(f(first{}));
    if constexpr (std::is_void_v<R>) {
        bool found = false;
        [&]<class... S>(kind_list<S...>) {
            (([&] {
                 if constexpr (Pred<S>::value)
                     if (!found && scalar_traits<S>::name == name) {
                         found = true;
                         f(std::type_identity<S>{});
                     }
             }()),
             ...);
        }(user_kinds{});
        return found;
    } else {
        std::optional<R> out;
        [&]<class... S>(kind_list<S...>) {
            (([&] {
                 if constexpr (Pred<S>::value)
                     if (!out && scalar_traits<S>::name == name) out.emplace(f(std::type_identity<S>{}));
             }()),
             ...);
        }(user_kinds{});
        return out;
    }
}

} // namespace attnprop::numeric
