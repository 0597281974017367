#pragma once
// Template bodies of common.hpp.

namespace attnprop::attention {

template <numeric::Scalar S>
vec<S> initial_state(const model::model<S>& m, int symbol, long i, long n,
                     const numeric::context& ctx) {
    const vec<S>& v = m.token[static_cast<std::size_t>(symbol)];
    const char* node = "positional embedding";
    try {
        vec<S> p = m.positional->template at<S>(i, n, ctx);
        switch (m.input) {
        case model::input_kind::add:
            for (std::size_t c = 0; c < p.size(); ++c) p[c] += v[c];
            return p;
        case model::input_kind::concat: {
            vec<S> out = v;
            out.insert(out.end(), p.begin(), p.end());
            return out;
        }
        case model::input_kind::map: {
            vec<S> in = v;
            in.insert(in.end(), p.begin(), p.end());
            node = "input map";
            return model::evaluate(*m.input_fn, in, ctx);
        }
        }
        return p;
    } catch (const numeric::undefined_error& e) {
        throw e.located(place(0, node, static_cast<std::size_t>(i)));
    }
}

template <numeric::Scalar S>
std::vector<vec<S>> initial_states(const model::model<S>& m, const input_sequence& x,
                                   const numeric::context& ctx) {
    const long n = static_cast<long>(x.size());
    std::vector<vec<S>> y;
    y.reserve(x.size());
    for (long i = 1; i <= n; ++i)
        y.push_back(initial_state(m, x[static_cast<std::size_t>(i - 1)], i, n, ctx));
    return y;
}

template <numeric::Scalar S>
vec<S> query(const model::head<S>& h, const vec<S>& y, const numeric::context& ctx) {
    return model::apply_affine(h.score.Q, y, ctx);
}
template <numeric::Scalar S>
vec<S> key(const model::head<S>& h, const vec<S>& y, const numeric::context& ctx) {
    return model::apply_affine(h.score.K, y, ctx);
}
template <numeric::Scalar S>
vec<S> value(const model::head<S>& h, const vec<S>& y, const numeric::context& ctx) {
    if (h.value.type == model::value_spec<S>::kind::linear)
        return model::apply_affine(h.value.V, y, ctx);
    return model::evaluate(*h.value.fn, y, ctx);
}
template <numeric::Scalar S>
S map_score(const model::head<S>& h, const vec<S>& yi, const vec<S>& yj,
            const numeric::context& ctx) {
    vec<S> in = yi;
    in.insert(in.end(), yj.begin(), yj.end());
    return model::evaluate(*h.score.fn, in, ctx).front();
}

template <numeric::Scalar S>
vec<S> update(const model::layer<S>& l, const vec<S>& y, const std::vector<vec<S>>& b,
              const numeric::context& ctx) {
    vec<S> in = y;
    for (const auto& bh : b) in.insert(in.end(), bh.begin(), bh.end());
    return model::evaluate(l.update, in, ctx);
}

template <numeric::Scalar S>
verdict recognize(const model::readout<S>& r, const vec<S>& y, const numeric::context& ctx) {
    numeric::order c = numeric::order::unknown;
    try {
        if (r.type == model::readout<S>::kind::threshold) {
            S v = model::dot(r.w.data(), y.data(), y.size(), ctx);
            numeric::require_finite(v);
            c = numeric::compare(v, r.t);
        } else if (r.type == model::readout<S>::kind::map) {
            c = numeric::sign(model::evaluate(*r.fn, y, ctx).front(), ctx);
        } else {
            throw std::logic_error("recognize() called on a softmax readout");
        }
    } catch (const numeric::undefined_error& e) {
        throw model::detail::at_node(e, "readout");
    }
    if (c == numeric::order::greater) return verdict::accept;
    if (c == numeric::order::unknown) return verdict::undecided;
    return verdict::reject;
}

template <numeric::Scalar S>
vec<S> readout_logits(const model::readout<S>& r, const vec<S>& y, const numeric::context& ctx) {
    vec<S> z = model::apply_affine(r.logits, y, ctx);
    try {
        model::require_all_finite(z);
    } catch (const numeric::undefined_error& e) {
        throw model::detail::at_node(e, "readout");
    }
    return z;
}

template <numeric::ExpScalar S> vec<S> softmax(const vec<S>& z, const numeric::context& ctx) {
    S m = z.front();
    for (std::size_t r = 1; r < z.size(); ++r)
        if (numeric::compare(z[r], m) == numeric::order::greater) m = z[r];
    m = numeric::representative(m);
    vec<S> e;
    e.reserve(z.size());
    S total = numeric::zero<S>(ctx);
    for (const auto& v : z) {
        e.push_back(numeric::exp(v - m));
        total += e.back();
    }
    for (auto& v : e) v = v / total;
    return e;
}

namespace detail {

/// Enclosures given by their ends (the filter's interval, the certified double interval), whose
/// compare() is: less when a.hi < b.lo, greater when a.lo > b.hi, equal when both are the same
/// point. Their candidate scans need one pass: "certainly above" is a comparison with the
/// largest lower end.
template <class S>
concept end_enclosure = requires(const S& x) {
    { x.lo() } -> std::convertible_to<double>;
    { x.hi() } -> std::convertible_to<double>;
    { x.is_point() } -> std::convertible_to<bool>;
};

template <class S> bool ends_are_numbers(const std::vector<S>& s) {
    for (const auto& x : s)
        if (std::isnan(static_cast<double>(x.lo())) || std::isnan(static_cast<double>(x.hi())))
            return false;
    return true;
}

} // namespace detail

template <numeric::Scalar S> maximal_set_result maximal_positions(const std::vector<S>& s) {
    if (s.empty()) throw std::logic_error("maximal positions of an empty score row");
    maximal_set_result r;
    // Fast path: one scan while every comparison decides (certain order is transitive, and so
    // is certain equality).
    std::size_t best = 0;
    r.positions.push_back(0);
    bool decided = true;
    for (std::size_t j = 1; j < s.size() && decided; ++j) {
        switch (numeric::compare(s[j], s[best])) {
        case numeric::order::greater:
            best = j;
            r.positions.assign(1, j);
            break;
        case numeric::order::equal: r.positions.push_back(j); break;
        case numeric::order::less: break;
        case numeric::order::unknown: decided = false; break;
        }
    }
    if (decided) return r;
    // Candidate scan: j can attain the maximum only if no index is certainly above it.
    std::vector<std::size_t> cand;
    if constexpr (detail::end_enclosure<S>) {
        if (detail::ends_are_numbers(s)) {
            // Some index is certainly above j iff the largest lower end exceeds hi(j): O(n),
            // where comparing with every surviving candidate is O(n^2) on long rows of
            // overlapping scores (keys that agree up to rounding).
            double top = -std::numeric_limits<double>::infinity();
            for (const auto& x : s) top = std::max(top, static_cast<double>(x.lo()));
            for (std::size_t j = 0; j < s.size(); ++j)
                if (!(top > static_cast<double>(s[j].hi()))) cand.push_back(j);
            r.positions = std::move(cand);
            r.decided = true;
            for (std::size_t t = 1; t < r.positions.size(); ++t)
                if (numeric::compare(s[r.positions[t]], s[r.positions.front()]) != numeric::order::equal) {
                    r.decided = false;
                    break;
                }
            return r;
        }
    }
    for (std::size_t j = 0; j < s.size(); ++j) {
        bool excluded = false;
        for (std::size_t c : cand)
            if (numeric::compare(s[c], s[j]) == numeric::order::greater) {
                excluded = true;
                break;
            }
        if (excluded) continue;
        std::erase_if(cand, [&](std::size_t c) {
            return numeric::compare(s[j], s[c]) == numeric::order::greater;
        });
        cand.push_back(j);
    }
    r.positions = std::move(cand);
    for (std::size_t t = 1; t < r.positions.size(); ++t)
        if (numeric::compare(s[r.positions[t]], s[r.positions.front()]) != numeric::order::equal) {
            r.decided = false;
            break;
        }
    return r;
}

template <numeric::Scalar S> argmax_result leftmost_argmax(const std::vector<S>& s) {
    argmax_result r;
    if (s.empty()) throw std::logic_error("argmax of an empty score row");
    // Fast path: a single scan that stays decided as long as every comparison decides.
    std::size_t best = 0;
    bool decided = true;
    for (std::size_t j = 1; j < s.size(); ++j) {
        numeric::order c = numeric::compare(s[j], s[best]);
        if (c == numeric::order::greater) best = j;
        else if (c == numeric::order::unknown) {
            decided = false;
            break;
        }
    }
    if (decided) {
        r.index = best;
        return r;
    }
    // Candidate scan (theory.md §1.3): j can be the leftmost argmax only if no j' < j is
    // certainly >= s_j and no j' > j is certainly > s_j. Certain dominance is transitive, so
    // comparing against the surviving candidates is enough.
    std::vector<std::size_t> cand;
    if constexpr (detail::end_enclosure<S>) {
        if (detail::ends_are_numbers(s)) {
            // The same set in two passes: j' >= j certainly iff lo(j') > hi(j) or both are the
            // same point, so against the largest lower end (and the largest point) to the
            // left of j and the largest lower end to its right. O(n) where the scan above is
            // O(n^2) on long rows of overlapping scores.
            const std::size_t n = s.size();
            std::vector<double> right(n + 1, -std::numeric_limits<double>::infinity());
            for (std::size_t j = n; j-- > 0;)
                right[j] = std::max(right[j + 1], static_cast<double>(s[j].lo()));
            double left = -std::numeric_limits<double>::infinity();
            double left_point = -std::numeric_limits<double>::infinity();
            bool any_point = false;
            for (std::size_t j = 0; j < n; ++j) {
                const double lo = static_cast<double>(s[j].lo()), hi = static_cast<double>(s[j].hi());
                const bool point = s[j].is_point();
                const bool by_left = left > hi || (point && any_point && left_point == lo);
                if (!by_left && !(right[j + 1] > hi)) cand.push_back(j);
                left = std::max(left, lo);
                if (point) {
                    left_point = any_point ? std::max(left_point, lo) : lo;
                    any_point = true;
                }
            }
            if (cand.size() == 1) {
                r.index = cand.front();
                return r;
            }
            r.decided = false;
            r.candidates = std::move(cand);
            return r;
        }
    }
    for (std::size_t j = 0; j < s.size(); ++j) {
        bool excluded = false;
        for (std::size_t c : cand) {
            if (numeric::certainly_not_less(numeric::compare(s[c], s[j]))) {
                excluded = true;
                break;
            }
        }
        if (excluded) continue;
        std::erase_if(cand, [&](std::size_t c) {
            return numeric::compare(s[j], s[c]) == numeric::order::greater;
        });
        cand.push_back(j);
    }
    if (cand.size() == 1) {
        r.index = cand.front();
        return r;
    }
    r.decided = false;
    r.candidates = std::move(cand);
    return r;
}

} // namespace attnprop::attention
