#include "props/common.hpp"

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

} // namespace attnprop::props
