// The bounds over every input next to a sweep's measurements (all_inputs.hpp,
// add_every_input_bounds): Δ̄(n) and η̄(n) per row, the measured changes against them, and the
// cross-entropy corollary decided by the certified floor.
#include "soft_influence/all_inputs.hpp"
#include "soft_influence/norms.hpp"

#include <arb.h>

#include <cmath>
#include <cstdlib>

namespace attnprop::analysis {

namespace {

using numeric::arb_ball;

/// The ball a certified decimal text denotes ("0.0193 +/- 2.1e-13", "0.5", "1.2e-5"): Arb's
/// own reading, so the value stays inside. std::nullopt for a text Arb cannot read.
std::optional<arb_ball> parse_ball(const std::string& text, long prec) {
    if (text.empty()) return std::nullopt;
    arb_ball b(prec);
    if (arb_set_str(b.raw(), text.c_str(), prec) != 0) return std::nullopt;
    return b;
}

/// The largest measured change n·max against the scaled bound n·Δ̄(n): failed only when the
/// row's certified lower end of n·max (enclosure kinds) exceeds it; passed when its upper end
/// is at most it. A rounded kind's value (no certified ends) is compared as if exact, with a
/// relative 10^-9 left undecided.
verdict influence_against(const sweep_row& row, double n_bound) {
    if (!std::isfinite(n_bound)) return verdict::not_applicable;
    const arb_ball b = arb_ball::from_double(n_bound, numeric::context{128});
    if (row.n_max_lower && row.n_max_upper) {
        const auto lo = parse_ball(*row.n_max_lower, 128), hi = parse_ball(*row.n_max_upper, 128);
        if (!lo || !hi) return verdict::undecided;
        if (arf_cmp(arb_midref(upper(*hi).raw()), arb_midref(b.raw())) <= 0) return verdict::passed;
        if (arf_cmp(arb_midref(lower(*lo).raw()), arb_midref(b.raw())) > 0) return verdict::failed;
        return verdict::undecided;
    }
    const double v = std::strtod(row.n_max_influence.c_str(), nullptr);
    if (v * (1 + 1e-9) <= n_bound) return verdict::passed;
    if (v * (1 - 1e-9) > n_bound) return verdict::failed;
    return verdict::undecided;
}

/// A probability change (a 12-digit decimal of the measurement, not an enclosure) against its
/// bound: passed when clearly so (relative 10^-6), otherwise undecided; never failed, which
/// needs a certified measurement.
verdict prob_against(const std::string& measured, double bound) {
    if (measured.empty() || !std::isfinite(bound)) return verdict::not_applicable;
    const double v = std::strtod(measured.c_str(), nullptr);
    return v * (1 + 1e-6) <= bound ? verdict::passed : verdict::undecided;
}

} // namespace

std::vector<all_inputs_result> add_every_input_bounds(const model::model<numeric::rational>& m,
                                                      sweep_result& r, const all_inputs_options& opt,
                                                      double slope_tolerance) {
    // Every bound first (a stop request may interrupt them), then the rows change.
    std::vector<all_inputs_result> out;
    for (const auto& row : r.rows) out.push_back(all_inputs_at(m, row.n, opt));
    bool certified_ce = false;
    for (std::size_t t = 0; t < r.rows.size(); ++t) {
        auto& row = r.rows[t];
        const all_inputs_result& b = out[t];
        if (b.applies && std::isfinite(b.n_influence)) {
            const double bound = b.influence_at(row.n);
            row.certified_bound = bound_decimal(bound, 12);
            if (!row.undefined) {
                row.below_certified = influence_against(row, b.n_influence);
            }
            if (const auto eta = b.prob_at(row.n); eta && std::isfinite(*eta)) {
                row.certified_prob_bound = bound_decimal(*eta, 12);
                if (row.max_prob_change && !row.undefined) row.prob_below_certified = prob_against(*row.max_prob_change, *eta);
                if (row.cross_entropy) {
                    auto& c = *row.cross_entropy;
                    const arb_ball floor = cross_entropy_floor(*eta);
                    c.certified_eta = row.certified_prob_bound;
                    c.certified_floor_bits = lower_decimal(floor, 12);
                    c.certified = true;
                    certified_ce = true;
                    if (c.exhaustive || c.language == lang::language::dyck2) {
                        // The enumerated (or forced-pair) mean cross-entropy is a mean over
                        // inputs whose pairs change by at most η̄: below the floor would
                        // contradict the bound.
                        const auto ce = parse_ball(c.mean_ce_bits, 128);
                        if (ce && arf_cmp(arb_midref(upper(*ce).raw()), arb_midref(floor.raw())) < 0)
                            c.check = verdict::failed;
                        else if (c.check != verdict::failed)
                            c.check = verdict::passed;
                    } else {
                        // Sampled: the statement is about the mean over every input, which the
                        // certified floor proves; the sample is a measurement beside it.
                        c.check = verdict::passed;
                    }
                }
            }
        }
    }
    decide_sweep(r, slope_tolerance);
    if (certified_ce && r.verdict != verdict::failed)
        r.explanation += "; the cross-entropy corollary is decided at every n by the floor 1 - log2(1 + eta) "
                         "with eta bounded over every input";
    return out;
}

} // namespace attnprop::analysis
