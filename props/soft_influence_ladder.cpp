// Suite `soft-influence`, the ladder property (the others are in props/soft_influence.cpp):
//
//  influence-vanishes   along a ladder of n (top/8, top/4, top/2, top): Δ <= the a-posteriori
//                       bound and n·Δ(n) <= K(n) at every rung; the log-log rate is a reported
//                       measurement, never a verdict                               [interval, ball]
//
// Cases: a model from gen::soft_model, a ladder top (a power of two from 16 up to 1024) and one
// input of top - 1 symbols whose prefixes give the rungs. Each ladder is measured in certified
// double intervals first, Arb balls only where they leave it undecided (interval_first).
#include "props/soft_influence.hpp"
#include "props/soft_influence_internal.hpp"

#include "attention/soft.hpp"
#include "soft_influence/bounds.hpp"
#include "soft_influence/loglog_fit.hpp"
#include "soft_influence/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace attnprop::props {

using numeric::arb_ball;
using numeric::order;
using influence_detail::abs_upper;
using influence_detail::hypotheses_missing;
using influence_detail::interval_first;
using influence_detail::needs_hypotheses;
using influence_detail::versus;

runner::case_shape ladder_shape() {
    runner::case_shape s;
    s.model = runner::model_requirement::soft;
    s.params = {{"ladder_top", 16, 1L << 20, true, "a ladder top of at least 16, within the range of --n"}};
    s.relations = [](const test_case& c) -> std::optional<runner::case_problem> {
        const long top = c.params.at("ladder_top");
        if (static_cast<long>(c.inputs.front().size()) != top - 1)
            return runner::case_problem{"/inputs/0", "a ladder case needs an input of ladder_top - 1 = " +
                                                         std::to_string(top - 1) + " symbols; it has " +
                                                         std::to_string(c.inputs.front().size())};
        return std::nullopt;
    };
    return s;
}

std::vector<std::size_t> ladder_lengths(std::size_t top) {
    std::vector<std::size_t> out;
    for (std::size_t d = 8; d >= 1; d /= 2) out.push_back(top / d);
    return out;
}

rc::Gen<test_case> ladder_case(rc::Gen<model::model<rational>> models, const run_config& cfg,
                               long cap) {
    // Every ladder top among the powers of two from 16 up to the limit is drawn about equally
    // often (uniform over the rungs, shrinking to 16; drawn at full size, since RapidCheck's
    // inRange narrows its range at the small sizes of a run's start): a fixed model up to
    // --max-n (and its longest n), random models up to the cap.
    const long limit = std::max(16L, cfg.fixed_model ? fixed_model_max_n(cfg, cfg.max_n)
                                                     : std::min(cfg.max_n, cap));
    int rungs = 0;
    for (long t = 16; t * 2 <= limit; t *= 2) ++rungs;
    const auto case_of = [](const model::model<rational>& m, int k) {
        const long t = 16L << k;
        return rc::gen::map(gen::input(m.sigma, t), [m, t](const std::string& w) {
            test_case c;
            c.model = m;
            c.inputs.push_back(w);
            c.params["ladder_top"] = t;
            return c;
        });
    };
    return rc::gen::mapcat(rc::gen::pair(models_of(cfg, std::move(models)),
                                         rc::gen::resize(100, rc::gen::inRange(0, rungs + 1))),
                           [case_of](const std::pair<model::model<rational>, int>& mk) {
                               return case_of(mk.first, mk.second);
                           });
}

