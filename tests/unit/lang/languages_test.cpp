// The languages of the claims (src/lang/languages.cpp): every language's membership oracle
// against a definition written out independently (counts, a counter, a stack) on every word up
// to length 10 over its alphabet and on hand-picked words, and the samplers: uniform words
// over the language's alphabet, uniform Dyck words (balanced, every word of a length drawn
// about equally often), all_words in order. Fixed seeds, printed with each failure.
#include "lang/languages.hpp"

#include "util/precondition.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace attnprop;
using lang::language;

namespace {

/// Membership written out from the definitions, independently of the library's oracle.
bool reference_member(language l, const std::string& w) {
    const std::string a = lang::alphabet_of(l);
    for (char c : w)
        if (a.find(c) == std::string::npos) return false;
    long ones = 0;
    for (char c : w) ones += c == '1';
    switch (l) {
    case language::parity: return ones % 2 == 1;
    case language::first: return !w.empty() && w[0] == '1';
    case language::majority: return ones > static_cast<long>(w.size()) - ones;
    case language::contains_one: return ones > 0;
    case language::dyck1: {
        long depth = 0;
        for (char c : w) {
            depth += c == '(' ? 1 : -1;
            if (depth < 0) return false;
        }
        return depth == 0;
    }
    case language::dyck2: {
        std::string stack;
        for (char c : w) {
            if (c == '(' || c == '[') {
                stack += c;
            } else {
                const char open = c == ')' ? '(' : '[';
                if (stack.empty() || stack.back() != open) return false;
                stack.pop_back();
            }
        }
        return stack.empty();
    }
    }
    return false;
}

/// The Catalan number C_k: the number of balanced words of k bracket pairs of one type.
long catalan(int k) {
    long c = 1;
    for (int t = 0; t < k; ++t) c = c * 2 * (2 * t + 1) / (t + 2);
    return c;
}

} // namespace

TEST_CASE("languages: names, parsing and alphabets", "[lang]") {
    const std::vector<std::string> names = {"parity", "first", "majority", "contains-one", "1dyck", "2dyck"};
    REQUIRE(lang::all_languages().size() == names.size());
    for (std::size_t k = 0; k < names.size(); ++k) {
        const language l = lang::all_languages()[k];
        CHECK(lang::to_string(l) == names[k]);
        CHECK(lang::parse_language(names[k]) == l);
    }
    CHECK_FALSE(lang::parse_language("PARITY").has_value());
    CHECK_FALSE(lang::parse_language("dyck").has_value());
    CHECK_FALSE(lang::parse_language("").has_value());
    CHECK(lang::alphabet_of(language::parity) == "01");
    CHECK(lang::alphabet_of(language::majority) == "01");
    CHECK(lang::alphabet_of(language::dyck1) == "()");
    CHECK(lang::alphabet_of(language::dyck2) == "()[]");
}

TEST_CASE("every oracle agrees with its definition on every word up to length 10", "[lang]") {
    for (language l : lang::all_languages()) {
        const std::string a = lang::alphabet_of(l);
        const std::size_t longest = a.size() == 4 ? 7 : 10;
        std::size_t members = 0, words = 0;
        for (std::size_t len = 0; len <= longest; ++len)
            for (const auto& w : lang::all_words(a, len)) {
                INFO(lang::to_string(l) << ": '" << w << "'");
                const bool in = lang::member(l, w);
                REQUIRE(in == reference_member(l, w));
                members += in;
                ++words;
            }
        INFO(lang::to_string(l) << ": " << members << " members of " << words << " words");
        CHECK(members > 0);
        CHECK(members < words);
    }
}

TEST_CASE("oracles on hand-picked words, and symbols outside the alphabet", "[lang]") {
    CHECK(lang::member(language::parity, "1"));
    CHECK(lang::member(language::parity, "0111"));
    CHECK_FALSE(lang::member(language::parity, ""));
    CHECK_FALSE(lang::member(language::parity, "0110"));
    CHECK(lang::member(language::first, "10"));
    CHECK_FALSE(lang::member(language::first, "01"));
    CHECK_FALSE(lang::member(language::first, ""));
    CHECK(lang::member(language::majority, "110"));
    CHECK_FALSE(lang::member(language::majority, "10")); // a tie is not a majority
    CHECK_FALSE(lang::member(language::majority, ""));
    CHECK(lang::member(language::contains_one, "0001"));
    CHECK_FALSE(lang::member(language::contains_one, "0000"));
    CHECK(lang::member(language::dyck1, ""));
    CHECK(lang::member(language::dyck1, "(()())"));
    CHECK_FALSE(lang::member(language::dyck1, ")("));
    CHECK_FALSE(lang::member(language::dyck1, "(()"));
    CHECK(lang::member(language::dyck2, "([])[]"));
    CHECK_FALSE(lang::member(language::dyck2, "([)]"));
    CHECK_FALSE(lang::member(language::dyck2, "(]"));
    // A symbol outside the alphabet makes a word a non-member.
    CHECK_FALSE(lang::member(language::parity, "12"));
    CHECK_FALSE(lang::member(language::contains_one, "1$"));
    CHECK_FALSE(lang::member(language::dyck1, "()[]"));
    CHECK_FALSE(lang::member(language::dyck2, "(x)"));
}

