// Suite `controls`: deliberately false statements that must fail.
//
//  hard-output-ignores-x1         "a hard model's output never depends on x_1"            [exact]
//  soft-influence-below-1-over-n2 "one-symbol influence of a soft model is at most 1/n^2" [ball]
//  double-equals-exact            "double hard attention always agrees with exact"         [double, exact]
#include "props/controls.hpp"

#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "props/common.hpp"

namespace attnprop::props {

using numeric::arb_ball;

namespace {

runner::property hard_output_ignores_x1() {
    runner::property p;
    p.suite = "controls";
    p.name = "hard-output-ignores-x1";
    p.statement = "(false on purpose) a hard model's output y_n^(L) never depends on x_1";
    p.kinds = {"exact"};
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: it must fail (e.g. hard-first)";
    p.generator = [](const run_config& cfg) {
        return model_and_input(gen::hard_model(), cfg, 64);
    };
    p.check = [](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        if (x.size() < 2) return check_result::holds("no x_1");
        auto base = attention::hard_forward_exact(c.model, x, ctx);
        for (int a = 0; a < c.model.sigma.eos_index(); ++a) {
            if (a == x[0]) continue;
            auto x2 = x;
            x2[0] = a;
            auto other = attention::hard_forward_exact(c.model, x2, ctx);
            if (other.y != base.y)
                return check_result::violated("changing x_1 changes the output")
                    .with("input", c.inputs.front())
                    .with("changed_input", model::format_input(c.model.sigma, x2))
                    .with("y", show_vector(base.y))
                    .with("y_changed", show_vector(other.y));
        }
        return check_result::holds();
    };
    p.tag = case_class;
    return p;
}

runner::property soft_influence_below_1_over_n2() {
    runner::property p;
    p.suite = "controls";
    p.name = "soft-influence-below-1-over-n2";
    p.statement = "(false on purpose) changing one symbol of a soft model's input changes "
                  "y_n^(L) by at most 1/n^2 in the 2-norm";
    p.kinds = {"ball"};
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: Hahn's bound is 1/n, not 1/n^2";
    p.generator = [](const run_config& cfg) {
        return model_input_position(gen::soft_model(), cfg, 256);
    };
    p.check = [](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        const long n = static_cast<long>(x.size());
        const auto i = static_cast<std::size_t>(c.params.at("position") - 1);
        const int sigma = c.model.sigma.eos_index();
        auto x2 = x;
        x2[i] = static_cast<int>(c.params.at("symbol") % sigma);
        if (x2[i] == x[i]) x2[i] = (x2[i] + 1) % sigma;
        if (x2[i] == x[i]) return check_result::holds("one-symbol alphabet");
        auto mb = model::to_scalar<arb_ball>(c.model, ctx);
        auto a = attention::soft_forward(mb, x, ctx);
        auto b = attention::soft_forward(mb, x2, ctx);
        arb_ball sq = numeric::zero<arb_ball>(ctx);
        for (std::size_t t = 0; t < a.y.size(); ++t) {
            arb_ball d = a.y[t] - b.y[t];
            numeric::fma_acc(sq, d, d);
        }
        // ||dy||^2 <= 1/n^4 ?
        arb_ball bound = numeric::from_rational<arb_ball>(rational(1, n) * rational(1, n) *
                                                              rational(1, n) * rational(1, n),
                                                          ctx);
        auto o = numeric::compare(sq, bound);
        if (o == numeric::order::greater)
            return check_result::violated("the one-symbol influence exceeds 1/n^2")
                .with("n", std::to_string(n))
                .with("position", std::to_string(i + 1))
                .with("influence_squared", numeric::to_display_string(sq, 20) + " +/- " +
                                               numeric::radius_string(sq))
                .with("bound_squared", "1/" + std::to_string(n) + "^4");
        if (o == numeric::order::unknown) return check_result::undecided("influence near 1/n^2");
        return check_result::holds();
    };
    p.tag = case_class;
    return p;
}

runner::property double_equals_exact() {
    runner::property p;
    p.suite = "controls";
    p.name = "double-equals-exact";
    p.statement = "(false on purpose) hard attention in double precision always selects the same "
                  "positions as exact arithmetic";
    p.kinds = {"double", "exact"};
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: near ties fool double arithmetic";
    p.generator = [](const run_config& cfg) {
        return model_and_input(gen::near_tie_hard_model(), cfg, 16);
    };
    p.check = [](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        auto ex = attention::hard_forward_exact(c.model, x, ctx, true);
        auto rd = attention::hard_forward(model::to_scalar<double>(c.model, ctx), x, ctx, true);
        if (rd.trace->choice != ex.trace->choice)
            return check_result::violated("double selected different positions than exact")
                .with("y_exact", show_vector(ex.y))
                .with("y_double", show_vector(rd.y));
        return check_result::holds();
    };
    p.tag = case_class;
    return p;
}

} // namespace

void register_controls(runner::registry& r) {
    r.add(hard_output_ignores_x1());
    r.add(soft_influence_below_1_over_n2());
    r.add(double_equals_exact());
}

} // namespace attnprop::props
