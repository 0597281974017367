#include "soft_influence/worst_case.hpp"

#include "soft_influence/influence.hpp"
#include "soft_influence/sweep.hpp"
#include "attention/common.hpp"
#include "attention/soft.hpp"
#include "attention/hard.hpp"
#include "attention/hard_exact.hpp"
#include "numeric/interrupt.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

namespace attnprop::analysis {

const char* to_string(search_objective o) {
    switch (o) {
    case search_objective::influence: return "influence";
    case search_objective::prob_change: return "prob-change";
    }
    return "?";
}

namespace {

/// splitmix64: a small generator whose stream is fixed by the standard arithmetic alone
/// (std distributions differ between libraries).
class stream {
public:
    explicit stream(std::uint64_t s) : s_(s) {}
    std::uint64_t next() {
        std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, k), k >= 1 (the modulo bias is below 2^-40 for the k used here).
    std::size_t below(std::size_t k) { return static_cast<std::size_t>(next() % k); }
    /// Uniform in [0, 1).
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t s_;
};

/// The best change of one profiled input, or nothing finite.
struct best_of_input {
    bool found = false;
    double value = 0;
    std::size_t position = 0;
    int replacement = 0;
};

class searcher {
public:
    searcher(const model::model<numeric::rational>& m, long n, const search_options& opt)
        : m_(m), md_(model::to_scalar<double>(m, ctx_)), n_(n), opt_(opt),
          sigma_(m.sigma.symbols.size()),
          rng_(opt.seed ^ (0xa0761d6478bd642fULL * static_cast<std::uint64_t>(n))) {
        res_.n = n;
        res_.seed = opt.seed;
    }

    search_result run() {
        if (sigma_ < 2) return res_; // no change of one symbol exists
        const std::size_t len = static_cast<std::size_t>(n_ - 1);
        // Exhaustive when the whole cube fits the budget: |Σ|^(n-1) <= budget.
        double cube = 1;
        for (std::size_t i = 0; i < len && cube <= static_cast<double>(opt_.budget); ++i)
            cube *= static_cast<double>(sigma_);
        if (cube <= static_cast<double>(opt_.budget)) {
            model::input_sequence x(len + 1, 0);
            x[len] = m_.sigma.eos_index();
            const auto total = static_cast<std::size_t>(cube);
            for (std::size_t k = 0; k < total; ++k) {
                if (numeric::stop_requested()) return res_;
                std::size_t v = k;
                for (std::size_t i = 0; i < len; ++i) {
                    x[i] = static_cast<int>(v % sigma_);
                    v /= sigma_;
                }
                evaluate(x);
            }
            res_.exhaustive = true;
            res_.restarts = 0;
            return res_;
        }
        // Restarts and local moves.
        model::input_sequence current = opt_.start ? *opt_.start : uniform();
        ++res_.restarts;
        best_of_input cur = evaluate(current);
        std::size_t stall = 0;
        const std::size_t patience = std::max<std::size_t>(4, std::min<std::size_t>(32, opt_.budget / 8));
        while (res_.evaluations < opt_.budget && !numeric::stop_requested()) {
            // A plateau at zero (no change at all near this input) gives the moves nothing to
            // climb: restart soon, so that the restarts' symbol counts cover the range.
            if (stall >= (cur.found && cur.value > 0 ? patience : 2) || !cur.found) {
                current = res_.restarts % 2 == 1 ? skewed() : uniform();
                ++res_.restarts;
                cur = evaluate(current);
                stall = 0;
                continue;
            }
            model::input_sequence next = move(current, cur);
            const best_of_input b = evaluate(next);
            if (b.found && b.value >= cur.value) {
                stall = b.value > cur.value ? 0 : stall + 1;
                current = std::move(next);
                cur = b;
            } else {
                ++stall;
            }
        }
        return res_;
    }

private:
    model::input_sequence uniform() {
        const std::size_t len = static_cast<std::size_t>(n_ - 1);
        model::input_sequence x(len + 1);
        for (std::size_t i = 0; i < len; ++i) x[i] = static_cast<int>(rng_.below(sigma_));
        x[len] = m_.sigma.eos_index();
        return x;
    }

