#include "cli/evaluate.hpp"

#include "attention/work.hpp"

#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "numeric/ball_bounds.hpp"
#include "numeric/filter.hpp"
#include "numeric/kinds.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprop::analysis {

using numeric::arb_ball;

std::optional<scalar_choice> parse_scalar_choice(std::string_view s) {
    return scalar_choice::parse(s);
}

namespace {

// A non-finite entry is a trace row without a value (attention::no_value): "undefined".
template <class S> std::vector<std::string> show(const vec<S>& v, int digits) {
    std::vector<std::string> out;
    for (const auto& x : v)
        out.push_back(numeric::is_finite(x) ? numeric::to_display_string(x, digits) : "undefined");
    return out;
}

// The same values for people: the digits that mean something (a ball's certified ones).
template <class S> std::vector<std::string> show_text(const vec<S>& v, const evaluation& ev) {
    std::vector<std::string> out;
    for (const auto& x : v)
        out.push_back(numeric::is_finite(x)
                          ? numeric::to_certified_display(x, ev.digits, ev.digits_forced)
                          : "undefined");
    return out;
}

// The radii of enclosures around their printed midpoints `shown` (numeric::radius_around): a
// midpoint printed with fewer digits than the enclosure's own moves, and the radius covers that.
template <class S>
std::vector<std::string> radii(const vec<S>& v, const std::vector<std::string>& shown,
                               const numeric::context& ctx) {
    std::vector<std::string> out;
    if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure)
        for (std::size_t i = 0; i < v.size(); ++i)
            out.push_back(numeric::is_finite(v[i])
                              ? numeric::radius_around(numeric::enclosing_ball(v[i], ctx), shown[i])
                              : numeric::radius_string(v[i]));
    return out;
}

// The radius of a ball as the exact rational it is (an upper bound); none when infinite.
std::optional<rational> exact_radius(const numeric::arb_ball& x) {
    if (mag_is_inf(arb_radref(x.raw()))) return std::nullopt;
    numeric::arb_ball r(x.precision());
    arf_set_mag(arb_midref(r.raw()), arb_radref(x.raw()));
    return numeric::exact_of(r);
}

// The exact midpoints and radii (evaluation::y_mid): a rounded kind's value is the exact number
// it holds; an enclosure is read through the ball of the same reals.
template <class S>
void exact_parts(const vec<S>& v, std::vector<std::string>& mid, std::vector<std::string>& rad) {
    mid.clear();
    rad.clear();
    for (const auto& x : v) {
        std::optional<rational> m, r;
        if (numeric::is_finite(x)) {
            if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure) {
                const numeric::arb_ball b = numeric::to_ball(x);
                m = numeric::exact_of(numeric::representative(b));
                r = exact_radius(b);
            } else {
                m = numeric::exact_of(numeric::representative(x));
                r = rational(0);
            }
        }
        mid.push_back(m && r ? numeric::to_exact_string(*m) : "undefined");
        rad.push_back(m && r ? numeric::to_exact_string(*r) : "undefined");
    }
}

template <class S>
void fill_readout_unlocated(evaluation& ev, const model::model<S>& m, const vec<S>& y,
                            const numeric::context& ctx) {
    ev.recognizer = m.out.is_recognizer();
    if (ev.recognizer) {
        ev.accept = attention::recognize(m.out, y, ctx);
        return;
    }
    ev.output_symbols = m.out.symbols;
    vec<S> z = attention::readout_logits(m.out, y, ctx);
    ev.logits = show(z, ev.digits);
    ev.logits_text = show_text(z, ev);
    ev.logits_radius = radii(z, ev.logits, ctx);
    exact_parts(z, ev.logits_mid, ev.logits_rad);
    if constexpr (numeric::ExpScalar<S>) {
        vec<S> p = attention::softmax(z, ctx);
        ev.probabilities = show(p, ev.digits);
        ev.probabilities_text = show_text(p, ev);
        ev.probabilities_radius = radii(p, ev.probabilities, ctx);
        exact_parts(p, ev.probabilities_mid, ev.probabilities_rad);
    } else {
        vec<arb_ball> zb;
        for (const auto& q : z) zb.push_back(arb_ball::from_rational(q, ctx));
        vec<arb_ball> p = attention::softmax(zb, ctx);
        ev.probabilities = show(p, ev.digits);
        ev.probabilities_text = show_text(p, ev);
        ev.probabilities_radius = radii(p, ev.probabilities, ctx);
        exact_parts(p, ev.probabilities_mid, ev.probabilities_rad);
    }
}

