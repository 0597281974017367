#pragma once
// Template bodies of model.hpp.

namespace attnprop::model {

template <numeric::Scalar S>
vec<S> positional_spec::at(long i, long n, const numeric::context& ctx) const {
    vec<S> out;
    out.reserve(dim);
    switch (type) {
    case kind::table:
        if (i < 1 || static_cast<std::size_t>(i) > table.size())
            throw input_error("the positional table has " + std::to_string(table.size()) +
                              " rows; position " + std::to_string(i) + " is beyond it");
        for (const auto& q : table[static_cast<std::size_t>(i - 1)])
            out.push_back(numeric::from_rational<S>(q, ctx));
        break;
    case kind::formula:
        for (const auto& f : formulas) {
            out.push_back(f ? f->template eval<S>(i, n, ctx) : numeric::zero<S>(ctx));
            // Rounded kinds throw inside the formula; an indeterminate ball is reported here.
            if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure &&
                          numeric::checks_finite<S>)
                if (!numeric::is_finite(out.back())) {
                    const numeric::undefined_error e = numeric::non_finite_error(out.back());
                    throw numeric::undefined_error(e.reason() + " in formula '" + f->text() +
                                                       "' at i=" + std::to_string(i) +
                                                       ", n=" + std::to_string(n),
                                                   {}, true);
                }
        }
        break;
    case kind::sinusoidal:
        if constexpr (numeric::ExpScalar<S>) {
            // PE(pos, 2k) = sin(pos / base^(2k/dim)), PE(pos, 2k+1) = cos(...), pos = i - 1.
            S pos = numeric::from_int<S>(i - 1, ctx);
            S lb = numeric::log(numeric::from_rational<S>(base, ctx));
            for (std::size_t c = 0; c < dim; ++c) {
                std::size_t k2 = c - (c % 2);
                S e = numeric::from_rational<S>(rational(static_cast<long>(k2), static_cast<long>(dim)), ctx);
                S freq = numeric::exp(-(e * lb));
                S arg = pos * freq;
                out.push_back(c % 2 == 0 ? numeric::sin(arg) : numeric::cos(arg));
            }
        } else {
            throw numeric::numeric_error(
                "the sinusoidal positional encoding needs real arithmetic; not available for " +
                std::string(numeric::scalar_traits<S>::name) + " scalars");
        }
        break;
    }
    return out;
}

template <numeric::Scalar S>
model<S> to_scalar(const model<rational>& m, const numeric::context& ctx) {
    model<S> out;
    out.name = m.name;
    out.description = m.description;
    out.source = m.source;
    out.file = m.file;
    out.attention = m.attention;
    out.sigma = m.sigma;
    out.d = m.d;
    for (const auto& v : m.token) out.token.push_back(convert<S>(v, ctx));
    out.positional = m.positional;
    out.input = m.input;
    if (m.input_fn) out.input_fn = convert<S>(*m.input_fn, ctx);
    for (const auto& l : m.layers) {
        layer<S> nl;
        nl.mask = l.mask;
        nl.sigmoid_bias = l.sigmoid_bias;
        nl.feature_map = l.feature_map;
        for (const auto& h : l.heads) {
            head<S> nh;
            nh.score.type = static_cast<typename score_spec<S>::kind>(h.score.type);
            nh.score.Q = convert<S>(h.score.Q, ctx);
            nh.score.K = convert<S>(h.score.K, ctx);
            nh.score.scale_factor = h.score.scale_factor;
            nh.score.scale_inv_sqrt = h.score.scale_inv_sqrt;
            nh.score.default_scale = h.score.default_scale;
            nh.score.length_scale =
                static_cast<typename score_spec<S>::length_scaling>(h.score.length_scale);
            nh.score.beta = h.score.beta;
            if constexpr (numeric::ExpScalar<S>) {
                S f = numeric::from_rational<S>(h.score.scale_factor, ctx);
                if (h.score.scale_inv_sqrt != 1)
                    f = f / numeric::sqrt(numeric::from_rational<S>(h.score.scale_inv_sqrt, ctx));
                nh.score.scale = f;
            } else if (h.score.scale_inv_sqrt == 1) {
                nh.score.scale = numeric::from_rational<S>(h.score.scale_factor, ctx);
            }
            if (h.score.fn) nh.score.fn = convert<S>(*h.score.fn, ctx);
            nh.value.type = static_cast<typename value_spec<S>::kind>(h.value.type);
            nh.value.V = convert<S>(h.value.V, ctx);
            if (h.value.fn) nh.value.fn = convert<S>(*h.value.fn, ctx);
            nl.heads.push_back(std::move(nh));
        }
        nl.update = convert<S>(l.update, ctx);
        out.layers.push_back(std::move(nl));
    }
    out.out.type = static_cast<typename readout<S>::kind>(m.out.type);
    out.out.w = convert<S>(m.out.w_exact, ctx);
    out.out.w_exact = m.out.w_exact;
    out.out.t_exact = m.out.t_exact;
    out.out.t = numeric::from_rational<S>(m.out.t_exact, ctx);
    if (m.out.fn) out.out.fn = convert<S>(*m.out.fn, ctx);
    out.out.symbols = m.out.symbols;
    out.out.logits = convert<S>(m.out.logits, ctx);
    return out;
}

} // namespace attnprop::model
