#include "soft_hard/simulate.hpp"

#include "soft_influence/hypotheses.hpp"
#include "soft_influence/norms.hpp"
#include "attention/soft.hpp"
#include "numeric/ball_bounds.hpp"
#include "util/precondition.hpp"

#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace attnprop::analysis {

namespace {

using score_kind = model::score_spec<rational>::kind;

arb_ball ball(const rational& q, const numeric::context& ctx) {
    return arb_ball::from_rational(q, ctx);
}

bool is_zero(const arb_ball& x) { return arb_is_zero(x.raw()) != 0; }

/// Upper point of a · b for upper points a, b >= 0, with 0 · (anything) = 0 (an unknown
/// constant times a perturbation that is exactly 0 contributes nothing).
arb_ball mul_up(const arb_ball& a, const arb_ball& b) {
    if (is_zero(a) || is_zero(b)) return zero_point(std::max(a.precision(), b.precision()));
    return upper(a * b);
}

arb_ball add_up(const arb_ball& a, const arb_ball& b) { return upper(a + b); }

/// Upper point of sqrt(q) for an exact q >= 0.
arb_ball sqrt_up(const rational& q, const numeric::context& ctx) {
    if (q == 0) return zero_point(ctx.precision_bits);
    return upper(numeric::sqrt(ball(q, ctx)));
}

/// Certainly a < b.
bool certainly_less(const arb_ball& a, const arb_ball& b) {
    return numeric::compare(a, b) == numeric::order::less;
}

std::string where(std::size_t layer, std::size_t head) {
    return "layer " + std::to_string(layer) + " head " + std::to_string(head);
}

/// The groups of one head: rows with equal (has margin, t, margin), then merged pairwise
/// (smallest margin and t, largest spreads: the row bound only grows) down to `limit`.
std::vector<bound_group> make_groups(const head_gaps& hg, const numeric::context& ctx) {
    constexpr std::size_t limit = 64;
    struct acc {
        std::optional<surd> margin;
        std::size_t t;
        rational out_sq, in_sq;
    };
    // Within one head every margin has the same scale, so equal surds have equal a.
    std::map<std::tuple<bool, std::size_t, rational>, acc> by_key;
    for (const auto& r : hg.rows) {
        const auto key = std::make_tuple(r.margin.has_value(), r.maximal.size(),
                                         r.margin ? r.margin->a : rational(0));
        auto it = by_key.find(key);
        if (it == by_key.end()) {
            by_key.emplace(key, acc{r.margin, r.maximal.size(), r.spread_out_sq, r.spread_in_sq});
        } else {
            if (r.spread_out_sq > it->second.out_sq) it->second.out_sq = r.spread_out_sq;
            if (r.spread_in_sq > it->second.in_sq) it->second.in_sq = r.spread_in_sq;
        }
    }
    std::vector<acc> v;
    for (auto& [k, a] : by_key) v.push_back(a);
    // Sort: rows without a margin first, then by margin (ascending).
    std::sort(v.begin(), v.end(), [](const acc& x, const acc& y) {
        if (x.margin.has_value() != y.margin.has_value()) return !x.margin.has_value();
        if (!x.margin) return x.t < y.t;
        const int c = compare(*x.margin, *y.margin);
        return c != 0 ? c < 0 : x.t < y.t;
    });
    while (v.size() > limit) {
        // Merge the two neighbours with a margin that are closest in the order: the merged
        // group has the smaller margin and t and the larger spreads, so its bound dominates
        // both rows' bounds.
        std::size_t at = v.size() - 2;
        for (std::size_t s = 0; s + 1 < v.size(); ++s)
            if (v[s].margin.has_value() == v[s + 1].margin.has_value()) {
                at = s;
                break;
            }
        acc& a = v[at];
        const acc& b = v[at + 1];
        a.t = std::min(a.t, b.t);
        if (b.out_sq > a.out_sq) a.out_sq = b.out_sq;
        if (b.in_sq > a.in_sq) a.in_sq = b.in_sq;
        // a.margin is the smaller (sorted ascending)
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(at + 1));
    }
    std::vector<bound_group> out;
    for (const auto& a : v) {
        bound_group g;
        if (a.margin) g.gamma = a.margin->to_ball(ctx);
        g.t = a.t;
        g.spread_out = sqrt_up(a.out_sq, ctx);
        g.spread_in = sqrt_up(a.in_sq, ctx);
        out.push_back(std::move(g));
    }
    return out;
}

