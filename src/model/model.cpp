#include "model/model.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace attnprop::model {

std::optional<attention_kind> parse_attention_kind(std::string_view name) {
    for (const auto& k : attention_kinds)
        if (k.name == name) return k.kind;
    return std::nullopt;
}

std::string attention_kind_names() {
    std::string out;
    for (std::size_t k = 0; k < attention_kinds.size(); ++k) {
        if (k > 0) out += k + 1 == attention_kinds.size() ? " or " : ", ";
        out += "'" + std::string(attention_kinds[k].name) + "'";
    }
    return out;
}

namespace {

/// Whether node idx is -log(n).
bool is_minus_log_n(const formula::tree& t, std::uint32_t idx) {
    const formula::node& nd = t[idx];
    if (nd.op != formula::op::neg) return false;
    const formula::node& lg = t[nd.lhs];
    return lg.op == formula::op::log && t[lg.lhs].op == formula::op::var_n;
}

/// Whether node idx is log(n).
bool is_log_n(const formula::tree& t, std::uint32_t idx) {
    const formula::node& nd = t[idx];
    return nd.op == formula::op::log && t[nd.lhs].op == formula::op::var_n;
}

/// The exact value of a constant rational subformula, else std::nullopt.
std::optional<rational> constant_at(const formula::tree& t, std::uint32_t idx) {
    const formula::node& nd = t[idx];
    if (nd.constant && nd.rational && nd.value) return *nd.value;
    return std::nullopt;
}

} // namespace

std::optional<rational> minus_log_n_offset(const expr& bias) {
    const formula::tree& t = bias.ast();
    const formula::node& r = t.top();
    if (is_minus_log_n(t, t.root)) return rational(0);
    switch (r.op) {
    case formula::op::sub:
        if (is_log_n(t, r.rhs)) return constant_at(t, r.lhs); // c - log(n)
        if (is_minus_log_n(t, r.lhs))                          // -log(n) - c
            if (auto c = constant_at(t, r.rhs)) return rational(-*c);
        return std::nullopt;
    case formula::op::add:
        if (is_minus_log_n(t, r.lhs)) return constant_at(t, r.rhs); // -log(n) + c
        if (is_minus_log_n(t, r.rhs)) return constant_at(t, r.lhs); // c + -log(n)
        return std::nullopt;
    default: return std::nullopt;
    }
}

namespace {

/// Whether every layer of a linear-attention model has elu1 features.
bool all_elu1(const model<rational>& m) {
    return std::all_of(m.layers.begin(), m.layers.end(),
                       [](const layer<rational>& l) { return l.feature_map == feature_map_kind::elu1; });
}

} // namespace

std::optional<influence_law> influence_of(const model<rational>& m) {
    const attention_kind_info& a = info(m.attention);
    // Linear attention: the registry's law is elu1's (positive features bounded on bounded
    // inputs); normalised relu features may vanish or concentrate on one key: no law asserted.
    if (a.feature_map && a.influence == influence_law::vanishing && !all_elu1(m))
        return std::nullopt;
    if (a.weights != weighting::elementwise) return a.influence;
    // Sigmoid: every bias constant is the registry's law (not vanishing); every bias
    // -log(n) + c makes every weight Theta(1/n) (theory.md §2.6); a mixture, or a bias of
    // neither form, asserts nothing.
    bool all_constant = true, all_log = true;
    for (const auto& l : m.layers) {
        const bool constant = !l.sigmoid_bias || l.sigmoid_bias->is_constant();
        const bool log = l.sigmoid_bias && minus_log_n_offset(*l.sigmoid_bias).has_value();
        all_constant = all_constant && constant;
        all_log = all_log && log;
    }
    if (all_log && !m.layers.empty()) return influence_law::vanishing;
    if (all_constant) return a.influence;
    return std::nullopt;
}

std::string influence_in_words(const model<rational>& m) {
    const attention_kind_info& a = info(m.attention);
    if (a.feature_map && !influence_of(m))
        return std::string(a.name) + " attention with relu features: a row's sum phi(q) . "
               "sum_j phi(k_j) may be 0 (undefined) or come from one key alone, so no law is "
               "asserted";
    if (a.weights != weighting::elementwise) return std::string(a.influence_in_words);
    const auto law = influence_of(m);
    if (!law)
        return "sigmoid attention whose biases are neither all constant nor all of the form "
               "-log(n) + c: no law is asserted";
    switch (*law) {
    case influence_law::vanishing:
        return "sigmoid weights with the bias -log(n) + c are sigma(s - log n + c) = "
               "1 / (1 + n e^(-(s + c))): scores in [-M, M] put every weight within "
               "[1 / ((1 + e^(M - c)) n), e^(M + c) / n]";
    case influence_law::not_vanishing:
    case influence_law::hard_theorem: break;
    }
    return std::string(a.influence_in_words);
}

int alphabet::index_of(std::string_view s) const {
    for (std::size_t k = 0; k < symbols.size(); ++k)
        if (symbols[k] == s) return static_cast<int>(k);
    if (s == eos) return eos_index();
    return -1;
}

