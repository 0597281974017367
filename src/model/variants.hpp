#pragma once
/// @file variants.hpp
/// Helpers for exhaustive dispatch over std::variant: an overload set for std::visit (no
/// default branch, so that a new alternative fails to compile where it is not handled), and a
/// walk over a variant's alternatives in order (to read a kind by name, or list the names).

#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

namespace attnprop::model {

/// std::visit(overloaded{[](const A&) {...}, [](const B&) {...}}, v): one lambda per
/// alternative. Deliberately without a catch-all: a visit that misses an alternative does not
/// compile.
template <class... F> struct overloaded : F... {
    using F::operator()...;
};
template <class... F> overloaded(F...) -> overloaded<F...>;

/// Calls f(std::type_identity<T>{}) for every alternative T of the variant V, in order.
template <class V, class F> constexpr void for_each_alternative(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        (f(std::type_identity<std::variant_alternative_t<I, V>>{}), ...);
    }(std::make_index_sequence<std::variant_size_v<V>>{});
}

/// A V holding a value-initialised alternative number `index` (< std::variant_size_v<V>).
template <class V> V make_alternative(std::size_t index) {
    V out;
    std::size_t k = 0;
    for_each_alternative<V>([&]<class T>(std::type_identity<T>) {
        if (k++ == index) out.template emplace<T>();
    });
    if (index >= k) throw std::out_of_range("variant alternative index out of range");
    return out;
}

} // namespace attnprop::model