readout_bound_data make_readout(const model::model<rational>& m, const vec<rational>& y,
                                const numeric::context& ctx) {
    readout_bound_data r;
    const long prec = ctx.precision_bits;
    const auto& out = m.out;
    using rk = model::readout<rational>::kind;
    if (out.type == rk::threshold) {
        const rational v = model::dot(out.w_exact.data(), y.data(), y.size(), ctx) - out.t_exact;
        r.slack = ball(v < 0 ? -v : v, ctx);
        r.lip = norm2_upper(model::convert<arb_ball>(out.w_exact, ctx), prec);
        r.hard_decision = v > 0 ? "accept" : "reject";
    } else if (out.type == rk::map) {
        const rational v = model::evaluate(*out.fn, y, ctx).front();
        r.slack = ball(v < 0 ? -v : v, ctx);
        auto l = lipschitz_bound(*out.fn, ctx);
        r.lip = l ? *l : pos_inf(prec);
        r.hard_decision = v > 0 ? "accept" : "reject";
    } else {
        const vec<rational> z = model::apply_affine(out.logits, y, ctx);
        std::size_t top = 0;
        for (std::size_t s = 1; s < z.size(); ++s)
            if (z[s] > z[top]) top = s;
        std::optional<rational> second;
        bool tie = false;
        for (std::size_t s = 0; s < z.size(); ++s) {
            if (s == top) continue;
            if (z[s] == z[top]) tie = true;
            if (!second || z[s] > *second) second = z[s];
        }
        r.slack = tie || !second ? zero_point(prec) : ball((z[top] - *second) / 2, ctx);
        r.lip = zero_point(prec);
        const auto& W = out.logits.W;
        for (std::size_t row = 0; row < W.rows; ++row) {
            std::vector<arb_ball> wr;
            for (std::size_t c = 0; c < W.cols; ++c) wr.push_back(ball(W.at(row, c), ctx));
            r.lip = max_upper(r.lip, norm2_upper(wr, prec));
        }
        r.hard_decision = tie ? "tie" : out.symbols[top];
    }
    return r;
}

} // namespace

model::model<rational> soft_counterpart(const model::model<rational>& m,
                                        const std::optional<model::expr>& beta) {
    model::model<rational> s = m;
    s.attention = model::attention_kind::soft;
    if (beta)
        for (auto& l : s.layers)
            for (auto& h : l.heads) {
                h.score.beta = *beta;
                h.score.length_scale = model::score_spec<rational>::length_scaling::none;
            }
    return s;
}

bound_data make_bound_data(const model::model<rational>& m, const gap_pass& p,
                           const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    bound_data d;
    d.n = p.y.front().size();
    d.average = model::averages_ties(m.attention);
    for (std::size_t k = 1; k <= m.layers.size(); ++k) {
        const auto& lay = m.layers[k - 1];
        const auto& lg = p.layers[k - 1];
        layer_bound_data ld;
        const map_lipschitz lip = lipschitz_analysis(lay.update, update_blocks(m, k - 1), ctx);
        if (certainly(lip.lipschitz)) {
            ld.lip_y = lip.block_bounds.front();
            ld.lip_b.assign(lip.block_bounds.begin() + 1, lip.block_bounds.end());
        } else {
            ld.lip_y = pos_inf(prec);
            ld.lip_b.assign(lay.heads.size(), pos_inf(prec));
            ld.not_lipschitz = "layer " + std::to_string(k) + " update: " + lip.reason;
        }
        if (const auto* a = std::get_if<model::affine_map<rational>>(&lay.update.impl)) {
            ld.update_w = a->W;
            for (const auto& blk : update_blocks(m, k - 1)) ld.b_offset.push_back(blk.offset);
            ld.b_offset.erase(ld.b_offset.begin()); // the y block
        }
        for (std::size_t h = 0; h < lay.heads.size(); ++h) {
            const auto& hd = lay.heads[h];
            const auto& hg = lg.heads[h];
            head_bound_data hb;
            if (const auto* v = value_affine(hd)) {
                hb.lip_value = spectral_norm_upper(v->W, ctx);
            } else if (auto l = lipschitz_bound(*hd.value.fn, ctx)) {
                hb.lip_value = *l;
            } else {
                hb.lip_value = pos_inf(prec);
                hb.not_lipschitz = where(k, h + 1) + " value map: not known to be Lipschitz";
            }
            if (hg.constant) {
                // Every key has the same score in both models: no score moves relative to another.
                hb.e1 = zero_point(prec);
                hb.e2 = zero_point(prec);
            } else if (hg.dot) {
                const arb_ball qn = spectral_norm_upper(hd.score.Q.W, ctx);
                const arb_ball kn = spectral_norm_upper(hd.score.K.W, ctx);
                const arb_ball sc = upper(hg.scale.to_ball(ctx));
                const arb_ball maxk = sqrt_up(hg.max_key_sq, ctx);
                const arb_ball maxq = sqrt_up(hg.max_query_sq, ctx);
                // ã − a = scale (Δq·k + q·Δk + Δq·Δk), ||Δq|| <= ||Q|| δ, ||Δk|| <= ||K|| δ.
                hb.e1 = mul_up(sc, add_up(mul_up(qn, maxk), mul_up(maxq, kn)));
                hb.e2 = mul_up(sc, mul_up(qn, kn));
            } else {
                const std::size_t dm = m.d;
                const map_lipschitz sl = lipschitz_analysis(*hd.score.fn, {{0, dm}, {dm, dm}}, ctx);
                if (certainly(sl.lipschitz)) {
                    hb.e1 = add_up(sl.block_bounds[0], sl.block_bounds[1]);
                } else {
                    hb.e1 = pos_inf(prec);
                    if (!hb.not_lipschitz.empty()) hb.not_lipschitz += "; ";
                    hb.not_lipschitz += where(k, h + 1) + " score map: " + sl.reason;
                }
                hb.e2 = zero_point(prec);
            }
            hb.groups = make_groups(hg, ctx);
            ld.heads.push_back(std::move(hb));
        }
        d.layers.push_back(std::move(ld));
    }
    d.readout = make_readout(m, p.output, ctx);
    return d;
}

