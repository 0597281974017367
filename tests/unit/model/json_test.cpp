#include "model/json.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace json = attnprop::json;

namespace {

struct error_case {
    std::string text;
    std::size_t line;
    std::size_t column;
    std::string message;
};

void check_error(const error_case& c) {
    INFO("input: " << c.text);
    try {
        (void)json::parse(c.text);
        FAIL("expected a parse_error");
    } catch (const json::parse_error& e) {
        CHECK(e.message() == c.message);
        CHECK(e.where().line == c.line);
        CHECK(e.where().column == c.column);
        CHECK(std::string(e.what()) ==
              std::to_string(c.line) + ":" + std::to_string(c.column) + ": " + c.message);
    }
}

json::location at(std::size_t line, std::size_t column) {
    return {line, column};
}

/// An array of numbers with the given digit counts ("1", "12", "123", ...).
json::value digits_array(const std::vector<std::size_t>& lengths) {
    json::value a = json::value::array();
    for (std::size_t len : lengths) {
        std::string digits;
        for (std::size_t i = 0; i < len; ++i) {
            digits += static_cast<char>('1' + i % 9);
        }
        a.push_back(json::value::number_raw(digits));
    }
    return a;
}

} // namespace

TEST_CASE("json: kind names", "[json]") {
    CHECK(std::string(json::kind_name(json::kind::null)) == "null");
    CHECK(std::string(json::kind_name(json::kind::boolean)) == "boolean");
    CHECK(std::string(json::kind_name(json::kind::number)) == "number");
    CHECK(std::string(json::kind_name(json::kind::string)) == "string");
    CHECK(std::string(json::kind_name(json::kind::array)) == "array");
    CHECK(std::string(json::kind_name(json::kind::object)) == "object");
}

TEST_CASE("json: every kind parses", "[json]") {
    CHECK(json::parse("null").is_null());
    CHECK(json::parse("true").as_bool());
    CHECK_FALSE(json::parse("false").as_bool());
    CHECK(json::parse("false").is_boolean());
    CHECK(json::parse("42").raw_number() == "42");
    CHECK(json::parse("\"hi\"").as_string() == "hi");

    const json::value a = json::parse(" [ 1 , \"two\" , [ ] , { } , null ] ");
    REQUIRE(a.is_array());
    REQUIRE(a.size() == 5);
    CHECK(a[0].is_number());
    CHECK(a[1].as_string() == "two");
    CHECK(a[2].is_array());
    CHECK(a[2].empty());
    CHECK(a[3].is_object());
    CHECK(a[3].empty());
    CHECK(a[4].is_null());
    CHECK(a.elements().size() == 5);

    const json::value o = json::parse("{\"b\": 1, \"a\": {\"c\": false}}");
    REQUIRE(o.is_object());
    REQUIRE(o.size() == 2);
    CHECK(o.members()[0].first == "b");
    CHECK(o.members()[1].first == "a");
    REQUIRE(o.find("a") != nullptr);
    REQUIRE(o.find("a")->find("c") != nullptr);
    CHECK_FALSE(o.find("a")->find("c")->as_bool());
    CHECK(o.find("missing") == nullptr);
}

TEST_CASE("json: strings decode escapes", "[json]") {
    CHECK(json::parse(R"("a\"b\\c\/d\be\ff\ng\rh\ti")").as_string() == "a\"b\\c/d\be\ff\ng\rh\ti");
    CHECK(json::parse(R"("\u0041\u00e9\u20AC")").as_string() == "A\xC3\xA9\xE2\x82\xAC");
    CHECK(json::parse(R"("\u0000")").as_string() == std::string(1, '\0'));
    CHECK(json::parse("\"caf\xC3\xA9 \xF0\x9F\x98\x80\"").as_string() ==
          "caf\xC3\xA9 \xF0\x9F\x98\x80");
    CHECK(json::parse("\"\x7F\"").as_string() == "\x7F");
}

TEST_CASE("json: surrogate pairs decode to UTF-8", "[json]") {
    CHECK(json::parse(R"("\uD83D\uDE00")").as_string() == "\xF0\x9F\x98\x80");
    CHECK(json::parse(R"("\ud834\udd1e")").as_string() == "\xF0\x9D\x84\x9E");
    CHECK(json::parse(R"("x\uDBFF\uDFFFy")").as_string() == "x\xF4\x8F\xBF\xBFy");
    CHECK(json::parse(R"("\uD800\uDC00")").as_string() == "\xF0\x90\x80\x80");
}