const std::string& alphabet::name(int index) const {
    if (index == eos_index()) return eos;
    if (index < 0 || index > eos_index())
        throw std::out_of_range("symbol index " + std::to_string(index) + " is not in 0.." +
                                std::to_string(eos_index()));
    return symbols[static_cast<std::size_t>(index)];
}

std::optional<long> positional_spec::max_length() const {
    if (type == kind::table) return static_cast<long>(table.size());
    return std::nullopt;
}

bool positional_spec::needs_real_arithmetic() const {
    if (type == kind::sinusoidal) return true;
    if (type == kind::formula)
        for (const auto& f : formulas)
            if (f && !f->is_rational()) return true;
    return false;
}

namespace {

/// A byte as it should appear in a message: itself when printable, else \xNN.
std::string show_byte(char c) {
    auto u = static_cast<unsigned char>(c);
    if (std::isprint(u)) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(u));
    return buf;
}

std::string show_alphabet(const alphabet& sigma) {
    std::string s = "{";
    for (std::size_t k = 0; k < sigma.symbols.size(); ++k) {
        if (k > 0) s += ", ";
        s += sigma.symbols[k];
    }
    return s + "}";
}

} // namespace

input_sequence parse_input(const model<rational>& m, std::string_view text) {
    const alphabet& sigma = m.sigma;
    if (!sigma.eos.empty() && text.find(sigma.eos) != std::string_view::npos)
        throw input_error("the input must not contain eos '" + sigma.eos + "'; it is appended");
    input_sequence x;
    x.reserve(text.size() + 1);
    for (std::size_t p = 0; p < text.size(); ++p) {
        int k = -1;
        for (std::size_t s = 0; s < sigma.symbols.size(); ++s)
            if (sigma.symbols[s].size() == 1 && sigma.symbols[s][0] == text[p]) {
                k = static_cast<int>(s);
                break;
            }
        if (k < 0)
            throw input_error("symbol '" + show_byte(text[p]) + "' at position " +
                              std::to_string(p + 1) + " is not in the alphabet " +
                              show_alphabet(sigma));
        x.push_back(k);
    }
    x.push_back(sigma.eos_index());
    return x;
}

std::string format_input(const alphabet& sigma, const input_sequence& x) {
    std::string s;
    for (int k : x)
        if (k != sigma.eos_index()) s += sigma.name(k);
    return s;
}

content_error::content_error(const std::string& file, std::string pointer, std::string message)
    : input_error((file.empty() ? std::string() : file + ": error: ") + message +
                  (pointer.empty() ? std::string() : " (at " + pointer + ")")),
      file_(file), pointer_(std::move(pointer)), message_(std::move(message)) {}

void check_length(const model<rational>& m, long n) {
    if (n < 1)
        throw input_error("the input length n must be at least 1 (eos alone), got " +
                          std::to_string(n));
    if (m.positional)
        if (auto max = m.positional->max_length(); max && n > *max)
            throw content_error(m.file, "/positional/rows",
                                "the model's positional table has " + std::to_string(*max) +
                                    " rows; an input of length n = " + std::to_string(n) +
                                    " needs " + std::to_string(n));
    if (!selects_maximum(m.attention) || n < 2) return;
    for (std::size_t k = 0; k < m.layers.size(); ++k)
        for (std::size_t h = 0; h < m.layers[k].heads.size(); ++h) {
            const auto& beta = m.layers[k].heads[h].score.beta;
            if (!beta) continue;
            numeric::order sign = numeric::order::unknown;
            std::string shown;
            try {
                if (beta->is_rational()) {
                    const rational b = beta->eval_rational(1, n);
                    sign = b > 0 ? numeric::order::greater : numeric::order::less;
                    shown = numeric::to_exact_string(b);
                } else {
                    for (long prec = 64; prec <= 512 && sign == numeric::order::unknown; prec *= 2) {
                        const numeric::context ctx{prec};
                        const auto b = beta->eval<numeric::arb_ball>(1, n, ctx);
                        sign = numeric::sign(b, ctx);
                        shown = numeric::to_display_string(b, 10);
                    }
                }
            } catch (const numeric::numeric_error& e) {
                shown = std::string("no value: ") + e.what();
            }
            if (sign != numeric::order::greater)
                throw content_error(m.file,
                                  "/layers/" + std::to_string(k) + "/heads/" + std::to_string(h) +
                                      "/score/" +
                                      (m.layers[k].heads[h].score.length_scale ==
                                               score_spec<rational>::length_scaling::log
                                           ? "length_scale"
                                           : "beta"),
                                  "layer " + std::to_string(k + 1) + " head " + std::to_string(h + 1) +
                                  ": hard attention ignores the inverse temperature beta only "
                                  "where it is positive, but beta(n) = '" + beta->text() +
                                  "' at n = " + std::to_string(n) + " is " +
                                  (sign == numeric::order::unknown ? "not certainly positive ("
                                                                   : "not positive (") +
                                  shown + ")");
        }
}

