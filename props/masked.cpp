// The properties of causally masked models (props/masked.hpp).
//
//  soft-influence/masked-influence-below-bound   ||Δy_n^(L)|| <= K (1 + ln n)^(L-1) / n for a
//                                                model whose every layer is causal      [ball]
//  controls/masked-influence-hahn-rate           (false on purpose) the same against K/n, on
//                                                the witnesses of the masked rate       [ball]
//
// Cases: a model from gen::causally_masked(gen::soft_model()) or gen::masked_rate_witness()
// (the control: the witnesses alone), n log-uniform up to 256, one input; every measured
// position (measured_positions) and replacement is changed and the change measured in Arb
// balls at the case's precision by two forward passes (independent of the incremental
// kernel, which the influence profiles take).
#include "props/masked.hpp"

#include "attention/soft.hpp"
#include "props/hard_limit.hpp"
#include "props/soft_influence.hpp"
#include "soft_influence/bounds.hpp"
#include "soft_influence/hypotheses.hpp"
#include "soft_influence/norms.hpp"

namespace attnprop::props {

using numeric::arb_ball;

namespace {

/// check --model: every layer causal, and the hypotheses of Claim 2.
std::optional<std::string> needs_causal_hypotheses(const model::model<rational>& m) {
    if (!model::all_causal(m))
        return std::string("needs every layer causally masked (theory.md §2.5)");
    for (const auto& h : analysis::check_hypotheses(m))
        if (!certainly(h.holds))
            return "the hypotheses of Claim 2 are not established: " + h.name + ": " + h.reason;
    return std::nullopt;
}

} // namespace

runner::property masked_influence_below_bound(bool drop_log_factor) {
    runner::property p;
    p.suite = drop_log_factor ? "controls" : "soft-influence";
    p.name = drop_log_factor ? "masked-influence-hahn-rate" : "masked-influence-below-bound";
    p.statement = drop_log_factor
                      ? "(false on purpose) a soft model whose every layer is causally masked "
                        "obeys Hahn's rate: every one-symbol change moves y_n^(L) by at most K/n, "
                        "K = C_L of the masked recursion"
                      : "for a soft model whose every layer is causally masked and that satisfies "
                        "the hypotheses of Claim 2, every one-symbol change moves y_n^(L) by at "
                        "most K (1 + ln n)^(L-1) / n (theory.md 2.5)";
    p.kinds = runner::kinds_of<arb_ball>();
    p.expected_to_fail = drop_log_factor;
    p.negative_control =
        drop_log_factor
            ? "this property is itself a control: it must fail (the witness causal-prefix-mean "
              "moves by H_n/n > 3/n from n = 11 on)"
            : "controls/masked-influence-hahn-rate: the bound without its log factor is "
              "exceeded on the witnesses of the masked rate";
    p.generator = [drop_log_factor](const run_config& cfg) {
        auto models = drop_log_factor
                          ? gen::masked_rate_witness()
                          : rc::gen::oneOf(gen::causally_masked(gen::soft_model()),
                                           gen::masked_rate_witness());
        return model_input_position(std::move(models), cfg, 256, random_lengths::log_uniform);
    };
    p.applies = needs_causal_hypotheses;
    p.takes_masked = true;
    p.check = [drop_log_factor](const test_case& c, const numeric::context& ctx) {
        const auto x = input_of(c);
        const std::size_t n = x.size();
        if (n < 2) return check_result::holds("no position before eos");
        const auto rep = analysis::a_priori_bound(c.model, static_cast<long>(n), ctx);
        if (!rep.masked) return check_result::undecided("not every layer is causally masked");
        if (!rep.K || !rep.bound_at_n)
            return check_result::undecided("no masked bound: " +
                                           (rep.notes.empty() ? std::string("see bound") : rep.notes.back()));
        const arb_ball bound = drop_log_factor
                                   ? analysis::upper(*rep.K / numeric::from_int<arb_ball>(static_cast<long>(n), ctx))
                                   : *rep.bound_at_n;
        const auto ms = model::to_scalar<arb_ball>(c.model, ctx);
        const auto y = attention::soft_forward(ms, x, ctx).y;
        std::string overlap;
        for (std::size_t pos : measured_positions(c, n)) {
            for (int a = 0; a < c.model.sigma.eos_index(); ++a) {
                if (a == x[pos]) continue;
                auto x2 = x;
                x2[pos] = a;
                const auto y2 = attention::soft_forward(ms, x2, ctx).y;
                // ||Δy||² against bound² (no square root of a ball that may contain 0).
                arb_ball sq = numeric::zero<arb_ball>(ctx);
                for (std::size_t t = 0; t < y.size(); ++t) sq = sq + (y2[t] - y[t]) * (y2[t] - y[t]);
                const numeric::order o = numeric::compare(sq, bound * bound);
                if (o == numeric::order::greater)
                    return check_result::violated(
                               drop_log_factor ? "the one-symbol influence exceeds K/n"
                                               : "the one-symbol influence exceeds the masked bound "
                                                 "K (1 + ln n)^(L-1)/n")
                        .with("n", std::to_string(n))
                        .with("position", std::to_string(pos + 1))
                        .with("replacement", c.model.sigma.symbols[static_cast<std::size_t>(a)])
                        .with("changed_input", model::format_input(c.model.sigma, x2))
                        .with("influence", show_ball(numeric::sqrt(sq)))
                        .with("K", show_ball(*rep.K))
                        .with("bound", show_ball(bound));
                if (o == numeric::order::unknown && overlap.empty())
                    overlap = "position " + std::to_string(pos + 1);
            }
        }
        if (!overlap.empty())
            return check_result::undecided("influence and bound overlap at this precision (" + overlap + ")");
        return check_result::holds();
    };
    p.shape = position_shape(runner::model_requirement::soft, false);
    p.tag = case_class;
    return p;
}

void register_masked(runner::registry& r) {
    r.add(masked_influence_below_bound());
    r.add(masked_influence_below_bound(true));
    r.add(certificate_valid(false, true));
}

} // namespace attnprop::props