arb_ball leak_bound(std::size_t n, std::size_t t, const std::optional<arb_ball>& gamma,
                    const arb_ball& eps, const arb_ball& beta, const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    if (!gamma) return zero_point(prec);
    const arb_ball one = numeric::one<arb_ball>(ctx);
    if (!finite(eps)) return one;
    const arb_ball x = beta * (*gamma - eps - eps);
    if (numeric::sign(x, ctx) != numeric::order::greater) return one;
    const arb_ball r =
        ball(rational(static_cast<long>(n - t), static_cast<long>(t)), ctx) * numeric::exp(-x);
    return min_upper(one, upper(r / (one + r)));
}

propagated propagate(const bound_data& d, const std::vector<std::vector<arb_ball>>& beta,
                     const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    if (beta.size() != d.layers.size())
        throw precondition_error("propagate: one row of inverse temperatures per layer");
    propagated out;
    arb_ball delta = zero_point(prec);
    for (std::size_t k = 0; k < d.layers.size(); ++k) {
        const auto& ld = d.layers[k];
        if (beta[k].size() != ld.heads.size())
            throw precondition_error("propagate: one inverse temperature per head");
        const bool still = is_zero(delta);
        arb_ball sum = still ? zero_point(prec) : mul_up(ld.lip_y, delta);
        arb_ball eps_k = zero_point(prec), worst_leak = zero_point(prec);
        bool condition = true;
        std::vector<arb_ball> head_eps;
        for (std::size_t h = 0; h < ld.heads.size(); ++h) {
            const auto& hb = ld.heads[h];
            const arb_ball& b = beta[k][h];
            const arb_ball eps =
                still ? zero_point(prec) : add_up(mul_up(hb.e1, delta), mul_up(hb.e2, mul_up(delta, delta)));
            const arb_ball value_term = still ? zero_point(prec) : mul_up(hb.lip_value, delta);
            // e^{2|β|ε} − 1 bounds how far the soft weights inside a tie move apart.
            arb_ball tie_factor = zero_point(prec);
            if (!is_zero(eps))
                tie_factor = finite(eps) ? upper(numeric::exp(numeric::abs(b) * (eps + eps)) -
                                                 numeric::one<arb_ball>(ctx))
                                         : pos_inf(prec);
            arb_ball worst = zero_point(prec);
            for (const auto& g : hb.groups) {
                const arb_ball leak = leak_bound(d.n, g.t, g.gamma, eps, b, ctx);
                if (g.gamma && !certainly_less(eps + eps, *g.gamma)) condition = false;
                worst_leak = max_upper(worst_leak, leak);
                // unique-hard: Σ_{j∈T} w̃_j (v_j − v_j*) <= w̃_T R <= R; average-hard: each w̃_j
                // of T is within a factor e^{±2|β|ε} of w̃_T / t.
                const arb_ball tie = d.average ? mul_up(tie_factor, g.spread_in) : g.spread_in;
                const arb_ball row = add_up(mul_up(leak, g.spread_out), tie);
                const arb_ball cap = max_upper(g.spread_out, g.spread_in);
                worst = max_upper(worst, min_upper(cap, row));
            }
            const arb_ball e_h = add_up(value_term, worst);
            sum = add_up(sum, mul_up(ld.lip_b[h], e_h));
            eps_k = max_upper(eps_k, eps);
            head_eps.push_back(eps);
        }
        out.eps.push_back(eps_k);
        out.head_eps.push_back(std::move(head_eps));
        out.worst_leak.push_back(worst_leak);
        out.margin_condition.push_back(condition);
        delta = finite(sum) ? sum : pos_inf(prec);
        out.delta.push_back(delta);
    }
    const auto& r = d.readout;
    if (is_zero(delta))
        out.readout_certified = numeric::sign(r.slack, ctx) == numeric::order::greater;
    else
        out.readout_certified = finite(delta) && certainly_less(mul_up(r.lip, delta), r.slack);
    return out;
}

