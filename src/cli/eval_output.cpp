#include "cli/eval_output.hpp"

#include "report/files.hpp"

#include <sstream>

namespace attnprop::report {

namespace {

using json_out::string_array;

json::value symbol_object(const std::vector<std::string>& keys, const std::vector<std::string>& v) {
    json::value o = json::value::object();
    for (std::size_t r = 0; r < keys.size() && r < v.size(); ++r)
        o.set(keys[r], json::value::string(v[r]));
    return o;
}

json::value size_array(const std::vector<std::size_t>& v) {
    json::value a = json::value::array();
    for (auto s : v) a.push_back(json::value::number(static_cast<long long>(s)));
    return a;
}

/// "[a, b, c]" of values already written for people (a ball with its radius).
std::string join(const std::vector<std::string>& v) {
    std::string s = "[";
    for (std::size_t c = 0; c < v.size(); ++c) s += (c ? ", " : "") + v[c];
    return s + "]";
}

} // namespace

json::value undefined_to_json(const numeric::undefined_error& e) {
    const auto& w = e.where();
    json::value u = json::value::object();
    if (w.layer) u.set("layer", json::value::number(static_cast<long long>(*w.layer)));
    if (!w.node.empty()) u.set("node", json::value::string(w.node));
    if (w.position) u.set("position", json::value::number(static_cast<long long>(*w.position)));
    if (w.head) u.set("head", json::value::number(static_cast<long long>(*w.head)));
    u.set("reason", json::value::string(e.reason()));
    u.set("message", json::value::string(e.message()));
    u.set("precision_may_resolve", json::value::boolean(e.precision_may_resolve()));
    return u;
}

static bool any_mask(const analysis::evaluation& ev) {
    for (auto mk : ev.masks)
        if (mk != model::mask_kind::none) return true;
    return false;
}

json::value eval_to_json(const analysis::evaluation& ev) {
    json::value o = json::value::object();
    o.set("model", json::value::string(ev.model_name));
    o.set("attention", json::value::string(model::to_string(ev.attention)));
    if (any_mask(ev)) {
        json::value ms = json::value::array();
        for (auto mk : ev.masks) ms.push_back(json::value::string(model::to_string(mk)));
        o.set("masks", std::move(ms));
    }
    o.set("input", json::value::string(ev.input));
    o.set("n", json::value::number(static_cast<long long>(ev.n)));
    o.set("scalar", json::value::string(ev.scalar));
    o.set("precision", ev.precision > 0 ? json::value::number(ev.precision) : json::value::null_value());
    if (!ev.scalar_attempts.empty()) o.set("scalar_attempts", string_array(ev.scalar_attempts));
    if (ev.undefined) {
        o.set("undefined", undefined_to_json(*ev.undefined));
        o.set("y", json::value::null_value());
    } else if (ev.undecided) {
        json::value u = json::value::object();
        u.set("layer", json::value::number(static_cast<long long>(ev.undecided->layer)));
        u.set("position", json::value::number(static_cast<long long>(ev.undecided->position)));
        u.set("head", json::value::number(static_cast<long long>(ev.undecided->head)));
        u.set("candidates", size_array(ev.undecided->candidates));
        o.set("undecided", std::move(u));
        o.set("y", json::value::null_value());
    } else {
        o.set("y", string_array(ev.y));
        if (!ev.y_radius.empty()) o.set("y_radius", string_array(ev.y_radius));
        // For people: the digits each enclosure certifies (numeric::to_certified_display).
        o.set("y_text", string_array(ev.y_text));
    }
    if (!ev.notes.empty()) {
        json::value notes = json::value::array();
        for (const auto& n : ev.notes) notes.push_back(json::value::string(n));
        o.set("notes", std::move(notes));
    }
    if (ev.undefined) {
        // no readout
    } else if (ev.recognizer) {
        json::value acc = json::value::null_value();
        if (ev.accept == attention::verdict::accept) acc = json::value::boolean(true);
        if (ev.accept == attention::verdict::reject) acc = json::value::boolean(false);
        o.set("accept", std::move(acc));
    } else if (!ev.undecided) {
        o.set("logits", symbol_object(ev.output_symbols, ev.logits));
        if (!ev.logits_radius.empty())
            o.set("logits_radius", symbol_object(ev.output_symbols, ev.logits_radius));
        o.set("probabilities", symbol_object(ev.output_symbols, ev.probabilities));
        if (!ev.probabilities_radius.empty())
            o.set("probabilities_radius", symbol_object(ev.output_symbols, ev.probabilities_radius));
        o.set("logits_text", symbol_object(ev.output_symbols, ev.logits_text));
        o.set("probabilities_text", symbol_object(ev.output_symbols, ev.probabilities_text));
    }
    if (ev.exact_stats) {
        json::value s = json::value::object();
        s.set("argmax_rows_filtered",
              json::value::number(static_cast<long long>(ev.exact_stats->rows_filtered)));
        s.set("argmax_rows_exact",
              json::value::number(static_cast<long long>(ev.exact_stats->rows_exact)));
        s.set("exact_states", json::value::number(static_cast<long long>(ev.exact_stats->exact_states)));
        o.set("exact_path", std::move(s));
    }
    if (!ev.prefixes.empty()) {
        json::value ps = json::value::array();
        for (const auto& p : ev.prefixes) {
            json::value e = json::value::object();
            e.set("position", json::value::number(static_cast<long long>(p.position)));
            e.set("next", p.next.empty() ? json::value::null_value() : json::value::string(p.next));
            if (p.undefined) e.set("undefined", json::value::string(*p.undefined));
            if (p.accept) {
                json::value acc = json::value::null_value();
                if (*p.accept == attention::verdict::accept) acc = json::value::boolean(true);
                if (*p.accept == attention::verdict::reject) acc = json::value::boolean(false);
                e.set("accept", std::move(acc));
            }
            if (!p.probabilities.empty()) e.set("probabilities", string_array(p.probabilities));
            e.set("cross_entropy_bits", p.cross_entropy ? json::value::string(*p.cross_entropy)
                                                        : json::value::null_value());
            ps.push_back(std::move(e));
        }
        o.set("prefixes", std::move(ps));
        o.set("mean_cross_entropy_bits", ev.mean_cross_entropy
                                             ? json::value::string(*ev.mean_cross_entropy)
                                             : json::value::null_value());
    }
    if (!ev.trace.empty()) {
        json::value layers = json::value::array();
        for (std::size_t k = 0; k < ev.trace.size(); ++k) {
            const auto& tl = ev.trace[k];
            json::value l = json::value::object();
            l.set("layer", json::value::number(static_cast<long long>(k)));
            if (k >= 1 && k <= ev.masks.size() && ev.masks[k - 1] != model::mask_kind::none)
                l.set("mask", json::value::string(model::to_string(ev.masks[k - 1])));
            json::value ys = json::value::array();
            for (const auto& row : tl.y) ys.push_back(string_array(row));
            l.set("y", std::move(ys));
            if (!tl.choice.empty()) {
                json::value ch = json::value::array();
                for (const auto& row : tl.choice) ch.push_back(size_array(row));
                l.set("choice", std::move(ch));
            }
            if (!tl.ties.empty()) {
                json::value ts = json::value::array();
                for (const auto& row : tl.ties) {
                    json::value heads = json::value::array();
                    for (const auto& set : row) heads.push_back(size_array(set));
                    ts.push_back(std::move(heads));
                }
                l.set("ties", std::move(ts));
            }
            if (!tl.weights.empty()) {
                json::value ws = json::value::array();
                for (const auto& row : tl.weights) {
                    json::value heads = json::value::array();
                    for (const auto& w : row) heads.push_back(string_array(w));
                    ws.push_back(std::move(heads));
                }
                l.set("weights", std::move(ws));
            }
            layers.push_back(std::move(l));
        }
        o.set("trace", std::move(layers));
    }
    return o;
}

std::string eval_to_text(const analysis::evaluation& ev) {
    std::ostringstream os;
    os << "model      " << ev.model_name << " (" << model::to_string(ev.attention) << " attention";
    if (any_mask(ev)) {
        os << "; masks";
        for (std::size_t k = 0; k < ev.masks.size(); ++k)
            os << (k ? ", " : " ") << "layer " << k + 1 << " " << model::to_string(ev.masks[k]);
    }
    os << ")\n";
    // A long input (--input-file) is shown by its ends; --json carries it whole.
    constexpr std::size_t shown = 32;
    if (ev.input.size() > 3 * shown)
        os << "input      \"" << ev.input.substr(0, shown) << "...\" (" << ev.input.size() - 2 * shown
           << " symbols) \"..." << ev.input.substr(ev.input.size() - shown) << "\" + eos, n = "
           << ev.n << "\n";
    else
        os << "input      \"" << ev.input << "\" + eos, n = " << ev.n << "\n";
    os << "scalar     " << ev.scalar;
    if (ev.precision > 0) os << ", " << ev.precision << " bits";
    if (ev.scalar_attempts.size() > 1) {
        os << " (auto: tried";
        for (std::size_t i = 0; i + 1 < ev.scalar_attempts.size(); ++i)
            os << (i ? ", " : " ") << ev.scalar_attempts[i];
        os << " first)";
    } else if (!ev.scalar_attempts.empty())
        os << " (auto: certifies the digits asked for)";
    os << "\n";
    if (ev.undecided) {
        os << "undecided  layer " << ev.undecided->layer << ", position " << ev.undecided->position
           << ", head " << ev.undecided->head << ": the argmax could be any of positions";
        for (auto c : ev.undecided->candidates) os << " " << c;
        os << "\n           (raise --precision, or use --scalar exact for hard attention)\n";
        return os.str();
    }
    if (ev.undefined) {
        os << "result     " << ev.undefined->message() << "\n";
        if (ev.undefined->precision_may_resolve())
            os << "           (an enclosure contains the pole: a higher --precision may resolve "
                  "it)\n";
        for (const auto& n : ev.notes) os << "note       " << n << "\n";
        return os.str();
    }
    os << "y_n^(L)    " << join(ev.y_text) << "\n";
    if (ev.recognizer) {
        os << "readout    " << attention::to_string(*ev.accept) << "\n";
    } else {
        os << "logits    ";
        for (std::size_t r = 0; r < ev.output_symbols.size(); ++r) {
            os << " " << ev.output_symbols[r] << ": " << ev.logits_text[r];
            if (r + 1 < ev.output_symbols.size()) os << ",";
        }
        os << "\nP(next)   ";
        for (std::size_t r = 0; r < ev.output_symbols.size(); ++r) {
            os << " " << ev.output_symbols[r] << ": " << ev.probabilities_text[r];
            if (r + 1 < ev.output_symbols.size()) os << ",";
        }
        os << "\n";
    }
    for (const auto& n : ev.notes) os << "note       " << n << "\n";
    if (ev.exact_stats && ev.exact_stats->rows_filtered + ev.exact_stats->rows_exact > 0)
        os << "exact path " << ev.exact_stats->rows_filtered << " argmax rows decided by the interval filter, "
           << ev.exact_stats->rows_exact << " on exact rationals\n";
    if (!ev.prefixes.empty()) {
        os << "prefixes   the readout at every position i (after x_1 .. x_i)";
        if (ev.mean_cross_entropy)
            os << "; mean next-token cross-entropy " << *ev.mean_cross_entropy << " bits over "
               << ev.cross_entropy_terms << " positions";
        os << "\n";
        for (const auto& p : ev.prefixes) {
            os << "  position " << p.position;
            if (!p.next.empty()) os << "  next " << p.next;
            if (p.undefined) {
                os << "  undefined: " << *p.undefined << "\n";
                continue;
            }
            if (p.accept) os << "  " << attention::to_string(*p.accept);
            if (!p.probabilities.empty()) os << "  p = " << join(p.probabilities);
            if (p.cross_entropy) os << "  CE = " << *p.cross_entropy << " bits";
            os << "\n";
        }
    }
    for (std::size_t k = 0; k < ev.trace.size(); ++k) {
        const auto& tl = ev.trace[k];
        os << "-- layer " << k;
        if (k >= 1 && k <= ev.masks.size() && ev.masks[k - 1] == model::mask_kind::causal)
            os << " (causal mask: position i attends to positions <= i)";
        os << "\n";
        for (std::size_t j = 0; j < tl.y.size(); ++j) {
            os << "  position " << j + 1;
            if (!tl.choice.empty()) {
                os << "  attends";
                for (std::size_t h = 0; h < tl.choice[j].size(); ++h) {
                    os << " h" << h + 1 << "->";
                    if (!tl.ties.empty() && tl.ties[j][h].size() > 1) {
                        // average-hard: weight 1/t on each maximal key
                        os << "{";
                        for (std::size_t t = 0; t < tl.ties[j][h].size(); ++t)
                            os << (t ? "," : "") << tl.ties[j][h][t];
                        os << "}";
                    } else {
                        os << tl.choice[j][h];
                    }
                }
            }
            os << "  y = " << join(tl.y_text[j]) << "\n";
            if (!tl.weights_text.empty() && !tl.weights_text[j].empty())
                for (std::size_t h = 0; h < tl.weights_text[j].size(); ++h)
                    os << "      weights h" << h + 1 << " = " << join(tl.weights_text[j][h]) << "\n";
        }
    }
    return os.str();
}

} // namespace attnprop::report
