#include "report/provenance.hpp"

#include <algorithm>

namespace attnprop::report {

using json::value;

const std::string* provenance::option(std::string_view name) const {
    for (const auto& [k, v] : options)
        if (k == name) return &v;
    return nullptr;
}

void provenance::set_option(const std::string& name, std::string v) {
    for (auto& [k, old] : options)
        if (k == name) {
            old = std::move(v);
            return;
        }
    options.emplace_back(name, std::move(v));
}

std::string shell_quote(std::string_view word) {
    auto plain = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("_-./:,=+@%").find(c) != std::string_view::npos;
    };
    if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return std::string(word);
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string shell_join(int argc, const char* const* argv) {
    std::string out;
    for (int i = 0; i < argc; ++i) {
        if (i) out += ' ';
        out += shell_quote(argv[i] ? argv[i] : "");
    }
    return out;
}

namespace {

/// A JSON string of `s`; bytes of invalid UTF-8 (an argument in another encoding) become '?'.
value text(const std::string& s) {
    if (json::is_valid_utf8(s)) return value::string(s);
    std::string ascii = s;
    for (char& c : ascii)
        if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    return value::string(ascii);
}

} // namespace

value provenance_to_json(const provenance& p) {
    value o = value::object();
    o.set("attnprop_version", text(p.version));
    o.set("commit", text(p.commit));
    o.set("commit_dirty", p.dirty ? value::boolean(*p.dirty) : value::null_value());
    o.set("command_line", text(p.command_line));
    value opts = value::object();
    for (const auto& [k, v] : p.options) opts.set(k, text(v));
    o.set("options", std::move(opts));
    return o;
}

std::optional<provenance> provenance_from_json(const value& doc) {
    if (!doc.is_object()) return std::nullopt;
    const value* pv = doc.find("provenance");
    if (!pv || !pv->is_object()) return std::nullopt;
    auto string_of = [&](const char* key) -> const value* {
        const value* v = pv->find(key);
        return v && v->is_string() ? v : nullptr;
    };
    const value* version = string_of("attnprop_version");
    const value* opts = pv->find("options");
    if (!version || !opts || !opts->is_object()) return std::nullopt;
    provenance p;
    p.version = version->as_string();
    if (const value* c = string_of("commit")) p.commit = c->as_string();
    if (const value* d = pv->find("commit_dirty"); d && d->is_boolean()) p.dirty = d->as_bool();
    if (const value* c = string_of("command_line")) p.command_line = c->as_string();
    for (const auto& [k, v] : opts->members()) {
        if (!v.is_string()) return std::nullopt;
        p.options.emplace_back(k, v.as_string());
    }
    return p;
}

namespace {

/// `text` as a Markdown code span (a longer fence when it holds backticks).
std::string code(const std::string& text) {
    const std::string fence = text.find('`') == std::string::npos ? "`" : "`` ";
    const std::string close = fence == "`" ? "`" : " ``";
    return fence + text + close;
}

} // namespace

std::string provenance_to_markdown(const provenance& p) {
    std::string s = "## Provenance\n\n";
    s += "- attnprop " + p.version + ", commit " + code(p.commit);
    if (p.dirty) s += *p.dirty ? " (with modified tracked files)" : " (clean)";
    s += "\n- command: " + code(p.command_line) + "\n";
    s += "- options:";
    for (const auto& [k, v] : p.options) s += " " + code(option_text(k, v));
    s += "\n";
    return s;
}

std::string option_text(const std::string& name, const std::string& v) {
    return name + " " + shell_quote(v);
}

std::vector<std::string> differing_options(const provenance& recorded, const provenance& now,
                                           const std::vector<std::string>& ignored) {
    auto skip = [&](const std::string& k) {
        return std::find(ignored.begin(), ignored.end(), k) != ignored.end();
    };
    std::vector<std::string> out;
    for (const auto& [k, v] : now.options) {
        if (skip(k)) continue;
        const std::string* old = recorded.option(k);
        if (!old || *old != v) out.push_back(k);
    }
    for (const auto& [k, v] : recorded.options)
        if (!skip(k) && !now.option(k)) out.push_back(k);
    return out;
}

} // namespace attnprop::report
