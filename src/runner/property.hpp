#pragma once
/// @file property.hpp
/// Properties and suites. A property is a name, a one-line statement, the scalar kinds it
/// exercises, a generator of test cases and a check that says holds / violated / undecided.
/// Suites register through explicit `register_<suite>(registry&)` calls listed in one place
/// (props/registry.cpp), never through static initialisation.

#include "model/model.hpp"
#include "numeric/kinds.hpp"
#include "runner/outcome.hpp"
#include "util/verdict.hpp"

#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnprop::runner {

using numeric::rational;

/// One generated or replayed case: a model, its inputs (without eos) and small integer
/// parameters (a position, a replacement symbol, ...). Everything a check needs, and all of
/// it serialisable exactly, so that a counterexample folder alone reproduces the failure.
struct test_case {
    model::model<rational> model;
    std::vector<std::string> inputs;
    std::map<std::string, long> params;
};

/// The answer of a check on one case (docs/properties.md, "Verdicts"), one of four words of the
/// verdict table (util/verdict.hpp), which case.json records:
/// - passed: the statement was decided true on this case (rigorously, or exactly);
/// - failed: a witness that contradicts the statement as a mathematical claim about the
///   case's model, decided rigorously (enclosures that exclude the claim, or exact
///   arithmetic), or a proof that the implementation is wrong. Never a statistic alone;
/// - undecided: the statement could not be decided (enclosures overlap, a regime the case does
///   not reach); reported, never a pass or a fail;
/// - undefined: a value the statement needs does not exist on this case (NaN, division by
///   zero, a layer norm at zero variance), located; reported, never a pass or a fail.
/// These are the per-case alternatives of runner::outcome.
using attnprop::verdict;

/// A measurement reported beside a verdict: a statistic (a fitted slope, a sample mean, a
/// trend) that informs but never decides. `label` is one of a few fixed words per measurement
/// (for a rate: "consistent", "inconclusive", "faster"), tallied per property in reports;
/// `detail` is the one-line reading ("slope -0.98 +/- 0.03 over n = 32..128").
struct measurement {
    std::string name;   ///< what was measured: "rate", ...
    std::string label;  ///< the tallied reading
    std::string detail; ///< numbers and why
};

/// The answer of a check on one case: its outcome (passed, failed, undecided or undefined),
/// the one line that says what was compared (the witness of a failure, the reason of an
/// undecided case, the place of an undefined value) and the numbers behind it.
struct check_result {
    outcome result = outcomes::passed{};
    std::string message; ///< what was compared, one line
    /// The numbers behind the verdict, name -> text (exact p/q where exact, decimal digits
    /// and radius otherwise).
    std::vector<std::pair<std::string, std::string>> numbers;
    /// A statistic reported with the verdict (never the reason for it).
    std::optional<runner::measurement> measured;

    /// The verdict word of the outcome (a check's outcome is one of the four per-case ones).
    verdict status() const;
    /// Undecided, and more precision could decide it.
    bool precision_helps() const {
        const auto* u = std::get_if<outcomes::undecided>(&result);
        return u && u->precision_helps;
    }
    /// Undecided with both sides agreeing to every bit tried (outcomes::undecided).
    bool sides_agree() const {
        const auto* u = std::get_if<outcomes::undecided>(&result);
        return u && u->sides_agree;
    }

