#include "attention/hard_exact.hpp"

#include "numeric/filter.hpp"

#include <functional>

namespace attnprop::attention {

namespace {

using numeric::interval;

vec<interval> enclose(const vec<rational>& v, const numeric::context& ctx) {
    return model::convert<interval>(v, ctx);
}

class filtered_pass {
public:
    filtered_pass(const model::model<rational>& m, const input_sequence& x,
                  const numeric::context& ctx)
        : m_(m), mi_(model::to_scalar<interval>(m, ctx)), x_(x), ctx_(ctx), n_(x.size()),
          L_(m.layers.size()), yi_(L_ + 1), ye_(L_ + 1, std::vector<std::optional<vec<rational>>>(n_)),
          choice_(L_), ties_(L_), average_(model::averages_ties(m.attention)) {}

    exact_hard_output run(bool with_trace) {
        exact_hard_output out;
        yi_[0] = initial_states(mi_, x_, ctx_);
        for (std::size_t k = 1; k <= L_; ++k) {
            try {
                layer(k, with_trace || k < L_);
            } catch (const numeric::undefined_error& e) {
                throw e.located(place(k));
            }
        }
        out.y = exact_at(L_, n_ - 1);
        if (with_trace) {
            hard_trace<rational> t;
            for (std::size_t k = 0; k <= L_; ++k) {
                std::vector<vec<rational>> row;
                for (std::size_t j = 0; j < n_; ++j) row.push_back(exact_at(k, j));
                t.y.push_back(std::move(row));
            }
            t.choice = choice_;
            if (average_) t.ties = ties_;
            out.trace = std::move(t);
        }
        out.stats = stats_;
        out.stats.argmax = argmax_;
        out.stats.rows_filtered = argmax_.decisions(rung_midpoint, rung_exact);
        out.stats.rows_exact = argmax_.decisions(rung_exact);
        return out;
    }

private:
    using score_kind = model::score_spec<interval>::kind;

    // The rungs of the argmax filter (numeric/filter.hpp; exact_path_stats::argmax counts them).
    static constexpr std::size_t rung_midpoint = 0; // midpoint-radius intervals of every score
    static constexpr std::size_t rung_outward = 1;  // outward-rounded intervals of every score
    static constexpr std::size_t rung_tight = 2;    // term-by-term intervals of the candidates
    static constexpr std::size_t rung_exact = 3;    // exact rationals of the candidates

    void layer(std::size_t k, bool all_rows) {
        const auto& lay = mi_.layers[k - 1];
        const auto& laye = m_.layers[k - 1];
        const std::size_t H = lay.heads.size();
        const auto& y = yi_[k - 1];
        // Keys of dot heads, as intervals (for the tight second stage) and in midpoint-radius
        // form (for the cheap first stage).
        std::vector<std::vector<vec<interval>>> keys(H);
        std::vector<numeric::dot_rows> fast_keys(H);
        for (std::size_t h = 0; h < H; ++h) {
            const auto& hd = lay.heads[h];
            if (hd.score.type == score_kind::dot && !constant_scores(hd)) {
                keys[h].reserve(n_);
                for (std::size_t j = 0; j < n_; ++j) keys[h].push_back(key(hd, y[j], ctx_));
                fast_keys[h] = numeric::dot_rows(hd.score.K.out_dim());
                fast_keys[h].reserve(n_);
                for (std::size_t j = 0; j < n_; ++j) fast_keys[h].push_back(keys[h][j].data());
            }
        }
        // Value vectors on demand, once per (head, key position).
        std::vector<std::vector<std::optional<vec<interval>>>> values(
            H, std::vector<std::optional<vec<interval>>>(n_));
        choice_[k - 1].assign(n_, std::vector<std::size_t>(H, 0));
        if (average_) ties_[k - 1].assign(n_, std::vector<std::vector<std::size_t>>(H));
        yi_[k].assign(n_, {});
        std::vector<interval> s;
        const std::size_t first = all_rows ? 0 : n_ - 1;
        for (std::size_t i = first; i < n_; ++i) {
            // Row i's keys [0, end): every key, or j <= i under a causal mask.
            const std::size_t end = model::key_end(lay.mask, i, n_);
            std::vector<vec<interval>> b(H);
            for (std::size_t h = 0; h < H; ++h) {
                const auto& hd = lay.heads[h];
                if (average_) {
                    std::vector<std::size_t> tied =
                        maximal_set(k, i, h, keys[h], fast_keys[h], s, end);
                    choice_[k - 1][i][h] = tied.front();
                    vec<interval> acc;
                    for (std::size_t j : tied) {
                        if (!values[h][j]) values[h][j] = value(hd, y[j], ctx_);
                        if (acc.empty())
                            acc = *values[h][j];
                        else
                            for (std::size_t c = 0; c < acc.size(); ++c) acc[c] += (*values[h][j])[c];
                    }
                    const interval t(static_cast<double>(tied.size()));
                    for (auto& c : acc) c = c / t;
                    b[h] = std::move(acc);
                    ties_[k - 1][i][h] = std::move(tied);
                    continue;
                }
                std::size_t jstar = 0;
                if (!constant_scores(hd)) {
                    if (hd.score.type == score_kind::dot) {
                        jstar = filtered_dot_argmax(k, i, hd, laye.heads[h], y[i], keys[h],
                                                    fast_keys[h], s, end);
                    } else {
                        argmax_result a;
                        numeric::filter_cascade(
                            &argmax_, numeric::at_rung(rung_outward, [&] {
                                s = hard_scores(hd, y[i], y, false, ctx_, end);
                                a = leftmost_argmax(s);
                                jstar = a.index;
                                return a.decided;
                            }),
                            numeric::at_rung(rung_exact, [&] {
                                jstar = exact_argmax(k, i, laye.heads[h], a.candidates);
                                return true;
                            }));
                    }
                }
                choice_[k - 1][i][h] = jstar;
                if (!values[h][jstar]) values[h][jstar] = value(hd, y[jstar], ctx_);
                b[h] = *values[h][jstar];
            }
            yi_[k][i] = update(lay, y[i], b, ctx_);
        }
    }

