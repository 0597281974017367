#pragma once
/// @file common.hpp
/// Helpers shared by the property suites: case generators and number display.

#include "gen/generators.hpp"
#include "runner/property.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace attnprop::props {

using runner::check_result;
using runner::run_config;
using runner::test_case;
using numeric::rational;

/// The models of a property's cases: `random` for a run on random models, or the one model of
/// `check --model` (cfg.fixed_model), which never shrinks.
rc::Gen<model::model<rational>> models_of(const run_config& cfg, rc::Gen<model::model<rational>> random);

/// The longest n a fixed model supports (its positional table), or `limit`.
long fixed_model_max_n(const run_config& cfg, long limit);

/// How lengths are drawn for random models: gen::length (mostly powers of two, small at the
/// start of a run), or log-uniform like a fixed model's (a property cheap at every n).
enum class random_lengths { ladder, log_uniform };

/// Lengths n of a property's cases, at least `lo`. Random models: gen::length up to
/// min(cfg.max_n, random_cap) (the cap keeps random models cheap), or with
/// random_lengths::log_uniform log-uniform over [lo, min(cfg.max_n, random_cap)]. A fixed
/// model: log-uniform over [lo, min(cfg.max_n, statement_cap, the model's longest n)], so that
/// every scale up to --max-n is drawn about equally often, not mostly tiny n; shrinks towards
/// lo. `statement_cap` is a bound the property's statement needs (an enumerated cube).
rc::Gen<long> lengths_of(const run_config& cfg, long random_cap, long lo = 1,
                         long statement_cap = 1L << 24,
                         random_lengths random = random_lengths::ladder);

/// A case: a model from models_of(cfg, models), a length from lengths_of(cfg, n_cap), and one
/// uniformly random input of that length.
rc::Gen<test_case> model_and_input(rc::Gen<model::model<rational>> models, const run_config& cfg,
                                   long n_cap);

/// Same, with an extra parameter "position" in [1, n-1] (n >= 2) and "symbol" (index into Σ)
/// for one-symbol changes.
rc::Gen<test_case> model_input_position(rc::Gen<model::model<rational>> models,
                                        const run_config& cfg, long n_cap,
                                        random_lengths random = random_lengths::ladder);

/// check --model with a search budget (cfg.search_budget > 0): the cases also carry
/// "search_budget" and "search_seed" (drawn), so that their check runs a search from the drawn
/// input and a counterexample folder replays the same search. Otherwise `cases` unchanged.
rc::Gen<test_case> with_search_params(rc::Gen<test_case> cases, const run_config& cfg);

/// The input sequence of a case (first input, eos appended).
model::input_sequence input_of(const test_case& c, std::size_t k = 0);

/// Display of a vector: exact p/q, or for balls the certified digits (at most `digits`) and
/// the radius (numeric::to_certified_display).
template <class S> std::string show_vector(const std::vector<S>& v, int digits = 20) {
    std::string s = "[";
    for (std::size_t t = 0; t < v.size(); ++t) {
        if (t) s += ", ";
        s += numeric::to_certified_display(v[t], digits);
    }
    return s + "]";
}

/// Display of a ball: its certified digits (at most 20) and the radius.
inline std::string show_ball(const numeric::arb_ball& x) { return numeric::certified_string(x, 20); }

/// Whether two overlapping balls agree to at least half their working precision of relative
/// accuracy each: the two sides of an inequality that the model attains with equality, which
/// no precision separates (check_result::sides_agree).
inline bool sides_agree(const numeric::arb_ball& a, const numeric::arb_ball& b) {
    if (numeric::compare(a, b) != numeric::order::unknown) return false;
    const long need = std::max(a.precision(), b.precision()) / 2;
    return arb_rel_accuracy_bits(a.raw()) >= need && arb_rel_accuracy_bits(b.raw()) >= need;
}

/// Model class tag of a case (for distribution tables).
std::string case_class(const test_case& c);

// Case shapes (runner::case_shape): what the generators below produce, with the ranges of the
// command options that set the same quantities, checked before a folder is replayed.

/// n: a length, eos included, in [2, 2^20] (the range of --n).
runner::param_spec n_param(bool required = true);
/// A bound or eta divisor in [1, 2^40] (the range of --bound-divisor).
runner::param_spec divisor_param(const std::string& name);
/// A seed: any value (a 64-bit --seed is stored as a signed integer).
runner::param_spec seed_param(bool required, const std::string& name = "seed");
/// "search_budget": evaluations of the worst-case search, in [1, 2^30] (the range of
/// check's --search).
runner::param_spec search_budget_param();
/// One input, no parameters (model_and_input).
runner::case_shape one_input_shape(runner::model_requirement m);
/// One input of at least one symbol, "position" in [1, n - 1] and "symbol" in [0, |Σ| - 1]
/// (model_input_position), required or optional; plus `extra` parameters; an "n" among them
/// must equal the input's n.
runner::case_shape position_shape(runner::model_requirement m, bool required,
                                  std::vector<runner::param_spec> extra = {});

} // namespace attnprop::props
