#pragma once
/// @file property.hpp
/// Properties and suites. A property is a name, a one-line statement, the scalar kinds it
/// exercises, a generator of test cases and a check that says holds / violated / undecided.
/// Suites register through explicit `register_<suite>(registry&)` calls listed in one place
/// (props/registry.cpp), never through static initialisation.

#include "model/model.hpp"

#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnprop::runner {

using numeric::rational;

/// One generated or replayed case: a model, its inputs (without eos) and small integer
/// parameters (a position, a replacement symbol, ...). Everything a check needs, and all of
/// it serialisable exactly, so that a counterexample folder alone reproduces the failure.
struct test_case {
    model::model<rational> model;
    std::vector<std::string> inputs;
    std::map<std::string, long> params;
};

/// The answer of a check on one case.
enum class verdict { holds, violated, undecided };
const char* to_string(verdict v);

struct check_result {
    verdict status = verdict::holds;
    std::string message; ///< what was compared, one line
    /// The numbers behind the verdict, name -> text (exact p/q where exact, decimal digits
    /// and radius otherwise).
    std::vector<std::pair<std::string, std::string>> numbers;
    /// For undecided results: whether more precision could decide the case. False for
    /// statistical or regime questions (a slope within its standard error), which the runner
    /// then reports without retrying at doubled precision.
    bool precision_helps = true;

    static check_result holds(std::string msg = {}) { return {verdict::holds, std::move(msg), {}}; }
    static check_result violated(std::string msg) { return {verdict::violated, std::move(msg), {}}; }
    static check_result undecided(std::string msg) { return {verdict::undecided, std::move(msg), {}}; }
    /// Undecided for a reason precision does not change (no escalation).
    static check_result undecided_at_any_precision(std::string msg) {
        check_result r{verdict::undecided, std::move(msg), {}};
        r.precision_helps = false;
        return r;
    }
    check_result& with(std::string name, std::string value) {
        numbers.emplace_back(std::move(name), std::move(value));
        return *this;
    }
};

/// Budget and precision of a run.
struct run_config {
    std::uint64_t seed = 1;       ///< base seed; each property derives its own from it
    int tests = 100;              ///< successful cases per property
    long max_n = 256;             ///< largest n generated
    long precision = 128;         ///< starting precision (bits) for MPFR and balls
    long precision_cap = 4096;    ///< undecided cases are retried at doubled precision up to this
    int max_size = 100;           ///< RapidCheck size bound
};

struct property {
    std::string suite;
    std::string name;
    std::string statement;                 ///< one line, as in docs/properties.md
    std::vector<std::string> kinds;        ///< scalar kinds exercised: exact, mpfr, ball, double
    std::string negative_control;          ///< how the property is shown to fail when violated
    bool expected_to_fail = false;         ///< controls: deliberately false statements
    std::function<rc::Gen<test_case>(const run_config&)> generator;
    std::function<check_result(const test_case&, const numeric::context&)> check;
    /// Distribution tag of a case (model class); defaults to the generator's model class.
    std::function<std::string(const test_case&)> tag;
};

/// The ordered list of properties.
class registry {
public:
    void add(property p);
    const std::vector<property>& all() const { return properties_; }
    /// The property with this name ("suite/name" or just "name" when unique), or nullptr.
    const property* find(std::string_view name) const;
    /// Suite names in registration order.
    std::vector<std::string> suites() const;

private:
    std::vector<property> properties_;
};

/// Registers every suite (defined in props/registry.cpp).
void register_all(registry& r);

/// The seed a property runs with: a fixed mix of the base seed and "suite/name", so that
/// adding or reordering properties never changes another property's cases.
std::uint64_t property_seed(std::uint64_t base, const property& p);

/// Runs the check at cfg.precision, doubling the precision while the answer is undecided
/// (and more precision could decide it), up to cfg.precision_cap. An exception from the check
/// is a violation ("threw: ..."). `precision_used` receives the last precision tried.
check_result check_with_escalation(const property& p, const test_case& c, const run_config& cfg,
                                   long* precision_used = nullptr);

} // namespace attnprop::runner
