#include "soft_influence/sweep.hpp"

#include "soft_influence/bounds.hpp"
#include "attention/work.hpp"
#include "soft_influence/influence.hpp"
#include "soft_influence/norms.hpp"
#include "attention/common.hpp"
#include "attention/soft_change.hpp"
#include "attention/soft.hpp"
#include "numeric/interrupt.hpp"
#include "util/thread_pool.hpp"
#include "util/precondition.hpp"

#include <flint/flint.h>
#include <mpfr.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>


namespace attnprop::analysis {

using numeric::arb_ball;
using numeric::order;
using numeric::rational;

const char* to_string(comparison c) {
    switch (c) {
    case comparison::below: return "below";
    case comparison::above: return "above";
    case comparison::undecided: return "undecided";
    case comparison::not_applicable: return "n/a";
    }
    return "?";
}

const char* to_string(sweep_verdict v) {
    switch (v) {
    case sweep_verdict::holds: return "holds";
    case sweep_verdict::fails: return "fails";
    case sweep_verdict::hypothesis_violated: return "hypothesis-violated";
    case sweep_verdict::undecided: return "undecided";
    case sweep_verdict::undefined: return "undefined";
    }
    return "?";
}

namespace {

std::uint64_t splitmix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// The comparison that says whether a measurement is within its bound: below when certainly
/// within, above when certainly not, undecided otherwise.
comparison below_if(numeric::uncertain<bool> within) {
    return certainly(within) ? comparison::below
           : possibly(within) ? comparison::undecided
                              : comparison::above;
}

/// Combines two comparisons of the same row: "every pair is within its bound", the
/// three-valued conjunction (above wins, then undecided, then below); a comparison that does
/// not apply leaves the other as it is.
comparison merge(comparison a, comparison b) {
    if (a == comparison::not_applicable) return b;
    if (b == comparison::not_applicable) return a;
    auto within = [](comparison c) {
        return c == comparison::undecided ? numeric::indeterminate
                                          : numeric::uncertain<bool>(c == comparison::below);
    };
    return below_if(within(a) && within(b));
}

/// A cross-entropy compared with its floor: CE >= floor holds (below), CE < floor violates it.
comparison ce_comparison(order o) { return below_if(numeric::is_greater_or_equal(o)); }

/// A measurement compared with its bound: measured <= bound holds (below).
comparison from_order(order o) { return below_if(numeric::is_less_or_equal(o)); }

/// A ball holding the measured value: the value itself for balls, [lo, hi] exactly for
/// intervals, the exact value of a rounded number otherwise (compared as if exact).
template <class S> arb_ball as_ball(const S& x, const numeric::context& ctx) {
    return numeric::enclosing_ball(x, ctx);
}

template <class S> std::string dec(const S& x) { return numeric::to_decimal(x, 12); }

/// e with the input it was met on added to its reason (the place stays the same).
[[noreturn]] void rethrow_on_input(const numeric::undefined_error& e, const std::string& what) {
    throw numeric::undefined_error(e.reason() + "; " + what, e.where(), e.precision_may_resolve());
}

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

bool binary_alphabets(const model::model<rational>& m) {
    const auto& outs = m.out.symbols;
    return m.sigma.symbols.size() == 2 && m.sigma.index_of("0") >= 0 && m.sigma.index_of("1") >= 0 &&
           m.out.type == model::readout<rational>::kind::softmax &&
           std::find(outs.begin(), outs.end(), "0") != outs.end() &&
           std::find(outs.begin(), outs.end(), "1") != outs.end();
}

std::size_t output_index(const model::model<rational>& m, const char* sym) {
    const auto& outs = m.out.symbols;
    return static_cast<std::size_t>(std::find(outs.begin(), outs.end(), sym) - outs.begin());
}

/// A softmax predictor of the next closing bracket of 2DYCK: the alphabet is the four brackets
/// and the readout's two symbols are ")" and "]".
bool dyck2_predictor(const model::model<rational>& m) {
    const auto& outs = m.out.symbols;
    for (const char* b : {"(", ")", "[", "]"})
        if (m.sigma.index_of(b) < 0) return false;
    return m.sigma.symbols.size() == 4 && m.out.type == model::readout<rational>::kind::softmax &&
           outs.size() == 2 && std::find(outs.begin(), outs.end(), ")") != outs.end() &&
           std::find(outs.begin(), outs.end(), "]") != outs.end();
}

} // namespace

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
    constexpr bool remeasured = std::is_same_v<S, attention::soft_change_scalar>;
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
    ce.check = ce_comparison(numeric::compare(mean, floor));
    if (all_zero) {
        ce.eta_zero_exactly = true;
        ce.check = comparison::below;
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

namespace {

/// What one input contributes to its row.
template <class S> struct item_result {
    std::size_t pairs = 0;
    std::optional<S> max_dy, sum_dy, max_dp;
    std::optional<arb_ball> max_posterior;
    comparison vs_bound = comparison::not_applicable;
    comparison vs_posterior = comparison::not_applicable;
    comparison vs_prob = comparison::not_applicable;
    std::string input;
    std::size_t witness_position = 0;
    std::string witness_bound;
    // cross-entropy (binary predictors with a label)
    std::optional<S> ce_bits;
    bool correct = false;
};

struct row_context {
    long n = 0;
    std::vector<std::size_t> positions;
    std::optional<arb_ball> bound;      // divided by the divisor
    std::optional<arb_ball> prob_bound; // divided by the divisor
    arb_ball divisor;
    std::optional<lang::language> label;
    bool posterior = true; // compute the a-posteriori pair bound at this n
    std::size_t table_bytes = default_table_bytes; // per input being measured
};

/// The influence options of a row (every position of the row, the a-posteriori bound in the
/// enclosure kinds).
template <numeric::ExpScalar S> influence_options row_influence_options(const row_context& rc) {
    influence_options io;
    io.positions = rc.positions;
    io.posterior = numeric::is_enclosure<S>::value && rc.posterior;
    io.table_bytes = rc.table_bytes;
    return io;
}

/// What one input contributes to its row, from its whole profile (the parts concatenated in
/// position order).
template <numeric::ExpScalar S>
item_result<S> fold_input(const model::model<rational>& exact, const model::input_sequence& x,
                          const influence_profile<S>& prof, const row_context& rc,
                          const numeric::context& ctx) {
    item_result<S> r;
    r.input = model::format_input(exact.sigma, x);
    auto witness = [&](comparison& slot, comparison c, std::size_t pos, const char* which) {
        if (c == comparison::above && slot != comparison::above) {
            if (r.witness_bound.empty()) {
                r.witness_position = pos + 1;
                r.witness_bound = which;
            }
        }
        slot = merge(slot, c);
    };
    for (const auto& pr : prof.pairs) {
        ++r.pairs;
        r.max_dy = r.max_dy ? max_enclosure(*r.max_dy, pr.dy) : pr.dy;
        r.sum_dy = r.sum_dy ? S(*r.sum_dy + pr.dy) : pr.dy;
        const arb_ball dyb = as_ball(pr.dy, ctx);
        if (rc.bound) witness(r.vs_bound, from_order(numeric::compare(dyb, *rc.bound)), pr.position, "a-priori");
        if (pr.posterior && finite(*pr.posterior)) {
            r.max_posterior = r.max_posterior ? max_upper(*r.max_posterior, *pr.posterior)
                                              : upper(*pr.posterior);
            const arb_ball post = *pr.posterior / rc.divisor;
            witness(r.vs_posterior, from_order(numeric::compare(dyb, post)), pr.position, "posterior");
        }
        if (pr.dp_max) {
            r.max_dp = r.max_dp ? max_enclosure(*r.max_dp, *pr.dp_max) : *pr.dp_max;
            if (rc.prob_bound)
                witness(r.vs_prob, from_order(numeric::compare(as_ball(*pr.dp_max, ctx), *rc.prob_bound)),
                        pr.position, "probability");
        }
    }
    if (rc.label && prof.probabilities) {
        const int lab = binary_label(*rc.label, r.input);
        const auto& p = *prof.probabilities;
        const S& q = p[output_index(exact, lab ? "1" : "0")];
        const S& other = p[output_index(exact, lab ? "0" : "1")];
        r.ce_bits = S(-numeric::log(q) / numeric::log(numeric::from_int<S>(2, ctx)));
        r.correct = numeric::compare(q, other) == order::greater;
    }
    return r;
}

// --- exact text of the measured values (units cross threads and processes as text) ----------

std::string hex_bits(double x) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(bits));
    return buf;
}

[[noreturn]] void malformed(const std::string& text) {
    throw std::runtime_error("malformed measured value '" + text.substr(0, 80) + "'");
}

double from_hex_bits(const std::string& text, std::size_t at) {
    if (text.size() < at + 16) malformed(text);
    std::uint64_t bits = 0;
    for (std::size_t i = at; i < at + 16; ++i) {
        const char c = text[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) malformed(text);
        bits = (bits << 4) | static_cast<std::uint64_t>(d);
    }
    double x = 0;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

/// "PREC TEXT": the precision in bits, a space, the rest.
std::pair<long, std::string> split_precision(const std::string& text) {
    const auto sp = text.find(' ');
    if (sp == std::string::npos || sp == 0) malformed(text);
    long prec = 0;
    for (std::size_t i = 0; i < sp; ++i) {
        if (text[i] < '0' || text[i] > '9' || prec > (1L << 40)) malformed(text);
        prec = prec * 10 + (text[i] - '0');
    }
    numeric::require_working_precision(prec);
    return {prec, text.substr(sp + 1)};
}

} // namespace

template <class S> std::string exact_text(const S& x) {
    if constexpr (std::is_same_v<S, double>) {
        return hex_bits(x);
    } else if constexpr (std::is_same_v<S, numeric::dinterval>) {
        return hex_bits(x.lo()) + hex_bits(x.hi());
    } else if constexpr (std::is_same_v<S, numeric::mpfr_real>) {
        const std::string prec = std::to_string(mpfr_get_prec(x.raw())) + " ";
        if (!mpfr_number_p(x.raw())) return prec + (mpfr_nan_p(x.raw()) ? "@NaN@" : mpfr_sgn(x.raw()) < 0 ? "-@Inf@" : "@Inf@");
        mpfr_exp_t e = 0;
        char* s = mpfr_get_str(nullptr, &e, 16, 0, x.raw(), MPFR_RNDN);
        std::string digits(s);
        mpfr_free_str(s);
        const bool negative = !digits.empty() && digits.front() == '-';
        return prec + (negative ? "-0." + digits.substr(1) : "0." + digits) + "@" + std::to_string(e);
    } else {
        static_assert(std::is_same_v<S, arb_ball>);
        char* s = arb_dump_str(x.raw());
        std::string dump(s);
        flint_free(s);
        return std::to_string(x.precision()) + " " + dump;
    }
}

template <class S> S from_exact_text(const std::string& text) {
    if constexpr (std::is_same_v<S, double>) {
        if (text.size() != 16) malformed(text);
        return from_hex_bits(text, 0);
    } else if constexpr (std::is_same_v<S, numeric::dinterval>) {
        if (text.size() != 32) malformed(text);
        return numeric::dinterval(from_hex_bits(text, 0), from_hex_bits(text, 16));
    } else if constexpr (std::is_same_v<S, numeric::mpfr_real>) {
        const auto [prec, rest] = split_precision(text);
        numeric::mpfr_real x(prec);
        if (mpfr_set_str(x.raw(), rest.c_str(), 16, MPFR_RNDN) != 0) malformed(text);
        return x;
    } else {
        static_assert(std::is_same_v<S, arb_ball>);
        const auto [prec, rest] = split_precision(text);
        arb_ball x(prec);
        if (arb_load_str(x.raw(), rest.c_str()) != 0) malformed(text);
        return x;
    }
}

#define ATTNPROP_INSTANTIATE(S)                                                                    \
    template std::string exact_text<S>(const S&);                                                  \
    template S from_exact_text<S>(const std::string&);
ATTNPROP_EXP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE

namespace {

// --- a row's units ----------------------------------------------------------------------------

/// What every unit and the assembly of a row share: its positions, whether the a-posteriori
/// bound is computed, the label of the cross-entropy made from the pairs.
row_context basic_context(const model::model<rational>& exact, const sweep_options& opt, long n) {
    row_context rc;
    rc.n = n;
    rc.positions = sweep_positions(static_cast<std::size_t>(n), opt.positions);
    rc.posterior = n <= opt.posterior_max_n;
    if (opt.language && binary_alphabets(exact) &&
        (*opt.language == lang::language::parity || *opt.language == lang::language::first))
        rc.label = opt.language;
    return rc;
}

std::size_t inputs_of(const sweep_options& opt) { return std::max<std::size_t>(1, opt.inputs); }

/// Whether the row has a cross-entropy unit: the enumerated cube (PARITY, FIRST with n - 1 <=
/// exhaustive_cap) or the 2DYCK forced-bracket pairs. A sampled PARITY/FIRST cross-entropy is
/// made from the blocks' readouts instead.
bool has_cross_entropy_unit(const model::model<rational>& exact, const sweep_options& opt,
                            const row_context& rc) {
    if (rc.label) return static_cast<std::size_t>(rc.n - 1) <= opt.exhaustive_cap;
    return opt.language == lang::language::dyck2 && dyck2_predictor(exact);
}

/// What a change of the incremental method costs beside its set-up, relative to what
/// profile_cost counts (score evaluations: a change's update also evaluates exponentials and
/// the value maps, the set-up mostly scores). Measured on cc-parity at n = 1024, one input, one
/// and 128 positions: a change costs about 1/200 of the set-up in intervals (with the
/// a-posteriori bound), 1/90 in doubles and in balls, 1/11 in MPFR, where profile_cost says
/// 1/1024. The naive method's passes are what profile_cost counts.
template <class S> double incremental_change_weight(influence_method method) {
    if (method != influence_method::incremental) return 1;
    if constexpr (std::is_same_v<S, numeric::dinterval>) return 5;
    else if constexpr (std::is_same_v<S, numeric::mpfr_real>) return 90;
    else return 11;
}

/// The method of the whole row in S (every block and part of a block computes with it).
template <numeric::ExpScalar S>
influence_options whole_options(const model::model<rational>& exact, const model::model<S>& ms,
                                const row_context& rc) {
    influence_options io = row_influence_options<S>(rc);
    io.method = chosen_method(ms, exact, static_cast<std::size_t>(rc.n), io);
    return io;
}

/// The cross-entropy unit of a row at ctx's precision.
template <numeric::ExpScalar S>
cross_entropy_row cross_entropy_unit(const model::model<rational>& exact, const sweep_options& opt,
                                     const row_context& rc, const numeric::context& ctx) {
    const long n = rc.n;
    if (!rc.label) return forced_pair_cross_entropy<S>(exact, n, inputs_of(opt), opt.seed, opt.bound_divisor, ctx);
    cross_entropy_row ce;
    ce.n = n;
    ce.language = *rc.label;
    const auto cube = cube_cross_entropy(exact, n, *rc.label, ctx, std::max(1L, opt.bound_divisor));
    ce.exhaustive = true;
    ce.inputs = cube.cube;
    ce.correct = cube.correct;
    ce.mean_ce_bits = dec(cube.ce_bits);
    ce.accuracy = dec(arb_ball(numeric::from_int<arb_ball>(static_cast<long>(cube.correct), ctx) /
                               numeric::from_int<arb_ball>(static_cast<long>(cube.cube), ctx)));
    ce.eta = dec(cube.eta);
    ce.floor_bits = dec(cube.floor_bits);
    // CE >= floor is the claim: CE below the floor is the violation ("above" in the sense of
    // the comparisons: the measurement is on the wrong side of its bound).
    ce.check = cube.eta_zero_exactly ? comparison::below : ce_comparison(cube.ce_vs_floor);
    ce.eta_zero_exactly = cube.eta_zero_exactly;
    ce.mean_ce_approx = numeric::approx_double(cube.ce_bits);
    return ce;
}

/// Measures `units` of the row at n at ctx's precision with `threads` threads: a unit is one
/// piece, or (fewer units than threads) a block is cut into parts measured at once with the
/// method of the whole row and concatenated in position order, so every pair is the one its
/// block alone measures. Pieces after the first (in unit, then position order) that met an
/// undefined value may be skipped: the assembly stops at that one.
template <numeric::ExpScalar S>
std::vector<unit_result> measure_units_in(const model::model<rational>& exact, const sweep_options& opt,
                                          long n, const numeric::context& ctx,
                                          const std::vector<row_unit>& units, unsigned threads) {
    row_context rc = basic_context(exact, opt, n);
    unsigned T = static_cast<unsigned>(util::worker_count(static_cast<int>(threads)));
    const std::size_t parts = units.size() >= T ? 1 : (T + units.size() - 1) / units.size();
    struct piece {
        std::size_t unit, first, last;
    };
    std::vector<piece> pieces;
    for (std::size_t u = 0; u < units.size(); ++u) {
        const row_unit& ru = units[u];
        const std::size_t len = ru.last - ru.first;
        const std::size_t c = ru.cross_entropy || len == 0 ? 1 : std::min(parts, len);
        for (std::size_t p = 0; p < c; ++p)
            pieces.push_back({u, ru.first + p * len / c, ru.first + (p + 1) * len / c});
    }
    T = std::min<unsigned>(T, static_cast<unsigned>(pieces.size()));
    // The threads measure T pieces at once: they share the weight-table memory.
    rc.table_bytes = default_table_bytes / std::max(1u, T);
    const influence_options whole = whole_options<S>(exact, model::to_scalar<S>(exact, ctx), rc);
    std::vector<unit_result> out_pieces(pieces.size());
    std::atomic<std::size_t> first_undefined{pieces.size()};
    std::mutex progress_mutex;
    std::size_t pieces_done = 0;
    std::vector<std::optional<model::model<S>>> models(T);
    util::parallel_options pool;
    // Arb and MPFR keep per-thread caches of constants; free them before a worker thread ends.
    pool.on_thread_exit = [] {
        flint_cleanup();
        mpfr_free_cache();
    };
    util::parallel_for(pieces.size(), static_cast<int>(T), [&](std::size_t i, int w) {
        if (i > first_undefined.load()) return;
        const piece& pc = pieces[i];
        const row_unit& ru = units[pc.unit];
        unit_result& res = out_pieces[i];
        try {
            if (ru.cross_entropy) {
                res.cross_entropy = cross_entropy_unit<S>(exact, opt, rc, ctx);
            } else {
                auto& ms = models[static_cast<std::size_t>(w)];
                if (!ms) ms = model::to_scalar<S>(exact, ctx);
                const auto x = sweep_input(exact, n, ru.input, opt.seed, opt.language);
                influence_options io = whole;
                io.positions.assign(rc.positions.begin() + static_cast<long>(pc.first),
                                    rc.positions.begin() + static_cast<long>(pc.last));
                const auto prof = influence_profile_of(*ms, exact, x, ctx, io);
                res.pairs.reserve(prof.pairs.size());
                for (const auto& pr : prof.pairs) {
                    measured_pair mp;
                    mp.position = pr.position;
                    mp.dy = exact_text(pr.dy);
                    if (pr.dp_max) mp.dp_max = exact_text(*pr.dp_max);
                    if (pr.posterior) mp.posterior = exact_text(*pr.posterior);
                    res.pairs.push_back(std::move(mp));
                }
                if (prof.probabilities) {
                    res.probabilities.emplace();
                    for (const auto& p : *prof.probabilities) res.probabilities->push_back(exact_text(p));
                }
            }
        } catch (const numeric::undefined_error& e) {
            res.undefined = unit_undefined{e.message(), e.precision_may_resolve()};
            std::size_t cur = first_undefined.load();
            while (i < cur && !first_undefined.compare_exchange_weak(cur, i)) {
            }
        }
        if (opt.on_progress) {
            std::lock_guard<std::mutex> lock(progress_mutex);
            opt.on_progress(n, ++pieces_done, pieces.size());
        }
    }, pool);
    // The pieces of each unit concatenated in position order, up to the first undefined one.
    std::vector<unit_result> out(units.size());
    std::vector<bool> ended(units.size(), false);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        const std::size_t u = pieces[i].unit;
        if (ended[u]) continue;
        unit_result& r = out[u];
        unit_result& p = out_pieces[i];
        if (p.undefined) {
            r.undefined = std::move(p.undefined);
            ended[u] = true;
            continue;
        }
        if (p.cross_entropy) r.cross_entropy = std::move(p.cross_entropy);
        if (!r.probabilities && p.probabilities) r.probabilities = std::move(p.probabilities);
        for (auto& mp : p.pairs) r.pairs.push_back(std::move(mp));
    }
    return out;
}

template <numeric::ExpScalar S>
void fold_units(const model::model<rational>& exact, const sweep_options& opt, long n,
                const numeric::context& ctx, const row_context& rc, const std::vector<row_unit>& units,
                const std::vector<unit_result>& results, sweep_row& row);

/// The row of an attempt in S from its units' results (see assemble_row).
template <numeric::ExpScalar S>
row_measurement assemble_in(const model::model<rational>& exact, const sweep_options& opt, long n,
                            const numeric::context& ctx, const std::vector<row_unit>& units,
                            const std::vector<unit_result>& results) {
    if (results.size() != units.size())
        throw std::runtime_error("a row of " + std::to_string(units.size()) + " units assembled from " +
                                 std::to_string(results.size()) + " results");
    row_context rc = basic_context(exact, opt, n);
    rc.divisor = numeric::from_int<arb_ball>(std::max(1L, opt.bound_divisor), ctx);
    const bound_report rep = a_priori_bound(exact, n, ctx);
    std::optional<arb_ball> bound_true;
    if (rep.bound_at_n && finite(*rep.bound_at_n)) {
        bound_true = *rep.bound_at_n;
        rc.bound = *rep.bound_at_n / rc.divisor;
    }
    std::optional<arb_ball> prob_true;
    if (bound_true && rep.probability_factor && finite(*rep.probability_factor)) {
        prob_true = upper(*rep.probability_factor * *bound_true / numeric::from_int<arb_ball>(4, ctx));
        rc.prob_bound = *prob_true / rc.divisor;
    }
    const std::size_t K = inputs_of(opt);
    row_measurement m;
    sweep_row& row = m.row;
    row.n = n;
    row.inputs = K;
    row.positions = rc.positions.size();
    if (bound_true) row.bound = upper_decimal(*bound_true, 12);
    if (prob_true) row.prob_bound = upper_decimal(*prob_true, 12);
    // An undefined value ends the row, which keeps its a-priori bounds only: the first met in
    // the order of one measurement (the blocks in input and position order, the folding of the
    // inputs, the cross-entropy).
    auto undefined_row = [&](const std::string& message, bool may_resolve) {
        sweep_row u;
        u.n = n;
        u.inputs = K;
        u.positions = rc.positions.size();
        u.bound = row.bound;
        u.prob_bound = row.prob_bound;
        u.max_influence_approx = u.n_max_influence_approx = std::numeric_limits<double>::quiet_NaN();
        u.undefined = message;
        return row_measurement{std::move(u), may_resolve};
    };
    for (std::size_t u = 0; u < units.size(); ++u)
        if (!units[u].cross_entropy && results[u].undefined)
            return undefined_row(results[u].undefined->message, results[u].undefined->may_resolve);
    try {
        fold_units<S>(exact, opt, n, ctx, rc, units, results, row);
    } catch (const numeric::undefined_error& e) {
        return undefined_row(e.message(), e.precision_may_resolve());
    }
    if (has_cross_entropy_unit(exact, opt, rc)) {
        const auto ce = std::find_if(units.begin(), units.end(), [](const row_unit& u) { return u.cross_entropy; });
        const unit_result& r = results[static_cast<std::size_t>(ce - units.begin())];
        if (r.undefined) return undefined_row(r.undefined->message, r.undefined->may_resolve);
        if (!r.cross_entropy) throw std::runtime_error("a row's cross-entropy unit without its result");
        row.cross_entropy = *r.cross_entropy;
    }
    return m;
}

/// The measured part of a row in S (everything but the a-priori bounds and a cross-entropy
/// unit): the units' pairs folded per input, the inputs reduced in order.
template <numeric::ExpScalar S>
void fold_units(const model::model<rational>& exact, const sweep_options& opt, long n,
                const numeric::context& ctx, const row_context& rc, const std::vector<row_unit>& units,
                const std::vector<unit_result>& results, sweep_row& row) {
    const std::size_t K = inputs_of(opt);
    std::vector<influence_profile<S>> profiles(K);
    std::vector<bool> has_probabilities(K, false);
    for (std::size_t u = 0; u < units.size(); ++u) {
        if (units[u].cross_entropy) continue;
        const std::size_t k = units[u].input;
        auto& prof = profiles.at(k);
        if (!has_probabilities[k] && results[u].probabilities) {
            prof.probabilities.emplace();
            for (const auto& t : *results[u].probabilities) prof.probabilities->push_back(from_exact_text<S>(t));
            has_probabilities[k] = true;
        }
        for (const auto& mp : results[u].pairs) {
            influence_pair<S> pr;
            pr.position = mp.position;
            pr.dy = from_exact_text<S>(mp.dy);
            if (mp.dp_max) pr.dp_max = from_exact_text<S>(*mp.dp_max);
            if (mp.posterior) pr.posterior = from_exact_text<arb_ball>(*mp.posterior);
            prof.pairs.push_back(std::move(pr));
        }
    }
    std::vector<item_result<S>> items;
    items.reserve(K);
    for (std::size_t k = 0; k < K; ++k)
        items.push_back(fold_input(exact, sweep_input(exact, n, k, opt.seed, opt.language), profiles[k], rc, ctx));

    // Reduce in input order.
    std::optional<S> max_dy, sum_dy, max_dp, ce_sum;
    std::optional<arb_ball> max_post;
    std::size_t correct = 0;
    for (const auto& it : items) {
        row.pairs += it.pairs;
        if (it.max_dy) max_dy = max_dy ? max_enclosure(*max_dy, *it.max_dy) : *it.max_dy;
        if (it.sum_dy) sum_dy = sum_dy ? S(*sum_dy + *it.sum_dy) : *it.sum_dy;
        if (it.max_dp) max_dp = max_dp ? max_enclosure(*max_dp, *it.max_dp) : *it.max_dp;
        if (it.max_posterior) max_post = max_post ? max_upper(*max_post, *it.max_posterior) : *it.max_posterior;
        if (it.ce_bits) ce_sum = ce_sum ? S(*ce_sum + *it.ce_bits) : *it.ce_bits;
        correct += it.correct ? 1 : 0;
        for (auto [slot, c] : {std::pair{&row.below_bound, it.vs_bound},
                               std::pair{&row.below_posterior, it.vs_posterior},
                               std::pair{&row.prob_below_bound, it.vs_prob}}) {
            if (c == comparison::above && *slot != comparison::above && row.witness_input.empty()) {
                row.witness_input = it.input;
                row.witness_position = it.witness_position;
                row.witness_bound = it.witness_bound;
            }
            *slot = merge(*slot, c);
        }
    }
    const S zero = numeric::zero<S>(ctx);
    const S mx = max_dy ? *max_dy : zero;
    row.max_influence = dec(mx);
    row.mean_influence =
        dec(row.pairs ? S((sum_dy ? *sum_dy : zero) / numeric::from_int<S>(static_cast<long>(row.pairs), ctx)) : zero);
    const S nmx = numeric::from_int<S>(n, ctx) * mx;
    row.n_max_influence = dec(nmx);
    if constexpr (numeric::is_enclosure<S>::value) {
        const arb_ball b = as_ball(nmx, ctx);
        row.n_max_lower = lower_decimal(b, 12);
        row.n_max_upper = upper_decimal(b, 12);
    }
    row.max_influence_approx = numeric::approx_double(mx);
    row.n_max_influence_approx = numeric::approx_double(nmx);
    if (max_post) row.posterior_bound = upper_decimal(*max_post, 12);
    if (max_dp) row.max_prob_change = dec(*max_dp);

    if (rc.label && !has_cross_entropy_unit(exact, opt, rc)) {
        // η from the measured pairs only: a lower estimate of the supremum.
        cross_entropy_row ce;
        ce.n = n;
        ce.language = *rc.label;
        const S eta_measured = max_dp ? *max_dp : zero;
        const S eta = S(eta_measured / numeric::from_int<S>(std::max(1L, opt.bound_divisor), ctx));
        const S mean = S((ce_sum ? *ce_sum : zero) / numeric::from_int<S>(static_cast<long>(K), ctx));
        const S one = numeric::one<S>(ctx);
        const S floor = S(one - numeric::log(S(one + eta)) / numeric::log(numeric::from_int<S>(2, ctx)));
        ce.inputs = K;
        ce.correct = correct;
        ce.mean_ce_bits = dec(mean);
        ce.accuracy = dec(S(numeric::from_int<S>(static_cast<long>(correct), ctx) /
                            numeric::from_int<S>(static_cast<long>(K), ctx)));
        ce.eta = dec(eta_measured); // the floor uses eta / D
        ce.floor_bits = dec(floor);
        const order o = numeric::compare(mean, floor);
        ce.check = (o == order::less || o == order::unknown) ? comparison::undecided
                                                             : comparison::below;
        ce.mean_ce_approx = numeric::approx_double(mean);
        row.cross_entropy = ce;
    }
}

/// Whether a row's result may change in balls at more precision: a bound comparison is
/// undecided, or a value is undefined where an enclosure merely contains a pole.
bool needs_retry(const sweep_row& r, bool may_resolve) {
    return r.below_bound == comparison::undecided || r.below_posterior == comparison::undecided ||
           r.prob_below_bound == comparison::undecided || (r.undefined && may_resolve);
}

template <class S> const char* kind_name() { return numeric::scalar_traits<S>::name.data(); }

/// f(std::type_identity<S>{}) for the attempt's kind S.
template <class F> void with_attempt_kind(const row_attempt& a, F&& f) {
    if (!numeric::dispatch<numeric::has_exp>(a.scalar, std::forward<F>(f)))
        throw std::invalid_argument(std::string("the sweep measures in a kind with exp, not ") +
                                    to_string(a.scalar));
}

/// One row in the sweep's scalar: its attempts in order, each measured in units (threads over
/// the units), up to the first that decides the row.
sweep_row measure_final(const model::model<rational>& exact, const sweep_options& opt, long n) {
    const auto units = row_units(exact, opt, n);
    row_measurement m;
    for (const row_attempt& a : row_ladder(exact, opt, n)) {
        with_attempt_kind(a, [&]<class S>(std::type_identity<S>) {
            m = assemble_row(exact, opt, n, a,
                             measure_units_in<S>(exact, opt, n, numeric::context{a.bits}, units, opt.threads));
        });
        if (attempt_decides(a, m)) break;
    }
    return finish_row(std::move(m));
}

void run_rows(const model::model<rational>& exact, const sweep_options& opt, sweep_result& res) {
    for (long n : opt.ns) {
        if (!res.not_measured.empty() || numeric::stop_requested()) {
            res.not_measured.push_back(n);
            continue;
        }
        auto it = std::find_if(opt.reuse.begin(), opt.reuse.end(),
                               [&](const sweep_row& r) { return r.n == n; });
        sweep_row row;
        if (it != opt.reuse.end()) {
            row = *it;
            row.reused = true;
        } else try {
            row = measure_final(exact, opt, n);
        } catch (const numeric::interrupted_error&) {
            res.not_measured.push_back(n); // the row in progress is dropped whole
            continue;
        }
        if (opt.on_row) opt.on_row(row);
        res.rows.push_back(std::move(row));
    }
}

} // namespace

