#include "dist/wire.hpp"

#include <cstring>
#include <stdexcept>

namespace attnprop::dist {

namespace {

[[noreturn]] void malformed(const char* what) {
    throw std::runtime_error(std::string("attnprop: malformed result between ranks: ") + what);
}

} // namespace

void writer::u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void writer::f64(double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
}

void writer::str(std::string_view s) {
    u64(s.size());
    out_.append(s);
}

void writer::rat(const numeric::rational& q) { str(numeric::to_exact_string(q)); }

void writer::opt_str(const std::optional<std::string>& s) {
    boolean(s.has_value());
    if (s) str(*s);
}

void writer::strings(const std::vector<std::string>& v) {
    u64(v.size());
    for (const auto& s : v) str(s);
}

void writer::string_pairs(const std::vector<std::pair<std::string, std::string>>& v) {
    u64(v.size());
    for (const auto& [a, b] : v) {
        str(a);
        str(b);
    }
}

void writer::long_map(const std::map<std::string, long>& m) {
    u64(m.size());
    for (const auto& [k, v] : m) {
        str(k);
        i64(v);
    }
}

void writer::int_map(const std::map<std::string, int>& m) {
    u64(m.size());
    for (const auto& [k, v] : m) {
        str(k);
        i64(v);
    }
}

void writer::rats(const std::vector<numeric::rational>& v) {
    u64(v.size());
    for (const auto& q : v) rat(q);
}

std::uint64_t reader::u64() {
    if (in_.size() - at_ < 8) malformed("truncated");
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in_[at_ + static_cast<std::size_t>(i)]);
    at_ += 8;
    return v;
}

double reader::f64() {
    const std::uint64_t bits = u64();
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

std::string reader::str() {
    const std::uint64_t n = u64();
    if (n > in_.size() - at_) malformed("truncated string");
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
}

numeric::rational reader::rat() {
    const std::string text = str();
    auto q = numeric::parse_rational(text);
    if (!q) malformed("not a rational");
    return *q;
}

std::optional<std::string> reader::opt_str() {
    if (!boolean()) return std::nullopt;
    return str();
}

std::size_t reader::count() {
    const std::uint64_t n = u64();
    if (n > (in_.size() - at_) / 8 + 1) malformed("count beyond the bytes");
    return static_cast<std::size_t>(n);
}

std::vector<std::string> reader::strings() {
    std::vector<std::string> v(count());
    for (auto& s : v) s = str();
    return v;
}

std::vector<std::pair<std::string, std::string>> reader::string_pairs() {
    std::vector<std::pair<std::string, std::string>> v(count());
    for (auto& [a, b] : v) {
        a = str();
        b = str();
    }
    return v;
}

std::map<std::string, long> reader::long_map() {
    std::map<std::string, long> m;
    for (std::size_t i = 0, n = count(); i < n; ++i) {
        std::string k = str();
        m[k] = static_cast<long>(i64());
    }
    return m;
}

std::map<std::string, int> reader::int_map() {
    std::map<std::string, int> m;
    for (std::size_t i = 0, n = count(); i < n; ++i) {
        std::string k = str();
        m[k] = static_cast<int>(i64());
    }
    return m;
}

std::vector<numeric::rational> reader::rats() {
    std::vector<numeric::rational> v(count());
    for (auto& q : v) q = rat();
    return v;
}

void reader::finish() const {
    if (at_ != in_.size()) malformed("bytes left over");
}

} // namespace attnprop::dist
