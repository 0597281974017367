// One-symbol changes as differential enclosures (soft_change.hpp), and the instantiation of
// the soft kernel for numeric::diff_ball.
#include "attention/soft_change.hpp"
#include "util/precondition.hpp"

#include <stdexcept>

namespace attnprop::attention {

using numeric::arb_ball;
using numeric::diff_ball;
using numeric::rational;

template soft_output<diff_ball> soft_forward(const model::model<diff_ball>&, const input_sequence&,
                                             const numeric::context&, soft_options);

soft_change_model::soft_change_model(const model::model<rational>& m, const numeric::context& ctx)
    : m_(model::to_scalar<diff_ball>(m, ctx)), token_(m.token), ctx_(ctx) {
    if (!model::info(m.attention).soft_influence)
        throw precondition_error("soft_change_model needs a soft-attention model");
    pair_symbol_ = static_cast<int>(m_.token.size());
    m_.token.push_back(m_.token.front());
}

soft_change_result soft_change_model::change(const input_sequence& x, std::size_t i, int a) {
    const std::size_t n = x.size();
    const auto symbols = static_cast<int>(token_.size());
    if (i + 1 >= n) throw precondition_error("a changed position must come before eos");
    if (a < 0 || a >= symbols || x[i] < 0 || x[i] >= symbols)
        throw precondition_error("symbol index out of range");
    // The changed position reads (v_{x_i}, v_a - v_{x_i}): exact differences of exact
    // embeddings, enclosed once.
    const auto& from = token_[static_cast<std::size_t>(x[i])];
    const auto& to = token_[static_cast<std::size_t>(a)];
    vec<diff_ball> pair;
    pair.reserve(from.size());
    for (std::size_t c = 0; c < from.size(); ++c) {
        arb_ball v = arb_ball::from_rational(from[c], ctx_);
        if (from[c] == to[c]) pair.push_back(diff_ball::same(std::move(v)));
        else pair.emplace_back(std::move(v), arb_ball::from_rational(rational(to[c] - from[c]), ctx_));
    }
    m_.token[static_cast<std::size_t>(pair_symbol_)] = std::move(pair);
    input_sequence xp = x;
    xp[i] = pair_symbol_;
    const auto out = soft_forward(m_, xp, ctx_);

    soft_change_result r;
    for (const auto& v : out.y) {
        r.y.push_back(v.first());
        r.dy.push_back(v.change());
    }
    if (m_.out.type == model::readout<diff_ball>::kind::softmax) {
        const auto p = softmax(readout_logits(m_.out, out.y, ctx_), ctx_);
        r.p.emplace();
        r.dp.emplace();
        for (const auto& v : p) {
            r.p->push_back(v.first());
            r.dp->push_back(v.change());
        }
    }
    return r;
}

} // namespace attnprop::attention
