// The certificate of a restriction and the language counterexamples (restriction.hpp).
#include "hard_limit/restriction.hpp"

#include "hard_limit/restriction_internal.hpp"
#include "attention/hard_exact.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>

namespace attnprop::analysis {

namespace {

std::vector<std::size_t> free_positions(const restriction& r) {
    std::vector<std::size_t> f;
    for (std::size_t t = 0; t < r.rho.size(); ++t)
        if (r.rho[t] < 0) f.push_back(t);
    return f;
}

std::vector<std::size_t> outside(const std::vector<std::size_t>& all,
                                 const std::vector<std::size_t>& dep) {
    std::vector<std::size_t> o;
    std::set_difference(all.begin(), all.end(), dep.begin(), dep.end(), std::back_inserter(o));
    return o;
}

/// ρ with eos appended, free positions set to symbol 0.
model::input_sequence base_input(const model::model<rational>& m, const restriction& r) {
    model::input_sequence x;
    for (int v : r.rho) x.push_back(v < 0 ? 0 : v);
    x.push_back(m.sigma.eos_index());
    return x;
}

vec<rational> exact_output(const model::model<rational>& m, const model::input_sequence& x) {
    return attention::hard_forward_exact(m, x, numeric::context{53}).y;
}

bool accepts(const model::model<rational>& m, const vec<rational>& y) {
    return attention::recognize(m.out, y, numeric::context{53}) == attention::verdict::accept;
}

std::string word(const model::model<rational>& m, const model::input_sequence& x) {
    return model::format_input(m.sigma, x);
}

std::string position_list(const std::vector<std::size_t>& v, std::size_t limit = 12) {
    std::string s;
    for (std::size_t t = 0; t < v.size() && t < limit; ++t) s += (t ? ", " : "") + std::to_string(v[t] + 1);
    if (v.size() > limit) s += ", ... (" + std::to_string(v.size()) + " in all)";
    return s.empty() ? "none" : s;
}

} // namespace

const char* to_string(language_verdict v) {
    switch (v) {
    case language_verdict::counterexample: return "counterexample";
    case language_verdict::not_ruled_out: return "not ruled out";
    case language_verdict::no_pair_found: return "no pair found";
    }
    return "?";
}

namespace {

/// The checks of a certificate that need no forward pass: the free budget, growth and
/// counting, and whether the restriction is complete.
certificate certificate_head(const restriction& r) {
    certificate c;
    {
        certificate_check f;
        f.name = "free-fraction";
        f.soundness = false;
        f.passed = r.free_budget_met();
        f.detail = "|Free| = " + std::to_string(r.free_count) + " of " +
                   std::to_string(r.rho.size()) + " inputs, required ⌈C·" +
                   std::to_string(r.initially_free == r.rho.size() ? r.n
                                                                   : static_cast<long>(r.initially_free)) +
                   "⌉ = " + std::to_string(r.free_target) + " (C = " +
                   numeric::to_exact_string(r.free_fraction) + ")";
        c.checks.push_back(f);
    }
    for (const auto& fig : r.figures) {
        certificate_check g;
        g.name = "growth";
        g.passed = fig.growth_holds;
        g.detail = "layer " + std::to_string(fig.layer) + ": " + fig.growth_detail;
        c.checks.push_back(g);
        certificate_check h;
        h.name = "counting";
        h.passed = fig.counting_holds;
        h.detail = "layer " + std::to_string(fig.layer) + ": " + std::to_string(fig.high_fan_out) +
                   " inputs with fan-out > c/(ηC) = " + numeric::to_exact_string(fig.fan_out_threshold) +
                   ", at most ηCn = " + numeric::to_exact_string(fig.fan_out_limit);
        c.checks.push_back(h);
    }
    if (r.status != restriction_status::complete) {
        c.complete = false;
        certificate_check s;
        s.name = "complete";
        s.passed = false;
        s.soundness = false;
        s.detail = r.stop_reason;
        c.checks.push_back(s);
    }
    return c;
}

/// Whether the certificate evaluates every assignment of Free, and how many inputs it
/// evaluates (none for an incomplete restriction).
std::pair<bool, std::size_t> certificate_count(const restriction& r,
                                               const certificate_options& opt) {
    if (r.status != restriction_status::complete) return {false, 0};
    std::size_t free = 0;
    for (int v : r.rho) free += v < 0 ? 1 : 0;
    const std::size_t total = detail::checked_power(r.sigma, free, opt.exhaustive_limit);
    if (total <= opt.exhaustive_limit) return {true, total};
    return {false, static_cast<std::size_t>(std::max(2, opt.samples))};
}

} // namespace

std::size_t certificate_inputs(const restriction& r, const certificate_options& opt) {
    return certificate_count(r, opt).second;
}

model::input_sequence certificate_input(const model::model<rational>& m, const restriction& r,
                                        const certificate_options& opt, std::size_t t) {
    const auto [exhaustive, count] = certificate_count(r, opt);
    if (t >= count)
        throw precondition_error("certificate input " + std::to_string(t) + " of " +
                                 std::to_string(count));
    const auto F = free_positions(r);
    const std::size_t s = r.sigma;
    // Exhaustive enumeration of Free, or pairs (2t, 2t + 1) sharing the values on ρ and
    // D_L(n) and differing (at random) on Free \ D_L(n).
    model::input_sequence x = base_input(m, r);
    if (exhaustive) {
        std::size_t w = t;
        for (std::size_t f : F) {
            x[f] = static_cast<int>(w % s);
            w /= s;
        }
        return x;
    }
    const auto& D = r.dependency;
    std::mt19937_64 rng_d(opt.seed * 0x2545F4914F6CDD1DULL + t / 2);
    std::mt19937_64 rng_o(opt.seed * 0x9E3779B97F4A7C15ULL + t + 17);
    std::uniform_int_distribution<int> sym(0, static_cast<int>(s) - 1);
    const std::size_t pair = t / 2;
    const bool cover = r.table.size() <= count / 2;
    std::size_t w = pair % std::max<std::size_t>(r.table.size(), 1);
    for (std::size_t d : D) {
        x[d] = cover ? static_cast<int>(w % s) : sym(rng_d);
        w /= s;
    }
    for (std::size_t o : outside(F, D)) x[o] = sym(rng_o);
    return x;
}

std::vector<vec<rational>> certificate_outputs(const model::model<rational>& m,
                                               const restriction& r,
                                               const certificate_options& opt, std::size_t first,
                                               std::size_t count) {
    const std::size_t all = certificate_inputs(r, opt);
    if (first > all || count > all - first)
        throw precondition_error("certificate inputs " + std::to_string(first) + " to " +
                                 std::to_string(first + count) + " of " + std::to_string(all));
    std::vector<vec<rational>> ys(count);
    detail::parallel_for(count, detail::worker_count(opt.threads), [&](std::size_t t, int) {
        ys[t] = exact_output(m, certificate_input(m, r, opt, first + t));
    });
    return ys;
}

certificate certify_outputs(const model::model<rational>& m, const restriction& r,
                            const certificate_options& opt, const std::vector<vec<rational>>& ys) {
    certificate c = certificate_head(r);
    const auto [exhaustive, count] = certificate_count(r, opt);
    if (ys.size() != count)
        throw precondition_error("the certificate needs the outputs of " + std::to_string(count) +
                                 " inputs, got " + std::to_string(ys.size()));
    if (r.status != restriction_status::complete) {
        for (const auto& ch : c.checks)
            if (ch.soundness && !ch.passed) c.valid = false;
        return c;
    }
    const auto F = free_positions(r);
    const auto& D = r.dependency;
    const auto O = outside(F, D);
    c.exhaustive = exhaustive;
    std::vector<model::input_sequence> xs(count);
    for (std::size_t t = 0; t < count; ++t) xs[t] = certificate_input(m, r, opt, t);
    c.assignments = count;
    certificate_check table;
    table.name = "table";
    certificate_check indep;
    indep.name = "independence";
    for (std::size_t t = 0; t < count && table.passed; ++t) {
        const auto& expected = r.table.at(r.table_index(xs[t]));
        if (ys[t] != expected) {
            table.passed = false;
            table.detail = "y_n^(L) of input " + word(m, xs[t]) +
                           " differs from the table entry of its dependency values";
            c.failing_inputs = {word(m, xs[t])};
            c.failing_outputs = {ys[t]};
            c.expected = expected;
        }
    }
    // Independence: inputs agreeing on D_L(n) give bit-identical outputs.
    std::map<std::size_t, std::size_t> first_of;
    for (std::size_t t = 0; t < count && indep.passed; ++t) {
        const std::size_t w = r.table_index(xs[t]);
        auto [it, fresh] = first_of.emplace(w, t);
        if (!fresh && ys[it->second] != ys[t]) {
            indep.passed = false;
            indep.detail = "inputs " + word(m, xs[it->second]) + " and " + word(m, xs[t]) +
                           " agree on ρ and D_L(n) but give different y_n^(L)";
            if (c.failing_inputs.empty()) {
                c.failing_inputs = {word(m, xs[it->second]), word(m, xs[t])};
                c.failing_outputs = {ys[it->second], ys[t]};
                c.expected = r.table.at(w);
            }
        }
    }
    std::size_t groups = 0;
    {
        std::map<std::size_t, int> seen;
        for (std::size_t t = 0; t < count; ++t) ++seen[r.table_index(xs[t])];
        for (const auto& [w, k] : seen) groups += k >= 2 ? 1 : 0;
    }
    if (table.passed)
        table.detail = "T_L(n) equals the exact forward pass on " + std::to_string(count) +
                       (c.exhaustive ? " inputs (every assignment of Free)" : " sampled inputs") +
                       "; D_L(n) = {" + position_list(D) + "}";
    if (indep.passed)
        indep.detail = "y_n^(L) bit-identical within each of " + std::to_string(groups) +
                       " groups of inputs agreeing on D_L(n) (|Free \\ D_L(n)| = " +
                       std::to_string(O.size()) + (c.exhaustive ? ", exhaustive)" : ", sampled)");
    c.checks.push_back(table);
    c.checks.push_back(indep);
    for (const auto& ch : c.checks)
        if (ch.soundness && !ch.passed) c.valid = false;
    return c;
}

certificate certify(const model::model<rational>& m, const restriction& r,
                    const certificate_options& opt) {
    return certify_outputs(m, r, opt,
                           certificate_outputs(m, r, opt, 0, certificate_inputs(r, opt)));
}

std::vector<int> language_symbols(const model::model<rational>& m, lang::language l) {
    std::vector<int> out;
    std::string missing;
    for (char ch : lang::alphabet_of(l)) {
        const int idx = m.sigma.index_of(std::string(1, ch));
        if (idx < 0 || idx == m.sigma.eos_index()) {
            missing += (missing.empty() ? "'" : ", '") + std::string(1, ch) + "'";
        } else {
            out.push_back(idx);
        }
    }
    if (!missing.empty()) {
        std::string alpha;
        for (const auto& a : m.sigma.symbols) alpha += (alpha.empty() ? "" : ", ") + a;
        throw precondition_error("the model's alphabet {" + alpha + "} does not contain the " +
                                    std::string(lang::to_string(l)) + " symbol(s) " + missing);
    }
    return out;
}

namespace {

/// Fills the two inputs of a pair, checks them with the exact forward pass and the oracle.
void finish_pair(const model::model<rational>& m, lang::language l, language_result& res,
                 const model::input_sequence& a, const model::input_sequence& b,
                 const std::string& why) {
    const model::input_sequence xs[2] = {a, b};
    for (int t = 0; t < 2; ++t) {
        res.inputs[t] = word(m, xs[t]);
        res.outputs[t] = exact_output(m, xs[t]);
        res.accepted[t] = accepts(m, res.outputs[t]);
        res.member[t] = lang::member(l, res.inputs[t]);
    }
    if (res.outputs[0] != res.outputs[1]) {
        res.verdict = language_verdict::no_pair_found;
        res.explanation = "the pair agreeing on ρ and D_L(n) has different outputs: the "
                          "certificate is wrong (see its checks)";
        return;
    }
    if (res.member[0] == res.member[1]) {
        res.verdict = language_verdict::no_pair_found;
        res.explanation = "internal: the constructed pair has equal membership";
        return;
    }
    res.verdict = language_verdict::counterexample;
    res.wrong = res.accepted[0] != res.member[0] ? 0 : 1;
    res.explanation = why + "; both give the same y_n^(L) (" +
                      (res.accepted[0] ? std::string("accept") : std::string("reject")) +
                      "), so input " + std::to_string(res.wrong + 1) + " (" +
                      (res.member[res.wrong] ? "a member" : "not a member") + ") is misclassified";
}

} // namespace

language_result analyse_language(const model::model<rational>& m, const restriction& r,
                                 lang::language l, const language_options& opt) {
    language_result res;
    res.language = l;
    const std::vector<int> syms = language_symbols(m, l);
    if (r.status != restriction_status::complete) {
        res.explanation = "the restriction is incomplete (" + r.stop_reason + ")";
        return res;
    }
    const auto F = free_positions(r);
    const auto& D = r.dependency;
    const auto O = outside(F, D);
    const std::string alpha = lang::alphabet_of(l);
    auto sym_of = [&](char ch) { return syms[alpha.find(ch)]; };
    model::input_sequence x = base_input(m, r);
    std::mt19937_64 rng(opt.certify.seed * 0xD1B54A32D192ED03ULL + 5);
    const bool binary = l != lang::language::dyck1 && l != lang::language::dyck2;
    if (binary) {
        std::uniform_int_distribution<int> bit(0, 1);
        for (std::size_t f : F) x[f] = syms[static_cast<std::size_t>(bit(rng))];
    }
    for (int v : r.rho)
        if (v >= 0 && std::find(syms.begin(), syms.end(), v) == syms.end()) {
            res.explanation = "ρ fixes a symbol outside the language's alphabet: every input of "
                              "the subcube is a non-member";
            return res;
        }
    if (O.empty()) {
        res.explanation = "every free input is in D_L(n) (|Free| = " + std::to_string(F.size()) +
                          "): no pair agreeing on D_L(n) at this n";
        return res;
    }
    const int zero = binary ? sym_of('0') : -1, one = binary ? sym_of('1') : -1;
    auto flip = [&](model::input_sequence y, std::size_t b) {
        y[b] = y[b] == zero ? one : zero;
        return y;
    };
    switch (l) {
    case lang::language::parity: {
        std::uniform_int_distribution<std::size_t> pick(0, O.size() - 1);
        const std::size_t b = O[pick(rng)];
        finish_pair(m, l, res, x, flip(x, b),
                    "the inputs differ only at position " + std::to_string(b + 1) +
                        " (free, outside D_L(n)), so their parities differ");
        // Exact accuracy on the ρ-subcube over {0,1}, counted from the certified table.
        rational acc = 0;
        const std::size_t s = r.sigma;
        std::size_t binary_entries = 0;
        int fixed_ones = 0;
        for (int v : r.rho) fixed_ones += v == one ? 1 : 0;
        for (std::size_t w = 0; w < r.table.size(); ++w) {
            std::size_t v = w;
            bool ok = true;
            int ones = fixed_ones;
            for (std::size_t t = 0; t < D.size(); ++t) {
                const int d = static_cast<int>(v % s);
                v /= s;
                if (d != zero && d != one) ok = false;
                ones += d == one ? 1 : 0;
            }
            if (!ok) continue;
            ++binary_entries;
            (void)ones;
            // |Free \ D| >= 1: exactly half of the completions have odd parity.
            acc += rational(1, 2);
        }
        res.accuracy = acc / rational(static_cast<long>(binary_entries));
        // Exhaustive confirmation on a small subcube.
        const std::size_t total = detail::checked_power(2, F.size(), opt.certify.exhaustive_limit);
        if (total <= opt.certify.exhaustive_limit) {
            std::vector<char> correct(total, 0);
            detail::parallel_for(total, detail::worker_count(opt.certify.threads),
                                 [&](std::size_t t, int) {
                                     model::input_sequence y = x;
                                     for (std::size_t u = 0; u < F.size(); ++u)
                                         y[F[u]] = (t >> u) & 1 ? one : zero;
                                     const bool a = accepts(m, exact_output(m, y));
                                     correct[t] = a == lang::member(l, word(m, y)) ? 1 : 0;
                                 });
            long ok = 0;
            for (char cc : correct) ok += cc;
            const rational measured(ok, static_cast<long>(total));
            res.accuracy_exhaustive = true;
            if (measured != *res.accuracy)
                res.explanation += "; WARNING: the exhaustive accuracy " +
                                   numeric::to_exact_string(measured) + " differs from the table's";
        }
        // Sampled pairs x, x^b.
        std::uniform_int_distribution<int> bit(0, 1);
        std::vector<model::input_sequence> as(static_cast<std::size_t>(opt.samples));
        std::vector<std::size_t> bs(as.size());
        for (std::size_t t = 0; t < as.size(); ++t) {
            as[t] = x;
            for (std::size_t f : F) as[t][f] = bit(rng) ? one : zero;
            bs[t] = O[pick(rng)];
        }
        std::vector<char> good(as.size(), 0);
        detail::parallel_for(as.size(), detail::worker_count(opt.certify.threads),
                             [&](std::size_t t, int) {
                                 const auto y1 = exact_output(m, as[t]);
                                 const auto y2 = exact_output(m, flip(as[t], bs[t]));
                                 good[t] = y1 == y2 ? 1 : 0;
                             });
        for (char g : good) res.pairs_checked += g ? 1 : 0;
        if (res.pairs_checked != as.size())
            res.explanation += "; WARNING: " + std::to_string(as.size() - res.pairs_checked) +
                               " sampled pairs had different outputs";
        return res;
    }
    case lang::language::first: {
        if (r.rho[0] >= 0 || std::binary_search(D.begin(), D.end(), std::size_t{0})) {
            res.verdict = language_verdict::not_ruled_out;
            res.explanation = std::string("membership depends on x_1 only, which is ") +
                              (r.rho[0] >= 0 ? "fixed by ρ" : "in D_L(n)") +
                              ": no two inputs agreeing on ρ and D_L(n) differ in membership";
            return res;
        }
        x[0] = zero;
        finish_pair(m, l, res, x, flip(x, 0), "the inputs differ only at position 1, outside D_L(n)");
        return res;
    }
    case lang::language::contains_one: {
        for (std::size_t t = 0; t < r.rho.size(); ++t)
            if (r.rho[t] == one) {
                res.verdict = language_verdict::not_ruled_out;
                res.explanation = "ρ fixes x_" + std::to_string(t + 1) +
                                  " = 1: every input of the subcube is a member";
                return res;
            }
        for (std::size_t f : F) x[f] = zero;
        finish_pair(m, l, res, x, flip(x, O.front()),
                    "all zeros versus one 1 at position " + std::to_string(O.front() + 1) +
                        " (free, outside D_L(n))");
        return res;
    }
    case lang::language::majority: {
        // Ones = fixed + ones(D) + ones(O); member iff ones > (n-1)/2, i.e. ones >= t + 1.
        long fixed_ones = 0;
        for (int v : r.rho) fixed_ones += v == one ? 1 : 0;
        const long t = static_cast<long>(r.rho.size()) / 2;
        for (long d1 = 0; d1 <= static_cast<long>(D.size()); ++d1) {
            const long a = fixed_ones + d1;
            if (a <= t && a + static_cast<long>(O.size()) >= t + 1) {
                for (std::size_t u = 0; u < D.size(); ++u) x[D[u]] = static_cast<long>(u) < d1 ? one : zero;
                const long need = t - a; // ones in O for a non-member with exactly t ones
                for (std::size_t u = 0; u < O.size(); ++u) x[O[u]] = static_cast<long>(u) < need ? one : zero;
                finish_pair(m, l, res, x, flip(x, O[static_cast<std::size_t>(need)]),
                            "exactly (n-1)/2 rounded down ones versus one more at position " +
                                std::to_string(O[static_cast<std::size_t>(need)] + 1));
                return res;
            }
        }
        res.verdict = language_verdict::not_ruled_out;
        res.explanation = "ρ forces the majority on every input of the subcube";
        return res;
    }
    case lang::language::dyck1:
    case lang::language::dyck2: {
        const int open = sym_of('('), close = sym_of(')');
        const std::size_t len = r.rho.size();
        if (len % 2 == 1) {
            res.explanation = "n - 1 = " + std::to_string(len) +
                              " is odd: no balanced word exists at this length (use an odd n)";
            return res;
        }
        long fixed_open = 0;
        for (int v : r.rho) fixed_open += v == open ? 1 : 0;
        const long need = static_cast<long>(len / 2) - fixed_open;
        if (need < 0 || need > static_cast<long>(F.size())) {
            res.explanation = "ρ leaves no balanced completion (bracket counts)";
            return res;
        }
        // The earliest free positions open: if any completion is balanced, this one is.
        for (std::size_t u = 0; u < F.size(); ++u) x[F[u]] = static_cast<long>(u) < need ? open : close;
        if (!lang::member(l, word(m, x))) {
            res.explanation = "ρ leaves no balanced completion (a prefix closes too early)";
            return res;
        }
        model::input_sequence y = x;
        const std::size_t b = O.front();
        if (l == lang::language::dyck1) {
            y[b] = y[b] == open ? close : open;
        } else {
            y[b] = y[b] == open ? sym_of('[') : sym_of(']');
        }
        finish_pair(m, l, res, x, y,
                    "a balanced completion versus the same with position " + std::to_string(b + 1) +
                        " (free, outside D_L(n)) changed");
        return res;
    }
    }
    return res;
}

restriction_options language_restriction_options(const model::model<rational>& m, long n,
                                                 lang::language l, const language_options& opt) {
    restriction_options ro = opt.restrict;
    std::vector<int> syms = language_symbols(m, l);
    const std::string alpha = lang::alphabet_of(l);
    if (l == lang::language::dyck1 || l == lang::language::dyck2) {
        const int open = syms[alpha.find('(')], close = syms[alpha.find(')')];
        ro.pin_symbols = {open, close};
        ro.free_fraction = rational(9, 10);
        if (n < 2) throw precondition_error("n must be at least 2 (one input and eos)");
        const std::size_t len = static_cast<std::size_t>(n - 1);
        const std::size_t edge = static_cast<std::size_t>(n) / 5;
        ro.initial.assign(len, -1);
        for (std::size_t t = 0; t < edge && t < len; ++t) ro.initial[t] = open;
        for (std::size_t t = 0; t < edge && len > edge + t; ++t) ro.initial[len - 1 - t] = close;
    } else {
        ro.pin_symbols = syms;
    }
    return ro;
}

language_run run_language(const model::model<rational>& m, long n, lang::language l,
                          const language_options& opt) {
    language_run run;
    run.restr = build_restriction(m, n, language_restriction_options(m, n, l, opt));
    run.cert = certify(m, run.restr, opt.certify);
    run.result = analyse_language(m, run.restr, l, opt);
    return run;
}

} // namespace attnprop::analysis
