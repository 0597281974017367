#pragma once
/// @file wire.hpp
/// The bytes of a unit's result between ranks: a flat little-endian encoding of integers,
/// doubles (their bits: exact), booleans, strings and exact rationals (their "p/q" text).
/// Both ends run the same binary, so there is no versioning; a reader that runs past the end
/// or is left with bytes throws std::runtime_error.

#include "numeric/rational.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnprop::dist {

/// Appends values to a byte string; every value is read back by the reader method of the same
/// name, in the same order.
class writer {
public:
    void u64(std::uint64_t v);
    void i64(long long v) { u64(static_cast<std::uint64_t>(v)); }
    void f64(double v);
    void boolean(bool b) { u64(b ? 1 : 0); }
    void str(std::string_view s);
    void rat(const numeric::rational& q);
    void opt_str(const std::optional<std::string>& s);
    void strings(const std::vector<std::string>& v);
    void string_pairs(const std::vector<std::pair<std::string, std::string>>& v);
    void long_map(const std::map<std::string, long>& m);
    void int_map(const std::map<std::string, int>& m);
    void rats(const std::vector<numeric::rational>& v);
    /// The bytes written (the writer is left empty).
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

/// Reads what a writer wrote, in the same order. Every method throws std::runtime_error
/// ("malformed result between ranks: ...") instead of reading past the end; rat() also when
/// the text is not an exact rational.
class reader {
public:
    explicit reader(std::string_view bytes) : in_(bytes) {}
    std::uint64_t u64();
    long long i64() { return static_cast<long long>(u64()); }
    double f64();
    bool boolean() { return u64() != 0; }
    std::string str();
    numeric::rational rat();
    std::optional<std::string> opt_str();
    std::vector<std::string> strings();
    std::vector<std::pair<std::string, std::string>> string_pairs();
    std::map<std::string, long> long_map();
    std::map<std::string, int> int_map();
    std::vector<numeric::rational> rats();
    /// A count of following items, checked against the bytes left (each item takes >= 8).
    std::size_t count();
    /// Throws unless every byte was read.
    void finish() const;

private:
    std::string_view in_;
    std::size_t at_ = 0;
};

} // namespace attnprop::dist