std::vector<row_attempt> row_ladder(const model::model<rational>& exact, const sweep_options& opt, long n) {
    std::vector<row_attempt> ladder;
    auto escalate = [&](sweep_scalar s) {
        ladder.push_back({s, opt.precision});
        for (long b = opt.precision * 2; b <= opt.precision_cap; b *= 2) ladder.push_back({s, b});
    };
    if (!opt.scalar.is_automatic()) {
        bool escalates = false;
        with_attempt_kind(row_attempt{opt.scalar, opt.precision}, [&]<class S>(std::type_identity<S>) {
            escalates = numeric::is_enclosure<S>::value && numeric::scalar_traits<S>::variable_precision;
        });
        if (escalates) escalate(opt.scalar);
        else ladder.push_back({opt.scalar, opt.precision});
        return ladder;
    }
    // The a-posteriori bound needs the incremental kernel's states to be cheap in intervals
    // (posterior_cache); without them (a model the incremental method does not take) it is two
    // traces and O(n²) per pair, which balls do as well as intervals.
    if (n > opt.posterior_max_n || incremental_applies(exact))
        ladder.push_back({sweep_scalar::of<numeric::dinterval>(), opt.precision});
    escalate(sweep_scalar::of<arb_ball>());
    return ladder;
}

std::vector<row_unit> row_units(const model::model<rational>& exact, const sweep_options& opt, long n) {
    const row_context rc = basic_context(exact, opt, n);
    const std::size_t P = rc.positions.size();
    // Blocks per input: the forward pass and tables of an input are repeated by every block of
    // it, so an input is cut only where that set-up is a small part of its work (the method of
    // the first attempt decides the costs).
    std::size_t blocks = 1;
    const row_attempt first = row_ladder(exact, opt, n).front();
    with_attempt_kind(first, [&]<class S>(std::type_identity<S>) {
        const numeric::context ctx{first.bits};
        const influence_method method = whole_options<S>(exact, model::to_scalar<S>(exact, ctx), rc).method;
        const double changes = static_cast<double>(P) * static_cast<double>(exact.sigma.symbols.size() - 1);
        const double setup = profile_cost(exact, static_cast<std::size_t>(n), 0, method);
        const double per_change = profile_cost(exact, static_cast<std::size_t>(n), 1, method) - setup;
        const double total = setup + changes * per_change * incremental_change_weight<S>(method);
        const double affordable = setup > 0 ? std::floor(0.1 * total / setup) : 0;
        blocks = std::max<std::size_t>(1, std::min<std::size_t>({P, 16, 1 + static_cast<std::size_t>(std::min(affordable, 64.0))}));
    });
    std::vector<row_unit> units;
    for (std::size_t k = 0; k < inputs_of(opt); ++k)
        for (std::size_t b = 0; b < blocks; ++b)
            units.push_back({k, b * P / blocks, (b + 1) * P / blocks, false});
    if (has_cross_entropy_unit(exact, opt, rc)) units.push_back({0, 0, 0, true});
    return units;
}

