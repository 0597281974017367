// The report of `attnprop bound`: Hahn's Lemma 5 on one model (hypotheses, the constant K) and
// the bounds over every input, as text and JSON; the command and the Python module print these.
#include "report/bound_report.hpp"
#include "numeric/ball_bounds.hpp"
#include "report/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace attnprop::report {

namespace {

using analysis::bound_report;
using numeric::arb_ball;

/// Upper-bound decimal for text (6 digits).
std::string text_number(const arb_ball& x) { return numeric::upper_decimal(x, 6); }

/// Upper-bound decimal for JSON (12 digits), null when unbounded.
json::value json_number(const arb_ball& x) {
    if (!numeric::finite(x)) return json::value::null_value();
    return json::value::string(numeric::upper_decimal(x, 12));
}
json::value json_number(const std::optional<arb_ball>& x) {
    return x ? json_number(*x) : json::value::null_value();
}

const char* holds_text(numeric::uncertain<bool> h) {
    return certainly(h) ? "yes" : certainly(!h) ? "no" : "unknown";
}

std::string ce_floor_text(double eta) {
    return numeric::lower_decimal(analysis::cross_entropy_floor(eta), 10);
}

} // namespace

std::string bound_verdict(const bound_report& r) {
    // A kind whose influence need not vanish has no bound of its own, whatever its softmax
    // reading gives (theory.md 2.6).
    const auto& kind = model::info(r.attention);
    // Linear attention: its law depends on its feature maps (elu1 or relu), and no K is
    // computed for it (its weights are features of q and k, not of the scores).
    if (kind.feature_map && kind.influence == model::influence_law::vanishing) {
        const std::string reading =
            r.K ? "; its softmax reading has K = " + text_number(*r.K) : std::string();
        if (!r.influence)
            return std::string("no bound for ") + kind.name.data() +
                   " attention: with relu features a row may weigh one key alone, so no law is "
                   "asserted (theory.md 2.6)" + reading;
        return std::string("no explicit bound for ") + kind.name.data() +
               " attention: with elu1 features one symbol's influence is O(1/n) (theory.md "
               "2.6), but attnprop computes no constant for it" + reading;
    }
    // An elementwise kind (sigmoid): its law depends on its biases, and no K is computed for it
    // either way (its weights need not sum to 1).
    if (kind.weights == model::weighting::elementwise) {
        const std::string reading =
            r.K ? "; its softmax reading has K = " + text_number(*r.K) : std::string();
        if (!r.influence)
            return std::string("no bound for ") + kind.name.data() +
                   " attention: its biases are neither all constant nor all -log(n) + c, so no "
                   "law is asserted (theory.md 2.6)" + reading;
        if (*r.influence == model::influence_law::vanishing)
            return std::string("no explicit bound for ") + kind.name.data() +
                   " attention: with the bias -log(n) + c one symbol's influence is O(1/n) "
                   "(theory.md 2.6), but attnprop computes no constant for it" + reading;
        return std::string("no bound for ") + kind.name.data() +
               " attention: with a bias independent of n one symbol's influence need not vanish "
               "(theory.md 2.6)" + reading;
    }
    switch (kind.influence) {
    case model::influence_law::not_vanishing:
        return std::string("no bound for ") + kind.name.data() +
               " attention: one symbol's influence need not vanish (theory.md 2.6)" +
               (r.K ? "; its softmax reading has K = " + text_number(*r.K) : std::string());
    case model::influence_law::vanishing:
    case model::influence_law::hard_theorem: break;
    }
    if (r.K && r.masked)
        return "the masked statement applies (every layer causal, theory.md 2.5): influence <= "
               "K (1 + ln n)^(L-1)/n with K = " +
               text_number(*r.K);
    if (r.K) return "Lemma 5 applies: influence <= K/n with K = " + text_number(*r.K);
    if (const auto* f = r.first_failure())
        return "Lemma 5 does not apply: " + f->name + (certainly(!f->holds) ? " fails" : " is undecided");
    return "Lemma 5 applies, but no finite K was found (see the notes)";
}

