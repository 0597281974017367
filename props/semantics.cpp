// Suite `semantics`: attnprop computes the models of docs/theory.md, and the scalar kinds agree
// wherever mathematics says they must.
//
//  hard-filter-equals-exact  exact (filtered) hard path == exact reference kernel     [exact]
//  hard-ball-encloses-exact  decided ball results enclose the exact hard result        [ball, exact]
//  hard-dyadic-kinds-agree   double == MPFR == exact on models exact in double         [double, mpfr, exact]
//  double-matches-exact      double selects what exact selects (a given model)       [double, exact]
//  soft-kinds-agree          ball(p) contains MPFR(2p+64); double within 1e-9           [ball, mpfr, double]
//  soft-interval-encloses    certified double interval meets ball(512)                 [interval, ball]
//  leftmost-tie-rule         choices == brute-force smallest argmax of exact scores     [exact]
//  trace-last-row            y_n^(L) alone == last row of the full trace, same readout [exact, ball]
//  model-file-round-trip     write + read is the identity on files and outputs          [exact, ball]
#include "props/semantics.hpp"

#include "soft_influence/worst_case.hpp"
#include "model/model_file.hpp"

#include <algorithm>

namespace attnprop::props {

using numeric::arb_ball;
using numeric::mpfr_real;

namespace {

exact_forward_fn default_exact() {
    return [](const model::model<rational>& m, const model::input_sequence& x,
              const numeric::context& ctx, bool trace) {
        return attention::hard_forward_exact(m, x, ctx, trace);
    };
}

/// Hard models of gen::hard_model, half of them read as average-hard (the same parameters;
/// the generator's lookup tables were keyed on unique-hard probes, so some lookups fall back to
/// their defaults, which is still a valid model).
rc::Gen<model::model<rational>> hard_or_average(const gen::hard_bounds& b = {}) {
    auto average = rc::gen::map(gen::hard_model(b), [](model::model<rational> m) {
        m.attention = model::attention_kind::average_hard;
        return m;
    });
    // Causally masked ones too (theory.md §1.4): the passes compared honour the mask.
    return rc::gen::oneOf(gen::hard_model(b), average, gen::causally_masked(gen::hard_model(b)),
                          gen::causally_masked(average));
}

/// Soft models, a third of them with every layer causally masked.
rc::Gen<model::model<rational>> soft_or_masked() {
    return rc::gen::oneOf(gen::soft_model(), gen::soft_model(),
                          gen::causally_masked(gen::soft_model()));
}

rc::Gen<model::model<rational>> any_model() {
    return rc::gen::oneOf(hard_or_average(), gen::soft_model());
}

std::string positions_text(const std::vector<std::size_t>& v) {
    std::string s;
    for (std::size_t t = 0; t < v.size(); ++t) s += (t ? "," : "") + std::to_string(v[t] + 1);
    return "{" + s + "}";
}

std::string input_note(const test_case& c) { return "input \"" + c.inputs.front() + "\""; }

} // namespace

runner::property hard_filter_equals_exact(exact_forward_fn filtered) {
    if (!filtered) filtered = default_exact();
    runner::property p;
    p.suite = "semantics";
    p.name = "hard-filter-equals-exact";
    p.takes_masked = true; // every pass it compares honours the mask
    p.statement = "the filtered exact hard-attention path equals the plain exact kernel: same "
                  "y_n^(L) and same attention choices (and, for average-hard models, the same "
                  "sets of maximal keys)";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.negative_control = "a filtered path whose exact fallback picks the rightmost candidate";
    p.generator = [](const run_config& cfg) { return model_and_input(hard_or_average(), cfg, 64); };
    p.check = [filtered](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        auto ref = attention::hard_forward(c.model, x, ctx, true);
        auto fil = filtered(c.model, x, ctx, true);
        if (ref.y != fil.y)
            return check_result::violated("filtered exact y differs from the exact reference on " +
                                          input_note(c))
                .with("y_reference", show_vector(ref.y))
                .with("y_filtered", show_vector(fil.y));
        const auto& a = ref.trace->choice;
        const auto& b = fil.trace->choice;
        for (std::size_t k = 0; k < a.size(); ++k)
            for (std::size_t i = 0; i < a[k].size(); ++i)
                for (std::size_t h = 0; h < a[k][i].size(); ++h)
                    if (b.size() <= k || b[k].size() <= i || b[k][i].size() <= h ||
                        a[k][i][h] != b[k][i][h])
                        return check_result::violated("attention choices differ on " + input_note(c))
                            .with("layer", std::to_string(k + 1))
                            .with("position", std::to_string(i + 1))
                            .with("head", std::to_string(h + 1))
                            .with("choice_reference", std::to_string(a[k][i][h] + 1))
                            .with("choice_filtered",
                                  b.size() > k && b[k].size() > i && b[k][i].size() > h
                                      ? std::to_string(b[k][i][h] + 1)
                                      : "missing");
        if (ref.trace->ties != fil.trace->ties)
            return check_result::violated("the sets of maximal keys differ on " + input_note(c));
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::any_hard);
    p.tag = case_class;
    return p;
}

runner::property hard_ball_encloses_exact(ball_hard_fn ball) {
    if (!ball)
        ball = [](const model::model<arb_ball>& m, const model::input_sequence& x,
                  const numeric::context& ctx, bool trace) {
            return attention::hard_forward(m, x, ctx, trace);
        };
    runner::property p;
    p.suite = "semantics";
    p.name = "hard-ball-encloses-exact";
    p.takes_masked = true; // every pass it compares honours the mask
    p.statement = "a hard-attention evaluation in Arb balls either decides every argmax, and "
                  "then encloses the exact y_n^(L) and gives the same accept/reject, or stops at "
                  "an undecided argmax whose candidate positions include the exact choice";
    p.kinds = runner::kinds_of<numeric::arb_ball, numeric::rational>();
    p.negative_control = "balls whose radius is dropped after each layer";
    p.generator = [](const run_config& cfg) {
        gen::hard_bounds b;
        b.allow_exact_keyed_maps = false; // lookups of non-exact balls return uninformative hulls
        return model_and_input(hard_or_average(b), cfg, 256);
    };
    p.check = [ball](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        auto ex = attention::hard_forward_exact(c.model, x, ctx);
        auto mb = model::to_scalar<arb_ball>(c.model, ctx);
        auto rb = ball(mb, x, ctx, false);
        if (rb.undecided) {
            // An enclosure cannot decide an exact tie between non-dyadic scores at any
            // precision; what it must do is keep the exact choice among its candidates.
            const auto& u = *rb.undecided;
            auto traced = attention::hard_forward_exact(c.model, x, ctx, true);
            const auto& choice = traced.trace->choice;
            const std::string where = "layer " + std::to_string(u.layer) + ", position " +
                                      std::to_string(u.position) + ", head " + std::to_string(u.head);
            if (u.layer < 1 || u.layer > choice.size() || u.position < 1 ||
                u.position > choice[u.layer - 1].size() || u.head < 1 ||
                u.head > choice[u.layer - 1][u.position - 1].size())
                return check_result::violated("the ball reports an undecided argmax at a place "
                                              "the model does not have: " + where);
            // Unique-hard: the exact choice; average-hard: every exact maximal key.
            std::vector<std::size_t> need{choice[u.layer - 1][u.position - 1][u.head - 1]};
            if (!traced.trace->ties.empty())
                need = traced.trace->ties[u.layer - 1][u.position - 1][u.head - 1];
            std::size_t exact = need.front() + 1;
            bool all_in = true;
            for (std::size_t j : need)
                if (std::find(u.candidates.begin(), u.candidates.end(), j + 1) == u.candidates.end()) {
                    all_in = false;
                    exact = j + 1;
                }
            if (!all_in) {
                std::string cands;
                for (auto j : u.candidates) cands += (cands.empty() ? "" : ", ") + std::to_string(j);
                return check_result::violated("the ball's candidates at an undecided argmax "
                                              "exclude the exact choice on " + input_note(c))
                    .with("where", where)
                    .with("candidates", cands)
                    .with("exact_choice", std::to_string(exact));
            }
            return check_result::holds("undecided argmax at " + where +
                                       "; its candidates include the exact choice");
        }
        for (std::size_t t = 0; t < ex.y.size(); ++t)
            if (t >= rb.y.size() || !numeric::contains(rb.y[t], ex.y[t]))
                return check_result::violated("the ball does not contain the exact value on " +
                                              input_note(c))
                    .with("coordinate", std::to_string(t))
                    .with("y_exact", show_vector(ex.y))
                    .with("y_ball", show_vector(rb.y));
        if (c.model.out.is_recognizer()) {
            auto ve = attention::recognize(c.model.out, ex.y, ctx);
            auto vb = attention::recognize(mb.out, rb.y, ctx);
            if (vb != attention::verdict::undecided && vb != ve)
                return check_result::violated("ball and exact readouts differ")
                    .with("exact", attention::to_string(ve))
                    .with("ball", attention::to_string(vb));
        }
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::any_hard);
    p.tag = case_class;
    return p;
}

runner::property hard_dyadic_kinds_agree(double_hard_fn dbl) {
    if (!dbl)
        dbl = [](const model::model<double>& m, const model::input_sequence& x,
                 const numeric::context& ctx, bool trace) {
            return attention::hard_forward(m, x, ctx, trace);
        };
    runner::property p;
    p.suite = "semantics";
    p.name = "hard-dyadic-kinds-agree";
    p.statement = "on hard models whose arithmetic is exact in double (small integers), double, "
                  "MPFR and exact rationals give identical y_n^(L)";
    p.kinds = runner::kinds_of<double, numeric::mpfr_real, numeric::rational>();
    p.negative_control = "a double kernel that scales scores by 1/3 (introducing rounding)";
    p.generator = [](const run_config& cfg) {
        return model_and_input(gen::dyadic_hard_model(), cfg, 1024);
    };
    // Its statement is about models whose every operation is exact in double, which cannot be
    // read off a given model; double-matches-exact checks double on a given model.
    p.applies = [](const model::model<rational>&) -> std::optional<std::string> {
        return "a statement about random models exact in double (small dyadic numbers), which "
               "a given model is not known to be; semantics/double-matches-exact checks double "
               "on it";
    };
    p.check = [dbl](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        auto ex = attention::hard_forward_exact(c.model, x, ctx);
        auto rd = dbl(model::to_scalar<double>(c.model, ctx), x, ctx, false);
        const numeric::mpfr_range_watch range;
        auto rm = attention::hard_forward(model::to_scalar<mpfr_real>(c.model, ctx), x, ctx);
        for (std::size_t t = 0; t < ex.y.size(); ++t) {
            auto qd = numeric::exact_of(rd.y.at(t));
            auto qm = numeric::exact_of(rm.y.at(t));
            if ((!qm || *qm != ex.y[t]) && range.left_range())
                return check_result::undecided_at_any_precision(
                    range.reason() + " on " + input_note(c) + ", so MPFR cannot be compared");
            if (!qd || *qd != ex.y[t] || !qm || *qm != ex.y[t])
                return check_result::violated("scalar kinds disagree on " + input_note(c))
                    .with("coordinate", std::to_string(t))
                    .with("y_exact", show_vector(ex.y))
                    .with("y_double", show_vector(rd.y))
                    .with("y_mpfr", show_vector(rm.y));
        }
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::hard);
    p.tag = case_class;
    return p;
}

runner::property double_matches_exact(double_hard_fn dbl, std::optional<rc::Gen<model::model<rational>>> models) {
    if (!dbl)
        dbl = [](const model::model<double>& m, const model::input_sequence& x,
                 const numeric::context& ctx, bool trace) {
            return attention::hard_forward(m, x, ctx, trace);
        };
    rc::Gen<model::model<rational>> source = models ? *models : gen::dyadic_hard_model();
    runner::property p;
    p.suite = "semantics";
    p.name = "double-matches-exact";
    p.takes_masked = true; // every pass it compares honours the mask
    p.statement = "evaluating the hard model in double (--scalar double) selects the same "
                  "position as exact arithmetic at every layer, row and head, and a recognizer "
                  "gives the same accept/reject";
    p.kinds = runner::kinds_of<double, numeric::rational>();
    p.negative_control = "near-tie hard models (gen::near_tie_hard_model: two scores 10^-19 "
                         "apart that round to the same double) disagree";
    p.generator = [source](const run_config& cfg) {
        return with_search_params(model_and_input(source, cfg, 1024), cfg);
    };
    p.check = [dbl](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        // check --model: search inputs of this n for a disagreement, from the drawn one.
        if (auto b = c.params.find("search_budget"); b != c.params.end()) {
            analysis::search_options o;
            o.budget = static_cast<std::size_t>(b->second);
            if (auto sd = c.params.find("search_seed"); sd != c.params.end())
                o.seed = static_cast<std::uint64_t>(sd->second);
            o.start = x;
            const auto found = analysis::double_disagreement_search(c.model, static_cast<long>(x.size()), o);
            if (found.found)
                return check_result::violated("double and exact arithmetic disagree on an input the "
                                              "search found: " + found.where)
                    .with("search_input", model::format_input(c.model.sigma, found.input))
                    .with("search_found_at", std::to_string(found.found_at) + " of " +
                                                 std::to_string(found.evaluations) + " evaluations");
        }
        auto ex = attention::hard_forward_exact(c.model, x, ctx, true);
        const auto md = model::to_scalar<double>(c.model, ctx);
        std::optional<attention::hard_output<double>> rd;
        try {
            rd = dbl(md, x, ctx, true);
        } catch (const numeric::undefined_error& e) {
            return check_result::violated("double reports a value undefined that exists exactly on " +
                                          input_note(c))
                .with("double", e.message())
                .with("y_exact", show_vector(ex.y));
        }
        const auto& a = ex.trace->choice;
        const auto& b = rd->trace->choice;
        for (std::size_t k = 0; k < a.size() && k < b.size(); ++k)
            for (std::size_t i = 0; i < a[k].size() && i < b[k].size(); ++i)
                for (std::size_t h = 0; h < a[k][i].size() && h < b[k][i].size(); ++h)
                    if (a[k][i][h] != b[k][i][h])
                        return check_result::violated("double selects another position than "
                                                      "exact arithmetic on " + input_note(c))
                            .with("layer", std::to_string(k + 1))
                            .with("position", std::to_string(i + 1))
                            .with("head", std::to_string(h + 1))
                            .with("choice_exact", std::to_string(a[k][i][h] + 1))
                            .with("choice_double", std::to_string(b[k][i][h] + 1));
        if (c.model.out.is_recognizer()) {
            const auto ve = attention::recognize(c.model.out, ex.y, ctx);
            const auto vd = attention::recognize(md.out, rd->y, ctx);
            if (ve != vd)
                return check_result::violated("double and exact readouts differ on " + input_note(c))
                    .with("exact", attention::to_string(ve))
                    .with("double", attention::to_string(vd))
                    .with("y_exact", show_vector(ex.y))
                    .with("y_double", show_vector(rd->y));
        }
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::hard);
    p.shape.params = {search_budget_param(), seed_param(false, "search_seed")};
    p.tag = case_class;
    return p;
}

runner::property soft_kinds_agree(ball_soft_fn ball) {
    if (!ball)
        ball = [](const model::model<arb_ball>& m, const model::input_sequence& x,
                  const numeric::context& ctx, attention::soft_options o) {
            return attention::soft_forward(m, x, ctx, o);
        };
    runner::property p;
    p.suite = "semantics";
    p.name = "soft-kinds-agree";
    p.takes_masked = true; // every pass it compares honours the mask
    p.statement = "for soft models the Arb ball at p bits contains the MPFR value at 2p + 64 "
                  "bits, and double is within 1e-9 (absolute + relative) of the ball";
    p.kinds = runner::kinds_of<numeric::arb_ball, numeric::mpfr_real, double>();
    p.negative_control = "a ball softmax that drops the radius of the exponentials";
    p.generator = [](const run_config& cfg) { return model_and_input(soft_or_masked(), cfg, 256); };
    p.check = [ball](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        auto rb = ball(model::to_scalar<arb_ball>(c.model, ctx), x, ctx, {});
        for (const auto& v : rb.y)
            if (!numeric::is_finite(v) || numeric::radius_as_double(v) > 1e-6)
                return check_result::undecided("ball radius too wide at this precision");
        numeric::context hi{2 * ctx.precision_bits + 64};
        const numeric::mpfr_range_watch range;
        auto rm = attention::soft_forward(model::to_scalar<mpfr_real>(c.model, hi), x, hi);
        auto rd = attention::soft_forward(model::to_scalar<double>(c.model, ctx), x, ctx);
        for (std::size_t t = 0; t < rb.y.size(); ++t) {
            // A value beyond MPFR's exponents (2.3e-1635303675775120398 rounded to 0) is MPFR's
            // limit, not a witness against the ball: no precision changes it.
            if (!numeric::contains(rb.y[t], rm.y[t]) && range.left_range())
                return check_result::undecided_at_any_precision(
                           range.reason() + " on " + input_note(c) +
                           ", so its value cannot be compared with the ball")
                    .with("coordinate", std::to_string(t))
                    .with("y_ball", show_vector(rb.y))
                    .with("y_mpfr_hi", show_vector(rm.y, 40));
            if (!numeric::contains(rb.y[t], rm.y[t]))
                return check_result::violated("the ball does not contain the high-precision MPFR "
                                              "value on " + input_note(c))
                    .with("coordinate", std::to_string(t))
                    .with("y_ball", show_vector(rb.y))
                    .with("y_mpfr_hi", show_vector(rm.y, 40));
            double mid = numeric::to_double(rb.y[t]);
            double tol = numeric::radius_as_double(rb.y[t]) + 1e-9 * (1.0 + std::abs(mid));
            if (!(std::abs(rd.y[t] - mid) <= tol))
                return check_result::violated("double is not within 1e-9 of the ball on " +
                                              input_note(c))
                    .with("coordinate", std::to_string(t))
                    .with("y_ball", show_vector(rb.y))
                    .with("y_double", show_vector(rd.y));
        }
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::soft);
    p.tag = case_class;
    return p;
}

runner::property soft_interval_encloses(interval_soft_fn ivl) {
    if (!ivl)
        ivl = [](const model::model<numeric::dinterval>& m, const model::input_sequence& x,
                 const numeric::context& ctx, attention::soft_options o) {
            return attention::soft_forward(m, x, ctx, o);
        };
    runner::property p;
    p.suite = "semantics";
    p.name = "soft-interval-encloses";
    p.takes_masked = true; // every pass it compares honours the mask
    p.statement = "for soft models the certified double interval of y_n^(L) intersects the Arb "
                  "ball at 512 bits (both contain the exact value); where it reports the value "
                  "undefined without leave to retry, a ball agrees";
    p.kinds = runner::kinds_of<numeric::dinterval, numeric::arb_ball>();
    p.negative_control = "an interval softmax row that drops its error bound";
    p.generator = [](const run_config& cfg) { return model_and_input(soft_or_masked(), cfg, 256); };
    p.check = [ivl](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        std::optional<attention::soft_output<numeric::dinterval>> ri;
        try {
            ri = ivl(model::to_scalar<numeric::dinterval>(c.model, ctx), x, ctx, {});
        } catch (const numeric::undefined_error& e) {
            if (e.precision_may_resolve()) {
                // The interval cannot tell a pole from a tiny denominator. A ball at the
                // working precision either finds the value (then only the interval was too
                // wide: undecided) or meets the same pole, and then the case's result is the
                // ball's undefined, retried at doubled precision by the runner like every
                // other property's (an exact 0 variance stays undefined at every precision).
                attention::soft_forward(model::to_scalar<arb_ball>(c.model, ctx), x, ctx);
                return check_result::undecided("the interval is too wide to decide (" +
                                               e.message() + ") where a ball at " +
                                               std::to_string(ctx.precision_bits) +
                                               " bits finds the value");
            }
            // A definite undefined: the ball must not find a value.
            try {
                attention::soft_forward(model::to_scalar<arb_ball>(c.model, ctx), x, ctx);
            } catch (const numeric::undefined_error&) {
                throw; // both undefined: the case's result is undefined
            }
            return check_result::violated("the interval says the value does not exist (" +
                                          e.message() + ") but a ball finds one on " +
                                          input_note(c));
        }
        for (const auto& v : ri->y)
            if (!numeric::is_finite(v))
                return check_result::undecided("the interval is not finite");
        // Both enclose the exact value, so disjoint enclosures prove one of them wrong; the
        // ball at 512 bits is tight enough that a missing error term of the interval shows.
        const numeric::context hi{512};
        auto rb = attention::soft_forward(model::to_scalar<arb_ball>(c.model, hi), x, hi);
        for (std::size_t t = 0; t < ri->y.size(); ++t) {
            if (!numeric::is_finite(rb.y[t]))
                return check_result::undecided("the 512-bit ball is not finite");
            if (!arb_overlaps(numeric::to_ball(ri->y[t]).raw(), rb.y[t].raw()))
                return check_result::violated("the certified interval and the 512-bit ball of "
                                              "y_n^(L) are disjoint on " + input_note(c))
                    .with("coordinate", std::to_string(t))
                    .with("y_interval", show_vector(ri->y))
                    .with("y_ball_512", show_vector(rb.y, 40));
        }
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::soft);
    p.tag = case_class;
    return p;
}

namespace {

// Brute-force exact score of query row yi against key row yj: plain loops over every matrix
// entry (not the kernel's sparse products).
rational brute_score(const model::head<rational>& h, const std::vector<rational>& yi,
                     const std::vector<rational>& yj, const numeric::context& ctx) {
    if (h.score.type == model::score_spec<rational>::kind::map)
        return model::evaluate(*h.score.fn, [&] {
            auto in = yi;
            in.insert(in.end(), yj.begin(), yj.end());
            return in;
        }(), ctx).front();
    auto project = [](const model::affine_map<rational>& a, const std::vector<rational>& y) {
        std::vector<rational> out(a.W.rows);
        for (std::size_t r = 0; r < a.W.rows; ++r) {
            rational acc = a.b.empty() ? rational(0) : a.b[r];
            for (std::size_t c = 0; c < a.W.cols; ++c) acc += a.W.data[r * a.W.cols + c] * y[c];
            out[r] = acc;
        }
        return out;
    };
    auto q = project(h.score.Q, yi);
    auto k = project(h.score.K, yj);
    rational s = 0;
    for (std::size_t t = 0; t < q.size(); ++t) s += q[t] * k[t];
    return s;
}

} // namespace

runner::property leftmost_tie_rule(exact_forward_fn filtered) {
    if (!filtered) filtered = default_exact();
    runner::property p;
    p.suite = "semantics";
    p.name = "leftmost-tie-rule";
    p.takes_masked = true; // its reference ranks the keys a masked row attends to
    p.statement = "every hard attention choice is the smallest key position attaining the "
                  "maximal exact score, and an average-hard head's set of keys is exactly every "
                  "position attaining it (brute-force reference)";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.negative_control = "a kernel that breaks ties towards the rightmost position";
    p.generator = [](const run_config& cfg) { return model_and_input(hard_or_average(), cfg, 48); };
    p.check = [filtered](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        auto r = filtered(c.model, x, ctx, true);
        const auto& tr = *r.trace;
        for (std::size_t k = 1; k < tr.y.size(); ++k) {
            const auto& lay = c.model.layers[k - 1];
            for (std::size_t i = 0; i < tr.y[k - 1].size(); ++i)
                for (std::size_t h = 0; h < lay.heads.size(); ++h) {
                    // The keys row i ranks: every position, or j <= i under a causal mask.
                    const std::size_t end = model::key_end(lay.mask, i, tr.y[k - 1].size());
                    std::vector<rational> s;
                    for (std::size_t j = 0; j < end; ++j)
                        s.push_back(brute_score(lay.heads[h], tr.y[k - 1][i], tr.y[k - 1][j], ctx));
                    std::size_t best = 0;
                    for (std::size_t j = 1; j < s.size(); ++j)
                        if (s[j] > s[best]) best = j;
                    if (!tr.ties.empty()) {
                        std::vector<std::size_t> all;
                        for (std::size_t j = 0; j < s.size(); ++j)
                            if (s[j] == s[best]) all.push_back(j);
                        if (tr.ties[k - 1][i][h] != all)
                            return check_result::violated("an average-hard head's keys are not "
                                                          "every maximal position")
                                .with("layer", std::to_string(k))
                                .with("position", std::to_string(i + 1))
                                .with("head", std::to_string(h + 1))
                                .with("keys", positions_text(tr.ties[k - 1][i][h]))
                                .with("maximal", positions_text(all))
                                .with("scores", show_vector(s));
                    }
                    if (tr.choice[k - 1][i][h] != best)
                        return check_result::violated("a head did not select the leftmost maximum")
                            .with("layer", std::to_string(k))
                            .with("position", std::to_string(i + 1))
                            .with("head", std::to_string(h + 1))
                            .with("chosen", std::to_string(tr.choice[k - 1][i][h] + 1))
                            .with("leftmost_argmax", std::to_string(best + 1))
                            .with("scores", show_vector(s));
                }
        }
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::any_hard);
    p.tag = case_class;
    return p;
}

runner::property trace_last_row(exact_forward_fn filtered) {
    if (!filtered) filtered = default_exact();
    runner::property p;
    p.suite = "semantics";
    p.name = "trace-last-row";
    p.takes_masked = true; // every pass it compares honours the mask
    p.statement = "the readout uses position n only: y_n^(L) computed alone equals the last row "
                  "of the full trace (hard: exact, soft: identical balls), and so does the readout";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.negative_control = "a forward pass that returns the first row instead of row n";
    p.generator = [](const run_config& cfg) { return model_and_input(any_model(), cfg, 64); };
    p.check = [filtered](const test_case& c, const numeric::context& ctx) {
        auto x = input_of(c);
        if (model::selects_maximum(c.model.attention)) {
            auto alone = filtered(c.model, x, ctx, false);
            auto full = attention::hard_forward_exact(c.model, x, ctx, true);
            const auto& last = full.trace->y.back().back();
            if (alone.y != last)
                return check_result::violated("y_n^(L) differs from the trace's last row")
                    .with("y_alone", show_vector(alone.y))
                    .with("y_trace_last", show_vector(last));
            return check_result::holds();
        }
        auto mb = model::to_scalar<arb_ball>(c.model, ctx);
        auto alone = attention::soft_forward(mb, x, ctx);
        attention::soft_options o;
        o.trace = true;
        auto full = attention::soft_forward(mb, x, ctx, o);
        const auto& last = full.trace->y.back().back();
        for (std::size_t t = 0; t < last.size(); ++t)
            if (!numeric::same_value(alone.y.at(t), last[t]))
                return check_result::violated("soft y_n^(L) differs from the trace's last row")
                    .with("y_alone", show_vector(alone.y))
                    .with("y_trace_last", show_vector(last));
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::any);
    p.tag = case_class;
    return p;
}

runner::property model_file_round_trip(writer_fn writer) {
    if (!writer) writer = [](const model::model<rational>& m) { return model::write_model(m); };
    runner::property p;
    p.suite = "semantics";
    p.name = "model-file-round-trip";
    p.takes_masked = true; // every pass it compares honours the mask
    p.statement = "writing a model file and reading it back gives the same file and identical "
                  "outputs (exact for hard models, identical balls for soft ones)";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.negative_control = "a writer that prints numbers through double";
    p.generator = [](const run_config& cfg) { return model_and_input(any_model(), cfg, 32); };
    p.check = [writer](const test_case& c, const numeric::context& ctx) {
        std::string text = writer(c.model);
        model::model<rational> back = model::parse_model(text, "round-trip.json");
        if (model::write_model(back) != model::write_model(c.model))
            return check_result::violated("the re-read model writes a different file");
        auto x = input_of(c);
        if (model::selects_maximum(c.model.attention)) {
            auto a = attention::hard_forward_exact(c.model, x, ctx);
            auto b = attention::hard_forward_exact(back, x, ctx);
            if (a.y != b.y)
                return check_result::violated("outputs differ after the round trip")
                    .with("y_original", show_vector(a.y))
                    .with("y_reread", show_vector(b.y));
            return check_result::holds();
        }
        auto a = attention::soft_forward(model::to_scalar<arb_ball>(c.model, ctx), x, ctx);
        auto b = attention::soft_forward(model::to_scalar<arb_ball>(back, ctx), x, ctx);
        for (std::size_t t = 0; t < a.y.size(); ++t)
            if (!numeric::same_value(a.y[t], b.y.at(t)))
                return check_result::violated("outputs differ after the round trip")
                    .with("y_original", show_vector(a.y))
                    .with("y_reread", show_vector(b.y));
        return check_result::holds();
    };
    p.shape = one_input_shape(runner::model_requirement::any);
    p.tag = case_class;
    return p;
}

void register_semantics(runner::registry& r) {
    r.add(hard_filter_equals_exact());
    r.add(hard_ball_encloses_exact());
    r.add(hard_dyadic_kinds_agree());
    r.add(double_matches_exact());
    r.add(soft_kinds_agree());
    r.add(soft_interval_encloses());
    r.add(leftmost_tie_rule());
    r.add(trace_last_row());
    r.add(model_file_round_trip());
}

} // namespace attnprop::props
