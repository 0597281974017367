#include "runner/property.hpp"

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
        if (r.status == verdict::undefined) {
            if (may_resolve && prec * 2 <= cfg.precision_cap) {
                prec *= 2;
                continue;
            }
            if (precision_used) *precision_used = prec;
            if (may_resolve) r.message += " (not resolved up to " + std::to_string(prec) + " bits)";
            return r;
        }
        if (r.status == verdict::undecided && !r.precision_helps) {
            if (precision_used) *precision_used = prec;
            return r;
        }
        if (r.status != verdict::undecided || prec * 2 > cfg.precision_cap) {
            if (precision_used) *precision_used = prec;
            if (r.status == verdict::undecided)
                r.message += " (undecided up to " + std::to_string(prec) + " bits)";
            return r;
        }
        prec *= 2;
    }
}

} // namespace attnprop::runner
