// The formula tree (model/formula/): printing and parsing round trips, and the range analysis
// over the tree.
#include "model/expr.hpp"
#include "model/formula/parser.hpp"
#include "model/formula/print.hpp"
#include "model/formula/range.hpp"

#include <catch2/catch.hpp>
#include <mpfr.h>
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

/// An endpoint as a decimal with 30 significant digits, rounded outward.
std::string decimal(const numeric::arb_ball& x, bool up) {
    mpfr_t r;
    mpfr_init2(r, 256);
    arf_get_mpfr(r, arb_midref(x.raw()), up ? MPFR_RNDU : MPFR_RNDD);
    char* buf = nullptr;
    mpfr_asprintf(&buf, up ? "%.30RUg" : "%.30RDg", r);
    std::string out(buf);
    mpfr_free_str(buf);
    mpfr_clear(r);
    return out;
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

TEST_CASE("formula: ranges over 1 <= i <= n", "[model][formula][range]") {
    const numeric::context ctx{128};
    struct row {
        const char* text;
        std::optional<std::pair<const char*, const char*>> range; // outward 30-digit decimals
    };
    // The formulas of the tests and documents, and one of each operation.
    const row cases[] = {
        {"(i-1)/n", {{"0", "1"}}},
        {"(-1)^(i-1)", {{"-1", "1"}}},
        {"[i==1]", {{"0", "1"}}},
        {"1/i", {{"0", "1"}}},
        {"i - 2*floor(i/2)", {{"0", "2"}}},
        {"i/n", {{"0", "1"}}},
        {"(n-i)/n", {{"0", "1"}}},
        {"3/4*(i/n) - 1/2", {{"-0.5", "0.25"}}},
        {"sin(i/10000^(2/16))", {{"-1", "1"}}},
        {"exp(-i)", {{"0", "0.367879441171442321595523770162"}}},
        {"2^(-i) + 0.5", {{"0.5", "1.00000000000000000000000000001"}}},
        {"i/(n+1)", {{"0", "1"}}},
        {"sqrt(i/n)", {{"0", "1"}}},
        {"[i==n]*(-1)^i", {{"-1", "1"}}},
        {"5", {{"5", "5"}}},
        {"i", std::nullopt},
        {"n/i", std::nullopt},
        {"i*sin(i)", std::nullopt},
        {"log(i)", std::nullopt},
        {"1/(i-1)", std::nullopt},
        {"i - 2*floor(i/2) + 1/i", {{"0", "3"}}},
        {"(-1)^i*[i==n]", {{"-1", "1"}}},
        {"n", std::nullopt},
        {"(-1)^i", {{"-1", "1"}}},
        {"[i<=2]", {{"0", "1"}}},
        {"7", {{"7", "7"}}},
        {"1 + 1/n", {{"1", "2"}}},
        {"1/(i-2)", std::nullopt},
        {"(-1)^(1/2)", {{"-1", "1"}}},
        {"i^2", std::nullopt},
        {"log(i-1)", std::nullopt},
        {"cos(i/n)", {{"0.540302304119240184299144402757", "1"}}},
        {"pi*i/n", std::nullopt},
        {"abs(i/n - 1/2)", {{"0", "0.5"}}},
        {"[i<n]", {{"0", "1"}}},
        {"[i!=1]", {{"0", "1"}}},
        {"[i>=1]", {{"1", "1"}}},
        {"[i>n]", {{"0", "1"}}},
        {"floor(i/n)", {{"-1", "1"}}},
        {"2^(1/2)", {{"1.4142135623730950488016887242", "1.41421356237309504880168872421"}}},
        {"(i/n)^(1/2)", {{"0", "1"}}},
        {"(i/n)^2", {{"0", "1"}}},
        {"(i/n)^-1", std::nullopt},
        {"0^i", {{"0", "1"}}},
        {"1^i", {{"1", "1"}}},
        {"i*(1/i)", std::nullopt},
        {"exp(i/n) - log(n/i + 1)", std::nullopt},
        {"1.5e-3*i/n", {{"0", "0.00150000000000000000000000000001"}}},
        {"[i/n < 1/2]*sin(pi*i/n)", {{"-1", "1"}}},
        {"i*0", {{"0", "0"}}},
        {"(i-1)/(n+i)", {{"0", "0.507936507936507936507936507937"}}},
        {"(2*i-1)/(2*n)", {{"0", "1"}}},
        {"-(i/n)^3", {{"-1", "0"}}},
        // Literals with a leading zero are decimals (a reader that took "025" for octal
        // once gave [0, 0.21] here, which misses the value 1/4 at i = n).
        {"0.25*i/n", {{"0", "0.25"}}},
        {"0.125", {{"0.125", "0.125"}}},
    };
    for (const row& c : cases) {
        INFO(c.text);
        const auto r = formula::range_over_domain(formula::parse(c.text), ctx);
        REQUIRE(r.has_value() == c.range.has_value());
        if (!r) continue;
        CHECK(decimal(r->lo, false) == c.range->first);
        CHECK(decimal(r->hi, true) == c.range->second);
    }
}
