#pragma once
/// @file json.hpp
/// A small JSON DOM (RFC 8259) that keeps source positions and the raw text of numbers.
///
/// A JSON number in an attnprop model file means the exact value of its decimal literal, so the
/// parser never converts numbers to `double`: it keeps the lexeme (`"-1.50e+3"`) verbatim and
/// leaves the exact interpretation to the numeric layer. Every parsed value remembers where it
/// started, so later validation errors can name a line and column.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnprop::json {

/// A position in the JSON source. Lines start at 1; columns count bytes from 1 (a tab counts 1).
/// Both are 0 when the position is unknown (values built in code rather than parsed).
struct location {
    /// 1-based line, 0 if unknown.
    std::size_t line = 0;
    /// 1-based byte column, 0 if unknown.
    std::size_t column = 0;

    /// True when this is a real source position.
    [[nodiscard]] bool known() const noexcept { return line != 0; }

    /// Memberwise equality.
    friend bool operator==(const location&, const location&) = default;
};

/// "line:column", or "?" when the location is unknown.
std::string to_string(const location& where);

/// The six JSON value kinds.
enum class kind { null, boolean, number, string, array, object };

/// "null", "boolean", "number", "string", "array" or "object".
const char* kind_name(kind k) noexcept;

namespace detail {
class parser;
} // namespace detail

/// One JSON value. Numbers keep their raw lexeme; objects keep their members in source (or
/// insertion) order and never hold two members with the same key; strings are valid UTF-8.
///
/// Accessors for the wrong kind throw `std::logic_error`: they signal misuse by the caller, not
/// bad input (check `type()` or `is_*()` first when the input decides the kind).
class value {
public:
    /// One object member: key and value.
    using member = std::pair<std::string, value>;

    /// A null value.
    value() = default;

    /// A null value.
    static value null_value();
    /// `true` or `false`.
    static value boolean(bool b);
    /// A number given by its JSON lexeme, kept verbatim. Throws `std::invalid_argument` unless
    /// `text` matches the RFC 8259 number grammar (e.g. "01", "+1", ".5", "1." are rejected).
    static value number_raw(std::string text);
    /// A number with the decimal text of `v`.
    static value number(long long v);
    /// A string. Throws `std::invalid_argument` unless `s` is valid UTF-8.
    static value string(std::string s);
    /// An empty array.
    static value array();
    /// An empty object.
    static value object();

    /// The kind of this value.
    [[nodiscard]] kind type() const noexcept { return kind_; }
    /// True for null.
    [[nodiscard]] bool is_null() const noexcept { return kind_ == kind::null; }
    /// True for `true` / `false`.
    [[nodiscard]] bool is_boolean() const noexcept { return kind_ == kind::boolean; }
    /// True for numbers.
    [[nodiscard]] bool is_number() const noexcept { return kind_ == kind::number; }
    /// True for strings.
    [[nodiscard]] bool is_string() const noexcept { return kind_ == kind::string; }
    /// True for arrays.
    [[nodiscard]] bool is_array() const noexcept { return kind_ == kind::array; }
    /// True for objects.
    [[nodiscard]] bool is_object() const noexcept { return kind_ == kind::object; }
    /// True for null, booleans, numbers and strings.
    [[nodiscard]] bool is_scalar() const noexcept { return !is_array() && !is_object(); }

    /// Position of the value's first character in the source; unknown for built values.
    [[nodiscard]] const location& where() const noexcept { return where_; }

    /// The boolean. Throws `std::logic_error` unless this is a boolean.
    [[nodiscard]] bool as_bool() const;
    /// The number's lexeme, e.g. "-1.50e+3". Throws `std::logic_error` unless this is a number.
    [[nodiscard]] const std::string& raw_number() const;
    /// The decoded string (UTF-8). Throws `std::logic_error` unless this is a string.
    [[nodiscard]] const std::string& as_string() const;

