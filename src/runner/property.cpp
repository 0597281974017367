#include "runner/property.hpp"

#include "attention/work.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"
#include "numeric/filter.hpp"
#include "numeric/limits.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>

namespace attnprop::runner {

verdict check_result::status() const {
    if (is<outcomes::failed>(result)) return verdict::failed;
    if (is<outcomes::undecided>(result)) return verdict::undecided;
    if (is<outcomes::undefined>(result)) return verdict::undefined;
    return verdict::passed;
}

check_result check_result::make(verdict v, std::string msg) {
    check_result r;
    switch (v) {
    case verdict::passed: r.result = outcomes::passed{}; break;
    case verdict::failed: r.result = outcomes::failed{}; break;
    case verdict::undecided: r.result = outcomes::undecided{}; break;
    case verdict::undefined: r.result = outcomes::undefined{}; break;
    case verdict::gave_up:
    case verdict::not_applicable:
        throw std::logic_error(std::string("a check answers passed, failed, undecided or undefined, not ") +
                               to_string(v));
    }
    r.message = std::move(msg);
    return r;
}

std::string status_word(const outcome& o, bool some_passed) {
    // The words of the verdict table (util/verdict.hpp); "partly-" qualifies an undecided run
    // in which some case passed.
    struct words {
        bool some_passed;
        std::string operator()(const outcomes::passed&) const { return std::string(word(verdict::passed)); }
        std::string operator()(const outcomes::failed&) const { return std::string(word(verdict::failed)); }
        std::string operator()(const outcomes::undecided&) const {
            return (some_passed ? "partly-" : "") + std::string(word(verdict::undecided));
        }
        std::string operator()(const outcomes::undefined&) const { return std::string(word(verdict::undefined)); }
        std::string operator()(const outcomes::gave_up&) const { return std::string(word(verdict::gave_up)); }
        std::string operator()(const outcomes::error&) const { return std::string(word(run_end::error)); }
        std::string operator()(const outcomes::interrupted&) const {
            return std::string(word(run_end::interrupted));
        }
    };
    return std::visit(words{some_passed}, o);
}

std::vector<std::string> kind_names(const std::vector<numeric::kind_choice>& kinds) {
    std::vector<std::string> out;
    for (const auto& k : kinds) out.emplace_back(k.name());
    return out;
}

void registry::add(property p) {
    for (const auto& q : properties_)
        if (q.suite == p.suite && q.name == p.name)
            throw std::logic_error("property registered twice: " + p.suite + "/" + p.name);
    properties_.push_back(std::move(p));
}

const property* registry::find(std::string_view name) const {
    const property* hit = nullptr;
    for (const auto& p : properties_) {
        if (p.suite + "/" + p.name == name) return &p;
        if (p.name == name) {
            if (hit) return nullptr; // ambiguous
            hit = &p;
        }
    }
    return hit;
}

std::vector<std::string> registry::suites() const {
    std::vector<std::string> out;
    for (const auto& p : properties_)
        if (std::find(out.begin(), out.end(), p.suite) == out.end()) out.push_back(p.suite);
    return out;
}

namespace {

/// Longest input a replayed case may have: n = symbols + 1 <= 2^20, the range of --n.
constexpr long max_case_n = 1L << 20;

/// Why a normaliser other than softmax (or an elementwise kind) is refused by a property of
/// the soft lemma as stated: its statement and bounds are derived for softmax; the model's own
/// law (theory.md §2.6; for sigmoid it depends on the biases).
std::string softmax_only(const model::model<rational>& m) {
    switch (model::info(m.attention).weights) {
    case model::weighting::maximal_score: return "";
    case model::weighting::normaliser:
    case model::weighting::elementwise: break;
    }
    return " (its statement and bounds are derived for softmax; " + model::influence_in_words(m) +
           ")";
}

} // namespace

std::optional<case_problem> validate_case(const property& p, const test_case& c) {
    const case_shape& shape = p.shape;
    const std::string name = p.suite + "/" + p.name;
    const auto kind = c.model.attention;
    if (shape.model == model_requirement::hard && !model::info(kind).hard_limit &&
        model::selects_maximum(kind))
        return case_problem{"/model", name + " needs a unique-hard attention model (the leftmost "
                                             "maximal score); the model is " +
                                             model::to_string(kind) + ", which " +
                                             std::string(model::info(kind).ties_in_words)};
    if (shape.model == model_requirement::hard && !model::info(kind).hard_limit)
        return case_problem{"/model", name + " needs a hard-attention model; the model is " +
                                          model::to_string(kind)};
    if (shape.model == model_requirement::any_hard && !model::selects_maximum(kind))
        return case_problem{"/model", name + " needs a hard or average-hard attention model; the "
                                             "model is " + model::to_string(kind)};
    if (shape.model == model_requirement::soft && !model::info(kind).soft_influence)
        return case_problem{"/model", name + " needs a soft-attention model; the model is " +
                                          model::to_string(kind) + softmax_only(c.model)};
    if (model::selects_maximum(kind)) {
        // Every hard-attention check evaluates exactly (its reference, or the restriction).
        const auto blockers = model::exact_blockers(c.model);
        if (!blockers.empty())
            return case_problem{"/model", name + " evaluates hard models exactly; the model needs "
                                              "real arithmetic: " + blockers.front()};
    }
    const std::size_t k = c.inputs.size();
    if (k < shape.min_inputs || k > shape.max_inputs) {
        const std::string want =
            shape.min_inputs == shape.max_inputs
                ? std::to_string(shape.min_inputs)
                : std::to_string(shape.min_inputs) + " to " + std::to_string(shape.max_inputs);
        return case_problem{"/inputs", name + " takes " + want + " input" +
                                           (shape.max_inputs == 1 ? "" : "s") + ", the case has " +
                                           std::to_string(k)};
    }
    for (std::size_t i = 0; i < k; ++i) {
        const std::string where = "/inputs/" + std::to_string(i);
        const long n = static_cast<long>(c.inputs[i].size()) + 1;
        if (n > max_case_n)
            return case_problem{where, "the input has " + std::to_string(n - 1) +
                                           " symbols; n = " + std::to_string(n) +
                                           " is above 2^20 (the range of --n)"};
        try {
            (void)model::parse_input(c.model, c.inputs[i]);
            model::check_length(c.model, n);
        } catch (const model::input_error& e) {
            return case_problem{where, e.what()};
        }
    }
    for (const auto& [key, v] : c.params) {
        auto it = std::find_if(shape.params.begin(), shape.params.end(),
                               // (an init-capture: clang 14 cannot capture a structured binding)
                               [&k = key](const param_spec& s) { return s.name == k; });
        if (it == shape.params.end()) {
            std::string known;
            for (const auto& s : shape.params) known += (known.empty() ? "" : ", ") + s.name;
            return case_problem{"/params/" + json::pointer_escape(key),
                                "'" + key + "' is not a parameter of " + name +
                                    (known.empty() ? " (it takes none)" : " (it takes " + known + ")")};
        }
        if (v < it->min || v > it->max)
            return case_problem{"/params/" + json::pointer_escape(key),
                                key + " = " + std::to_string(v) + " is outside [" + std::to_string(it->min) +
                                    ", " + std::to_string(it->max) + "]" +
                                    (it->like.empty() ? "" : " (" + it->like + ")")};
    }
    for (const auto& s : shape.params)
        if (s.required && !c.params.count(s.name))
            return case_problem{"/params", name + " needs the parameter '" + s.name + "'"};
    if (auto n = c.params.find("n"); n != c.params.end()) {
        try {
            model::check_length(c.model, n->second);
        } catch (const model::input_error& e) {
            return case_problem{"/params/n", e.what()};
        }
    }
    if (shape.relations) return shape.relations(c);
    return std::nullopt;
}

std::optional<std::string> not_applicable(const property& p, const model::model<rational>& m) {
    const auto kind = m.attention;
    if (p.shape.model == model_requirement::hard && !model::info(kind).hard_limit)
        return std::string("needs a hard-attention model; the model is ") + model::to_string(kind);
    if (p.shape.model == model_requirement::any_hard && !model::selects_maximum(kind))
        return std::string("needs a hard or average-hard attention model; the model is ") +
               model::to_string(kind);
    if (p.shape.model == model_requirement::soft && !model::info(kind).soft_influence)
        return std::string("needs a soft-attention model; the model is ") + model::to_string(kind) +
               softmax_only(m);
    if (model::selects_maximum(kind) && p.shape.model != model_requirement::soft) {
        const auto blockers = model::exact_blockers(m);
        if (!blockers.empty())
            return "evaluates hard models exactly; the model needs real arithmetic: " + blockers.front();
    }
    if (model::any_masked(m) && !p.takes_masked)
        return std::string("its statement is derived for unmasked layers; the model has a causally "
                           "masked layer");
    if (p.applies) return p.applies(m);
    return std::nullopt;
}

std::uint64_t property_seed(std::uint64_t base, const property& p) {
    // FNV-1a of "suite/name", mixed with the base seed by splitmix64.
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : p.suite + "/" + p.name) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    std::uint64_t z = base + h + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

check_result check_with_escalation(const property& p, const test_case& c, const run_config& cfg,
                                   long* precision_used) {
    std::size_t n = 0;
    if (auto it = c.params.find("n"); it != c.params.end() && it->second > 0)
        n = static_cast<std::size_t>(it->second);
    for (const auto& input : c.inputs) n = std::max(n, input.size() + 1);
    // A model eval refuses at this length (a beta not positive at n, a positional table too
    // short) is refused here too, whether or not the property evaluates the part at fault.
    if (n > 0) model::check_length(c.model, static_cast<long>(n));
    // The rungs of the filter (numeric/filter.hpp): the check at cfg.precision, then at doubled
    // precision while it stays <= cfg.precision_cap; the property's check chooses its kinds.
    const auto ladder = numeric::doubling_ladder(numeric::kind_choice::automatic(), cfg.precision,
                                                 cfg.precision_cap);
    struct attempt_result {
        check_result r;
        bool may_resolve = false; // an undefined value more precision may resolve
    };
    const auto attempt = [&](const numeric::rung& rung, std::size_t) -> std::optional<attempt_result> {
        const long prec = rung.bits;
        // A case whose one forward pass at this precision would take hours is refused (a
        // limit_error: no verdict), as eval refuses it: --precision 2^20 made check run for
        // hours.
        attention::check_forward_work(c.model, n, prec);
        check_result r;
        bool may_resolve = false;
        try {
            r = p.check(c, numeric::context{prec});
        } catch (const numeric::undefined_error& e) {
            r = check_result::undefined(e.message());
            may_resolve = e.precision_may_resolve();
        } catch (const numeric::limit_error&) {
            throw; // a refusal to compute, not a verdict on the case
        } catch (const numeric::precision_error&) {
            throw; // a configuration no arithmetic can run at (precision 0 in a file)
        } catch (const std::bad_alloc&) {
            throw; // likewise: the case was too large to check
        } catch (const model::input_error&) {
            throw; // the model cannot take this input (a beta not positive at n): as eval says
        } catch (const model::model_file_error&) {
            throw; // a model the reader refuses
        } catch (const precondition_error&) {
            throw; // a case outside what the library accepts (a language the alphabet lacks)
        } catch (const std::exception& e) {
            r = check_result::violated(std::string("threw: ") + e.what());
        }
        return attempt_result{std::move(r), may_resolve};
    };
    bool agreed_before = false; // the previous attempt was undecided with both sides agreeing
    const auto judge = [&](const attempt_result& a, std::size_t) {
        if (is<outcomes::undefined>(a.r.result))
            return a.may_resolve ? numeric::filter_step::escalate : numeric::filter_step::decided;
        const auto* undecided = std::get_if<outcomes::undecided>(&a.r.result);
        if (!undecided) return numeric::filter_step::decided;
        if (!undecided->precision_helps) return numeric::filter_step::stop;
        // Two successive precisions, and the sides agree to half of each: an equality the
        // model attains, which more bits only confirm (docs/properties.md, "Verdicts").
        if (undecided->sides_agree && agreed_before) return numeric::filter_step::stop;
        agreed_before = undecided->sides_agree;
        return numeric::filter_step::escalate;
    };
    auto f = numeric::run_filter(ladder, attempt, judge);
    const long prec = ladder[f.rung].bits;
    if (precision_used) *precision_used = prec;
    check_result r = std::move(f.answer.r);
    if (is<outcomes::undefined>(r.result)) {
        if (f.answer.may_resolve) r.message += " (not resolved up to " + std::to_string(prec) + " bits)";
        return r;
    }
    const auto* undecided = std::get_if<outcomes::undecided>(&r.result);
    if (!undecided || !undecided->precision_helps) return r;
    if (f.end == numeric::filter_end::stopped)
        r.message += " (undecided at " + std::to_string(prec / 2) + " and " + std::to_string(prec) +
                     " bits, the two sides agreeing to half of each: not escalated further)";
    else
        r.message += " (undecided up to " + std::to_string(prec) + " bits)";
    return r;
}

} // namespace attnprop::runner
