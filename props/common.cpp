#include "props/common.hpp"

#include <limits>

namespace attnprop::props {

rc::Gen<test_case> model_and_input(rc::Gen<model::model<rational>> models, const run_config& cfg,
                                   long n_cap) {
    const long max_n = std::max(1L, std::min(cfg.max_n, n_cap));
    return rc::gen::mapcat(
        rc::gen::pair(std::move(models), gen::length(max_n)), [](const auto& mn) {
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
                                        const run_config& cfg, long n_cap) {
    const long max_n = std::max(2L, std::min(cfg.max_n, n_cap));
    return rc::gen::mapcat(
        rc::gen::pair(std::move(models), gen::length(max_n)), [](const auto& mn) {
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

runner::param_spec seed_param(bool required) {
    return {"seed", std::numeric_limits<long>::min(), std::numeric_limits<long>::max(), required, ""};
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
