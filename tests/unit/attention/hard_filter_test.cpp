// The interval filter of the exact hard path (attention::hard_forward_exact) on random near-tie
// data. Every case is a one-layer model whose head scores key j by a dot product q . k_j with
// exact rational data chosen so that the scores take prescribed values: a maximum M attained
// at one or several positions, and competitors that are exactly tied with it, one double ulp
// of M below it, 2^-60 |M| below it, or far below. The filtered argmax must always equal the
// exact leftmost argmax computed here by a plain loop (and, for average-hard models, the
// filtered maximal set the exact maximal set); the filter must fall back to exact rationals on
// every exact tie between scores that are not exact doubles, since no double enclosure of such
// a score is a point and overlapping enclosures prove nothing; and it must decide alone when
// the maximum is unique and every competitor is far below. Seeds are fixed and printed on
// failure; the number of fallbacks per kind of data is printed (a Catch2 warning).
#include "attention/hard.hpp"
#include "attention/hard_exact.hpp"
#include "numeric/limits.hpp"
#include "test_models.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace attnprop;
using numeric::integer;
using numeric::rational;

namespace {

const numeric::context ctx{128};

/// How close the competitors of the maximum are.
enum class closeness { exact_tie, one_ulp, rel_2_60, far };
const char* to_string(closeness c) {
    switch (c) {
    case closeness::exact_tie: return "exact tie";
    case closeness::one_ulp: return "one ulp";
    case closeness::rel_2_60: return "2^-60 relative";
    case closeness::far: return "far";
    }
    return "?";
}

class draw {
public:
    explicit draw(std::uint64_t seed) : g_(seed) {}
    long between(long lo, long hi) {
        return lo + static_cast<long>(g_() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    bool coin() { return (g_() & 1) != 0; }
    rational magnitude(int bits) {
        const int b = static_cast<int>(between(1, bits));
        return rational(static_cast<long>((g_() & ((std::uint64_t(1) << (b - 1)) - 1)) |
                                          (std::uint64_t(1) << (b - 1))));
    }
    /// A rational with an odd denominator > 1: never dyadic, so never an exact double.
    rational non_dyadic() {
        rational v = magnitude(30) / (2 * magnitude(30) + 1);
        return coin() ? rational(-v) : v;
    }
    /// An exact double (a dyadic rational with a 20-bit numerator).
    rational dyadic() {
        rational v = magnitude(20) / rational(integer(1) << static_cast<unsigned>(between(0, 20)));
        return coin() ? rational(-v) : v;
    }

private:
    std::mt19937_64 g_;
};

/// 2^e with 2^e <= |q| < 2^(e+1) (q != 0).
rational binade(const rational& q) {
    rational a = q < 0 ? rational(-q) : q, p(1);
    while (p > a) p /= 2;
    while (p * 2 <= a) p *= 2;
    return p;
}

struct near_tie_case {
    bool one_dimensional = false; ///< q = (1, 0): the score is the key's first coordinate
    rational a, b;                ///< the query (a, b)
    std::vector<rational> scores;
    std::vector<rational> k1, k2; ///< key j = (k1[j], k2[j]), a k1 + b k2 = scores[j]
};

std::string json(const rational& q) { return "\"" + numeric::to_exact_string(q) + "\""; }

/// The model: y_j^(0) = (k1_j, k2_j, j) from a positional table (tokens embed to 0); one head
/// with the constant query (a, b) (a bias), keys K = the first two coordinates and value the
/// third; F writes the head output into coordinate 1, which is therefore the selected position
/// (unique-hard) or the mean of the maximal positions (average-hard).
std::string model_text(const near_tie_case& c, const std::string& attention) {
    std::string rows;
    for (std::size_t j = 0; j < c.scores.size(); ++j) {
        if (j) rows += ", ";
        rows += "[" + json(c.k1[j]) + ", " + json(c.k2[j]) + ", " + std::to_string(j + 1) + "]";
    }
    return R"({"format": "attnprop-model", "version": 1, "name": "near-tie", "attention": ")" +
           attention + R"(", "alphabet": ["0", "1"], "eos": "$", "d": 3,
      "token_embedding": {"0": [0, 0, 0], "1": [0, 0, 0], "$": [0, 0, 0]},
      "positional": {"kind": "table", "rows": [)" +
           rows + R"(]}, "input": "add",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 0, 0], [0, 0, 0]], "q_bias": [)" +
           json(c.a) + ", " + json(c.b) + R"(], "K": [[1, 0, 0], [0, 1, 0]]},
                             "value": {"kind": "linear", "V": [[0, 0, 1]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0, 0], "t": 0}})";
}

/// Scores of n positions: the maximum M at `top` >= 1 random positions (>= 2 for an exact
/// tie), competitors at M - delta (delta per closeness) and the rest far below; keys that
/// realise them exactly for a random query.
near_tie_case make_case(draw& d, closeness kind, bool dyadic_max) {
    near_tie_case c;
    const auto n = static_cast<std::size_t>(d.between(2, 24));
    c.one_dimensional = dyadic_max || d.coin();
    const rational M = dyadic_max ? d.dyadic() : d.non_dyadic();
    const rational unit = binade(M);
    rational delta;
    switch (kind) {
    case closeness::exact_tie: delta = 0; break;
    case closeness::one_ulp: delta = unit / rational(integer(1) << 52); break;
    case closeness::rel_2_60: delta = unit / rational(integer(1) << 60); break;
    case closeness::far: delta = unit / rational(integer(1) << static_cast<unsigned>(d.between(1, 10))); break;
    }
    const rational far_below = M - unit * (1 + d.between(0, 3));
    // Roles: 0 the maximum M, 1 a competitor at M - delta, 2 far below. Position i0 holds a
    // maximum and i1 a competitor; the others are drawn, half of the cases without further
    // maxima (then the maximum is unique unless delta = 0).
    const long roles = d.coin() ? 2 : 1;
    std::vector<int> role(n);
    for (auto& r : role) r = static_cast<int>(d.between(2 - roles, 2));
    const auto i0 = static_cast<std::size_t>(d.between(0, static_cast<long>(n) - 1));
    const auto i1 = (i0 + static_cast<std::size_t>(d.between(1, static_cast<long>(n) - 1))) % n;
    role[i0] = 0;
    role[i1] = 1;
    for (int r : role) c.scores.push_back(r == 0 ? M : r == 1 ? rational(M - delta) : far_below);
    if (c.one_dimensional) {
        c.a = 1;
        c.b = 0;
        for (const auto& s : c.scores) {
            c.k1.push_back(s);
            c.k2.push_back(d.non_dyadic()); // ignored by the score (b = 0)
        }
    } else {
        c.a = d.non_dyadic();
        c.b = d.non_dyadic();
        for (const auto& s : c.scores) {
            // a k1 of the size of the score, so that no cancellation hides a far gap.
            const rational k1 = s / c.a * rational(d.between(-8, 8), 4);
            c.k1.push_back(k1);
            c.k2.push_back((s - c.a * k1) / c.b);
        }
    }
    return c;
}

struct tally {
    int cases = 0, fell_back = 0;
};

} // namespace

