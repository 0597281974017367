// The run of `attnprop simulate` (report/simulate_report.hpp): the inputs of each n, the
// comparison of the hard model with its soft counterpart, the margins over every input and the
// lengths a constant beta certifies. The command and the Python module both call it.
#include "report/simulate_report.hpp"

#include "attention/work.hpp"
#include "util/precondition.hpp"

#include <cmath>
#include <random>

namespace attnprop::report {

namespace {

using numeric::rational;

std::string input_note(const simulate_request& q) {
    std::string s;
    for (const auto& p : q.patterns) s += (s.empty() ? "" : ", ") + ("pattern \"" + p + "\"");
    if (q.cube) s += (s.empty() ? "" : ", ") + std::string("every input");
    if (q.random_inputs > 0)
        s += (s.empty() ? "" : ", ") + std::to_string(q.random_inputs) + " random input" +
             (q.random_inputs == 1 ? "" : "s") + " (seed " + std::to_string(q.seed) + ")";
    return s + " per n";
}

/// The inputs at length n: the patterns, the cube, then the random ones.
std::vector<std::string> inputs_at(const model::model<rational>& m, const simulate_request& q, long n) {
    const std::size_t sigma = m.sigma.symbols.size();
    std::vector<std::string> inputs;
    for (const auto& p : q.patterns) {
        std::string w;
        while (static_cast<long>(w.size()) < n - 1) w += p;
        w.resize(static_cast<std::size_t>(n - 1));
        inputs.push_back(std::move(w));
    }
    if (q.cube) {
        const long count = std::lround(std::pow(static_cast<double>(sigma), static_cast<double>(n - 1)));
        for (long c = 0; c < count; ++c) {
            std::string w;
            long v = c;
            for (long t = 0; t < n - 1; ++t) {
                w += m.sigma.symbols[static_cast<std::size_t>(v % static_cast<long>(sigma))];
                v /= static_cast<long>(sigma);
            }
            inputs.push_back(std::move(w));
        }
    }
    std::mt19937_64 rng(q.seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(n));
    for (int t = 0; t < q.random_inputs; ++t) {
        std::string w;
        for (long j = 0; j + 1 < n; ++j) w += m.sigma.symbols[rng() % sigma];
        inputs.push_back(std::move(w));
    }
    return inputs;
}

} // namespace

std::vector<model::expr> check_simulate(const model::model<rational>& m, const simulate_request& q) {
    if (!model::info(m.attention).simulate_source)
        throw model::content_error(m.file, "/attention",
                                   "simulate needs a hard or average-hard model (its soft "
                                   "counterpart is built from it); " + m.name + " is " +
                                       model::to_string(m.attention));
    std::vector<model::expr> betas;
    for (const auto& b : q.betas) {
        try {
            betas.push_back(model::expr::parse(b));
        } catch (const model::expr_error& e) {
            throw precondition_error("--beta: bad formula '" + b + "': " + e.what());
        }
        if (betas.back().uses_i())
            throw precondition_error("--beta: '" + b + "' is a formula in n alone; i is not defined");
    }
    for (const auto& p : q.patterns) {
        if (p.empty()) throw precondition_error("--pattern: the pattern is empty");
        (void)model::parse_input(m, p); // symbols outside the alphabet: input_error
    }
    const std::size_t sigma = m.sigma.symbols.size();
    if (q.cube)
        for (long n : q.ns) {
            const double count = std::pow(static_cast<double>(sigma), static_cast<double>(n - 1));
            if (count > 4096)
                throw precondition_error("--cube: " + std::to_string(sigma) + "^" + std::to_string(n - 1) +
                                         " inputs at n = " + std::to_string(n) +
                                         " exceed the budget of 4096 per n");
        }
    if (q.random_inputs <= 0 && q.patterns.empty() && !q.cube)
        throw precondition_error("no inputs: give --inputs K, --pattern WORD or --cube");
    if (q.precision_cap < q.precision)
        throw precondition_error("--precision-cap (" + std::to_string(q.precision_cap) +
                                 ") must be at least --precision (" + std::to_string(q.precision) + ")");
    for (long n : q.ns) {
        model::check_length(m, n);
        attention::check_forward_work(m, static_cast<std::size_t>(n), q.precision);
        // The bounds assume beta(n) > 0 (a non-positive beta would not concentrate on the
        // maximal scores); decided on a ball, so a beta that is not certainly positive is
        // refused rather than guessed.
        const numeric::context bctx{q.precision};
        for (std::size_t b = 0; b < betas.size(); ++b) {
            numeric::arb_ball v;
            try {
                v = betas[b].eval<numeric::arb_ball>(1, n, bctx);
            } catch (const numeric::numeric_error& e) {
                throw precondition_error("--beta '" + q.betas[b] + "' has no value at n = " +
                                         std::to_string(n) + ": " + e.what());
            }
            if (numeric::sign(v, bctx) != numeric::order::greater)
                throw precondition_error("--beta '" + q.betas[b] + "' is not certainly positive at n = " +
                                         std::to_string(n));
        }
    }
    return betas;
}

simulate_run run_simulate(const model::model<rational>& m, const simulate_request& q) {
    const std::vector<model::expr> betas = check_simulate(m, q);
    simulate_run run;
    run.model_name = m.name;
    run.attention = model::to_string(m.attention);
    run.betas = q.betas;
    run.precision = q.precision;
    run.scalar = q.interval ? numeric::scalar_traits<numeric::dinterval>::name
                            : numeric::scalar_traits<numeric::arb_ball>::name;
    run.input_note = input_note(q);
    run.precision_cap = q.precision_cap;
    analysis::simulate_options opt;
    opt.precision = q.precision;
    opt.interval = q.interval;
    opt.precision_cap = q.precision_cap;
    for (long n : q.ns) {
        run.rows.push_back(analysis::simulate_at(m, betas, n, inputs_at(m, q, n), opt));
        if (q.every_input) {
            // Every input at n: the margins, ties and readout slack, the smallest certified
            // beta, and each beta's yes/no.
            const numeric::context ctx{q.precision};
            every_input_row e;
            e.margins = analysis::every_input_margins_at(m, n, ctx);
            for (const auto& beta : betas) {
                e.certified.push_back(analysis::certifies_every_input(e.margins, m, beta, false, ctx));
                e.certified_off.push_back(analysis::certifies_every_input(e.margins, m, beta, true, ctx));
            }
            run.every_input.push_back(std::move(e));
        }
        if (q.on_length) q.on_length(n);
    }
    // Constant temperatures: how far in n they stay certified.
    for (std::size_t b = 0; b < betas.size(); ++b) {
        if (!betas[b].is_constant() || run.rows.empty()) continue;
        certified_length l;
        l.beta = q.betas[b];
        for (const auto& row : run.rows) {
            if (row.betas[b].certified != row.inputs.size()) break;
            l.in_list = row.n;
        }
        const auto& last = run.rows.back();
        l.extrapolated_from = last.n;
        const numeric::context ctx{q.precision};
        l.extrapolated = analysis::largest_certified_n(last.data, betas[b].eval<numeric::arb_ball>(1, last.n, ctx), ctx);
        run.lengths.push_back(std::move(l));
    }
    return run;
}

} // namespace attnprop::report