std::string bound_to_text(const bound_report& r, std::size_t heads_max, std::size_t d) {
    std::ostringstream os;
    os << "model        " << r.model_name << " (" << model::to_string(r.attention)
       << " attention; L = " << r.layers.size() << ", H <= " << heads_max << ", d = " << d << ")\n";
    os << "precision    " << r.precision
       << " bits (Arb balls; every number below is a rigorous upper bound)\n\n";
    os << "hypotheses of Lemma 5 (Hahn 2020):\n";
    for (const auto& h : r.hypotheses)
        os << "  " << std::left << std::setw(24) << h.name << std::setw(9) << holds_text(h.holds)
           << h.reason << "\n";
    os << "\ninitial states: F_0 = " << text_number(r.F0) << ", Delta_0 = " << text_number(r.Delta0)
       << "\n";
    if (!r.layers.empty()) {
        const std::vector<std::string> head = {"k",       "F_k",    "A_k",     "E_k",
                                               "L_k",     "mu_k",   "nu_k",    "c_k",
                                               "alpha_k", "beta_k", "Delta_k", "term_k"};
        std::vector<std::vector<std::string>> rows;
        for (std::size_t k = 0; k < r.layers.size(); ++k) {
            const auto& l = r.layers[k];
            rows.push_back({std::to_string(k + 1), text_number(l.F), text_number(l.A),
                            text_number(l.E), text_number(l.L), text_number(l.mu),
                            text_number(l.nu), text_number(l.c), text_number(l.alpha),
                            text_number(l.beta), text_number(l.Delta), text_number(l.term)});
        }
        os << "per layer (alpha_k at n = " << r.n << "; term_k = beta_k Delta_{k-1} prod_{l>k} "
           << "alpha_l, summing to K(n)):\n";
        report::write_text_table(os, head, rows, report::column_align::right);
    }
    os << "\n";
    if (r.K && r.masked) {
        os << "every layer causally masked: C_k = (alpha'_k + beta_k) C_{k-1} + beta_k "
              "Delta_{k-1}, alpha'_k = L_y + 2 sum_h L_h a_h (theory.md 2.5):";
        for (std::size_t k = 0; k < r.layers.size(); ++k)
            os << (k ? ", " : " ") << "C_" << k + 1 << " = " << text_number(r.layers[k].C);
        os << "\n";
        os << "K = C_L = " << text_number(*r.K)
           << "  (||y_n^(L)(x) - y_n^(L)(x')|| <= K (1 + ln n)^(L-1)/n for every n and every "
              "change of one x_i, i < n)\n";
        os << "at n = " << r.n << ": K (1 + ln n)^(L-1)/n = " << text_number(*r.bound_at_n)
           << "\n";
    } else if (r.K) {
        os << "K = " << text_number(*r.K)
           << "  (||y_n^(L)(x) - y_n^(L)(x')|| <= K/n for every n and every change of one x_i, "
              "i < n)\n";
        os << "at n = " << r.n << ": K(n) = " << text_number(*r.K_at_n)
           << ", delta_L(n) = K(n)/n = " << text_number(*r.bound_at_n) << "\n";
    } else {
        os << "K = none\n";
    }
    if (r.probability_factor) {
        os << "probabilities: max_{r,r'} ||W_r - W_r'|| = " << text_number(*r.probability_factor)
           << "; osc(dz) <= factor * delta_L, ||dp||_inf and TV <= osc/4";
        if (r.bound_at_n) {
            arb_ball p = numeric::upper(*r.probability_factor * *r.bound_at_n /
                                         numeric::from_int<arb_ball>(4, {r.precision}));
            os << " <= " << text_number(p) << " at n = " << r.n;
        }
        os << "\n";
    } else {
        os << "probabilities: not a softmax readout\n";
    }
    for (const auto& note : r.notes) os << "note: " << note << "\n";
    os << "verdict: " << bound_verdict(r) << "\n";
    return os.str();
}

