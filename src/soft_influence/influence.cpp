// One-symbol influence profiles (influence.hpp).
#include "soft_influence/influence.hpp"

#include "soft_influence/posterior.hpp"
#include "attention/incremental_influence.hpp"
#include "attention/common.hpp"
#include "attention/soft_change.hpp"
#include "numeric/interrupt.hpp"
#include "numeric/kinds.hpp"
#include "util/precondition.hpp"

#include <stdexcept>

namespace attnprop::analysis {

using numeric::arb_ball;
using numeric::rational;

const char* to_string(influence_method m) {
    switch (m) {
    case influence_method::automatic: return "automatic";
    case influence_method::incremental: return "incremental";
    case influence_method::naive: return "naive";
    }
    return "?";
}

template <numeric::Scalar S> S max_enclosure(const S& a, const S& b) {
    return numeric::max_of(a, b);
}
arb_ball max_enclosure(const arb_ball& a, const arb_ball& b) {
    arb_ball r(std::max(a.precision(), b.precision()));
    arb_max(r.raw(), a.raw(), b.raw(), r.precision());
    return r;
}

#define ATTNPROP_INSTANTIATE(S) template S max_enclosure(const S&, const S&);
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

bool incremental_applies(const model::model<rational>& m) { return attention::incremental_supports(m); }

namespace {

template <numeric::ExpScalar S>
S distance(const model::vec<S>& a, const model::vec<S>& b, const numeric::context& ctx) {
    S acc = numeric::zero<S>(ctx);
    for (std::size_t c = 0; c < a.size(); ++c) {
        S t = a[c] - b[c];
        numeric::fma_acc(acc, t, t);
    }
    // A sum of squares: a ball reaching below 0 must not make the norm indeterminate.
    return numeric::sqrt_nonneg(acc);
}

template <numeric::ExpScalar S>
model::vec<S> probabilities_of(const model::model<S>& m, const model::vec<S>& y, std::size_t n,
                               const numeric::context& ctx) {
    try {
        return attention::softmax(attention::readout_logits(m.out, y, ctx), ctx);
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(m.layers.size() + 1, "readout", n));
    }
}

/// e with the input it was met on added to its reason (the place stays the same).
[[noreturn]] void rethrow_on_input(const numeric::undefined_error& e, const std::string& what) {
    throw numeric::undefined_error(e.reason() + "; " + what, e.where(), e.precision_may_resolve());
}

/// Work of one forward pass computing only y_n^(L), counted in score evaluations: a layer
/// below the top costs n when every head's scores are constant (a mean), else n² (n²/2 under a
/// causal mask: row i reads i + 1 keys); the top layer evaluates row n only (n).
double naive_pass_cost(const model::model<rational>& m, double n) {
    double cost = 0;
    for (std::size_t k = 0; k + 1 < m.layers.size(); ++k) {
        bool uniform = true;
        for (const auto& h : m.layers[k].heads) uniform = uniform && attention::constant_scores(h);
        const bool masked = m.layers[k].mask != model::mask_kind::none;
        cost += uniform ? n : masked ? n * n / 2 : n * n;
    }
    return cost + n;
}

/// Work of the incremental method: its set-up evaluates every layer-1 row kept (n rows of n
/// scores for L = 2, row n for L = 1), then O(n) per change for L = 2 and O(1) for L = 1; a
/// causal mask on layer 1 halves both (row i reads i + 1 keys, a change at p the rows i >= p).
double incremental_cost(const model::model<rational>& m, double n, double changes) {
    if (m.layers.size() == 1) return n + changes;
    const double share = m.layers.front().mask != model::mask_kind::none ? 0.5 : 1.0;
    return share * (n * n + changes * n);
}

/// A change measured as the difference of two independent balls is not resolved when it has
/// fewer than 32 accurate bits (in particular when it reaches 0 without being the exact point
/// 0): its radius is that of the values, whatever the change is. Such pairs (the output's
/// change or the probabilities' change) are measured again as differential enclosures.
bool resolved(const arb_ball& dy) { return arb_rel_accuracy_bits(dy.raw()) >= 32; }

/// The kinds with the a-posteriori pair bound: the enclosure kinds.
template <class S> constexpr bool has_posterior_bound = numeric::is_enclosure<S>::value;

/// A trace as balls (posterior_bound reads balls; another enclosure kind converts exactly).
const attention::soft_trace<arb_ball>& ball_trace(const attention::soft_trace<arb_ball>& t) { return t; }
template <class S> attention::soft_trace<arb_ball> ball_trace(const attention::soft_trace<S>& t) {
    attention::soft_trace<arb_ball> b;
    b.y.resize(t.y.size());
    for (std::size_t k = 0; k < t.y.size(); ++k) {
        b.y[k].reserve(t.y[k].size());
        for (const auto& row : t.y[k]) {
            model::vec<arb_ball> r;
            r.reserve(row.size());
            for (const auto& v : row) r.push_back(numeric::to_ball(v));
            b.y[k].push_back(std::move(r));
        }
    }
    return b;
}

} // namespace