    // The leftmost argmax of q . k_j, filtered. Rung 1 encloses every score cheaply (a double
    // dot product of midpoints plus a radius from norms): numeric::dot_argmax decides when one
    // score is certainly above all others; rung 2 encloses every score outward
    // (numeric::dot_all) for the candidate scan of leftmost_argmax. If that cannot decide,
    // rung 3 recomputes the candidates' scores with interval operations term by term
    // (tight_dot), which keep exact points exact (integer ties are decided there). The true
    // leftmost argmax j* is among the candidates and is also the leftmost argmax of the
    // candidates' scores alone (it attains their maximum, and no candidate left of it does), so
    // a later rung may work on the candidates only. Candidates rung 3 leaves undecided go to
    // exact rationals (exact_argmax).
    std::size_t filtered_dot_argmax(std::size_t k, std::size_t i, const model::head<interval>& hd,
                                    const model::head<rational>& hde, const vec<interval>& yq,
                                    const std::vector<vec<interval>>& keys,
                                    const numeric::dot_rows& fast_keys, std::vector<interval>& s,
                                    std::size_t end) {
        const vec<interval> q = query(hd, yq, ctx_);
        std::size_t jstar = 0;
        argmax_result a;
        std::vector<std::size_t> cand;
        numeric::filter_cascade(
            &argmax_, numeric::at_rung(rung_midpoint, [&] {
                jstar = numeric::dot_argmax(q.data(), fast_keys, end);
                return jstar < end;
            }),
            numeric::at_rung(rung_outward, [&] {
                s.resize(end);
                numeric::dot_all(q.data(), fast_keys, s.data(), end);
                a = leftmost_argmax(s);
                jstar = a.index;
                return a.decided;
            }),
            numeric::at_rung(rung_tight, [&] {
                std::vector<interval> t;
                t.reserve(a.candidates.size());
                for (std::size_t c : a.candidates)
                    t.push_back(tight_dot(q, keys[c]));
                argmax_result b = leftmost_argmax(t);
                if (b.decided) {
                    jstar = a.candidates[b.index];
                    return true;
                }
                for (std::size_t c : b.candidates) cand.push_back(a.candidates[c]);
                return false;
            }),
            numeric::at_rung(rung_exact, [&] {
                jstar = exact_argmax(k, i, hde, cand);
                return true;
            }));
        return jstar;
    }

    // q . k by repeated fma_acc: every operation rounded outward on its own (tighter than
    // numeric::dot_acc's single error bound for non-point data; exact points stay points).
    static interval tight_dot(const vec<interval>& q, const vec<interval>& k) {
        interval acc(0.0);
        for (std::size_t t = 0; t < q.size(); ++t) numeric::fma_acc(acc, q[t], k[t]);
        return acc;
    }

