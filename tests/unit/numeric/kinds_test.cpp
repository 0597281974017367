// The user kinds made from kind_list.hpp: choices, names, parsing, help texts and dispatch.
#include "numeric/kinds.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <type_traits>
#include <vector>

using namespace attnprop::numeric;

TEST_CASE("kinds: the list, its names and the kinds' facts", "[numeric][kinds]") {
    STATIC_REQUIRE(user_kinds::size == 5);
    CHECK(std::vector<std::string_view>(user_kinds::names.begin(), user_kinds::names.end()) ==
          std::vector<std::string_view>{"exact", "double", "mpfr", "ball", "interval"});
    CHECK(is_user_kind("ball"));
    CHECK_FALSE(is_user_kind("filter-interval")); // an internal kind
    CHECK_FALSE(is_user_kind("auto"));
    CHECK(user_kind_names_if<has_exp>() ==
          std::vector<std::string>{"double", "mpfr", "ball", "interval"});
    CHECK(user_kind_names_if<is_enclosure>() == std::vector<std::string>{"ball", "interval"});

    const auto& ball = kind_choice::of<arb_ball>().info();
    CHECK(ball.name == "ball");
    CHECK(ball.kind == scalar_kind::enclosure);
    CHECK(ball.variable_precision);
    CHECK(ball.value_bytes(256) == 48 + 32);
    CHECK(kind_choice::of<dinterval>().info().description == "certified double intervals");
    CHECK(kind_choice::of<double>().info().display_digits == 17);
    CHECK(kind_choice::of<mpfr_real>().info().display_digits == 0);
    CHECK_FALSE(kind_choice::of<rational>().info().has_exp);
    CHECK(default_digits<double>(256) == 17);
    CHECK(default_digits<mpfr_real>(256) == 78);
}

TEST_CASE("kinds: a choice parses, prints and dispatches by the list", "[numeric][kinds]") {
    for (auto name : user_kinds::names) {
        auto c = kind_choice::parse(name);
        REQUIRE(c);
        CHECK(c->name() == name);
        CHECK(std::string(to_string(*c)) == std::string(name));
        CHECK_FALSE(c->is_automatic());
    }
    CHECK(kind_choice::parse("auto") == kind_choice::automatic());
    CHECK_FALSE(kind_choice::parse("auto", false).has_value());
    CHECK_FALSE(kind_choice::parse("quad").has_value());
    CHECK_FALSE(kind_choice::parse("filter-interval").has_value());
    CHECK(std::string(to_string(kind_choice::automatic())) == "auto");
    CHECK(kind_choice::parse("mpfr")->is<mpfr_real>());
    CHECK_FALSE(kind_choice::parse("mpfr")->is<double>());

    auto name_of = [](kind_choice c) {
        return dispatch(
            c, []<class S>(std::type_identity<S>) { return std::string(scalar_traits<S>::name); });
    };
    CHECK(name_of(kind_choice::of<dinterval>()) == "interval");
    CHECK_FALSE(name_of(kind_choice::automatic()).has_value());
    // A predicate keeps f from being instantiated for (and called with) the other kinds.
    bool called = false;
    CHECK_FALSE(dispatch<has_exp>(kind_choice::of<rational>(),
                                  [&]<class S>(std::type_identity<S>) { called = true; }));
    CHECK_FALSE(called);
}

TEST_CASE("kinds: help texts list the kinds a command offers", "[numeric][kinds]") {
    CHECK(choice_names(true) ==
          std::vector<std::string>{"auto", "exact", "double", "mpfr", "ball", "interval"});
    CHECK(choice_names<has_exp>(true, true) ==
          std::vector<std::string>{"auto", "interval", "ball", "mpfr", "double"});
    CHECK(join_choice_names(choice_names(false), true) ==
          "exact, double, mpfr, ball, interval (certified double intervals)");
    CHECK(join_choice_names(choice_names<has_exp>(false, true), false) ==
          "interval, ball, mpfr, double");
}
