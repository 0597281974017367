#pragma once
// Template bodies of hard.hpp.

namespace attnprop::attention {

template <numeric::Scalar S>
std::vector<S> hard_scores(const model::head<S>& h, const vec<S>& yi,
                           const std::vector<vec<S>>& keys_or_states, bool dot,
                           const numeric::context& ctx, std::size_t end) {
    end = std::min(end, keys_or_states.size());
    std::vector<S> s;
    s.reserve(end);
    if (dot) {
        vec<S> q = query(h, yi, ctx);
        for (std::size_t j = 0; j < end; ++j)
            s.push_back(model::dot(q.data(), keys_or_states[j].data(), q.size(), ctx));
    } else {
        for (std::size_t j = 0; j < end; ++j) s.push_back(map_score(h, yi, keys_or_states[j], ctx));
    }
    return s;
}

template <numeric::Scalar S>
hard_output<S> hard_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, bool with_trace) {
    hard_options opt;
    opt.trace = with_trace;
    no_observer none;
    return hard_forward(m, x, ctx, opt, none);
}

template <numeric::Scalar S, class Observer>
hard_output<S> hard_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, const hard_options& opt,
                            [[maybe_unused]] Observer& obs) {
    using score_kind = typename model::score_spec<S>::kind;
    hard_output<S> out;
    const bool with_trace = opt.trace;
    const std::size_t n = x.size();
    const std::size_t L = m.layers.size();
    std::vector<vec<S>> y = initial_states(m, x, ctx);
    if constexpr (Observer::active) obs.initial(y);
    if (with_trace) {
        out.trace.emplace();
        out.trace->y.push_back(y);
    }
    // The kind's tie rule: every maximal key, or the leftmost one (a normaliser's model read by
    // its maximal scores takes the leftmost, as unique-hard attention does).
    bool average = false;
    switch (model::info(m.attention).ties) {
    case model::tie_rule::leftmost: average = false; break;
    case model::tie_rule::average: average = true; break;
    case model::tie_rule::none: average = false; break;
    }
    for (std::size_t k = 1; k <= L; ++k) {
        const auto& lay = m.layers[k - 1];
        const bool all_rows = with_trace || opt.all_rows || k < L;
        const std::size_t first = all_rows ? 0 : n - 1;
        const std::size_t H = lay.heads.size();
        // Where an undefined value would be met (located on the way out).
        std::size_t at_pos = 0, at_head = 0;
        const char* at_node = nullptr;
        // Keys (dot heads) for every position; value vectors are computed on demand.
        std::vector<std::vector<vec<S>>> keys(H);
        std::vector<std::vector<std::optional<vec<S>>>> values(H,
                                                               std::vector<std::optional<vec<S>>>(n));
        std::vector<vec<S>> next(n);
        std::vector<std::vector<std::size_t>> choices(n, std::vector<std::size_t>(H, 0));
        std::vector<std::vector<std::vector<std::size_t>>> ties;
        if (average && with_trace) ties.assign(n, std::vector<std::vector<std::size_t>>(H));
        try {
            at_node = "key";
            for (std::size_t h = 0; h < H; ++h) {
                const auto& hd = lay.heads[h];
                at_head = h + 1;
                if (opt.all_values) {
                    at_node = "value";
                    for (std::size_t j = 0; j < n; ++j) {
                        at_pos = j + 1;
                        values[h][j] = value(hd, y[j], ctx);
                    }
                    at_node = "key";
                }
                if (hd.score.type == score_kind::dot && !constant_scores(hd)) {
                    keys[h].reserve(n);
                    for (std::size_t j = 0; j < n; ++j) {
                        at_pos = j + 1;
                        keys[h].push_back(key(hd, y[j], ctx));
                    }
                }
            }
            if constexpr (Observer::active)
                obs.layer(hard_layer_view<S>{k, &y, &keys, &values});
            // Row i attends to the keys [0, end): every key, or j <= i under a causal mask
            // (docs/architecture.md, "The per-layer mask").
            for (std::size_t i = first; i < n; ++i) {
                const std::size_t end = model::key_end(lay.mask, i, n);
                try {
                    std::vector<vec<S>> b(H);
                    for (std::size_t h = 0; h < H; ++h) {
                        const auto& hd = lay.heads[h];
                        at_pos = i + 1;
                        at_head = h + 1;
                        at_node = "score";
                        std::size_t jstar = 0; // constant scores: every key ties, the leftmost wins
                        std::vector<std::size_t> tied; // average-hard: every maximal key
                        std::vector<S> s;              // the row's scores (when they vary)
                        if (average) {
                            if (constant_scores(hd)) {
                                tied.resize(end);
                                for (std::size_t j = 0; j < end; ++j) tied[j] = j;
                            } else {
                                const bool dot = hd.score.type == score_kind::dot;
                                s = hard_scores(hd, y[i], dot ? keys[h] : y, dot, ctx, end);
                                maximal_set_result a = maximal_positions(s);
                                if (!a.decided) {
                                    undecided_argmax u{k, i + 1, h + 1, {}};
                                    for (auto c : a.positions) u.candidates.push_back(c + 1);
                                    out.undecided = std::move(u);
                                    return out;
                                }
                                tied = std::move(a.positions);
                            }
                            jstar = tied.front();
                        } else if (!constant_scores(hd)) {
                            const bool dot = hd.score.type == score_kind::dot;
                            s = hard_scores(hd, y[i], dot ? keys[h] : y, dot, ctx, end);
                            argmax_result a = leftmost_argmax(s);
                            if (!a.decided) {
                                undecided_argmax u{k, i + 1, h + 1, {}};
                                for (auto c : a.candidates) u.candidates.push_back(c + 1);
                                out.undecided = std::move(u);
                                return out;
                            }
                            jstar = a.index;
                        }
                        choices[i][h] = jstar;
                        if (average) {
                            // Weight 1/t on each of the t maximal keys.
                            vec<S> acc;
                            for (std::size_t j : tied) {
                                if (!values[h][j]) {
                                    at_pos = j + 1;
                                    at_node = "value";
                                    values[h][j] = value(hd, y[j], ctx);
                                }
                                if (acc.empty())
                                    acc = *values[h][j];
                                else
                                    for (std::size_t c = 0; c < acc.size(); ++c) acc[c] += (*values[h][j])[c];
                            }
                            const S t = numeric::from_int<S>(static_cast<long>(tied.size()), ctx);
                            for (auto& c : acc) c = c / t;
                            b[h] = std::move(acc);
                            if constexpr (Observer::active)
                                obs.head_row(hard_head_row<S>{
                                    k, i, h, constant_scores(hd) ? nullptr : &s, &tied, &b[h]});
                            if (with_trace) ties[i][h] = std::move(tied);
                            continue;
                        }
                        if (!values[h][jstar]) {
                            at_pos = jstar + 1;
                            at_node = "value";
                            values[h][jstar] = value(hd, y[jstar], ctx);
                        }
                        b[h] = *values[h][jstar];
                        if constexpr (Observer::active) {
                            const std::vector<std::size_t> selected{jstar};
                            obs.head_row(hard_head_row<S>{
                                k, i, h, constant_scores(hd) ? nullptr : &s, &selected, &b[h]});
                        }
                    }
                    at_pos = i + 1;
                    at_head = 0;
                    at_node = "update";
                    next[i] = update(lay, y[i], b, ctx);
                    if constexpr (Observer::active) obs.row(k, i, next[i]);
                } catch (const numeric::undefined_error&) {
                    // A row of the last layer other than n is only traced: y_n^(L) does not
                    // read it, so it gets "no value" instead of making the output undefined.
                    auto nv = with_trace && k == L && i + 1 < n ? no_value<S>(m.d, ctx)
                                                                : std::nullopt;
                    if (!nv) throw;
                    next[i] = std::move(*nv);
                }
            }
        } catch (const numeric::undefined_error& e) {
            throw e.located(place(k, at_node, at_pos, at_head));
        }
        if (with_trace) {
            out.trace->choice.push_back(std::move(choices));
            if (average) out.trace->ties.push_back(std::move(ties));
            out.trace->y.push_back(next);
        }
        y = std::move(next);
    }
    out.y = std::move(y[n - 1]);
    return out;
}

} // namespace attnprop::attention
