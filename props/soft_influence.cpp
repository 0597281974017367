// Suite `soft-influence`: Hahn (2020), Lemma 5 and Theorem 6 for random soft models that satisfy
// the five hypotheses of Claim 2, decided rigorously.
//
//  influence-below-bounds     ||Δy_n|| <= a-posteriori pair bound and <= K(n)/n            [interval, ball]
//  prob-change-below-bound    ||Δp||_∞, TV <= factor·||Δy_n||/4 and <= factor·K(n)/(4n)    [interval, ball]
//  cross-entropy-above-chance mean PARITY/FIRST CE (bits) >= 1 - log2(1 + η), whole cube [ball]
//  forced-bracket-cross-entropy  mean 2DYCK forced-pair CE >= 1 - log2(1 + η)           [interval, ball]
//  influence-vanishes         (props/soft_influence_ladder.cpp) along a ladder of n: Δ <= the
//                             a-posteriori bound, n·Δ(n) <= K(n);
//                             the log-log rate is a reported measurement                  [interval, ball]
//
// Cases: a model from gen::soft_model, n (log-uniform up to 1024 for the pair properties, 4096
// for the probability change; a ladder top up to 1024; 9 for the exhaustive cube), one uniform
// input and a position parameter. The pair and ladder properties are filtered: certified
// double intervals first, Arb balls only for what they leave undecided (interval_first). Every
// comparison with a bound is a ball comparison: "certainly above" is a counterexample,
// "overlapping" is undecided and retried at doubled precision by the runner.
#include "props/soft_influence.hpp"
#include "props/soft_influence_internal.hpp"

#include "soft_influence/bounds.hpp"
#include "soft_influence/sweep.hpp"
#include "soft_influence/worst_case.hpp"
#include "lang/languages.hpp"
#include "numeric/filter.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <type_traits>

