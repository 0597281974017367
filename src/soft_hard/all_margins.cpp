#include "soft_hard/all_margins.hpp"

#include "soft_influence/box_maps.hpp"
#include "soft_influence/norms.hpp"
#include "attention/common.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_set>

namespace attnprop::analysis {

namespace {

using score_kind = model::score_spec<rational>::kind;

/// One achievable score of one key: the symbol giving it and the value it carries.
struct option {
    rational score;
    int symbol = 0;
    std::size_t value = 0; ///< index into the head's distinct values
};

/// A head's scores at row n: per key (0-based j, n - 1 is eos) its options, sorted by score.
struct head_scores {
    std::vector<std::vector<option>> keys;
    std::vector<vec<rational>> values; ///< distinct value vectors
    std::vector<rational> lo;          ///< the lowest score of each key
    surd scale;
};

std::string input_text(const model::model<rational>& m, const std::vector<int>& x) {
    std::string s;
    for (int a : x) s += m.sigma.symbols[static_cast<std::size_t>(a)];
    return s;
}

/// The options of key j with the given score, if any.
const option* with_score(const head_scores& hs, std::size_t j, const rational& s) {
    for (const auto& o : hs.keys[j])
        if (o.score == s) return &o;
    return nullptr;
}

/// The keys sorted by their lowest score, highest first.
std::vector<std::size_t> by_lowest(const head_scores& hs) {
    std::vector<std::size_t> order(hs.keys.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return hs.lo[a] > hs.lo[b]; });
    return order;
}

/// The keys that block a margin M - m with keys top and second: every other key l whose
/// lowest score is above m and that cannot score M. At most two are returned; `gave_up` when
/// more than `limit` keys had to be looked at.
std::vector<std::size_t> blocking(const head_scores& hs, const std::vector<std::size_t>& order,
                                  std::size_t top, std::size_t second, const rational& M,
                                  const rational& m, bool& gave_up) {
    constexpr std::size_t limit = 512;
    std::vector<std::size_t> out;
    std::size_t seen = 0;
    for (std::size_t l : order) {
        if (!(hs.lo[l] > m)) break;
        if (l == top || l == second) continue;
        if (++seen > limit) {
            gave_up = true;
            return {};
        }
        if (!with_score(hs, l, M)) {
            out.push_back(l);
            if (out.size() == 2) break;
        }
    }
    return out;
}

/// The input attaining a margin (or a tie) of key `top` at M and `second` at m: the other keys
/// at their lowest score, or at M where that is above m.
std::vector<int> witness_input(const head_scores& hs, std::size_t n, std::size_t top, const rational& M,
                               std::size_t second, const rational& m) {
    std::vector<int> x(n - 1, 0);
    for (std::size_t j = 0; j + 1 < n; ++j) {
        const option* o = nullptr;
        if (j == top) o = with_score(hs, j, M);
        else if (j == second) o = with_score(hs, j, m);
        else if (hs.lo[j] <= m) o = &hs.keys[j].front();
        else o = with_score(hs, j, M);
        x[j] = o ? o->symbol : 0;
    }
    return x;
}

/// The smallest margin of one head over every input (docs/theory.md §4.5).
void smallest_margin(const model::model<rational>& mdl, const head_scores& hs, std::size_t head, head_margin& out,
                     bool skip_blocking, bool double_margin) {
    const std::size_t n = hs.keys.size();
    struct entry {
        rational score;
        std::size_t key;
    };
    std::vector<entry> all;
    for (std::size_t j = 0; j < n; ++j)
        for (const auto& o : hs.keys[j]) all.push_back({o.score, j});
    std::stable_sort(all.begin(), all.end(), [](const entry& a, const entry& b) { return a.score > b.score; });
    const std::vector<std::size_t> order = by_lowest(hs);
    std::optional<rational> best;
    std::size_t best_top = 0, best_second = 0;
    rational best_M, best_m;
    auto consider = [&](std::size_t top, const rational& M, std::size_t second, const rational& m) {
        const rational g = M - m;
        if (!best || g < *best) {
            best = g;
            best_top = top;
            best_second = second;
            best_M = M;
            best_m = m;
        }
    };
    for (std::size_t top = 0; top < n; ++top)
        for (const auto& o : hs.keys[top]) {
            const rational& M = o.score;
            // The first score strictly below M of another key.
            auto it = std::upper_bound(all.begin(), all.end(), M,
                                       [](const rational& v, const entry& e) { return v > e.score; });
            while (it != all.end() && it->key == top) ++it;
            if (it == all.end()) continue; // no other key can be below M
            bool gave_up = false;
            if (skip_blocking) {
                consider(top, M, it->key, it->score);
                continue;
            }
            const auto block = blocking(hs, order, top, it->key, M, it->score, gave_up);
            if (gave_up) {
                consider(top, M, it->key, it->score); // a lower bound: not shown attainable
                out.exact = false;
                continue;
            }
            if (block.empty()) {
                consider(top, M, it->key, it->score);
                continue;
            }
            if (block.size() >= 2) continue; // two keys stay above any lower m
            // The one blocking key k must itself be the second: its largest score below M.
            const std::size_t k = block.front();
            const option* cand = nullptr;
            for (const auto& ok : hs.keys[k])
                if (ok.score < M && (!cand || ok.score > cand->score)) cand = &ok;
            if (!cand) continue;
            bool gave_up2 = false;
            const auto block2 = blocking(hs, order, top, k, M, cand->score, gave_up2);
            if (gave_up2) out.exact = false;
            if (block2.empty()) consider(top, M, k, cand->score);
        }
    if (!best) return; // every key always ties (or one key only)
    out.gamma = hs.scale.times(double_margin ? *best * 2 : *best);
    margin_witness w;
    w.input = input_text(mdl, witness_input(hs, n, best_top, best_M, best_second, best_m));
    w.query = n;
    w.head = head;
    w.top = best_top + 1;
    w.second = best_second + 1;
    out.witness = w;
}

arb_ball value_diameter(const head_scores& hs, const numeric::context& ctx);

/// The readout's exact slack at a final state y: |w·y - t| (threshold), |map(y)_0| (map), half
/// the gap between the two largest logits (softmax; 0 on a tie).
rational exact_slack(const model::model<rational>& m, const vec<rational>& y, const numeric::context& ctx) {
    using rk = model::readout<rational>::kind;
    const auto& out = m.out;
    if (out.type == rk::threshold) {
        const rational v = model::dot(out.w_exact.data(), y.data(), y.size(), ctx) - out.t_exact;
        return v < 0 ? -v : v;
    }
    if (out.type == rk::map) {
        const rational v = model::evaluate(*out.fn, y, ctx).front();
        return v < 0 ? -v : v;
    }
    const vec<rational> z = model::apply_affine(out.logits, y, ctx);
    std::size_t top = 0;
    for (std::size_t s = 1; s < z.size(); ++s)
        if (z[s] > z[top]) top = s;
    std::optional<rational> second;
    for (std::size_t s = 0; s < z.size(); ++s)
        if (s != top && (!second || z[s] > *second)) second = z[s];
    return second ? (z[top] - *second) / 2 : rational(0);
}

/// A possible exact tie between two keys of different values (unique-hard), and the largest
/// spread of the values that can tie.
void ties(const model::model<rational>& mdl, const head_scores& hs, std::size_t head, head_margin& out,
          const numeric::context& ctx) {
    const std::size_t n = hs.keys.size();
    const std::vector<std::size_t> order = by_lowest(hs);
    std::map<rational, std::vector<std::pair<std::size_t, std::size_t>>> at; // score -> (key, value)
    for (std::size_t j = 0; j < n; ++j)
        for (const auto& o : hs.keys[j]) at[o.score].push_back({j, o.value});
    arb_ball spread = zero_point(ctx.precision_bits);
    for (const auto& [M, list] : at) {
        // Two entries of different keys and different values, in one pass.
        const auto& e0 = list.front();
        const std::pair<std::size_t, std::size_t>* e1 = nullptr;
        const std::pair<std::size_t, std::size_t>* e2 = nullptr;
        for (const auto& e : list) {
            if (!e1 && e.second != e0.second) e1 = &e;
            if (!e2 && e.first != e0.first) e2 = &e;
        }
        if (!e1 || !e2) continue;
        std::pair<std::size_t, std::size_t> a = e0, b = *e1;
        if (e1->first == e0.first) {
            if (e2->second != e0.second) b = *e2;
            else a = *e1, b = *e2;
        }
        // Every key outside the level must be able to stay at or below M.
        std::unordered_set<std::size_t> keys;
        for (const auto& e : list) keys.insert(e.first);
        bool feasible = true;
        for (std::size_t l : order) {
            if (!(hs.lo[l] > M)) break;
            if (!keys.count(l)) {
                feasible = false;
                break;
            }
        }
        if (!feasible) continue;
        // The spread of the values at this level: the diagonal of their box.
        std::unordered_set<std::size_t> vals;
        for (const auto& e : list) vals.insert(e.second);
        head_scores level;
        for (std::size_t v : vals) level.values.push_back(hs.values[v]);
        spread = max_upper(spread, value_diameter(level, ctx));
        if (!out.tie) {
            const std::size_t j1 = std::min(a.first, b.first), j2 = std::max(a.first, b.first);
            std::vector<int> x(n - 1, 0);
            for (std::size_t j = 0; j + 1 < n; ++j) {
                const option* o = hs.lo[j] > M ? with_score(hs, j, M) : &hs.keys[j].front();
                x[j] = o ? o->symbol : 0;
            }
            // The two tied keys at M with their two different values.
            for (const auto& e : {a, b})
                if (e.first + 1 < n)
                    for (const auto& o : hs.keys[e.first])
                        if (o.score == M && o.value == e.second) x[e.first] = o.symbol;
            margin_witness w;
            w.input = input_text(mdl, x);
            w.query = n;
            w.head = head;
            w.top = j1 + 1;
            w.second = j2 + 1;
            out.tie = w;
        }
    }
    out.spread_in = spread;
}

/// Upper point of the largest distance between two of the head's values: the diagonal of
/// their bounding box.
arb_ball value_diameter(const head_scores& hs, const numeric::context& ctx) {
    if (hs.values.empty()) return zero_point(ctx.precision_bits);
    rational s = 0;
    for (std::size_t c = 0; c < hs.values.front().size(); ++c) {
        rational lo = hs.values.front()[c], hi = lo;
        for (const auto& v : hs.values) {
            if (v[c] < lo) lo = v[c];
            if (v[c] > hi) hi = v[c];
        }
        s += (hi - lo) * (hi - lo);
    }
    if (s == 0) return zero_point(ctx.precision_bits);
    return upper(numeric::sqrt(arb_ball::from_rational(s, ctx)));
}

} // namespace

