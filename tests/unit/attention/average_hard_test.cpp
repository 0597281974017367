// Average-hard attention (weight 1/t on each of the t keys attaining the maximal score): the
// model file kind, every kernel against exact closed forms, the tie rule that separates it from
// unique-hard attention (MAJORITY), traces, and the commands that refuse it.
#include "cli/evaluate.hpp"
#include "hard_limit/restriction.hpp"
#include "attention/hard_exact.hpp"
#include "model/model_file.hpp"
#include "cli/eval_output.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace attnprop;
using numeric::rational;

namespace {

/// MAJORITY-style: every key scores 1 (a dot product, not the constant-score shortcut), the
/// value is [x_j = 1], F = (b, 1) and the readout accepts iff b > 1/2. Average-hard: b is the
/// fraction of ones among the n positions; unique-hard: b = x_1 (the leftmost key).
std::string majority(const std::string& attention) {
    return R"({"format": "attnprop-model", "version": 1, "name": "majority-)" + attention +
           R"(", "attention": ")" + attention + R"(", "alphabet": ["0", "1"], "eos": "$", "d": 2,
      "token_embedding": {"0": [0], "1": [1], "$": [0]},
      "positional": {"kind": "formula", "dim": 1, "coordinates": [1]}, "input": "concat",
      "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0, 1]], "K": [[0, 1]], "beta": 7},
                             "value": {"kind": "linear", "V": [[1, 0]]}}],
                  "update": {"kind": "affine", "W": [[0, 0, 1], [0, 1, 0]]}}],
      "readout": {"kind": "threshold", "w": [1, 0], "t": "1/2"}})";
}

/// Scores x_j: the keys holding a 1 tie at the top.
std::string ones_tie(const std::string& attention) {
    std::string s = majority(attention);
    s.replace(s.find(R"("K": [[0, 1]])"), 13, R"("K": [[1, 0]])");
    return s;
}

model::model<rational> parse(const std::string& text) { return model::parse_model(text, "m.json"); }

rational count_ones(const std::string& w) {
    return rational(static_cast<long>(std::count(w.begin(), w.end(), '1')));
}

} // namespace

TEST_CASE("average-hard parses, writes back and is a hard kind", "[attention][average]") {
    auto m = parse(majority("average-hard"));
    REQUIRE(m.attention == model::attention_kind::average_hard);
    REQUIRE(model::selects_maximum(m.attention));
    REQUIRE(std::string(model::to_string(m.attention)) == "average-hard");
    REQUIRE(model::write_model(m).find(R"("attention": "average-hard")") != std::string::npos);
    REQUIRE(model::exact_blockers(m).empty());
}

TEST_CASE("MAJORITY: average-hard and unique-hard differ exactly on ties", "[attention][average]") {
    const auto avg = parse(majority("average-hard"));
    const auto uni = parse(majority("hard"));
    const numeric::context ctx{64};
    for (std::string w : {"", "1", "0", "110", "111", "100", "0111", "10000000", "01111111111"}) {
        INFO("input '" << w << "'");
        const auto x = model::parse_input(avg, w);
        const rational n(static_cast<long>(x.size()));
        // Average-hard: the mean of [x_j = 1] over all n keys.
        const auto ra = attention::hard_forward_exact(avg, x, ctx);
        REQUIRE(ra.y[0] == count_ones(w) / n);
        REQUIRE(attention::hard_forward<rational>(avg, x, ctx).y[0] == ra.y[0]);
        // Unique-hard: the leftmost key, x_1 (eos when the input is empty).
        const auto ru = attention::hard_forward_exact(uni, x, ctx);
        REQUIRE(ru.y[0] == rational(!w.empty() && w[0] == '1' ? 1 : 0));
        // The readouts differ exactly where x_1 and the majority disagree.
        const bool avg_accepts = count_ones(w) / n > rational(1, 2);
        REQUIRE((attention::recognize(avg.out, ra.y, ctx) == attention::verdict::accept) == avg_accepts);
    }
    // Every scalar kind computes the same exact mean (these values are dyadic or exact points).
    const auto x = model::parse_input(avg, "1101000");
    auto rd = attention::hard_forward(model::to_scalar<double>(avg, ctx), x, ctx);
    REQUIRE(rd.y[0] == 3.0 / 8.0);
    auto rb = attention::hard_forward(model::to_scalar<numeric::arb_ball>(avg, ctx), x, ctx);
    REQUIRE(!rb.undecided);
    REQUIRE(numeric::contains(rb.y[0], rational(3, 8)));
}

