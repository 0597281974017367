#include "numeric/exact_text.hpp"

#include "numeric/scalar.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace attnprop::numeric {

namespace exact_text_detail {

std::string hex_bits(double x) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bits));
    return buf;
}

void malformed(const std::string& text) {
    throw std::runtime_error("malformed measured value '" + text.substr(0, 80) + "'");
}

double from_hex_bits(const std::string& text, std::size_t at) {
    if (text.size() < at + 16) malformed(text);
    std::uint64_t bits = 0;
    for (std::size_t i = at; i < at + 16; ++i) {
        const char c = text[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) malformed(text);
        bits = (bits << 4) | static_cast<std::uint64_t>(d);
    }
    double x = 0;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

std::pair<long, std::string> split_precision(const std::string& text) {
    const auto sp = text.find(' ');
    if (sp == std::string::npos || sp == 0) malformed(text);
    long prec = 0;
    for (std::size_t i = 0; i < sp; ++i) {
        if (text[i] < '0' || text[i] > '9' || prec > (1L << 40)) malformed(text);
        prec = prec * 10 + (text[i] - '0');
    }
    require_working_precision(prec);
    return {prec, text.substr(sp + 1)};
}

} // namespace exact_text_detail

// double's hooks (scalar.hpp): its bits.
std::string exact_text(double x) { return exact_text_detail::hex_bits(x); }

double scalar_traits<double>::from_exact_text(const std::string& text) {
    if (text.size() != 16) exact_text_detail::malformed(text);
    return exact_text_detail::from_hex_bits(text, 0);
}

} // namespace attnprop::numeric