    /// Symbols drawn with random frequencies: w_s = -log(u_s) normalised (a uniform point of
    /// the simplex), so every mix of counts is about equally likely.
    model::input_sequence skewed() {
        std::vector<double> w(sigma_);
        double total = 0;
        for (auto& v : w) total += v = -std::log(1.0 - rng_.unit());
        const std::size_t len = static_cast<std::size_t>(n_ - 1);
        model::input_sequence x(len + 1);
        for (std::size_t i = 0; i < len; ++i) {
            double u = rng_.unit() * total;
            std::size_t s = 0;
            while (s + 1 < sigma_ && u >= w[s]) u -= w[s++];
            x[i] = static_cast<int>(s);
        }
        x[len] = m_.sigma.eos_index();
        return x;
    }

    model::input_sequence move(const model::input_sequence& x, const best_of_input& b) {
        model::input_sequence y = x;
        const std::size_t len = y.size() - 1;
        const auto flip = [&](std::size_t i) {
            int a = static_cast<int>(rng_.below(sigma_ - 1));
            if (a >= y[i]) ++a;
            y[i] = a;
        };
        switch (rng_.below(6)) {
        case 0:
        case 4:
        case 5: // the best changed input itself: the steepest step (half of the moves)
            y[b.position] = b.replacement;
            break;
        case 1: { // one to three flips anywhere
            const std::size_t k = 1 + rng_.below(3);
            for (std::size_t t = 0; t < k; ++t) flip(rng_.below(len));
            break;
        }
        case 2: { // a flip at or next to the best change's position
            const long p = static_cast<long>(b.position) + static_cast<long>(rng_.below(3)) - 1;
            flip(static_cast<std::size_t>(std::clamp(p, 0L, static_cast<long>(len) - 1)));
            break;
        }
        default: // shift: swap two neighbours (a flip when they are equal)
            if (len >= 2) {
                const std::size_t i = rng_.below(len - 1);
                if (y[i] != y[i + 1]) {
                    std::swap(y[i], y[i + 1]);
                    break;
                }
            }
            flip(rng_.below(len));
        }
        return y;
    }

    best_of_input evaluate(const model::input_sequence& x) {
        ++res_.evaluations;
        best_of_input b;
        std::optional<influence_profile<double>> prof;
        try {
            prof = influence_profile_of(md_, m_, x, ctx_);
        } catch (const numeric::undefined_error& e) {
            if (!res_.undefined) {
                res_.undefined = e.message();
                res_.undefined_input = x;
            }
            return b;
        }
        for (const auto& pr : prof->pairs) {
            const double v = opt_.objective == search_objective::prob_change
                                 ? (pr.dp_max ? *pr.dp_max : std::nan(""))
                                 : pr.dy;
            if (!std::isfinite(v)) continue;
            if (!b.found || v > b.value) {
                b.found = true;
                b.value = v;
                b.position = pr.position;
                b.replacement = pr.replacement;
            }
        }
        if (b.found && (!res_.found || b.value > res_.value)) {
            res_.found = true;
            res_.value = b.value;
            res_.input = x;
            res_.position = b.position;
            res_.replacement = b.replacement;
            res_.found_at = res_.evaluations;
        }
        return b;
    }