double profile_cost(const model::model<rational>& exact, std::size_t n, double changes,
                    influence_method method) {
    const double len = static_cast<double>(n);
    return method == influence_method::incremental ? incremental_cost(exact, len, changes)
                                                   : (changes + 1) * naive_pass_cost(exact, len);
}

template <numeric::ExpScalar S>
influence_method chosen_method(const model::model<S>& m, const model::model<rational>& exact,
                               std::size_t n, const influence_options& opt) {
    // The a-posteriori pair bound is derived for softmax only.
    const bool posterior = has_posterior_bound<S> && opt.posterior && model::info(exact.attention).soft_influence;
    // posterior_cache (the a-posteriori bound from the incremental kernel's states) is derived
    // for unmasked layers; a masked model's bound reads two traces (posterior_bound).
    const bool applies = incremental_applies(exact) && attention::incremental_supports(m) &&
                         !(posterior && model::any_masked(exact));
    if (opt.method == influence_method::incremental && !applies)
        throw precondition_error("the incremental influence method does not apply to this model");
    if (opt.method != influence_method::automatic) return opt.method;
    // With the a-posteriori bound, the naive method runs two traced passes and the O(n²) bound
    // per change; the incremental one keeps x's trace (posterior_cache) and reads the states
    // of each change, O(n d) per change: incremental whenever it applies. Otherwise automatic
    // compares the work of the two methods: a few changes on a long input whose lower layers
    // are uniform (Chiang & Cholak's layer 1) are cheaper as full passes than the O(n²)
    // set-up. Every position has |Σ| - 1 replacements.
    if (posterior) return applies ? influence_method::incremental : influence_method::naive;
    const double positions =
        static_cast<double>(opt.positions.empty() && n >= 1 ? n - 1 : opt.positions.size());
    const double changes = positions * static_cast<double>(exact.sigma.symbols.size() - 1);
    const bool cheaper = incremental_cost(exact, static_cast<double>(n), changes) <=
                         (changes + 1) * naive_pass_cost(exact, static_cast<double>(n));
    return applies && cheaper ? influence_method::incremental : influence_method::naive;
}

