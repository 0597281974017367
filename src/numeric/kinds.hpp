#pragma once
/// @file kinds.hpp
/// The scalar kinds a user can choose by name (`--scalar NAME`), made from the one list in
/// kind_list.hpp: the type list, a user's choice (kind_choice), its parsing, names, help texts
/// and the run-time dispatch to a typed kernel are derived from it and from each kind's
/// scalar_traits (docs/architecture.md, "One place per scalar kind").

#include "numeric/scalar.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
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

namespace detail {
template <class L> struct drop_first;
template <class F, class... S> struct drop_first<kind_list<F, S...>> {
    using type = kind_list<S...>;
};
#define ATTNPROP_KIND_LIST_ENTRY(T) , T
/// A kind_list of the types of an X-macro of kind_list.hpp.
#define ATTNPROP_KIND_LIST_OF(LIST)                                                                \
    typename ::attnprop::numeric::detail::drop_first<                                              \
        ::attnprop::numeric::kind_list<void LIST(ATTNPROP_KIND_LIST_ENTRY)>>::type
} // namespace detail

/// Every kind a user can name, in the order help texts list them: exact rationals, double,
/// MPFR, Arb balls, certified double intervals (ATTNPROP_USER_KINDS).
using user_kinds = ATTNPROP_KIND_LIST_OF(ATTNPROP_USER_KINDS);

// Each list of kind_list.hpp holds the kinds its name says, with the capabilities the
// instantiations made from it need.
namespace detail {
template <scalar_kind K, bool Exp, class... S> constexpr bool all_are(kind_list<S...>) {
    return ((scalar_traits<S>::kind == K && ExpScalar<S> == Exp) && ...);
}
} // namespace detail
static_assert(
    detail::all_are<scalar_kind::exact, false>(ATTNPROP_KIND_LIST_OF(ATTNPROP_EXACT_USER_KINDS){}),
    "ATTNPROP_EXACT_USER_KINDS holds exact kinds without exp");
static_assert(detail::all_are<scalar_kind::rounded, true>(
                  ATTNPROP_KIND_LIST_OF(ATTNPROP_ROUNDED_USER_KINDS){}),
              "ATTNPROP_ROUNDED_USER_KINDS holds rounded kinds with exp");
static_assert(detail::all_are<scalar_kind::enclosure, true>(
                  ATTNPROP_KIND_LIST_OF(ATTNPROP_ENCLOSURE_USER_KINDS){}),
              "ATTNPROP_ENCLOSURE_USER_KINDS holds enclosure kinds with exp");

/// The hooks every user kind has in its own header (docs/architecture.md, "One place per scalar
/// kind"), which generic code calls without naming a kind: finiteness, exact values, display,
/// the exact text that values cross threads, processes and journals in, its traits' size and
/// precision. Checked for every kind of the list below, so that a kind cannot join the list
/// without them.
template <class S>
concept UserKind = Scalar<S> && requires(const S& x, const std::string& text, int digits, long bits) {
    { is_nan(x) } -> std::convertible_to<bool>;
    { is_finite(x) } -> std::convertible_to<bool>;
    { exact_of(x) } -> std::same_as<std::optional<rational>>;
    { to_display_string(x, digits) } -> std::same_as<std::string>;
    { to_certified_display(x, digits) } -> std::same_as<std::string>;
    { to_decimal(x, digits) } -> std::same_as<std::string>;
    { radius_string(x) } -> std::same_as<std::string>;
    { approx_double(x) } -> std::convertible_to<double>;
    { exact_text(x) } -> std::same_as<std::string>;
    { scalar_traits<S>::from_exact_text(text) } -> std::same_as<S>;
    { scalar_traits<S>::value_bytes(bits) } -> std::convertible_to<long double>;
    { scalar_traits<S>::precision(x) } -> std::convertible_to<long>;
    scalar_traits<S>::name;
    scalar_traits<S>::variable_precision;
};
static_assert([]<class... S>(kind_list<S...>) { return (UserKind<S> && ...); }(user_kinds{}),
              "every user kind has the hooks of UserKind in its own header");

/// Whether `name` names a user kind.
constexpr bool is_user_kind(std::string_view name) {
    for (auto n : user_kinds::names)
        if (n == name)
            return true;
    return false;
}

/// The names of the user kinds satisfying a predicate on their traits, e.g. the kinds with exp.
template <template <class> class Pred> std::vector<std::string> user_kind_names_if() {
    std::vector<std::string> out;
    [&]<class... S>(kind_list<S...>) {
        ((Pred<S>::value ? (void)out.emplace_back(scalar_traits<S>::name) : void()), ...);
    }(user_kinds{});
    return out;
}

template <class S> struct any_kind : std::true_type {};
template <class S> struct has_exp : std::bool_constant<ExpScalar<S>> {};
template <class S>
struct is_enclosure : std::bool_constant<scalar_traits<S>::kind == scalar_kind::enclosure> {};