    static check_result make(verdict v, std::string msg);
    /// The statement holds on the case: passed.
    static check_result holds(std::string msg = {}) { return make(verdict::passed, std::move(msg)); }
    /// A witness violates the statement: failed.
    static check_result violated(std::string msg) { return make(verdict::failed, std::move(msg)); }
    static check_result undecided(std::string msg) { return make(verdict::undecided, std::move(msg)); }
    /// Undefined: `msg` names the place ("undefined at layer 2, node 'n1', position 4 (...)").
    static check_result undefined(std::string msg) { return make(verdict::undefined, std::move(msg)); }
    /// Undecided for a reason precision does not change (no escalation).
    static check_result undecided_at_any_precision(std::string msg) {
        check_result r = make(verdict::undecided, std::move(msg));
        r.result = outcomes::undecided{.precision_helps = false};
        return r;
    }
    check_result& with(std::string name, std::string value) {
        numbers.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    /// Marks an undecided result whose two sides agree (nothing for another outcome).
    check_result& with_sides_agree(bool agree = true) {
        if (auto* u = std::get_if<outcomes::undecided>(&result)) u->sides_agree = agree;
        return *this;
    }
    check_result& with_measurement(runner::measurement m) {
        measured = std::move(m);
        return *this;
    }
};

/// Budget and precision of a run.
struct run_config {
    std::uint64_t seed = 1;       ///< base seed; each property derives its own from it
    int tests = 100;              ///< successful cases per property
    long max_n = 256;             ///< largest n generated
    long precision = 128;         ///< starting precision (bits) for MPFR and balls
    long precision_cap = 4096;    ///< undecided cases are retried at doubled precision up to this
    int max_size = 100;           ///< RapidCheck size bound
    /// `check --model`: the one model every case uses. The generators then draw only n (spread
    /// log-uniformly over [1, max_n], capped only where a property's statement needs it), the
    /// inputs, positions, replacement symbols and other parameters; nothing shrinks the model.
    /// Null: random models (the generators' own model classes and length caps).
    std::shared_ptr<const model::model<rational>> fixed_model;
    /// With a fixed model: candidate (input, position, replacement) evaluations of the
    /// worst-case search each soft pair property runs per case (soft_influence/worst_case.hpp);
    /// 0: no search (the drawn input and its measured positions only).
    long search_budget = 0;
};

/// The attention kind a property's cases need, as the registry's facts decide
/// (model/attention_kind.hpp): any; unique-hard only (`hard`: the kinds Hahn's Theorem 1 takes,
/// model::attention_kind_info::hard_limit: the restriction is about the leftmost maximal
/// score); unique-hard or average-hard (`any_hard`: properties of the exact selection by
/// maximal score, model::selects_maximum); soft (`soft`: the kinds of the soft-attention
/// lemma, attention_kind_info::soft_influence).
enum class model_requirement { any, hard, any_hard, soft };

/// One integer parameter a property's cases may carry, with its range: the range of the
/// command-line option that sets the same quantity (`like`), so that a counterexample folder
/// is held to what a command would accept.
struct param_spec {
    std::string name;
    long min = 0, max = 0;   ///< inclusive
    bool required = false;
    std::string like;        ///< "the range of --n", for messages; empty when none
};

/// A problem of a case for its property: the case.json member (a JSON pointer: "/params/n",
/// "/inputs/0", "/model") and what is wrong with it.
struct case_problem {
    std::string pointer;
    std::string message;
};

/// What every case of a property looks like (the shape its generator produces, and what its
/// check may assume). A replayed folder is checked against it before the check runs, so that a
/// folder the property cannot have written is bad input, never a verdict.
struct case_shape {
    model_requirement model = model_requirement::any;
    std::size_t min_inputs = 1, max_inputs = 1;
    std::vector<param_spec> params; ///< every parameter the property reads; others are refused
    /// Checks between members after the ranges (a position inside the input, an input of
    /// ladder_top - 1 symbols, the language's symbols in the alphabet); nullopt when fine.
    std::function<std::optional<case_problem>(const test_case&)> relations;
};

struct property {
    std::string suite;
    std::string name;
    std::string statement;                 ///< one line, as in docs/properties.md
    /// The scalar kinds its check exercises, by type (kinds_of<S...>(): a facet of the property,
    /// not derived from the list); reports name them by their traits' names.
    std::vector<numeric::kind_choice> kinds;
    std::string negative_control;          ///< how the property is shown to fail when violated
    bool expected_to_fail = false;         ///< controls: deliberately false statements
    std::function<rc::Gen<test_case>(const run_config&)> generator;
    std::function<check_result(const test_case&, const numeric::context&)> check;
    /// Distribution tag of a case (model class); defaults to the generator's model class.
    std::function<std::string(const test_case&)> tag;
    /// The shape of its cases (checked by validate_case before a replay).
    case_shape shape;
    /// For `check --model`: nullopt when the property makes a claim about this model, else why
    /// not ("needs the alphabet {0, 1}", "the hypotheses of Claim 2 are not established: ...").
    /// The shape's attention kind and exact evaluability are checked first (not_applicable);
    /// unset: those alone decide.
    std::function<std::optional<std::string>(const model::model<rational>&)> applies;
    /// Whether its statement is derived, and its check written, for causally masked layers
    /// too (theory.md §1.4, §2.5); `check --model` does not run the others on a masked model.
    bool takes_masked = false;
};

/// Why property p makes no claim about model m (check --model lists it with this reason), or
/// nullopt when it applies: the attention kind its shape needs, exact evaluation for hard
/// models, a masked model for a property without takes_masked, then p.applies.
std::optional<std::string> not_applicable(const property& p, const model::model<rational>& m);

/// Checks a case against its property's shape: the model's attention kind, the number of
/// inputs, every input in the model's alphabet (no eos) and of a length the model supports,
/// every parameter known to the property and within its range, required parameters present,
/// and the shape's relations. Returns the first problem, or nullopt.
std::optional<case_problem> validate_case(const property& p, const test_case& c);

/// The kinds S..., in that order, for property::kinds.
template <class... S> std::vector<numeric::kind_choice> kinds_of() {
    return {numeric::kind_choice::of<S>()...};
}

/// The names of kinds, in order ("exact", "ball", ...), as reports and case.json write them.
std::vector<std::string> kind_names(const std::vector<numeric::kind_choice>& kinds);

/// The ordered list of properties.
class registry {
public:
    void add(property p);
    const std::vector<property>& all() const { return properties_; }
    /// The property with this name ("suite/name" or just "name" when unique), or nullptr.
    const property* find(std::string_view name) const;
    /// Suite names in registration order.
    std::vector<std::string> suites() const;

private:
    std::vector<property> properties_;
};

/// Registers every suite (defined in props/registry.cpp).
void register_all(registry& r);

/// The seed a property runs with: a fixed mix of the base seed and "suite/name", so that
/// adding or reordering properties never changes another property's cases.
std::uint64_t property_seed(std::uint64_t base, const property& p);

/// Runs the check at cfg.precision, doubling the precision while the answer is undecided
/// (and more precision could decide it), up to cfg.precision_cap; an undecided answer whose two
/// sides agree (check_result::sides_agree()) at two successive precisions is returned at once. A numeric::undefined_error
/// from the check is the verdict undefined (retried at doubled precision while the error says
/// precision may resolve it); numeric::limit_error, numeric::precision_error,
/// std::bad_alloc, model::input_error, model::model_file_error and precondition_error are
/// rethrown (a refusal to compute, or a model or case the library refuses, is no verdict: the
/// command ends with exit 2 as `eval` would); any other exception is a violation ("threw:
/// ..."): the implementation failed on a valid case. Before each attempt, one forward pass of
/// the case's model at its length and that precision must fit the limit attention-work
/// (attention::check_forward_work), else numeric::limit_error. `precision_used` receives the
/// last precision tried.
check_result check_with_escalation(const property& p, const test_case& c, const run_config& cfg,
                                   long* precision_used = nullptr);

} // namespace attnprop::runner