std::vector<std::vector<arb_ball>> betas_at(const model::model<rational>& soft, long n,
                                            const numeric::context& ctx) {
    std::vector<std::vector<arb_ball>> out;
    for (const auto& l : soft.layers) {
        std::vector<arb_ball> row;
        for (const auto& h : l.heads) {
            auto b = model::beta_at<arb_ball>(h.score, n, ctx);
            row.push_back(b ? *b : numeric::one<arb_ball>(ctx));
        }
        out.push_back(std::move(row));
    }
    return out;
}

namespace {

/// A lower point of ||a − b|| (0 where a coordinate's difference may vanish).
arb_ball distance_lower(const std::vector<arb_ball>& a, const std::vector<arb_ball>& b, long prec) {
    arb_ball sq = zero_point(prec);
    for (std::size_t c = 0; c < a.size(); ++c) {
        arb_ball m = lower(numeric::abs(a[c] - b[c]));
        if (arb_is_negative(m.raw()) || !finite(m)) continue;
        sq = lower(sq + m * m);
    }
    return lower(numeric::sqrt(sq));
}

arb_ball as_ball(const arb_ball& x) { return x; }
arb_ball as_ball(const numeric::dinterval& x) { return numeric::to_ball(x); }

/// Measures the soft counterpart on the rows of a gap pass while the soft pass runs
/// (attention::soft_forward's observer): per row and head the leak Σ_{j∉T} w_j, per row the
/// distance of the state from the hard one, per layer their largest.
template <class S> class leak_observer {
public:
    static constexpr bool active = true;
    static constexpr bool wants_weights = true;

    leak_observer(const gap_pass& hard, soft_observation& obs, const numeric::context& ctx)
        : hard_(hard), obs_(obs), ctx_(ctx), prec_(ctx.precision_bits) {}

    void head_row(const attention::soft_head_row<S>& r) {
        enter(r.layer);
        const auto& gap = hard_.layers.at(r.layer - 1).heads.at(r.head).rows.at(row_);
        if (gap.position != r.row + 1)
            throw precondition_error(
                "observe_soft: the gap pass has other rows than the soft pass");
        auto& leaks = obs_.leak.back()[r.head];
        if (!r.weights) {
            // Uniform on every key, which is T: no leak.
            leaks.push_back(zero_point(prec_));
            return;
        }
        const auto& w = *r.weights;
        const auto& T = gap.maximal;
        // Σ_{j∉T} w_j, summed in balls (tighter than 1 − Σ_{j∈T} w_j when small).
        arb_ball leak = zero_point(prec_);
        std::size_t in_t = 0;
        for (std::size_t j = 0; j < w.size(); ++j) {
            if (in_t < T.size() && T[in_t] == j) {
                ++in_t;
                continue;
            }
            leak = leak + as_ball(w[j]);
        }
        leaks.push_back(std::move(leak));
    }

    void row(std::size_t k, std::size_t i, const vec<S>& y) {
        enter(k);
        model::require_all_finite(y);
        const auto& yh = *hard_.y.at(k).at(i);
        std::vector<arb_ball> ys, yx;
        for (std::size_t c = 0; c < yh.size(); ++c) {
            ys.push_back(as_ball(y[c]));
            yx.push_back(ball(yh[c], ctx_));
        }
        diff_up_ = max_upper(diff_up_, distance_upper(ys, yx, prec_));
        arb_ball sq = zero_point(prec_);
        for (std::size_t c = 0; c < ys.size(); ++c) {
            const arb_ball dlt = ys[c] - yx[c];
            sq = sq + dlt * dlt;
        }
        diff_mid_ = std::max(diff_mid_, std::sqrt(std::max(0.0, numeric::to_double(sq))));
        obs_.row_diff_sq.back().push_back(sq);
        const arb_ball lo = distance_lower(ys, yx, prec_);
        if (numeric::compare(lo, diff_low_) == numeric::order::greater) diff_low_ = lo;
        ++row_;
    }

    /// Closes the layer being measured (after the pass, and before the next layer).
    void finish() {
        if (layer_ == 0) return;
        obs_.state_diff_upper.push_back(diff_up_);
        obs_.state_diff_lower.push_back(diff_low_);
        obs_.state_diff_mid.push_back(diff_mid_);
        layer_ = 0;
    }

private:
    /// Starts layer k's measurements when the pass reaches it.
    void enter(std::size_t k) {
        if (k == layer_) return;
        finish();
        layer_ = k;
        row_ = 0;
        obs_.leak.emplace_back(hard_.layers.at(k - 1).heads.size());
        obs_.row_diff_sq.emplace_back();
        diff_up_ = zero_point(prec_);
        diff_low_ = zero_point(prec_);
        diff_mid_ = 0;
    }

    const gap_pass& hard_;
    soft_observation& obs_;
    numeric::context ctx_;
    long prec_;
    std::size_t layer_ = 0; ///< the layer being measured (0: none)
    std::size_t row_ = 0;   ///< its rows so far (the index into the gap pass's rows)
    arb_ball diff_up_, diff_low_;
    double diff_mid_ = 0;
};

template <class S>
soft_observation observe_impl(const model::model<rational>& soft, const model::input_sequence& x,
                              const gap_pass& hard, const numeric::context& ctx) {
    const model::model<S> ms = model::to_scalar<S>(soft, ctx);
    const std::size_t L = ms.layers.size();
    soft_observation obs;
    // The rows the gap pass computed: every row of layers 1 .. L - 1, and of layer L row n or
    // (a pass with every row) all of them.
    attention::soft_options opt;
    opt.all_rows = L > 0 && hard.y.at(L).front().has_value();
    leak_observer<S> measure(hard, obs, ctx);
    const vec<S> y = attention::soft_forward(ms, x, ctx, opt, measure).y;
    measure.finish();
    for (const auto& c : y) obs.output.push_back(as_ball(c));
    if (ms.out.is_recognizer()) {
        obs.soft_decision = attention::to_string(attention::recognize(ms.out, y, ctx));
    } else {
        const auto z = attention::readout_logits(ms.out, y, ctx);
        const auto a = attention::leftmost_argmax(z);
        bool strict = a.decided;
        if (strict)
            for (std::size_t s = 0; s < z.size(); ++s)
                if (s != a.index && numeric::compare(z[a.index], z[s]) != numeric::order::greater)
                    strict = false;
        obs.soft_decision = strict ? ms.out.symbols[a.index] : "undecided";
    }
    return obs;
}

} // namespace

