#pragma once
/// @file verdict.hpp
/// The one verdict vocabulary of attnprop and its one word table: what every command and
/// report says about a claim (a property's case or run, a sweep, a row's comparison with a
/// bound, a cross-entropy with its floor), in the same words in text, Markdown, JSON and CSV
/// (docs/properties.md, "Verdicts"; docs/reports.md).

#include <array>
#include <optional>
#include <string_view>

namespace attnprop {

/// What was decided about a claim.
enum class verdict {
    passed,        ///< decided true (rigorously, or exactly)
    failed,        ///< a witness decided rigorously contradicts it (never a statistic alone)
    undecided,     ///< could not be decided (enclosures overlap, a regime not reached)
    undefined,     ///< a value it needs does not exist (NaN, 0/0, a layer norm at zero variance)
    gave_up,       ///< too few cases could be drawn to decide it (a property's run)
    not_applicable ///< it makes no claim here; the reason is said beside the word
};

/// How a run ended without a verdict.
enum class run_end {
    error,      ///< the test framework reported an error that is no counterexample
    interrupted ///< a stop was requested before the run was done
};

namespace detail {
inline constexpr std::array<std::string_view, 6> verdict_words = {
    "passed", "failed", "undecided", "undefined", "gave-up", "not-applicable"};
inline constexpr std::array<std::string_view, 2> run_end_words = {"error", "interrupted"};
/// Words written before the vocabulary was one, read back from older folders, journals and
/// rows: per-case verdicts, sweep verdicts and row comparisons.
struct legacy_word {
    std::string_view word;
    verdict means;
};
inline constexpr std::array<legacy_word, 7> legacy_words = {{{"holds", verdict::passed},
                                                             {"violated", verdict::failed},
                                                             {"fails", verdict::failed},
                                                             {"hypothesis-violated", verdict::not_applicable},
                                                             {"below", verdict::passed},
                                                             {"above", verdict::failed},
                                                             {"n/a", verdict::not_applicable}}};
} // namespace detail

/// The word of a verdict: "passed", "failed", "undecided", "undefined", "gave-up",
/// "not-applicable".
constexpr std::string_view word(verdict v) { return detail::verdict_words[static_cast<std::size_t>(v)]; }
/// The word of a run's end: "error", "interrupted".
constexpr std::string_view word(run_end e) { return detail::run_end_words[static_cast<std::size_t>(e)]; }
/// word(v) as a NUL-terminated string.
constexpr const char* to_string(verdict v) { return word(v).data(); }

/// The verdict a word of the table names; std::nullopt for any other text.
constexpr std::optional<verdict> verdict_of_word(std::string_view w) {
    for (std::size_t i = 0; i < detail::verdict_words.size(); ++i)
        if (detail::verdict_words[i] == w) return static_cast<verdict>(i);
    return std::nullopt;
}

/// verdict_of_word, also reading the words of earlier versions (holds, violated, fails,
/// hypothesis-violated; the row comparisons below, above, n/a), for files written before.
constexpr std::optional<verdict> verdict_of_any_word(std::string_view w) {
    if (auto v = verdict_of_word(w)) return v;
    for (const auto& l : detail::legacy_words)
        if (l.word == w) return l.means;
    return std::nullopt;
}

} // namespace attnprop