double row_unit_cost(const model::model<rational>& exact, const sweep_options& opt, long n,
                     const row_unit& u) {
    const double len = static_cast<double>(n);
    const double pass = profile_cost(exact, static_cast<std::size_t>(n), 0, influence_method::naive);
    if (u.cross_entropy) {
        // The cube: 2^(n-1) passes; the forced pairs: two per input.
        const bool cube = opt.language && *opt.language != lang::language::dyck2;
        return pass * (cube ? std::ldexp(1.0, static_cast<int>(std::min(len - 1, 60.0)))
                            : 2.0 * static_cast<double>(inputs_of(opt)));
    }
    const double changes = static_cast<double>(u.last - u.first) * static_cast<double>(exact.sigma.symbols.size() - 1);
    return pass * (changes + 1);
}

unit_result measure_unit(const model::model<rational>& exact, const sweep_options& opt, long n,
                         const row_attempt& attempt, const row_unit& unit, unsigned threads) {
    unit_result r;
    with_attempt_kind(attempt, [&]<class S>(std::type_identity<S>) {
        r = std::move(measure_units_in<S>(exact, opt, n, numeric::context{attempt.bits}, {unit}, threads).front());
    });
    return r;
}

row_measurement assemble_row(const model::model<rational>& exact, const sweep_options& opt, long n,
                             const row_attempt& attempt, const std::vector<unit_result>& results) {
    row_measurement m;
    with_attempt_kind(attempt, [&]<class S>(std::type_identity<S>) {
        using traits = numeric::scalar_traits<S>;
        const numeric::context ctx{attempt.bits};
        m = assemble_in<S>(exact, opt, n, ctx, row_units(exact, opt, n), results);
        // The row's precision is the context's, or an enclosure's own where the context does
        // not set it (intervals: 53 bits).
        m.row.precision = numeric::is_enclosure<S>::value && !traits::variable_precision
                              ? traits::precision(numeric::zero<S>(ctx))
                              : attempt.bits;
        m.row.measured_in = kind_name<S>();
    });
    return m;
}

