#include "model/formula/lexer.hpp"

#include <cctype>
#include <cstdio>
#include <utility>

namespace attnprop::model {

expr_error::expr_error(std::size_t column, std::string message)
    : std::runtime_error("column " + std::to_string(column) + ": " + message), column_(column),
      message_(std::move(message)) {}

} // namespace attnprop::model

namespace attnprop::model::formula {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
    return is_name_start(c) || is_digit(c);
}

std::string describe_char(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
        return std::string("'") + c + "'";
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", u);
    return std::string("byte ") + buf;
}

/// True when s is digits ['.' digits] [('e'|'E') ['+'|'-'] digits].
bool valid_number(std::string_view s) {
    std::size_t p = 0;
    auto digits = [&] {
        std::size_t start = p;
        while (p < s.size() && is_digit(s[p]))
            ++p;
        return p > start;
    };
    if (!digits())
        return false;
    if (p < s.size() && s[p] == '.') {
        ++p;
        if (!digits())
            return false;
    }
    if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
        ++p;
        if (p < s.size() && (s[p] == '+' || s[p] == '-'))
            ++p;
        if (!digits())
            return false;
    }
    return p == s.size();
}

/// The literal (already checked by valid_number) as "<digits>e<exponent>" with no leading zeros
/// in the digits. numeric::parse_rational reads a digit string with a leading 0 as octal
/// ("0.125" gave 17/200, "0.08" threw), so it never sees one from here. Exponents too long
/// to shift are passed through unchanged for parse_rational to reject.
std::string canonical_number(std::string_view lit) {
    std::size_t epos = lit.find_first_of("eE");
    std::string_view mant = lit.substr(0, epos);
    std::size_t dot = mant.find('.');
    std::string digits(mant.substr(0, dot));
    std::size_t frac = 0;
    if (dot != std::string_view::npos) {
        digits += mant.substr(dot + 1);
        frac = mant.size() - dot - 1;
    }
    long long e = 0;
    if (epos != std::string_view::npos) {
        std::string_view ed = lit.substr(epos + 1);
        bool neg = !ed.empty() && ed.front() == '-';
        if (!ed.empty() && (ed.front() == '+' || ed.front() == '-'))
            ed.remove_prefix(1);
        while (ed.size() > 1 && ed.front() == '0')
            ed.remove_prefix(1);
        if (ed.size() > 9)
            return std::string(lit);
        e = std::stoll(std::string(ed));
        if (neg)
            e = -e;
    }
    e -= static_cast<long long>(frac);
    std::size_t nz = digits.find_first_not_of('0');
    digits = nz == std::string::npos ? "0" : digits.substr(nz);
    return digits + "e" + std::to_string(e);
}

} // namespace

std::vector<token> lex(std::string_view s) {
    std::vector<token> out;
    std::size_t p = 0;
    while (p < s.size()) {
        char c = s[p];
        std::size_t col = p + 1;
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++p;
            continue;
        }
        if (is_digit(c) || c == '.') {
            std::size_t start = p;
            while (p < s.size() && (is_digit(s[p]) || s[p] == '.'))
                ++p;
            if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
                std::size_t q = p + 1;
                if (q < s.size() && (s[q] == '+' || s[q] == '-'))
                    ++q;
                if (q < s.size() && is_digit(s[q])) {
                    p = q;
                    while (p < s.size() && is_digit(s[p]))
                        ++p;
                }
            }
            std::string_view lit = s.substr(start, p - start);
            if (!valid_number(lit))
                throw expr_error(col, "malformed number '" + std::string(lit) +
                                          "' (expected digits[.digits][e[+|-]digits])");
            out.push_back({tok::number, col, lit});
            continue;
        }
        if (is_name_start(c)) {
            std::size_t start = p;
            while (p < s.size() && is_name_char(s[p]))
                ++p;
            out.push_back({tok::name, col, s.substr(start, p - start)});
            continue;
        }
        auto two = [&](char next) { return p + 1 < s.size() && s[p + 1] == next; };
        tok kind = tok::end;
        std::size_t len = 1;
        switch (c) {
        case '+':
            kind = tok::plus;
            break;
        case '-':
            kind = tok::minus;
            break;
        case '*':
            kind = tok::star;
            break;
        case '/':
            kind = tok::slash;
            break;
        case '^':
            kind = tok::caret;
            break;
        case '(':
            kind = tok::lparen;
            break;
        case ')':
            kind = tok::rparen;
            break;
        case '[':
            kind = tok::lbracket;
            break;
        case ']':
            kind = tok::rbracket;
            break;
        case '=':
            if (!two('='))
                throw expr_error(col, "'=' is not an operator; write '==' to compare");
            kind = tok::eq;
            len = 2;
            break;
        case '!':
            if (!two('='))
                throw expr_error(col, "'!' is not an operator; write '!=' to compare");
            kind = tok::ne;
            len = 2;
            break;
        case '<':
            kind = two('=') ? tok::le : tok::lt;
            len = two('=') ? 2 : 1;
            break;
        case '>':
            kind = two('=') ? tok::ge : tok::gt;
            len = two('=') ? 2 : 1;
            break;
        default:
            throw expr_error(col, "unexpected character " + describe_char(c));
        }
        out.push_back({kind, col, s.substr(p, len)});
        p += len;
    }
    out.push_back({tok::end, s.size() + 1, {}});
    return out;
}

std::optional<numeric::rational> number_value(std::string_view literal, std::string* error) {
    return numeric::parse_rational(canonical_number(literal), error);
}

} // namespace attnprop::model::formula