TEST_CASE("json: raw numbers are preserved exactly", "[json]") {
    for (const char* text : {"0", "-0", "0.1", "-1.50e+3", "1E+400", "1e-400", "2.5E-7",
                             "123456789012345678901234567890", "-0.0", "0e0", "10"}) {
        INFO(text);
        const json::value v = json::parse(text);
        REQUIRE(v.is_number());
        CHECK(v.raw_number() == text);
        CHECK(json::dump(v) == text);
    }
    CHECK(json::parse("[0.10]")[0].raw_number() == "0.10");
    // Different spellings of the same value are different DOMs: numbers compare by text.
    CHECK_FALSE(json::parse("1.0") == json::parse("1"));
}

TEST_CASE("json: number_raw validates the grammar", "[json]") {
    CHECK(json::value::number_raw("-1.5e+3").raw_number() == "-1.5e+3");
    for (const char* bad : {"", "01", "+1", ".5", "1.", "-", "1e", "1e+", "--1", "0x10", "NaN",
                            "Infinity", " 1", "1 ", "1.5.3", "-01", "00"}) {
        INFO(bad);
        CHECK_THROWS_AS(json::value::number_raw(bad), std::invalid_argument);
        CHECK_FALSE(json::is_number_lexeme(bad));
    }
    CHECK(json::value::number(-42).raw_number() == "-42");
    CHECK(json::value::number(0).raw_number() == "0");
    CHECK(json::value::number(-9223372036854775807LL - 1).raw_number() == "-9223372036854775808");
}

TEST_CASE("json: positions of nested values", "[json]") {
    const std::string text = "{\n"
                             "  \"name\": \"x\",\n"
                             "  \"list\": [1, {\"k\": true}],\n"
                             "\t\"n\": null,\n"
                             "  \"deep\": [\n"
                             "    [ -2.5 ]\n"
                             "  ]\n"
                             "}\n";
    const json::value v = json::parse(text);
    CHECK(v.where() == at(1, 1));
    CHECK(v.find("name")->where() == at(2, 11));
    const json::value& list = *v.find("list");
    CHECK(list.where() == at(3, 11));
    CHECK(list[0].where() == at(3, 12));
    CHECK(list[1].where() == at(3, 15));
    CHECK(list[1].find("k")->where() == at(3, 21));
    CHECK(v.find("n")->where() == at(4, 7)); // a tab counts as one column
    const json::value& deep = *v.find("deep");
    CHECK(deep.where() == at(5, 11));
    CHECK(deep[0].where() == at(6, 5));
    CHECK(deep[0][0].where() == at(6, 7));

    CHECK(json::parse("  7").where() == at(1, 3));
    CHECK(json::value::number(7).where() == json::location{});
    CHECK_FALSE(json::value().where().known());
}

