#pragma once
/// @file lexer.hpp
/// Tokens of the formula grammar (expr.hpp) and the error for malformed formula text.

#include "numeric/scalar.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attnprop::model {

/// A malformed formula. what() is "column C: message"; columns count bytes from 1, and a
/// problem at the end of the text has column text.size() + 1.
class expr_error : public std::runtime_error {
public:
    /// An error at the 1-based byte column `column`.
    expr_error(std::size_t column, std::string message);
    /// 1-based byte column of the offending token.
    std::size_t column() const noexcept { return column_; }
    /// The message without the column prefix.
    const std::string& message() const noexcept { return message_; }

private:
    std::size_t column_;
    std::string message_;
};

} // namespace attnprop::model

namespace attnprop::model::formula {

enum class tok {
    number,
    name,
    plus,
    minus,
    star,
    slash,
    caret,
    lparen,
    rparen,
    lbracket,
    rbracket,
    eq,
    ne,
    lt,
    le,
    gt,
    ge,
    end
};

struct token {
    tok kind;
    std::size_t column; ///< 1-based
    std::string_view text;
};

/// The tokens of s, ending with one tok::end at column s.size() + 1. Throws expr_error on a
/// malformed number ("1.2.3"), a lone '=' or '!', and characters outside the grammar.
std::vector<token> lex(std::string_view s);

/// The exact value of a number token's text (digits[.digits][e[+|-]digits]); std::nullopt with
/// *error set when it cannot be represented (an exponent too large).
std::optional<numeric::rational> number_value(std::string_view literal, std::string* error);

} // namespace attnprop::model::formula