std::string map_site::name() const {
    const std::string l = "layer " + std::to_string(layer + 1);
    const std::string h = l + " head " + std::to_string(head + 1);
    switch (where) {
    case role::input: return "input map";
    case role::score: return h + " score map";
    case role::value: return h + " value map";
    case role::update: return l + " update";
    case role::readout: return "readout map";
    }
    return "?";
}

namespace {

/// exact_blockers with the pointer of each.
std::vector<std::pair<std::string, std::string>> blockers_at(const model<rational>& m) {
    std::vector<std::pair<std::string, std::string>> out;
    if (const attention_kind_info& a = info(m.attention); !a.exact)
        out.emplace_back("attention is " + std::string(a.name) + " (" + std::string(a.needs) + ")",
                         "/attention");
    // An exact normaliser (StableMax, sparsemax) weighs every key by its scaled score, so an
    // irrational scale or β(n) needs real arithmetic; a maximal-score kind ignores both (a
    // positive factor keeps the maximal set).
    // Linear attention (feature_map): relu features are exact, elu1's e^x needs exp; neither
    // reads the score scale or beta.
    if (const attention_kind_info& a = info(m.attention); a.feature_map)
        for (std::size_t k = 0; k < m.layers.size(); ++k)
            if (m.layers[k].feature_map == feature_map_kind::elu1)
                out.emplace_back("layer " + std::to_string(k + 1) + ": " + std::string(a.name) +
                                     " attention's feature map elu1 needs exp (e^x for x <= 0)",
                                 "/layers/" + std::to_string(k) + "/feature_map");
    if (const attention_kind_info& a = info(m.attention);
        a.exact && a.weights == weighting::normaliser && !a.feature_map)
        for (std::size_t k = 0; k < m.layers.size(); ++k)
            for (std::size_t h = 0; h < m.layers[k].heads.size(); ++h) {
                const score_spec<rational>& sc = m.layers[k].heads[h].score;
                if (sc.type != score_spec<rational>::kind::dot) continue;
                const std::string at = "layer " + std::to_string(k + 1) + " head " +
                                       std::to_string(h + 1) + ": ";
                const std::string ptr =
                    "/layers/" + std::to_string(k) + "/heads/" + std::to_string(h) + "/score";
                if (sc.scale_inv_sqrt != 1)
                    out.emplace_back(at + "the score scale divides by sqrt(" +
                                         numeric::to_exact_string(sc.scale_inv_sqrt) +
                                         "), irrational; give \"scale\" a rational value",
                                     ptr);
                if (sc.beta && !sc.beta->is_rational())
                    out.emplace_back(at + "the inverse temperature '" + sc.beta->text() +
                                         "' is irrational",
                                     ptr);
            }
    if (m.positional) {
        const positional_spec& p = *m.positional;
        if (p.type == positional_spec::kind::sinusoidal)
            out.emplace_back("positional: sinusoidal encoding", "/positional/kind");
        if (p.type == positional_spec::kind::formula)
            for (std::size_t c = 0; c < p.formulas.size(); ++c)
                if (p.formulas[c] && !p.formulas[c]->is_rational())
                    out.emplace_back("positional coordinate " + std::to_string(c) + ": '" +
                                         p.formulas[c]->text() + "'",
                                     "/positional/coordinates/" + std::to_string(c));
    }
    for_each_map(m, [&](const map<rational>& f, const map_site& site) {
        for (const auto& feature : features(f).real_arithmetic)
            out.emplace_back(site.name() + ": " + feature, pointer_of(site));
    });
    // A softmax readout is no blocker: its logits are exact, and the probabilities are then
    // enclosed in Arb balls at the requested precision.
    return out;
}

} // namespace

std::string pointer_of(const map_site& site) {
    const std::string l = "/layers/" + std::to_string(site.layer);
    const std::string h = l + "/heads/" + std::to_string(site.head);
    switch (site.where) {
    case map_site::role::input: return "/input/map";
    case map_site::role::score: return h + "/score/map";
    case map_site::role::value: return h + "/value/map";
    case map_site::role::update: return l + "/update";
    case map_site::role::readout: return "/readout/map";
    }
    return "";
}

std::vector<std::string> exact_blockers(const model<rational>& m) {
    std::vector<std::string> out;
    for (auto& b : blockers_at(m)) out.push_back(std::move(b.first));
    return out;
}

std::vector<std::string> exact_blocker_pointers(const model<rational>& m) {
    std::vector<std::string> out;
    for (auto& b : blockers_at(m)) out.push_back(std::move(b.second));
    return out;
}

void require_exact(const model<rational>& m, const std::string& what) {
    const auto blockers = blockers_at(m);
    if (!blockers.empty())
        throw content_error(m.file, blockers.front().second, what + ": " + blockers.front().first);
}

bool has_singular_layer_norm(const model<rational>& m) {
    bool found = false;
    for_each_map(m, [&](const map<rational>& f, const map_site&) {
        found = found || features(f).singular_layer_norm;
    });
    return found;
}

} // namespace attnprop::model