// Readout for any S: verdict or logits/probabilities. Exact logits get ball probabilities.
// An undefined value is located at layer L + 1, node "readout", position n.
template <class S>
void fill_readout(evaluation& ev, const model::model<S>& m, const vec<S>& y,
                  const numeric::context& ctx) {
    try {
        fill_readout_unlocated(ev, m, y, ctx);
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(m.layers.size() + 1, "readout", ev.n));
    }
}

// The forward pass's y_n^(L) must be finite (a safety net: maps check their outputs).
template <class S> void require_finite_output(const vec<S>& y, std::size_t L, std::size_t n) {
    try {
        model::require_all_finite(y);
    } catch (const numeric::undefined_error& e) {
        throw e.located(attention::place(L, nullptr, n));
    }
}

// p = softmax(z) in P and, for the position's next symbol, -log2 p(next).
template <class P>
void prefix_probabilities(evaluation& ev, prefix_readout& pr, const vec<P>& z, long target,
                          std::optional<P>& ce_sum, const numeric::context& ctx) {
    vec<P> p = attention::softmax(z, ctx);
    pr.probabilities = show(p, ev.digits);
    if (target < 0) return;
    const P ce = -numeric::log(p[static_cast<std::size_t>(target)]) /
                 numeric::log(numeric::from_int<P>(2, ctx));
    model::require_all_finite(vec<P>{ce});
    pr.cross_entropy = numeric::to_display_string(ce, ev.digits);
    ce_sum = ce_sum ? *ce_sum + ce : ce;
    ++ev.cross_entropy_terms;
}

// The readout at every position of the last layer's rows (the prediction after x_1 .. x_i),
// and the mean next-token cross-entropy. Exact logits get ball probabilities, as in
// fill_readout_unlocated. A row without a value is undefined there alone.
template <class S>
void fill_prefixes(evaluation& ev, const model::model<S>& m, const std::vector<vec<S>>& rows,
                   const model::input_sequence& x, const numeric::context& ctx) {
    using P = std::conditional_t<numeric::ExpScalar<S>, S, arb_ball>;
    std::optional<P> ce_sum;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        prefix_readout pr;
        pr.position = i + 1;
        long target = -1;
        if (i + 1 < x.size()) {
            pr.next = m.sigma.name(x[i + 1]);
            for (std::size_t r = 0; r < m.out.symbols.size(); ++r)
                if (m.out.symbols[r] == pr.next) target = static_cast<long>(r);
        }
        try {
            model::require_all_finite(rows[i]);
            if (m.out.is_recognizer()) {
                pr.accept = attention::recognize(m.out, rows[i], ctx);
            } else {
                vec<S> z = attention::readout_logits(m.out, rows[i], ctx);
                if constexpr (numeric::ExpScalar<S>) {
                    prefix_probabilities(ev, pr, z, target, ce_sum, ctx);
                } else {
                    vec<arb_ball> zb;
                    for (const auto& q : z) zb.push_back(arb_ball::from_rational(q, ctx));
                    prefix_probabilities(ev, pr, zb, target, ce_sum, ctx);
                }
            }
        } catch (const numeric::undefined_error& e) {
            pr.undefined = e.located(attention::place(m.layers.size() + 1, "readout", i + 1)).what();
            pr.accept.reset();
            pr.probabilities.clear();
            pr.cross_entropy.reset();
        }
        ev.prefixes.push_back(std::move(pr));
    }
    if (ce_sum && ev.cross_entropy_terms > 0)
        ev.mean_cross_entropy = numeric::to_display_string(
            *ce_sum / numeric::from_int<P>(static_cast<long>(ev.cross_entropy_terms), ctx),
            ev.digits);
}

