#pragma once
/// @file languages.hpp
/// The formal languages of the claims: membership oracles and samplers.
/// PARITY (odd number of 1s), FIRST (x_1 = 1), MAJORITY (more 1s than 0s), CONTAINS-ONE,
/// 1DYCK (balanced "()"), 2DYCK (balanced "()[]").

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace attnprop::lang {

enum class language { parity, first, majority, contains_one, dyck1, dyck2 };

/// Every language, in a fixed order.
const std::vector<language>& all_languages();

/// "parity", "first", "majority", "contains-one", "1dyck", "2dyck".
const char* to_string(language l);
std::optional<language> parse_language(std::string_view name);

/// Every language's name for messages, in all_languages()'s order: "parity, first, ..., 2dyck".
std::string language_names();

/// The language's alphabet as a string of single-character symbols ("01", "()", "()[]").
std::string alphabet_of(language l);

/// Membership of a word over the language's alphabet. Symbols outside it make the word a
/// non-member.
bool member(language l, std::string_view w);

/// A uniformly random word of the given length over the language's alphabet.
std::string uniform_word(language l, std::size_t length, std::mt19937_64& rng);

/// A uniformly random balanced word of even length over the Dyck alphabet with `types`
/// bracket types (1 or 2); length must be even.
std::string random_dyck_word(std::size_t length, int types, std::mt19937_64& rng);

/// Every word of the given length over an alphabet, in lexicographic order of symbol index.
std::vector<std::string> all_words(std::string_view alphabet, std::size_t length);

} // namespace attnprop::lang