every_input_margins every_input_margins_at(const model::model<rational>& m, long n,
                                           const numeric::context& ctx, const margin_options& opt) {
    if (!model::info(m.attention).simulate_source)
        throw precondition_error("every-input margins need a hard or average-hard model; " + m.name + " is soft");
    if (n < 2) throw precondition_error("every-input margins need n >= 2, got " + std::to_string(n));
    every_input_margins out;
    out.n = n;
    out.slack = zero_point(ctx.precision_bits);
    if (m.layers.size() != 1) {
        out.reason = "margins over every input are decided for one-layer models (this one has " +
                     std::to_string(m.layers.size()) + " layers)";
        return out;
    }
    if (auto blockers = model::exact_blockers(m); !blockers.empty()) {
        out.reason = "the exact scalar cannot evaluate this model: " + blockers.front();
        return out;
    }
    if (model::any_masked(m)) {
        out.reason = "margins over every input are decided for unmasked layers (layer 1 is "
                     "causally masked)";
        return out;
    }
    model::check_length(m, n);
    const bool unique = model::info(m.attention).ties == model::tie_rule::leftmost;
    const std::size_t N = static_cast<std::size_t>(n), sig = m.sigma.symbols.size();
    const auto& lay = m.layers.front();
    const std::size_t H = lay.heads.size();
    // Every key's states: y_j^(0) for each symbol (eos at n).
    std::vector<std::vector<vec<rational>>> y0(N);
    for (std::size_t j = 0; j < N; ++j) {
        const bool eos = j + 1 == N;
        for (std::size_t a = 0; a < (eos ? 1 : sig); ++a)
            y0[j].push_back(attention::initial_state(m, eos ? m.sigma.eos_index() : static_cast<int>(a),
                                                     static_cast<long>(j + 1), n, ctx));
    }
    const vec<rational>& query = y0[N - 1].front();
    std::vector<head_scores> heads(H);
    for (std::size_t h = 0; h < H; ++h) {
        const auto& hd = lay.heads[h];
        head_scores& hs = heads[h];
        hs.scale = hd.score.type == score_kind::dot ? surd{hd.score.scale_factor, hd.score.scale_inv_sqrt} : surd{1, 1};
        if (hs.scale.a <= 0) {
            out.reason = "layer 1 head " + std::to_string(h + 1) + " has a score scale that is not positive";
            return out;
        }
        const bool constant = attention::constant_scores(hd);
        vec<rational> q;
        if (hd.score.type == score_kind::dot) q = attention::query(hd, query, ctx);
        std::map<vec<rational>, std::size_t> index;
        hs.keys.resize(N);
        for (std::size_t j = 0; j < N; ++j) {
            for (std::size_t a = 0; a < y0[j].size(); ++a) {
                option o;
                o.symbol = static_cast<int>(a);
                if (constant) o.score = 0;
                else if (hd.score.type == score_kind::dot) {
                    const vec<rational> k = attention::key(hd, y0[j][a], ctx);
                    o.score = model::dot(q.data(), k.data(), q.size(), ctx);
                } else {
                    o.score = attention::map_score(hd, query, y0[j][a], ctx);
                }
                const vec<rational> v = attention::value(hd, y0[j][a], ctx);
                auto [it, fresh] = index.emplace(v, hs.values.size());
                if (fresh) hs.values.push_back(v);
                o.value = it->second;
                hs.keys[j].push_back(o);
            }
            std::stable_sort(hs.keys[j].begin(), hs.keys[j].end(),
                             [](const option& x, const option& y) { return x.score < y.score; });
            hs.lo.push_back(hs.keys[j].front().score);
        }
        head_margin hm;
        smallest_margin(m, hs, h + 1, hm, opt.skip_blocking_for_testing, opt.double_margin_for_testing);
        ties(m, hs, h + 1, hm, ctx);
        hm.spread_out = value_diameter(hs, ctx);
        if (hm.gamma && (!out.gamma || compare(*hm.gamma, *out.gamma) < 0)) {
            out.gamma = hm.gamma;
            out.witness = hm.witness;
        }
        out.heads.push_back(std::move(hm));
    }
    // The readout's slack over every possible hard output.
    std::optional<rational> low, low_pos;
    auto consider_slack = [&](const rational& q, const std::string& input, std::size_t key) {
        if (!low || q < *low) {
            low = q;
            out.slack_input = input;
            out.slack_key = key;
        }
        if (q > 0 && (!low_pos || q < *low_pos)) {
            low_pos = q;
            out.slack_positive_input = input;
            out.slack_positive_key = key;
        }
    };
    // With one head whose maximal keys carry one value whenever they tie (always for
    // unique-hard, where the leftmost is taken), the hard output is the value of one key that
    // can be maximal: each is evaluated exactly.
    const bool single_valued = H == 1 && (unique || !out.heads.front().tie);
    if (single_valued) {
        const head_scores& hs = heads.front();
        // prefix[j] = max lowest score of keys < j, suffix[j] = of keys > j.
        std::vector<std::optional<rational>> prefix(N), suffix(N);
        for (std::size_t j = 1; j < N; ++j)
            prefix[j] = !prefix[j - 1] || hs.lo[j - 1] > *prefix[j - 1] ? hs.lo[j - 1] : *prefix[j - 1];
        for (std::size_t j = N - 1; j-- > 0;)
            suffix[j] = !suffix[j + 1] || hs.lo[j + 1] > *suffix[j + 1] ? hs.lo[j + 1] : *suffix[j + 1];
        for (std::size_t j = 0; j < N; ++j)
            for (const auto& o : hs.keys[j]) {
                // Key j at o.score is maximal (the leftmost, for unique-hard) when every earlier
                // key can be below it (at or below, for average-hard) and every later one at or
                // below it.
                if (prefix[j] && (unique ? !(*prefix[j] < o.score) : *prefix[j] > o.score)) continue;
                if (suffix[j] && !(*suffix[j] <= o.score)) continue;
                const vec<rational> y = attention::update(lay, query, {hs.values[o.value]}, ctx);
                std::vector<int> x(N - 1, 0);
                for (std::size_t l = 0; l + 1 < N; ++l) x[l] = l == j ? o.symbol : hs.keys[l].front().symbol;
                consider_slack(exact_slack(m, y, ctx), input_text(m, x), j + 1);
            }
        out.slack_exact = true;
    } else {
        // The head outputs' box (every value a key can carry; average-hard means lie in it),
        // the update on it, and the readout's distance from its decision boundary.
        using numeric::arb_ball;
        std::vector<arb_ball> box;
        for (const auto& v : query) box.push_back(arb_ball::from_rational(v, ctx));
        for (const auto& hs : heads)
            for (std::size_t c = 0; c < hs.values.front().size(); ++c) {
                arb_ball b = arb_ball::from_rational(hs.values.front()[c], ctx);
                for (const auto& v : hs.values) b = numeric::hull(b, arb_ball::from_rational(v[c], ctx));
                box.push_back(b);
            }
        boxes::box_diff<arb_ball> in;
        in.box = box;
        const auto yb = boxes::propagate(model::to_scalar<arb_ball>(m, ctx).layers.front().update, in, 1.0, ctx).box;
        arb_ball slack = zero_point(ctx.precision_bits);
        using rk = model::readout<rational>::kind;
        const auto mb = model::to_scalar<arb_ball>(m, ctx);
        if (m.out.type == rk::threshold || m.out.type == rk::map) {
            arb_ball v = numeric::zero<arb_ball>(ctx);
            if (m.out.type == rk::threshold) {
                for (std::size_t c = 0; c < yb.size(); ++c) v += arb_ball::from_rational(m.out.w_exact[c], ctx) * yb[c];
                v -= arb_ball::from_rational(m.out.t_exact, ctx);
            } else {
                boxes::box_diff<arb_ball> yin;
                yin.box = yb;
                v = boxes::propagate(*mb.out.fn, yin, 1.0, ctx).box.front();
            }
            if (numeric::sign(v, ctx) == numeric::order::greater || numeric::sign(v, ctx) == numeric::order::less)
                slack = lower(numeric::abs(v));
        } else {
            const auto z = model::apply_affine(mb.out.logits, yb, ctx);
            for (std::size_t r = 0; r < z.size(); ++r) {
                double gap = boxes::down(z[r]);
                for (std::size_t s2 = 0; s2 < z.size(); ++s2)
                    if (s2 != r) gap = std::min(gap, boxes::down(z[r]) - boxes::up(z[s2]));
                if (gap > 0) slack = lower(arb_ball::from_double(gap, ctx) / numeric::from_int<arb_ball>(2, ctx));
            }
        }
        out.slack = slack;
        if (numeric::sign(slack, ctx) == numeric::order::greater) out.slack_positive = slack;
    }
    out.slack_q = low;
    out.slack_positive_q = low_pos;
    if (low) {
        out.slack = arb_ball::from_rational(*low, ctx);
        out.on_threshold = *low == 0;
    }
    if (low_pos) out.slack_positive = arb_ball::from_rational(*low_pos, ctx);
    // The worst case of every input in the shape of one input's bound data.
    std::vector<int> any(N - 1, 0);
    model::input_sequence xs(any.begin(), any.end());
    xs.push_back(m.sigma.eos_index());
    out.data = make_bound_data(m, score_gaps(m, xs), ctx);
    for (std::size_t h = 0; h < H; ++h) {
        bound_group g;
        if (out.heads[h].gamma) g.gamma = out.heads[h].gamma->to_ball(ctx);
        g.t = out.heads[h].gamma ? 1 : N;
        g.spread_out = out.heads[h].spread_out;
        g.spread_in = out.heads[h].spread_in;
        out.data.layers.front().heads[h].groups = {g};
    }
    out.data.readout.slack = out.slack;
    out.data_off = out.data;
    out.data_off.readout.slack = out.slack_positive ? *out.slack_positive : zero_point(ctx.precision_bits);
    out.beta_every = smallest_certified_beta({out.data}, ctx);
    if (out.slack_positive) out.beta_off = smallest_certified_beta({out.data_off}, ctx);
    out.applies = true;
    return out;
}

bool certifies_every_input(const every_input_margins& e, const model::model<rational>& hard,
                           const model::expr& beta, bool off_threshold, const numeric::context& ctx) {
    if (!e.applies) return false;
    const auto b = betas_at(soft_counterpart(hard, beta), e.n, ctx);
    return propagate(off_threshold ? e.data_off : e.data, b, ctx).readout_certified;
}

} // namespace attnprop::analysis
