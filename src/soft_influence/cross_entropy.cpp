#include "soft_influence/cross_entropy.hpp"

#include "attention/common.hpp"
#include "attention/soft.hpp"
#include "attention/soft_change.hpp"
#include "soft_influence/influence.hpp"
#include "soft_influence/sweep_internal.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <random>

namespace attnprop::analysis {

using namespace sweep_detail;

namespace {

/// The output distribution of a softmax readout at x; an undefined value of the readout is
/// located at layer L + 1, node "readout", position n.
template <numeric::ExpScalar S>
model::vec<S> output_probabilities(const model::model<S>& m, const model::input_sequence& x,
                                   const numeric::context& ctx) {
    const auto y = attention::soft_forward(m, x, ctx).y;
    try {
        return attention::softmax(attention::readout_logits(m.out, y, ctx), ctx);
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(m.layers.size() + 1, "readout", x.size()));
    }
}

} // namespace

namespace sweep_detail {

bool binary_alphabets(const model::model<rational>& m) {
    const auto& outs = m.out.symbols;
    return m.sigma.symbols.size() == 2 && m.sigma.index_of("0") >= 0 && m.sigma.index_of("1") >= 0 &&
           m.out.type == model::readout<rational>::kind::softmax &&
           std::find(outs.begin(), outs.end(), "0") != outs.end() &&
           std::find(outs.begin(), outs.end(), "1") != outs.end();
}

bool dyck2_predictor(const model::model<rational>& m) {
    const auto& outs = m.out.symbols;
    for (const char* b : {"(", ")", "[", "]"})
        if (m.sigma.index_of(b) < 0) return false;
    return m.sigma.symbols.size() == 4 && m.out.type == model::readout<rational>::kind::softmax &&
           outs.size() == 2 && std::find(outs.begin(), outs.end(), ")") != outs.end() &&
           std::find(outs.begin(), outs.end(), "]") != outs.end();
}

} // namespace sweep_detail

forced_bracket_pair forced_pair(const model::model<rational>& m, long n, std::size_t k,
                                std::uint64_t seed) {
    if (n < 2) throw precondition_error("forced_pair: needs n >= 2");
    const int open[2] = {m.sigma.index_of("("), m.sigma.index_of("[")};
    const int close[2] = {m.sigma.index_of(")"), m.sigma.index_of("]")};
    for (int c : {open[0], open[1], close[0], close[1]})
        if (c < 0) throw precondition_error("forced_pair: the alphabet needs ( ) [ ]");
    std::mt19937_64 rng(
        splitmix(splitmix(splitmix(seed ^ 0x2d7cULL) ^ static_cast<std::uint64_t>(n)) ^ k));
    const std::size_t len = static_cast<std::size_t>(n - 1);
    forced_bracket_pair fp;
    fp.x.assign(len + 1, 0);
    fp.x[len] = m.sigma.eos_index();
    std::vector<std::pair<int, std::size_t>> stack; // (type, position) of unmatched openers
    for (std::size_t t = 0; t < len; ++t) {
        // Open when nothing is open, and at the end rather than close the last opener: the
        // prefix ends unbalanced, so its next closing bracket is forced.
        const bool opens = stack.empty() || (t + 1 == len && stack.size() == 1) || rng() % 2 == 0;
        if (opens) {
            const int type = static_cast<int>(rng() % 2);
            stack.emplace_back(type, t);
            fp.x[t] = open[type];
        } else {
            fp.x[t] = close[stack.back().first];
            stack.pop_back();
        }
    }
    const auto [type, where] = stack.back();
    fp.label_x = type;
    fp.position = where;
    fp.y = fp.x;
    fp.y[where] = open[1 - type];
    fp.label_y = 1 - type;
    return fp;
}

