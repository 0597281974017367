// The one verdict vocabulary (util/verdict.hpp): one word per verdict, read back, and the words
// of earlier versions read as the verdicts they meant.
#include "util/verdict.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace attnprop;

TEST_CASE("every verdict has one word, and the word reads back as it", "[util][verdict]") {
    std::set<std::string> words;
    for (verdict v : {verdict::passed, verdict::failed, verdict::undecided, verdict::undefined,
                      verdict::gave_up, verdict::not_applicable}) {
        const std::string w(word(v));
        INFO(w);
        REQUIRE(words.insert(w).second);
        REQUIRE(verdict_of_word(w) == v);
        REQUIRE(std::string(to_string(v)) == w);
    }
    REQUIRE(words == std::set<std::string>{"passed", "failed", "undecided", "undefined", "gave-up",
                                           "not-applicable"});
    REQUIRE(std::string(word(run_end::error)) == "error");
    REQUIRE(std::string(word(run_end::interrupted)) == "interrupted");
}

TEST_CASE("the words of earlier versions are read, but are no words of the table", "[util][verdict]") {
    REQUIRE(verdict_of_any_word("holds") == verdict::passed);
    REQUIRE(verdict_of_any_word("violated") == verdict::failed);
    REQUIRE(verdict_of_any_word("fails") == verdict::failed);
    REQUIRE(verdict_of_any_word("hypothesis-violated") == verdict::not_applicable);
    REQUIRE(verdict_of_any_word("below") == verdict::passed);
    REQUIRE(verdict_of_any_word("above") == verdict::failed);
    REQUIRE(verdict_of_any_word("n/a") == verdict::not_applicable);
    for (const char* old : {"holds", "violated", "fails", "hypothesis-violated", "below", "above", "n/a"})
        REQUIRE_FALSE(verdict_of_word(old).has_value());
    REQUIRE_FALSE(verdict_of_any_word("maybe").has_value());
    REQUIRE_FALSE(verdict_of_any_word("").has_value());
}
