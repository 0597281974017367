#pragma once
/// @file precondition.hpp
/// The one error of a library precondition: an argument the caller should not have passed (a
/// soft model to the restriction, n < 2, a language whose symbols the alphabet lacks). The
/// command line maps it to exit 2 with its message (src/cli/common.cpp, describe_failure), in
/// one place: commands do not catch and re-wrap it.

#include <stdexcept>
#include <string>

namespace attnprop {

/// Thrown when a library function's documented precondition does not hold. A
/// std::invalid_argument, so code that checks whether a model fits a question (a property's
/// applicability) catches it as one.
class precondition_error : public std::invalid_argument {
public:
    explicit precondition_error(const std::string& what) : std::invalid_argument(what) {}
};

} // namespace attnprop