TEST_CASE("the interval filter decides near-ties like exact arithmetic", "[attention][hard][filter]") {
    std::map<std::string, tally> counts;
    int exact_tie_cases = 0, exact_tie_fallbacks = 0, far_cases = 0, far_filtered = 0;
    for (const std::string attention : {"hard", "average-hard"}) {
        for (closeness kind : {closeness::exact_tie, closeness::one_ulp, closeness::rel_2_60,
                               closeness::far}) {
            for (int it = 0; it < 60; ++it) {
                const std::uint64_t seed = 0xf1170000u + 1000u * static_cast<unsigned>(kind) +
                                           static_cast<unsigned>(it);
                draw d(seed);
                const bool dyadic_max = it % 4 == 0;
                const near_tie_case c = make_case(d, kind, dyadic_max);
                const std::size_t n = c.scores.size();
                // The reference: plain loops over the exact scores.
                rational best = c.scores[0];
                for (const auto& s : c.scores)
                    if (s > best) best = s;
                INFO("seed " << seed << ", " << attention << ", " << to_string(kind) << ", n = " << n
                              << (c.one_dimensional ? ", scores = keys" : ", 2-d keys")
                              << ", max " << numeric::to_exact_string(best));
                std::vector<std::size_t> maximal;
                for (std::size_t j = 0; j < n; ++j)
                    if (c.scores[j] == best) maximal.push_back(j);
                rational expected;
                if (attention == "hard") {
                    expected = rational(static_cast<long>(maximal.front() + 1));
                } else {
                    for (std::size_t j : maximal) expected += rational(static_cast<long>(j + 1));
                    expected /= rational(static_cast<long>(maximal.size()));
                }
                const auto m = test::inline_model(model_text(c, attention));
                const auto x = model::parse_input(m, std::string(n - 1, '0'));
                const auto r = attention::hard_forward_exact(m, x, ctx, true);
                REQUIRE(r.y[0] == expected);
                REQUIRE(r.trace);
                REQUIRE(r.trace->choice[0][n - 1][0] == maximal.front());
                if (attention == "average-hard") REQUIRE(r.trace->ties[0][n - 1][0] == maximal);
                // The unfiltered exact kernel agrees.
                REQUIRE(attention::hard_forward(m, x, ctx).y == r.y);

                // Every row has the same query, so every row needs the same decision.
                const bool fell_back = r.stats.rows_exact > 0;
                auto& t = counts[attention + ", " + to_string(kind) +
                                 (dyadic_max ? ", dyadic max" : "")];
                ++t.cases;
                t.fell_back += fell_back;
                const bool point_scores = c.one_dimensional && dyadic_max;
                if (kind == closeness::exact_tie && maximal.size() > 1 && !point_scores) {
                    ++exact_tie_cases;
                    exact_tie_fallbacks += fell_back;
                    REQUIRE(fell_back);
                }
                if (kind == closeness::far && maximal.size() == 1) {
                    ++far_cases;
                    far_filtered += !fell_back;
                    REQUIRE(r.stats.rows_filtered > 0);
                    REQUIRE_FALSE(fell_back);
                }
            }
        }
    }
    std::string summary;
    for (const auto& [what, t] : counts)
        summary += "\n  " + what + ": " + std::to_string(t.fell_back) + " of " +
                   std::to_string(t.cases) + " cases fell back to exact";
    WARN("fallbacks of the filter to exact rationals:" << summary);
    CAPTURE(exact_tie_cases, exact_tie_fallbacks, far_cases, far_filtered);
    // The data reach both branches: exact ties that must fall back, far maxima that must not.
    REQUIRE(exact_tie_cases >= 20);
    REQUIRE(far_cases >= 20);
    REQUIRE(exact_tie_fallbacks == exact_tie_cases);
    REQUIRE(far_filtered == far_cases);
    // Scores 2^-60 apart that are not exact doubles cannot be separated by a double filter.
    for (const char* a : {"hard", "average-hard"}) {
        const auto& close = counts.at(std::string(a) + ", 2^-60 relative");
        REQUIRE(close.fell_back == close.cases);
    }
}