namespace {

/// The largest attention weight of x's forward pass, over every layer, row and head, in
/// double (a measurement: n times it is Lemma 5's effective concentration E); 1 when double
/// has no value (the rate then reads the rung as concentrated, never as a pass).
double max_weight_of(const model::model<rational>& m, const model::input_sequence& x) {
    const numeric::context dctx{53};
    try {
        const auto md = model::to_scalar<double>(m, dctx);
        const auto t = attention::soft_forward(md, x, dctx, {.trace = true, .trace_weights = true});
        double best = 0;
        for (const auto& layer : t.trace->weights)
            for (const auto& row : layer)
                for (const auto& head : row)
                    for (const double w : head) best = std::max(best, w);
        return best;
    } catch (const numeric::undefined_error&) {
        return 1;
    }
}

/// influence_ladder measured in S (certified double intervals or Arb balls); the points hold
/// balls (an interval is the ball of its end points). With `posterior`, each pair's
/// a-posteriori bound comes from the profile (posterior_cache with the incremental kernel).
template <numeric::ExpScalar S>
std::vector<ladder_point> ladder_in(const test_case& c, const numeric::context& ctx, bool posterior,
                                    const bound_adjust_fn& adjust) {
    const auto full = input_of(c);
    const auto top = static_cast<std::size_t>(c.params.at("ladder_top"));
    if (top < 16 || full.size() != top)
        throw std::invalid_argument("a ladder case needs ladder_top >= 16 and an input of "
                                    "ladder_top - 1 symbols");
    const auto ms = model::to_scalar<S>(c.model, ctx);
    std::vector<ladder_point> out;
    for (std::size_t n : ladder_lengths(top)) {
        model::input_sequence x(full.begin(), full.begin() + static_cast<long>(n - 1));
        x.push_back(c.model.sigma.eos_index());
        analysis::influence_options opt;
        if (n > 13) opt.positions = {0, 1, (n - 1) / 2, n - 3, n - 2};
        opt.posterior = posterior;
        const auto prof = analysis::influence_profile_of(ms, c.model, x, ctx, opt);
        ladder_point pt;
        pt.n = n;
        pt.max_influence = numeric::zero<arb_ball>(ctx);
        double best = -1;
        const analysis::influence_pair<S>* largest = nullptr;
        for (const auto& pr : prof.pairs) {
            const arb_ball dy = numeric::to_ball(pr.dy);
            pt.max_influence = analysis::max_enclosure(pt.max_influence, dy);
            if (const double v = numeric::approx_double(dy); v > best) {
                best = v;
                pt.position = pr.position;
                pt.replacement = pr.replacement;
                largest = &pr;
            }
        }
        // The largest change against its own a-posteriori bound: the pair most likely to
        // exceed it.
        if (posterior && largest && largest->posterior) {
            arb_ball bound = *largest->posterior;
            if (adjust) bound = adjust(bound, n, ctx);
            pt.posterior_influence = numeric::to_ball(largest->dy);
            pt.posterior = numeric::compare(*pt.posterior_influence, bound);
            pt.posterior_position = largest->position;
            pt.posterior_replacement = largest->replacement;
            pt.posterior_bound = std::move(bound);
        }
        pt.a_priori = analysis::a_priori_bound(c.model, static_cast<long>(n), ctx).bound_at_n;
        if (pt.a_priori && !numeric::is_finite(*pt.a_priori)) pt.a_priori.reset();
        pt.max_weight = max_weight_of(c.model, x);
        out.push_back(std::move(pt));
    }
    return out;
}

} // namespace

std::vector<ladder_point> influence_ladder(const test_case& c, const numeric::context& ctx,
                                           bool posterior, const bound_adjust_fn& adjust) {
    return ladder_in<arb_ball>(c, ctx, posterior, adjust);
}

