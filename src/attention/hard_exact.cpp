#include "attention/hard_exact.hpp"

#include "numeric/filter.hpp"

#include <algorithm>
#include <functional>
#include <map>

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
          choice_(L_), ties_(L_), exact_keys_(L_), average_(model::averages_ties(m.attention)) {}

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
        // Heads whose keys take few distinct exact values are decided per distinct key and
        // per distinct query state (distinct_plan) instead of per key position.
        std::vector<std::optional<distinct_plan>> plans(H);
        std::vector<std::size_t> qid; // exact state ids of layer k - 1, filled on first use
        if (n_ >= distinct_min_n)
            for (std::size_t h = 0; h < H; ++h)
                if (!constant_scores(lay.heads[h])) plans[h] = plan_distinct(k, h, qid);
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
                    std::vector<std::size_t> tied;
                    if (plans[h])
                        distinct_decision(k, i, h, keys[h], *plans[h], qid, end, &tied);
                    else
                        tied = maximal_set(k, i, h, keys[h], fast_keys[h], s, end);
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
                if (plans[h]) {
                    jstar = distinct_decision(k, i, h, keys[h], *plans[h], qid, end).jstar;
                } else if (!constant_scores(hd)) {
                    if (hd.score.type == score_kind::dot) {
                        jstar = filtered_dot_argmax(k, i, h, hd, y[i], keys[h], fast_keys[h],
                                                    s, end);
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
                                jstar = exact_argmax(k, i, h, a.candidates);
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
    std::size_t filtered_dot_argmax(std::size_t k, std::size_t i, std::size_t h,
                                    const model::head<interval>& hd, const vec<interval>& yq,
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
                jstar = exact_argmax(k, i, h, cand);
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
                    out = exact_maximal(k, i, h, a.positions);
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
                    out = exact_maximal(k, i, h, a.positions);
                    return true;
                }));
        }
        return a.decided ? std::move(a.positions) : out;
    }

    // Rows of a head whose keys take few distinct exact values (a small alphabet, states that
    // repeat: the random models of the property suites) are mostly exact ties, which the
    // interval filter cannot decide, and scanning every key per row made a pass O(n^2) in
    // interval and rational dot products. Positions with equal exact keys have equal scores in
    // every row, and rows with equal exact states (equal queries) and the same keys in reach
    // have the same decision: so such a head scores its distinct keys once per distinct
    // (query state, keys in reach), in intervals first and exactly where they overlap, and the
    // leftmost argmax is the first position of the leftmost maximal key (keys are numbered in
    // order of first appearance). The exact states of layer k - 1 at every position are the
    // price (O(n) updates), so it is tried from distinct_min_n on and kept only while the keys
    // stay few (distinct_max_share).
    static constexpr std::size_t distinct_min_n = 64;
    static constexpr std::size_t distinct_max_share = 4; // at most n / 4 distinct keys

    struct distinct_result {
        std::size_t rung = rung_tight;   // the rung that decided
        std::size_t jstar = 0;           // unique-hard: the leftmost maximal key position
        std::vector<std::size_t> ids;    // average-hard: the maximal key ids
    };

    struct distinct_plan {
        std::vector<std::size_t> kid;   // key id per position
        std::vector<std::size_t> first; // first position per key id (ascending)
        std::map<std::pair<std::size_t, std::size_t>, distinct_result> memo; // (query, reach)
    };

    std::optional<distinct_plan> plan_distinct(std::size_t k, std::size_t h,
                                               std::vector<std::size_t>& qid) {
        auto& layer_keys = exact_keys_[k - 1];
        if (!layer_keys.empty() && !layer_keys[h].index.empty()) return std::nullopt;
        distinct_plan p;
        p.kid.resize(n_);
        for (std::size_t j = 0; j < n_; ++j) {
            p.kid[j] = key_id(k, h, j);
            if (p.kid[j] == p.first.size()) p.first.push_back(j);
            if (p.first.size() * distinct_max_share > n_) return std::nullopt;
        }
        if (qid.empty()) {
            std::map<vec<rational>, std::size_t> ids;
            qid.resize(n_);
            for (std::size_t j = 0; j < n_; ++j)
                qid[j] = ids.try_emplace(exact_at(k - 1, j), ids.size()).first->second;
        }
        return p;
    }

    // Row i of head h in layer k by its plan: the keys in reach are the ids first met before
    // `end` (a prefix of the ids). Average-hard: `tied` gets every position before `end`
    // whose key is maximal, ascending.
    const distinct_result& distinct_decision(std::size_t k, std::size_t i, std::size_t h,
                                             const std::vector<vec<interval>>& keys,
                                             distinct_plan& p, const std::vector<std::size_t>& qid,
                                             std::size_t end,
                                             std::vector<std::size_t>* tied = nullptr) {
        const std::size_t reach = static_cast<std::size_t>(
            std::lower_bound(p.first.begin(), p.first.end(), end) - p.first.begin());
        auto [it, added] = p.memo.try_emplace({qid[i], reach});
        distinct_result& r = it->second;
        if (added) {
            const auto& hd = mi_.layers[k - 1].heads[h];
            const bool dot = hd.score.type == score_kind::dot;
            const auto& y = yi_[k - 1];
            vec<interval> q;
            if (dot) q = query(hd, y[i], ctx_);
            std::vector<interval> t;
            t.reserve(reach);
            for (std::size_t id = 0; id < reach; ++id)
                t.push_back(dot ? tight_dot(q, keys[p.first[id]])
                                : map_score(hd, y[i], y[p.first[id]], ctx_));
            std::vector<std::size_t> cand(reach);
            for (std::size_t id = 0; id < reach; ++id) cand[id] = id;
            bool decided = false;
            if (average_) {
                maximal_set_result a = maximal_positions(t);
                decided = a.decided;
                if (decided) r.ids = std::move(a.positions);
                else cand = std::move(a.positions);
            } else {
                argmax_result a = leftmost_argmax(t);
                decided = a.decided;
                if (decided) r.jstar = p.first[a.index];
                else cand = std::move(a.candidates);
            }
            if (!decided) {
                // Exact scores of the candidate keys (each a distinct key).
                r.rung = rung_exact;
                const auto& hde = m_.layers[k - 1].heads[h];
                const vec<rational>& yq = exact_at(k - 1, i);
                vec<rational> qe;
                if (dot) qe = query(hde, yq, ctx_);
                const exact_keys& e = exact_keys_[k - 1][h];
                std::vector<rational> se;
                se.reserve(cand.size());
                for (std::size_t id : cand) {
                    const vec<rational>& kk = *e.distinct[id];
                    se.push_back(dot ? model::dot(qe.data(), kk.data(), qe.size(), ctx_)
                                     : map_score(hde, yq, kk, ctx_));
                }
                std::size_t best = 0;
                for (std::size_t u = 1; u < se.size(); ++u)
                    if (se[u] > se[best]) best = u;
                if (average_) {
                    for (std::size_t u = 0; u < se.size(); ++u)
                        if (se[u] == se[best]) r.ids.push_back(cand[u]);
                } else {
                    r.jstar = p.first[cand[best]];
                }
            }
        }
        argmax_.attempted(rung_tight);
        if (r.rung == rung_exact) argmax_.attempted(rung_exact);
        argmax_.decided(r.rung);
        if (tied) {
            std::vector<bool> top(reach, false);
            for (std::size_t id : r.ids) top[id] = true;
            tied->clear();
            for (std::size_t j = 0; j < end; ++j)
                if (p.kid[j] < reach && top[p.kid[j]]) tied->push_back(j);
        }
        return r;
    }

    // The exact rationals behind the filter's undecided rows, per (layer, head): each key
    // position's exact key (a dot head's K y_j, a map head's y_j itself) computed once, not once
    // per row, and numbered by its value. Positions with equal keys have equal scores in every
    // row, so a row scores each distinct key once: the argmax rows the filter leaves undecided
    // are ties among equal states (equal symbols at equal positions of a periodic table, say),
    // which made the exact rung O(n) rational dot products per row.
    struct exact_keys {
        std::vector<std::size_t> id;                // per key position; `none` until computed
        std::vector<const vec<rational>*> distinct; // by id, pointing into `index`
        std::map<vec<rational>, std::size_t> index; // key value -> id
    };
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    // The id of key position j of head h in layer k (its exact key computed on first use).
    std::size_t key_id(std::size_t k, std::size_t h, std::size_t j) {
        auto& layer_keys = exact_keys_[k - 1];
        if (layer_keys.empty()) layer_keys.resize(m_.layers[k - 1].heads.size());
        exact_keys& e = layer_keys[h];
        if (e.id.empty()) e.id.assign(n_, none);
        if (e.id[j] != none) return e.id[j];
        const auto& hd = m_.layers[k - 1].heads[h];
        const vec<rational>& yk = exact_at(k - 1, j);
        vec<rational> kk = hd.score.type == model::score_spec<rational>::kind::dot
                               ? key(hd, yk, ctx_)
                               : yk;
        auto [it, added] = e.index.try_emplace(std::move(kk), e.distinct.size());
        if (added) e.distinct.push_back(&it->first);
        e.id[j] = it->second;
        return it->second;
    }

    // The exact scores of row i of head h in layer k against the distinct keys of `cand`, one
    // rational per distinct key (ids[t] indexes scores for cand[t]).
    void exact_scores(std::size_t k, std::size_t i, std::size_t h,
                      const std::vector<std::size_t>& cand, std::vector<std::size_t>& ids,
                      std::vector<rational>& scores) {
        const auto& hd = m_.layers[k - 1].heads[h];
        const bool dot = hd.score.type == model::score_spec<rational>::kind::dot;
        const vec<rational>& yq = exact_at(k - 1, i);
        ids.resize(cand.size());
        for (std::size_t t = 0; t < cand.size(); ++t) ids[t] = key_id(k, h, cand[t]);
        vec<rational> q;
        if (dot) q = query(hd, yq, ctx_);
        const exact_keys& e = exact_keys_[k - 1][h];
        std::map<std::size_t, std::size_t> slot; // key id -> index into scores
        scores.clear();
        for (auto& id : ids) {
            auto [it, added] = slot.try_emplace(id, scores.size());
            if (added) {
                const vec<rational>& kk = *e.distinct[id];
                scores.push_back(dot ? model::dot(q.data(), kk.data(), q.size(), ctx_)
                                     : map_score(hd, yq, kk, ctx_));
            }
            id = it->second;
        }
    }

    // The keys among `cand` whose exact score is maximal (cand contains every maximal key).
    std::vector<std::size_t> exact_maximal(std::size_t k, std::size_t i, std::size_t h,
                                           const std::vector<std::size_t>& cand) {
        std::vector<std::size_t> ids;
        std::vector<rational> s;
        exact_scores(k, i, h, cand, ids, s);
        std::size_t top = 0;
        for (std::size_t t = 1; t < s.size(); ++t)
            if (s[t] > s[top]) top = t;
        std::vector<std::size_t> out;
        for (std::size_t t = 0; t < cand.size(); ++t)
            if (s[ids[t]] == s[top]) out.push_back(cand[t]);
        return out;
    }

    // Decides the leftmost argmax exactly among the filter's candidates (which contain it).
    std::size_t exact_argmax(std::size_t k, std::size_t i, std::size_t h,
                             const std::vector<std::size_t>& cand) {
        std::vector<std::size_t> ids;
        std::vector<rational> s;
        exact_scores(k, i, h, cand, ids, s);
        std::size_t best = 0;
        for (std::size_t t = 1; t < cand.size(); ++t)
            if (s[ids[t]] > s[ids[best]]) best = t;
        return cand[best];
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
    std::vector<std::vector<exact_keys>> exact_keys_; // [k-1][h], filled on first use
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