    const model::model<numeric::rational>& m_;
    numeric::context ctx_{53};
    model::model<double> md_;
    long n_;
    search_options opt_;
    std::size_t sigma_;
    stream rng_;
    search_result res_;
};

/// The first place where double's hard pass differs from the exact one on x, or "".
std::string double_differs(const model::model<numeric::rational>& m, const model::model<double>& md,
                           const model::input_sequence& x, const numeric::context& ctx) {
    const auto ex = attention::hard_forward_exact(m, x, ctx, true);
    std::optional<attention::hard_output<double>> rd;
    try {
        rd = attention::hard_forward(md, x, ctx, true);
    } catch (const numeric::undefined_error& e) {
        return "double: " + e.message() + " where the exact value exists";
    }
    const auto& a = ex.trace->choice;
    const auto& b = rd->trace->choice;
    for (std::size_t k = 0; k < a.size() && k < b.size(); ++k)
        for (std::size_t i = 0; i < a[k].size() && i < b[k].size(); ++i)
            for (std::size_t h = 0; h < a[k][i].size() && h < b[k][i].size(); ++h)
                if (a[k][i][h] != b[k][i][h])
                    return "layer " + std::to_string(k + 1) + ", position " + std::to_string(i + 1) +
                           ", head " + std::to_string(h + 1) + ": exact selects " +
                           std::to_string(a[k][i][h] + 1) + ", double " + std::to_string(b[k][i][h] + 1);
    if (m.out.is_recognizer()) {
        const auto ve = attention::recognize(m.out, ex.y, ctx);
        const auto vd = attention::recognize(md.out, rd->y, ctx);
        if (ve != vd)
            return std::string("readout: exact ") + attention::to_string(ve) + ", double " +
                   attention::to_string(vd);
    }
    return {};
}

} // namespace

disagreement_result double_disagreement_search(const model::model<numeric::rational>& m, long n,
                                               const search_options& opt) {
    if (!model::info(m.attention).hard_limit)
        throw precondition_error("the double disagreement search needs a hard-attention model");
    if (n < 1) throw precondition_error("the double disagreement search needs n >= 1");
    if (opt.start && opt.start->size() != static_cast<std::size_t>(n))
        throw precondition_error("the search's start input has another length than n");
    model::check_length(m, n);
    const numeric::context ctx{53};
    const auto md = model::to_scalar<double>(m, ctx);
    const std::size_t sigma = m.sigma.symbols.size();
    const std::size_t len = static_cast<std::size_t>(n - 1);
    stream rng(opt.seed ^ (0x9fb21c651e98df25ULL * static_cast<std::uint64_t>(n)));
    disagreement_result res;
    res.n = n;
    const auto evaluate = [&](const model::input_sequence& x) {
        ++res.evaluations;
        try {
            const std::string d = double_differs(m, md, x, ctx);
            if (d.empty()) return false;
            res.found = true;
            res.input = x;
            res.where = d;
            res.found_at = res.evaluations;
            return true;
        } catch (const numeric::undefined_error& e) {
            if (!res.undefined) res.undefined = e.message();
            return false;
        }
    };
    model::input_sequence x(len + 1, 0);
    x[len] = m.sigma.eos_index();
    double cube = 1;
    for (std::size_t i = 0; i < len && cube <= static_cast<double>(opt.budget); ++i)
        cube *= static_cast<double>(sigma);
    if (cube <= static_cast<double>(opt.budget)) {
        const auto total = static_cast<std::size_t>(cube);
        for (std::size_t k = 0; k < total && !numeric::stop_requested(); ++k) {
            std::size_t v = k;
            for (std::size_t i = 0; i < len; ++i) {
                x[i] = static_cast<int>(v % sigma);
                v /= sigma;
            }
            if (evaluate(x)) return res;
        }
        res.exhaustive = !numeric::stop_requested();
        return res;
    }
    std::size_t restarts = 0;
    if (opt.start) {
        x = *opt.start;
    } else {
        for (std::size_t i = 0; i < len; ++i) x[i] = static_cast<int>(rng.below(sigma));
    }
    while (res.evaluations < opt.budget && !numeric::stop_requested()) {
        if (res.evaluations > 0 && res.evaluations % 4 == 0) {
            // A restart: uniform, or with random symbol frequencies.
            std::vector<double> w(sigma, 1.0);
            double total = static_cast<double>(sigma);
            if (restarts++ % 2 == 1) {
                total = 0;
                for (auto& v : w) total += v = -std::log(1.0 - rng.unit());
            }
            for (std::size_t i = 0; i < len; ++i) {
                double u = rng.unit() * total;
                std::size_t s2 = 0;
                while (s2 + 1 < sigma && u >= w[s2]) u -= w[s2++];
                x[i] = static_cast<int>(s2);
            }
        } else if (res.evaluations > 0 && len > 0 && sigma > 1) {
            const std::size_t k = 1 + rng.below(3);
            for (std::size_t t = 0; t < k; ++t) {
                const std::size_t i = rng.below(len);
                int a = static_cast<int>(rng.below(sigma - 1));
                if (a >= x[i]) ++a;
                x[i] = a;
            }
        }
        if (evaluate(x)) return res;
    }
    return res;
}

search_result worst_case_search(const model::model<numeric::rational>& m, long n,
                                const search_options& opt) {
    if (!model::info(m.attention).soft_influence)
        throw precondition_error("the worst-case search needs a soft-attention model");
    if (n < 2) throw precondition_error("the worst-case search needs n >= 2");
    if (opt.budget < 1) throw precondition_error("the search budget must be at least 1");
    if (opt.objective == search_objective::prob_change &&
        m.out.type != model::readout<numeric::rational>::kind::softmax)
        throw precondition_error("the probability change needs a softmax readout");
    if (opt.start && (opt.start->size() != static_cast<std::size_t>(n)))
        throw precondition_error("the search's start input has another length than n");
    model::check_length(m, n);
    return searcher(m, n, opt).run();
}

namespace {

/// One forced-bracket pair measured in double: its two inputs' cross-entropy (bits, summed)
/// and its |Δp|.
struct pair_value {
    double ce = 0;
    double eta = 0;
};

class forced_pair_searcher {
public:
    forced_pair_searcher(const model::model<numeric::rational>& m, long n,
                         const forced_pair_search_options& opt)
        : m_(m), md_(model::to_scalar<double>(m, ctx_)), n_(n), opt_(opt),
          rng_(opt.seed ^ (0x5851f42d4c957f2dULL * static_cast<std::uint64_t>(n))) {
        res_.n = n;
        res_.seed = opt.seed;
        open_[0] = m.sigma.index_of("(");
        open_[1] = m.sigma.index_of("[");
        close_[0] = m.sigma.index_of(")");
        close_[1] = m.sigma.index_of("]");
        const auto& outs = m.out.symbols;
        for (int t = 0; t < 2; ++t)
            out_[t] = static_cast<std::size_t>(
                std::find(outs.begin(), outs.end(), t == 0 ? ")" : "]") - outs.begin());
    }