namespace {

/// The rate of the ladder's largest influence over its upper three rungs, as a measurement
/// (never a verdict): "consistent" (slope <= -1 + tolerance), "zero" (the upper rungs do not
/// move at working precision), or "inconclusive" with the reason.
runner::measurement ladder_rate(const std::vector<ladder_point>& pts, double tolerance,
                                bool regime_matters, const numeric::context& ctx) {
    runner::measurement m;
    m.name = "rate";
    const std::size_t lowest = pts.size() - 3;
    const double tiny = std::ldexp(1.0, -static_cast<int>(std::min(ctx.precision_bits, 4000L) / 4));
    std::vector<double> ns, ys;
    for (std::size_t k = lowest; k < pts.size(); ++k) {
        const auto& pt = pts[k];
        if (numeric::compare(pt.max_influence, numeric::zero<arb_ball>(ctx)) != order::greater) {
            if (abs_upper(pt.max_influence) < tiny) continue;
            m.label = "inconclusive";
            m.detail = "the influence at n = " + std::to_string(pt.n) + " is not resolved from zero";
            return m;
        }
        if (arb_rel_accuracy_bits(pt.max_influence.raw()) < 24) {
            m.label = "inconclusive";
            m.detail = "the influence at n = " + std::to_string(pt.n) + " has fewer than 24 accurate bits";
            return m;
        }
        ns.push_back(static_cast<double>(pt.n));
        ys.push_back(numeric::approx_double(pt.max_influence));
    }
    if (ns.size() < 2) {
        m.label = ns.empty() ? "zero" : "inconclusive";
        m.detail = ns.empty() ? "the influence is zero to working precision at the upper rungs"
                              : "only one upper rung has a resolved influence";
        return m;
    }
    std::ostringstream os;
    os.precision(3);
    if (regime_matters && pts[lowest].max_weight > tolerance / 2) {
        os << "below the 1/n regime: the largest attention weight at n = " << pts[lowest].n
           << " is " << pts[lowest].max_weight << " > tolerance/2";
        m.label = "inconclusive";
        m.detail = os.str();
        return m;
    }
    const auto fit = analysis::fit_loglog(ns, ys);
    if (!fit) {
        m.label = "inconclusive";
        m.detail = "no slope";
        return m;
    }
    os << "slope " << fit->slope << " +/- " << fit->slope_stderr << " over n = "
       << static_cast<long>(ns.front()) << ".." << static_cast<long>(ns.back());
    m.label = fit->slope <= -1.0 + tolerance ? "consistent" : "inconclusive";
    m.detail = os.str() + (m.label == "consistent" ? " (<= -1 + tolerance)" : " (> -1 + tolerance)");
    return m;
}

} // namespace

