// Margins over every input (soft_hard/all_margins.hpp) against exhaustive enumeration: on
// random one-layer hard and average-hard models and small n, the smallest margin of the output
// row over the whole cube is the one found without enumerating (and its witness attains it),
// a tie between keys of different values is reported exactly when one occurs, the smallest
// readout slack matches, and the β certified for every input certifies each input's own bound
// and makes the soft counterpart agree with the hard model on every input. Plus the bundled
// hard-first-one-position (margin 1/(2n), the threshold at n/2). Every case prints its seed.
#include "soft_hard/all_margins.hpp"
#include "soft_influence/norms.hpp"
#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "gen/generators.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <sstream>

using namespace attnprop;
using analysis::arb_ball;
using numeric::rational;

namespace {

const numeric::context ctx{128};

std::string show(const model::model<rational>& m) {
    std::ostringstream os;
    model::showValue(m, os);
    return os.str();
}

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

/// |w·y - t|, |map(y)_0| or half the top logit gap, exactly.
rational slack_of(const model::model<rational>& m, const model::vec<rational>& y) {
    using rk = model::readout<rational>::kind;
    if (m.out.type == rk::threshold) {
        rational v = -m.out.t_exact;
        for (std::size_t c = 0; c < y.size(); ++c) v += m.out.w_exact[c] * y[c];
        return v < 0 ? -v : v;
    }
    const rational v = model::evaluate(*m.out.fn, y, ctx).front();
    return v < 0 ? -v : v;
}

model::input_sequence decode(const model::model<rational>& m, std::size_t code, long n) {
    model::input_sequence x;
    for (long j = 0; j + 1 < n; ++j) {
        x.push_back(static_cast<int>(code % m.sigma.symbols.size()));
        code /= m.sigma.symbols.size();
    }
    x.push_back(m.sigma.eos_index());
    return x;
}

} // namespace