soft_observation observe_soft(const model::model<rational>& soft, const model::input_sequence& x,
                              const gap_pass& hard, const numeric::context& ctx, bool interval) {
    if (!model::info(soft.attention).soft_influence)
        throw precondition_error("observe_soft: the model must be the soft counterpart");
    if (interval) return observe_impl<numeric::dinterval>(soft, x, hard, ctx);
    return observe_impl<arb_ball>(soft, x, hard, ctx);
}

std::optional<arb_ball> smallest_certified_beta(const std::vector<bound_data>& data,
                                                const numeric::context& ctx) {
    auto certified = [&](double b) {
        const arb_ball beta = arb_ball::from_double(b, ctx);
        for (const auto& d : data) {
            std::vector<std::vector<arb_ball>> betas;
            for (const auto& l : d.layers) betas.emplace_back(l.heads.size(), beta);
            if (!propagate(d, betas, ctx).readout_certified) return false;
        }
        return true;
    };
    double lo = std::ldexp(1.0, -20), hi = std::ldexp(1.0, 40);
    if (!certified(hi)) return std::nullopt;
    if (certified(lo)) return arb_ball::from_double(lo, ctx);
    while (hi / lo > 1.0 + std::ldexp(1.0, -10)) {
        const double mid = std::sqrt(lo * hi);
        if (certified(mid))
            hi = mid;
        else
            lo = mid;
    }
    return arb_ball::from_double(hi, ctx);
}

std::optional<long long> largest_certified_n(const std::vector<bound_data>& data,
                                             const arb_ball& beta, const numeric::context& ctx) {
    if (data.empty()) return std::nullopt;
    std::size_t n0 = 0;
    for (const auto& d : data) n0 = std::max(n0, d.n);
    std::vector<bound_data> moved = data;
    auto certified = [&](unsigned long long n) {
        for (auto& d : moved) {
            d.n = static_cast<std::size_t>(n);
            std::vector<std::vector<arb_ball>> betas;
            for (const auto& l : d.layers) betas.emplace_back(l.heads.size(), beta);
            if (!propagate(d, betas, ctx).readout_certified) return false;
        }
        return true;
    };
    unsigned long long lo = n0, hi = 1ULL << 62;
    if (!certified(lo)) return std::nullopt;
    if (certified(hi)) return static_cast<long long>(hi);
    while (hi - lo > 1) {
        const unsigned long long mid = lo + (hi - lo) / 2;
        if (certified(mid))
            lo = mid;
        else
            hi = mid;
    }
    return static_cast<long long>(lo);
}

} // namespace attnprop::analysis

