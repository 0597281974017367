// Suite `controls`: deliberately false statements that must fail.
//
//  hard-output-ignores-x1         "a hard model's output never depends on x_1"            [exact]
//  soft-influence-below-1-over-n2 "one-symbol influence of a soft model is at most 1/n^2" [ball]
//  influence-decays-like-1-over-n2
//                                 "Δ(n) <= Δ(n0)·(n0/n)^2 along a ladder of n"              [ball]
//  double-equals-exact            "double hard attention always agrees with exact"         [double, exact]
//  hard-recognizes-language       "a hard model classifies PARITY (or DYCK) correctly"     [exact]
//                                 false by Hahn's Theorem 1; also replays the language
//                                 counterexamples that `attnprop restrict` writes
#include "props/controls.hpp"

#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "lang/languages.hpp"
#include "props/hard_limit.hpp"
#include "props/common.hpp"
#include "props/soft_influence.hpp"

namespace attnprop::props {

using numeric::arb_ball;

namespace {

runner::property hard_output_ignores_x1() {
    runner::property p;
    p.suite = "controls";
    p.name = "hard-output-ignores-x1";
    p.statement = "(false on purpose) a hard model's output y_n^(L) never depends on x_1";
    p.kinds = runner::kinds_of<numeric::rational>();
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
    p.shape = one_input_shape(runner::model_requirement::hard);
    p.tag = case_class;
    return p;
}

runner::property soft_influence_below_1_over_n2() {
    runner::property p;
    p.suite = "controls";
    p.name = "soft-influence-below-1-over-n2";
    p.statement = "(false on purpose) changing one symbol of a soft model's input changes "
                  "y_n^(L) by at most 1/n^2 in the 2-norm";
    p.kinds = runner::kinds_of<numeric::arb_ball>();
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
                .with("influence_squared", show_ball(sq))
                .with("bound_squared", "1/" + std::to_string(n) + "^4");
        if (o == numeric::order::unknown) return check_result::undecided("influence near 1/n^2");
        return check_result::holds();
    };
    p.shape = position_shape(runner::model_requirement::soft, true);
    p.tag = case_class;
    return p;
}

runner::property influence_decays_like_1_over_n2() {
    runner::property p;
    p.suite = "controls";
    p.name = "influence-decays-like-1-over-n2";
    p.statement = "(false on purpose) along a ladder of n sharing one input prefix, the largest "
                  "one-symbol influence decays like 1/n^2: Δ(n) <= Δ(n0) (n0/n)^2, n0 the "
                  "smallest rung";
    p.kinds = runner::kinds_of<numeric::arb_ball>();
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: a wrong bound that decays too fast "
                         "(Lemma 5's rate is 1/n) must produce a counterexample";
    p.generator = [](const run_config& cfg) { return ladder_case(gen::soft_model(), cfg, 16); };
    p.check = [](const test_case& c, const numeric::context& ctx) {
        const auto pts = influence_ladder(c, ctx);
        const auto& first = pts.front();
        bool undecided = false;
        for (std::size_t k = 1; k < pts.size(); ++k) {
            const auto& pt = pts[k];
            const rational ratio(static_cast<long>(first.n), static_cast<long>(pt.n));
            const arb_ball bound =
                first.max_influence * numeric::from_rational<arb_ball>(ratio * ratio, ctx);
            const auto o = numeric::compare(pt.max_influence, bound);
            if (o == numeric::order::greater)
                return check_result::violated("the influence at n = " + std::to_string(pt.n) +
                                              " exceeds the 1/n^2 extrapolation from n = " +
                                              std::to_string(first.n))
                    .with("n0", std::to_string(first.n))
                    .with("influence_at_n0", show_ball(first.max_influence))
                    .with("n", std::to_string(pt.n))
                    .with("influence_at_n", show_ball(pt.max_influence))
                    .with("extrapolated_bound", show_ball(bound))
                    .with("position", std::to_string(pt.position + 1));
            if (o == numeric::order::unknown) undecided = true;
        }
        if (undecided) return check_result::undecided("influence near the 1/n^2 extrapolation");
        return check_result::holds();
    };
    p.shape = ladder_shape();
    p.tag = case_class;
    return p;
}

runner::property double_equals_exact() {
    runner::property p;
    p.suite = "controls";
    p.name = "double-equals-exact";
    p.statement = "(false on purpose) hard attention in double precision always selects the same "
                  "positions as exact arithmetic";
    p.kinds = runner::kinds_of<double, numeric::rational>();
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
    p.shape = one_input_shape(runner::model_requirement::hard);
    p.tag = case_class;
    return p;
}

runner::property hard_recognizes_language() {
    runner::property p;
    p.suite = "controls";
    p.name = "hard-recognizes-language";
    p.statement = "(false by Hahn's Theorem 1) a binary hard model classifies every input of "
                  "PARITY correctly (for a case with a language parameter: that language, "
                  "1DYCK/2DYCK with their ends pre-fixed)";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: the restriction leaves a free bit "
                         "outside D_L(n), and flipping it changes the label but not the output";
    p.generator = [](const run_config& cfg) {
        gen::hard_bounds b;
        b.max_alphabet = 2;
        const long max_n = std::max(2L, std::min(cfg.max_n, 64L));
        return rc::gen::mapcat(rc::gen::pair(gen::hard_model(b), gen::length(max_n)),
                               [](const auto& mn) {
                                   const auto& m = mn.first; // not a structured binding: clang 14 cannot capture one
                                   const long n = std::max(2L, mn.second);
                                   return rc::gen::map(rc::gen::inRange(0L, 1000L), [m, n](long seed) {
                                       test_case c;
                                       c.model = m;
                                       c.params["n"] = n;
                                       c.params["seed"] = seed;
                                       c.params["language"] =
                                           static_cast<long>(lang::language::parity);
                                       return c;
                                   });
                               });
    };
    p.check = [](const test_case& c, const numeric::context&) {
        const long n = c.params.at("n");
        const auto l = static_cast<lang::language>(c.params.at("language"));
        analysis::language_run run;
        try {
            run = analysis::run_language(c.model, n, l, language_options_of(c));
        } catch (const std::invalid_argument& e) {
            return check_result::holds(std::string("not applicable: ") + e.what());
        }
        const auto& res = run.result;
        if (res.verdict != analysis::language_verdict::counterexample || res.wrong < 0)
            return check_result::holds(std::string("no counterexample at this n: ") + res.explanation);
        // Recompute the misclassified input exactly: the counterexample stands on its own.
        const std::string& w = res.inputs[res.wrong];
        const auto y = attention::hard_forward_exact(c.model, model::parse_input(c.model, w),
                                                     numeric::context{53}).y;
        const bool accepted =
            attention::recognize(c.model.out, y, numeric::context{53}) == attention::verdict::accept;
        if (accepted == lang::member(l, w)) return check_result::holds("the reported input is right");
        return check_result::violated(std::string("the model misclassifies a ") + lang::to_string(l) +
                                      " input: " + res.explanation)
            .with("n", std::to_string(n))
            .with("rho", run.restr.rho_string(c.model.sigma))
            .with("input_1", res.inputs[0])
            .with("input_2", res.inputs[1])
            .with("y_1", show_vector(res.outputs[0]))
            .with("y_2", show_vector(res.outputs[1]))
            .with("wrong", std::to_string(res.wrong + 1))
            .with("member_wrong", lang::member(l, w) ? "yes" : "no");
    };
    p.shape = restriction_shape(true);
    p.tag = case_class;
    return p;
}

} // namespace

void register_controls(runner::registry& r) {
    r.add(hard_output_ignores_x1());
    r.add(soft_influence_below_1_over_n2());
    r.add(influence_decays_like_1_over_n2());
    r.add(double_equals_exact());
    r.add(hard_recognizes_language());
}

} // namespace attnprop::props
