// Writing JSON text: dump (compact or indented, strings escaped as RFC 8259 requires) and the
// escaping of RFC 6901 pointer tokens.
#include "model/json.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace attnprop::json {

namespace {

/// The line width of indented dumps: a container that fits on the rest of its line stays on it.
constexpr std::size_t dump_width = 100;

void write_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                out += "\\u00";
                out += hex[(static_cast<unsigned char>(c) >> 4) & 0xF];
                out += hex[static_cast<unsigned char>(c) & 0xF];
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

void write_scalar(std::string& out, const value& v) {
    switch (v.type()) {
    case kind::null:
        out += "null";
        break;
    case kind::boolean:
        out += v.as_bool() ? "true" : "false";
        break;
    case kind::number:
        out += v.raw_number();
        break;
    case kind::string:
        write_string(out, v.as_string());
        break;
    default:
        break;
    }
}

void write_compact(std::string& out, const value& v) {
    if (v.is_array()) {
        out += '[';
        bool first = true;
        for (const value& e : v.elements()) {
            if (!first) {
                out += ',';
            }
            first = false;
            write_compact(out, e);
        }
        out += ']';
    } else if (v.is_object()) {
        out += '{';
        bool first = true;
        for (const auto& [key, member_value] : v.members()) {
            if (!first) {
                out += ',';
            }
            first = false;
            write_string(out, key);
            out += ':';
            write_compact(out, member_value);
        }
        out += '}';
    } else {
        write_scalar(out, v);
    }
}

/// Number of bytes already written on the current output line.
std::size_t current_column(const std::string& out) {
    const std::size_t nl = out.rfind('\n');
    return nl == std::string::npos ? out.size() : out.size() - nl - 1;
}

void newline(std::string& out, std::size_t spaces) {
    out += '\n';
    out.append(spaces, ' ');
}

/// Pretty printer. `trailing` is the number of characters that will follow the value on its
/// line (a comma), so one-line arrays account for it in the width check.
void write_pretty(std::string& out, const value& v, std::size_t indent, std::size_t level,
                  std::size_t trailing) {
    if (v.is_array()) {
        const auto& elements = v.elements();
        if (elements.empty()) {
            out += "[]";
            return;
        }
        bool all_scalar = true;
        for (const value& e : elements) {
            all_scalar = all_scalar && e.is_scalar();
        }
        if (all_scalar) {
            std::string line = "[";
            for (std::size_t i = 0; i < elements.size(); ++i) {
                if (i != 0) {
                    line += ", ";
                }
                write_scalar(line, elements[i]);
            }
            line += ']';
            if (current_column(out) + line.size() + trailing <= dump_width) {
                out += line;
                return;
            }
        }
        out += '[';
        for (std::size_t i = 0; i < elements.size(); ++i) {
            const bool last = i + 1 == elements.size();
            newline(out, indent * (level + 1));
            write_pretty(out, elements[i], indent, level + 1, last ? 0 : 1);
            if (!last) {
                out += ',';
            }
        }
        newline(out, indent * level);
        out += ']';
    } else if (v.is_object()) {
        const auto& members = v.members();
        if (members.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        for (std::size_t i = 0; i < members.size(); ++i) {
            const bool last = i + 1 == members.size();
            newline(out, indent * (level + 1));
            write_string(out, members[i].first);
            out += ": ";
            write_pretty(out, members[i].second, indent, level + 1, last ? 0 : 1);
            if (!last) {
                out += ',';
            }
        }
        newline(out, indent * level);
        out += '}';
    } else {
        write_scalar(out, v);
    }
}

} // namespace

std::string dump(const value& v, int indent) {
    std::string out;
    if (indent < 0) {
        write_compact(out, v);
    } else {
        write_pretty(out, v, static_cast<std::size_t>(indent), 0, 0);
    }
    return out;
}

std::string pointer_escape(std::string_view token) {
    std::string out;
    out.reserve(token.size());
    for (const char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace attnprop::json
