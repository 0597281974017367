#include "soft_influence/sweep.hpp"

#include "attention/work.hpp"
#include "lang/languages.hpp"
#include "numeric/interrupt.hpp"
#include "soft_influence/bounds.hpp"
#include "soft_influence/sweep_internal.hpp"
#include "soft_influence/sweep_units.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace attnprop::analysis {

using namespace sweep_detail;

namespace {

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
            row = sweep_row_at(exact, opt, n);
        } catch (const numeric::interrupted_error&) {
            res.not_measured.push_back(n); // the row in progress is dropped whole
            continue;
        }
        if (opt.on_row) opt.on_row(row);
        res.rows.push_back(std::move(row));
    }
}

} // namespace

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
        if (defined.verdict == verdict::failed) {
            r.verdict = verdict::failed;
            r.explanation = defined.explanation + "; the model is undefined at n = " + lengths;
            r.influence_vanished = defined.influence_vanished;
        } else {
            r.verdict = verdict::undefined;
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
        for (verdict c : {row.below_certified, row.prob_below_certified})
            if (c == verdict::failed && !above) {
                above = true;
                above_n = row.n;
            }
        for (verdict c : {row.below_bound, row.below_posterior, row.prob_below_bound}) {
            if (c == verdict::failed && !above) {
                above = true;
                above_n = row.n;
            }
            undecided = undecided || c == verdict::undecided;
        }
        no_bound = no_bound || row.below_bound == verdict::not_applicable;
        if (row.cross_entropy) {
            if (row.cross_entropy->check == verdict::failed && !ce_above) {
                ce_above = true;
                ce_pairs = row.cross_entropy->language == lang::language::dyck2;
                if (!above) above_n = row.n;
            }
            // The corollary is reported per row; an undecided one (sampled, or CE equal to its
            // floor, as for Chiang & Cholak's PARITY where every input has the same margin) does
            // not make the influence verdict undecided.
            if (row.cross_entropy->check == verdict::undecided)
                ce_undecided += (ce_undecided.empty() ? "" : ", ") + std::to_string(row.n);
        }
    }
    r.influence_vanished = numeric::indeterminate;
    r.growth = certified_growth(r.rows);
    const auto fit_for_trend = r.fit_upper && r.fit_upper->points >= 2 ? r.fit_upper : r.fit;
    auto rate_text = [&] {
        return std::string("; rate (a measurement): ") +
               (!is_certain(r.influence_vanished)  ? std::string("no fit")
                : certainly(r.influence_vanished) ? std::string("consistent with 1/n (slope <= -1 + tol)")
                                                  : std::string("not consistent with 1/n (slope > -1 + tol)"));
    };
    if (ce_above) {
        r.verdict = verdict::failed;
        r.explanation = std::string("the cross-entropy over the ") +
                        (ce_pairs ? "2DYCK forced-bracket pairs" : "enumerated cube") +
                        " is below 1 - log2(1 + eta) at n = " + std::to_string(above_n);
    } else if (!r.no_claim.empty() || !failed.empty()) {
        r.verdict = verdict::not_applicable;
        if (fit_for_trend) r.influence_vanished = fit_for_trend->slope <= -1 + tol;
        // Lemma 5 makes no claim (about the kind, or a hypothesis fails); what is certain is a
        // growth of n * influence, if any, and the rate is a measurement.
        r.explanation = !r.no_claim.empty() ? r.no_claim
                                            : "hypotheses fail: " + failed + ", so Lemma 5 makes no claim";
        if (r.growth) r.explanation += "; " + *r.growth;
        r.explanation += rate_text();
    } else if (above && unknown.empty()) {
        r.verdict = verdict::failed;
        r.explanation = "a measured change is above its bound at n = " + std::to_string(above_n);
    } else if (!unknown.empty()) {
        r.verdict = verdict::undecided;
        r.explanation = "hypotheses undecided: " + unknown;
    } else if (undecided) {
        r.verdict = verdict::undecided;
        r.explanation = "some verdict is undecided at this precision";
    } else if (no_bound) {
        r.verdict = verdict::undecided;
        r.explanation = "no finite a-priori bound at some n";
    } else {
        r.verdict = verdict::passed;
        r.explanation = r.masked ? "every hypothesis holds and every measurement is below its "
                                   "bounds (the masked bound K (1 + ln n)^(L-1)/n, theory.md 2.5)"
                                 : "every hypothesis holds and every measurement is below its bounds";
    }
    if (!ce_undecided.empty() && !ce_above)
        r.explanation += "; the cross-entropy corollary is undecided at n = " + ce_undecided;
}

kind_bounds bounds_for(model::attention_kind k) {
    const auto& a = model::info(k);
    const bool softmax = a.soft_influence;
    kind_bounds b;
    b.a_priori = a_priori_bounds_kind(k);
    b.pair = b.every_input = softmax;
    return b;
}

std::string influence_refusal(const model::model<rational>& m) {
    if (!model::selects_maximum(m.attention)) return {};
    return "influence needs attention that weighs every key; " + m.name + " is " +
           model::to_string(m.attention) +
           " (it selects the maximal score: Theorem 1 speaks of it, attnprop restrict)";
}

void check_sweep(const model::model<rational>& exact, const sweep_options& opt) {
    if (std::string why = influence_refusal(exact); !why.empty()) throw precondition_error(why);
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

sweep_result sweep_from_rows(const model::model<rational>& exact, const sweep_options& opt,
                             std::vector<sweep_row> rows, std::vector<long> not_measured) {
    sweep_result res;
    res.model_name = exact.name;
    res.hypotheses = check_hypotheses(exact);
    res.masked = model::all_causal(exact);
    if (!bounds_for(exact.attention).a_priori) {
        const auto law = model::influence_of(exact);
        res.no_claim = std::string("the model uses ") + model::to_string(exact.attention) +
                       " attention: " + model::influence_in_words(exact) + " (theory.md §2.6), " +
                       (law == model::influence_law::vanishing
                            ? "so its influence is O(1/n), with a constant attnprop does not compute: "
                              "Lemma 5's bounds are softmax's, and none is compared"
                            : "so Lemma 5 makes no claim and no bound is compared");
    }
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