bool attempt_decides(const row_attempt& attempt, const row_measurement& m) {
    if (attempt.scalar.is<numeric::dinterval>()) {
        // A 2DYCK forced-pair cross-entropy is a theorem check, which balls may decide where
        // intervals do not. (The enumerated cube is computed in balls already; a sampled
        // PARITY/FIRST check is never more than undecided, and is often an equality.)
        const auto& ce = m.row.cross_entropy;
        const bool ce_undecided = ce && ce->language == lang::language::dyck2 &&
                                  ce->check == comparison::undecided;
        return !needs_retry(m.row, m.may_resolve) && !ce_undecided;
    }
    return !needs_retry(m.row, m.may_resolve);
}

sweep_row finish_row(row_measurement m) {
    if (m.row.undefined && m.may_resolve)
        *m.row.undefined += " (not resolved up to " + std::to_string(m.row.precision) + " bits)";
    return std::move(m.row);
}

std::vector<std::size_t> sweep_positions(std::size_t n, std::size_t count) {
    std::vector<std::size_t> out;
    if (n < 2) return out;
    const std::size_t m = n - 1;
    if (count == 0 || count >= m) {
        for (std::size_t i = 0; i < m; ++i) out.push_back(i);
        return out;
    }
    if (count == 1) return {0};
    for (std::size_t t = 0; t < count; ++t) {
        const std::size_t p = (t * (m - 1) * 2 + (count - 1)) / (2 * (count - 1)); // rounded
        if (out.empty() || out.back() != p) out.push_back(p);
    }
    return out;
}