std::optional<forced_bracket_pair> forced_pair_of(const model::model<rational>& m,
                                                  const model::input_sequence& x) {
    const int open[2] = {m.sigma.index_of("("), m.sigma.index_of("[")};
    const int close[2] = {m.sigma.index_of(")"), m.sigma.index_of("]")};
    for (int c : {open[0], open[1], close[0], close[1]})
        if (c < 0) throw precondition_error("forced_pair_of: the alphabet needs ( ) [ ]");
    if (x.size() < 2 || x.back() != m.sigma.eos_index()) return std::nullopt;
    std::vector<std::pair<int, std::size_t>> stack; // (type, position) of unmatched openers
    for (std::size_t t = 0; t + 1 < x.size(); ++t) {
        if (x[t] == open[0] || x[t] == open[1]) {
            stack.emplace_back(x[t] == open[1] ? 1 : 0, t);
        } else if (x[t] == close[0] || x[t] == close[1]) {
            if (stack.empty() || close[stack.back().first] != x[t]) return std::nullopt;
            stack.pop_back();
        } else {
            return std::nullopt;
        }
    }
    if (stack.empty()) return std::nullopt;
    forced_bracket_pair fp;
    const auto [type, where] = stack.back();
    fp.x = x;
    fp.label_x = type;
    fp.position = where;
    fp.y = x;
    fp.y[where] = open[1 - type];
    fp.label_y = 1 - type;
    return fp;
}

/// The 2DYCK analogue of the corollary (theory.md §2.2) on K forced-bracket pairs (x, x'):
/// their required next brackets differ and x' is one flip away, so p_label(x) + p_label'(x')
/// <= 1 + |p(x) - p(x')|_inf for any binary predictor, and by Jensen the mean cross-entropy over
/// the 2K inputs is >= 1 - log2(1 + eta) with eta the largest change over the pairs. That is a
/// theorem for the measured eta, so a mean below the floor is a violation (with
/// --bound-divisor dividing eta, the deliberate wrong bound of the negative controls).
template <numeric::ExpScalar S>
cross_entropy_row forced_pair_cross_entropy(const model::model<rational>& exact, long n,
                                            std::size_t K, std::uint64_t seed, long eta_divisor,
                                            const numeric::context& ctx) {
    if (!dyck2_predictor(exact))
        throw precondition_error("forced-bracket cross-entropy: needs a softmax predictor "
                                    "over ( ) [ ] with the outputs ) and ]");
    std::vector<forced_bracket_pair> pairs;
    pairs.reserve(K);
    for (std::size_t k = 0; k < K; ++k) pairs.push_back(forced_pair(exact, n, k, seed));
    auto row = forced_pairs_cross_entropy<S>(exact, pairs, eta_divisor, ctx);
    row.n = n;
    return row;
}