    /// Number of array elements or object members. Throws `std::logic_error` for scalars.
    [[nodiscard]] std::size_t size() const;
    /// True when an array or object has no elements/members. Throws for scalars.
    [[nodiscard]] bool empty() const { return size() == 0; }

    /// Array element `i`. Throws `std::logic_error` unless this is an array, and
    /// `std::out_of_range` (a `logic_error`) when `i >= size()`.
    [[nodiscard]] const value& operator[](std::size_t i) const;
    /// Mutable array element `i`; same checks as the const overload.
    [[nodiscard]] value& operator[](std::size_t i);
    /// The array's elements. Throws `std::logic_error` unless this is an array.
    [[nodiscard]] const std::vector<value>& elements() const;
    /// Appends to an array and returns the stored element. Throws unless this is an array.
    value& push_back(value v);

    /// The object's members in order. Throws `std::logic_error` unless this is an object.
    [[nodiscard]] const std::vector<member>& members() const;
    /// The member named `key`, or nullptr if absent. Throws unless this is an object.
    [[nodiscard]] const value* find(std::string_view key) const;
    /// Mutable lookup; same rules as the const overload.
    [[nodiscard]] value* find(std::string_view key);
    /// Sets member `key`: replaces the value in place (keeping its position) if present, else
    /// appends. Returns the stored value. Throws `std::logic_error` unless this is an object and
    /// `std::invalid_argument` if `key` is not valid UTF-8.
    value& set(std::string key, value v);

private:
    friend class detail::parser;

    void expect(kind k) const;
    void expect_container() const;

    kind kind_ = kind::null;
    bool bool_ = false;
    location where_{};
    std::string text_; // number lexeme or decoded string
    std::vector<value> elements_;
    std::vector<member> members_;
};

/// Structural equality: same kind, booleans equal, numbers with identical raw text, strings
/// byte-equal, arrays elementwise, objects with the same key set and equal values (member order
/// is not significant). Locations are ignored.
bool operator==(const value& a, const value& b);

/// Thrown by `parse`. `what()` is "line:col: message".
class parse_error : public std::runtime_error {
public:
    /// An error at `where` described by `message` (short, lower-case).
    parse_error(location where, std::string message);

    /// Position of the offending character.
    [[nodiscard]] const location& where() const noexcept { return where_; }
    /// The message without the position prefix.
    [[nodiscard]] const std::string& message() const noexcept { return message_; }

private:
    location where_;
    std::string message_;
};

/// Parses one JSON text (RFC 8259). Throws parse_error. Duplicate object keys are an error
/// ("duplicate key \"k\""), so are trailing characters after the value, nesting deeper than 256,
/// leading zeros ("01"), "+1", ".5", "1.", NaN/Infinity, comments, trailing commas, control
/// characters in strings, invalid escapes, invalid \u escapes and lone surrogates (proper
/// surrogate pairs are decoded to UTF-8), and invalid UTF-8 in the input. A byte order mark is
/// not accepted.
value parse(std::string_view text);

/// Serialises. indent < 0: compact, no spaces. indent >= 0: pretty, with that many spaces per
/// level; an array whose elements are all scalars (null/bool/number/string) and whose one-line
/// form fits in 100 columns at its indentation is printed on one line as `[1, 2, 3]`; empty
/// arrays/objects print as `[]` / `{}`; objects print one member per line `"key": value`.
/// Numbers print their raw text verbatim. Strings are escaped (", \\, control characters as
/// \n \t \r \b \f or \u00xx; all other UTF-8 passes through). No trailing newline is added. The
/// output always re-parses to an equal DOM.
std::string dump(const value& v, int indent = 2);

/// RFC 6901 escaping of one reference token ("~" -> "~0", "/" -> "~1").
std::string pointer_escape(std::string_view token);

/// True when `text` matches the RFC 8259 number grammar exactly.
bool is_number_lexeme(std::string_view text) noexcept;

/// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points above
/// U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

} // namespace attnprop::json
