// Suite `soft-hard`: soft attention simulating hard attention as the inverse temperature grows.
//
//  leak-below-bound               every row's leak <= its certified bound, every layer's
//                                 state difference <= the propagated delta_k          [exact, ball]
//  readout-agrees-when-certified  a certified readout is the hard readout              [exact, ball]
//  ties-follow-average            with exact ties the soft model follows average-hard,
//                                 not unique-hard                                      [exact, ball]
//
// Controls (suite `controls`, deliberately false):
//  soft-leak-vanishes-at-log-n-over-gamma   beta = ln n / gamma leaves a two-level row's leak
//                                           near 1/2, not below 1/4                   [exact, ball]
//  soft-agrees-at-constant-beta             a constant beta loses agreement as n grows [exact, ball]
//  soft-leak-vanishes-at-beta-n-gap-1-over-n  gaps 1/n need beta growing faster than n [exact, ball]
//
// Cases: a model from gen::margin_model (the inverse temperature is in its heads), n from the
// length ladder up to 64, one random input. The soft counterpart is measured in Arb balls at
// the case's precision; the runner doubles it while a comparison is undecided.
#include "props/soft_hard.hpp"

#include "numeric/ball_bounds.hpp"
#include "attention/hard_exact.hpp"
#include "gen/margins.hpp"