TEST_CASE("json: error messages name line and column", "[json]") {
    const std::vector<error_case> cases = {
        {"{\"a\" 1}", 1, 6, "expected ':' after object key"},
        {"{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}' in object"},
        {"[1 2]", 1, 4, "expected ',' or ']' in array"},
        {"\"abc", 1, 1, "unterminated string"},
        {"[\"a\\", 1, 2, "unterminated string"},
        {"{\n  \"a\": \"xyz", 2, 8, "unterminated string"},
        {"\"a\\qb\"", 1, 3, "invalid escape '\\q'"},
        {"\"a\\'\"", 1, 3, "invalid escape '\\''"},
        {"\"a\\\x01\"", 1, 3, "invalid escape sequence"},
        {"\"a\tb\"", 1, 3, "control character in string"},
        {"\"ab\ncd\"", 1, 4, "control character in string"},
        {"01", 1, 1, "invalid number '01'"},
        {"[x]", 1, 2, "unexpected character 'x'"},
        {"@", 1, 1, "unexpected character '@'"},
        {"[1,", 1, 4, "unexpected end of input"},
        {"", 1, 1, "unexpected end of input"},
        {"   ", 1, 4, "unexpected end of input"},
        {"[1,\n", 2, 1, "unexpected end of input"},
        {"{\"a\"", 1, 5, "unexpected end of input"},
        {"{\"a\":", 1, 6, "unexpected end of input"},
        {"{", 1, 2, "unexpected end of input"},
        {"{} x", 1, 4, "trailing characters after JSON value"},
        {"1 2", 1, 3, "trailing characters after JSON value"},
        {"{\"a\":1,\"a\":2}", 1, 8, "duplicate key \"a\""},
        // multi-line inputs
        {"{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, "expected ':' after object key"},
        {"[\n  1,\n  2\n  3\n]", 4, 3, "expected ',' or ']' in array"},
        {"\t\t[1 2]", 1, 6, "expected ',' or ']' in array"},
        {"{\n}\n\n  x", 4, 3, "trailing characters after JSON value"},
    };
    for (const auto& c : cases) {
        check_error(c);
    }
}

TEST_CASE("json: invalid numbers", "[json]") {
    const std::vector<error_case> cases = {
        {"+1", 1, 1, "invalid number '+1'"},
        {".5", 1, 1, "invalid number '.5'"},
        {"1.", 1, 1, "invalid number '1.'"},
        {"[1.]", 1, 2, "invalid number '1.'"},
        {"-", 1, 1, "invalid number '-'"},
        {"-01", 1, 1, "invalid number '-01'"},
        {"1e", 1, 1, "invalid number '1e'"},
        {"1e+", 1, 1, "invalid number '1e+'"},
        {"1.5.3", 1, 1, "invalid number '1.5.3'"},
        {"[0x1F]", 1, 2, "invalid number '0x1F'"},
        {"-Infinity", 1, 1, "invalid number '-Infinity'"},
        {"NaN", 1, 1, "unexpected character 'N'"},
        {"Infinity", 1, 1, "unexpected character 'I'"},
        {"[nan]", 1, 2, "invalid literal 'nan'"},
        {"tru", 1, 1, "invalid literal 'tru'"},
        {"nulll", 1, 1, "invalid literal 'nulll'"},
        {"True", 1, 1, "unexpected character 'T'"},
    };
    for (const auto& c : cases) {
        check_error(c);
    }
}

TEST_CASE("json: comments and trailing commas are rejected", "[json]") {
    const std::vector<error_case> cases = {
        {"[1, // c\n 2]", 1, 5, "comments are not allowed"},
        {"/* c */ 1", 1, 1, "comments are not allowed"},
        {"1 // c", 1, 3, "comments are not allowed"},
        {"[1 / 2]", 1, 4, "expected ',' or ']' in array"},
        {"[1,2,]", 1, 5, "trailing comma in array"},
        {"[1,\n]", 1, 3, "trailing comma in array"},
        {"{\"a\":1,}", 1, 7, "trailing comma in object"},
        {"[,1]", 1, 2, "unexpected character ','"},
        {"{,}", 1, 2, "expected string key or '}' in object"},
        {"{1:2}", 1, 2, "expected string key or '}' in object"},
        {"{\"a\":1,2}", 1, 8, "expected string key in object"},
        {"{\"a\":1,,}", 1, 8, "expected string key in object"},
        {"[1,,2]", 1, 4, "unexpected character ','"},
    };
    for (const auto& c : cases) {
        check_error(c);
    }
}

TEST_CASE("json: invalid unicode escapes and lone surrogates", "[json]") {
    const std::vector<error_case> cases = {
        {R"("\u12G4")", 1, 2, "invalid \\u escape"},
        {R"("ab\u12")", 1, 4, "invalid \\u escape"},
        {R"("\u")", 1, 2, "invalid \\u escape"},
        {R"("\uD800")", 1, 2, "lone surrogate '\\uD800'"},
        {R"("\udc00")", 1, 2, "lone surrogate '\\udc00'"},
        {R"("x\uD83Dy")", 1, 3, "lone surrogate '\\uD83D'"},
        {R"("\uD800\u0041")", 1, 2, "lone surrogate '\\uD800'"},
        {R"("\uD800\uD800")", 1, 2, "lone surrogate '\\uD800'"},
        {R"("\uDE00\uD83D")", 1, 2, "lone surrogate '\\uDE00'"},
    };
    for (const auto& c : cases) {
        check_error(c);
    }
}

TEST_CASE("json: invalid UTF-8 and stray characters", "[json]") {
    const std::vector<error_case> cases = {
        {"\"a\xC3(\"", 1, 3, "invalid UTF-8"},           // truncated 2-byte sequence
        {"\"a\xC3", 1, 3, "invalid UTF-8"},              // truncated at end of input
        {"\"\xC0\x80\"", 1, 2, "invalid UTF-8"},         // overlong NUL
        {"\"\xE0\x80\xAF\"", 1, 2, "invalid UTF-8"},     // overlong '/'
        {"\"\xED\xA0\x80\"", 1, 2, "invalid UTF-8"},     // encoded surrogate
        {"\"\xF4\x90\x80\x80\"", 1, 2, "invalid UTF-8"}, // above U+10FFFF
        {"\"ok\x80\"", 1, 4, "invalid UTF-8"},           // stray continuation byte
        {"\"\xFF\"", 1, 2, "invalid UTF-8"},
        {"[\xFF]", 1, 2, "invalid UTF-8"},
        {"[\xC3\xA9]", 1, 2, "unexpected character U+00E9"},
        {"\xEF\xBB\xBF{}", 1, 1, "unexpected character U+FEFF"},
        {"[\x01]", 1, 2, "unexpected character U+0001"},
        {std::string("[\0]", 3), 1, 2, "unexpected character U+0000"},
        {std::string("\"a\0\"", 4), 1, 3, "control character in string"},
        {"\"\x1F\"", 1, 2, "control character in string"},
    };
    for (const auto& c : cases) {
        check_error(c);
    }
}

TEST_CASE("json: duplicate keys are rejected", "[json]") {
    check_error(
        {"{\n  \"a\": 1,\n  \"b\": {\"a\": 2},\n  \"a\": 3\n}", 4, 3, "duplicate key \"a\""});
    // escapes are decoded before comparison
    check_error({"{\"ab\": 1, \"a\\u0062\": 2}", 1, 11, "duplicate key \"ab\""});
    check_error({"{\"q\\\"\": 1, \"q\\\"\": 2}", 1, 12, "duplicate key \"q\\\"\""});
    // same key in different objects is fine
    CHECK_NOTHROW(json::parse("[{\"a\": 1}, {\"a\": 2}]"));

    // large objects (past the linear-scan threshold)
    std::string big = "{";
    for (int i = 0; i < 100; ++i) {
        big += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
    }
    CHECK(json::parse(big + "\"last\": 0}").size() == 101);
    const std::string dup = big + "\"k57\": 0}";
    check_error({dup, 1, dup.size() - 8, "duplicate key \"k57\""});
}

TEST_CASE("json: nesting limit is 256 levels", "[json]") {
    const auto nested = [](std::size_t depth) {
        return std::string(depth, '[') + std::string(depth, ']');
    };
    CHECK_NOTHROW(json::parse(nested(256)));
    check_error({nested(257), 1, 257, "nesting deeper than 256 levels"});
    check_error({nested(100000), 1, 257, "nesting deeper than 256 levels"});

    std::string objects;
    for (int i = 0; i < 256; ++i) {
        objects += "{\"a\":";
    }
    CHECK_NOTHROW(json::parse(objects + "1" + std::string(256, '}')));
    const std::string too_deep = "[" + objects + "1" + std::string(256, '}') + "]";
    check_error({too_deep, 1, 2 + 255 * 5, "nesting deeper than 256 levels"});
}

TEST_CASE("json: pretty dump layout", "[json]") {
    const json::value v =
        json::parse(R"({"a":[1,2,3],"b":{},"c":[],"d":[{"x":null},"s"],"e":{"f":true,"g":[[]]}})");
    const std::string expected = "{\n"
                                 "  \"a\": [1, 2, 3],\n"
                                 "  \"b\": {},\n"
                                 "  \"c\": [],\n"
                                 "  \"d\": [\n"
                                 "    {\n"
                                 "      \"x\": null\n"
                                 "    },\n"
                                 "    \"s\"\n"
                                 "  ],\n"
                                 "  \"e\": {\n"
                                 "    \"f\": true,\n"
                                 "    \"g\": [\n"
                                 "      []\n"
                                 "    ]\n"
                                 "  }\n"
                                 "}";
    CHECK(json::dump(v) == expected);
    CHECK(json::dump(v, 2) == expected);

    CHECK(json::dump(json::parse("{\"a\":[1,{}]}"), 4) == "{\n    \"a\": [\n        1,\n"
                                                          "        {}\n    ]\n}");
    CHECK(json::dump(json::parse("{\"a\":[1,2]}"), 0) == "{\n\"a\": [1, 2]\n}");
    CHECK(json::dump(json::parse("[]")) == "[]");
    CHECK(json::dump(json::parse("{}")) == "{}");
    CHECK(json::dump(json::parse("[null,true,\"x\"]")) == "[null, true, \"x\"]");
}

TEST_CASE("json: one-line scalar arrays respect the 100-column limit", "[json]") {
    // 10 eight-digit numbers: 1 + 10*8 + 9*2 + 1 = 100 columns, fits.
    const json::value fits = digits_array(std::vector<std::size_t>(10, 8));
    const std::string one_line = json::dump(fits);
    CHECK(one_line.size() == 100);
    CHECK(one_line.find('\n') == std::string::npos);

    // One more digit: 101 columns, one element per line.
    std::vector<std::size_t> lengths(10, 8);
    lengths[3] = 9;
    const std::string wrapped = json::dump(digits_array(lengths));
    CHECK(wrapped.rfind("[\n  12345678,\n  12345678,\n", 0) == 0);
    CHECK(wrapped.substr(wrapped.size() - 13) == "\n  12345678\n]");

    // Inside an object the key prefix `  "a": ` (7 columns) counts, and so does the comma that
    // follows a non-last member: a 93-column array fits only as the last member.
    std::vector<std::size_t> lengths93(7, 10);
    lengths93.push_back(7);
    json::value obj = json::value::object();
    obj.set("b", json::value::number(1));
    obj.set("a", digits_array(lengths93));
    const std::string last = json::dump(obj);
    CHECK(last.find("\"a\": [1234567891, ") != std::string::npos);
    CHECK(json::dump(json::value::array()).size() == 2);
    std::size_t longest = 0;
    std::size_t start = 0;
    while (start <= last.size()) {
        std::size_t end = last.find('\n', start);
        if (end == std::string::npos) {
            end = last.size();
        }
        longest = std::max(longest, end - start);
        start = end + 1;
    }
    CHECK(longest == 100);

    json::value obj2 = json::value::object();
    obj2.set("a", digits_array(lengths93));
    obj2.set("b", json::value::number(1));
    const std::string not_last = json::dump(obj2);
    CHECK(not_last.find("\"a\": [\n    1234567891,\n") != std::string::npos);

    // Arrays holding containers are never one-line.
    CHECK(json::dump(json::parse("[[1], 2]")) == "[\n  [1],\n  2\n]");
}

TEST_CASE("json: compact dump", "[json]") {
    const json::value v = json::parse(
        "{ \"a\" : [ 1 , 2 , { } , [ ] ] ,\n \"b\" : \"x\\\"y\" , \"c\" : { \"d\" : null } }");
    CHECK(json::dump(v, -1) == R"({"a":[1,2,{},[]],"b":"x\"y","c":{"d":null}})");
    CHECK(json::dump(json::parse("[true,false]"), -5) == "[true,false]");
}

