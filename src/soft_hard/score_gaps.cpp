#include "soft_hard/score_gaps.hpp"
#include "attention/hard.hpp"
#include "util/precondition.hpp"

#include <algorithm>
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

/// Reads the gaps of every computed row from the exact hard pass (attention::hard_forward's
/// observer): per layer the heads' scales and key norms, per row and head the maximal set T of
/// the row's scores, the margin, the spreads of the values around the head's output, and every
/// computed state.
class gap_observer {
public:
    static constexpr bool active = true;

    gap_observer(const model::model<rational>& m, gap_pass& out, const numeric::context& ctx)
        : m_(m), out_(out), ctx_(ctx) {}

    void initial(const std::vector<vec<rational>>& y0) {
        for (std::size_t j = 0; j < y0.size(); ++j) out_.y[0][j] = y0[j];
    }

    void layer(const attention::hard_layer_view<rational>& v) {
        finish();
        view_ = v;
        const auto& lay = m_.layers[v.layer - 1];
        lg_.emplace();
        lg_->heads.resize(lay.heads.size());
        for (std::size_t h = 0; h < lay.heads.size(); ++h) {
            const auto& hd = lay.heads[h];
            head_gaps& hg = lg_->heads[h];
            hg.scale = head_scale(hd);
            hg.dot = hd.score.type == score_kind::dot;
            hg.constant = attention::constant_scores(hd);
            if (!hg.dot) continue;
            // The pass keeps the keys of heads whose scores vary; a constant head's are formed
            // here (for its largest key norm).
            const auto& keys = (*v.keys)[h];
            for (std::size_t j = 0; j < v.y->size(); ++j) {
                const rational ks =
                    norm_sq(keys.empty() ? attention::key(hd, (*v.y)[j], ctx_) : keys[j]);
                if (ks > hg.max_key_sq) hg.max_key_sq = ks;
            }
        }
    }

    void head_row(const attention::hard_head_row<rational>& r) {
        const auto& hd = m_.layers[r.layer - 1].heads[r.head];
        head_gaps& hg = lg_->heads[r.head];
        const auto& y = *view_.y;
        const auto& values = (*view_.values)[r.head]; // every value: hard_options::all_values
        // The row's keys: every position, or j <= i under a causal mask.
        const std::size_t i = r.row;
        const std::size_t n = model::key_end(m_.layers[r.layer - 1].mask, i, y.size());
        row_gap rg;
        rg.position = i + 1;
        if (hg.dot) {
            const rational qs = norm_sq(attention::query(hd, y[i], ctx_));
            if (qs > hg.max_query_sq) hg.max_query_sq = qs;
        }
        if (!r.scores) {
            // Every key ties (the kernels' shortcut): T is every position.
            rg.maximal.resize(n);
            for (std::size_t j = 0; j < n; ++j) rg.maximal[j] = j;
        } else {
            const std::vector<rational>& s = *r.scores;
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
        // The hard head output (unique-hard: the value of the leftmost of T; average-hard: the
        // mean over T) and the spreads of the values around it.
        const vec<rational>& bh = *r.output;
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
            const vec<rational>& vj = *values[j];
            const rational dsq = distance_sq(vj, bh);
            rational& target = in ? rg.spread_in_sq : rg.spread_out_sq;
            if (dsq > target) target = dsq;
            if (closed_form)
                for (std::size_t c = 0; c < bh.size(); ++c) (in ? sum_in : sum_out)[c] += vj[c];
        }
        if (closed_form) {
            const std::size_t t = rg.maximal.size();
            rg.mean_in_offset = mean_minus(sum_in, t, bh);
            if (t < n) rg.mean_out_offset = mean_minus(sum_out, n - t, bh);
        }
        if (rg.margin) keep_min(hg.min_margin, *rg.margin);
        hg.max_ties = std::max(hg.max_ties, rg.maximal.size());
        hg.rows.push_back(std::move(rg));
    }

    void row(std::size_t k, std::size_t i, const vec<rational>& y) { out_.y[k][i] = y; }

    /// Closes the layer being read (after the pass, and before the next layer).
    void finish() {
        if (!lg_) return;
        for (const auto& hg : lg_->heads) {
            if (hg.min_margin) keep_min(lg_->min_margin, *hg.min_margin);
            lg_->max_ties = std::max(lg_->max_ties, hg.max_ties);
        }
        out_.layers.push_back(std::move(*lg_));
        lg_.reset();
    }

private:
    const model::model<rational>& m_;
    gap_pass& out_;
    numeric::context ctx_;
    attention::hard_layer_view<rational> view_;
    std::optional<layer_gaps> lg_;
};

} // namespace

gap_pass score_gaps(const model::model<rational>& m, const model::input_sequence& x,
                    const gap_options& opt) {
    if (!model::info(m.attention).simulate_source)
        throw precondition_error("score gaps need a hard or average-hard model; " + m.name +
                                    " is " + model::to_string(m.attention));
    model::require_exact(m, "the exact scalar cannot evaluate this model");
    const numeric::context ctx{64};
    const std::size_t n = x.size(), L = m.layers.size();
    gap_pass out;
    out.average = model::averages_ties(m.attention);
    out.y.assign(L + 1, std::vector<std::optional<vec<rational>>>(n));
    // The exact hard pass with every value at hand (the spreads read them all), every row of
    // layers 1 .. L - 1 and row n (every row with opt.all_rows) of layer L.
    attention::hard_options pass;
    pass.all_rows = opt.all_rows;
    pass.all_values = true;
    gap_observer gaps(m, out, ctx);
    attention::hard_output<rational> r = attention::hard_forward(m, x, ctx, pass, gaps);
    gaps.finish();
    if (r.undecided) // exact comparisons always decide
        throw std::logic_error("score_gaps: the exact hard pass left an argmax undecided");
    out.output = std::move(r.y);
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
