// Library preconditions: one error type, mapped to exit 2 with the library's message where the
// command line describes every failure; other std::invalid_argument stays an internal error.
#include "cli/common.hpp"
#include "hard_limit/restriction.hpp"
#include "model/model_file.hpp"
#include "util/precondition.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace attnprop;

TEST_CASE("precondition_error: exit 2 with the message", "[cli][precondition]") {
    std::string printed;
    const int code = cli::describe_failure(
        std::make_exception_ptr(precondition_error("n must be at least 2 (one input and eos)")), printed);
    REQUIRE(code == cli::exit_usage);
    REQUIRE(printed == "attnprop: error: n must be at least 2 (one input and eos)");
    // Not every invalid_argument is a precondition: a stray one is an internal error.
    REQUIRE(cli::describe_failure(std::make_exception_ptr(std::invalid_argument("x")), printed) ==
            cli::exit_internal);
}

TEST_CASE("precondition_error: thrown by the library's preconditions", "[cli][precondition]") {
    const auto soft = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/soft-majority-ln0.json");
    REQUIRE_THROWS_AS(analysis::build_restriction(soft, 8), precondition_error);
    const auto hard = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/hard-first.json");
    REQUIRE_THROWS_WITH(analysis::build_restriction(hard, 1), "n must be at least 2 (one input and eos)");
    // Still a std::invalid_argument for code that asks whether a model fits a question.
    REQUIRE_THROWS_AS(analysis::build_restriction(hard, 1), std::invalid_argument);
}
