#include "soft_hard/score_gaps.hpp"
#include "util/precondition.hpp"

#include <stdexcept>

namespace attnprop::analysis {

arb_ball surd::to_ball(const numeric::context& ctx) const {
    arb_ball x = arb_ball::from_rational(a, ctx);
    if (g != 1) x = x / numeric::sqrt(arb_ball::from_rational(g, ctx));
    return x;
}

std::string surd::to_string() const {
    std::string s = numeric::to_exact_string(a);
    if (g != 1 && a != 0) s += "/sqrt(" + numeric::to_exact_string(g) + ")";
    return s;
}

int compare(const surd& x, const surd& y) {
    const rational l = x.a * x.a * y.g;
    const rational r = y.a * y.a * x.g;
    return l < r ? -1 : (l > r ? 1 : 0);
}

namespace {

using score_kind = model::score_spec<rational>::kind;

rational norm_sq(const vec<rational>& v) {
    rational s = 0;
    for (const auto& c : v) s += c * c;
    return s;
}

rational distance_sq(const vec<rational>& a, const vec<rational>& b) {
    rational s = 0;
    for (std::size_t t = 0; t < a.size(); ++t) {
        const rational d = a[t] - b[t];
        s += d * d;
    }
    return s;
}

/// sum / count − b, exactly.
vec<rational> mean_minus(const vec<rational>& sum, std::size_t count, const vec<rational>& b) {
    const rational c(static_cast<long>(count));
    vec<rational> out(sum.size());
    for (std::size_t t = 0; t < sum.size(); ++t) out[t] = sum[t] / c - b[t];
    return out;
}

surd head_scale(const model::head<rational>& h) {
    if (h.score.type != score_kind::dot) return surd{1, 1};
    return surd{h.score.scale_factor, h.score.scale_inv_sqrt};
}

void keep_min(std::optional<surd>& best, const surd& s) {
    if (!best || compare(s, *best) < 0) best = s;
}

} // namespace

gap_pass score_gaps(const model::model<rational>& m, const model::input_sequence& x,
                    const gap_options& opt) {
    if (!model::info(m.attention).simulate_source)
        throw precondition_error("score gaps need a hard or average-hard model; " + m.name +
                                    " is " + model::to_string(m.attention));
    if (auto blockers = model::exact_blockers(m); !blockers.empty())
        throw numeric::numeric_error("the exact scalar cannot evaluate this model: " +
                                     blockers.front());
    const bool average = model::averages_ties(m.attention);
    const numeric::context ctx{64};
    const std::size_t n = x.size(), L = m.layers.size();
    gap_pass out;
    out.average = average;
    out.y.assign(L + 1, std::vector<std::optional<vec<rational>>>(n));
    std::vector<vec<rational>> cur = attention::initial_states(m, x, ctx);
    for (std::size_t j = 0; j < n; ++j) out.y[0][j] = cur[j];
    for (std::size_t k = 1; k <= L; ++k) {
        const auto& lay = m.layers[k - 1];
        const std::size_t H = lay.heads.size();
        const bool all_rows = k < L || opt.all_rows;
        const std::size_t first = all_rows ? 0 : n - 1;
        layer_gaps lg;
        lg.heads.resize(H);
        std::vector<std::vector<vec<rational>>> values(H), keys(H);
        // Where an undefined value would be met (located on the way out).
        std::size_t at_pos = 0, at_head = 0;
        const char* at_node = nullptr;
        std::vector<vec<rational>> next(n);
        try {
            for (std::size_t h = 0; h < H; ++h) {
                const auto& hd = lay.heads[h];
                head_gaps& hg = lg.heads[h];
                hg.scale = head_scale(hd);
                hg.dot = hd.score.type == score_kind::dot;
                hg.constant = attention::constant_scores(hd);
                at_head = h + 1;
                at_node = "value";
                values[h].reserve(n);
                for (std::size_t j = 0; j < n; ++j) {
                    at_pos = j + 1;
                    values[h].push_back(attention::value(hd, cur[j], ctx));
                }
                if (hg.dot) {
                    at_node = "key";
                    keys[h].reserve(n);
                    for (std::size_t j = 0; j < n; ++j) {
                        at_pos = j + 1;
                        keys[h].push_back(attention::key(hd, cur[j], ctx));
                        const rational ks = norm_sq(keys[h].back());
                        if (ks > hg.max_key_sq) hg.max_key_sq = ks;
                    }
                }
            }
            std::vector<rational> s(n);
            for (std::size_t i = first; i < n; ++i) {
                at_pos = i + 1;
                std::vector<vec<rational>> b(H);
                for (std::size_t h = 0; h < H; ++h) {
                    const auto& hd = lay.heads[h];
                    head_gaps& hg = lg.heads[h];
                    at_head = h + 1;
                    at_node = "score";
                    row_gap rg;
                    rg.position = i + 1;
                    if (hg.constant) {
                        // Every key ties (the kernels' shortcut): T is every position.
                        rg.maximal.resize(n);
                        for (std::size_t j = 0; j < n; ++j) rg.maximal[j] = j;
                        if (hg.dot) {
                            const rational qs = norm_sq(attention::query(hd, cur[i], ctx));
                            if (qs > hg.max_query_sq) hg.max_query_sq = qs;
                        }
                    } else {
                        if (hg.dot) {
                            const vec<rational> q = attention::query(hd, cur[i], ctx);
                            const rational qs = norm_sq(q);
                            if (qs > hg.max_query_sq) hg.max_query_sq = qs;
                            for (std::size_t j = 0; j < n; ++j)
                                s[j] = model::dot(q.data(), keys[h][j].data(), q.size(), ctx);
                        } else {
                            for (std::size_t j = 0; j < n; ++j)
                                s[j] = attention::map_score(hd, cur[i], cur[j], ctx);
                        }
                        std::size_t best = 0;
                        for (std::size_t j = 1; j < n; ++j)
                            if (s[j] > s[best]) best = j;
                        const rational& top = s[best];
                        std::optional<rational> below;
                        for (std::size_t j = 0; j < n; ++j) {
                            if (s[j] == top)
                                rg.maximal.push_back(j);
                            else if (!below || s[j] > *below)
                                below = s[j];
                        }
                        if (below) {
                            rg.margin = hg.scale.times(top - *below);
                            rg.two_level = true;
                            for (std::size_t j = 0; j < n && rg.two_level; ++j)
                                rg.two_level = s[j] == top || s[j] == *below;
                        }
                    }
                    // The hard head output and the spreads of the values around it.
                    vec<rational> bh;
                    if (average) {
                        bh.assign(values[h].front().size(), rational(0));
                        for (std::size_t j : rg.maximal)
                            for (std::size_t c = 0; c < bh.size(); ++c) bh[c] += values[h][j][c];
                        const rational t(static_cast<long>(rg.maximal.size()));
                        for (auto& c : bh) c /= t;
                    } else {
                        bh = values[h][rg.maximal.front()];
                    }
                    const bool closed_form = rg.two_level || !rg.margin;
                    vec<rational> sum_in, sum_out;
                    if (closed_form) {
                        sum_in.assign(bh.size(), rational(0));
                        sum_out.assign(bh.size(), rational(0));
                    }
                    std::size_t in_t = 0;
                    for (std::size_t j = 0; j < n; ++j) {
                        const bool in = in_t < rg.maximal.size() && rg.maximal[in_t] == j;
                        if (in) ++in_t;
                        const rational dsq = distance_sq(values[h][j], bh);
                        rational& target = in ? rg.spread_in_sq : rg.spread_out_sq;
                        if (dsq > target) target = dsq;
                        if (closed_form)
                            for (std::size_t c = 0; c < bh.size(); ++c)
                                (in ? sum_in : sum_out)[c] += values[h][j][c];
                    }
                    if (closed_form) {
                        const std::size_t t = rg.maximal.size();
                        rg.mean_in_offset = mean_minus(sum_in, t, bh);
                        if (t < n) rg.mean_out_offset = mean_minus(sum_out, n - t, bh);
                    }
                    if (rg.margin) keep_min(hg.min_margin, *rg.margin);
                    hg.max_ties = std::max(hg.max_ties, rg.maximal.size());
                    hg.rows.push_back(std::move(rg));
                    b[h] = std::move(bh);
                }
                at_head = 0;
                at_node = "update";
                next[i] = attention::update(lay, cur[i], b, ctx);
            }
        } catch (const numeric::undefined_error& e) {
            throw e.located(attention::place(k, at_node, at_pos, at_head));
        }
        for (const auto& hg : lg.heads) {
            if (hg.min_margin) keep_min(lg.min_margin, *hg.min_margin);
            lg.max_ties = std::max(lg.max_ties, hg.max_ties);
        }
        out.layers.push_back(std::move(lg));
        for (std::size_t i = first; i < n; ++i) out.y[k][i] = next[i];
        cur = std::move(next);
    }
    out.output = cur[n - 1];
    return out;
}

void add_to_summary(gap_summary& s, const gap_pass& p, const std::string& input) {
    if (s.layers.size() < p.layers.size()) s.layers.resize(p.layers.size());
    for (std::size_t k = 0; k < p.layers.size(); ++k) {
        const auto& lg = p.layers[k];
        auto& sl = s.layers[k];
        if (lg.min_margin && (!sl.min_margin || compare(*lg.min_margin, *sl.min_margin) < 0)) {
            sl.min_margin = lg.min_margin;
            sl.argmin_input = input;
        }
        sl.max_ties = std::max(sl.max_ties, lg.max_ties);
    }
    ++s.inputs;
}

} // namespace attnprop::analysis