    forced_pair_search_result run() {
        std::vector<forced_bracket_pair> cur;
        if (opt_.start) {
            for (const auto& x : *opt_.start) cur.push_back(*forced_pair_of(m_, x));
        } else {
            cur = random_set();
        }
        ++res_.restarts;
        double cur_margin = evaluate(cur);
        std::size_t stall = 0;
        const std::size_t patience = std::max<std::size_t>(8, std::min<std::size_t>(64, opt_.budget / 8));
        while (res_.evaluations < opt_.budget && !numeric::stop_requested()) {
            if (opt_.sample_only || stall >= patience || !std::isfinite(cur_margin)) {
                cur = random_set();
                ++res_.restarts;
                cur_margin = evaluate(cur);
                stall = 0;
                continue;
            }
            std::vector<forced_bracket_pair> next = cur;
            const std::size_t worst = worst_pair(cur);
            switch (rng_.below(4)) {
            case 0: // change the worst pair
                next[worst] = changed(cur[worst]);
                break;
            case 1: // change a random pair
            {
                const std::size_t k = rng_.below(cur.size());
                next[k] = changed(cur[k]);
                break;
            }
            case 2: // the worst pair replaced by a changed copy of the best one
                next[worst] = changed(cur[best_pair(cur)]);
                break;
            default: // the worst pair replaced by a new random pair
                next[worst] = random_pair();
            }
            const double v = evaluate(next);
            if (std::isfinite(v) && v <= cur_margin) {
                stall = v < cur_margin ? 0 : stall + 1;
                cur = std::move(next);
                cur_margin = v;
            } else {
                ++stall;
            }
        }
        return res_;
    }

private:
    /// A forced-bracket pair drawn as the property draws them (forced_pair), from the stream.
    forced_bracket_pair random_pair() { return forced_pair(m_, n_, 0, rng_.next()); }

    std::vector<forced_bracket_pair> random_set() {
        std::vector<forced_bracket_pair> s;
        for (std::size_t k = 0; k < opt_.pairs; ++k) s.push_back(random_pair());
        return s;
    }

    /// The pair with the largest cross-entropy (ties: the first).
    std::size_t worst_pair(const std::vector<forced_bracket_pair>& s) {
        std::size_t w = 0;
        double wv = -1;
        for (std::size_t k = 0; k < s.size(); ++k)
            if (const double v = value_of(s[k]).ce; !(v <= wv)) {
                w = k;
                wv = v;
            }
        return w;
    }