namespace attnprop::props {

using numeric::arb_ball;
using numeric::order;

namespace influence_detail {

std::optional<std::string> hypotheses_missing(const analysis::bound_report& rep) {
    if (rep.hypotheses_hold()) return std::nullopt;
    const auto* f = rep.first_failure();
    return std::string("the hypotheses of Claim 2 are not established for the generated model") +
           (f ? ": " + f->name + " (" + f->reason + ")" : "");
}

double abs_upper(const arb_ball& x) {
    arf_t u;
    arf_init(u);
    arb_get_abs_ubound_arf(u, x.raw(), 53);
    const double d = arf_get_d(u, ARF_RND_UP);
    arf_clear(u);
    return d;
}

std::optional<std::string> needs_hypotheses(const model::model<rational>& m) {
    const auto rep = analysis::a_priori_bound(m, 16, numeric::context{128});
    if (rep.hypotheses_hold()) return std::nullopt;
    const auto* f = rep.first_failure();
    return std::string("the hypotheses of Claim 2 are not established for the model") +
           (f ? ": " + f->name + " (" + f->reason + ")" : "") +
           "; Lemma 5 makes no claim about it (attnprop influence measures it)";
}

} // namespace influence_detail

using influence_detail::abs_upper;
using influence_detail::hypotheses_missing;
using influence_detail::interval_first;
using influence_detail::needs_hypotheses;
using influence_detail::versus;

namespace {

/// The cube case: a soft model, no input, "n" up to 13 (the whole cube {0,1}^(n-1) is
/// enumerated; influence enumerates it up to n - 1 = 12), "language" 0 (PARITY) or 1 (FIRST),
/// "eta_divisor".
runner::case_shape cube_shape() {
    runner::case_shape s;
    s.model = runner::model_requirement::soft;
    s.min_inputs = s.max_inputs = 0;
    s.params = {{"n", 2, 13, true, "the cube {0,1}^(n-1) is enumerated up to n - 1 = 12, as influence does"},
                {"language", 0, 1, false, "0 = PARITY, 1 = FIRST"},
                divisor_param("eta_divisor")};
    return s;
}

/// The forced-bracket case: a soft model, no input, "n", "seed", "pairs" in the range of
/// influence's --inputs, "eta_divisor".
runner::case_shape forced_pairs_shape() {
    runner::case_shape s;
    s.model = runner::model_requirement::soft;
    s.min_inputs = s.max_inputs = 0;
    s.params = {n_param(true), seed_param(true), {"pairs", 1, 100000, false, "the range of --inputs"},
                divisor_param("eta_divisor"), search_budget_param(), seed_param(false, "search_seed")};
    return s;
}


/// The case's "bound_divisor" parameter (>= 1; 1 when absent): every bound is divided by it.
/// Counterexample folders of `attnprop influence --bound-divisor D` (a negative control)
/// record it so that replay compares against the same shrunken bounds.
long bound_divisor_of(const test_case& c) {
    auto it = c.params.find("bound_divisor");
    return it != c.params.end() && it->second > 1 ? it->second : 1;
}



/// Symbols a and b have the same token embedding and the input map only adds or concatenates
/// it: exchanging them changes nothing, exactly (balls could not show a zero change).
bool indistinguishable(const model::model<rational>& m, int a, int b) {
    return (m.input == model::input_kind::add || m.input == model::input_kind::concat) &&
           m.token[static_cast<std::size_t>(a)] == m.token[static_cast<std::size_t>(b)];
}

/// The logits differ between output symbols by input-independent constants only (all rows of
/// W equal): the predictor is constant, η = 0 and the mean cross-entropy is
/// -(log2 p_0 + log2 p_1)/2 >= 1 by AM-GM, exactly (balls could not decide the equality case
/// p = (1/2, 1/2)).
bool constant_predictor(const model::readout<rational>& r) {
    const auto& w = r.logits.W;
    for (std::size_t a = 1; a < w.rows; ++a)
        for (std::size_t col = 0; col < w.cols; ++col)
            if (w.at(a, col) != w.at(0, col)) return false;
    return true;
}

/// The case's worst-case search (its "search_budget" and "search_seed", starting from the
/// drawn input x), or nullopt when the case carries none.
std::optional<analysis::search_result> search_of(const test_case& c, const model::input_sequence& x,
                                                 analysis::search_objective objective) {
    const auto b = c.params.find("search_budget");
    if (b == c.params.end() || b->second <= 0) return std::nullopt;
    analysis::search_options o;
    o.budget = static_cast<std::size_t>(b->second);
    if (auto sd = c.params.find("search_seed"); sd != c.params.end())
        o.seed = static_cast<std::uint64_t>(sd->second);
    o.objective = objective;
    o.start = x;
    return analysis::worst_case_search(c.model, static_cast<long>(x.size()), o);
}

/// The search's witness and how it was found, beside a result.
check_result with_search(check_result r, const test_case& c, const analysis::search_result& s) {
    r.with("search_input", model::format_input(c.model.sigma, s.input))
        .with("search_position", std::to_string(s.position + 1))
        .with("search_replacement", c.model.sigma.symbols[static_cast<std::size_t>(s.replacement)])
        .with("search_found_at", std::to_string(s.found_at) + " of " + std::to_string(s.evaluations) +
                                     " evaluations")
        .with("search_exhaustive", s.exhaustive ? "yes" : "no");
    return r;
}


/// check --model: a softmax readout over the model's outputs.
std::optional<std::string> needs_softmax(const model::model<rational>& m) {
    if (m.out.type != model::readout<rational>::kind::softmax)
        return std::string("needs a softmax readout (probabilities); the model's readout is ") +
               (m.out.type == model::readout<rational>::kind::threshold ? "threshold" : "map");
    return std::nullopt;
}

/// The bounds of prob-change-below-bound for one case.
struct prob_change_bounds {
    arb_ball factor;                  ///< max ||W_r - W_r'||_2
    arb_ball divisor;                 ///< 4 (8 in the negative control) times bound_divisor
    std::optional<arb_ball> bound_at_n; ///< K(n)/n
};

/// What the judged pairs of a pair property (influence-below-bounds, prob-change-below-bound)
/// left open.
struct pair_tally {
    bool undecided = false;
    bool agree = true;           ///< every undecided comparison's sides agree to their radii
    bool unresolved_zero = true; ///< every undecided comparison is two sides below 2^-64 around 0
    std::string undecided_at;