json::value bound_to_json(const bound_report& r) {
    json::value o = json::value::object();
    o.set("model", json::value::string(r.model_name));
    o.set("attention", json::value::string(model::to_string(r.attention)));
    o.set("n", json::value::number(r.n));
    o.set("precision", json::value::number(r.precision));
    json::value hyp = json::value::object();
    for (const auto& h : r.hypotheses) {
        json::value e = json::value::object();
        e.set("holds", is_certain(h.holds) ? json::value::boolean(h.holds.make_certain())
                                          : json::value::null_value());
        e.set("reason", json::value::string(h.reason));
        hyp.set(h.name, std::move(e));
    }
    o.set("hypotheses", std::move(hyp));
    if (r.masked) o.set("masked", json::value::boolean(true)); // absent: unmasked (Lemma 5)
    o.set("K", json_number(r.K));
    o.set("K_at_n", json_number(r.K_at_n));
    o.set("bound_at_n", json_number(r.bound_at_n));
    o.set("F0", json_number(r.F0));
    o.set("Delta0", json_number(r.Delta0));
    json::value layers = json::value::array();
    for (std::size_t k = 0; k < r.layers.size(); ++k) {
        const auto& l = r.layers[k];
        json::value e = json::value::object();
        e.set("k", json::value::number(static_cast<long long>(k + 1)));
        e.set("F", json_number(l.F));
        e.set("A", json_number(l.A));
        e.set("E", json_number(l.E));
        e.set("L", json_number(l.L));
        e.set("mu", json_number(l.mu));
        e.set("nu", json_number(l.nu));
        e.set("c", json_number(l.c));
        e.set("alpha", json_number(l.alpha));
        e.set("beta", json_number(l.beta));
        e.set("Delta", json_number(l.Delta));
        e.set("delta", json_number(l.delta));
        e.set("term", json_number(l.term));
        if (r.masked) e.set("C", json_number(l.C));
        layers.push_back(std::move(e));
    }
    o.set("layers", std::move(layers));
    if (r.probability_factor) {
        json::value p = json::value::object();
        p.set("factor", json_number(*r.probability_factor));
        const numeric::context ctx{r.precision};
        auto quarter = [&](const std::optional<arb_ball>& x) -> json::value {
            if (!x) return json::value::null_value();
            return json_number(numeric::upper(*r.probability_factor * *x /
                                               numeric::from_int<arb_ball>(4, ctx)));
        };
        p.set("K", quarter(r.K));
        p.set("bound_at_n", quarter(r.bound_at_n));
        o.set("probability", std::move(p));
    } else {
        o.set("probability", json::value::null_value());
    }
    json::value notes = json::value::array();
    for (const auto& s : r.notes) notes.push_back(json::value::string(s));
    o.set("notes", std::move(notes));
    o.set("verdict", json::value::string(bound_verdict(r)));
    return o;
}

std::string every_input_text(const every_input_report& e, const bound_report& r) {
    std::ostringstream os;
    os << "\nbounds over every input (the soft reading; certified double intervals; docs/bounds.md):\n";
    if (!e.per_n.empty()) {
        const std::vector<std::string> head = {"n", "classes", "Delta(n) <=", "n*Delta(n) <=", "eta(n) <=",
                                               "CE floor (bits)",
                                               r.masked ? "K(1+ln n)^(L-1)/n" : "K(n)/n (Hahn)"};
        std::vector<std::vector<std::string>> rows;
        for (std::size_t t = 0; t < e.per_n.size(); ++t) {
            const auto& b = e.per_n[t];
            const long n = b.lengths.lo;
            if (!b.applies) {
                rows.push_back({std::to_string(n), "-", "none", "none", "none", "-", e.hahn[t]});
                continue;
            }
            const auto eta = b.prob_at(n);
            rows.push_back({std::to_string(n), std::to_string(b.classes), analysis::bound_decimal(b.influence_at(n)),
                            analysis::bound_decimal(b.n_influence), eta ? analysis::bound_decimal(*eta) : "-",
                            eta && std::isfinite(*eta) ? ce_floor_text(*eta) : "-", e.hahn[t]});
        }
        report::write_text_table(os, head, rows);
        for (const auto& b : e.per_n)
            if (!b.reason.empty()) os << "  n = " << b.lengths.lo << ": " << b.reason << "\n";
    }
    if (e.every_n) {
        const auto& v = *e.every_n;
        if (v.found) {
            os << "every n: n * influence <= K* = " << analysis::bound_decimal(v.K_star)
               << " for every n >= 2 (n < " << v.n0 << " one by one, then " << (v.parts.size() - static_cast<std::size_t>(v.n0 - 2))
               << " ranges; the largest at " << v.parts[v.worst].lengths.to_string() << ")";
            if (r.K) os << "; Hahn's K = " << text_number(*r.K);
            os << "\n";
            if (v.c_star)
                os << "         ||dp||_inf <= c*/n with c* = " << analysis::bound_decimal(*v.c_star)
                   << ", so on PARITY and FIRST the mean cross-entropy is >= 1 - log2(1 + c*/n) bits for every n\n";
        } else {
            os << "every n: no K* (" << v.reason << ")\n";
        }
    }
    return os.str();
}

