// The bounds over every input against the changes and margins found (props/every_input.hpp).
//
//  soft-influence/every-input-bound   n ||Δy_n|| <= n Δ̄(n) and n ||Δp||_∞ <= n η̄(n) for the drawn
//                                     input's changes, the search's, every change of a small cube
//                                                                                [interval, ball]
//  soft-hard/every-input-margin       the margin over every input is attained, <= each input's,
//                                     = the cube's minimum; its beta certifies each input [exact, ball]
//
// Cases: every-input-bound draws a model from gen::soft_model, n log-uniform up to 256 (the
// bound is computed in certified double intervals, and in Arb balls up to n = 64), one input
// and a position; the cube {Σ}^(n-1) is enumerated when it has at most 256 inputs. Every
// change is measured in certified double intervals, again in Arb balls (the differential kernel
// attention::soft_change, which proves a zero change zero) when they overlap the
// bound. every-input-margin draws one-layer hard or average-hard models (gen::hard_model), n
// from the length ladder up to 64, one input.
#include "props/every_input.hpp"

#include "soft_influence/worst_case.hpp"
#include "attention/soft.hpp"
#include "attention/soft_change.hpp"
#include "props/soft_influence.hpp"
#include "soft_influence/norms.hpp"

#include <cmath>
#include <map>