    /// Notes an undecided comparison of `measured` with `bound` (`zero`: both sides are
    /// unresolved zeros), described by `at`.
    void note(const arb_ball& measured, const arb_ball& bound, bool zero, std::string at) {
        undecided = true;
        agree = agree && sides_agree(measured, bound);
        unresolved_zero = unresolved_zero && zero;
        undecided_at = std::move(at);
    }
};

/// Judges the pairs of a pair property measured in S (certified double intervals or Arb
/// balls): every pair of the measured positions of the drawn input x and, under check --model,
/// the pair the worst-case search found. `judge(input, pair, found_by)` returns a violation or
/// notes what it leaves open. A pair of indistinguishable symbols is skipped: its change is
/// exactly zero, which no bound is below. `posterior`: the profile carries each pair's
/// a-posteriori bound (the incremental kernel's posterior_cache where it applies, O(n d) per
/// pair, else two traces). A violation or undefined value, or nothing.
template <numeric::ExpScalar S, class Judge>
std::optional<check_result> judge_pairs(const test_case& c, const model::input_sequence& x,
                                        const std::optional<analysis::search_result>& found,
                                        bool posterior, const numeric::context& ctx, Judge&& judge) {
    const auto ms = model::to_scalar<S>(c.model, ctx);
    analysis::influence_options opt;
    opt.positions = measured_positions(c, x.size());
    opt.posterior = posterior;
    {
        const auto prof = analysis::influence_profile_of(ms, c.model, x, ctx, opt);
        for (const auto& pr : prof.pairs) {
            if (indistinguishable(c.model, x[pr.position], pr.replacement)) continue;
            if (auto r = judge(x, pr, "the drawn input")) return r;
        }
    }
    if (found && found->undefined)
        return check_result::undefined(*found->undefined + " (found by the worst-case search)");
    if (found && found->found &&
        !indistinguishable(c.model, found->input[found->position], found->replacement)) {
        opt.positions = {found->position};
        const auto prof = analysis::influence_profile_of(ms, c.model, found->input, ctx, opt);
        for (const auto& pr : prof.pairs)
            if (pr.replacement == found->replacement)
                if (auto r = judge(found->input, pr, "the worst-case search"))
                    return with_search(std::move(*r), c, *found);
    }
    return std::nullopt;
}


/// One pair of prob-change-below-bound: its probability changes against factor * ||dy|| / D
/// and factor * K(n) / (n D), compared as balls (an interval is the ball of its end points).
template <typename S>
std::optional<check_result> judge_prob_change(const test_case& c, std::size_t n,
                                              const analysis::influence_pair<S>& pr,
                                              const prob_change_bounds& b, const char* found_by,
                                              pair_tally& t) {
    auto ball_of = [](const S& v) -> arb_ball { return numeric::to_ball(v); };
    // Both sides of an overlap below 2^-64 and not resolved from zero: a change that is exactly
    // zero (the output does not depend on the position) where enclosures cannot prove it; more
    // precision only narrows both balls around 0.
    const auto tiny_zero = [](const arb_ball& v) {
        return arb_contains_zero(v.raw()) && numeric::radius_as_double(v) < 0x1.0p-64;
    };
    const arb_ball dy = ball_of(pr.dy);
    const arb_ball local = b.factor * dy / b.divisor;
    std::optional<arb_ball> global;
    if (b.bound_at_n) global = b.factor * *b.bound_at_n / b.divisor;
    for (const auto& change : {std::pair{"max-norm", ball_of(*pr.dp_max)},
                               std::pair{"total variation", ball_of(*pr.dp_tv)}}) {
        // Not a structured binding: clang 14 (the fuzzing build) cannot capture one.
        const char* what = change.first;
        const arb_ball& dp = change.second;
        auto fail = [&](const char* which, const arb_ball& bound) {
            return check_result::violated(std::string("the ") + what +
                                          " probability change exceeds " + which)
                .with("n", std::to_string(n))
                .with("position", std::to_string(pr.position + 1))
                .with("replacement", c.model.sigma.symbols[static_cast<std::size_t>(pr.replacement)])
                .with("prob_change", show_ball(dp))
                .with("influence", show_ball(dy))
                .with("factor", show_ball(b.factor))
                .with("bound", show_ball(bound))
                .with("found_by", found_by);
        };
        const auto at = [&](const char* against) {
            return std::string(what) + " change " + show_ball(dp) + " at position " +
                   std::to_string(pr.position + 1) + " against " + against;
        };
        const order ol = versus(dp, local);
        if (ol == order::greater) return fail("factor * ||dy_n|| / divisor", local);
        if (ol == order::unknown)
            t.note(dp, local, tiny_zero(dp) && tiny_zero(local),
                   at("factor * ||dy_n|| / divisor = ") + show_ball(local));
        if (global) {
            const order og = versus(dp, *global);
            if (og == order::greater) return fail("factor * K(n) / (divisor n)", *global);
            if (og == order::unknown) t.note(dp, *global, false, at("factor * K(n) / (divisor n)"));
        }
    }
    return std::nullopt;
}

/// prob-change-below-bound measured in S (certified double intervals or Arb balls).
template <numeric::ExpScalar S>
check_result prob_change_check(const test_case& c, const model::input_sequence& x,
                               const prob_change_bounds& b,
                               const std::optional<analysis::search_result>& found,
                               const numeric::context& ctx) {
    const std::size_t n = x.size();
    pair_tally t;
    if (auto r = judge_pairs<S>(c, x, found, false, ctx,
                                [&](const model::input_sequence&, const analysis::influence_pair<S>& pr,
                                    const char* found_by) {
                                    return judge_prob_change(c, n, pr, b, found_by, t);
                                }))
        return *r;
    if (t.undecided && t.unresolved_zero)
        return check_result::undecided_at_any_precision(
            "a probability change and its bound factor * ||dy_n|| / divisor are both below "
            "2^-64 and not resolved from zero (an exact zero change that enclosures do not "
            "prove; more precision is not tried): " + t.undecided_at);
    if (t.undecided)
        return check_result::undecided("probability change and bound overlap (" + t.undecided_at + ")")
            .with_sides_agree(t.agree);
    return check_result::holds();
}

/// The bounds of influence-below-bounds for one case.
struct influence_bounds {
    arb_ball divisor;                 ///< the case's bound_divisor
    std::optional<arb_ball> a_priori; ///< K(n)/n / divisor
    pair_bound_fn adjust;             ///< applied to each a-posteriori bound (negative control)
};

/// One pair of influence-below-bounds, from the input xb it changes: ||dy_n|| against its
/// a-posteriori bound (the profile's, after `adjust`) and K(n)/n, each over the divisor.
template <typename S>
std::optional<check_result> judge_influence(const test_case& c, const model::input_sequence& xb,
                                            const analysis::influence_pair<S>& pr,
                                            const influence_bounds& b, const numeric::context& ctx,
                                            const char* found_by, pair_tally& t) {
    const std::size_t n = xb.size();
    if (!pr.posterior) throw std::logic_error("influence-below-bounds: a pair without its a-posteriori bound");
    const arb_ball dy = numeric::to_ball(pr.dy);
    const arb_ball post = (b.adjust ? b.adjust(*pr.posterior, n, ctx) : *pr.posterior) / b.divisor;
    const auto pos = std::to_string(pr.position + 1);
    const auto with_pair = [&](check_result r) {
        auto x2 = xb;
        x2[pr.position] = pr.replacement;
        r.with("n", std::to_string(n))
            .with("position", pos)
            .with("replacement", c.model.sigma.symbols[static_cast<std::size_t>(pr.replacement)])
            .with("changed_input", model::format_input(c.model.sigma, x2))
            .with("influence", show_ball(dy))
            .with("posterior_bound", show_ball(post))
            .with("found_by", found_by);
        if (b.a_priori) r.with("a_priori_bound", show_ball(*b.a_priori));
        return r;
    };
    const order op = versus(dy, post);
    if (op == order::greater)
        return with_pair(check_result::violated(std::string("the one-symbol influence exceeds the ") +
                                                (b.adjust ? "replaced" : "a-posteriori") + " bound"));
    if (b.a_priori) {
        const order oa = versus(dy, *b.a_priori);
        if (oa == order::greater)
            return with_pair(check_result::violated(
                "the one-symbol influence exceeds the a-priori bound K(n)/n"));
        if (oa == order::unknown) t.note(dy, *b.a_priori, false, pos + ", against K(n)/n");
    }
    // A zero change the balls cannot resolve was measured again differentially by the profile
    // (influence_profile_of); what overlaps here is a change at its bound: more precision.
    if (op == order::unknown) t.note(dy, post, false, pos + ", against the a-posteriori bound");
    return std::nullopt;
}

/// influence-below-bounds measured in S (certified double intervals or Arb balls).
template <numeric::ExpScalar S>
check_result influence_check(const test_case& c, const model::input_sequence& x,
                             const influence_bounds& b,
                             const std::optional<analysis::search_result>& found,
                             const numeric::context& ctx) {
    pair_tally t;
    if (auto r = judge_pairs<S>(c, x, found, true, ctx,
                                [&](const model::input_sequence& xb, const analysis::influence_pair<S>& pr,
                                    const char* found_by) {
                                    return judge_influence(c, xb, pr, b, ctx, found_by, t);
                                }))
        return *r;
    if (t.undecided)
        return check_result::undecided("influence and bound overlap at this precision (position " +
                                       t.undecided_at + ")")
            .with_sides_agree(t.agree);
    return check_result::holds();
}

} // namespace

std::vector<std::size_t> measured_positions(const test_case& c, std::size_t n) {
    std::vector<std::size_t> out;
    if (n < 2) return out;
    if (n <= 13) {
        for (std::size_t i = 0; i + 1 < n; ++i) out.push_back(i);
        return out;
    }
    std::set<std::size_t> s{0, 1, (n - 1) / 2, n - 3, n - 2};
    if (auto it = c.params.find("position"); it != c.params.end() && it->second >= 1 &&
                                             static_cast<std::size_t>(it->second) < n)
        s.insert(static_cast<std::size_t>(it->second - 1));
    return {s.begin(), s.end()};
}

runner::property influence_below_bounds(pair_bound_fn adjust, stages measured_in) {
    runner::property p;
    p.suite = "soft-influence";
    p.name = "influence-below-bounds";
    p.statement = "for a soft model satisfying the hypotheses of Claim 2, every one-symbol change "
                  "moves y_n^(L) by at most the a-posteriori pair bound and at most K(n)/n "
                  "(recursion (B)), so n * influence <= K";
    p.kinds = runner::kinds_of<numeric::dinterval, numeric::arb_ball>();
    p.negative_control = "the a-posteriori bound divided by n^2 (too small) is exceeded";
    p.generator = [](const run_config& cfg) {
        // Measured in certified double intervals first, each pair's a-posteriori bound from
        // the incremental kernel's states (O(n d) per pair): n is drawn log-uniformly up to
        // --max-n (at most 1024).
        return with_search_params(model_input_position(gen::soft_model(), cfg, 1024,
                                                       random_lengths::log_uniform),
                                  cfg);
    };
    p.applies = needs_hypotheses;
    p.check = [adjust, measured_in](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        const std::size_t n = x.size();
        if (n < 2) return check_result::holds("no position before eos");
        const auto rep = analysis::a_priori_bound(c.model, static_cast<long>(n), ctx);
        if (auto why = hypotheses_missing(rep)) return check_result::undecided(*why);
        influence_bounds b{numeric::from_int<arb_ball>(bound_divisor_of(c), ctx), std::nullopt, adjust};
        if (rep.bound_at_n) b.a_priori = *rep.bound_at_n / b.divisor;
        // check --model: the worst change a search from the drawn input finds at this n.
        const auto found = search_of(c, x, analysis::search_objective::influence);
        return interval_first([&](auto kind) {
            return influence_check<typename decltype(kind)::type>(c, x, b, found, ctx);
        }, measured_in, ctx);
    };
    p.shape = position_shape(runner::model_requirement::soft, false,
                             {n_param(false), divisor_param("bound_divisor"), search_budget_param(),
                              seed_param(false, "search_seed")});
    p.tag = case_class;
    return p;
}

runner::property prob_change_below_bound(long divisor, stages measured_in) {
    runner::property p;
    p.suite = "soft-influence";
    p.name = "prob-change-below-bound";
    p.statement = "for a soft predictor satisfying the hypotheses, every one-symbol change moves "
                  "the output distribution by ||Δp||_inf, TV <= factor * ||Δy_n^(L)|| / 4 and "
                  "<= factor * K(n) / (4n), factor = max ||W_r - W_r'||_2";
    p.kinds = runner::kinds_of<numeric::dinterval, numeric::arb_ball>();
    p.negative_control = "the same bound with 8 in place of 4 is exceeded (a softmax near "
                         "p = (1/2, 1/2) attains osc/4)";
    p.generator = [](const run_config& cfg) {
        // Measured in certified double intervals first (the incremental kernel, O(n d) per
        // pair): cheap at every n, so n is drawn log-uniformly up to --max-n (at most 4096).
        return with_search_params(model_input_position(gen::soft_model(), cfg, 4096,
                                                       random_lengths::log_uniform),
                                  cfg);
    };
    p.applies = [](const model::model<rational>& m) {
        if (auto why = needs_softmax(m)) return why;
        return needs_hypotheses(m);
    };
    p.check = [divisor, measured_in](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        const std::size_t n = x.size();
        if (n < 2) return check_result::holds("no position before eos");
        if (c.model.out.type != model::readout<rational>::kind::softmax)
            return check_result::holds("not a softmax readout: no probabilities");
        if (constant_predictor(c.model.out))
            return check_result::holds("every logit row is the same: p does not depend on y_n, "
                                       "so every change of p is exactly 0");
        const auto rep = analysis::a_priori_bound(c.model, static_cast<long>(n), ctx);
        if (auto why = hypotheses_missing(rep)) return check_result::undecided(*why);
        const prob_change_bounds b{analysis::logit_oscillation_factor(c.model.out, ctx),
                                   numeric::from_int<arb_ball>(divisor * bound_divisor_of(c), ctx),
                                   rep.bound_at_n};
        // check --model: the largest probability change a search from the drawn input finds.
        const auto found = search_of(c, x, analysis::search_objective::prob_change);
        return interval_first([&](auto kind) {
            return prob_change_check<typename decltype(kind)::type>(c, x, b, found, ctx);
        }, measured_in, ctx);
    };
    p.shape = position_shape(runner::model_requirement::soft, false,
                             {n_param(false), divisor_param("bound_divisor"), search_budget_param(),
                              seed_param(false, "search_seed")});
    p.tag = case_class;
    return p;
}

runner::property cross_entropy_above_chance(long eta_divisor,
                                            std::optional<rc::Gen<model::model<rational>>> source) {
    gen::soft_bounds binary;
    binary.max_alphabet = 2;
    rc::Gen<model::model<rational>> models = source ? *source : gen::soft_model(binary);
    runner::property p;
    p.suite = "soft-influence";
    p.name = "cross-entropy-above-chance";
    p.statement = "for a soft predictor over {0,1}, the mean PARITY (language = 0) or FIRST "
                  "(language = 1) cross-entropy over the whole cube {0,1}^(n-1) is >= "
                  "1 - log2(1 + eta) bits, eta = min over the label-swapping bits b (every bit, "
                  "resp. bit 1) of the largest ||Δp||_inf from flipping b";
    p.kinds = runner::kinds_of<numeric::arb_ball>();
    p.negative_control = "eta divided by 4, on the confident Chiang & Cholak model with layer "
                         "norm eps = 0 (cc-parity-ln0), is violated";
    p.generator = [models](const run_config& cfg) {
        // Random models: n <= 9 keeps the cube cheap; a fixed model n <= 11 (a cube of up to
        // 1024 inputs per case).
        const long cap = std::max(2L, fixed_model_max_n(cfg, std::min(cfg.max_n, cfg.fixed_model ? 11L : 9L)));
        const auto ns = cfg.fixed_model ? lengths_of(cfg, cap, 2, cap) : rc::gen::inRange(2L, cap + 1);
        // The label: 0 = PARITY (every bit swaps it), 1 = FIRST (bit 1 swaps it); shrinks to 0.
        return rc::gen::map(rc::gen::tuple(models_of(cfg, models), ns, rc::gen::inRange(0L, 2L)),
                            [](const std::tuple<model::model<rational>, long, long>& t) {
                                test_case c;
                                c.model = std::get<0>(t);
                                c.params["n"] = std::get<1>(t);
                                c.params["language"] = std::get<2>(t);
                                return c;
                            });
    };
    p.applies = [](const model::model<rational>& m) -> std::optional<std::string> {
        if (m.sigma.symbols.size() != 2 || m.sigma.index_of("0") < 0 || m.sigma.index_of("1") < 0)
            return "needs the input alphabet {0, 1} (PARITY and FIRST over the cube)";
        if (auto why = needs_softmax(m)) return why;
        const auto& outs = m.out.symbols;
        if (std::find(outs.begin(), outs.end(), "0") == outs.end() ||
            std::find(outs.begin(), outs.end(), "1") == outs.end())
            return "needs the output symbols 0 and 1 (the PARITY and FIRST labels)";
        return std::nullopt;
    };
    p.check = [eta_divisor](const test_case& c, const numeric::context& ctx) {
        const auto& m = c.model;
        const long n = c.params.at("n");
        // Folders written by `attnprop influence` carry the label and the divisor of their
        // sweep: language 0 = PARITY (the default), 1 = FIRST.
        const long divisor = c.params.count("eta_divisor") ? c.params.at("eta_divisor") : eta_divisor;
        const bool first = c.params.count("language") && c.params.at("language") == 1;
        const lang::language label = first ? lang::language::first : lang::language::parity;
        const char* label_name = first ? "FIRST" : "PARITY";
        const int zero = m.sigma.index_of("0"), one = m.sigma.index_of("1");
        if (zero < 0 || one < 0 || m.sigma.symbols.size() != 2)
            return check_result::holds("not applicable: the input alphabet is not {0, 1}");
        if (m.out.type != model::readout<rational>::kind::softmax)
            return check_result::holds("not applicable: not a softmax readout");
        const auto& outs = m.out.symbols;
        const auto o0 = std::find(outs.begin(), outs.end(), "0") - outs.begin();
        const auto o1 = std::find(outs.begin(), outs.end(), "1") - outs.begin();
        if (o0 == static_cast<long>(outs.size()) || o1 == static_cast<long>(outs.size()))
            return check_result::holds("not applicable: the output alphabet lacks 0 or 1");
        if (constant_predictor(m.out))
            return check_result::holds("constant predictor: eta = 0 and CE >= 1 bit exactly");
        if (divisor < 1) throw std::invalid_argument("eta_divisor must be >= 1");
        const auto cube = analysis::cube_cross_entropy(m, n, label, ctx, divisor);
        const arb_ball& ce = cube.ce_bits;
        const arb_ball& floor_bits = cube.floor_bits;
        if (cube.eta_zero_exactly)
            return check_result::holds("eta = 0 exactly: p does not depend on the flipped bit, "
                                       "CE >= 1 bit by AM-GM on every label-swapped pair");
        const order o = cube.ce_vs_floor;
        if (o == order::less)
            return check_result::violated(std::string("the mean ") + label_name +
                                          " cross-entropy is below 1 - log2(1 + eta)")
                .with("n", std::to_string(n))
                .with("cross_entropy_bits", show_ball(ce))
                .with("eta", show_ball(cube.eta))
                .with("eta_divisor", std::to_string(divisor))
                .with("flipped_bit", std::to_string(cube.flipped_bit))
                .with("floor_bits", show_ball(floor_bits))
                .with("accuracy", std::to_string(cube.correct) + "/" + std::to_string(cube.cube));
        if (o == order::unknown)
            return check_result::undecided("cross-entropy and its floor overlap at this precision "
                                           "(CE " + show_ball(ce) + ", floor " + show_ball(floor_bits) + ")")
                .with_sides_agree(sides_agree(ce, floor_bits));
        return check_result::holds();
    };
    p.shape = cube_shape();
    p.tag = case_class;
    return p;
}

runner::property forced_bracket_cross_entropy(long eta_divisor,
                                              std::optional<rc::Gen<model::model<rational>>> source) {
    gen::soft_bounds four;
    four.max_alphabet = 4;
    // Four input symbols and two outputs, renamed: ( ) [ ] in, ) and ] out.
    rc::Gen<model::model<rational>> models =
        source ? *source
               : rc::gen::map(rc::gen::suchThat(gen::soft_model(four),
                                                [](const model::model<rational>& m) {
                                                    return m.sigma.symbols.size() == 4 &&
                                                           m.out.symbols.size() == 2;
                                                }),
                              [](model::model<rational> m) {
                                  m.sigma.symbols = {"(", ")", "[", "]"};
                                  m.sigma.eos = "$";
                                  m.out.symbols = {")", "]"};
                                  return m;
                              });
    runner::property p;
    p.suite = "soft-influence";
    p.name = "forced-bracket-cross-entropy";
    p.statement = "for a soft predictor of the next closing bracket of 2DYCK, the mean "
                  "cross-entropy over 8 forced-bracket pairs (the case's `pairs` when given; an "
                  "unbalanced prefix and the same "
                  "prefix with its top opener's type flipped) is >= 1 - log2(1 + eta) bits, eta "
                  "the largest ||Δp||_inf over the pairs; under check --model also on the set "
                  "of pairs of smallest margin a search from them finds";
    p.kinds = runner::kinds_of<numeric::dinterval, numeric::arb_ball>();
    p.negative_control = "eta divided by 10^6, on a recency predictor that beats chance on the "
                         "pairs, is violated; on that predictor biased towards ')' the drawn "
                         "pairs miss it and the search finds it";
    p.applies = [](const model::model<rational>& m) -> std::optional<std::string> {
        if (m.sigma.symbols != std::vector<std::string>{"(", ")", "[", "]"})
            return "needs the input alphabet ( ) [ ] in this order (2DYCK)";
        if (auto why = needs_softmax(m)) return why;
        if (m.out.symbols != std::vector<std::string>{")", "]"})
            return "needs the output symbols ) and ] (the forced closing bracket)";
        return std::nullopt;
    };
    p.generator = [models](const run_config& cfg) {
        const long cap = std::max(2L, std::min(cfg.max_n, 64L));
        const auto ns = cfg.fixed_model ? lengths_of(cfg, cap, 2) : rc::gen::inRange(2L, cap + 1);
        return with_search_params(
            rc::gen::map(rc::gen::tuple(models_of(cfg, models), ns, rc::gen::inRange(0L, 1L << 30)),
                         [](const std::tuple<model::model<rational>, long, long>& t) {
                             test_case c;
                             c.model = std::get<0>(t);
                             c.params["n"] = std::get<1>(t);
                             c.params["seed"] = std::get<2>(t);
                             return c;
                         }),
            cfg);
    };
    p.check = [eta_divisor](const test_case& c, const numeric::context& ctx) {
        const long n = c.params.at("n");
        const long divisor = c.params.count("eta_divisor") ? c.params.at("eta_divisor") : eta_divisor;
        if (divisor < 1) throw std::invalid_argument("eta_divisor must be >= 1");
        if (constant_predictor(c.model.out))
            return check_result::holds("constant predictor: eta = 0 and CE = 1 bit exactly");
        const auto seed = static_cast<std::uint64_t>(c.params.at("seed"));
        // Folders written by `attnprop influence --language 2dyck` carry their sweep's pair
        // count (its --inputs) and divisor.
        const auto pairs = static_cast<std::size_t>(c.params.count("pairs") ? c.params.at("pairs") : 8);
        if (pairs < 1) throw std::invalid_argument("pairs must be >= 1");
        // Measured in certified double intervals first (interval_first): 16 soft passes at n up
        // to --max-n cost a few Arb passes' time in intervals; Arb balls only for the cases the
        // intervals leave undecided. Both are enclosures, so either's verdict is rigorous.
        return interval_first([&](auto kind) -> check_result {
            using S = typename decltype(kind)::type;
            const auto violated = [&](const analysis::cross_entropy_row& ce, const char* found_by) {
                return check_result::violated("the mean cross-entropy over the forced-bracket pairs "
                                              "is below 1 - log2(1 + eta)")
                    .with("n", std::to_string(n))
                    .with("cross_entropy_bits", ce.mean_ce_bits)
                    .with("eta", ce.eta)
                    .with("eta_divisor", std::to_string(divisor))
                    .with("floor_bits", ce.floor_bits)
                    .with("accuracy", std::to_string(ce.correct) + "/" + std::to_string(ce.inputs))
                    .with("found_by", found_by);
            };
            const auto ce = analysis::forced_pair_cross_entropy<S>(c.model, n, pairs, seed,
                                                                           divisor, ctx);
            if (ce.check == verdict::failed) return violated(ce, "the drawn pairs");
            std::string undecided;
            if (ce.check != verdict::passed)
                undecided = "cross-entropy and its floor overlap at this precision (CE " +
                            ce.mean_ce_bits + ", floor " + ce.floor_bits + ")";
            // check --model: the pair set of smallest margin a search from the drawn pairs finds,
            // judged in the same kind as the drawn ones.
            if (const auto b = c.params.find("search_budget"); b != c.params.end() && b->second > 0) {
                analysis::forced_pair_search_options o;
                o.budget = static_cast<std::size_t>(b->second);
                if (auto sd = c.params.find("search_seed"); sd != c.params.end())
                    o.seed = static_cast<std::uint64_t>(sd->second);
                o.pairs = pairs;
                o.eta_divisor = divisor;
                o.start.emplace();
                for (std::size_t k = 0; k < pairs; ++k)
                    o.start->push_back(analysis::forced_pair(c.model, n, k, seed).x);
                const auto found = analysis::forced_pair_search(c.model, n, o);
                // A set of pairs judged in this kind (a value that does not exist throws, as for
                // the drawn pairs): a violation names the pairs and the evaluation that found them.
                const auto judge = [&](const std::vector<model::input_sequence>& xs,
                                       const std::string& found_at, bool best) -> std::optional<check_result> {
                    std::vector<analysis::forced_bracket_pair> set;
                    std::string named;
                    for (const auto& x : xs) {
                        set.push_back(*analysis::forced_pair_of(c.model, x));
                        named += (named.empty() ? "" : " ") + model::format_input(c.model.sigma, x);
                    }
                    const auto fce = analysis::forced_pairs_cross_entropy<S>(c.model, set, divisor, ctx);
                    if (fce.check == verdict::failed) {
                        auto r = violated(fce, "the worst-case search");
                        r.with("search_pairs", named).with("search_found_at", found_at);
                        if (best) {
                            std::ostringstream margin;
                            margin.precision(6);
                            margin << found.margin;
                            r.with("search_margin_double", margin.str());
                        }
                        return r;
                    }
                    if (fce.check != verdict::passed && undecided.empty())
                        undecided = "cross-entropy and its floor overlap at this precision on the pairs "
                                    "the search found (CE " + fce.mean_ce_bits + ", floor " +
                                    fce.floor_bits + ")";
                    return std::nullopt;
                };
                // A pair whose probabilities double could not compute: measured alone in balls.
                if (found.undefined)
                    if (auto r = judge({found.undefined_input}, "a pair undefined in double, met by the search",
                                       false))
                        return *r;
                if (found.found)
                    if (auto r = judge(found.pairs, std::to_string(found.found_at) + " of " +
                                                        std::to_string(found.evaluations) + " evaluations",
                                       true))
                        return *r;
            }
            if (!undecided.empty()) return check_result::undecided(undecided);
            return check_result::holds();
        }, stages::filtered, ctx);
    };
    p.shape = forced_pairs_shape();
    p.tag = case_class;
    return p;
}

void register_soft_influence(runner::registry& r) {
    r.add(influence_below_bounds());
    r.add(prob_change_below_bound());
    r.add(cross_entropy_above_chance());
    r.add(forced_bracket_cross_entropy());
    r.add(influence_vanishes());
}

} // namespace attnprop::props
