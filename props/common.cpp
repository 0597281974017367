#include "props/common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprop::props {

rc::Gen<model::model<rational>> models_of(const run_config& cfg, rc::Gen<model::model<rational>> random) {
    if (cfg.fixed_model) return rc::gen::just(*cfg.fixed_model);
    return random;
}

long fixed_model_max_n(const run_config& cfg, long limit) {
    if (cfg.fixed_model && cfg.fixed_model->positional)
        if (auto most = cfg.fixed_model->positional->max_length()) return std::min(limit, *most);
    return limit;
}

namespace {

/// Log-uniform over [lo, hi]: u in [0, 2^20] maps monotonically onto [lo, hi] on a log scale,
/// so shrinking u shrinks n. Drawn at full size: RapidCheck's inRange narrows its range at
/// small sizes (the start of a run), which would make n mostly tiny.
rc::Gen<long> log_uniform(long lo, long hi) {
    constexpr long steps = 1L << 20;
    return rc::gen::map(rc::gen::resize(100, rc::gen::inRange(0L, steps + 1)), [lo, hi](long u) {
        const double t = static_cast<double>(u) / static_cast<double>(steps);
        const double v = std::exp(std::log(static_cast<double>(lo)) +
                                  t * (std::log(static_cast<double>(hi) + 1.0) -
                                       std::log(static_cast<double>(lo))));
        return std::clamp(static_cast<long>(std::floor(v)), lo, hi);
    });
}

} // namespace

rc::Gen<long> lengths_of(const run_config& cfg, long random_cap, long lo, long statement_cap,
                         random_lengths random) {
    if (!cfg.fixed_model) {
        const long hi = std::max(lo, std::min(cfg.max_n, random_cap));
        if (random == random_lengths::log_uniform) return log_uniform(std::max(1L, lo), hi);
        return gen::length(hi);
    }
    return log_uniform(std::max(1L, lo),
                       std::max(lo, fixed_model_max_n(cfg, std::min(cfg.max_n, statement_cap))));
}

rc::Gen<test_case> model_and_input(rc::Gen<model::model<rational>> models, const run_config& cfg,
                                   long n_cap) {
    return rc::gen::mapcat(
        rc::gen::pair(models_of(cfg, std::move(models)), lengths_of(cfg, n_cap)), [](const auto& mn) {
            // Not a structured binding: clang 14 (the fuzzing build) cannot capture one.
            const auto& m = mn.first;
            const long n = mn.second;
            return rc::gen::map(gen::input(m.sigma, n), [m](std::string in) {
                test_case c;
                c.model = m;
                c.inputs.push_back(std::move(in));
                return c;
            });
        });
}

rc::Gen<test_case> model_input_position(rc::Gen<model::model<rational>> models,
                                        const run_config& cfg, long n_cap, random_lengths random) {
    return rc::gen::mapcat(
        rc::gen::pair(models_of(cfg, std::move(models)),
                      lengths_of(cfg, std::max(2L, n_cap), 2, 1L << 24, random)),
        [](const auto& mn) {
            const auto& m = mn.first;
            const long n = std::max(2L, mn.second);
            const int sigma = static_cast<int>(m.sigma.symbols.size());
            return rc::gen::map(
                rc::gen::tuple(gen::input(m.sigma, n), rc::gen::inRange(1L, n),
                               rc::gen::inRange(0, sigma)),
                [m](const std::tuple<std::string, long, int>& t) {
                    test_case c;
                    c.model = m;
                    c.inputs.push_back(std::get<0>(t));
                    c.params["position"] = std::get<1>(t);
                    c.params["symbol"] = std::get<2>(t);
                    return c;
                });
        });
}

rc::Gen<test_case> with_search_params(rc::Gen<test_case> cases, const run_config& cfg) {
    if (!cfg.fixed_model || cfg.search_budget <= 0) return cases;
    const long budget = cfg.search_budget;
    return rc::gen::map(rc::gen::pair(std::move(cases), rc::gen::inRange(0L, 1L << 30)),
                        [budget](std::pair<test_case, long> t) {
                            t.first.params["search_budget"] = budget;
                            t.first.params["search_seed"] = t.second;
                            return std::move(t.first);
                        });
}

model::input_sequence input_of(const test_case& c, std::size_t k) {
    return model::parse_input(c.model, c.inputs.at(k));
}

std::string case_class(const test_case& c) { return gen::model_class(c.model); }

runner::param_spec n_param(bool required) {
    return {"n", 2, 1L << 20, required, "the range of --n"};
}

runner::param_spec divisor_param(const std::string& name) {
    return {name, 1, 1L << 40, false, "the range of --bound-divisor"};
}

runner::param_spec search_budget_param() {
    return {"search_budget", 1, 1L << 30, false, "the range of --search"};
}

runner::param_spec seed_param(bool required, const std::string& name) {
    return {name, std::numeric_limits<long>::min(), std::numeric_limits<long>::max(), required, ""};
}

runner::case_shape one_input_shape(runner::model_requirement m) {
    runner::case_shape s;
    s.model = m;
    return s;
}

runner::case_shape position_shape(runner::model_requirement m, bool required,
                                  std::vector<runner::param_spec> extra) {
    runner::case_shape s;
    s.model = m;
    s.params = {{"position", 1, (1L << 20) - 1, required, "a position before eos"},
                {"symbol", 0, 1L << 20, required, "an index into the alphabet"}};
    for (auto& e : extra) s.params.push_back(std::move(e));
    s.relations = [](const test_case& c) -> std::optional<runner::case_problem> {
        const long n = static_cast<long>(c.inputs.front().size()) + 1;
        if (n < 2) return runner::case_problem{"/inputs/0", "the input is empty: no position to change"};
        if (auto it = c.params.find("position"); it != c.params.end() && it->second > n - 1)
            return runner::case_problem{"/params/position",
                                        "position = " + std::to_string(it->second) +
                                            " is beyond the input's last symbol (n - 1 = " +
                                            std::to_string(n - 1) + ")"};
        const long sigma = static_cast<long>(c.model.sigma.symbols.size());
        if (auto it = c.params.find("symbol"); it != c.params.end() && it->second >= sigma)
            return runner::case_problem{"/params/symbol", "symbol = " + std::to_string(it->second) +
                                                             " is not an index into the alphabet of " +
                                                             std::to_string(sigma) + " symbols"};
        if (auto it = c.params.find("n"); it != c.params.end() && it->second != n)
            return runner::case_problem{"/params/n", "n = " + std::to_string(it->second) +
                                                         " does not match the input, whose n is " +
                                                         std::to_string(n)};
        return std::nullopt;
    };
    return s;
}

} // namespace attnprop::props
