#include "model/expr.hpp"

#include "model/formula/bounds.hpp"
#include "model/formula/exact.hpp"
#include "model/formula/parser.hpp"

#include <utility>

namespace attnprop::model {

using numeric::numeric_error;
using numeric::rational;

expr expr::parse(std::string_view text) {
    expr e;
    e.text_ = std::string(text);
    e.tree_ = formula::parse(text);
    const formula::bound_facts facts = formula::analyse_bounds(e.tree_);
    e.bounded_ = facts.bounded;
    e.defined_everywhere_ = facts.defined_everywhere;
    e.cache_ = std::make_shared<formula::constant_cache>();
    return e;
}

bool expr::uses_i() const noexcept {
    for (const formula::node& nd : tree_.nodes)
        if (nd.op == formula::op::var_i) return true;
    return false;
}

rational expr::eval_rational(long i, long n) const {
    if (!is_rational())
        throw numeric_error(needs_real_message("exact rationals"));
    if (long long p = 0, q = 1; formula::fraction_value(tree_.nodes, tree_.root, i, n, p, q))
        return rational(p, q);
    try {
        rational out;
        formula::exact_value(tree_.nodes, tree_.root, i, n, out, true);
        return out;
    } catch (const numeric_error& e) {
        rethrow_with_context(e, i, n);
    } catch (const numeric::limit_error& e) {
        throw e.located(" in formula '" + text_ + "' at i=" + std::to_string(i) +
                        ", n=" + std::to_string(n));
    }
}

std::string expr::needs_real_message(std::string_view kind_name) const {
    return "formula '" + text_ + "' needs real arithmetic; not available for " +
           std::string(kind_name);
}

void expr::rethrow_with_context(const numeric_error& e, long i, long n) const {
    const std::string where =
        " in formula '" + text_ + "' at i=" + std::to_string(i) + ", n=" + std::to_string(n);
    if (const auto* u = dynamic_cast<const numeric::undefined_error*>(&e))
        throw numeric::undefined_error(u->reason() + where, u->where(), u->precision_may_resolve());
    throw numeric_error(std::string(e.what()) + where);
}

} // namespace attnprop::model