    // Average-hard: every key attaining the maximal score of row i, head h of layer k. The
    // interval filter decides it when one key is certainly above the others or the tied
    // scores are equal points; otherwise its candidates (which contain every maximal key: any
    // other key is certainly below some candidate) go to exact rationals.
    std::vector<std::size_t> maximal_set(std::size_t k, std::size_t i, std::size_t h,
                                         const std::vector<vec<interval>>& keys,
                                         const numeric::dot_rows& fast_keys,
                                         std::vector<interval>& s, std::size_t end) {
        const auto& hd = mi_.layers[k - 1].heads[h];
        const auto& y = yi_[k - 1];
        if (constant_scores(hd)) {
            std::vector<std::size_t> all(end);
            for (std::size_t j = 0; j < end; ++j) all[j] = j;
            return all;
        }
        maximal_set_result a;
        std::vector<std::size_t> out;
        if (hd.score.type == score_kind::dot) {
            const vec<interval> q = query(hd, y[i], ctx_);
            numeric::filter_cascade(
                &argmax_, numeric::at_rung(rung_outward, [&] {
                    s.resize(end);
                    numeric::dot_all(q.data(), fast_keys, s.data(), end);
                    a = maximal_positions(s);
                    return a.decided;
                }),
                numeric::at_rung(rung_tight, [&] {
                    // Term-by-term interval products keep exact points exact, so integer ties
                    // are decided here.
                    std::vector<interval> t;
                    t.reserve(a.positions.size());
                    for (std::size_t c : a.positions) t.push_back(tight_dot(q, keys[c]));
                    maximal_set_result b = maximal_positions(t);
                    for (auto& c : b.positions) c = a.positions[c];
                    a = std::move(b);
                    return a.decided;
                }),
                numeric::at_rung(rung_exact, [&] {
                    out = exact_maximal(k, i, m_.layers[k - 1].heads[h], a.positions);
                    return true;
                }));
        } else {
            numeric::filter_cascade(
                &argmax_, numeric::at_rung(rung_outward, [&] {
                    s = hard_scores(hd, y[i], y, false, ctx_, end);
                    a = maximal_positions(s);
                    return a.decided;
                }),
                numeric::at_rung(rung_exact, [&] {
                    out = exact_maximal(k, i, m_.layers[k - 1].heads[h], a.positions);
                    return true;
                }));
        }
        return a.decided ? std::move(a.positions) : out;
    }

    // The keys among `cand` whose exact score is maximal (cand contains every maximal key).
    std::vector<std::size_t> exact_maximal(std::size_t k, std::size_t i,
                                           const model::head<rational>& hd,
                                           const std::vector<std::size_t>& cand) {
        const vec<rational>& yq = exact_at(k - 1, i);
        const bool dot = hd.score.type == model::score_spec<rational>::kind::dot;
        vec<rational> q;
        if (dot) q = query(hd, yq, ctx_);
        std::vector<rational> s;
        s.reserve(cand.size());
        for (std::size_t j : cand) {
            const vec<rational>& yk = exact_at(k - 1, j);
            if (dot) {
                vec<rational> kk = key(hd, yk, ctx_);
                s.push_back(model::dot(q.data(), kk.data(), q.size(), ctx_));
            } else {
                s.push_back(map_score(hd, yq, yk, ctx_));
            }
        }
        const maximal_set_result a = maximal_positions(s);
        std::vector<std::size_t> out;
        for (std::size_t t : a.positions) out.push_back(cand[t]);
        return out;
    }

    // Decides the leftmost argmax exactly among the filter's candidates (which contain it).
    std::size_t exact_argmax(std::size_t k, std::size_t i, const model::head<rational>& hd,
                             const std::vector<std::size_t>& cand) {
        const vec<rational>& yq = exact_at(k - 1, i);
        const bool dot = hd.score.type == model::score_spec<rational>::kind::dot;
        vec<rational> q;
        if (dot) q = query(hd, yq, ctx_);
        std::size_t best = cand.front();
        rational best_s;
        for (std::size_t t = 0; t < cand.size(); ++t) {
            const std::size_t j = cand[t];
            const vec<rational>& yk = exact_at(k - 1, j);
            rational s;
            if (dot) {
                vec<rational> kk = key(hd, yk, ctx_);
                s = model::dot(q.data(), kk.data(), q.size(), ctx_);
            } else {
                s = map_score(hd, yq, yk, ctx_);
            }
            if (t == 0 || s > best_s) {
                best = j;
                best_s = std::move(s);
            }
        }
        return best;
    }