template <numeric::ExpScalar S>
cross_entropy_row forced_pairs_cross_entropy(const model::model<rational>& exact,
                                             const std::vector<forced_bracket_pair>& pairs,
                                             long eta_divisor, const numeric::context& ctx) {
    const std::size_t K = pairs.size();
    const long n = K > 0 ? static_cast<long>(pairs.front().x.size()) : 0;
    if (!dyck2_predictor(exact))
        throw precondition_error("forced-bracket cross-entropy: needs a softmax predictor "
                                    "over ( ) [ ] with the outputs ) and ]");
    if (K == 0) throw precondition_error("forced-bracket cross-entropy: needs at least one pair");
    for (const auto& fp : pairs)
        if (static_cast<long>(fp.x.size()) != n || fp.y.size() != fp.x.size() || fp.position + 1 >= fp.x.size())
            throw precondition_error("forced-bracket cross-entropy: the pairs need one length n");
    const auto ms = model::to_scalar<S>(exact, ctx);
    const std::size_t close_idx[2] = {output_index(exact, ")"), output_index(exact, "]")};
    const S zero = numeric::zero<S>(ctx), one = numeric::one<S>(ctx);
    const S ln2 = numeric::log(numeric::from_int<S>(2, ctx));
    S ce_sum = zero;
    std::optional<S> eta;
    std::size_t correct = 0;
    std::optional<attention::soft_change_model> differential;
    // Changes in the differential model's kind that it cannot resolve are measured again there.
    constexpr bool remeasured = numeric::has_differential<S>;
    bool all_zero = remeasured && K > 0;
    for (std::size_t k = 0; k < K; ++k) {
        const auto& fp = pairs[k];
        auto probabilities = [&](const model::input_sequence& x) {
            try {
                return output_probabilities(ms, x, ctx);
            } catch (const numeric::undefined_error& e) {
                rethrow_on_input(e, "input '" + model::format_input(exact.sigma, x) + "'");
            }
        };
        const auto px = probabilities(fp.x), py = probabilities(fp.y);
        for (const auto* pl : {&px, &py}) {
            const int lab = pl == &px ? fp.label_x : fp.label_y;
            const S& q = (*pl)[close_idx[lab]];
            const S& other = (*pl)[close_idx[1 - lab]];
            ce_sum += S(-numeric::log(q) / ln2);
            correct += numeric::compare(q, other) == order::greater ? 1 : 0;
        }
        S d = numeric::abs(S(px[close_idx[0]] - py[close_idx[0]]));
        if constexpr (remeasured) {
            // An unresolved change is measured again on the pair itself, where a change of p
            // that is exactly zero is proved so.
            if (arb_rel_accuracy_bits(d.raw()) < 32) {
                if (!differential) differential.emplace(exact, ctx);
                const auto ch = differential->change(fp.x, fp.position, fp.y[fp.position]);
                d = numeric::abs((*ch.dp)[close_idx[0]]);
            }
            all_zero = all_zero && arb_is_zero(d.raw());
        }
        eta = eta ? max_enclosure(*eta, d) : d;
    }
    const S e = S((eta ? *eta : zero) / numeric::from_int<S>(std::max(1L, eta_divisor), ctx));
    const std::size_t inputs = 2 * K;
    const S mean = S(ce_sum / numeric::from_int<S>(static_cast<long>(inputs), ctx));
    const S floor = S(one - numeric::log(S(one + e)) / ln2);
    cross_entropy_row ce;
    ce.n = n;
    ce.language = lang::language::dyck2;
    ce.inputs = inputs;
    ce.correct = correct;
    ce.mean_ce_bits = dec(mean);
    ce.accuracy = dec(S(numeric::from_int<S>(static_cast<long>(correct), ctx) /
                        numeric::from_int<S>(static_cast<long>(inputs), ctx)));
    ce.eta = dec(eta ? *eta : zero); // the measured eta; the floor uses eta / D
    ce.floor_bits = dec(floor);
    ce.check = floor_verdict(numeric::compare(mean, floor));
    if (all_zero) {
        ce.eta_zero_exactly = true;
        ce.check = verdict::passed;
    }
    ce.mean_ce_approx = numeric::approx_double(mean);
    return ce;
}

#define ATTNPROP_INSTANTIATE(S)                                                                    \
    template cross_entropy_row forced_pair_cross_entropy<S>(const model::model<rational>&, long,   \
                                                            std::size_t, std::uint64_t, long,      \
                                                            const numeric::context&);      \
    template cross_entropy_row forced_pairs_cross_entropy<S>(                                      \
        const model::model<rational>&, const std::vector<forced_bracket_pair>&, long,              \
        const numeric::context&);
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

int binary_label(lang::language l, const std::string& x) {
    if (l == lang::language::first) return !x.empty() && x.front() == '1' ? 1 : 0;
    return lang::member(l, x) ? 1 : 0;
}

