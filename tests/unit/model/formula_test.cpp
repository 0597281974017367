// The formula tree (model/formula/): printing and parsing round trips.
#include "model/expr.hpp"
#include "model/formula/parser.hpp"
#include "model/formula/print.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace formula = attnprop::model::formula;
namespace numeric = attnprop::numeric;
using attnprop::model::expr;
using numeric::rational;

namespace {

/// A random tree of at most `depth` levels, made as the parser makes trees: number literals
/// are nonnegative decimals, every other node carries only its operation and children.
std::uint32_t grow(formula::tree& t, int depth) {
    using formula::op;
    constexpr int leaves = 4;                                    // number, i, n, pi
    constexpr int kinds = static_cast<int>(op::ge) + 1;
    const int pick = *rc::gen::inRange(0, depth <= 0 ? leaves : kinds);
    formula::node nd;
    nd.op = static_cast<op>(pick);
    if (nd.op == op::number) {
        const long digits = *rc::gen::inRange(0L, 100000L);
        const int places = *rc::gen::inRange(0, 4);
        rational scale = 1;
        for (int k = 0; k < places; ++k) scale *= 10;
        nd.value = rational(digits) / scale;
    }
    const int arity = formula::arity(nd.op);
    if (arity >= 1) nd.lhs = grow(t, depth - 1);
    if (arity == 2) nd.rhs = grow(t, depth - 1);
    t.nodes.push_back(std::move(nd));
    return static_cast<std::uint32_t>(t.nodes.size() - 1);
}

rc::Gen<formula::tree> trees() {
    return rc::gen::exec([] {
        formula::tree t;
        t.root = grow(t, *rc::gen::inRange(0, 10));
        return t;
    });
}

} // namespace

TEST_CASE("formula: printing follows precedence and associativity", "[model][formula]") {
    const std::pair<const char*, const char*> cases[] = {
        {"-2^2", "-2^2"},
        {"(-2)^2", "(-2)^2"},
        {"2^3^2", "2^3^2"},
        {"(2^3)^2", "(2^3)^2"},
        {"2^-i", "2^-i"},
        {"1-(2-3)", "1 - (2 - 3)"},
        {"(1-2)-3", "1 - 2 - 3"},
        {"8/(4/2)", "8 / (4 / 2)"},
        {"-(i*n)", "-(i * n)"},
        {"(-i)*n", "-i * n"},
        {"[i==1]*(-1)^i", "[i == 1] * (-1)^i"},
        {"sin(i/10000^(2/16))", "sin(i / 10000^(2 / 16))"},
        {"0.125 + 1.5e3 + 2e-2 + 007", "0.125 + 1500 + 0.02 + 7"},
        {"(i)", "i"},
    };
    for (const auto& [text, printed] : cases) {
        INFO(text);
        const formula::tree t = formula::parse(text);
        CHECK(formula::to_text(t) == printed);
        CHECK(formula::same_structure(formula::parse(formula::to_text(t)), t));
    }
    CHECK(!formula::same_structure(formula::parse("1-2-3"), formula::parse("1-(2-3)")));
    CHECK(!formula::same_structure(formula::parse("i/2"), formula::parse("i/3")));
    CHECK(formula::same_structure(formula::parse("0.5"), formula::parse("5e-1")));
}

TEST_CASE("formula: parse(to_text(t)) has the structure of t for random trees",
          "[model][formula]") {
    const auto g = trees();
    for (std::uint64_t seed = 1; seed <= 300; ++seed) {
        INFO("seed " << seed);
        // inRange scales its range with the size: the nominal size draws every operation.
        const formula::tree t = g(rc::Random(seed), rc::kNominalSize).value();
        const std::string text = formula::to_text(t);
        INFO("text: " << text);
        const formula::tree back = formula::parse(text);
        REQUIRE(formula::same_structure(back, t));
        REQUIRE(formula::to_text(back) == text);
        REQUIRE(formula::same_structure(expr::parse(text).ast(), t));
    }
}
