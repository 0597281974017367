#include "model/formula/parser.hpp"

#include "model/formula/exact.hpp"

#include <gmp.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace attnprop::model::formula {

using numeric::numeric_error;
using numeric::rational;

namespace {

bool is_relop(tok k) {
    return k == tok::eq || k == tok::ne || k == tok::lt || k == tok::le || k == tok::gt ||
           k == tok::ge;
}

op relop_of(tok k) {
    switch (k) {
    case tok::eq:
        return op::eq;
    case tok::ne:
        return op::ne;
    case tok::lt:
        return op::lt;
    case tok::le:
        return op::le;
    case tok::gt:
        return op::gt;
    default:
        return op::ge;
    }
}

std::string describe(const token& t) {
    if (t.kind == tok::end)
        return "the end of the formula";
    return "'" + std::string(t.text) + "'";
}

// --- parser ---------------------------------------------------------------------------------

class parser {
public:
    parser(std::vector<token> toks, std::vector<node>& nodes)
        : toks_(std::move(toks)), nodes_(nodes) {}

    std::uint32_t parse_all() {
        std::uint32_t root = parse_sum();
        const token& t = peek();
        if (t.kind != tok::end) {
            std::string msg = "unexpected " + describe(t) + " after the expression";
            if (is_relop(t.kind))
                msg += "; comparisons must be written inside an Iverson bracket [a " +
                       std::string(t.text) + " b]";
            else if (t.kind == tok::number || t.kind == tok::name || t.kind == tok::lparen ||
                     t.kind == tok::lbracket)
                msg += "; write '*' to multiply";
            throw expr_error(t.column, msg);
        }
        return root;
    }

private:
    struct depth_guard {
        parser& p;
        explicit depth_guard(parser& owner, std::size_t column) : p(owner) {
            if (++p.depth_ > max_depth)
                throw expr_error(column, "formula nested too deeply");
        }
        ~depth_guard() { --p.depth_; }
        depth_guard(const depth_guard&) = delete;
        depth_guard& operator=(const depth_guard&) = delete;
    };

    const token& peek() const { return toks_[pos_]; }
    const token& next() { return toks_[pos_++]; }

    std::uint32_t add(op kind, std::size_t column, std::uint32_t lhs = no_child,
                      std::uint32_t rhs = no_child) {
        node nd;
        nd.op = kind;
        nd.column = static_cast<std::uint32_t>(column);
        nd.lhs = lhs;
        nd.rhs = rhs;
        std::size_t depth = 1;
        if (lhs != no_child)
            depth = std::max(depth, depths_[lhs] + 1);
        if (rhs != no_child)
            depth = std::max(depth, depths_[rhs] + 1);
        if (depth > max_depth)
            throw expr_error(column, "formula nested too deeply");
        switch (kind) {
        case op::number:
            break;
        case op::var_i:
        case op::var_n:
            nd.constant = false;
            break;
        case op::pi:
            nd.rational = false;
            break;
        default: {
            const node& a = nodes_[lhs];
            nd.rational = a.rational && !is_transcendental(kind);
            nd.constant = a.constant;
            if (rhs != no_child) {
                const node& b = nodes_[rhs];
                nd.rational = nd.rational && b.rational;
                nd.constant = nd.constant && b.constant;
                // A constant non-integer exponent makes an irrational power in general.
                if (kind == op::pow && b.value &&
                    mpz_cmp_ui(mpq_denref(b.value->backend().data()), 1) != 0)
                    nd.rational = false;
            }
        }
        }
        nodes_.push_back(std::move(nd));
        depths_.push_back(depth);
        auto idx = static_cast<std::uint32_t>(nodes_.size() - 1);
        node& made = nodes_.back();
        if (kind != op::number && made.rational && made.constant && !made.value) {
            // Constant folding; errors (1/0) are left for evaluation time.
            try {
                rational v;
                if (exact_value(nodes_, idx, 0, 0, v, false)) {
                    made.value = std::move(v);
                    set_small(made);
                }
            } catch (const numeric_error&) {
            } catch (const numeric::limit_error&) {
                // Too large to fold: exact evaluation meets the limit again, real kinds
                // compute the subtree in their own arithmetic.
            }
        }
        return idx;
    }