TEST_CASE("json: string escaping in dump", "[json]") {
    const std::string s = std::string("q\"b\\s/n\nt\tr\rb\bf\fz") + '\0' + "\x01\x1F\x7F" +
                          "\xC3\xA9\xF0\x9F\x98\x80";
    const std::string out = json::dump(json::value::string(s), -1);
    CHECK(out == "\"q\\\"b\\\\s/n\\nt\\tr\\rb\\bf\\fz\\u0000\\u0001\\u001f\x7F"
                 "\xC3\xA9\xF0\x9F\x98\x80\"");
    CHECK(json::parse(out).as_string() == s);
    CHECK_THROWS_AS(json::value::string("\xC3"), std::invalid_argument);
    CHECK_THROWS_AS(json::value::object().set("\xFF", json::value()), std::invalid_argument);
}

TEST_CASE("json: dump/parse round trip", "[json]") {
    const std::string text = R"({
  "name": "attention \"head\" \u00e9\ud83d\ude00",
  "version": 3,
  "params": {
    "scale": 0.125,
    "eps": 1E-12,
    "huge": 123456789012345678901234567890,
    "neg": -0,
    "flags": [true, false, null],
    "tabs\t\n": "line1\nline2\u0001"
  },
  "matrix": [[1, 2.50, -3e+2], [], [{"k": []}, {}]],
  "empty": {},
  "list": ["a", "b/c", "~"]
})";
    const json::value v = json::parse(text);
    for (int indent : {-1, 0, 1, 2, 4, 8}) {
        INFO("indent " << indent);
        const std::string out = json::dump(v, indent);
        const json::value back = json::parse(out);
        CHECK(back == v);
        CHECK(json::dump(back, indent) == out);
    }
    CHECK(v.find("params")->find("eps")->raw_number() == "1E-12");
    CHECK(json::dump(v).find("2.50") != std::string::npos);

    // Built values round trip too.
    json::value built = json::value::object();
    built.set("n", json::value::number(-5));
    built.set("s", json::value::string("\x02 ok"));
    json::value& arr = built.set("a", json::value::array());
    arr.push_back(json::value::boolean(true));
    arr.push_back(json::value::null_value());
    arr.push_back(json::value::object()).set("x", json::value::number_raw("1.0e-3"));
    CHECK(json::parse(json::dump(built)) == built);
    CHECK(json::parse(json::dump(built, -1)) == built);
    CHECK(json::dump(built, -1) == R"({"n":-5,"s":"\u0002 ok","a":[true,null,{"x":1.0e-3}]})");
}