model::input_sequence sweep_input(const model::model<rational>& m, long n, std::size_t k,
                                  std::uint64_t seed, std::optional<lang::language> language) {
    std::mt19937_64 rng(splitmix(splitmix(splitmix(seed) ^ static_cast<std::uint64_t>(n)) ^ k));
    const std::size_t len = static_cast<std::size_t>(n - 1);
    if (language) return model::parse_input(m, lang::uniform_word(*language, len, rng));
    model::input_sequence x(len + 1);
    const auto sigma = static_cast<std::uint64_t>(m.sigma.symbols.size());
    for (std::size_t i = 0; i < len; ++i) x[i] = static_cast<int>(rng() % sigma);
    x[len] = m.sigma.eos_index();
    return x;
}

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

std::optional<std::string> certified_growth(const std::vector<sweep_row>& rows) {
    // The pair of rows a < b (by n) with the largest certain ratio lower(b) / upper(a) > 1.
    std::optional<std::string> best;
    std::optional<rational> best_ratio;
    for (std::size_t a = 0; a < rows.size(); ++a) {
        if (rows[a].undefined || !rows[a].n_max_upper) continue;
        const auto ua = numeric::parse_rational(*rows[a].n_max_upper);
        if (!ua || *ua <= 0) continue;
        for (std::size_t b = 0; b < rows.size(); ++b) {
            if (rows[b].n <= rows[a].n || rows[b].undefined || !rows[b].n_max_lower) continue;
            const auto lb = numeric::parse_rational(*rows[b].n_max_lower);
            if (!lb || *lb <= *ua) continue;
            const rational ratio = *lb / *ua;
            if (best_ratio && ratio <= *best_ratio) continue;
            best_ratio = ratio;
            // The factor printed rounded down to 3 significant digits (a lower bound: the
            // double is nudged down before truncating).
            const double f = numeric::approx_double(ratio) * (1 - 1e-12);
            const double scale = std::pow(10.0, 2 - std::floor(std::log10(f)));
            std::ostringstream os;
            os.precision(3);
            os << std::floor(f * scale) / scale;
            best = "n * max influence certainly grew from <= " + *rows[a].n_max_upper + " at n = " +
                   std::to_string(rows[a].n) + " to >= " + *rows[b].n_max_lower + " at n = " +
                   std::to_string(rows[b].n) + " (a factor >= " + os.str() + ")";
        }
    }
    return best;
}

