#include "model/formula/ast.hpp"

#include <gmp.h>

#include <array>
#include <string>

namespace attnprop::model::formula {

namespace {

struct op_row {
    op o;
    std::string_view spelling;
    int arity;
    bool transcendental;
    bool function;
};

/// One row per op, in enum order.
constexpr std::array<op_row, 23> table{{
    {op::number, "", 0, false, false},  {op::var_i, "i", 0, false, false},
    {op::var_n, "n", 0, false, false},  {op::pi, "pi", 0, false, false},
    {op::neg, "-", 1, false, false},    {op::add, "+", 2, false, false},
    {op::sub, "-", 2, false, false},    {op::mul, "*", 2, false, false},
    {op::div, "/", 2, false, false},    {op::pow, "^", 2, false, false},
    {op::sin, "sin", 1, true, true},    {op::cos, "cos", 1, true, true},
    {op::exp, "exp", 1, true, true},    {op::log, "log", 1, true, true},
    {op::sqrt, "sqrt", 1, true, true},  {op::abs, "abs", 1, false, true},
    {op::floor, "floor", 1, false, true}, {op::eq, "==", 2, false, false},
    {op::ne, "!=", 2, false, false},    {op::lt, "<", 2, false, false},
    {op::le, "<=", 2, false, false},    {op::gt, ">", 2, false, false},
    {op::ge, ">=", 2, false, false},
}};

const op_row& row(op o) noexcept { return table[static_cast<std::size_t>(o)]; }

} // namespace

std::string_view spelling(op o) noexcept { return row(o).spelling; }
int arity(op o) noexcept { return row(o).arity; }
bool is_transcendental(op o) noexcept { return row(o).transcendental; }
bool is_function(op o) noexcept { return row(o).function; }
bool is_relation(op o) noexcept { return o >= op::eq && o <= op::ge; }

std::optional<op> function_named(std::string_view name) noexcept {
    for (const op_row& r : table)
        if (r.function && r.spelling == name) return r.o;
    return std::nullopt;
}

std::string function_names(std::string_view separator, std::string_view last_word) {
    std::vector<std::string_view> names;
    for (const op_row& r : table)
        if (r.function) names.push_back(r.spelling);
    std::string out;
    for (std::size_t k = 0; k < names.size(); ++k) {
        if (k > 0) {
            if (k + 1 == names.size() && !last_word.empty())
                out.append(" ").append(last_word).append(" ");
            else
                out += separator;
        }
        out += names[k];
    }
    return out;
}

bool relation_holds(op o, numeric::order ord) noexcept {
    using numeric::order;
    switch (o) {
    case op::eq:
        return ord == order::equal;
    case op::ne:
        return ord != order::equal;
    case op::lt:
        return ord == order::less;
    case op::le:
        return ord == order::less || ord == order::equal;
    case op::gt:
        return ord == order::greater;
    case op::ge:
        return ord == order::greater || ord == order::equal;
    default:
        return false;
    }
}

bool small_integer(const numeric::rational& q, long& k) {
    mpq_srcptr p = q.backend().data();
    if (mpz_cmp_ui(mpq_denref(p), 1) != 0)
        return false;
    if (mpz_sizeinbase(mpq_numref(p), 2) > 62)
        return false;
    k = mpz_get_si(mpq_numref(p));
    return true;
}

} // namespace attnprop::model::formula