    /// The pair with the smallest cross-entropy.
    std::size_t best_pair(const std::vector<forced_bracket_pair>& s) {
        std::size_t b = 0;
        double bv = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < s.size(); ++k)
            if (const double v = value_of(s[k]).ce; v < bv) {
                b = k;
                bv = v;
            }
        return b;
    }

    /// A random balanced word of `len` (even) symbols written at x[from..from+len).
    void balanced(model::input_sequence& x, std::size_t from, std::size_t len) {
        std::vector<int> stack;
        for (std::size_t t = 0; t < len; ++t) {
            const std::size_t left = len - t;
            const bool opens = stack.empty() || (stack.size() < left && rng_.below(2) == 0);
            if (opens) {
                const int type = static_cast<int>(rng_.below(2));
                stack.push_back(type);
                x[from + t] = open_[type];
            } else {
                x[from + t] = close_[stack.back()];
                stack.pop_back();
            }
        }
    }

    /// A random 2DYCK prefix (balanced or not) of `len` symbols at x[0..len).
    void any_prefix(model::input_sequence& x, std::size_t len) {
        std::vector<int> stack;
        for (std::size_t t = 0; t < len; ++t) {
            if (stack.empty() || rng_.below(2) == 0) {
                const int type = static_cast<int>(rng_.below(2));
                stack.push_back(type);
                x[t] = open_[type];
            } else {
                x[t] = close_[stack.back()];
                stack.pop_back();
            }
        }
    }

    /// The bracket at x[i] with its type flipped ( <-> [, ) <-> ].
    void flip_type(model::input_sequence& x, std::size_t i) const {
        for (int t = 0; t < 2; ++t) {
            if (x[i] == open_[t]) {
                x[i] = open_[1 - t];
                return;
            }
            if (x[i] == close_[t]) {
                x[i] = close_[1 - t];
                return;
            }
        }
    }

    /// A local move on pair p: its prefix changed so that it stays an unbalanced 2DYCK prefix
    /// with the same top opener (position and type); p itself when no move applies.
    forced_bracket_pair changed(const forced_bracket_pair& p) {
        const std::size_t len = p.x.size() - 1;
        const std::size_t top = p.position;
        for (int attempt = 0; attempt < 16; ++attempt) {
            model::input_sequence x = p.x;
            switch (rng_.below(5)) {
            case 0: { // flip the types of a matched opener and its closer
                std::vector<std::pair<std::size_t, std::size_t>> matched;
                std::vector<std::size_t> stack;
                for (std::size_t t = 0; t < len; ++t) {
                    if (x[t] == open_[0] || x[t] == open_[1]) {
                        stack.push_back(t);
                    } else if (!stack.empty()) {
                        matched.emplace_back(stack.back(), t);
                        stack.pop_back();
                    }
                }
                // Unmatched openers below the top are flipped alone.
                for (const std::size_t o : stack)
                    if (o != top) matched.emplace_back(o, o);
                if (matched.empty()) continue;
                const auto ab = matched[rng_.below(matched.size())];
                flip_type(x, ab.first);
                if (ab.second != ab.first) flip_type(x, ab.second);
                break;
            }
            case 1: { // edit one or two symbols
                const std::size_t k = 1 + rng_.below(2);
                for (std::size_t t = 0; t < k; ++t) {
                    const std::size_t i = rng_.below(len);
                    if (i == top) continue;
                    const int symbols[4] = {open_[0], close_[0], open_[1], close_[1]};
                    x[i] = symbols[rng_.below(4)];
                }
                break;
            }
            case 2: // swap two neighbours
                if (len >= 2) {
                    const std::size_t i = rng_.below(len - 1);
                    if (i == top || i + 1 == top) continue;
                    std::swap(x[i], x[i + 1]);
                }
                break;
            case 3: // the balanced part after the top opener drawn anew
                if (top + 1 >= len) continue;
                balanced(x, top + 1, len - top - 1);
                break;
            default: // the prefix before the top opener drawn anew
                if (top == 0) continue;
                any_prefix(x, top);
            }
            if (x == p.x) continue;
            auto q = forced_pair_of(m_, x);
            if (q && q->position == top && q->label_x == p.label_x) return *q;
        }
        return p;
    }

