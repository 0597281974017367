// The registry of attention kinds (model/attention_kind.hpp): every enumerator of
// model::attention_kind has its row, found at compile time (a kind added to the enum without a
// row does not compile here), the rows' facts agree with each other, and the model file's
// names round-trip. The recipe of docs/architecture.md, "Adding an attention kind", rests on
// this: every other question about a kind goes through the registry (tests/attention_kinds.sh).
#include "model/attention_kind.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

using namespace attnprop;
using model::attention_kind;

namespace {

/// Whether the value V of the enum is one of its enumerators: GCC and Clang print a template
/// argument of enumeration type as its name when it has one ("... V = attnprop::model::
/// attention_kind::soft]") and as a cast otherwise ("... V = (attnprop::model::
/// attention_kind)3]").
template <attention_kind V> constexpr bool is_enumerator() {
    constexpr std::string_view f = __PRETTY_FUNCTION__;
    constexpr std::string_view tag = "V = ";
    constexpr auto at = f.find(tag);
    static_assert(at != std::string_view::npos, "unexpected __PRETTY_FUNCTION__ format");
    return f[at + tag.size()] != '(';
}

/// How many of the values 0 .. 63 are enumerators (the enum's values are consecutive from 0:
/// an enumerator is the first value that is not one).
template <std::size_t... I> constexpr std::size_t count_enumerators(std::index_sequence<I...>) {
    return (std::size_t{0} + ... + (is_enumerator<static_cast<attention_kind>(I)>() ? 1 : 0));
}
template <std::size_t... I> constexpr bool consecutive(std::index_sequence<I...>) {
    constexpr std::size_t n = count_enumerators(std::index_sequence<I...>{});
    return ((is_enumerator<static_cast<attention_kind>(I)>() == (I < n)) && ...);
}

constexpr std::size_t enumerators = count_enumerators(std::make_index_sequence<64>{});
static_assert(consecutive(std::make_index_sequence<64>{}),
              "attention_kind's values are consecutive from 0 (the registry is indexed by them)");
// The negative control of the enumeration itself: a value past the last enumerator is no
// enumerator, the first one is.
static_assert(is_enumerator<attention_kind::hard>());
static_assert(!is_enumerator<static_cast<attention_kind>(63)>());
// Every enumerator has its row (and no row is left over).
static_assert(enumerators == model::attention_kinds.size(),
              "a kind of model::attention_kind has no row in model::attention_kinds");

} // namespace

TEST_CASE("the attention-kind registry has one row per enumerator, in the enum's order",
          "[model][attention_kind]") {
    // hard, soft, average-hard, StableMax and sparsemax, then the kinds added after them (the
    // count follows the enum; what must hold is one row per enumerator, below and above).
    REQUIRE(enumerators >= 5);
    REQUIRE(model::attention_kinds.size() == enumerators);
    for (std::size_t k = 0; k < model::attention_kinds.size(); ++k) {
        const auto kind = static_cast<attention_kind>(k);
        INFO("kind " << k << " (" << model::to_string(kind) << ")");
        REQUIRE(model::info(kind).kind == kind);
        REQUIRE(&model::info(kind) == &model::attention_kinds[k]);
    }
}