template <numeric::ExpScalar S>
influence_profile<S> influence_profile_of(const model::model<S>& m, const model::model<rational>& exact,
                                          const model::input_sequence& x,
                                          const numeric::context& ctx,
                                          const influence_options& opt) {
    if (model::selects_maximum(m.attention))
        throw precondition_error("influence profiles need attention that weighs every key");
    const std::size_t n = x.size();
    if (n < 2) throw precondition_error("influence needs n >= 2 (at least one symbol before eos)");
    std::vector<std::size_t> positions = opt.positions;
    if (positions.empty())
        for (std::size_t i = 0; i + 1 < n; ++i) positions.push_back(i);
    for (auto i : positions)
        if (i + 1 >= n)
            throw precondition_error("influence position " + std::to_string(i + 1) +
                                        " is not before eos (n = " + std::to_string(n) + ")");
    // Changes in the differential model's kind that it cannot resolve are measured again there.
    constexpr bool remeasured = numeric::has_differential<S>;
    // The a-posteriori pair bound is derived for softmax only.
    const bool posterior = has_posterior_bound<S> && opt.posterior && model::info(exact.attention).soft_influence;
    const bool softmax = m.out.type == model::readout<S>::kind::softmax;
    influence_options whole = opt;
    whole.positions = positions;
    const bool incremental = chosen_method(m, exact, n, whole) == influence_method::incremental;

    influence_profile<S> out;
    out.method = incremental ? influence_method::incremental : influence_method::naive;
    attention::soft_options so;
    so.trace = posterior;
    std::optional<attention::incremental_influence<S>> inc;
    std::optional<attention::soft_output<S>> base;
    std::optional<posterior_cache<S>> cache; // incremental with the a-posteriori bound
    try {
        if (incremental) {
            inc.emplace(m, x, ctx, attention::incremental_fault::none, opt.table_bytes, &positions);
            out.y = inc->base();
            // The a-posteriori bound reads x's states from the incremental kernel (no forward
            // pass with trace).
            if constexpr (has_posterior_bound<S>)
                if (posterior) cache.emplace(exact, inc->initial_states(), inc->layer1_states(), out.y, ctx);
        } else {
            base = attention::soft_forward(m, x, ctx, so);
            out.y = base->y;
        }
        if (softmax) out.probabilities = probabilities_of(m, out.y, n, ctx);
    } catch (const numeric::undefined_error& e) {
        rethrow_on_input(e, "input '" + model::format_input(exact.sigma, x) + "'");
    }

    const int symbols = static_cast<int>(exact.sigma.symbols.size());
    std::optional<attention::soft_change_model> differential;
    std::optional<typename attention::incremental_influence<S>::changed_states> states; // reused per change
    model::input_sequence x2 = x;
    for (std::size_t i : positions) {
        for (int a = 0; a < symbols; ++a) {
            if (a == x[i]) continue;
            numeric::throw_if_stop_requested(); // one change costs a forward pass at n
            x2[i] = a;
            attention::soft_output<S> changed;
            std::optional<model::vec<S>> p2;
            std::optional<arb_ball> pr_posterior; // from the cache (incremental)
            try {
                if (incremental && cache) {
                    if constexpr (has_posterior_bound<S>) {
                        if (!states) states.emplace();
                        inc->changed_for_bound(i, a, *states);
                        changed.y = states->y;
                        change_hints hints;
                        hints.omega1 = &states->omega1;
                        hints.y1_mid = &states->y1_mid;
                        hints.y1_rad = &states->y1_rad;
                        hints.y1_moved = &states->y1_moved;
                        hints.omega_top = &states->omega_top;
                        pr_posterior = cache->bound(i, states->y0p, states->y1, changed.y, hints);
                    }
                } else if (incremental) {
                    changed.y = inc->changed(i, a);
                } else {
                    changed = attention::soft_forward(m, x2, ctx, so);
                }
                if (softmax) p2 = probabilities_of(m, changed.y, n, ctx);
            } catch (const numeric::undefined_error& e) {
                rethrow_on_input(e, "input '" + model::format_input(exact.sigma, x) +
                                        "' with position " + std::to_string(i + 1) +
                                        " changed to '" + exact.sigma.name(a) + "'");
            }
            influence_pair<S> pr;
            pr.position = i;
            pr.replacement = a;
            pr.dy = distance(out.y, changed.y, ctx);
            if (softmax) {
                S mx = numeric::zero<S>(ctx), tv = numeric::zero<S>(ctx);
                for (std::size_t r = 0; r < p2->size(); ++r) {
                    S d = numeric::abs((*out.probabilities)[r] - (*p2)[r]);
                    mx = max_enclosure(mx, d);
                    tv += d;
                }
                pr.dp_max = mx;
                pr.dp_tv = tv / numeric::from_int<S>(2, ctx);
            }
            if constexpr (has_posterior_bound<S>) {
                if (posterior)
                    pr.posterior = pr_posterior ? *pr_posterior
                                                : posterior_bound(exact, ball_trace(*base->trace),
                                                                  ball_trace(*changed.trace), i, ctx);
            }
            if constexpr (remeasured) {
                // An unresolved change (exactly zero, or below the values' radius) is measured
                // again on the pair itself, where an unchanged output is proved unchanged.
                // (The differential model is softmax's; another kind keeps its enclosure.)
                if (model::info(exact.attention).soft_influence &&
                    (!resolved(pr.dy) || (pr.dp_max && !resolved(*pr.dp_max)))) {
                    if (!differential) differential.emplace(exact, ctx);
                    const auto ch = differential->change(x, i, a);
                    arb_ball sq = numeric::zero<arb_ball>(ctx);
                    for (const auto& d : ch.dy) numeric::fma_acc(sq, d, d);
                    pr.dy = numeric::sqrt_nonneg(sq);
                    if (softmax && ch.dp) {
                        arb_ball mx = numeric::zero<arb_ball>(ctx), tv = numeric::zero<arb_ball>(ctx);
                        for (const auto& d : *ch.dp) {
                            arb_ball ad = numeric::abs(d);
                            mx = max_enclosure(mx, ad);
                            tv += ad;
                        }
                        pr.dp_max = mx;
                        pr.dp_tv = tv / numeric::from_int<arb_ball>(2, ctx);
                    }
                }
            }
            out.pairs.push_back(std::move(pr));
        }
        x2[i] = x[i];
    }
    return out;
}

#define ATTNPROP_INSTANTIATE(S)                                                                    \
    template influence_profile<S> influence_profile_of(                                            \
        const model::model<S>&, const model::model<rational>&, const model::input_sequence&,      \
        const numeric::context&, const influence_options&);                                        \
    template influence_method chosen_method(const model::model<S>&, const model::model<rational>&, \
                                            std::size_t, const influence_options&);
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

} // namespace attnprop::analysis