runner::property influence_vanishes(double tolerance, bool require_hypotheses,
                                    std::optional<rc::Gen<model::model<rational>>> source,
                                    bound_adjust_fn adjust, long growth, stages measured_in) {
    rc::Gen<model::model<rational>> models = source ? *source : gen::soft_model();
    runner::property p;
    p.suite = "soft-influence";
    p.name = "influence-vanishes";
    p.statement = "for a soft model satisfying the hypotheses of Claim 2, along a ladder of n "
                  "(top/8 .. top, one shared input prefix) the largest measured one-symbol "
                  "change at every rung is at most its a-posteriori pair bound and n * max "
                  "influence <= K(n); the log-log rate over the upper rungs is reported as a measurement, "
                  "not judged";
    if (!require_hypotheses)
        p.statement += "; on a model without the hypotheses (no claim by Lemma 5): n * max "
                       "influence at the top rung <= " + std::to_string(growth) +
                       " x its value at the lowest rung";
    p.kinds = runner::kinds_of<numeric::dinterval, numeric::arb_ball>();
    p.negative_control = "the a-posteriori bound divided by n^2 is exceeded at some rung; and "
                         "hypothesis-violating models (layer norm eps = 0, log n scores, "
                         "positional i, a step update; bundled, and random draws of "
                         "gen::soft_model_violating) measured without the hypotheses: n * "
                         "influence certainly grows more than " + std::to_string(growth) +
                         "x along the ladder, naming the violated hypothesis";
    // Measured in certified double intervals first (the incremental kernel and its cached
    // a-posteriori bounds): ladder tops up to min(--max-n, 1024).
    p.generator = [models](const run_config& cfg) { return ladder_case(models, cfg, 1024); };
    if (require_hypotheses) p.applies = needs_hypotheses;
    p.check = [tolerance, require_hypotheses, adjust, growth, measured_in](const test_case& c,
                                                                            const numeric::context& ctx) {
        const long top = c.params.at("ladder_top");
        const auto rep = analysis::a_priori_bound(c.model, top, ctx);
        std::string violated_hypotheses;
        for (const auto& h : rep.hypotheses)
            if (!certainly(h.holds))
                violated_hypotheses += (violated_hypotheses.empty() ? "" : ", ") + h.name;
        const bool hypotheses = violated_hypotheses.empty();
        if (require_hypotheses && !hypotheses) {
            auto why = hypotheses_missing(rep);
            return check_result::undecided_at_any_precision(why ? *why : "hypotheses not established");
        }
        // Judged in certified double intervals first, in balls when they leave it undecided.
        const auto judge = [&](const std::vector<ladder_point>& pts) -> check_result {
            const auto nd = [&](const ladder_point& pt) {
                return pt.max_influence * numeric::from_int<arb_ball>(static_cast<long>(pt.n), ctx);
            };
            const auto with_rungs = [&](check_result r) {
                for (const auto& pt : pts) {
                    const auto key = "n" + std::to_string(pt.n);
                    r.with(key + "_max_influence", show_ball(pt.max_influence));
                    r.with(key + "_n_max_influence", show_ball(nd(pt)));
                    r.with(key + "_position", std::to_string(pt.position + 1));
                }
                if (!violated_hypotheses.empty())
                    r.with("hypotheses_not_established", violated_hypotheses);
                return r;
            };
            const auto rate = ladder_rate(pts, tolerance, hypotheses, ctx);
            bool undecided = false, agree = true;
            std::string why_undecided;
            // Lemma 5 at every rung, against the a-posteriori pair bound and K(n)/n.
            for (const auto& pt : pts) {
                if (pt.posterior && *pt.posterior == order::greater)
                    return with_rungs(check_result::violated(
                                          "a one-symbol change exceeds its a-posteriori bound at n = " +
                                          std::to_string(pt.n)))
                        .with("position", std::to_string(pt.posterior_position + 1))
                        .with("replacement",
                              c.model.sigma.symbols[static_cast<std::size_t>(pt.posterior_replacement)])
                        .with("influence", show_ball(*pt.posterior_influence))
                        .with("posterior_bound", show_ball(*pt.posterior_bound))
                        .with_measurement(rate);
                if (pt.posterior && *pt.posterior == order::unknown) {
                    undecided = true;
                    agree = agree && sides_agree(*pt.posterior_influence, *pt.posterior_bound);
                    why_undecided = "a change and its a-posteriori bound overlap at n = " + std::to_string(pt.n);
                }
                if (!pt.a_priori) continue;
                const order o = versus(pt.max_influence, *pt.a_priori);
                if (o == order::greater)
                    return with_rungs(check_result::violated(
                                          "n * max influence exceeds K(n) at n = " +
                                          std::to_string(pt.n)))
                        .with("a_priori_bound", show_ball(*pt.a_priori))
                        .with_measurement(rate);
                if (o == order::unknown) {
                    undecided = true;
                    agree = agree && sides_agree(pt.max_influence, *pt.a_priori);
                    why_undecided = "influence and K(n)/n overlap at n = " + std::to_string(pt.n);
                }
            }
            if (!hypotheses) {
                // No claim by Lemma 5: the finite growth statement of the negative controls.
                const auto& low = pts.front();
                const auto& high = pts.back();
                const arb_ball allowed = nd(low) * numeric::from_int<arb_ball>(growth, ctx);
                const order o = versus(nd(high), allowed);
                if (o == order::greater)
                    return with_rungs(check_result::violated(
                                          "the influence does not vanish: n * max influence grew "
                                          "from n = " + std::to_string(low.n) + " to n = " +
                                          std::to_string(high.n) + " by more than a factor " +
                                          std::to_string(growth) + " (hypotheses not established: " +
                                          violated_hypotheses + ")"))
                        .with("growth_allowed", show_ball(allowed))
                        .with_measurement(rate);
                if (o == order::unknown) {
                    undecided = true;
                    agree = false;
                    why_undecided = "n * max influence at n = " + std::to_string(high.n) +
                                    " overlaps " + std::to_string(growth) + " x its value at n = " +
                                    std::to_string(low.n);
                }
            }
            if (undecided)
                return check_result::undecided(why_undecided).with_measurement(rate).with_sides_agree(agree);
            return check_result::holds(rate.label + ": " + rate.detail).with_measurement(rate);
        };
        return interval_first(
            [&](auto kind) {
                return judge(ladder_in<typename decltype(kind)::type>(c, ctx, hypotheses, adjust));
            },
            measured_in, ctx, false);
    };
    p.shape = ladder_shape();
    p.tag = case_class;
    return p;
}

} // namespace attnprop::props