    // Exact y_j^(k), from the already-decided choices; memoised. Tightens the filter value.
    // y_j^(k) needs y^(k-1) at j and at the positions its heads chose, so a recursion would go
    // one level deeper per layer: a model of many thousands of layers would overflow the
    // stack. The walk keeps its own stack of pending states instead, and computes them in the
    // order the recursion would (heads in order, each head's positions in order, then y_j^(k-1)),
    // so that the first undefined value met is the same.
    const vec<rational>& exact_at(std::size_t k, std::size_t j) {
        if (ye_[k][j]) return *ye_[k][j];
        struct pending {
            pending(std::size_t layer, std::size_t position) : k(layer), j(position) {}
            std::size_t k, j;
            std::size_t h = 0;               // next head
            std::size_t t = 0;               // next tied position of head h (average-hard)
            vec<rational> acc;               // the sum of head h's values so far (average-hard)
            std::vector<vec<rational>> b;    // the head outputs done
        };
        std::vector<pending> stack;
        stack.emplace_back(k, j);
        while (!stack.empty()) {
            pending& f = stack.back();
            if (f.k == 0) {
                finish(0, f.j,
                       initial_state(m_, x_[f.j], static_cast<long>(f.j + 1), static_cast<long>(n_), ctx_));
                stack.pop_back();
                continue;
            }
            // The exact state of layer f.k - 1 at position p, or nullptr while it is pending.
            auto below = [&](std::size_t p) -> const vec<rational>* {
                if (ye_[f.k - 1][p]) return &*ye_[f.k - 1][p];
                return nullptr;
            };
            const auto& lay = m_.layers[f.k - 1];
            std::optional<std::size_t> missing;
            while (f.h < lay.heads.size() && !missing) {
                const std::size_t h = f.h;
                if (average_) {
                    const auto& tied = ties_[f.k - 1][f.j][h];
                    while (f.t < tied.size()) {
                        const std::size_t jj = tied[f.t];
                        const vec<rational>* yv = below(jj);
                        if (!yv) {
                            missing = jj;
                            break;
                        }
                        vec<rational> vj;
                        try {
                            vj = value(lay.heads[h], *yv, ctx_);
                        } catch (const numeric::undefined_error& e) {
                            throw e.located(place(f.k, "value", jj + 1, h + 1));
                        }
                        if (f.acc.empty())
                            f.acc = std::move(vj);
                        else
                            for (std::size_t c = 0; c < f.acc.size(); ++c) f.acc[c] += vj[c];
                        ++f.t;
                    }
                    if (missing) break;
                    const rational t(static_cast<long>(tied.size()));
                    for (auto& c : f.acc) c /= t;
                    f.b.push_back(std::move(f.acc));
                    f.acc = {};
                    f.t = 0;
                    ++f.h;
                    continue;
                }
                const std::size_t jstar = choice_[f.k - 1][f.j][h];
                const vec<rational>* yv = below(jstar);
                if (!yv) {
                    missing = jstar;
                    break;
                }
                try {
                    f.b.push_back(value(lay.heads[h], *yv, ctx_));
                } catch (const numeric::undefined_error& e) {
                    throw e.located(place(f.k, "value", jstar + 1, h + 1));
                }
                ++f.h;
            }
            if (!missing) {
                const vec<rational>* yj = below(f.j);
                if (!yj) {
                    missing = f.j;
                } else {
                    vec<rational> v;
                    try {
                        v = update(lay, *yj, f.b, ctx_);
                    } catch (const numeric::undefined_error& e) {
                        throw e.located(place(f.k, "update", f.j + 1));
                    }
                    finish(f.k, f.j, std::move(v));
                    stack.pop_back();
                    continue;
                }
            }
            const std::size_t below_k = f.k - 1;
            stack.emplace_back(below_k, *missing); // invalidates f
        }
        return *ye_[k][j];
    }

    // Records the exact y_j^(k) and tightens the filter's value with it.
    void finish(std::size_t k, std::size_t j, vec<rational> v) {
        ++stats_.exact_states;
        if (!yi_[k].empty() && !yi_[k][j].empty()) yi_[k][j] = enclose(v, ctx_);
        ye_[k][j] = std::move(v);
    }

    const model::model<rational>& m_;
    model::model<interval> mi_;
    const input_sequence& x_;
    numeric::context ctx_;
    std::size_t n_;
    std::size_t L_;
    std::vector<std::vector<vec<interval>>> yi_;                     // filter values [k][j]
    std::vector<std::vector<std::optional<vec<rational>>>> ye_;      // exact values [k][j]
    std::vector<std::vector<std::vector<std::size_t>>> choice_;      // [k-1][j][h]
    std::vector<std::vector<std::vector<std::vector<std::size_t>>>> ties_; // average: [k-1][j][h]
    bool average_;
    exact_path_stats stats_;
    numeric::filter_stats argmax_{rung_exact + 1}; // the argmax filter's rungs
};

} // namespace

exact_hard_output hard_forward_exact(const model::model<rational>& m, const input_sequence& x,
                                     const numeric::context& ctx, bool with_trace) {
    model::require_exact(m, "the exact scalar cannot evaluate this model");
    filtered_pass pass(m, x, ctx);
    return pass.run(with_trace);
}

} // namespace attnprop::attention