template <class S>
void fill_hard_trace(evaluation& ev, const attention::hard_trace<S>& t) {
    for (std::size_t k = 0; k < t.y.size(); ++k) {
        trace_layer tl;
        for (const auto& row : t.y[k]) {
            tl.y.push_back(show(row, ev.digits));
            tl.y_text.push_back(show_text(row, ev));
        }
        if (k > 0)
            for (const auto& row : t.choice[k - 1]) {
                std::vector<std::size_t> c;
                for (auto j : row) c.push_back(j + 1);
                tl.choice.push_back(std::move(c));
            }
        if (k > 0 && k - 1 < t.ties.size())
            for (const auto& row : t.ties[k - 1]) {
                std::vector<std::vector<std::size_t>> heads;
                for (const auto& set : row) {
                    std::vector<std::size_t> c;
                    for (auto j : set) c.push_back(j + 1);
                    heads.push_back(std::move(c));
                }
                tl.ties.push_back(std::move(heads));
            }
        ev.trace.push_back(std::move(tl));
    }
}

template <class S>
void run_hard(evaluation& ev, const model::model<rational>& m, const model::input_sequence& x,
              const numeric::context& ctx, bool trace, bool prefixes) {
    model::model<S> ms = model::to_scalar<S>(m, ctx);
    attention::hard_output<S> r = attention::hard_forward(ms, x, ctx, trace || prefixes);
    if (r.undecided) {
        ev.undecided = r.undecided;
        ev.recognizer = m.out.is_recognizer();
        if (ev.recognizer) ev.accept = attention::verdict::undecided;
        return;
    }
    require_finite_output(r.y, m.layers.size(), x.size());
    ev.y = show(r.y, ev.digits);
    ev.y_text = show_text(r.y, ev);
    ev.y_radius = radii(r.y, ev.y, ctx);
    exact_parts(r.y, ev.y_mid, ev.y_rad);
    fill_readout(ev, ms, r.y, ctx);
    if (prefixes) fill_prefixes(ev, ms, r.trace->y.back(), x, ctx);
    if (trace) fill_hard_trace(ev, *r.trace);
}

template <class S>
void run_soft(evaluation& ev, const model::model<rational>& m, const model::input_sequence& x,
              const numeric::context& ctx, bool trace, bool prefixes) {
    model::model<S> ms = model::to_scalar<S>(m, ctx);
    attention::soft_options so;
    so.trace = trace || prefixes;
    so.trace_weights = trace;
    attention::soft_output<S> r = attention::soft_forward(ms, x, ctx, so);
    require_finite_output(r.y, m.layers.size(), x.size());
    ev.y = show(r.y, ev.digits);
    ev.y_text = show_text(r.y, ev);
    ev.y_radius = radii(r.y, ev.y, ctx);
    exact_parts(r.y, ev.y_mid, ev.y_rad);
    fill_readout(ev, ms, r.y, ctx);
    if (prefixes) fill_prefixes(ev, ms, r.trace->y.back(), x, ctx);
    if (trace) {
        for (std::size_t k = 0; k < r.trace->y.size(); ++k) {
            trace_layer tl;
            for (const auto& row : r.trace->y[k]) {
                tl.y.push_back(show(row, ev.digits));
                tl.y_text.push_back(show_text(row, ev));
            }
            if (k > 0)
                for (const auto& row : r.trace->weights[k - 1]) {
                    std::vector<std::vector<std::string>> heads, heads_text;
                    for (const auto& w : row) {
                        heads.push_back(show(w, ev.digits));
                        heads_text.push_back(show_text(w, ev));
                    }
                    tl.weights.push_back(std::move(heads));
                    tl.weights_text.push_back(std::move(heads_text));
                }
            ev.trace.push_back(std::move(tl));
        }
    }
}

