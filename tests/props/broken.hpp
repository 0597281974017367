#pragma once
// Deliberately broken implementations, passed to the properties' hooks by the negative controls.
// The controls on random models and those with a model fixed (own_model_test.cpp) use the same
// ones, so that a control on a given model tests the defect its random-model control tests.
#include "soft_influence/bounds.hpp"
#include "numeric/ball_bounds.hpp"
#include "soft_hard/simulate.hpp"
#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "lang/languages.hpp"
#include "model/model_file.hpp"
#include "props/hard_limit.hpp"
#include "props/semantics.hpp"
#include "props/soft_hard.hpp"
#include "props/soft_influence.hpp"

namespace attnprop::test::broken {

/// A hard ball evaluation that drops the radius of y_n^(L): the midpoint alone, which excludes
/// the exact value wherever the ball was not a point.
inline props::ball_hard_fn ball_without_radius() {
    return [](const model::model<numeric::arb_ball>& m, const model::input_sequence& x,
              const numeric::context& ctx, bool trace) {
        auto r = attention::hard_forward(m, x, ctx, trace);
        for (auto& v : r.y) v = numeric::representative(v);
        return r;
    };
}

/// An exact hard pass whose reported choices break ties towards the right: each choice moves
/// to the rightmost key whose state equals the chosen one (a key that ties with it).
inline props::exact_forward_fn ties_to_the_right() {
    return [](const model::model<numeric::rational>& m, const model::input_sequence& x,
              const numeric::context& ctx, bool trace) {
        auto r = attention::hard_forward_exact(m, x, ctx, trace);
        if (r.trace)
            for (std::size_t k = 0; k < r.trace->choice.size(); ++k)
                for (auto& row : r.trace->choice[k])
                    for (auto& c : row) {
                        const auto& ys = r.trace->y[k];
                        for (std::size_t j = ys.size(); j-- > c;)
                            if (ys[j] == ys[c]) {
                                c = j;
                                break;
                            }
                    }
        return r;
    };
}

/// An exact hard pass that returns the first row of the last layer as y_n^(L).
inline props::exact_forward_fn readout_from_position_1() {
    return [](const model::model<numeric::rational>& m, const model::input_sequence& x,
              const numeric::context& ctx, bool) {
        auto r = attention::hard_forward_exact(m, x, ctx, true);
        r.y = r.trace->y.back().front();
        return r;
    };
}

/// A soft ball evaluation that drops the radius of y_n^(L).
inline props::ball_soft_fn soft_ball_without_radius() {
    return [](const model::model<numeric::arb_ball>& m, const model::input_sequence& x,
              const numeric::context& ctx, attention::soft_options o) {
        auto r = attention::soft_forward(m, x, ctx, o);
        for (auto& v : r.y) v = numeric::representative(v);
        return r;
    };
}

/// A model writer that passes the token embeddings through double.
inline props::writer_fn writer_through_double() {
    return [](const model::model<numeric::rational>& m) {
        model::model<numeric::rational> rounded = m;
        for (auto& v : rounded.token)
            for (auto& q : v) q = numeric::rational_from_double(numeric::to_double_nearest(q));
        return model::write_model(rounded);
    };
}

/// Turns on the interval softmax rows' dropping of their error bound while it lives
/// (soft_rows<dinterval>::drop_error_bound_for_testing), and off again at the end of its scope.
class interval_rows_without_error_bound {
public:
    interval_rows_without_error_bound() : drop_(flag()) { drop_ = true; }
    ~interval_rows_without_error_bound() { drop_ = false; }
    interval_rows_without_error_bound(const interval_rows_without_error_bound&) = delete;
    interval_rows_without_error_bound& operator=(const interval_rows_without_error_bound&) = delete;

private:
    static bool& flag() {
        return attention::soft_rows<numeric::dinterval>::drop_error_bound_for_testing();
    }
    bool& drop_;
};

/// A restriction builder that reports one free input more than rho has.
inline props::restriction_fn free_count_plus_one() {
    return [](const model::model<numeric::rational>& m, long n, const analysis::restriction_options& o) {
        auto r = analysis::build_restriction(m, n, o);
        r.free_count += 1;
        return r;
    };
}

/// A PARITY pair finder that flips the first position of D_L(n) instead of one outside it.
inline props::parity_pair_fn pair_flipping_a_dependency() {
    return [](const model::model<numeric::rational>& m, const analysis::restriction& r) {
        analysis::language_options lo;
        lo.samples = 2;
        auto res = analysis::analyse_language(m, r, lang::language::parity, lo);
        if (res.verdict != analysis::language_verdict::counterexample || r.dependency.empty())
            return res;
        std::string& w = res.inputs[1];
        w = res.inputs[0];
        const std::size_t b = r.dependency.front();
        w[b] = w[b] == '0' ? '1' : '0';
        return res;
    };
}

/// An a-posteriori bound adjustment dividing the bound by n^2 (too small): the pair bound of
/// influence-below-bounds and the rung bound of influence-vanishes.
inline props::bound_adjust_fn ladder_bound_over_n_squared() {
    return [](const numeric::arb_ball& b, std::size_t n, const numeric::context& ctx) {
        return b / numeric::from_int<numeric::arb_ball>(static_cast<long>(n * n), ctx);
    };
}

/// The a-posteriori pair bound divided by n^2 (too small).
inline props::pair_bound_fn posterior_bound_over_n_squared() { return ladder_bound_over_n_squared(); }

/// A leak bound that forgets the n - t competing keys: r = e^(-beta gamma) / t instead of
/// ((n - t)/t) e^(-beta gamma), as if n = t + 1; only the rows are compared (no layer bound).
inline props::bound_check_fn leak_bound_without_competitors() {
    using numeric::arb_ball;
    return [](const analysis::bound_data&, const analysis::gap_pass& h,
              const analysis::soft_observation& o, const analysis::propagated& p,
              const std::vector<std::vector<arb_ball>>& b, const numeric::context& ctx) {
        analysis::bound_check c;
        c.max_leak = c.max_leak_bound = c.worst_row_bound = numeric::zero_point(ctx.precision_bits);
        for (std::size_t k = 0; k < h.layers.size(); ++k)
            for (std::size_t hh = 0; hh < h.layers[k].heads.size(); ++hh) {
                const auto& rows = h.layers[k].heads[hh].rows;
                for (std::size_t r = 0; r < rows.size(); ++r) {
                    std::optional<arb_ball> g;
                    if (rows[r].margin) g = rows[r].margin->to_ball(ctx);
                    const arb_ball bd = analysis::leak_bound(rows[r].maximal.size() + 1,
                                                             rows[r].maximal.size(), g,
                                                             p.head_eps[k][hh], b[k][hh], ctx);
                    ++c.rows;
                    if (numeric::compare(o.leak[k][hh][r], bd) == numeric::order::greater) {
                        ++c.rows_above;
                        c.first_above = "row above the narrowed bound";
                    }
                }
            }
        return c;
    };
}

/// A readout certificate that ignores the propagated difference: certified whenever the hard
/// readout has any slack.
inline props::propagate_fn certificate_ignoring_difference() {
    return [](const analysis::bound_data& d, const std::vector<std::vector<numeric::arb_ball>>& b,
              const numeric::context& ctx) {
        auto p = analysis::propagate(d, b, ctx);
        p.readout_certified = numeric::sign(d.readout.slack, ctx) == numeric::order::greater;
        return p;
    };
}

/// An average-hard reference that breaks ties to the leftmost position (the unique-hard pass).
inline props::gap_pass_fn unique_hard_reference() {
    return [](const model::model<numeric::rational>& m, const model::input_sequence& x) {
        model::model<numeric::rational> unique = m;
        unique.attention = model::attention_kind::hard;
        return analysis::score_gaps(unique, x);
    };
}

} // namespace attnprop::test::broken