    /// The pair's value, from the cache or two forward passes in double; NaN when undefined.
    pair_value value_of(const forced_bracket_pair& p) {
        if (auto it = cache_.find(p.x); it != cache_.end()) return it->second;
        pair_value v;
        ++res_.pairs_measured;
        try {
            const auto px = probabilities(p.x), py = probabilities(p.y);
            v.ce = -(std::log2(px[out_[p.label_x]]) + std::log2(py[out_[p.label_y]]));
            v.eta = std::abs(px[out_[0]] - py[out_[0]]);
            if (std::isnan(v.ce) || !std::isfinite(v.eta)) {
                v.ce = v.eta = std::nan("");
                if (!res_.undefined) {
                    res_.undefined = "the probabilities are not finite in double on input '" +
                                     model::format_input(m_.sigma, p.x) + "' or its flipped partner";
                    res_.undefined_input = p.x;
                }
            }
        } catch (const numeric::undefined_error& e) {
            v.ce = v.eta = std::nan("");
            if (!res_.undefined) {
                res_.undefined = e.message() + "; input '" + model::format_input(m_.sigma, p.x) +
                                 "' or its flipped partner";
                res_.undefined_input = p.x;
            }
        }
        if (cache_.size() > 4096) cache_.clear();
        cache_.emplace(p.x, v);
        return v;
    }

    model::vec<double> probabilities(const model::input_sequence& x) {
        const auto y = attention::soft_forward(md_, x, ctx_).y;
        return attention::softmax(attention::readout_logits(md_.out, y, ctx_), ctx_);
    }

    /// The set's margin (NaN when some pair is undefined); the best set so far is kept.
    double evaluate(const std::vector<forced_bracket_pair>& s) {
        ++res_.evaluations;
        double ce = 0, eta = 0;
        for (const auto& p : s) {
            const auto v = value_of(p);
            if (std::isnan(v.ce)) return std::nan("");
            ce += v.ce;
            eta = std::max(eta, v.eta);
        }
        const double margin = ce / (2.0 * static_cast<double>(s.size())) - 1.0 +
                              std::log2(1.0 + eta / static_cast<double>(opt_.eta_divisor));
        if (std::isfinite(margin) && (!res_.found || margin < res_.margin)) {
            res_.found = true;
            res_.margin = margin;
            res_.found_at = res_.evaluations;
            res_.pairs.clear();
            for (const auto& p : s) res_.pairs.push_back(p.x);
        }
        return margin;
    }

    const model::model<numeric::rational>& m_;
    numeric::context ctx_{53};
    model::model<double> md_;
    long n_;
    forced_pair_search_options opt_;
    stream rng_;
    int open_[2] = {0, 0}, close_[2] = {0, 0};
    std::size_t out_[2] = {0, 0};
    std::map<model::input_sequence, pair_value> cache_;
    forced_pair_search_result res_;
};

} // namespace

forced_pair_search_result forced_pair_search(const model::model<numeric::rational>& m, long n,
                                             const forced_pair_search_options& opt) {
    const auto& outs = m.out.symbols;
    if (!model::info(m.attention).soft_influence || m.out.type != model::readout<numeric::rational>::kind::softmax ||
        m.sigma.symbols != std::vector<std::string>{"(", ")", "[", "]"} ||
        outs != std::vector<std::string>{")", "]"})
        throw precondition_error("the forced-pair search needs a soft softmax predictor over ( ) [ ] "
                                 "with the outputs ) and ]");
    if (n < 2) throw precondition_error("the forced-pair search needs n >= 2");
    if (opt.budget < 1 || opt.pairs < 1 || opt.eta_divisor < 1)
        throw precondition_error("the forced-pair search needs a budget, pairs and a divisor >= 1");
    model::check_length(m, n);
    if (opt.start) {
        if (opt.start->size() != opt.pairs)
            throw precondition_error("the forced-pair search's start needs one prefix per pair");
        for (const auto& x : *opt.start)
            if (x.size() != static_cast<std::size_t>(n) || !forced_pair_of(m, x))
                throw precondition_error("the forced-pair search's start needs unbalanced 2DYCK "
                                         "prefixes of length n");
    }
    return forced_pair_searcher(m, n, opt).run();
}

} // namespace attnprop::analysis
