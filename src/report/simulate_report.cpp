#include "report/simulate_report.hpp"

#include "numeric/ball_bounds.hpp"
#include "report/files.hpp"
#include "report/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace attnprop::report {

namespace fs = std::filesystem;
using analysis::arb_ball;
using json::value;

namespace {

value str(const std::string& s) { return value::string(s); }
value num(long long v) { return value::number(v); }

/// A measured ball as a short decimal: the digits (at most `digits`) every point of it rounds
/// to, or "m +/- r" when it is wider (numeric::rounded_display; docs/reports.md, "Every printed
/// digit").
std::string mid(const arb_ball& x, int digits = 3) { return numeric::rounded_display(x, digits); }
/// An upper point as a short decimal rounded up.
std::string up(const arb_ball& x, int digits = 3) { return numeric::upper_decimal(x, digits); }

double as_double(const arb_ball& x) {
    if (!numeric::finite(x)) return std::nan("");
    return numeric::to_double(x);
}

/// A word for a table line: up to 24 symbols, longer ones abbreviated with their length.
std::string short_word(const std::string& w) {
    if (w.size() <= 24) return w;
    return w.substr(0, 20) + "... (" + std::to_string(w.size()) + " symbols)";
}

std::string margin_text(const std::optional<analysis::surd>& s) {
    return s ? s->to_string() : "none";
}

std::string margin_decimal(const std::optional<analysis::surd>& s) {
    if (!s) return "none";
    const numeric::context ctx{64};
    return mid(s->to_ball(ctx), 4);
}

/// A measured double (a display value, never compared) in 3 significant digits.
std::string fixed_or_sci(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

/// Leak against n for every beta: the largest measured leak (solid) and the largest certified
/// row bound (dashed), log-log. A leak of exactly 0 (every key tied) or below the double range
/// is not drawn (a log axis has no 0).
plot_figure leak_figure(const simulate_run& r) {
    plot_figure fig;
    fig.title = "Attention leak of the softmax counterpart of " + r.model_name;
    fig.x_label = "n (input length, eos included)";
    plot_panel_spec p;
    p.y_label = "largest leak 1 − w_T over rows";
    p.log_y = true;
    for (std::size_t bi = 0; bi < r.betas.size(); ++bi) {
        plot_series measured, bound;
        measured.name = "β = " + r.betas[bi] + ", measured";
        bound.name = "β = " + r.betas[bi] + ", certified bound";
        measured.colour = bound.colour = palette[bi % 7];
        bound.style = plot_style::dashed;
        bound.markers = false;
        for (const auto& row : r.rows) {
            const auto& b = row.betas.at(bi);
            const double m = as_double(b.leak.max_leak);
            const double u = as_double(b.leak.worst_row_bound);
            measured.x.push_back(static_cast<double>(row.n));
            measured.y.push_back(m > 0 ? m : std::nan(""));
            bound.x.push_back(static_cast<double>(row.n));
            bound.y.push_back(u > 0 ? u : std::nan(""));
        }
        p.series.push_back(std::move(measured));
        p.series.push_back(std::move(bound));
    }
    fig.panels.push_back(std::move(p));
    fig.caption.push_back("Solid: the largest measured leak 1 − w_T over the rows the output depends "
                          "on and over the inputs (T: the keys attaining the maximal hard score); "
                          "dashed: the largest certified row bound r/(1+r), "
                          "r = ((n−t)/t) e^(−β (γ − 2ε)). A leak of exactly 0 (every key "
                          "tied) or below the double range is not drawn. " + r.input_note + ".");
    return fig;
}

/// "the first 20 symbols... (n symbols)" or the word itself.
std::string witness_word(const std::string& w) { return "\"" + short_word(w) + "\""; }

/// The lines that say what holds for every input at one n (text and markdown share them).
std::vector<std::string> every_input_lines(const simulate_run& r, std::size_t row_index) {
    std::vector<std::string> out;
    const auto& e = r.every_input[row_index];
    const auto& m = e.margins;
    if (!m.applies) {
        out.push_back("not decided: " + m.reason);
        return out;
    }
    if (m.gamma) {
        std::string l = "smallest margin " + margin_text(m.gamma);
        if (m.gamma->g != 1) l += " = " + margin_decimal(m.gamma);
        const bool exact = std::all_of(m.heads.begin(), m.heads.end(), [](const auto& h) { return h.exact; });
        l += exact ? " (attained)" : " (a lower bound)";
        if (m.witness)
            l += " on " + witness_word(m.witness->input) + " at query " + std::to_string(m.witness->query) +
                 ", head " + std::to_string(m.witness->head) + ": key " + std::to_string(m.witness->top) +
                 " on top, key " + std::to_string(m.witness->second) + " one margin below";
        out.push_back(l);
    } else {
        out.push_back("no margin: every key always ties");
    }
    for (const auto& h : m.heads)
        if (h.tie)
            out.push_back("head " + std::to_string(h.tie->head) + ": keys " + std::to_string(h.tie->top) +
                          " and " + std::to_string(h.tie->second) + " tie with different values on " +
                          witness_word(h.tie->input) +
                          (r.attention == "hard" ? " (soft attention averages a tie; unique-hard takes the leftmost)"
                                                 : " (average-hard averages it too)"));
    auto selecting = [](std::size_t key) {
        return key ? " (the hard head selects key " + std::to_string(key) + ")" : std::string();
    };
    if (m.on_threshold)
        out.push_back("the hard readout lies exactly on its threshold on " + witness_word(m.slack_input) +
                      selecting(m.slack_key) +
                      ": no β certifies that input (the soft readout goes with the leak's direction)");
    else
        out.push_back("smallest readout slack " + (m.slack_q ? numeric::to_exact_string(*m.slack_q) : mid(m.slack, 4)) +
                      (m.slack_input.empty() ? std::string(" (a lower bound on the box of head outputs)")
                                             : " on " + witness_word(m.slack_input) + selecting(m.slack_key)));
    out.push_back("smallest beta certified for every input: " +
                  (m.beta_every ? up(*m.beta_every, 4) : std::string("none up to 2^40")));
    if (m.on_threshold)
        out.push_back("for every input off the threshold (smallest slack " +
                      (m.slack_positive_q ? numeric::to_exact_string(*m.slack_positive_q) : std::string("-")) +
                      (m.slack_positive_input.empty() ? std::string()
                                                      : " on " + witness_word(m.slack_positive_input) +
                                                            selecting(m.slack_positive_key)) +
                      "): " + (m.beta_off ? up(*m.beta_off, 4) : std::string("none up to 2^40")));
    for (std::size_t b = 0; b < r.betas.size() && b < e.certified.size(); ++b) {
        std::string l = "beta = " + r.betas[b] + ": " + (e.certified[b] ? "certified" : "not certified") +
                        " for every input";
        if (m.on_threshold)
            l += std::string("; ") + (e.certified_off[b] ? "certified" : "not certified") +
                 " for every input off the threshold";
        out.push_back(l);
    }
    return out;
}

/// The smallest certified beta against n: over every input (off the readout threshold where
/// some input sits on it) and over the sampled inputs, log-log.
plot_figure beta_figure(const simulate_run& r) {
    plot_figure fig;
    fig.title = "Smallest certified inverse temperature for " + r.model_name;
    fig.x_label = "n (input length, eos included)";
    plot_panel_spec p;
    p.y_label = "smallest β certifying the readout";
    p.log_y = true;
    plot_series every{"every input (certified)", {}, {}, palette[5], plot_style::solid};
    plot_series off{"every input off the readout's threshold (certified)", {}, {}, palette[4], plot_style::dashed};
    plot_series sampled{"the sampled inputs", {}, {}, palette[0], plot_style::solid};
    std::vector<double> none;
    for (std::size_t t = 0; t < r.rows.size(); ++t) {
        const double n = static_cast<double>(r.rows[t].n);
        if (r.rows[t].smallest_beta) {
            sampled.x.push_back(n);
            sampled.y.push_back(as_double(*r.rows[t].smallest_beta));
        }
        if (t >= r.every_input.size()) continue;
        const auto& m = r.every_input[t].margins;
        if (m.beta_every) {
            every.x.push_back(n);
            every.y.push_back(as_double(*m.beta_every));
        } else {
            none.push_back(n);
        }
        if (m.on_threshold && m.beta_off) {
            off.x.push_back(n);
            off.y.push_back(as_double(*m.beta_off));
        }
    }
    for (auto* s : {&every, &off, &sampled})
        if (!s->x.empty()) p.series.push_back(*s);
    fig.panels.push_back(std::move(p));
    fig.caption.push_back("The certified curves hold for every input of length n (the margin, tie and "
                          "readout slack over every input, docs/theory.md §4.5); the sampled curve only "
                          "for the sampled inputs (" + r.input_note + "), so it lies at or below them.");
    if (!none.empty()) {
        std::string ns;
        for (double v : none) ns += (ns.empty() ? "" : ", ") + std::to_string(static_cast<long>(v));
        fig.caption.push_back("No β up to 2^40 certifies every input at n = " + ns + ".");
    }
    return fig;
}

} // namespace

std::size_t findings(const simulate_run& r) {
    std::size_t f = 0;
    for (const auto& row : r.rows)
        for (const auto& b : row.betas) f += b.leak.rows_above + b.leak.layers_above;
    return f;
}

std::string simulate_to_text(const simulate_run& r) {
    std::ostringstream o;
    o << "simulate " << r.model_name << " (" << r.attention << ") against its soft counterpart; "
      << r.input_note << "; soft model in " << r.scalar << " at " << r.precision << " bits\n";
    for (const auto& row : r.rows) {
        o << "\n== n = " << row.n << " (" << row.inputs.size() << " input"
          << (row.inputs.size() == 1 ? "" : "s") << ")\n";
        for (std::size_t k = 0; k < row.gaps.layers.size(); ++k) {
            const auto& g = row.gaps.layers[k];
            o << "  layer " << k + 1 << ": min margin " << margin_text(g.min_margin);
            if (g.min_margin && g.min_margin->g != 1) o << " = " << margin_decimal(g.min_margin);
            o << ", max ties " << g.max_ties;
            if (g.min_margin) o << " (on \"" << short_word(g.argmin_input) << "\")";
            o << "\n";
        }
        o << "  smallest certified beta: "
          << (row.smallest_beta ? up(*row.smallest_beta, 4) : std::string("none up to 2^40"))
          << " (the sampled inputs)\n";
        const std::size_t ri = static_cast<std::size_t>(&row - r.rows.data());
        if (ri < r.every_input.size()) {
            o << "  every input (decided without enumerating them):\n";
            for (const auto& l : every_input_lines(r, ri)) o << "    " << l << "\n";
        }
        o << "  beta            beta(n)     leak       leak bound  |y_n - hard|  bound       "
             "agree/certified\n"
          << "                              (max)      (at that row) (upper)   (upper)\n";
        for (const auto& b : row.betas) {
            const std::size_t L = b.state_bound.size();
            char line[512];
            const std::string yd = L ? up(b.state_measured[L - 1]) : "0";
            std::snprintf(line, sizeof line, "  %-15s %-11s %-10s %-11s %-13s %-11s %zu/%zu of %zu%s\n",
                          b.beta_text.c_str(), mid(b.beta_n, 4).c_str(), mid(b.leak.max_leak).c_str(),
                          up(b.leak.max_leak_bound).c_str(), yd.c_str(),
                          L ? up(b.state_bound[L - 1]).c_str() : "0", b.agree, b.certified,
                          row.inputs.size(),
                          b.undecided ? (" (" + std::to_string(b.undecided) + " undecided)").c_str() : "");
            o << line;
            if (!b.interval && (b.precision != r.precision || r.scalar == "interval"))
                o << "    measured again in balls at " << b.precision << " bits (undecided "
                  << (r.scalar == "interval" ? "in intervals" : "at fewer") << ")\n";
            if (b.leak.rows_undecided + b.leak.layers_undecided)
                o << "    undecided at " << b.precision << " bits: " << b.leak.rows_undecided
                  << " row(s) and " << b.leak.layers_undecided
                  << " layer(s) whose measured enclosure overlaps its bound (raise "
                     "--precision-cap)\n";
            if (b.leak.rows_above + b.leak.layers_above)
                o << "    FINDING: a measured value is above its certified bound: " << b.leak.first_above
                  << "\n";
            for (std::size_t k = 0; k + 1 < L; ++k)
                if (!b.margin_condition[k + 1])
                    o << "    layer " << k + 2 << ": the margin condition 2 eps < gamma fails; the "
                      << "bound there only uses convexity\n";
        }
    }
    for (const auto& l : r.lengths) {
        o << "\nconstant beta = " << l.beta << ": certified at every n of the list up to "
          << (l.in_list ? std::to_string(*l.in_list) : std::string("none"));
        o << "; with the gaps of n = " << l.extrapolated_from << " held fixed, up to n = "
          << (l.extrapolated ? (*l.extrapolated >= (1LL << 62) ? std::string(">= 2^62")
                                                               : std::to_string(*l.extrapolated))
                             : std::string("none"))
          << "\n";
    }
    const std::size_t f = findings(r);
    if (f) o << "\n" << f << " measured value(s) above the certified bound: a finding (exit 1)\n";
    return o.str();
}

json::value simulate_to_json(const simulate_run& r, const provenance& made_by) {
    value doc = value::object();
    doc.set("format", str("attnprop-simulate-report"));
    doc.set("version", num(1));
    if (!made_by.empty()) doc.set("provenance", provenance_to_json(made_by));
    doc.set("model", str(r.model_name));
    doc.set("attention", str(r.attention));
    value betas = value::array();
    for (const auto& b : r.betas) betas.push_back(str(b));
    doc.set("betas", std::move(betas));
    doc.set("inputs", str(r.input_note));
    doc.set("scalar", str(r.scalar));
    doc.set("precision", num(r.precision));
    doc.set("precision_cap", num(r.precision_cap));
    value rows = value::array();
    for (const auto& row : r.rows) {
        value o = value::object();
        o.set("n", num(row.n));
        value ins = value::array();
        for (const auto& w : row.inputs) ins.push_back(str(w));
        o.set("inputs", std::move(ins));
        value layers = value::array();
        for (const auto& g : row.gaps.layers) {
            value l = value::object();
            l.set("min_margin", g.min_margin ? str(g.min_margin->to_string()) : value::null_value());
            l.set("min_margin_decimal",
                  g.min_margin ? str(margin_decimal(g.min_margin)) : value::null_value());
            l.set("max_ties", num(static_cast<long long>(g.max_ties)));
            l.set("argmin_input", g.min_margin ? str(g.argmin_input) : value::null_value());
            layers.push_back(std::move(l));
        }
        o.set("gaps", std::move(layers));
        value hd = value::array();
        for (const auto& d : row.hard_decisions) hd.push_back(str(d));
        o.set("hard_readout", std::move(hd));
        o.set("smallest_certified_beta",
              row.smallest_beta ? str(up(*row.smallest_beta, 6)) : value::null_value());
        value bs = value::array();
        for (const auto& b : row.betas) {
            value bo = value::object();
            bo.set("beta", str(b.beta_text));
            bo.set("beta_n", str(mid(b.beta_n, 10)));
            bo.set("measured_in", str(b.interval ? std::string("interval")
                                                 : "ball " + std::to_string(b.precision) + " bits"));
            value leak = value::object();
            leak.set("max_measured", str(mid(b.leak.max_leak, 6)));
            leak.set("max_measured_upper", str(up(b.leak.max_leak, 6)));
            leak.set("bound_at_that_row", str(up(b.leak.max_leak_bound, 6)));
            leak.set("worst_row_bound", str(up(b.leak.worst_row_bound, 6)));
            leak.set("rows", num(static_cast<long long>(b.leak.rows)));
            leak.set("rows_within", num(static_cast<long long>(b.leak.rows_within)));
            leak.set("rows_undecided", num(static_cast<long long>(b.leak.rows_undecided)));
            leak.set("rows_above", num(static_cast<long long>(b.leak.rows_above)));
            leak.set("layers_undecided", num(static_cast<long long>(b.leak.layers_undecided)));
            leak.set("layers_above", num(static_cast<long long>(b.leak.layers_above)));
            bo.set("leak", std::move(leak));
            value ls = value::array();
            for (std::size_t k = 0; k < b.state_bound.size(); ++k) {
                value l = value::object();
                l.set("measured", str(fixed_or_sci(b.state_measured_mid[k])));
                l.set("measured_upper", str(up(b.state_measured[k], 6)));
                l.set("bound", str(up(b.state_bound[k], 6)));
                l.set("margin_condition", value::boolean(b.margin_condition[k]));
                ls.push_back(std::move(l));
            }
            bo.set("layers", std::move(ls));
            value rd = value::object();
            rd.set("agree", num(static_cast<long long>(b.agree)));
            rd.set("disagree", num(static_cast<long long>(b.disagree)));
            rd.set("undecided", num(static_cast<long long>(b.undecided)));
            rd.set("certified", num(static_cast<long long>(b.certified)));
            bo.set("readout", std::move(rd));
            bo.set("findings", num(static_cast<long long>(b.leak.rows_above + b.leak.layers_above)));
            if (!b.leak.first_above.empty()) bo.set("first_finding", str(b.leak.first_above));
            bs.push_back(std::move(bo));
        }
        o.set("betas", std::move(bs));
        const std::size_t ri = static_cast<std::size_t>(&row - r.rows.data());
        if (ri < r.every_input.size()) {
            const auto& e = r.every_input[ri];
            const auto& m = e.margins;
            value ev = value::object();
            ev.set("applies", value::boolean(m.applies));
            ev.set("reason", m.reason.empty() ? value::null_value() : str(m.reason));
            ev.set("min_margin", m.gamma ? str(m.gamma->to_string()) : value::null_value());
            ev.set("min_margin_decimal", m.gamma ? str(margin_decimal(m.gamma)) : value::null_value());
            ev.set("exact", value::boolean(std::all_of(m.heads.begin(), m.heads.end(), [](const auto& h) { return h.exact; })));
            if (m.witness) {
                value w = value::object();
                w.set("input", str(m.witness->input));
                w.set("query", num(static_cast<long long>(m.witness->query)));
                w.set("head", num(static_cast<long long>(m.witness->head)));
                w.set("top", num(static_cast<long long>(m.witness->top)));
                w.set("second", num(static_cast<long long>(m.witness->second)));
                ev.set("witness", std::move(w));
            } else {
                ev.set("witness", value::null_value());
            }
            value ties = value::array();
            for (const auto& h : m.heads)
                if (h.tie) {
                    value t = value::object();
                    t.set("head", num(static_cast<long long>(h.tie->head)));
                    t.set("input", str(h.tie->input));
                    t.set("keys", str(std::to_string(h.tie->top) + "," + std::to_string(h.tie->second)));
                    ties.push_back(std::move(t));
                }
            ev.set("ties", std::move(ties));
            ev.set("slack", m.slack_q ? str(numeric::to_exact_string(*m.slack_q)) : str(mid(m.slack, 6)));
            ev.set("slack_input", m.slack_input.empty() ? value::null_value() : str(m.slack_input));
            ev.set("slack_key", m.slack_key ? num(static_cast<long long>(m.slack_key)) : value::null_value());
            ev.set("on_threshold", value::boolean(m.on_threshold));
            ev.set("slack_off_threshold", m.slack_positive_q ? str(numeric::to_exact_string(*m.slack_positive_q)) : value::null_value());
            ev.set("slack_off_threshold_input", m.slack_positive_input.empty() ? value::null_value() : str(m.slack_positive_input));
            ev.set("slack_off_threshold_key", m.slack_positive_key ? num(static_cast<long long>(m.slack_positive_key)) : value::null_value());
            ev.set("smallest_certified_beta", m.beta_every ? str(up(*m.beta_every, 6)) : value::null_value());
            ev.set("smallest_certified_beta_off_threshold", m.beta_off ? str(up(*m.beta_off, 6)) : value::null_value());
            value cb = value::array();
            for (std::size_t b = 0; b < e.certified.size(); ++b) {
                value c = value::object();
                c.set("beta", str(r.betas[b]));
                c.set("every_input", value::boolean(e.certified[b]));
                c.set("every_input_off_threshold", value::boolean(e.certified_off[b]));
                cb.push_back(std::move(c));
            }
            ev.set("betas", std::move(cb));
            o.set("every_input", std::move(ev));
        } else {
            o.set("every_input", value::null_value());
        }
        rows.push_back(std::move(o));
    }
    doc.set("rows", std::move(rows));
    value ls = value::array();
    for (const auto& l : r.lengths) {
        value o = value::object();
        o.set("beta", str(l.beta));
        o.set("certified_in_list_up_to", l.in_list ? num(*l.in_list) : value::null_value());
        o.set("extrapolated_from_n", num(l.extrapolated_from));
        o.set("extrapolated_up_to", l.extrapolated ? num(*l.extrapolated) : value::null_value());
        ls.push_back(std::move(o));
    }
    doc.set("certified_lengths", std::move(ls));
    doc.set("findings", num(static_cast<long long>(findings(r))));
    return doc;
}

void write_simulate_report(const fs::path& dir, const simulate_run& r, const provenance& made_by,
                           bool figure_text) {
    fs::create_directories(dir);
    write_file_atomic(dir / "report.json", json::dump(simulate_to_json(r, made_by), 2) + "\n");

    std::ostringstream csv;
    csv << "n,beta,beta_n,min_margin_layer1,max_ties_layer1,leak_measured,leak_bound_at_row,"
           "worst_row_bound,y_diff_measured_upper,y_diff_bound,agree,disagree,undecided,certified,"
           "inputs,smallest_certified_beta,every_input_min_margin,every_input_beta,"
           "every_input_beta_off_threshold,every_input_certified,every_input_certified_off_threshold\n";
    for (const auto& row : r.rows)
        for (const auto& b : row.betas) {
            const std::size_t L = b.state_bound.size();
            csv << row.n << ",\"" << b.beta_text << "\"," << mid(b.beta_n, 10) << ","
                << (row.gaps.layers.empty() ? "none" : margin_decimal(row.gaps.layers[0].min_margin))
                << "," << (row.gaps.layers.empty() ? 1 : row.gaps.layers[0].max_ties) << ","
                << mid(b.leak.max_leak, 6) << "," << up(b.leak.max_leak_bound, 6) << ","
                << up(b.leak.worst_row_bound, 6) << ","
                << (L ? up(b.state_measured[L - 1], 6) : "0") << ","
                << (L ? up(b.state_bound[L - 1], 6) : "0") << "," << b.agree << "," << b.disagree
                << "," << b.undecided << "," << b.certified << "," << row.inputs.size() << ","
                << (row.smallest_beta ? up(*row.smallest_beta, 6) : "none");
            const std::size_t ri = static_cast<std::size_t>(&row - r.rows.data());
            if (ri < r.every_input.size()) {
                const auto& e = r.every_input[ri];
                const std::size_t bi = static_cast<std::size_t>(&b - row.betas.data());
                csv << "," << margin_decimal(e.margins.gamma) << ","
                    << (e.margins.beta_every ? up(*e.margins.beta_every, 6) : "none") << ","
                    << (e.margins.beta_off ? up(*e.margins.beta_off, 6) : "none") << ","
                    << (bi < e.certified.size() ? (e.certified[bi] ? "yes" : "no") : "") << ","
                    << (bi < e.certified_off.size() ? (e.certified_off[bi] ? "yes" : "no") : "");
            } else {
                csv << ",,,,,";
            }
            csv << "\n";
        }
    write_file_atomic(dir / "simulate.csv", csv.str());

    std::ostringstream md;
    md << "# simulate: " << r.model_name << " (" << r.attention << ") against softmax at inverse "
       << "temperature beta\n\n";
    md << "Inputs: " << r.input_note << ". The hard model is evaluated exactly; the soft "
       << "counterpart (same parameters, softmax of beta(n) times the scores) in " << r.scalar
       << " at " << r.precision << " bits. The leak of a row is 1 - (weight on the maximal "
       << "positions T); its certified bound is r/(1+r), r = ((n-t)/t) e^(-beta (gamma - 2 eps)) "
       << "(docs/theory.md). Bounds are rounded up.\n\n";
    md << "| n | beta | beta(n) | min margin (layer 1) | max ties | leak | leak bound | "
          "\\|y_n - hard\\| (upper) | bound | readout agree / certified | smallest certified beta |\n";
    md << "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& row : r.rows)
        for (const auto& b : row.betas) {
            const std::size_t L = b.state_bound.size();
            md << "| " << row.n << " | `" << b.beta_text << "` | " << mid(b.beta_n, 4) << " | "
               << (row.gaps.layers.empty() ? "none" : margin_text(row.gaps.layers[0].min_margin))
               << " | " << (row.gaps.layers.empty() ? 1 : row.gaps.layers[0].max_ties) << " | "
               << mid(b.leak.max_leak) << " | " << up(b.leak.max_leak_bound) << " | "
               << (L ? up(b.state_measured[L - 1]) : "0") << " | "
               << (L ? up(b.state_bound[L - 1]) : "0") << " | " << b.agree << " / " << b.certified
               << " of " << row.inputs.size() << " | "
               << (row.smallest_beta ? up(*row.smallest_beta, 4) : "none") << " |\n";
        }
    if (!r.lengths.empty()) {
        md << "\n| constant beta | certified at every listed n up to | extrapolated from n | "
              "up to n |\n|---|---|---|---|\n";
        for (const auto& l : r.lengths)
            md << "| `" << l.beta << "` | " << (l.in_list ? std::to_string(*l.in_list) : "none")
               << " | " << l.extrapolated_from << " | "
               << (l.extrapolated ? (*l.extrapolated >= (1LL << 62) ? std::string(">= 2^62")
                                                                    : std::to_string(*l.extrapolated))
                                  : std::string("none"))
               << " |\n";
    }
    if (!r.every_input.empty()) {
        md << "\n## Every input\n\nWhat holds for every input of length n, decided without enumerating "
              "the inputs (docs/theory.md §4.5): the smallest margin of the output row over every "
              "input (one-layer models: exactly, with an input attaining it), the ties between keys of "
              "different values that can occur, the smallest slack of the hard readout, and the "
              "smallest constant beta that certifies the soft counterpart's readout on every input.\n";
        for (std::size_t t = 0; t < r.rows.size() && t < r.every_input.size(); ++t) {
            md << "\n### n = " << r.rows[t].n << "\n\n";
            for (const auto& l : every_input_lines(r, t)) md << "- " << l << "\n";
        }
    }
    const std::size_t f = findings(r);
    md << "\nFindings (a measured value certainly above its certified bound): " << f << "\n";
    if (!made_by.empty()) md << "\n" << provenance_to_markdown(made_by);
    std::vector<std::string> figure_notes;
    std::string figures_md;
    if (!r.rows.empty()) {
        plot_figure fig = leak_figure(r);
        fig.generator = figure_generator(made_by);
        std::string texts = take_figure_text(fig, "leak", figure_text);
        auto names = write_figure(dir, "leak", fig, figure_notes);
        if (!r.every_input.empty()) {
            plot_figure bf = beta_figure(r);
            bf.generator = fig.generator;
            texts += take_figure_text(bf, "beta", figure_text);
            for (auto& name : write_figure(dir, "beta", bf, figure_notes)) names.push_back(name);
        }
        figures_md = "\nFigures: ";
        for (std::size_t t = 0; t < names.size(); ++t) figures_md += (t ? ", `" : "`") + names[t] + "`";
        figures_md += "\n\n" + texts;
        for (const auto& note : figure_notes) figures_md += "\nNo PNG: " + note + ".\n";
    }

    write_file_atomic(dir / "report.md", md.str() + figures_md);
}

} // namespace attnprop::report