cube_cross_entropy_result cube_cross_entropy(const model::model<rational>& m, long n,
                                             lang::language label, const numeric::context& ctx,
                                             long eta_divisor) {
    if (!binary_alphabets(m))
        throw precondition_error("cube_cross_entropy: needs a softmax predictor over {0, 1}");
    if (n < 2 || n - 1 > 20) throw precondition_error("cube_cross_entropy: n out of range");
    const int zero = m.sigma.index_of("0"), one = m.sigma.index_of("1");
    const std::size_t o0 = output_index(m, "0"), o1 = output_index(m, "1");
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    const std::size_t bits = static_cast<std::size_t>(n - 1);
    const std::size_t cube = std::size_t{1} << bits;
    std::vector<model::vec<arb_ball>> probs(cube);
    model::input_sequence x(static_cast<std::size_t>(n), zero);
    x.back() = m.sigma.eos_index();
    arb_ball ce_sum = numeric::zero<arb_ball>(ctx);
    cube_cross_entropy_result r;
    r.cube = cube;
    const arb_ball ln2 = numeric::log(numeric::from_int<arb_ball>(2, ctx));
    for (std::size_t a = 0; a < cube; ++a) {
        std::string w(bits, '0');
        for (std::size_t t = 0; t < bits; ++t) {
            const bool bit = (a >> t) & 1;
            x[t] = bit ? one : zero;
            w[t] = bit ? '1' : '0';
        }
        const int lab = binary_label(label, w);
        try {
            probs[a] = output_probabilities(mb, x, ctx);
        } catch (const numeric::undefined_error& e) {
            rethrow_on_input(e, "input '" + w + "' of the cross-entropy cube");
        }
        const arb_ball& q = probs[a][lab ? o1 : o0];
        ce_sum -= numeric::log(q) / ln2;
        const arb_ball& other = probs[a][lab ? o0 : o1];
        r.correct += numeric::compare(q, other) == order::greater ? 1 : 0;
    }
    r.ce_bits = ce_sum / numeric::from_int<arb_ball>(static_cast<long>(cube), ctx);
    // η_b = max over x of ||p(x) - p(x ^ b)||_∞; flipping a label-swapping bit b is a
    // label-swapping bijection, so any such b gives E[q] <= (1 + η_b)/2 (theory.md §2.2).
    const std::size_t swapping = label == lang::language::first ? 1 : bits;
    std::optional<arb_ball> eta;
    for (std::size_t b = 0; b < swapping; ++b) {
        arb_ball eb = numeric::zero<arb_ball>(ctx);
        for (std::size_t a = 0; a < cube; ++a) {
            const std::size_t a2 = a ^ (std::size_t{1} << b);
            if (a2 < a) continue;
            for (std::size_t t = 0; t < probs[a].size(); ++t)
                eb = max_enclosure(eb, numeric::abs(probs[a][t] - probs[a2][t]));
        }
        if (!eta || numeric::compare(eb, *eta) == order::less) {
            eta = eb;
            r.flipped_bit = b + 1;
        }
    }
    // η containing 0 is measured again on the pairs of the best bit as differential
    // enclosures: when every change of p is the exact point 0, η = 0 is proved.
    if (numeric::compare(*eta, numeric::zero<arb_ball>(ctx)) != order::greater) {
        attention::soft_change_model differential(m, ctx);
        const std::size_t b = r.flipped_bit - 1;
        arb_ball eb = numeric::zero<arb_ball>(ctx);
        bool zero_everywhere = true;
        for (std::size_t a = 0; a < cube; ++a) {
            if ((a >> b) & 1) continue;
            for (std::size_t t = 0; t < bits; ++t) x[t] = ((a >> t) & 1) ? one : zero;
            const auto ch = differential.change(x, b, one);
            for (const auto& d : *ch.dp) {
                const arb_ball ad = numeric::abs(d);
                zero_everywhere = zero_everywhere && arb_is_zero(ad.raw());
                eb = max_enclosure(eb, ad);
            }
        }
        eta = eb;
        r.eta_zero_exactly = zero_everywhere;
    }
    r.eta = *eta;
    const arb_ball e = *eta / numeric::from_int<arb_ball>(eta_divisor, ctx);
    r.floor_bits = numeric::one<arb_ball>(ctx) - numeric::log(numeric::one<arb_ball>(ctx) + e) / ln2;
    r.ce_vs_floor = numeric::compare(r.ce_bits, r.floor_bits);
    return r;
}

} // namespace attnprop::analysis