void run_kind(evaluation& ev, const model::model<rational>& m, const model::input_sequence& x,
              scalar_choice sc, const eval_options& opt, const numeric::context& ctx);

/// Automatic's kind when the model is not one the exact scalar evaluates: Arb balls (after
/// certified double intervals when they certify the digits asked for: evaluate_cheapest).
constexpr scalar_choice rigorous_default = scalar_choice::of<arb_ball>();

/// Significant digits --scalar auto certifies when --digits is not given.
constexpr int auto_digits = 12;

evaluation evaluate_in(const model::model<rational>& m, const model::input_sequence& x,
                       scalar_choice sc, const eval_options& opt, evaluation ev);
evaluation evaluate_cheapest(const model::model<rational>& m, const model::input_sequence& x,
                             const eval_options& opt, evaluation base);

} // namespace

namespace {

std::uint64_t saturate(long double v) {
    constexpr auto top = std::numeric_limits<std::uint64_t>::max();
    return v >= static_cast<long double>(top) ? top : static_cast<std::uint64_t>(v);
}

} // namespace

std::uint64_t trace_bytes(const model::model<rational>& m, std::size_t n, scalar_choice sc,
                          long precision, int digits) {
    // Per number: the kernel's value (an Arb ball is 48 bytes plus its mantissa, an MPFR value
    // 32 plus its limbs, a rational 32 plus limbs, assumed small) and twice its text (the
    // rendered string with its allocation, and the printed output).
    const long double value =
        (sc.is_automatic() ? rigorous_default : sc).info().value_bytes(precision);
    // A string object, its heap block and the digits (measured: within a few percent of the
    // peak resident memory of cc-first's trace at n = 512).
    const long double text = 64 + static_cast<long double>(digits > 0 ? digits : 24);
    const long double per_number = value + 2 * text;
    const long double nn = static_cast<long double>(n);
    const long double L = static_cast<long double>(m.layers.size());
    long double numbers = (L + 1) * nn * static_cast<long double>(m.d);
    long double bytes = 0;
    for (const auto& lay : m.layers) {
        const long double H = static_cast<long double>(lay.heads.size());
        switch (model::info(m.attention).weights) {
        case model::weighting::normaliser:
        case model::weighting::elementwise: numbers += H * nn * nn; break; // every weight a_ij
        case model::weighting::maximal_score:
            bytes += H * nn * (8 + 16); // the chosen key of every row and head, and its text
            break;
        }
    }
    bytes += numbers * per_number;
    return saturate(bytes);
}

evaluation evaluate(const model::model<rational>& m, const model::input_sequence& x,
                    const eval_options& opt) {
    model::check_length(m, static_cast<long>(x.size()));
    // Exact rationals have no working precision (exact-bits bounds them).
    const bool exact = opt.scalar.is_automatic()
                           ? model::info(m.attention).exact && model::exact_blockers(m).empty()
                           : opt.scalar.info().kind == numeric::scalar_kind::exact;
    attention::check_forward_work(m, x.size(), exact ? 0 : opt.precision);
    evaluation ev;
    ev.digits_forced = opt.digits > 0;
    ev.model_name = m.name;
    ev.attention = m.attention;
    for (const auto& l : m.layers) ev.masks.push_back(l.mask);
    ev.input = model::format_input(m.sigma, x);
    ev.n = x.size();
    scalar_choice sc = opt.scalar;
    if (sc.is_automatic()) {
        if (!exact) return evaluate_cheapest(m, x, opt, std::move(ev));
        sc = scalar_choice::of<rational>();
    }
    return evaluate_in(m, x, sc, opt, std::move(ev));
}