TEST_CASE("json: equality is structural", "[json]") {
    CHECK(json::parse("{\"a\": 1, \"b\": [2]}") == json::parse("{\"b\":[2],\"a\":1}"));
    CHECK_FALSE(json::parse("{\"a\": 1}") == json::parse("{\"a\": 1, \"b\": 2}"));
    CHECK_FALSE(json::parse("{\"a\": 1, \"c\": 2}") == json::parse("{\"a\": 1, \"b\": 2}"));
    CHECK_FALSE(json::parse("[1, 2]") == json::parse("[2, 1]"));
    CHECK_FALSE(json::parse("null") == json::parse("false"));
    CHECK(json::parse("\n\n  [1]") == json::parse("[1]")); // locations ignored
    CHECK(json::value() == json::value::null_value());
    CHECK(json::parse("\"\\u0041\"") == json::value::string("A"));
    CHECK(json::parse("true") != json::parse("false"));
}

TEST_CASE("json: set replaces in place", "[json]") {
    json::value o = json::value::object();
    o.set("a", json::value::number(1));
    o.set("b", json::value::number(2));
    o.set("c", json::value::number(3));
    json::value& b = o.set("b", json::value::string("two"));
    CHECK(b.as_string() == "two");
    REQUIRE(o.size() == 3);
    CHECK(o.members()[0].first == "a");
    CHECK(o.members()[1].first == "b");
    CHECK(o.members()[1].second.as_string() == "two");
    CHECK(o.members()[2].first == "c");
    CHECK(json::dump(o, -1) == R"({"a":1,"b":"two","c":3})");

    json::value* c = o.find("c");
    REQUIRE(c != nullptr);
    *c = json::value::boolean(false);
    CHECK_FALSE(o.find("c")->as_bool());

    json::value parsed = json::parse("{\"x\": 1, \"y\": 2}");
    parsed.set("x", json::value::array());
    CHECK(json::dump(parsed, -1) == R"({"x":[],"y":2})");
}