TEST_CASE("every-input margins equal the enumerated minimum (random one-layer models)", "[all_margins]") {
    const std::uint64_t seed = 20260201;
    gen::hard_bounds hb;
    hb.max_layers = 1;
    hb.max_heads = 2;
    hb.max_dim = 3;
    hb.max_alphabet = 3;
    rc::Random random(seed);
    const auto g = gen::hard_model(hb);
    std::size_t compared = 0, with_beta = 0, agreed = 0;
    for (int k = 0; k < 60; ++k) {
        rc::Random r = random.split();
        auto m = g(r, (k % 4 + 1) * rc::kNominalSize / 4).value();
        if (k % 2 == 1) m.attention = model::attention_kind::average_hard;
        for (long n : {2L, 4L, 6L}) {
            std::size_t cube = 1;
            for (long j = 0; j + 1 < n; ++j) cube *= m.sigma.symbols.size();
            if (cube > 300) continue;
            analysis::every_input_margins e;
            try {
                e = analysis::every_input_margins_at(m, n, ctx);
            } catch (const numeric::undefined_error&) {
                continue; // a value of the model does not exist at this n
            }
            INFO("seed " << seed << " model " << k << " n = " << n << "\n" << show(m));
            REQUIRE(e.applies);
            const bool unique = m.attention == model::attention_kind::hard;
            const std::size_t H = m.layers.front().heads.size();
            std::vector<std::optional<analysis::surd>> least(H);
            std::vector<bool> tie(H, false);
            std::optional<rational> low;
            bool single_valued = H == 1;
            std::vector<analysis::gap_pass> passes;
            std::vector<model::input_sequence> xs;
            for (std::size_t code = 0; code < cube; ++code) {
                const auto x = decode(m, code, n);
                analysis::gap_pass p;
                try {
                    p = analysis::score_gaps(m, x);
                } catch (const numeric::undefined_error&) {
                    continue;
                }
                for (std::size_t h = 0; h < H; ++h) {
                    const auto& row = p.layers[0].heads[h].rows.back();
                    if (row.margin && (!least[h] || analysis::compare(*row.margin, *least[h]) < 0)) least[h] = row.margin;
                    if (row.spread_in_sq > 0) tie[h] = true;
                }
                const rational s = slack_of(m, p.output);
                if (!low || s < *low) low = s;
                passes.push_back(std::move(p));
                xs.push_back(x);
            }
            for (std::size_t h = 0; h < H; ++h) {
                const auto& hm = e.heads[h];
                CHECK(least[h].has_value() == hm.gamma.has_value());
                if (least[h] && hm.gamma) {
                    if (hm.exact) CHECK(analysis::compare(*least[h], *hm.gamma) == 0);
                    else CHECK(analysis::compare(*hm.gamma, *least[h]) <= 0);
                    // The witness attains the margin.
                    const auto w = analysis::score_gaps(m, model::parse_input(m, hm.witness->input));
                    const auto& wr = w.layers[0].heads[h].rows.back();
                    REQUIRE(wr.margin);
                    if (hm.exact) CHECK(analysis::compare(*wr.margin, *hm.gamma) == 0);
                }
                CHECK(tie[h] == hm.tie.has_value());
                if (hm.tie) {
                    const auto w = analysis::score_gaps(m, model::parse_input(m, hm.tie->input));
                    CHECK(w.layers[0].heads[h].rows.back().spread_in_sq > 0);
                }
                single_valued = single_valued && (unique || !hm.tie);
            }
            if (single_valued && low) {
                CHECK(e.slack_exact);
                CHECK(e.slack_q == low);
            }
            ++compared;
            // The β certified for every input certifies each input's own bound, and the soft
            // counterpart agrees with the hard model on every input there.
            if (e.beta_every) {
                ++with_beta;
                const model::expr beta = model::expr::parse(numeric::to_exact_string(*numeric::exact_value(*e.beta_every)));
                const auto soft = analysis::soft_counterpart(m, beta);
                const auto b = analysis::betas_at(soft, n, ctx);
                const auto ms = model::to_scalar<arb_ball>(soft, ctx);
                for (std::size_t t = 0; t < passes.size(); ++t) {
                    const auto data = analysis::make_bound_data(m, passes[t], ctx);
                    CHECK(analysis::propagate(data, b, ctx).readout_certified);
                    if (m.out.type == model::readout<rational>::kind::softmax) continue;
                    const auto hard = attention::recognize(m.out, passes[t].output, ctx);
                    model::vec<arb_ball> y;
                    try {
                        y = attention::soft_forward(ms, xs[t], ctx).y;
                    } catch (const numeric::undefined_error&) {
                        continue; // no value in balls (a map whose enclosure is not finite)
                    }
                    const auto said = attention::recognize(ms.out, y, ctx);
                    INFO("beta " << numeric::to_display_string(*e.beta_every, 10) << " input " << t << " y " << numeric::to_display_string(y.front(), 30));
                    // Balls cannot decide a table or step readout on a value that is not an
                    // exact point: undecided is no disagreement.
                    CHECK((said == hard || said == attention::verdict::undecided));
                    if (said == hard) ++agreed;
                }
                CHECK(analysis::certifies_every_input(e, m, beta, false, ctx));
            }
        }
    }
    CHECK(compared >= 60);
    CHECK(with_beta >= 5);
    CHECK(agreed >= 50);
}

TEST_CASE("every-input margins of hard-first-one-position", "[all_margins]") {
    const auto m = bundled("hard-first-one-position");
    const auto e = analysis::every_input_margins_at(m, 1000, ctx);
    REQUIRE(e.applies);
    REQUIRE(e.gamma);
    CHECK(e.gamma->to_string() == "1/2000");
    CHECK(e.heads[0].exact);
    // The first 1 at position 500 puts the hard readout on its threshold 1/2.
    CHECK(e.on_threshold);
    CHECK_FALSE(e.beta_every);
    REQUIRE(e.beta_off);
    // (n - 1) e^(-beta/2000) / (1 + ...) < 1/1000 needs beta > 2000 ln(999 * 999) ~ 27631.
    CHECK(numeric::to_double(*e.beta_off) > 27600);
    CHECK(numeric::to_double(*e.beta_off) < 27700);
    CHECK_FALSE(analysis::certifies_every_input(e, m, model::expr::parse("100"), true, ctx));
    CHECK(analysis::certifies_every_input(e, m, model::expr::parse("28000"), true, ctx));
    // Odd n: no input on the threshold.
    const auto odd = analysis::every_input_margins_at(m, 1001, ctx);
    CHECK_FALSE(odd.on_threshold);
    CHECK(odd.beta_every);
    // hard-first ties every key (zero query): unique-hard picks position 1, soft averages.
    const auto first = analysis::every_input_margins_at(bundled("hard-first"), 100, ctx);
    CHECK(first.heads[0].tie);
    CHECK_FALSE(first.beta_every);
}