void decide_sweep(sweep_result& r, double tol) {
    // Undefined rows: a value of the model does not exist at those n. The rest is decided on
    // the defined rows alone (fits included); only a rigorous failure among them (a measurement
    // above its bound, a cross-entropy below its floor) outranks undefined, and a model that is
    // undefined somewhere does not "vanish".
    r.fit_left_out.clear();
    if (std::any_of(r.rows.begin(), r.rows.end(), [](const sweep_row& row) { return row.undefined.has_value(); })) {
        sweep_result defined = r;
        defined.rows.clear();
        std::string lengths;
        const std::string* first = nullptr;
        for (const auto& row : r.rows) {
            if (!row.undefined) {
                defined.rows.push_back(row);
                continue;
            }
            r.fit_left_out.push_back(row.n);
            lengths += (lengths.empty() ? "" : ", ") + std::to_string(row.n);
            if (!first) first = &*row.undefined;
        }
        decide_sweep(defined, tol);
        r.fit = defined.fit;
        r.fit_upper = defined.fit_upper;
        if (defined.verdict == sweep_verdict::fails) {
            r.verdict = sweep_verdict::fails;
            r.explanation = defined.explanation + "; the model is undefined at n = " + lengths;
            r.influence_vanished = defined.influence_vanished;
        } else {
            r.verdict = sweep_verdict::undefined;
            r.explanation = "the model is undefined at n = " + lengths + ": " + *first;
            r.influence_vanished = numeric::indeterminate;
        }
        return;
    }
    std::vector<double> ns, ys, nu, yu;
    for (const auto& row : r.rows) {
        ns.push_back(static_cast<double>(row.n));
        ys.push_back(row.max_influence_approx);
    }
    r.fit = fit_loglog(ns, ys);
    const std::size_t half = r.rows.size() / 2;
    for (std::size_t t = half; t < r.rows.size(); ++t) {
        nu.push_back(ns[t]);
        yu.push_back(ys[t]);
    }
    r.fit_upper = fit_loglog(nu, yu);

    std::string failed, unknown;
    for (const auto& h : r.hypotheses) {
        if (certainly(!h.holds)) failed += (failed.empty() ? "" : ", ") + h.name;
        if (!is_certain(h.holds)) unknown += (unknown.empty() ? "" : ", ") + h.name;
    }
    bool above = false, undecided = false, ce_above = false, no_bound = false, ce_pairs = false;
    std::string ce_undecided; // lengths where the cross-entropy corollary is undecided
    long above_n = 0;
    for (const auto& row : r.rows) {
        // A change above the bound over every input is a finding; an undecided comparison with
        // it (a measurement that agrees with a tight bound to every printed digit) is not.
        for (comparison c : {row.below_certified, row.prob_below_certified})
            if (c == comparison::above && !above) {
                above = true;
                above_n = row.n;
            }
        for (comparison c : {row.below_bound, row.below_posterior, row.prob_below_bound}) {
            if (c == comparison::above && !above) {
                above = true;
                above_n = row.n;
            }
            undecided = undecided || c == comparison::undecided;
        }
        no_bound = no_bound || row.below_bound == comparison::not_applicable;
        if (row.cross_entropy) {
            if (row.cross_entropy->check == comparison::above && !ce_above) {
                ce_above = true;
                ce_pairs = row.cross_entropy->language == lang::language::dyck2;
                if (!above) above_n = row.n;
            }
            // The corollary is reported per row; an undecided one (sampled, or CE equal to its
            // floor, as for Chiang & Cholak's PARITY where every input has the same margin) does
            // not make the influence verdict undecided.
            if (row.cross_entropy->check == comparison::undecided)
                ce_undecided += (ce_undecided.empty() ? "" : ", ") + std::to_string(row.n);
        }
    }
    r.influence_vanished = numeric::indeterminate;
    r.growth = certified_growth(r.rows);
    const auto fit_for_trend = r.fit_upper && r.fit_upper->points >= 2 ? r.fit_upper : r.fit;
    if (ce_above) {
        r.verdict = sweep_verdict::fails;
        r.explanation = std::string("the cross-entropy over the ") +
                        (ce_pairs ? "2DYCK forced-bracket pairs" : "enumerated cube") +
                        " is below 1 - log2(1 + eta) at n = " + std::to_string(above_n);
    } else if (!failed.empty()) {
        r.verdict = sweep_verdict::hypothesis_violated;
        if (fit_for_trend) r.influence_vanished = fit_for_trend->slope <= -1 + tol;
        // Lemma 5 makes no claim; what is certain is a growth of n * influence, if any, and
        // the rate is a measurement.
        r.explanation = "hypotheses fail: " + failed + ", so Lemma 5 makes no claim";
        if (r.growth) r.explanation += "; " + *r.growth;
        r.explanation += std::string("; rate (a measurement): ") +
                         (!is_certain(r.influence_vanished) ? std::string("no fit")
                          : certainly(r.influence_vanished) ? std::string("consistent with 1/n (slope <= -1 + tol)")
                                                  : std::string("not consistent with 1/n (slope > -1 + tol)"));
    } else if (above && unknown.empty()) {
        r.verdict = sweep_verdict::fails;
        r.explanation = "a measured change is above its bound at n = " + std::to_string(above_n);
    } else if (!unknown.empty()) {
        r.verdict = sweep_verdict::undecided;
        r.explanation = "hypotheses undecided: " + unknown;
    } else if (undecided) {
        r.verdict = sweep_verdict::undecided;
        r.explanation = "some comparison is undecided at this precision";
    } else if (no_bound) {
        r.verdict = sweep_verdict::undecided;
        r.explanation = "no finite a-priori bound at some n";
    } else {
        r.verdict = sweep_verdict::holds;
        r.explanation = "every hypothesis holds and every measurement is below its bounds";
    }
    if (!ce_undecided.empty() && !ce_above)
        r.explanation += "; the cross-entropy corollary is undecided at n = " + ce_undecided;
}