TEST_CASE("the exact path walks 25 000 layers without recursing once per layer",
          "[attention][hard][filter]") {
    // Each layer copies x_1 (every key ties; the leftmost wins) into y. The exact values of
    // the last layer used to be computed by a recursion one level per layer, which overflowed
    // the stack (SIGSEGV) on this model.
    std::string text = R"({"format":"attnprop-model","version":1,"name":"deep","attention":"hard",
        "alphabet":["0","1"],"eos":"$","d":1,"token_embedding":{"0":[0],"1":[1],"$":[0]},
        "positional":{"kind":"formula","dim":1,"coordinates":[0]},"input":"add","layers":[)";
    const std::string layer = R"({"heads":[{"score":{"kind":"dot","Q":[[0]],"K":[[1]]},)"
                              R"("value":{"kind":"linear","V":[[1]]}}],"update":{"kind":"affine","W":[[0,1]]}})";
    constexpr int L = 25000;
    for (int k = 0; k < L; ++k) text += (k ? "," : "") + layer;
    text += R"(],"readout":{"kind":"threshold","w":[1],"t":"1/2"}})";
    struct reset_guard {
        ~reset_guard() { numeric::reset_limits(); }
    } guard;
    numeric::set_limit(numeric::limit::layers, L);
    const model::model<rational> m = model::parse_model(text, "deep.json");
    for (const char* input : {"1011", "0111"}) {
        const model::input_sequence x = model::parse_input(m, input);
        const auto out = attention::hard_forward_exact(m, x, ctx);
        INFO(input);
        REQUIRE(out.y == model::vec<rational>{rational(input[0] == '1' ? 1 : 0)});
        // Every layer of the last position is exact; the trace holds them all.
        const auto traced = attention::hard_forward_exact(m, x, ctx, true);
        REQUIRE(traced.trace->y.size() == static_cast<std::size_t>(L) + 1);
        REQUIRE(traced.y == out.y);
    }
}
