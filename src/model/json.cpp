#include "model/json.hpp"

#include <cstdint>
#include <type_traits>
#include <unordered_set>

namespace attnprop::json {

static_assert(std::is_nothrow_move_constructible_v<value> &&
                  std::is_nothrow_move_assignable_v<value>,
              "json::value is moved a lot");

namespace {

constexpr std::size_t max_depth = 256;
constexpr std::size_t max_shown_lexeme = 40;
constexpr std::size_t linear_key_scan_limit = 16;

bool is_digit(char c) noexcept {
    return c >= '0' && c <= '9';
}

bool is_hex(char c) noexcept {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

unsigned hex_value(char c) noexcept {
    if (is_digit(c)) {
        return static_cast<unsigned>(c - '0');
    }
    if (c >= 'a' && c <= 'f') {
        return static_cast<unsigned>(c - 'a' + 10);
    }
    return static_cast<unsigned>(c - 'A' + 10);
}

bool in_range(unsigned char c, unsigned lo, unsigned hi) noexcept {
    return c >= lo && c <= hi;
}

/// Length of the well-formed UTF-8 sequence starting at `pos` (Unicode Table 3-7), 0 if the
/// bytes there are not one.
std::size_t utf8_length(std::string_view s, std::size_t pos) noexcept {
    const std::size_t n = s.size() - pos;
    auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[pos + k]); };
    const unsigned char b0 = at(0);
    if (b0 < 0x80) {
        return 1;
    }
    if (in_range(b0, 0xC2, 0xDF)) {
        return n >= 2 && in_range(at(1), 0x80, 0xBF) ? 2 : 0;
    }
    if (in_range(b0, 0xE0, 0xEF)) {
        if (n < 3) {
            return 0;
        }
        const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
        const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
        return in_range(at(1), lo, hi) && in_range(at(2), 0x80, 0xBF) ? 3 : 0;
    }
    if (in_range(b0, 0xF0, 0xF4)) {
        if (n < 4) {
            return 0;
        }
        const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
        const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
        return in_range(at(1), lo, hi) && in_range(at(2), 0x80, 0xBF) && in_range(at(3), 0x80, 0xBF)
                   ? 4
                   : 0;
    }
    return 0;
}

/// Decodes a well-formed sequence of length `len` at `pos`.
std::uint32_t utf8_decode(std::string_view s, std::size_t pos, std::size_t len) noexcept {
    auto at = [&](std::size_t k) {
        return static_cast<std::uint32_t>(static_cast<unsigned char>(s[pos + k]));
    };
    switch (len) {
    case 1:
        return at(0);
    case 2:
        return ((at(0) & 0x1Fu) << 6) | (at(1) & 0x3Fu);
    case 3:
        return ((at(0) & 0x0Fu) << 12) | ((at(1) & 0x3Fu) << 6) | (at(2) & 0x3Fu);
    default:
        return ((at(0) & 0x07u) << 18) | ((at(1) & 0x3Fu) << 12) | ((at(2) & 0x3Fu) << 6) |
               (at(3) & 0x3Fu);
    }
}

void utf8_append(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

/// "U+XXXX" (at least four upper-case hex digits).
std::string code_point_name(std::uint32_t cp) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string hex;
    do {
        hex.insert(hex.begin(), digits[cp & 0xF]);
        cp >>= 4;
    } while (cp != 0);
    while (hex.size() < 4) {
        hex.insert(hex.begin(), '0');
    }
    return "U+" + hex;
}

/// Shortens long lexemes quoted in error messages.
std::string shown(std::string_view lexeme) {
    if (lexeme.size() <= max_shown_lexeme) {
        return std::string(lexeme);
    }
    return std::string(lexeme.substr(0, max_shown_lexeme)) + "...";
}

std::string format_error(const location& where, const std::string& message) {
    if (!where.known()) {
        return message;
    }
    return to_string(where) + ": " + message;
}

[[noreturn]] void wrong_kind(kind actual, const char* wanted) {
    throw std::logic_error(std::string("json: value is ") + kind_name(actual) + ", expected " +
                           wanted);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// location, kind

std::string to_string(const location& where) {
    if (!where.known()) {
        return "?";
    }
    return std::to_string(where.line) + ":" + std::to_string(where.column);
}

const char* kind_name(kind k) noexcept {
    switch (k) {
    case kind::null:
        return "null";
    case kind::boolean:
        return "boolean";
    case kind::number:
        return "number";
    case kind::string:
        return "string";
    case kind::array:
        return "array";
    case kind::object:
        return "object";
    }
    return "null";
}

bool is_number_lexeme(std::string_view s) noexcept {
    std::size_t i = 0;
    const std::size_t n = s.size();
    if (i < n && s[i] == '-') {
        ++i;
    }
    if (i == n) {
        return false;
    }
    if (s[i] == '0') {
        ++i;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < n && is_digit(s[i])) {
            ++i;
        }
    } else {
        return false;
    }
    if (i < n && s[i] == '.') {
        ++i;
        if (i == n || !is_digit(s[i])) {
            return false;
        }
        while (i < n && is_digit(s[i])) {
            ++i;
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            ++i;
        }
        if (i == n || !is_digit(s[i])) {
            return false;
        }
        while (i < n && is_digit(s[i])) {
            ++i;
        }
    }
    return i == n;
}

bool is_valid_utf8(std::string_view text) noexcept {
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t len = utf8_length(text, pos);
        if (len == 0) {
            return false;
        }
        pos += len;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// value

value value::null_value() {
    return value();
}

value value::boolean(bool b) {
    value v;
    v.kind_ = kind::boolean;
    v.bool_ = b;
    return v;
}

value value::number_raw(std::string text) {
    if (!is_number_lexeme(text)) {
        throw std::invalid_argument("json: invalid number '" + shown(text) + "'");
    }
    value v;
    v.kind_ = kind::number;
    v.text_ = std::move(text);
    return v;
}

value value::number(long long n) {
    value v;
    v.kind_ = kind::number;
    v.text_ = std::to_string(n);
    return v;
}

value value::string(std::string s) {
    if (!is_valid_utf8(s)) {
        throw std::invalid_argument("json: string is not valid UTF-8");
    }
    value v;
    v.kind_ = kind::string;
    v.text_ = std::move(s);
    return v;
}

value value::array() {
    value v;
    v.kind_ = kind::array;
    return v;
}

value value::object() {
    value v;
    v.kind_ = kind::object;
    return v;
}

void value::expect(kind k) const {
    if (kind_ != k) {
        wrong_kind(kind_, kind_name(k));
    }
}

void value::expect_container() const {
    if (!is_array() && !is_object()) {
        wrong_kind(kind_, "array or object");
    }
}

bool value::as_bool() const {
    expect(kind::boolean);
    return bool_;
}

const std::string& value::raw_number() const {
    expect(kind::number);
    return text_;
}

const std::string& value::as_string() const {
    expect(kind::string);
    return text_;
}

std::size_t value::size() const {
    expect_container();
    return is_array() ? elements_.size() : members_.size();
}

const value& value::operator[](std::size_t i) const {
    expect(kind::array);
    if (i >= elements_.size()) {
        throw std::out_of_range("json: array index " + std::to_string(i) + " out of range (size " +
                                std::to_string(elements_.size()) + ")");
    }
    return elements_[i];
}

value& value::operator[](std::size_t i) {
    return const_cast<value&>(static_cast<const value&>(*this)[i]);
}

const std::vector<value>& value::elements() const {
    expect(kind::array);
    return elements_;
}

value& value::push_back(value v) {
    expect(kind::array);
    elements_.push_back(std::move(v));
    return elements_.back();
}

const std::vector<value::member>& value::members() const {
    expect(kind::object);
    return members_;
}

const value* value::find(std::string_view key) const {
    expect(kind::object);
    for (const member& m : members_) {
        if (m.first == key) {
            return &m.second;
        }
    }
    return nullptr;
}

value* value::find(std::string_view key) {
    return const_cast<value*>(static_cast<const value&>(*this).find(key));
}

value& value::set(std::string key, value v) {
    expect(kind::object);
    if (value* existing = find(key)) {
        *existing = std::move(v);
        return *existing;
    }
    if (!is_valid_utf8(key)) {
        throw std::invalid_argument("json: object key is not valid UTF-8");
    }
    members_.emplace_back(std::move(key), std::move(v));
    return members_.back().second;
}

bool operator==(const value& a, const value& b) {
    if (a.type() != b.type()) {
        return false;
    }
    switch (a.type()) {
    case kind::null:
        return true;
    case kind::boolean:
        return a.as_bool() == b.as_bool();
    case kind::number:
        return a.raw_number() == b.raw_number();
    case kind::string:
        return a.as_string() == b.as_string();
    case kind::array:
        return a.elements() == b.elements();
    case kind::object: {
        const auto& am = a.members();
        const auto& bm = b.members();
        if (am.size() != bm.size()) {
            return false;
        }
        for (std::size_t i = 0; i < am.size(); ++i) {
            // Fast path: same key at the same position; otherwise look the key up (keys are
            // unique within an object, so equal sizes plus every key found means equal sets).
            const value* other = bm[i].first == am[i].first ? &bm[i].second : b.find(am[i].first);
            if (other == nullptr || !(am[i].second == *other)) {
                return false;
            }
        }
        return true;
    }
    }
    return false;
}

// ---------------------------------------------------------------------------------------------
// parse_error

parse_error::parse_error(location where, std::string message)
    : std::runtime_error(format_error(where, message)), where_(where),
      message_(std::move(message)) {}

// ---------------------------------------------------------------------------------------------
// parser

namespace detail {

/// Recursive-descent parser over one input text. `depth` arguments count the containers that
/// enclose the value being parsed.
class parser {
public:
    explicit parser(std::string_view text) : text_(text) {}

    value parse_document() {
        value v = parse_value(0);
        skip_ws();
        if (!at_end()) {
            fail(here(), "trailing characters after JSON value");
        }
        return v;
    }

private:
    [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
    [[nodiscard]] char peek() const noexcept { return text_[pos_]; }

    /// Location of `pos`, which must lie on the current line (strings and tokens never span
    /// lines; only whitespace contains newlines).
    [[nodiscard]] location loc(std::size_t pos) const noexcept {
        return {line_, pos - line_start_ + 1};
    }
    [[nodiscard]] location here() const noexcept { return loc(pos_); }

    [[noreturn]] static void fail(location where, std::string message) {
        throw parse_error(where, std::move(message));
    }

    [[noreturn]] void fail_end() const { fail(here(), "unexpected end of input"); }

    /// Rejects the character at `pos_` as the start of a value / token.
    [[noreturn]] void fail_unexpected() const {
        const auto c = static_cast<unsigned char>(peek());
        if (c >= 0x20 && c < 0x7F) {
            fail(here(), std::string("unexpected character '") + static_cast<char>(c) + "'");
        }
        if (c < 0x80) {
            fail(here(), "unexpected character " + code_point_name(c));
        }
        const std::size_t len = utf8_length(text_, pos_);
        if (len == 0) {
            fail(here(), "invalid UTF-8");
        }
        fail(here(), "unexpected character " + code_point_name(utf8_decode(text_, pos_, len)));
    }

    void skip_ws() {
        while (!at_end()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (c == '\n') {
                ++pos_;
                ++line_;
                line_start_ = pos_;
            } else if (c == '/' && pos_ + 1 < text_.size() &&
                       (text_[pos_ + 1] == '/' || text_[pos_ + 1] == '*')) {
                fail(here(), "comments are not allowed");
            } else {
                return;
            }
        }
    }

    value parse_value(std::size_t depth) {
        skip_ws();
        if (at_end()) {
            fail_end();
        }
        const char c = peek();
        switch (c) {
        case '{':
            return parse_object(depth);
        case '[':
            return parse_array(depth);
        case '"': {
            value v;
            v.kind_ = kind::string;
            v.where_ = here();
            v.text_ = parse_string();
            return v;
        }
        case 't':
        case 'f':
        case 'n':
            return parse_literal();
        default:
            if (c == '-' || c == '+' || c == '.' || is_digit(c)) {
                return parse_number();
            }
            fail_unexpected();
        }
    }

    static bool is_word_char(char c) noexcept {
        return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }

    value parse_literal() {
        const std::size_t start = pos_;
        while (!at_end() && is_word_char(peek())) {
            ++pos_;
        }
        const std::string_view word = text_.substr(start, pos_ - start);
        value v;
        v.where_ = loc(start);
        if (word == "true" || word == "false") {
            v.kind_ = kind::boolean;
            v.bool_ = word == "true";
        } else if (word != "null") {
            fail(v.where_, "invalid literal '" + shown(word) + "'");
        }
        return v;
    }

    value parse_number() {
        const std::size_t start = pos_;
        // Take the maximal run of characters that could belong to a number-like token, so that
        // "01", "1.", "1.5.3" or "-Infinity" are reported whole rather than split.
        while (!at_end() &&
               (is_word_char(peek()) || peek() == '+' || peek() == '-' || peek() == '.')) {
            ++pos_;
        }
        const std::string_view lexeme = text_.substr(start, pos_ - start);
        if (!is_number_lexeme(lexeme)) {
            fail(loc(start), "invalid number '" + shown(lexeme) + "'");
        }
        value v;
        v.kind_ = kind::number;
        v.where_ = loc(start);
        v.text_ = std::string(lexeme);
        return v;
    }

    /// Reads 4 hex digits at `p`; false if they are not there.
    [[nodiscard]] bool read_hex4(std::size_t p, std::uint32_t& out) const noexcept {
        if (p + 4 > text_.size()) {
            return false;
        }
        std::uint32_t r = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char h = text_[p + k];
            if (!is_hex(h)) {
                return false;
            }
            r = (r << 4) | hex_value(h);
        }
        out = r;
        return true;
    }

    /// Parses the string starting at the opening quote at `pos_`; returns the decoded text.
    std::string parse_string() {
        const location start = here();
        ++pos_;
        std::string out;
        for (;;) {
            // Fast path: copy a run of plain printable ASCII in one go.
            const std::size_t run = pos_;
            while (!at_end()) {
                const auto b = static_cast<unsigned char>(peek());
                if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\') {
                    break;
                }
                ++pos_;
            }
            out.append(text_.data() + run, pos_ - run);
            if (at_end()) {
                fail(start, "unterminated string");
            }
            const auto b = static_cast<unsigned char>(peek());
            if (b == '"') {
                ++pos_;
                return out;
            }
            if (b == '\\') {
                parse_escape(out, start);
            } else if (b < 0x20) {
                fail(here(), "control character in string");
            } else {
                const std::size_t len = utf8_length(text_, pos_);
                if (len == 0) {
                    fail(here(), "invalid UTF-8");
                }
                out.append(text_.data() + pos_, len);
                pos_ += len;
            }
        }
    }

    /// Parses one escape sequence at `pos_` (the backslash) and appends its text.
    void parse_escape(std::string& out, const location& string_start) {
        const std::size_t esc = pos_;
        if (esc + 1 >= text_.size()) {
            fail(string_start, "unterminated string");
        }
        const char e = text_[esc + 1];
        switch (e) {
        case '"':
            out += '"';
            break;
        case '\\':
            out += '\\';
            break;
        case '/':
            out += '/';
            break;
        case 'b':
            out += '\b';
            break;
        case 'f':
            out += '\f';
            break;
        case 'n':
            out += '\n';
            break;
        case 'r':
            out += '\r';
            break;
        case 't':
            out += '\t';
            break;
        case 'u':
            parse_unicode_escape(out);
            return;
        default: {
            const auto eb = static_cast<unsigned char>(e);
            if (eb >= 0x20 && eb < 0x7F) {
                fail(loc(esc), std::string("invalid escape '\\") + e + "'");
            }
            fail(loc(esc), "invalid escape sequence");
        }
        }
        pos_ = esc + 2;
    }

    /// Parses `\uXXXX` (and a following low surrogate escape) at `pos_`.
    void parse_unicode_escape(std::string& out) {
        const std::size_t esc = pos_;
        std::uint32_t cp = 0;
        if (!read_hex4(esc + 2, cp)) {
            fail(loc(esc), "invalid \\u escape");
        }
        pos_ = esc + 6;
        const std::string written(text_.substr(esc, 6));
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail(loc(esc), "lone surrogate '" + written + "'");
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t low = 0;
            if (pos_ + 1 < text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == 'u' &&
                read_hex4(pos_ + 2, low) && low >= 0xDC00 && low <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                pos_ += 6;
            } else {
                fail(loc(esc), "lone surrogate '" + written + "'");
            }
        }
        utf8_append(out, cp);
    }

    value parse_array(std::size_t depth) {
        const location start = here();
        if (depth + 1 > max_depth) {
            fail(start, "nesting deeper than " + std::to_string(max_depth) + " levels");
        }
        ++pos_;
        value v;
        v.kind_ = kind::array;
        v.where_ = start;
        skip_ws();
        if (at_end()) {
            fail_end();
        }
        if (peek() == ']') {
            ++pos_;
            return v;
        }
        for (;;) {
            v.elements_.push_back(parse_value(depth + 1));
            skip_ws();
            if (at_end()) {
                fail_end();
            }
            if (peek() == ']') {
                ++pos_;
                return v;
            }
            if (peek() != ',') {
                fail(here(), "expected ',' or ']' in array");
            }
            const location comma = here();
            ++pos_;
            skip_ws();
            if (!at_end() && peek() == ']') {
                fail(comma, "trailing comma in array");
            }
        }
    }

    value parse_object(std::size_t depth) {
        const location start = here();
        if (depth + 1 > max_depth) {
            fail(start, "nesting deeper than " + std::to_string(max_depth) + " levels");
        }
        ++pos_;
        value v;
        v.kind_ = kind::object;
        v.where_ = start;
        skip_ws();
        if (at_end()) {
            fail_end();
        }
        if (peek() == '}') {
            ++pos_;
            return v;
        }
        if (peek() != '"') {
            fail(here(), "expected string key or '}' in object");
        }
        std::unordered_set<std::string> seen; // used only once the object gets large
        for (;;) {
            const location key_at = here();
            std::string key = parse_string();
            if (is_duplicate(v.members_, seen, key)) {
                fail(key_at, "duplicate key \"" + escape_for_message(key) + "\"");
            }
            skip_ws();
            if (at_end()) {
                fail_end();
            }
            if (peek() != ':') {
                fail(here(), "expected ':' after object key");
            }
            ++pos_;
            value member_value = parse_value(depth + 1);
            v.members_.emplace_back(std::move(key), std::move(member_value));
            skip_ws();
            if (at_end()) {
                fail_end();
            }
            if (peek() == '}') {
                ++pos_;
                return v;
            }
            if (peek() != ',') {
                fail(here(), "expected ',' or '}' in object");
            }
            const location comma = here();
            ++pos_;
            skip_ws();
            if (at_end()) {
                fail_end();
            }
            if (peek() == '}') {
                fail(comma, "trailing comma in object");
            }
            if (peek() != '"') {
                fail(here(), "expected string key in object");
            }
        }
    }

    /// Checks `key` against the keys so far; small objects scan, large ones use `seen`.
    static bool is_duplicate(const std::vector<value::member>& members,
                             std::unordered_set<std::string>& seen, const std::string& key) {
        if (members.size() < linear_key_scan_limit) {
            for (const auto& m : members) {
                if (m.first == key) {
                    return true;
                }
            }
            return false;
        }
        if (seen.empty()) {
            for (const auto& m : members) {
                seen.insert(m.first);
            }
        }
        return !seen.insert(key).second;
    }

    /// Key text for an error message: quotes, backslashes and control characters escaped.
    static std::string escape_for_message(const std::string& key) {
        std::string s = dump(value::string(key), -1);
        s = s.substr(1, s.size() - 2);
        return shown(s);
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;
    std::size_t line_start_ = 0;
};

} // namespace detail

value parse(std::string_view text) {
    return detail::parser(text).parse_document();
}

} // namespace attnprop::json