namespace {

evaluation evaluate_in(const model::model<rational>& m, const model::input_sequence& x,
                       scalar_choice sc, const eval_options& opt, evaluation ev) {
    numeric::context ctx{opt.precision};
    if (sc.info().kind == numeric::scalar_kind::rounded && model::has_singular_layer_norm(m))
        ev.notes.push_back("the model has a layer norm with eps = 0, which is discontinuous at "
                           "constant vectors: rounded arithmetic cannot tell a 0/0 from a tiny "
                           "variance, so check with --scalar ball");
    if (sc.info().kind == numeric::scalar_kind::exact)
        if (auto blockers = model::exact_blockers(m); !blockers.empty())
            throw model::content_error(m.file, model::exact_blocker_pointers(m).front(),
                                       "the exact scalar cannot evaluate this model (" +
                                           blockers.front() +
                                           "); use --scalar ball for a rigorous enclosure");
    if (opt.trace) {
        // Estimated before anything is allocated: a soft trace holds n^2 weights per head and
        // layer, which at n = 4096 is tens of gigabytes of balls and their text.
        const int fixed = sc.info().display_digits;
        const int digits = opt.digits > 0 ? opt.digits
                           : fixed > 0    ? fixed
                                          : numeric::digits_of_precision(opt.precision);
        const std::uint64_t b = trace_bytes(m, x.size(), sc, opt.precision, digits);
        numeric::check_limit(numeric::limit::trace_bytes, b,
                             "the trace of " + m.name + " at n = " + std::to_string(x.size()) +
                                 " needs about " + attention::with_commas(b) + " bytes");
    }
    try {
        run_kind(ev, m, x, sc, opt, ctx);
    } catch (const numeric::undefined_error& e) {
        // The result: y, the readout and the trace do not exist.
        ev.undefined = e;
        ev.y.clear();
        ev.y_text.clear();
        ev.y_radius.clear();
        ev.accept.reset();
        ev.output_symbols.clear();
        ev.logits.clear();
        ev.logits_text.clear();
        ev.logits_radius.clear();
        ev.probabilities.clear();
        ev.probabilities_text.clear();
        ev.probabilities_radius.clear();
        for (auto* v : {&ev.y_mid, &ev.y_rad, &ev.logits_mid, &ev.logits_rad,
                        &ev.probabilities_mid, &ev.probabilities_rad})
            v->clear();
        ev.trace.clear();
        ev.prefixes.clear();
        ev.mean_cross_entropy.reset();
    }
    if (opt.prefixes && !model::all_causal(m))
        ev.notes.push_back("not every layer is causally masked: the state at position i sees the "
                           "whole input, so the readouts at the prefixes are not predictions "
                           "from x_1 .. x_i");
    return ev;
}

/// The fewest significant digits certified among the printed numbers of an evaluation.
int fewest_certified_digits(const evaluation& ev) {
    int fewest = numeric::exact_digits;
    for (const auto* texts : {&ev.y_text, &ev.logits_text, &ev.probabilities_text})
        for (const auto& t : *texts) fewest = std::min(fewest, numeric::certified_digits(t));
    return fewest;
}

evaluation evaluate_cheapest(const model::model<rational>& m, const model::input_sequence& x,
                             const eval_options& opt, evaluation base) {
    // The cheapest kind that certifies the digits asked for: certified double intervals, then
    // Arb balls at --precision doubled up to precision_cap (numeric/filter.hpp).
    const int want = opt.digits > 0 ? opt.digits : auto_digits;
    std::vector<numeric::rung> ladder{{scalar_choice::of<numeric::dinterval>(), 53}};
    for (const auto& r : numeric::doubling_ladder(rigorous_default, opt.precision,
                                                  std::max(opt.precision, opt.precision_cap)))
        ladder.push_back(r);
    // Digits are never forced here: every printed digit is certified, at most `want` of them.
    base.digits_forced = false;
    std::vector<std::string> tried;
    auto f = numeric::run_filter(
        ladder,
        [&](const numeric::rung& r, std::size_t) -> std::optional<evaluation> {
            eval_options o = opt;
            o.precision = r.bits;
            tried.push_back(r.kind.info().variable_precision
                                ? std::string(to_string(r.kind)) + " " + std::to_string(r.bits)
                                : std::string(to_string(r.kind)));
            evaluation e = evaluate_in(m, x, r.kind, o, base);
            e.digits_forced = false;
            return e;
        },
        [&](const evaluation& e, std::size_t) {
            if (e.undefined)
                return e.undefined->precision_may_resolve() ? numeric::filter_step::escalate
                                                            : numeric::filter_step::decided;
            if (e.accept == attention::verdict::undecided || e.undecided) return numeric::filter_step::escalate;
            return fewest_certified_digits(e) >= want ? numeric::filter_step::decided
                                                      : numeric::filter_step::escalate;
        });
    evaluation ev = std::move(f.answer);
    ev.scalar_attempts = tried;
    if (f.end != numeric::filter_end::decided)
        ev.notes.push_back("stopped at " + tried.back() + " bits (--precision-cap " +
                           std::to_string(std::max(opt.precision, opt.precision_cap)) +
                           "): the enclosures certify fewer than " + std::to_string(want) +
                           " digits there, and are printed with the digits they certify");
    return ev;
}

void run_kind(evaluation& ev, const model::model<rational>& m, const model::input_sequence& x,
              scalar_choice sc, const eval_options& opt, const numeric::context& ctx) {
    if (sc.is_automatic()) sc = rigorous_default;
    numeric::dispatch(sc, [&]<class S>(std::type_identity<S>) {
        using traits = numeric::scalar_traits<S>;
        ev.scalar = std::string(traits::name);
        if constexpr (traits::kind == numeric::scalar_kind::exact) {
            ev.precision = 0;
            ev.digits = opt.digits > 0 ? opt.digits : numeric::default_digits<S>(opt.precision);
            switch (model::info(m.attention).weights) {
            case model::weighting::maximal_score: break;
            case model::weighting::normaliser:
            case model::weighting::elementwise: // refused first (model::exact_blockers)
                // An exact normaliser (StableMax, sparsemax): the soft pass in rationals.
                run_soft<S>(ev, m, x, ctx, opt.trace, opt.prefixes);
                return;
            }
            attention::exact_hard_output r =
                attention::hard_forward_exact(m, x, ctx, opt.trace || opt.prefixes);
            ev.y = show(r.y, ev.digits);
            ev.y_text = show_text(r.y, ev);
            exact_parts(r.y, ev.y_mid, ev.y_rad);
            fill_readout(ev, m, r.y, ctx);
            if (opt.prefixes) fill_prefixes(ev, m, r.trace->y.back(), x, ctx);
            if (opt.trace) fill_hard_trace(ev, *r.trace);
            ev.exact_stats = r.stats;
        } else {
            ev.precision = traits::precision(numeric::zero<S>(ctx));
            // Doubles print 17 digits (round trip); other kinds what their precision supports.
            ev.digits = opt.digits > 0 ? opt.digits : numeric::default_digits<S>(ev.precision);
            // A rounded kind's value that left MPFR's exponent range was rounded to 0 or to
            // infinity there (docs/scalars.md, "MPFR's exponent range"): say so.
            const numeric::mpfr_range_watch range;
            switch (model::info(m.attention).weights) {
            case model::weighting::maximal_score:
                run_hard<S>(ev, m, x, ctx, opt.trace, opt.prefixes);
                break;
            case model::weighting::normaliser:
            case model::weighting::elementwise:
                run_soft<S>(ev, m, x, ctx, opt.trace, opt.prefixes);
                break;
            }
            if (traits::kind == numeric::scalar_kind::rounded && range.left_range())
                ev.notes.push_back(range.reason() +
                                   ": the values printed may be 0 or infinite where the model's "
                                   "are not; --scalar ball has no exponent range");
        }
    });
}

} // namespace

} // namespace attnprop::analysis