    std::uint32_t number(const token& t) {
        std::string err;
        auto q = number_value(t.text, &err);
        if (!q)
            throw expr_error(t.column, "bad number '" + std::string(t.text) + "': " + err);
        std::uint32_t idx = add(op::number, t.column);
        nodes_[idx].value = std::move(*q);
        set_small(nodes_[idx]);
        return idx;
    }

    std::uint32_t parse_sum() {
        depth_guard guard(*this, peek().column);
        std::uint32_t lhs = parse_term();
        while (peek().kind == tok::plus || peek().kind == tok::minus) {
            const token& op = next();
            std::uint32_t rhs = parse_term();
            lhs = add(op.kind == tok::plus ? op::add : op::sub, op.column, lhs, rhs);
        }
        return lhs;
    }

    std::uint32_t parse_term() {
        std::uint32_t lhs = parse_unary();
        while (peek().kind == tok::star || peek().kind == tok::slash) {
            const token& op = next();
            std::uint32_t rhs = parse_unary();
            lhs = add(op.kind == tok::star ? op::mul : op::div, op.column, lhs, rhs);
        }
        return lhs;
    }

    std::uint32_t parse_unary() {
        depth_guard guard(*this, peek().column);
        if (peek().kind == tok::minus) {
            const token& op = next();
            std::uint32_t arg = parse_unary();
            return add(op::neg, op.column, arg);
        }
        return parse_power();
    }

    std::uint32_t parse_power() {
        std::uint32_t base = parse_atom();
        if (peek().kind == tok::caret) {
            const token& op = next();
            std::uint32_t exponent = parse_unary();
            return add(op::pow, op.column, base, exponent);
        }
        return base;
    }

    void expect(tok kind, const token& opener, const char* closer) {
        const token& t = peek();
        if (t.kind != kind)
            throw expr_error(t.column, std::string("expected '") + closer + "' to close the '" +
                                           std::string(opener.text) + "' at column " +
                                           std::to_string(opener.column) + ", found " +
                                           describe(t));
        next();
    }

    std::uint32_t parse_atom() {
        const token& t = next();
        switch (t.kind) {
        case tok::number:
            return number(t);
        case tok::lparen: {
            std::uint32_t inner = parse_sum();
            expect(tok::rparen, t, ")");
            return inner;
        }
        case tok::lbracket: {
            std::uint32_t lhs = parse_sum();
            const token& rel = peek();
            if (!is_relop(rel.kind))
                throw expr_error(rel.column,
                                 "expected a comparison (==, !=, <, <=, >, >=) inside '[...]', "
                                 "found " +
                                     describe(rel));
            next();
            std::uint32_t rhs = parse_sum();
            expect(tok::rbracket, t, "]");
            return add(relop_of(rel.kind), rel.column, lhs, rhs);
        }
        case tok::name: {
            if (t.text == "i")
                return add(op::var_i, t.column);
            if (t.text == "n")
                return add(op::var_n, t.column);
            if (t.text == "pi")
                return add(op::pi, t.column);
            auto fn = function_named(t.text);
            if (!fn) {
                if (peek().kind == tok::lparen)
                    throw expr_error(t.column, "unknown function '" + std::string(t.text) +
                                                   "' (use " + function_names(", ", "or") + ")");
                throw expr_error(t.column, "unknown name '" + std::string(t.text) +
                                               "' (use i, n, pi, or " + function_names("/", "") + ")");
            }
            const token& open = peek();
            if (open.kind != tok::lparen)
                throw expr_error(open.column, "expected '(' after '" + std::string(t.text) +
                                                  "', found " + describe(open));
            next();
            std::uint32_t arg = parse_sum();
            expect(tok::rparen, open, ")");
            return add(*fn, t.column, arg);
        }
        default: {
            std::string msg = "expected an expression, found " + describe(t);
            if (t.kind == tok::plus)
                msg += " (there is no unary '+')";
            throw expr_error(t.column, msg);
        }
        }
    }

    std::vector<token> toks_;
    std::vector<node>& nodes_;
    std::vector<std::size_t> depths_;
    std::size_t pos_ = 0;
    std::size_t depth_ = 0;
};

} // namespace

tree parse(std::string_view text) {
    tree t;
    parser p(lex(text), t.nodes);
    t.root = p.parse_all();
    return t;
}

} // namespace attnprop::model::formula