void check_sweep(const model::model<rational>& exact, const sweep_options& opt) {
    if (exact.attention != model::attention_kind::soft)
        throw precondition_error("the influence sweep needs a soft-attention model; " + exact.name +
                                    " is " + model::to_string(exact.attention));
    for (long n : opt.ns) {
        if (n < 2) throw precondition_error("n must be at least 2, got " + std::to_string(n));
        model::check_length(exact, n);
        attention::check_forward_work(exact, static_cast<std::size_t>(n)); // before the first row
    }
    if (opt.language) {
        const std::string alpha = lang::alphabet_of(*opt.language);
        for (char ch : alpha)
            if (exact.sigma.index_of(std::string(1, ch)) < 0)
                throw precondition_error(std::string("the alphabet of ") + lang::to_string(*opt.language) +
                                            " is not the model's (symbol '" + ch + "' missing)");
    }
}

sweep_row sweep_row_at(const model::model<rational>& exact, const sweep_options& opt, long n) {
    return measure_final(exact, opt, n);
}

sweep_result sweep_from_rows(const model::model<rational>& exact, const sweep_options& opt,
                             std::vector<sweep_row> rows, std::vector<long> not_measured) {
    sweep_result res;
    res.model_name = exact.name;
    res.hypotheses = check_hypotheses(exact);
    res.rows = std::move(rows);
    res.not_measured = std::move(not_measured);
    decide_sweep(res, opt.slope_tolerance);
    if (!res.not_measured.empty()) {
        std::string left;
        for (long n : res.not_measured) left += (left.empty() ? "" : ", ") + std::to_string(n);
        res.explanation += "; interrupted: n = " + left + " not measured";
    }
    return res;
}

sweep_result influence_sweep(const model::model<rational>& exact, const sweep_options& opt) {
    check_sweep(exact, opt);
    sweep_result res;
    run_rows(exact, opt, res);
    return sweep_from_rows(exact, opt, std::move(res.rows), std::move(res.not_measured));
}

} // namespace attnprop::analysis
