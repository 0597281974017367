#pragma once
/// @file outcome.hpp
/// The one outcome type of the runner (after RapidCheck's TestResult): what a check says about
/// one case, and how the run of a property ended. Each alternative carries what only it has
/// (an undecided case whether more precision could help, a run that gave up or erred its
/// description), so that no combination of flags can say two things at once
/// (docs/properties.md, "Verdicts"; docs/architecture.md, "One outcome type").

#include <cstddef>
#include <string>
#include <type_traits>
#include <variant>

namespace attnprop::runner {

namespace outcomes {

/// The statement was decided true (a case), or every case was (a property).
struct passed {};
/// A witness contradicts the statement: the check_result's message and numbers (a case), the
/// property_report's counterexample (a property).
struct failed {};
/// The statement could not be decided: a case's enclosures overlap or its regime is not
/// reached (the message says why); a property with no failure and some undecided case.
struct undecided {
    /// Whether more precision could decide the case. False for statistical or regime questions
    /// (a slope within its standard error), which the runner reports without escalating.
    bool precision_helps = true;
    /// The two sides of the statement's inequality agree to every bit of the precision tried
    /// (overlapping balls, each with at least half the working precision of relative accuracy),
    /// as when the model attains the bound with equality; reports count these apart.
    bool sides_agree = false;
};
/// A value the statement needs does not exist (NaN, division by zero, a layer norm at zero
/// variance), located by the message: its own result (exit 4), never a pass or a fail.
struct undefined {};
/// RapidCheck discarded too many cases to run the property's budget.
struct gave_up {
    std::string description;
};
/// RapidCheck reported an error that is no counterexample.
struct error {
    std::string description;
};
/// A stop was requested (SIGINT) before the property ran its cases.
struct interrupted {};

} // namespace outcomes

/// What a check said about a case (passed, failed, undecided, undefined: a check never gives
/// up, errs or is interrupted), or how a property's run ended (any of them).
using outcome = std::variant<outcomes::passed, outcomes::failed, outcomes::undecided,
                             outcomes::undefined, outcomes::gave_up, outcomes::error,
                             outcomes::interrupted>;

/// Whether `o` holds alternative T.
template <class T> bool is(const outcome& o) noexcept { return std::holds_alternative<T>(o); }

/// The status word of a property report: "passed", "failed", "undecided" (or
/// "partly-undecided" when some case passed), "undefined", "gave-up", "error", "interrupted".
std::string status_word(const outcome& o, bool some_passed);

} // namespace attnprop::runner
