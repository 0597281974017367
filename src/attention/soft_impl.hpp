#pragma once
// Template bodies of soft.hpp.

namespace attnprop::attention {

namespace detail {

/// Small per-row memo of exp(s - shift) keyed by the exact representation of s. Paper
/// constructions on binary inputs produce a handful of distinct scores per row; random models
/// produce all-distinct ones, so the memo gives up after `limit` distinct values.
template <class S> class exp_memo {
public:
    explicit exp_memo(bool enabled) : enabled_(enabled) {}
    const S* find(const S& s) const {
        if (!enabled_) return nullptr;
        for (const auto& [key, val] : entries_)
            if (numeric::same_value(key, s)) return &val;
        return nullptr;
    }
    void add(const S& s, const S& e) {
        if (!enabled_) return;
        if (entries_.size() >= limit) {
            enabled_ = false;
            entries_.clear();
            return;
        }
        entries_.emplace_back(s, e);
    }

private:
    static constexpr std::size_t limit = 8;
    bool enabled_;
    std::vector<std::pair<S, S>> entries_;
};

} // namespace detail

template <numeric::Scalar S>
vec<S> mean_value(const std::vector<vec<S>>& values, const numeric::context& ctx) {
    const std::size_t dv = values.front().size();
    vec<S> acc(dv, numeric::zero<S>(ctx));
    for (const auto& v : values)
        for (std::size_t c = 0; c < dv; ++c) acc[c] += v[c];
    S n = numeric::from_int<S>(static_cast<long>(values.size()), ctx);
    for (auto& a : acc) a = a / n;
    return acc;
}

template <numeric::ExpScalar S>
vec<S> soft_row(const vec<S>& scaled_query, const std::vector<vec<S>>& keys,
                const std::vector<vec<S>>& values, const numeric::context& ctx, vec<S>* weights) {
    const std::size_t n = keys.size();
    const std::size_t dk = scaled_query.size();
    std::vector<S> s;
    s.reserve(n);
    for (const auto& k : keys) s.push_back(model::dot(scaled_query.data(), k.data(), dk, ctx));
    S shift = s.front();
    for (std::size_t j = 1; j < n; ++j)
        if (numeric::compare(s[j], shift) == numeric::order::greater) shift = s[j];
    shift = numeric::representative(shift);

    detail::exp_memo<S> memo(numeric::scalar_traits<S>::expensive_exp);
    const std::size_t dv = values.front().size();
    vec<S> num(dv, numeric::zero<S>(ctx));
    S den = numeric::zero<S>(ctx);
    std::vector<S> e;
    if (weights) e.reserve(n);
    for (std::size_t j = 0; j < n; ++j) {
        S ej;
        if (const S* hit = memo.find(s[j])) {
            ej = *hit;
        } else {
            ej = numeric::exp(s[j] - shift);
            memo.add(s[j], ej);
        }
        den += ej;
        for (std::size_t c = 0; c < dv; ++c) numeric::fma_acc(num[c], ej, values[j][c]);
        if (weights) e.push_back(std::move(ej));
    }
    for (auto& v : num) v = v / den;
    if (weights) {
        for (auto& w : e) w = w / den;
        *weights = std::move(e);
    }
    return num;
}

template <numeric::ExpScalar S>
soft_output<S> soft_forward(const model::model<S>& m, const input_sequence& x,
                            const numeric::context& ctx, soft_options opt) {
    using score_kind = typename model::score_spec<S>::kind;
    soft_output<S> out;
    const bool with_trace = opt.trace || opt.trace_weights;
    const std::size_t n = x.size();
    const std::size_t L = m.layers.size();
    std::vector<vec<S>> y = initial_states(m, x, ctx);
    if (with_trace) {
        out.trace.emplace();
        out.trace->y.push_back(y);
    }
    for (std::size_t k = 1; k <= L; ++k) {
        const auto& lay = m.layers[k - 1];
        const bool all_rows = with_trace || k < L;
        const std::size_t first = all_rows ? 0 : n - 1;
        const std::size_t H = lay.heads.size();
        std::vector<std::vector<vec<S>>> keys(H), values(H);
        std::vector<std::optional<vec<S>>> uniform(H);
        for (std::size_t h = 0; h < H; ++h) {
            const auto& hd = lay.heads[h];
            values[h].reserve(n);
            for (std::size_t j = 0; j < n; ++j) values[h].push_back(value(hd, y[j], ctx));
            if (constant_scores(hd)) {
                uniform[h] = mean_value(values[h], ctx);
            } else if (hd.score.type == score_kind::dot) {
                keys[h].reserve(n);
                for (std::size_t j = 0; j < n; ++j) keys[h].push_back(key(hd, y[j], ctx));
            }
        }
        std::vector<vec<S>> next(n);
        std::vector<std::vector<vec<S>>> layer_weights;
        if (opt.trace_weights) layer_weights.assign(n, std::vector<vec<S>>(H));
        for (std::size_t i = first; i < n; ++i) {
            std::vector<vec<S>> b(H);
            for (std::size_t h = 0; h < H; ++h) {
                const auto& hd = lay.heads[h];
                vec<S>* wout = opt.trace_weights ? &layer_weights[i][h] : nullptr;
                if (uniform[h]) {
                    b[h] = *uniform[h];
                    if (wout) {
                        S w = numeric::one<S>(ctx) / numeric::from_int<S>(static_cast<long>(n), ctx);
                        wout->assign(n, w);
                    }
                } else if (hd.score.type == score_kind::dot) {
                    vec<S> q = query(hd, y[i], ctx);
                    for (auto& c : q) c = c * *hd.score.scale;
                    b[h] = soft_row(q, keys[h], values[h], ctx, wout);
                } else {
                    // Arbitrary score map: scores are not dot products; softmax them directly.
                    std::vector<S> s;
                    s.reserve(n);
                    for (std::size_t j = 0; j < n; ++j) s.push_back(map_score(hd, y[i], y[j], ctx));
                    vec<S> w = softmax(s, ctx);
                    const std::size_t dv = values[h].front().size();
                    vec<S> acc(dv, numeric::zero<S>(ctx));
                    for (std::size_t j = 0; j < n; ++j)
                        for (std::size_t c = 0; c < dv; ++c) numeric::fma_acc(acc[c], w[j], values[h][j][c]);
                    b[h] = std::move(acc);
                    if (wout) *wout = std::move(w);
                }
            }
            next[i] = update(lay, y[i], b, ctx);
        }
        if (with_trace) {
            out.trace->y.push_back(next);
            if (opt.trace_weights) out.trace->weights.push_back(std::move(layer_weights));
        }
        y = std::move(next);
    }
    out.y = std::move(y[n - 1]);
    return out;
}

} // namespace attnprop::attention