TEST_CASE("the attention kinds' facts agree with each other", "[model][attention_kind]") {
    for (const auto& a : model::attention_kinds) {
        INFO(a.name);
        REQUIRE_FALSE(a.name.empty());
        // A maximal-score kind has a tie rule, a normaliser none.
        REQUIRE((a.weights == model::weighting::maximal_score) ==
                (a.ties != model::tie_rule::none));
        REQUIRE(model::selects_maximum(a.kind) == (a.weights == model::weighting::maximal_score));
        REQUIRE(model::averages_ties(a.kind) == (a.ties == model::tie_rule::average));
        // What a kind that is not exact needs is said, and only then.
        REQUIRE(a.exact == a.needs.empty());
        // The words of a tie rule, for every rule but the leftmost one and none.
        REQUIRE(a.ties_in_words.empty() ==
                (a.ties == model::tie_rule::leftmost || a.ties == model::tie_rule::none));
        // Hahn's Theorem 1 is about the leftmost maximal score; the soft-attention lemma, the
        // incremental kernel and the simulate comparison's soft side about a normaliser
        // (softmax), simulate's source about a maximal-score kind.
        if (a.hard_limit) REQUIRE(a.ties == model::tie_rule::leftmost);
        if (a.hard_limit) REQUIRE(a.exact);
        if (a.soft_influence) REQUIRE(a.weights == model::weighting::normaliser);
        if (a.incremental) REQUIRE(a.soft_influence);
        if (a.simulate_source) REQUIRE(a.weights == model::weighting::maximal_score);
        // The influence law: Theorem 1 for a maximal-score kind, a law of the soft lemma for a
        // normaliser (softmax's is the lemma itself), with its reason in words.
        REQUIRE((a.influence == model::influence_law::hard_theorem) ==
                (a.weights == model::weighting::maximal_score));
        if (a.soft_influence) REQUIRE(a.influence == model::influence_law::vanishing);
        REQUIRE_FALSE(a.influence_in_words.empty());
        // Weights summing to 1 (the mean-of-values shortcut) for a maximal-score kind and
        // softmax; never for elementwise weights.
        if (a.weights == model::weighting::maximal_score || a.soft_influence) REQUIRE(a.sums_to_one);
        if (a.weights == model::weighting::elementwise) REQUIRE_FALSE(a.sums_to_one);
        // Linear attention's weights are features of q and k: a normaliser (or not normalised)
        // with no mean-of-values shortcut (a head of constant scores is not uniform), outside
        // the soft lemma as stated.
        if (a.feature_map) {
            REQUIRE(a.weights == model::weighting::normaliser);
            REQUIRE_FALSE(a.sums_to_one);
            REQUIRE_FALSE(a.soft_influence);
            REQUIRE_FALSE(a.incremental);
        }
    }
    // The kinds, fact by fact.
    using model::info;
    REQUIRE(info(attention_kind::hard).hard_limit);
    REQUIRE_FALSE(info(attention_kind::average_hard).hard_limit);
    REQUIRE_FALSE(info(attention_kind::soft).hard_limit);
    REQUIRE(info(attention_kind::soft).soft_influence);
    REQUIRE(info(attention_kind::soft).incremental);
    REQUIRE_FALSE(info(attention_kind::soft).exact);
    REQUIRE(info(attention_kind::hard).simulate_source);
    REQUIRE(info(attention_kind::average_hard).simulate_source);
    REQUIRE(info(attention_kind::average_hard).ties_in_words == "weighs every maximal position");
    // StableMax and sparsemax: exact normalisers that the softmax analyses do not take; only
    // StableMax keeps the O(1/n) law.
    for (auto k : {attention_kind::stablemax, attention_kind::sparsemax}) {
        REQUIRE(info(k).exact);
        REQUIRE(info(k).weights == model::weighting::normaliser);
        REQUIRE_FALSE(info(k).soft_influence);
        REQUIRE_FALSE(info(k).incremental);
    }
    REQUIRE(info(attention_kind::stablemax).influence == model::influence_law::vanishing);
    REQUIRE(info(attention_kind::sparsemax).influence == model::influence_law::not_vanishing);
    REQUIRE(info(attention_kind::soft).influence == model::influence_law::vanishing);
    // Sigmoid: elementwise weights that need exp; the registry's law is a constant bias's
    // (model::influence_of refines it by the bias).
    REQUIRE(info(attention_kind::sigmoid).weights == model::weighting::elementwise);
    REQUIRE_FALSE(info(attention_kind::sigmoid).exact);
    REQUIRE(info(attention_kind::sigmoid).needs == "sigmoid needs exp");
    REQUIRE_FALSE(info(attention_kind::sigmoid).soft_influence);
    REQUIRE(info(attention_kind::sigmoid).influence == model::influence_law::not_vanishing);
    // Softpick: a normaliser whose weights sum to at most 1, needing exp.
    REQUIRE(info(attention_kind::softpick).weights == model::weighting::normaliser);
    REQUIRE_FALSE(info(attention_kind::softpick).sums_to_one);
    REQUIRE_FALSE(info(attention_kind::softpick).exact);
    REQUIRE(info(attention_kind::softpick).influence == model::influence_law::not_vanishing);
    for (auto k : {attention_kind::stablemax, attention_kind::sparsemax, attention_kind::entmax15})
        REQUIRE(info(k).sums_to_one);
    // Linear attention: exact (relu features; elu1 is refused per layer by exact_blockers),
    // normalised elu1's law vanishing, linear-sum's not.
    REQUIRE(info(attention_kind::linear).feature_map);
    REQUIRE(info(attention_kind::linear).exact);
    REQUIRE(info(attention_kind::linear).influence == model::influence_law::vanishing);
    REQUIRE(info(attention_kind::linear_sum).feature_map);
    REQUIRE(info(attention_kind::linear_sum).influence == model::influence_law::not_vanishing);
    for (auto k : {attention_kind::soft, attention_kind::sigmoid, attention_kind::softpick})
        REQUIRE_FALSE(info(k).feature_map);
}

TEST_CASE("the model file's attention names round-trip through the registry",
          "[model][attention_kind]") {
    for (const auto& a : model::attention_kinds) {
        REQUIRE(model::parse_attention_kind(a.name) == a.kind);
        REQUIRE(std::string(model::to_string(a.kind)) == a.name);
    }
    REQUIRE(std::string(model::to_string(attention_kind::average_hard)) == "average-hard");
    REQUIRE_FALSE(model::parse_attention_kind("Hard"));
    REQUIRE_FALSE(model::parse_attention_kind("average_hard"));
    REQUIRE_FALSE(model::parse_attention_kind(""));
    // Every name quoted, in the registry's order, the last after " or " (a kind added later
    // joins the list by its row alone).
    const std::string names = model::attention_kind_names();
    REQUIRE(names.rfind("'hard', 'soft', 'average-hard', 'stablemax', ", 0) == 0);
    std::size_t at = 0;
    for (std::size_t k = 0; k < model::attention_kinds.size(); ++k) {
        const std::string quoted = "'" + std::string(model::attention_kinds[k].name) + "'";
        const std::size_t pos = names.find(quoted, at);
        REQUIRE(pos != std::string::npos);
        if (k + 1 == model::attention_kinds.size()) {
            REQUIRE(names.compare(pos - 4, 4, " or ") == 0);
            REQUIRE(pos + quoted.size() == names.size());
        }
        at = pos + quoted.size();
    }
    // The reader's message lists every name.
    const std::string text = R"({"format": "attnprop-model", "version": 1, "name": "m",
        "attention": "sparse", "alphabet": ["0"], "eos": "$", "d": 1,
        "token_embedding": {"0": [0], "$": [1]}, "input": "add", "layers": [],
        "readout": {"kind": "threshold", "w": [1], "t": 0}})";
    REQUIRE_THROWS_WITH(model::parse_model(text, "m.json"),
                        Catch::Contains("attention must be " + names + ", got 'sparse'"));
}