json::value every_input_json(const every_input_report& e) {
    using json::value;
    value o = value::object();
    value per = value::array();
    for (const auto& b : e.per_n) {
        const long n = b.lengths.lo;
        value row = value::object();
        row.set("n", value::number(n));
        row.set("applies", value::boolean(b.applies));
        row.set("classes", value::number(static_cast<long long>(b.classes)));
        auto num = [](double x) { return std::isfinite(x) ? value::string(analysis::bound_decimal(x, 12)) : value::null_value(); };
        row.set("influence", num(b.influence_at(n)));
        row.set("n_influence", num(b.n_influence));
        const auto eta = b.prob_at(n);
        row.set("prob", eta ? num(*eta) : value::null_value());
        row.set("ce_floor_bits", eta && std::isfinite(*eta) ? value::string(ce_floor_text(*eta)) : value::null_value());
        row.set("reason", b.reason.empty() ? value::null_value() : value::string(b.reason));
        // The text's "-" (no K: a hypothesis fails) is null in JSON, as every missing number is.
        const std::string& hahn = e.hahn[&b - e.per_n.data()];
        row.set("hahn_bound", hahn == "-" ? value::null_value() : value::string(hahn));
        per.push_back(std::move(row));
    }
    o.set("per_n", std::move(per));
    if (e.every_n) {
        const auto& v = *e.every_n;
        value a = value::object();
        a.set("found", value::boolean(v.found));
        a.set("K_star", v.found ? value::string(analysis::bound_decimal(v.K_star, 12)) : value::null_value());
        a.set("c_star", v.found && v.c_star ? value::string(analysis::bound_decimal(*v.c_star, 12)) : value::null_value());
        a.set("n0", value::number(v.n0));
        a.set("reason", v.reason.empty() ? value::null_value() : value::string(v.reason));
        value parts = value::array();
        for (const auto& b : v.parts) {
            value p = value::object();
            p.set("lengths", value::string(b.lengths.to_string()));
            p.set("classes", value::number(static_cast<long long>(b.classes)));
            p.set("n_influence", std::isfinite(b.n_influence) ? value::string(analysis::bound_decimal(b.n_influence, 12)) : value::null_value());
            p.set("n_prob", b.n_prob && std::isfinite(*b.n_prob) ? value::string(analysis::bound_decimal(*b.n_prob, 12)) : value::null_value());
            parts.push_back(std::move(p));
        }
        a.set("parts", std::move(parts));
        o.set("every_n", std::move(a));
    } else {
        o.set("every_n", value::null_value());
    }
    return o;
}

bound_run run_bound(const model::model<numeric::rational>& m, const std::vector<long>& ns,
                    const bound_options& o) {
    for (long n : ns) model::check_length(m, n);
    const numeric::context ctx{o.precision};
    bound_run out{analysis::a_priori_bound(m, ns.empty() ? 1 : ns.front(), ctx), {}};
    analysis::all_inputs_options opt;
    opt.classes.max_classes = o.classes;
    for (long n : ns) {
        out.every_input.per_n.push_back(analysis::all_inputs_at(m, n, opt));
        const bound_report rn = analysis::a_priori_bound(m, n, ctx);
        out.every_input.hahn.push_back(rn.bound_at_n ? text_number(*rn.bound_at_n) : std::string("-"));
    }
    if (o.every_n) {
        if (o.on_activity) o.on_activity("bounding " + m.name + " over every input and every n");
        out.every_input.every_n = analysis::every_n_bound(m, opt);
    }
    return out;
}

json::value bound_run_to_json(const bound_run& r) {
    json::value j = bound_to_json(r.lemma);
    j.set("every_input", every_input_json(r.every_input));
    return j;
}

} // namespace attnprop::report