namespace attnprop::props {

using numeric::arb_ball;
using numeric::dinterval;

namespace {

constexpr std::size_t cube_cap = 256;

/// One one-symbol change: input x (eos last), 0-based position p, replacement a.
struct change {
    model::input_sequence x;
    std::size_t p = 0;
    int a = 0;
    const char* found_by = "";
};

/// y_n and the softmax probabilities of an input in S.
template <class S> struct output {
    std::vector<S> y, prob;
};

template <class S>
output<S> evaluate(const model::model<S>& ms, const model::input_sequence& x, const numeric::context& ctx) {
    output<S> o;
    o.y = attention::soft_forward(ms, x, ctx).y;
    if (ms.out.type == model::readout<S>::kind::softmax) {
        const auto z = model::apply_affine(ms.out.logits, o.y, ctx);
        S top = z.front();
        for (const auto& v : z) top = numeric::max_of(top, v);
        const S shift = numeric::representative(top);
        S sum = numeric::zero<S>(ctx);
        for (const auto& v : z) {
            o.prob.push_back(numeric::exp(v - shift));
            sum += o.prob.back();
        }
        for (auto& v : o.prob) v = v / sum;
    }
    return o;
}

/// max_r |d_r| of enclosures d_r: it lies between the largest lower end and the largest upper
/// end of the |d_r|.
arb_ball max_abs(const std::vector<arb_ball>& ds, const numeric::context& ctx) {
    arb_ball lo = numeric::zero<arb_ball>(ctx), hi = numeric::zero<arb_ball>(ctx);
    for (const auto& v : ds) {
        const arb_ball d = numeric::abs(v);
        const arb_ball l = analysis::lower(d);
        if (numeric::compare(l, lo) == numeric::order::greater) lo = l;
        hi = analysis::max_upper(hi, d);
    }
    return numeric::hull(lo, hi);
}

/// n ||Δy|| and n ||Δp||_∞ of a change, as balls.
struct measured {
    arb_ball n_dy, n_dp;
    bool has_dp = false;
};

template <class S>
measured measure(const model::model<S>& ms, const change& ch, const numeric::context& ctx,
                 std::map<model::input_sequence, output<S>>& cache) {
    auto get = [&](const model::input_sequence& x) -> const output<S>& {
        auto it = cache.find(x);
        if (it == cache.end()) it = cache.emplace(x, evaluate(ms, x, ctx)).first;
        return it->second;
    };
    auto x2 = ch.x;
    x2[ch.p] = ch.a;
    const output<S>& a = get(ch.x);
    const output<S>& b = get(x2);
    const arb_ball nb = numeric::from_int<arb_ball>(static_cast<long>(ch.x.size()), ctx);
    arb_ball sq = numeric::zero<arb_ball>(ctx);
    for (std::size_t t = 0; t < a.y.size(); ++t) {
        const arb_ball d = numeric::to_ball(b.y[t] - a.y[t]);
        numeric::fma_acc(sq, d, d);
    }
    measured m;
    m.n_dy = nb * numeric::sqrt_nonneg(sq);
    if (!a.prob.empty()) {
        m.has_dp = true;
        std::vector<arb_ball> dp;
        for (std::size_t t = 0; t < a.prob.size(); ++t) dp.push_back(numeric::to_ball(b.prob[t] - a.prob[t]));
        m.n_dp = nb * max_abs(dp, ctx);
    }
    return m;
}

/// The same from the differential kernel (attention::soft_change): the pair runs once and the
/// change is propagated by exact difference rules, so a change the model makes exactly zero (a
/// zero value map, an update blind to the attention output, a readout blind to the coordinates
/// that move) is the exact point 0 and decides against a bound of 0, which the difference of
/// two independent passes never does at any precision.
/// Whether the probabilities provably do not move: every difference of logits z_r - z_0 has
/// the exact change Σ_t (W_rt - W_0t) Δy_t = 0 (the weights' differences exact rationals, the
/// Δy_t from the differential kernel). A readout whose rows are equal, or differ only on
/// coordinates the change leaves exactly unchanged, keeps p fixed although y moves; the
/// kernel's Δp, computed through exp, would then never exclude a nonzero change.
bool logits_shift_together(const model::matrix<rational>& W, const std::vector<arb_ball>& dy,
                           const numeric::context& ctx) {
    const arb_ball zero = numeric::zero<arb_ball>(ctx);
    for (std::size_t r = 1; r < W.rows; ++r) {
        arb_ball acc = zero;
        for (std::size_t t = 0; t < W.cols; ++t) {
            const rational w = W.at(r, t) - W.at(0, t);
            if (w == 0) continue;
            acc += numeric::from_rational<arb_ball>(w, ctx) * dy[t];
        }
        if (!numeric::is_exact(acc) || numeric::compare(acc, zero) != numeric::order::equal) return false;
    }
    return true;
}

measured measure_change(attention::soft_change_model& scm, const model::model<rational>& m, const change& ch,
                        const numeric::context& ctx) {
    const auto r = scm.change(ch.x, ch.p, ch.a);
    const arb_ball nb = numeric::from_int<arb_ball>(static_cast<long>(ch.x.size()), ctx);
    arb_ball sq = numeric::zero<arb_ball>(ctx);
    for (const auto& d : r.dy) numeric::fma_acc(sq, d, d);
    measured out;
    out.n_dy = nb * numeric::sqrt_nonneg(sq);
    if (r.dp) {
        out.has_dp = true;
        out.n_dp = logits_shift_together(m.out.logits.W, r.dy, ctx) ? numeric::zero<arb_ball>(ctx)
                                                                      : nb * max_abs(*r.dp, ctx);
    }
    return out;
}

/// The changes a case measures: the drawn input's at the measured positions, the search's
/// largest (check --model with a budget), and every change of every input of a small cube.
std::vector<change> changes_of(const test_case& c) {
    const auto x = input_of(c);
    const std::size_t n = x.size();
    const int sig = c.model.sigma.eos_index();
    std::vector<change> out;
    for (std::size_t p : measured_positions(c, n))
        for (int a = 0; a < sig; ++a)
            if (a != x[p]) out.push_back({x, p, a, "the drawn input"});
    if (auto b = c.params.find("search_budget"); b != c.params.end() && b->second > 0) {
        analysis::search_options o;
        o.budget = static_cast<std::size_t>(b->second);
        if (auto sd = c.params.find("search_seed"); sd != c.params.end()) o.seed = static_cast<std::uint64_t>(sd->second);
        o.start = x;
        const auto s = analysis::worst_case_search(c.model, static_cast<long>(n), o);
        if (s.found) out.push_back({s.input, s.position, s.replacement, "the worst-case search"});
    }
    double cube = 1;
    for (std::size_t j = 0; j + 1 < n; ++j) cube *= sig;
    if (cube <= static_cast<double>(cube_cap)) {
        for (std::size_t code = 0; code < static_cast<std::size_t>(cube); ++code) {
            model::input_sequence w;
            std::size_t v = code;
            for (std::size_t j = 0; j + 1 < n; ++j) {
                w.push_back(static_cast<int>(v % static_cast<std::size_t>(sig)));
                v /= static_cast<std::size_t>(sig);
            }
            w.push_back(c.model.sigma.eos_index());
            for (std::size_t p = 0; p + 1 < n; ++p)
                for (int a = 0; a < sig; ++a)
                    if (a != w[p]) out.push_back({w, p, a, "the enumerated cube"});
        }
    }
    return out;
}

check_result every_input_check(const test_case& c, const numeric::context& ctx, analysis::dropped_term drop) {
    const auto x = input_of(c);
    const long n = static_cast<long>(x.size());
    if (n < 2) return check_result::holds("no position before eos");
    if (auto why = analysis::all_inputs_unsupported(c.model)) return check_result::holds("no bound: " + *why);
    analysis::all_inputs_options opt;
    opt.threads = 1;
    opt.drop = drop;
    analysis::length_range r;
    r.lo = n;
    r.hi = n;
    std::vector<std::pair<const char*, analysis::all_inputs_result>> bounds;
    bounds.emplace_back("interval", analysis::all_inputs_bound<dinterval>(c.model, r, opt, numeric::context{53}));
    if (n <= 64) bounds.emplace_back("ball", analysis::all_inputs_bound<arb_ball>(c.model, r, opt, ctx));
    const auto changes = changes_of(c);
    const auto mi = model::to_scalar<dinterval>(c.model, ctx);
    attention::soft_change_model scm(c.model, ctx);
    std::map<model::input_sequence, output<dinterval>> cache_i;
    bool undecided = false;
    for (const auto& ch : changes) {
        std::optional<measured> mb_m;
        measured mm;
        try {
            mm = measure(mi, ch, ctx, cache_i);
        } catch (const numeric::undefined_error&) {
            mm = measure_change(scm, c.model, ch, ctx); // intervals too wide: the pair in balls
        }
        for (const auto& entry : bounds) {
            const auto& kind = entry.first;
            const auto& b = entry.second; // not a structured binding: clang 14 cannot capture one
            auto judge = [&](const measured& v) {
                std::vector<std::pair<const char*, numeric::order>> out;
                if (std::isfinite(b.n_influence))
                    out.emplace_back("influence", numeric::compare(v.n_dy, arb_ball::from_double(b.n_influence, ctx)));
                if (v.has_dp && b.n_prob && std::isfinite(*b.n_prob))
                    out.emplace_back("probability", numeric::compare(v.n_dp, arb_ball::from_double(*b.n_prob, ctx)));
                return out;
            };
            auto verdicts = judge(mm);
            const bool open = std::any_of(verdicts.begin(), verdicts.end(),
                                          [](const auto& o) { return o.second == numeric::order::unknown; });
            if (open) {
                if (!mb_m) mb_m = measure_change(scm, c.model, ch, ctx);
                verdicts = judge(*mb_m);
            }
            for (const auto& [what, o] : verdicts) {
                if (o == numeric::order::greater) {
                    const measured& v = mb_m ? *mb_m : mm;
                    return check_result::violated(std::string("a one-symbol change exceeds the ") + what +
                                                  " bound over every input")
                        .with("n", std::to_string(n))
                        .with("bound_kind", kind)
                        .with("found_by", ch.found_by)
                        .with("input", model::format_input(c.model.sigma, ch.x))
                        .with("position", std::to_string(ch.p + 1))
                        .with("replacement", c.model.sigma.symbols[static_cast<std::size_t>(ch.a)])
                        .with("n_times_change", show_ball(std::string(what) == "influence" ? v.n_dy : v.n_dp))
                        .with("n_times_bound", analysis::bound_decimal(
                                                   std::string(what) == "influence" ? b.n_influence : *b.n_prob, 12))
                        .with("dropped_term", analysis::to_string(drop));
                }
                if (o == numeric::order::unknown) undecided = true;
            }
        }
    }
    if (undecided) return check_result::undecided("a change and the bound over every input overlap at this precision");
    return check_result::holds();
}

/// The hard models of every-input-margin: one layer, unique-hard or average-hard.
rc::Gen<model::model<rational>> one_layer_hard() {
    gen::hard_bounds hb;
    hb.max_layers = 1;
    hb.max_alphabet = 3;
    return rc::gen::oneOf(gen::hard_model(hb), rc::gen::map(gen::hard_model(hb), [](model::model<rational> m) {
                              m.attention = model::attention_kind::average_hard;
                              return m;
                          }));
}

check_result every_margin_check(const test_case& c, const numeric::context& ctx, const analysis::margin_options& mo) {
    const auto x = input_of(c);
    const long n = static_cast<long>(x.size());
    if (n < 2) return check_result::holds("no key besides eos");
    const auto e = analysis::every_input_margins_at(c.model, n, ctx, mo);
    if (!e.applies) return check_result::holds("not decided: " + e.reason);
    const std::size_t H = c.model.layers.front().heads.size();
    auto margin_at = [&](const model::input_sequence& w, std::size_t h) {
        return analysis::score_gaps(c.model, w).layers[0].heads[h].rows.back().margin;
    };
    auto fail = [&](const std::string& what) {
        return check_result::violated(what).with("n", std::to_string(n)).with("input", c.inputs.front());
    };
    for (std::size_t h = 0; h < H; ++h) {
        const auto& hm = e.heads[h];
        // The drawn input's margin is at least the smallest over every input.
        const auto own = margin_at(x, h);
        if (own && (!hm.gamma || analysis::compare(*own, *hm.gamma) < 0))
            return fail("head " + std::to_string(h + 1) + ": the drawn input's margin " + own->to_string() +
                        " is below the smallest over every input (" +
                        (hm.gamma ? hm.gamma->to_string() : std::string("none")) + ")");
        // The witness attains it.
        if (hm.gamma && hm.exact && hm.witness) {
            const auto w = model::parse_input(c.model, hm.witness->input);
            const auto got = margin_at(w, h);
            if (!got || analysis::compare(*got, *hm.gamma) != 0)
                return fail("head " + std::to_string(h + 1) + ": the witness " + hm.witness->input + " has margin " +
                            (got ? got->to_string() : std::string("none")) + ", not the claimed " +
                            hm.gamma->to_string());
        }
    }
    // The beta certified for every input certifies the drawn input's own bound.
    if (e.beta_every) {
        const auto data = analysis::make_bound_data(c.model, analysis::score_gaps(c.model, x), ctx);
        std::vector<std::vector<arb_ball>> betas;
        for (const auto& l : data.layers) betas.emplace_back(l.heads.size(), *e.beta_every);
        if (!analysis::propagate(data, betas, ctx).readout_certified)
            return fail("beta = " + numeric::to_display_string(*e.beta_every, 8) +
                        " is certified for every input but not for the drawn one");
    }
    return check_result::holds();
}

} // namespace

runner::property every_input_bound(analysis::dropped_term drop) {
    runner::property p;
    p.suite = "soft-influence";
    p.name = "every-input-bound";
    p.statement = "the bound over every input of length n (docs/bounds.md; certified double "
                  "intervals, and Arb balls up to n = 64) is never below a one-symbol change: "
                  "n ||Δy_n|| <= n Δ̄(n) and n ||Δp||_∞ <= n η̄(n) for the drawn input's changes, "
                  "the worst-case search's largest, and every change of every input when "
                  "|Σ|^(n-1) <= 256";
    p.kinds = runner::kinds_of<numeric::dinterval, numeric::arb_ball>();
    p.negative_control = "the bound without the change of the attention weights (Σ (w' - w) V y) "
                         "falls below a change found";
    p.generator = [](const run_config& cfg) {
        return with_search_params(model_input_position(gen::soft_model(), cfg, 256, random_lengths::log_uniform),
                                  cfg);
    };
    p.applies = [](const model::model<rational>& m) { return analysis::all_inputs_unsupported(m); };
    p.check = [drop](const test_case& c, const numeric::context& ctx) { return every_input_check(c, ctx, drop); };
    p.shape = position_shape(runner::model_requirement::soft, false,
                             {n_param(false), search_budget_param(), seed_param(false, "search_seed")});
    p.tag = case_class;
    return p;
}

runner::property every_input_margin(analysis::margin_options opt) {
    runner::property p;
    p.suite = "soft-hard";
    p.name = "every-input-margin";
    p.statement = "for a one-layer hard or average-hard model, the smallest margin of the output row "
                  "over every input (docs/theory.md §4.5) is at most the drawn input's margin and is "
                  "attained by its witness input, and the beta certified for every input certifies "
                  "the drawn input's own bound";
    p.kinds = runner::kinds_of<numeric::rational, numeric::arb_ball>();
    p.negative_control = "second levels admitted without checking that the other keys can stay below "
                         "them: the claimed margin is not attained by its witness";
    p.generator = [](const run_config& cfg) { return model_and_input(one_layer_hard(), cfg, 64); };
    p.applies = [](const model::model<rational>& m) -> std::optional<std::string> {
        if (m.layers.size() != 1) return "margins over every input are decided for one-layer models";
        return std::nullopt;
    };
    p.check = [opt](const test_case& c, const numeric::context& ctx) { return every_margin_check(c, ctx, opt); };
    p.shape = one_input_shape(runner::model_requirement::any_hard);
    p.tag = case_class;
    return p;
}

void register_every_input(runner::registry& r) {
    r.add(every_input_bound());
    r.add(every_input_margin());
}

} // namespace attnprop::props
