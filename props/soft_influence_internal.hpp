#pragma once
/// @file soft_influence_internal.hpp
/// What the soft-influence properties share across their files (props/soft_influence.cpp: the
/// pair, probability and cross-entropy properties; props/soft_influence_ladder.cpp: the
/// influence ladder): the hypotheses' messages, the comparison with a bound, and the filter
/// that measures in certified double intervals first (interval_first). Not part of the props
/// interface.

#include "numeric/arb_ball.hpp"
#include "numeric/filter.hpp"
#include "props/soft_influence.hpp"
#include "soft_influence/bounds.hpp"

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace attnprop::props::influence_detail {

using numeric::arb_ball;

/// The hypotheses of the case's model, or the reason they are not established.
std::optional<std::string> hypotheses_missing(const analysis::bound_report& rep);

/// check --model: the soft influence statements are Lemma 5's, which needs the hypotheses.
std::optional<std::string> needs_hypotheses(const model::model<rational>& m);

/// An upper bound of |x| as a double (rounded up).
double abs_upper(const arb_ball& x);

/// Compares a measured ball with an upper bound: violated when certainly above, undecided
/// when the balls overlap.
inline numeric::order versus(const arb_ball& measured, const arb_ball& bound) {
    return numeric::compare(measured, bound);
}

/// The filter of the pair and ladder properties (numeric/filter.hpp, after CGAL's filtered
/// predicates): `stage` measured in certified double intervals (std::type_identity<numeric::
/// dinterval>) decides almost every case; only a case they leave undecided, or where an interval
/// enclosure left a value undefined that precision may resolve, is measured again in Arb balls
/// at the same precision (and then retried at doubled precision by the runner, the next
/// filter). Both rungs are rigorous, so a violation in either is a counterexample. `which` may
/// run one rung alone. The rung that decided is the measurement "decided by" (`tally`), or the
/// number "decided_by" beside another measurement.
template <class Stage>
check_result interval_first(Stage&& stage, stages which, const numeric::context& ctx, bool tally = true) {
    using numeric::kind_choice;
    std::vector<numeric::rung> ladder;
    if (which != stages::balls) ladder.push_back({kind_choice::of<numeric::dinterval>(), ctx.precision_bits});
    if (which != stages::intervals) ladder.push_back({kind_choice::of<arb_ball>(), ctx.precision_bits});
    std::string why = which == stages::intervals ? "intervals only" : which == stages::balls ? "balls only" : "";
    const auto attempt = [&](const numeric::rung& r, std::size_t i) -> std::optional<check_result> {
        std::optional<check_result> out;
        const bool last = i + 1 == ladder.size();
        try {
            numeric::dispatch<numeric::is_enclosure>(r.kind, [&]<class S>(std::type_identity<S> kind) -> void {
                out = stage(kind);
            });
        } catch (const numeric::undefined_error& e) {
            if (last || !e.precision_may_resolve()) throw;
            why = "an interval enclosure was undefined: " + e.message();
            return std::nullopt;
        }
        if (!last && out->status() == verdict::undecided) why = "the interval stage was undecided";
        return out;
    };
    const auto judge = [](const check_result& r, std::size_t) {
        return r.status() != verdict::undecided ? numeric::filter_step::decided
                                                : numeric::filter_step::escalate;
    };
    auto f = numeric::run_filter(ladder, attempt, judge);
    check_result r = std::move(f.answer);
    const char* kind = ladder[f.rung].kind.name().data();
    if (tally) return std::move(r.with_measurement({"decided by", kind, f.rung == 0 && which == stages::filtered ? "" : why}));
    return std::move(r.with("decided_by", kind));
}

} // namespace attnprop::props::influence_detail
