#pragma once
/// @file exact_text.hpp
/// The pieces the kinds' exact text hooks are made of. Every user kind has `exact_text(x)` (an
/// overload in its header) and `scalar_traits<S>::from_exact_text(text)`, which gives back the
/// very same value: doubles and intervals' ends by their bits (16 hexadecimal digits each), MPFR
/// numbers in hexadecimal with every digit of the significand after their precision ("256
/// -0.8f3@1"), balls as Arb's exact dump after their precision, exact rationals as p/q. Values
/// cross threads, processes and journals in this form (the influence sweep's units).

#include <cstddef>
#include <string>
#include <utility>

namespace attnprop::numeric::exact_text_detail {

/// The 64 bits of x as 16 lowercase hexadecimal digits.
std::string hex_bits(double x);
/// The double whose bits are the 16 hexadecimal digits of `text` at `at` (malformed otherwise).
double from_hex_bits(const std::string& text, std::size_t at);
/// "PREC TEXT": the precision in bits (a working precision, numeric::require_working_precision)
/// and the rest (malformed otherwise).
std::pair<long, std::string> split_precision(const std::string& text);
/// Throws std::runtime_error naming the text ("malformed measured value '...'").
[[noreturn]] void malformed(const std::string& text);

} // namespace attnprop::numeric::exact_text_detail
