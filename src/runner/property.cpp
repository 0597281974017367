#include "runner/property.hpp"

#include "model/json.hpp"
#include "numeric/limits.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>

namespace attnprop::runner {

const char* to_string(verdict v) {
    switch (v) {
    case verdict::holds: return "holds";
    case verdict::violated: return "violated";
    case verdict::undecided: return "undecided";
    case verdict::undefined: return "undefined";
    }
    return "?";
}

verdict check_result::status() const {
    if (is<outcomes::failed>(result)) return verdict::violated;
    if (is<outcomes::undecided>(result)) return verdict::undecided;
    if (is<outcomes::undefined>(result)) return verdict::undefined;
    return verdict::holds;
}

check_result check_result::make(verdict v, std::string msg) {
    check_result r;
    switch (v) {
    case verdict::holds: r.result = outcomes::passed{}; break;
    case verdict::violated: r.result = outcomes::failed{}; break;
    case verdict::undecided: r.result = outcomes::undecided{}; break;
    case verdict::undefined: r.result = outcomes::undefined{}; break;
    }
    r.message = std::move(msg);
    return r;
}

std::string status_word(const outcome& o, bool some_passed) {
    struct word {
        bool some_passed;
        std::string operator()(const outcomes::passed&) const { return "passed"; }
        std::string operator()(const outcomes::failed&) const { return "failed"; }
        std::string operator()(const outcomes::undecided&) const {
            return some_passed ? "partly-undecided" : "undecided";
        }
        std::string operator()(const outcomes::undefined&) const { return "undefined"; }
        std::string operator()(const outcomes::gave_up&) const { return "gave-up"; }
        std::string operator()(const outcomes::error&) const { return "error"; }
        std::string operator()(const outcomes::interrupted&) const { return "interrupted"; }
    };
    return std::visit(word{some_passed}, o);
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
                                          model::to_string(kind)};
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
        return std::string("needs a soft-attention model; the model is ") + model::to_string(kind);
    if (model::selects_maximum(kind) && p.shape.model != model_requirement::soft) {
        const auto blockers = model::exact_blockers(m);
        if (!blockers.empty())
            return "evaluates hard models exactly; the model needs real arithmetic: " + blockers.front();
    }
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
    long prec = cfg.precision;
    bool agreed_before = false; // the previous attempt was undecided with both sides agreeing
    for (;;) {
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
        } catch (const std::exception& e) {
            r = check_result::violated(std::string("threw: ") + e.what());
        }
        if (is<outcomes::undefined>(r.result)) {
            if (may_resolve && prec * 2 <= cfg.precision_cap) {
                prec *= 2;
                continue;
            }
            if (precision_used) *precision_used = prec;
            if (may_resolve) r.message += " (not resolved up to " + std::to_string(prec) + " bits)";
            return r;
        }
        const auto* undecided = std::get_if<outcomes::undecided>(&r.result);
        if (undecided && !undecided->precision_helps) {
            if (precision_used) *precision_used = prec;
            return r;
        }
        if (undecided && undecided->sides_agree && agreed_before) {
            // Two successive precisions, and the sides agree to half of each: an equality the
            // model attains, which more bits only confirm (docs/properties.md, "Verdicts").
            if (precision_used) *precision_used = prec;
            r.message += " (undecided at " + std::to_string(prec / 2) + " and " + std::to_string(prec) +
                         " bits, the two sides agreeing to half of each: not escalated further)";
            return r;
        }
        if (!undecided || prec * 2 > cfg.precision_cap) {
            if (precision_used) *precision_used = prec;
            if (undecided)
                r.message += " (undecided up to " + std::to_string(prec) + " bits)";
            return r;
        }
        agreed_before = undecided->sides_agree;
        prec *= 2;
    }
}

} // namespace attnprop::runner