namespace attnprop::analysis {

namespace {

enum class closed_form { within, contradicts, undecided };

/// The leak of a two-level row on the hard scores, exactly r/(1 + r) with
/// r = ((n − t)/t) e^{−βγ} (a ball): what leak_bound gives at ε = 0, as an enclosure rather than
/// an upper point.
arb_ball two_level_leak(std::size_t n, std::size_t t, const arb_ball& gamma, const arb_ball& beta,
                        const numeric::context& ctx) {
    const arb_ball rr =
        ball(rational(static_cast<long>(n - t), static_cast<long>(t)), ctx) * numeric::exp(-(beta * gamma));
    return rr / (numeric::one<arb_ball>(ctx) + rr);
}

/// W's columns [off, off + x.size()) times x, exactly.
vec<rational> block_times(const model::matrix<rational>& W, std::size_t off, const vec<rational>& x) {
    vec<rational> out(W.rows, rational(0));
    for (std::size_t r = 0; r < W.rows; ++r)
        for (std::size_t c = 0; c < x.size(); ++c) out[r] += W.at(r, off + c) * x[c];
    return out;
}

rational norm_sq(const vec<rational>& v) {
    rational s = 0;
    for (const auto& c : v) s += c * c;
    return s;
}

/// Certainly sqrt(w_sq) <= lip (sqrt(a_sq) + sqrt(b_sq)) (w_sq, a_sq, b_sq >= 0): exactly when
/// lip is an exact point (squaring twice), else in balls.
bool certainly_within(const rational& w_sq, const arb_ball& lip, const rational& a_sq,
                      const rational& b_sq, const numeric::context& ctx) {
    if (const auto l = numeric::exact_value(lip)) {
        // w <= l² (a + b) + 2 l² sqrt(a b), i.e. q <= 2 l² sqrt(a b) with q = w − l² (a + b).
        const rational l2 = *l * *l;
        const rational q = w_sq - l2 * (a_sq + b_sq);
        return q <= 0 || q * q <= 4 * l2 * l2 * a_sq * b_sq;
    }
    const arb_ball x = numeric::sqrt(arb_ball::from_rational(a_sq, ctx)) +
                       numeric::sqrt(arb_ball::from_rational(b_sq, ctx));
    const auto o = numeric::compare(arb_ball::from_rational(w_sq, ctx), lip * lip * x * x);
    return o == numeric::order::less || o == numeric::order::equal;
}

/// The state difference of layer k + 1 at its r-th computed row, whose input both models share,
/// against δ by the closed form (bound_check): `within` when proved, `contradicts` when the
/// measured enclosure `measured_sq` misses the closed form, else `undecided`.
closed_form closed_form_row(const bound_data& data, const gap_pass& hard, std::size_t k,
                            std::size_t r, const arb_ball& measured_sq,
                            const std::vector<arb_ball>& beta, const numeric::context& ctx) {
    const auto& ld = data.layers.at(k);
    if (!ld.update_w) return closed_form::undecided;
    const auto& W = *ld.update_w;
    const std::size_t n = data.n;
    const arb_ball one = numeric::one<arb_ball>(ctx);
    std::vector<arb_ball> diff(W.rows, zero_point(ctx.precision_bits));
    bool proved = true;
    for (std::size_t h = 0; h < ld.heads.size(); ++h) {
        const row_gap& row = hard.layers.at(k).heads.at(h).rows.at(r);
        if (row.mean_in_offset.empty()) return closed_form::undecided; // not two-level
        // ℓ: exactly r/(1 + r) on a two-level row, 0 where every key ties.
        const arb_ball leak = row.margin ? two_level_leak(n, row.maximal.size(),
                                                          row.margin->to_ball(ctx), beta.at(h), ctx)
                                         : zero_point(ctx.precision_bits);
        const vec<rational> a = block_times(W, ld.b_offset.at(h), row.mean_in_offset);
        vec<rational> e;
        if (!row.mean_out_offset.empty()) e = block_times(W, ld.b_offset[h], row.mean_out_offset);
        for (std::size_t c = 0; c < W.rows; ++c) {
            diff[c] = diff[c] + (one - leak) * arb_ball::from_rational(a[c], ctx);
            if (!e.empty()) diff[c] = diff[c] + leak * arb_ball::from_rational(e[c], ctx);
        }
        // Without ℓ: ||W_h a|| <= lip s_in' and ||W_h e|| <= lip (s_out + s_in'), s_in' = s_in
        // for unique-hard and 0 for average-hard (its tie term vanishes at ε = 0), give
        // ||W_h Δb_h|| <= (1 − ℓ) lip s_in' + ℓ lip (s_out + s_in') = lip (ℓ s_out + s_in'); both
        // below lip max(s_out, s_in) give the cap. ℓ <= its bound is the row check's.
        const arb_ball& lip = ld.lip_b.at(h);
        const rational& s_out = row.spread_out_sq;
        const rational s_in = data.average ? rational(0) : row.spread_in_sq;
        const rational& cap = row.spread_out_sq > row.spread_in_sq ? row.spread_out_sq : row.spread_in_sq;
        const rational zero = 0;
        const rational a_sq = norm_sq(a);
        proved = proved && certainly_within(a_sq, lip, s_in, zero, ctx) &&
                 certainly_within(a_sq, lip, cap, zero, ctx);
        if (!e.empty()) {
            const rational e_sq = norm_sq(e);
            proved = proved && certainly_within(e_sq, lip, s_out, s_in, ctx) &&
                     certainly_within(e_sq, lip, cap, zero, ctx);
        }
    }
    arb_ball closed_sq = zero_point(ctx.precision_bits);
    for (const auto& c : diff) closed_sq = closed_sq + c * c;
    if (!arb_overlaps(closed_sq.raw(), measured_sq.raw())) return closed_form::contradicts;
    return proved ? closed_form::within : closed_form::undecided;
}

} // namespace

bound_check check_against_bound(const bound_data& data, const gap_pass& hard,
                                const soft_observation& obs, const propagated& pr,
                                const std::vector<std::vector<arb_ball>>& beta,
                                const numeric::context& ctx) {
    const long prec = ctx.precision_bits;
    const std::size_t n = hard.y.front().size();
    bound_check c;
    c.max_leak = zero_point(prec);
    c.max_leak_bound = zero_point(prec);
    c.worst_row_bound = zero_point(prec);
    // Whether layers 1..k provably compute the same states in the soft and the hard model,
    // independently of the bound, decided exactly: on identical inputs the keys of T score
    // exactly alike, so the soft weights are equal on T, and where every value outside T equals
    // the hard head output b (spread_out = 0) and, for the unique-hard rule, every value in T
    // does too (spread_in = 0), the soft row is exactly b whatever the leak. Then the state
    // difference is exactly 0, which enclosures cannot show.
    bool identical = true;
    for (std::size_t k = 0; k < hard.layers.size(); ++k) {
        for (const auto& head : hard.layers[k].heads)
            for (const auto& row : head.rows)
                identical = identical && row.spread_out_sq == 0 && (hard.average || row.spread_in_sq == 0);
        for (std::size_t h = 0; h < hard.layers[k].heads.size(); ++h) {
            const auto& rows = hard.layers[k].heads[h].rows;
            for (std::size_t r = 0; r < rows.size(); ++r) {
                const auto& row = rows[r];
                std::optional<arb_ball> gamma;
                if (row.margin) gamma = row.margin->to_ball(ctx);
                const arb_ball bd =
                    leak_bound(n, row.maximal.size(), gamma, pr.head_eps[k][h], beta[k][h], ctx);
                const arb_ball& leak = obs.leak.at(k).at(h).at(r);
                ++c.rows;
                auto o = numeric::compare(leak, bd);
                if (row.two_level && is_zero(pr.head_eps[k][h]) && o == numeric::order::unknown) {
                    // The soft row has the hard scores and two levels: its leak is exactly
                    // r/(1+r). Only an enclosure of that value that misses the measured leak
                    // is a finding.
                    const arb_ball exact =
                        two_level_leak(n, row.maximal.size(), *gamma, beta[k][h], ctx);
                    o = arb_overlaps(exact.raw(), leak.raw()) ? numeric::order::equal
                                                              : numeric::compare(leak, exact);
                    if (o == numeric::order::less) o = numeric::order::greater; // a wrong leak
                }
                const numeric::uncertain<bool> within = numeric::is_less_or_equal(o);
                if (certainly(!within)) {
                    ++c.rows_above;
                    if (c.first_above.empty())
                        c.first_above = "layer " + std::to_string(k + 1) + " head " +
                                        std::to_string(h + 1) + " row " +
                                        std::to_string(row.position) + ": leak " +
                                        numeric::to_display_string(leak, 8) + " above its bound " +
                                        upper_decimal(bd, 8);
                } else if (!is_certain(within)) {
                    ++c.rows_undecided;
                } else {
                    ++c.rows_within;
                }
                if (numeric::compare(upper(leak), upper(c.max_leak)) == numeric::order::greater) {
                    c.max_leak = leak;
                    c.max_leak_bound = bd;
                }
                c.worst_row_bound = max_upper(c.worst_row_bound, bd);
            }
        }
        const arb_ball& dk = pr.delta.at(k);
        if (!finite(dk)) continue;
        if (numeric::compare(obs.state_diff_lower.at(k), dk) == numeric::order::greater) {
            ++c.layers_above;
            if (c.first_above.empty())
                c.first_above = "layer " + std::to_string(k + 1) + ": state difference at least " +
                                lower_decimal(obs.state_diff_lower[k], 8) + " above its bound " +
                                upper_decimal(dk, 8);
        } else if (numeric::compare(obs.state_diff_upper.at(k), dk) == numeric::order::greater &&
                   !identical) {
            // Row by row, and by the closed form where the enclosures cannot separate.
            const bool shared_input = k == 0 || is_zero(pr.delta.at(k - 1));
            bool undecided = false, above = false;
            const auto& sq = obs.row_diff_sq.at(k);
            const arb_ball dk_sq = dk * dk;
            for (std::size_t r = 0; r < sq.size(); ++r) {
                const auto o = numeric::compare(sq[r], dk_sq);
                if (o == numeric::order::less || o == numeric::order::equal) continue;
                const closed_form f =
                    o == numeric::order::greater ? closed_form::contradicts
                    : shared_input ? closed_form_row(data, hard, k, r, sq[r], beta[k], ctx)
                                   : closed_form::undecided;
                if (f == closed_form::within) continue;
                if (f == closed_form::undecided) {
                    undecided = true;
                } else {
                    ++c.layers_above;
                    above = true;
                    if (c.first_above.empty())
                        c.first_above =
                            "layer " + std::to_string(k + 1) + " row " +
                            std::to_string(hard.layers[k].heads.front().rows[r].position) +
                            (o == numeric::order::greater
                                 ? ": state difference above its bound " + upper_decimal(dk, 8)
                                 : ": the measured state difference misses its two-level closed "
                                   "form");
                    break;
                }
            }
            if (undecided && !above) ++c.layers_undecided;
        }
    }
    return c;
}

namespace {

void merge(bound_check& into, const bound_check& c) {
    if (numeric::compare(upper(c.max_leak), upper(into.max_leak)) == numeric::order::greater) {
        into.max_leak = c.max_leak;
        into.max_leak_bound = c.max_leak_bound;
    }
    into.worst_row_bound = max_upper(into.worst_row_bound, c.worst_row_bound);
    into.rows += c.rows;
    into.rows_within += c.rows_within;
    into.rows_undecided += c.rows_undecided;
    into.rows_above += c.rows_above;
    into.layers_above += c.layers_above;
    into.layers_undecided += c.layers_undecided;
    if (into.first_above.empty()) into.first_above = c.first_above;
}

} // namespace

simulate_row simulate_at(const model::model<rational>& hard, const std::vector<model::expr>& betas,
                         long n, const std::vector<std::string>& inputs,
                         const simulate_options& opt) {
    const numeric::context ctx{opt.precision};
    const long prec = ctx.precision_bits;
    model::check_length(hard, n);
    simulate_row row;
    row.n = n;
    row.inputs = inputs;
    std::vector<model::input_sequence> xs;
    std::vector<gap_pass> passes;
    for (const auto& w : inputs) {
        auto x = model::parse_input(hard, w);
        if (static_cast<long>(x.size()) != n)
            throw precondition_error("simulate_at: input '" + w + "' does not have length n - 1 = " +
                                        std::to_string(n - 1));
        passes.push_back(score_gaps(hard, x));
        add_to_summary(row.gaps, passes.back(), w);
        row.data.push_back(make_bound_data(hard, passes.back(), ctx));
        row.hard_decisions.push_back(row.data.back().readout.hard_decision);
        xs.push_back(std::move(x));
    }
    const std::size_t L = hard.layers.size();
    // One β measured at one stage: intervals, or balls at `bits`.
    auto measure = [&](const model::expr& beta, bool interval, long bits) {
        const numeric::context c{bits};
        const model::model<rational> soft = soft_counterpart(hard, beta);
        const auto b = betas_at(soft, n, c);
        simulate_beta_row br;
        br.beta_text = beta.text();
        br.beta_n = beta.eval<arb_ball>(1, n, c);
        br.interval = interval;
        br.precision = bits;
        br.leak.max_leak = zero_point(bits);
        br.leak.max_leak_bound = zero_point(bits);
        br.leak.worst_row_bound = zero_point(bits);
        br.state_measured.assign(L, zero_point(bits));
        br.state_measured_mid.assign(L, 0.0);
        br.state_bound.assign(L, zero_point(bits));
        br.margin_condition.assign(L, true);
        for (std::size_t t = 0; t < xs.size(); ++t) {
            const bound_data data = bits == prec ? row.data[t] : make_bound_data(hard, passes[t], c);
            const soft_observation obs = observe_soft(soft, xs[t], passes[t], c, interval);
            const propagated pr = propagate(data, b, c);
            merge(br.leak, check_against_bound(data, passes[t], obs, pr, b, c));
            for (std::size_t k = 0; k < L; ++k) {
                br.state_measured[k] = max_upper(br.state_measured[k], obs.state_diff_upper[k]);
                br.state_measured_mid[k] = std::max(br.state_measured_mid[k], obs.state_diff_mid[k]);
                br.state_bound[k] = max_upper(br.state_bound[k], pr.delta[k]);
                br.margin_condition[k] = br.margin_condition[k] && pr.margin_condition[k];
            }
            if (obs.soft_decision == "undecided")
                ++br.undecided;
            else if (obs.soft_decision == row.hard_decisions[t])
                ++br.agree;
            else
                ++br.disagree;
            if (pr.readout_certified) ++br.certified;
        }
        return br;
    };
    auto undecided_in = [](const simulate_beta_row& br) {
        return br.undecided + br.leak.rows_undecided + br.leak.layers_undecided > 0;
    };
    for (const auto& beta : betas) {
        simulate_beta_row br = measure(beta, opt.interval, prec);
        if (undecided_in(br) && opt.interval) br = measure(beta, false, prec);
        for (long bits = prec * 2; undecided_in(br) && bits <= opt.precision_cap; bits *= 2)
            br = measure(beta, false, bits);
        row.betas.push_back(std::move(br));
    }
    row.smallest_beta = smallest_certified_beta(row.data, ctx);
    return row;
}

} // namespace attnprop::analysis
