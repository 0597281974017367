#include "model/formula/print.hpp"

#include <limits>
#include <string>

namespace attnprop::model::formula {

bool same_structure(const tree& a, std::uint32_t ia, const tree& b, std::uint32_t ib) {
    const node& x = a[ia];
    const node& y = b[ib];
    if (x.op != y.op) return false;
    if (x.op == op::number) return x.value == y.value;
    if ((x.lhs == no_child) != (y.lhs == no_child) || (x.rhs == no_child) != (y.rhs == no_child))
        return false;
    return (x.lhs == no_child || same_structure(a, x.lhs, b, y.lhs)) &&
           (x.rhs == no_child || same_structure(a, x.rhs, b, y.rhs));
}

namespace {

/// Binding strength of a node as printed: sums 0, products 1, unary minus 2, powers 3, atoms 4
/// (the levels of the grammar's expr, term, unary, power and atom).
int level(op o) {
    switch (o) {
    case op::add:
    case op::sub:
        return 0;
    case op::mul:
    case op::div:
        return 1;
    case op::neg:
        return 2;
    case op::pow:
        return 3;
    default:
        return 4;
    }
}

/// An exact plain decimal for q >= 0 with a terminating expansion ("12", "0.125"), in
/// scientific notation when the plain text would be long and the exponent within the
/// reader's range ("1e-100000", not 100 002 characters); other values (which the parser never
/// makes) as a parenthesised quotient.
std::string literal(const numeric::rational& q) {
    if (q >= 0) {
        if (auto d = numeric::exact_decimal(q, std::numeric_limits<std::size_t>::max())) {
            if (d->size() <= 48) return *d;
            if (auto e = numeric::exact_scientific(q, 40)) {
                const long long expo = std::stoll(e->substr(e->find('e') + 1));
                if (expo >= -100000 && expo <= 100000) return *e;
            }
            return *d;
        }
    }
    return "(" + numeric::to_exact_string(q) + ")";
}

void print(const tree& t, std::uint32_t idx, int min_level, std::string& out) {
    const node& nd = t[idx];
    const bool wrap = level(nd.op) < min_level;
    if (wrap) out += '(';
    switch (nd.op) {
    case op::number:
        out += literal(*nd.value);
        break;
    case op::var_i:
    case op::var_n:
    case op::pi:
        out += spelling(nd.op);
        break;
    case op::neg:
        out += '-';
        print(t, nd.lhs, 2, out);
        break;
    case op::add:
    case op::sub:
    case op::mul:
    case op::div: {
        const int l = level(nd.op);
        print(t, nd.lhs, l, out);
        out += ' ';
        out += spelling(nd.op);
        out += ' ';
        print(t, nd.rhs, l + 1, out);
        break;
    }
    case op::pow:
        print(t, nd.lhs, 4, out);
        out += '^';
        print(t, nd.rhs, 2, out);
        break;
    case op::sin:
    case op::cos:
    case op::exp:
    case op::log:
    case op::sqrt:
    case op::abs:
    case op::floor:
        out += spelling(nd.op);
        out += '(';
        print(t, nd.lhs, 0, out);
        out += ')';
        break;
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge:
        out += '[';
        print(t, nd.lhs, 0, out);
        out += ' ';
        out += spelling(nd.op);
        out += ' ';
        print(t, nd.rhs, 0, out);
        out += ']';
        break;
    }
    if (wrap) out += ')';
}

} // namespace

std::string to_text(const tree& t) {
    std::string out;
    print(t, t.root, 0, out);
    return out;
}

} // namespace attnprop::model::formula