TEST_CASE("json: wrong-kind access is a logic_error", "[json]") {
    const json::value n = json::parse("1");
    CHECK_THROWS_AS(n.as_bool(), std::logic_error);
    CHECK_THROWS_AS(n.as_string(), std::logic_error);
    CHECK_THROWS_AS(n.size(), std::logic_error);
    CHECK_THROWS_AS(n.elements(), std::logic_error);
    CHECK_THROWS_AS(n.members(), std::logic_error);
    CHECK_THROWS_AS(n.find("a"), std::logic_error);
    CHECK_THROWS_AS(json::value::string("s").raw_number(), std::logic_error);
    CHECK_THROWS_AS(json::value::object().push_back(json::value()), std::logic_error);
    CHECK_THROWS_AS(json::value::array().set("k", json::value()), std::logic_error);
    const json::value a = json::parse("[1]");
    CHECK_THROWS_AS(a[1], std::out_of_range);
    CHECK_THROWS_AS(a.find("x"), std::logic_error);
    CHECK_THROWS_WITH(n.as_string(), "json: value is number, expected string");
}

TEST_CASE("json: parse_error formatting", "[json]") {
    const json::parse_error e(json::location{3, 14}, "boom");
    CHECK(std::string(e.what()) == "3:14: boom");
    CHECK(e.message() == "boom");
    CHECK(e.where() == json::location{3, 14});
    CHECK(json::to_string(json::location{2, 5}) == "2:5");
    CHECK(json::to_string(json::location{}) == "?");
}

TEST_CASE("json: pointer_escape", "[json]") {
    CHECK(json::pointer_escape("") == "");
    CHECK(json::pointer_escape("plain") == "plain");
    CHECK(json::pointer_escape("a/b") == "a~1b");
    CHECK(json::pointer_escape("a~b") == "a~0b");
    CHECK(json::pointer_escape("~1") == "~01");
    CHECK(json::pointer_escape("/~/") == "~1~0~1");
}