TEST_CASE("average-hard ties: the set of maximal keys, traced", "[attention][average]") {
    const auto m = parse(ones_tie("average-hard"));
    const numeric::context ctx{64};
    const auto x = model::parse_input(m, "01101");
    auto r = attention::hard_forward_exact(m, x, ctx, true);
    REQUIRE(r.trace);
    REQUIRE(r.trace->ties.size() == 1);
    // Row n attends to the ones at positions 2, 3, 5 (0-based 1, 2, 4): value mean 1.
    REQUIRE(r.trace->ties[0][5][0] == std::vector<std::size_t>{1, 2, 4});
    REQUIRE(r.trace->choice[0][5][0] == 1);
    REQUIRE(r.y[0] == 1);
    auto ref = attention::hard_forward<rational>(m, x, ctx, true);
    REQUIRE(ref.trace->ties == r.trace->ties);
    REQUIRE(ref.trace->choice == r.trace->choice);
    // No ones: every key ties at 0.
    auto z = attention::hard_forward_exact(m, model::parse_input(m, "000"), ctx, true);
    REQUIRE(z.trace->ties[0][3][0] == std::vector<std::size_t>{0, 1, 2, 3});
    // eval prints the set.
    analysis::eval_options o;
    o.trace = true;
    const auto ev = analysis::evaluate(m, x, o);
    const std::string text = report::eval_to_text(ev);
    INFO(text);
    REQUIRE(text.find("h1->{2,3,5}") != std::string::npos);
    REQUIRE(text.find("average-hard attention") != std::string::npos);
    REQUIRE(json::dump(report::eval_to_json(ev)).find("\"ties\"") != std::string::npos);
}

TEST_CASE("maximal_positions decides exact ties and leaves enclosure overlaps undecided",
          "[attention][average]") {
    const numeric::context ctx{64};
    auto r = attention::maximal_positions(std::vector<rational>{1, 3, rational(6, 2), 2, 3});
    REQUIRE(r.decided);
    REQUIRE(r.positions == std::vector<std::size_t>{1, 2, 4});
    using numeric::arb_ball;
    const arb_ball third = arb_ball::from_rational(rational(1, 3), ctx);
    // Two enclosures of 1/3 overlap: a tie cannot be proved by them.
    auto u = attention::maximal_positions(std::vector<arb_ball>{third, third + third - third,
                                                                 arb_ball::from_rational(0, ctx)});
    REQUIRE(!u.decided);
    REQUIRE(u.positions == std::vector<std::size_t>{0, 1});
    // Exact points that are equal are a proof.
    const arb_ball one = arb_ball::from_rational(1, ctx);
    auto e = attention::maximal_positions(std::vector<arb_ball>{one, one, third});
    REQUIRE(e.decided);
    REQUIRE(e.positions == std::vector<std::size_t>{0, 1});
}

TEST_CASE("restrict and the restriction refuse average-hard models; hard ignores a positive beta",
          "[attention][average]") {
    const auto m = parse(majority("average-hard"));
    analysis::restriction_options o;
    REQUIRE_THROWS_WITH(analysis::build_restriction(m, 8, o), Catch::Contains("unique-hard"));
    // beta 7 changes nothing for either hard kind: the same output as without it.
    std::string no_beta = majority("average-hard");
    no_beta.replace(no_beta.find(R"(, "beta": 7)"), 11, "");
    const auto mb = parse(no_beta);
    const numeric::context ctx{64};
    const auto x = model::parse_input(m, "1011");
    REQUIRE(attention::hard_forward_exact(m, x, ctx).y == attention::hard_forward_exact(mb, x, ctx).y);
    // A hard kind refuses a beta that is not positive at the length it is evaluated at.
    std::string neg = majority("average-hard");
    neg.replace(neg.find(R"("beta": 7)"), 9, R"("beta": "3 - n")");
    REQUIRE_THROWS_WITH(model::check_length(parse(neg), 3), Catch::Contains("not positive"));
}