TEST_CASE("uniform words: the language's alphabet, each symbol about equally often", "[lang]") {
    const std::uint64_t seed = 20260101;
    std::mt19937_64 rng(seed);
    for (language l : lang::all_languages()) {
        const std::string a = lang::alphabet_of(l);
        CHECK(lang::uniform_word(l, 0, rng).empty());
        std::map<char, long> counts;
        const std::size_t length = 4000;
        const std::string w = lang::uniform_word(l, length, rng);
        REQUIRE(w.size() == length);
        for (char c : w) ++counts[c];
        INFO(lang::to_string(l) << " (seed " << seed << ")");
        REQUIRE(counts.size() == a.size());
        for (char c : a) {
            // Binomial(4000, 1/|a|): 6 standard deviations at most.
            const double mean = static_cast<double>(length) / static_cast<double>(a.size());
            const double sd = std::sqrt(mean * (1 - 1.0 / static_cast<double>(a.size())));
            CHECK(std::fabs(static_cast<double>(counts[c]) - mean) <= 6 * sd);
        }
    }
}

TEST_CASE("random Dyck words are balanced and uniform over the balanced words", "[lang]") {
    const std::uint64_t seed = 4242;
    std::mt19937_64 rng(seed);
    for (int types : {1, 2}) {
        const language l = types == 1 ? language::dyck1 : language::dyck2;
        CHECK(lang::random_dyck_word(0, types, rng).empty());
        for (std::size_t length : {2UL, 10UL, 64UL, 300UL})
            for (int k = 0; k < 20; ++k) {
                const std::string w = lang::random_dyck_word(length, types, rng);
                INFO("types " << types << ", length " << length << " (seed " << seed << "): " << w);
                REQUIRE(w.size() == length);
                REQUIRE(lang::member(l, w));
            }
    }
    // Length 8, one type: the 14 balanced words, each about 1/14 of 14000 draws.
    std::map<std::string, long> seen;
    const long draws = 14000;
    for (long k = 0; k < draws; ++k) ++seen[lang::random_dyck_word(8, 1, rng)];
    INFO("seed " << seed);
    REQUIRE(static_cast<long>(seen.size()) == catalan(4));
    for (const auto& [w, c] : seen) {
        INFO(w << ": " << c);
        CHECK(std::fabs(static_cast<double>(c) - 1000.0) <= 6 * std::sqrt(1000.0 * 13.0 / 14.0));
    }
    // Two types at length 4: 2 shapes times 4 type choices, each about 1/8.
    std::map<std::string, long> two;
    for (long k = 0; k < 8000; ++k) ++two[lang::random_dyck_word(4, 2, rng)];
    REQUIRE(two.size() == 8);
    for (const auto& [w, c] : two) {
        INFO(w << ": " << c);
        CHECK(std::fabs(static_cast<double>(c) - 1000.0) <= 6 * std::sqrt(1000.0 * 7.0 / 8.0));
    }
    CHECK_THROWS_AS(lang::random_dyck_word(5, 1, rng), precondition_error);
    CHECK_THROWS_AS(lang::random_dyck_word(4, 3, rng), precondition_error);
}

TEST_CASE("all_words lists every word once, in lexicographic order of symbol index", "[lang]") {
    CHECK(lang::all_words("01", 0) == std::vector<std::string>{""});
    CHECK(lang::all_words("10", 2) == std::vector<std::string>{"11", "10", "01", "00"});
    const auto w = lang::all_words("()[]", 3);
    REQUIRE(w.size() == 64);
    CHECK(w.front() == "(((");
    CHECK(w[1] == "(()");
    CHECK(w.back() == "]]]");
    auto sorted = w;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    CHECK(lang::all_words("", 2).empty());
    // The members of 1DYCK of length 2k are the Catalan number C_k.
    for (int k = 0; k <= 5; ++k) {
        long members = 0;
        for (const auto& x : lang::all_words("()", static_cast<std::size_t>(2 * k)))
            members += lang::member(language::dyck1, x);
        CHECK(members == catalan(k));
    }
}
