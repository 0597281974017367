#include "soft_influence/sweep_units.hpp"

#include "attention/work.hpp"
#include "numeric/filter.hpp"
#include "soft_influence/bounds.hpp"
#include "soft_influence/influence.hpp"
#include "soft_influence/norms.hpp"
#include "soft_influence/sweep_internal.hpp"
#include "util/thread_pool.hpp"

#include <flint/flint.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace attnprop::analysis {

using namespace sweep_detail;

namespace {


/// What one input contributes to its row.
template <class S> struct item_result {
    std::size_t pairs = 0;
    std::optional<S> max_dy, sum_dy, max_dp;
    std::optional<arb_ball> max_posterior;
    verdict vs_bound = verdict::not_applicable;
    verdict vs_posterior = verdict::not_applicable;
    verdict vs_prob = verdict::not_applicable;
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
    auto witness = [&](verdict& slot, verdict c, std::size_t pos, const char* which) {
        if (c == verdict::failed && slot != verdict::failed) {
            if (r.witness_bound.empty()) {
                r.witness_position = pos + 1;
                r.witness_bound = which;
            }
        }
        slot = conjunction(slot, c);
    };
    for (const auto& pr : prof.pairs) {
        ++r.pairs;
        r.max_dy = r.max_dy ? max_enclosure(*r.max_dy, pr.dy) : pr.dy;
        r.sum_dy = r.sum_dy ? S(*r.sum_dy + pr.dy) : pr.dy;
        const arb_ball dyb = as_ball(pr.dy, ctx);
        if (rc.bound) witness(r.vs_bound, bound_verdict(numeric::compare(dyb, *rc.bound)), pr.position, "a-priori");
        if (pr.posterior && finite(*pr.posterior)) {
            r.max_posterior = r.max_posterior ? max_upper(*r.max_posterior, *pr.posterior)
                                              : upper(*pr.posterior);
            const arb_ball post = *pr.posterior / rc.divisor;
            witness(r.vs_posterior, bound_verdict(numeric::compare(dyb, post)), pr.position, "posterior");
        }
        if (pr.dp_max) {
            r.max_dp = r.max_dp ? max_enclosure(*r.max_dp, *pr.dp_max) : *pr.dp_max;
            if (rc.prob_bound)
                witness(r.vs_prob, bound_verdict(numeric::compare(as_ball(*pr.dp_max, ctx), *rc.prob_bound)),
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

// --- a row's units ----------------------------------------------------------------------------


/// What every unit and the assembly of a row share: its positions, whether the a-posteriori
/// bound is computed, the label of the cross-entropy made from the pairs.
row_context basic_context(const model::model<rational>& exact, const sweep_options& opt, long n) {
    row_context rc;
    rc.n = n;
    rc.positions = sweep_positions(static_cast<std::size_t>(n), opt.positions);
    // posterior_cache is derived for unmasked layers; a masked model's pair bound reads two
    // traced passes per pair (O(n^3) per input), which a sweep does not ask for.
    rc.posterior = n <= opt.posterior_max_n && !model::any_masked(exact) &&
                   bounds_for(exact.attention).pair;
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
/// 1/1024. The naive method's passes are what profile_cost counts. The weight follows the
/// incremental kernel S takes: the certified interval kernel (incremental_interval_kernel), the
/// raw MPFR kernels (incremental_raw_kernels), or the generic one.
template <class S> double incremental_change_weight(influence_method method) {
    if (method != influence_method::incremental) return 1;
    if constexpr (attention::incremental_interval_kernel<S>) return 5;
    else if constexpr (attention::incremental_raw_kernels<S>) return 90;
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
    // CE >= floor is the claim: CE below the floor fails it.
    ce.check = cube.eta_zero_exactly ? verdict::passed : floor_verdict(cube.ce_vs_floor);
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
                    mp.dy = numeric::exact_text(pr.dy);
                    if (pr.dp_max) mp.dp_max = numeric::exact_text(*pr.dp_max);
                    if (pr.posterior) mp.posterior = numeric::exact_text(*pr.posterior);
                    res.pairs.push_back(std::move(mp));
                }
                if (prof.probabilities) {
                    res.probabilities.emplace();
                    for (const auto& p : *prof.probabilities) res.probabilities->push_back(numeric::exact_text(p));
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
    if (rep.bound_at_n && finite(*rep.bound_at_n) && bounds_for(exact.attention).a_priori) {
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
            for (const auto& t : *results[u].probabilities) prof.probabilities->push_back(numeric::from_exact_text<S>(t));
            has_probabilities[k] = true;
        }
        for (const auto& mp : results[u].pairs) {
            influence_pair<S> pr;
            pr.position = mp.position;
            pr.dy = numeric::from_exact_text<S>(mp.dy);
            if (mp.dp_max) pr.dp_max = numeric::from_exact_text<S>(*mp.dp_max);
            if (mp.posterior) pr.posterior = numeric::from_exact_text<arb_ball>(*mp.posterior);
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
            if (c == verdict::failed && *slot != verdict::failed && row.witness_input.empty()) {
                row.witness_input = it.input;
                row.witness_position = it.witness_position;
                row.witness_bound = it.witness_bound;
            }
            *slot = conjunction(*slot, c);
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
        // 15 digits: the certified text of the two bounds (report's certified_influence) then
        // keeps the 12 digits the ball certifies.
        row.n_max_lower = lower_decimal(b, 15);
        row.n_max_upper = upper_decimal(b, 15);
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
        ce.check = (o == order::less || o == order::unknown) ? verdict::undecided
                                                             : verdict::passed;
        ce.mean_ce_approx = numeric::approx_double(mean);
        row.cross_entropy = ce;
    }
}

/// Whether a row's result may change in balls at more precision: a bound verdict is
/// undecided, or a value is undefined where an enclosure merely contains a pole.
bool needs_retry(const sweep_row& r, bool may_resolve) {
    return r.below_bound == verdict::undecided || r.below_posterior == verdict::undecided ||
           r.prob_below_bound == verdict::undecided || (r.undefined && may_resolve);
}

template <class S> const char* kind_name() { return numeric::scalar_traits<S>::name.data(); }

/// f(std::type_identity<S>{}) for the attempt's kind S.
template <class F> void with_attempt_kind(const row_attempt& a, F&& f) {
    if (!numeric::dispatch<numeric::has_exp>(a.kind, std::forward<F>(f)))
        throw std::invalid_argument(std::string("the sweep measures in a kind with exp, not ") +
                                    to_string(a.kind));
}

} // namespace

sweep_row sweep_row_at(const model::model<rational>& exact, const sweep_options& opt, long n) {
    // The row's attempts are the rungs of the filter (row_ladder), each measured in units
    // (threads over the units), up to the first whose row attempt_decides says is final.
    const auto units = row_units(exact, opt, n);
    const auto ladder = row_ladder(exact, opt, n);
    auto f = numeric::run_filter(
        ladder,
        [&](const row_attempt& a, std::size_t) -> std::optional<row_measurement> {
            row_measurement m;
            with_attempt_kind(a, [&]<class S>(std::type_identity<S>) {
                m = assemble_row(exact, opt, n, a,
                                 measure_units_in<S>(exact, opt, n, numeric::context{a.bits}, units, opt.threads));
            });
            return m;
        },
        [&](const row_measurement& m, std::size_t i) {
            return attempt_decides(ladder[i], m, opt.digits) ? numeric::filter_step::decided : numeric::filter_step::escalate;
        });
    return finish_row(std::move(f.answer));
}

std::vector<row_attempt> row_ladder(const model::model<rational>& exact, const sweep_options& opt, long n) {
    // A kind measured once, or (an enclosure of variable precision: balls) at the sweep's
    // precision doubled while it stays <= precision_cap.
    auto rungs = [&](sweep_scalar s) {
        const numeric::kind_info& k = s.info();
        if (!k.has_exp)
            throw std::invalid_argument(std::string("the sweep measures in a kind with exp, not ") +
                                        to_string(s));
        const bool escalates = k.kind == numeric::scalar_kind::enclosure && k.variable_precision;
        return numeric::doubling_ladder(s, opt.precision, escalates ? opt.precision_cap : 0);
    };
    if (!opt.scalar.is_automatic()) return rungs(opt.scalar);
    // The a-posteriori bound needs the incremental kernel's states to be cheap in intervals
    // (posterior_cache); without them (a model the incremental method does not take) it is two
    // traces and O(n²) per pair, which balls do as well as intervals.
    std::vector<row_attempt> ladder;
    if (n > opt.posterior_max_n || incremental_applies(exact))
        ladder = rungs(sweep_scalar::of<numeric::dinterval>());
    for (const auto& r : rungs(sweep_scalar::of<arb_ball>())) ladder.push_back(r);
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

/// Whether an enclosure's row prints fewer certified digits than asked for (sweep_options::
/// digits) in a measurement people read: the digits are then worth another rung.
bool digits_short(const sweep_row& r, int digits) {
    if (digits <= 0 || r.undefined) return false;
    auto short_of = [&](const std::string& t) {
        const int d = numeric::certified_digits(t);
        return d >= 0 && d < digits;
    };
    if (short_of(r.max_influence) || short_of(r.n_max_influence)) return true;
    if (r.max_prob_change && short_of(*r.max_prob_change)) return true;
    if (const auto& c = r.cross_entropy)
        return short_of(c->mean_ce_bits) || short_of(c->eta) || short_of(c->floor_bits);
    return false;
}

bool attempt_decides(const row_attempt& attempt, const row_measurement& m, int digits) {
    if (needs_retry(m.row, m.may_resolve)) return false;
    if (attempt.kind.info().kind == numeric::scalar_kind::enclosure && digits_short(m.row, digits))
        return false;
    // A 2DYCK forced-pair cross-entropy is a theorem check, which an enclosure of variable
    // precision (balls) may decide where one of fixed precision (intervals) does not. (The
    // enumerated cube is computed in balls already; a sampled PARITY/FIRST check is never more
    // than undecided, and is often an equality.)
    const numeric::kind_info& k = attempt.kind.info();
    const auto& ce = m.row.cross_entropy;
    const bool ce_undecided = ce && ce->language == lang::language::dyck2 && ce->check == verdict::undecided;
    return !(ce_undecided && k.kind == numeric::scalar_kind::enclosure && !k.variable_precision);
}

sweep_row finish_row(row_measurement m) {
    if (m.row.undefined && m.may_resolve)
        *m.row.undefined += " (not resolved up to " + std::to_string(m.row.precision) + " bits)";
    return std::move(m.row);
}

} // namespace attnprop::analysis