/// The facts of a user kind that commands read at run time (before a kernel is chosen).
struct kind_info {
    std::string_view name;
    scalar_kind kind = scalar_kind::exact;
    /// Words help texts add after the name ("" when the name says it).
    std::string_view description;
    bool variable_precision = false; ///< the context's precision sets the kind's precision
    bool has_exp = false;
    int display_digits = 0; ///< default significant digits; 0: what the precision supports
    long double (*value_bytes)(long precision_bits) = nullptr; ///< memory of one value
};

/// kind_info of S, from its traits.
template <class S> constexpr kind_info info_of() {
    using T = scalar_traits<S>;
    kind_info i;
    i.name = T::name;
    i.kind = T::kind;
    if constexpr (requires { T::description; })
        i.description = T::description;
    i.variable_precision = T::variable_precision;
    i.has_exp = ExpScalar<S>;
    if constexpr (requires { T::display_digits; })
        i.display_digits = T::display_digits;
    i.value_bytes = &T::value_bytes;
    return i;
}

/// The facts of every user kind, in list order.
inline constexpr auto user_kind_infos = []<class... S>(kind_list<S...>) {
    return std::array<kind_info, sizeof...(S)>{info_of<S>()...};
}(user_kinds{});

/// A user's choice of scalar kind: one of user_kinds, or `automatic` (the command chooses).
/// The index of the kind in the list, so a kind added to the list is a choice of every command
/// that offers it.
class kind_choice {
public:
    /// The command chooses.
    static constexpr kind_choice automatic() { return kind_choice(user_kinds::size); }
    /// The user kind S.
    template <class S> static constexpr kind_choice of() {
        constexpr std::size_t k = []<class... T>(kind_list<T...>) {
            constexpr bool same[] = {std::is_same_v<S, T>...};
            for (std::size_t i = 0; i < sizeof...(T); ++i)
                if (same[i])
                    return i;
            return sizeof...(T);
        }(user_kinds{});
        static_assert(k < user_kinds::size, "not a user kind (kind_list.hpp)");
        return kind_choice(k);
    }
    /// "auto" (when allowed) or the name of a user kind; std::nullopt otherwise.
    static constexpr std::optional<kind_choice> parse(std::string_view s, bool allow_auto = true) {
        if (allow_auto && s == auto_name)
            return automatic();
        for (std::size_t k = 0; k < user_kinds::size; ++k)
            if (user_kinds::names[k] == s)
                return kind_choice(k);
        return std::nullopt;
    }
    static constexpr std::string_view auto_name = "auto";

    constexpr bool is_automatic() const { return index_ == user_kinds::size; }
    template <class S> constexpr bool is() const { return *this == of<S>(); }
    /// "auto" or the kind's name (a NUL-terminated literal).
    constexpr std::string_view name() const {
        return is_automatic() ? auto_name : user_kinds::names[index_];
    }
    /// The kind's facts. Precondition: not automatic.
    constexpr const kind_info& info() const { return user_kind_infos[index_]; }
    /// The position in user_kinds (user_kinds::size for automatic).
    constexpr std::size_t index() const { return index_; }
    friend constexpr bool operator==(kind_choice, kind_choice) = default;

private:
    constexpr explicit kind_choice(std::size_t k) : index_(k) {}
    std::size_t index_;
};

/// "auto" or the kind's name.
inline const char* to_string(kind_choice c) {
    return c.name().data();
}

/// The choices a command offers, for its `--scalar` check: "auto" when it has it, then the
/// names of the user kinds satisfying Pred, in list order (or reversed).
template <template <class> class Pred = any_kind>
std::vector<std::string> choice_names(bool with_auto, bool reversed = false) {
    std::vector<std::string> names = user_kind_names_if<Pred>();
    if (reversed)
        std::reverse(names.begin(), names.end());
    if (with_auto)
        names.insert(names.begin(), std::string(kind_choice::auto_name));
    return names;
}

/// The names as help texts list them: "a, b, c", each followed by " (description)" when
/// `described` and the kind has one.
inline std::string join_choice_names(const std::vector<std::string>& names, bool described) {
    std::string out;
    for (const auto& n : names) {
        if (!out.empty())
            out += ", ";
        out += n;
        if (!described)
            continue;
        if (auto c = kind_choice::parse(n, false); c && !c->info().description.empty())
            out += " (" + std::string(c->info().description) + ")";
    }
    return out;
}

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
                     if (!out && scalar_traits<S>::name == name)
                         out.emplace(f(std::type_identity<S>{}));
             }()),
             ...);
        }(user_kinds{});
        return out;
    }
}

/// with_kind for a choice: f(std::type_identity<S>{}) for the chosen kind; std::nullopt (false)
/// for automatic or a kind Pred excludes.
template <template <class> class Pred = any_kind, class F> auto dispatch(kind_choice c, F&& f) {
    return with_kind<Pred>(c.is_automatic() ? std::string_view{} : c.name(), std::forward<F>(f));
}

} // namespace attnprop::numeric