namespace attnprop::props {

using numeric::arb_ball;

namespace {

constexpr long n_cap = 64;

struct soft_run {
    analysis::gap_pass hard;
    analysis::bound_data data;
    model::model<rational> soft;
    std::vector<std::vector<arb_ball>> betas;
    analysis::soft_observation obs;
    analysis::propagated pr;
};

soft_run run_case(const model::model<rational>& m, const model::input_sequence& x,
                  const numeric::context& ctx, const gap_pass_fn& pass = {},
                  const propagate_fn& prop = {}) {
    soft_run r;
    r.hard = pass ? pass(m, x) : analysis::score_gaps(m, x);
    r.data = analysis::make_bound_data(m, r.hard, ctx);
    r.soft = analysis::soft_counterpart(m);
    r.betas = analysis::betas_at(r.soft, static_cast<long>(x.size()), ctx);
    r.obs = analysis::observe_soft(r.soft, x, r.hard, ctx);
    r.pr = prop ? prop(r.data, r.betas, ctx) : analysis::propagate(r.data, r.betas, ctx);
    return r;
}

std::string beta_of(const model::model<rational>& m) {
    for (const auto& l : m.layers)
        for (const auto& h : l.heads)
            if (h.score.beta) {
                // A constant as its exact value: the model file may spell it otherwise after a
                // round trip ("1/1" is written as 1), and a replay compares this text.
                if (auto v = h.score.beta->constant_value()) return numeric::to_exact_string(*v);
                return h.score.beta->text();
            }
    return "1";
}

/// "margin-exact-gap beta 4*log(n)": family and temperature family.
std::string soft_hard_tag(const test_case& c) {
    std::string b = beta_of(c.model);
    std::string family = b.find("n*log") != std::string::npos ? "n ln n"
                         : b.find("log") != std::string::npos ? "c ln n"
                                                                : "constant";
    return c.model.name + " L" + std::to_string(c.model.layers.size()) + " beta " + family;
}

check_result with_case(check_result r, const test_case& c, const soft_run& s) {
    r.with("n", std::to_string(input_of(c).size()))
        .with("input", c.inputs.front())
        .with("beta", beta_of(c.model))
        .with("beta_n", show_ball(s.betas.front().front()));
    for (std::size_t k = 0; k < s.hard.layers.size(); ++k) {
        const auto& g = s.hard.layers[k];
        r.with("layer_" + std::to_string(k + 1) + "_min_margin",
               g.min_margin ? g.min_margin->to_string() : "none")
            .with("layer_" + std::to_string(k + 1) + "_max_ties", std::to_string(g.max_ties))
            .with("layer_" + std::to_string(k + 1) + "_delta_bound",
                  numeric::upper_decimal(s.pr.delta[k], 10));
    }
    return r;
}

rc::Gen<test_case> margin_case(rc::Gen<model::model<rational>> models, const run_config& cfg) {
    return model_and_input(std::move(models), cfg, n_cap);
}

/// A case with a single 1 at a random position of an all-0 input of length n - 1 (n >= 2).
rc::Gen<test_case> single_one_case(rc::Gen<model::model<rational>> models, const run_config& cfg) {
    const long max_n = std::max(2L, std::min(cfg.max_n, n_cap));
    return rc::gen::mapcat(rc::gen::pair(std::move(models), gen::length(max_n)), [](const auto& mn) {
        // Not a structured binding: clang 14 (the fuzzing build) cannot capture one.
        const auto& m = mn.first;
        const long n = std::max(2L, mn.second);
        return rc::gen::map(rc::gen::inRange(1L, n), [m, n](long p) {
            test_case c;
            c.model = m;
            std::string w(static_cast<std::size_t>(n - 1), '0');
            w[static_cast<std::size_t>(p - 1)] = '1';
            c.inputs.push_back(std::move(w));
            return c;
        });
    });
}

/// The leak of row n, head 1, layer 1 of a one-layer control against 1/4.
check_result leak_above_quarter(const test_case& c, const numeric::context& ctx,
                                const std::string& what) {
    const auto x = input_of(c);
    if (x.size() < 2) return check_result::holds("one position: nothing leaks");
    const soft_run s = run_case(c.model, x, ctx);
    const arb_ball& leak = s.obs.leak.at(0).at(0).back();
    const arb_ball quarter = numeric::from_rational<arb_ball>(rational(1, 4), ctx);
    const auto o = numeric::compare(leak, quarter);
    if (o == numeric::order::greater)
        return with_case(check_result::violated(what + ": the leak of row n is above 1/4"), c, s)
            .with("leak", show_ball(leak));
    if (o == numeric::order::unknown) return check_result::undecided("leak near 1/4");
    return check_result::holds();
}

} // namespace

runner::property leak_below_bound(bound_check_fn check) {
    if (!check) check = [](const analysis::bound_data& d, const analysis::gap_pass& h,
                           const analysis::soft_observation& o, const analysis::propagated& p,
                           const std::vector<std::vector<arb_ball>>& b,
                           const numeric::context& ctx) {
        return analysis::check_against_bound(d, h, o, p, b, ctx);
    };
    runner::property p;
    p.suite = "soft-hard";
    p.name = "leak-below-bound";
    p.statement = "for a hard or average-hard model with inverse temperature beta(n) (constant, "
                  "c ln n or n ln n) in its heads, at every row its soft counterpart computes the "
                  "leak 1 - w_T is at most r/(1+r), r = ((n-t)/t) e^(-beta (gamma - 2 eps_k)), "
                  "and every layer's state difference is at most the propagated delta_k";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.negative_control = "a row bound that forgets the n - t competing keys (r = e^(-beta gamma) / t)";
    p.generator = [](const run_config& cfg) { return margin_case(gen::margin_model(), cfg); };
    p.check = [check](const test_case& c, const numeric::context& ctx) {
        const auto x = input_of(c);
        const soft_run s = run_case(c.model, x, ctx);
        const analysis::bound_check b = check(s.data, s.hard, s.obs, s.pr, s.betas, ctx);
        if (b.rows_above || b.layers_above)
            return with_case(check_result::violated("a measured value is above its certified "
                                                    "bound: " + b.first_above),
                             c, s)
                .with("rows_above", std::to_string(b.rows_above))
                .with("layers_above", std::to_string(b.layers_above));
        if (b.rows_undecided || b.layers_undecided) {
            auto r = check_result::undecided(std::to_string(b.rows_undecided) + " rows and " +
                                             std::to_string(b.layers_undecided) +
                                             " layers too close to their bounds to decide");
            return r;
        }
        return check_result::holds();
    };
    p.tag = soft_hard_tag;
    p.shape = one_input_shape(runner::model_requirement::any_hard);
    return p;
}

runner::property readout_agrees_when_certified(propagate_fn prop) {
    runner::property p;
    p.suite = "soft-hard";
    p.name = "readout-agrees-when-certified";
    p.statement = "when the propagated bound certifies the readout (lip * delta_L < slack), the "
                  "readout of the soft counterpart (Arb balls) is the hard model's";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.negative_control = "a certificate that ignores the propagated difference (certified "
                         "whenever the hard readout has any slack)";
    // Half of the cases are "contains a 1" detectors at a constant beta on a single 1, where
    // the certificate is tight: the soft readout flips once n - 1 > e^(beta gamma). A given
    // model (check --model) is the only model of its cases: the detectors are not it.
    p.generator = [](const run_config& cfg) {
        if (cfg.fixed_model) return margin_case(gen::margin_model(), cfg);
        return rc::gen::oneOf(
            margin_case(gen::margin_model(), cfg),
            single_one_case(gen::control_model(gen::control_family::constant_beta), cfg));
    };
    p.check = [prop](const test_case& c, const numeric::context& ctx) {
        const auto x = input_of(c);
        const soft_run s = run_case(c.model, x, ctx, {}, prop);
        if (!s.pr.readout_certified)
            return check_result::holds("not applicable: the bound does not certify the readout");
        if (s.obs.soft_decision == "undecided")
            return check_result::undecided("the soft readout is undecided at this precision");
        if (s.obs.soft_decision != s.data.readout.hard_decision)
            return with_case(check_result::violated("the readout is certified but the soft model "
                                                    "disagrees with the hard one"),
                             c, s)
                .with("hard", s.data.readout.hard_decision)
                .with("soft", s.obs.soft_decision);
        return check_result::holds();
    };
    p.tag = [](const test_case& c) { return soft_hard_tag(c); };
    p.shape = one_input_shape(runner::model_requirement::any_hard);
    return p;
}

runner::property ties_follow_average(gap_pass_fn reference) {
    runner::property p;
    p.suite = "soft-hard";
    p.name = "ties-follow-average";
    p.statement = "with exact ties, the soft counterpart of an average-hard model stays within "
                  "the propagated bound of the average-hard values, and where the unique-hard "
                  "output differs from the average-hard one by more than twice that bound the "
                  "soft output is certified closer to the average-hard one";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.negative_control = "an average-hard reference that breaks ties to the leftmost position";
    p.generator = [](const run_config& cfg) {
        return margin_case(gen::margin_model(gen::margin_family::exact_ties), cfg);
    };
    p.check = [reference](const test_case& c, const numeric::context& ctx) {
        const auto x = input_of(c);
        const soft_run s = run_case(c.model, x, ctx, reference);
        const analysis::bound_check b =
            analysis::check_against_bound(s.data, s.hard, s.obs, s.pr, s.betas, ctx);
        if (b.rows_above || b.layers_above)
            return with_case(check_result::violated("the soft model leaves the average-hard "
                                                    "model's certified neighbourhood: " +
                                                    b.first_above),
                             c, s);
        if (b.rows_undecided || b.layers_undecided)
            return check_result::undecided("a measured value is too close to its bound");
        model::model<rational> unique = c.model;
        unique.attention = model::attention_kind::hard;
        const auto yu = attention::hard_forward_exact(unique, x, ctx).y;
        const auto& ya = s.hard.output;
        rational gap_sq = 0;
        for (std::size_t t = 0; t < ya.size(); ++t) gap_sq += (yu[t] - ya[t]) * (yu[t] - ya[t]);
        const arb_ball& delta = s.pr.delta.back();
        if (gap_sq == 0 || !numeric::finite(delta))
            return check_result::holds("not applicable: the two hard kinds agree here, or no bound");
        const arb_ball gap = numeric::sqrt(numeric::from_rational<arb_ball>(gap_sq, ctx));
        if (numeric::compare(gap, delta + delta) != numeric::order::greater)
            return check_result::holds("not applicable: the kinds differ by at most 2 delta_L");
        std::vector<arb_ball> soft_y = s.obs.output, ball_a, ball_u;
        for (std::size_t t = 0; t < ya.size(); ++t) {
            ball_a.push_back(numeric::from_rational<arb_ball>(ya[t], ctx));
            ball_u.push_back(numeric::from_rational<arb_ball>(yu[t], ctx));
        }
        arb_ball da = numeric::zero<arb_ball>(ctx), du = numeric::zero<arb_ball>(ctx);
        for (std::size_t t = 0; t < ya.size(); ++t) {
            da = da + (soft_y[t] - ball_a[t]) * (soft_y[t] - ball_a[t]);
            du = du + (soft_y[t] - ball_u[t]) * (soft_y[t] - ball_u[t]);
        }
        const auto o = numeric::compare(du, da);
        if (o == numeric::order::greater) return check_result::holds();
        if (o == numeric::order::unknown)
            return check_result::undecided("the soft output's distances to the two hard outputs "
                                           "overlap");
        return with_case(check_result::violated("the soft output is closer to the unique-hard "
                                                "output than to the average-hard one"),
                         c, s)
            .with("distance_sq_average", show_ball(da))
            .with("distance_sq_unique", show_ball(du));
    };
    p.tag = soft_hard_tag;
    p.shape = one_input_shape(runner::model_requirement::any_hard);
    return p;
}

namespace {

runner::property control_two_level() {
    runner::property p;
    p.suite = "controls";
    p.name = "soft-leak-vanishes-at-log-n-over-gamma";
    p.statement = "(false on purpose) at inverse temperature beta = ln n / gamma the leak of a "
                  "two-level row (one key at the maximal score, every other gamma below) is at "
                  "most 1/4";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: the weight on the maximal key is "
                         "n/(2n-1) -> 1/2, so beta must grow faster than ln n / gamma";
    p.generator = [](const run_config& cfg) {
        return single_one_case(gen::control_model(gen::control_family::two_level), cfg);
    };
    p.check = [](const test_case& c, const numeric::context& ctx) {
        return leak_above_quarter(c, ctx, "beta = ln n / gamma");
    };
    p.tag = case_class;
    p.shape = one_input_shape(runner::model_requirement::hard);
    return p;
}

runner::property control_constant_beta() {
    runner::property p;
    p.suite = "controls";
    p.name = "soft-agrees-at-constant-beta";
    p.statement = "(false on purpose) at a constant inverse temperature the soft counterpart "
                  "of a hard model has the hard model's readout at every n";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: with beta fixed the weight on one "
                         "key is at most e^(beta gamma)/(e^(beta gamma) + n - 1) -> 0 (Lemma 5's "
                         "dispersion), so a single 1 is missed once n > e^(beta gamma) + 1";
    p.generator = [](const run_config& cfg) {
        return single_one_case(gen::control_model(gen::control_family::constant_beta), cfg);
    };
    p.check = [](const test_case& c, const numeric::context& ctx) {
        const auto x = input_of(c);
        const soft_run s = run_case(c.model, x, ctx);
        if (s.obs.soft_decision == "undecided") return check_result::undecided("soft readout undecided");
        if (s.obs.soft_decision != s.data.readout.hard_decision)
            return with_case(check_result::violated("the soft readout differs from the hard one"), c, s)
                .with("hard", s.data.readout.hard_decision)
                .with("soft", s.obs.soft_decision)
                .with("leak", show_ball(s.obs.leak.at(0).at(0).back()));
        return check_result::holds();
    };
    p.tag = case_class;
    p.shape = one_input_shape(runner::model_requirement::hard);
    return p;
}

runner::property control_positional_gap() {
    runner::property p;
    p.suite = "controls";
    p.name = "soft-leak-vanishes-at-beta-n-gap-1-over-n";
    p.statement = "(false on purpose) with positional gaps 1/n (scores -j/n) an inverse "
                  "temperature beta = c n (c = 1/2 or 1) keeps the leak of the row at most 1/4";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.expected_to_fail = true;
    p.negative_control = "this property is itself a control: the weight on position 1 is "
                         "(1 - e^(-c))/(1 - e^(-c n)), so gaps 1/n need beta growing faster than n";
    p.generator = [](const run_config& cfg) {
        return model_and_input(gen::control_model(gen::control_family::positional_gap), cfg, n_cap);
    };
    p.check = [](const test_case& c, const numeric::context& ctx) {
        return leak_above_quarter(c, ctx, "beta = c n with gaps 1/n");
    };
    p.tag = case_class;
    p.shape = one_input_shape(runner::model_requirement::hard);
    return p;
}

} // namespace

void register_soft_hard(runner::registry& r) {
    r.add(leak_below_bound());
    r.add(readout_agrees_when_certified());
    r.add(ties_follow_average());
    r.add(control_two_level());
    r.add(control_constant_beta());
    r.add(control_positional_gap());
}

} // namespace attnprop::props
