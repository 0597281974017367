// Undefined results: a value of the model that does not exist (a layer norm with eps = 0 at zero
// variance, a pole of a positional formula, NaN) is reported by every scalar kind as the same
// located result, in the forward passes, eval, influence sweeps, their reports and plots. The
// bundled model soft-majority-ln0 is undefined exactly at ties (#0 = #1); the test models in
// tests/golden/undefined are a hard model with a positional pole and a hard model with a layer
// norm. Inputs are enumerated or fixed; seeds are fixed and printed on failure.
#include "cli/evaluate.hpp"
#include "soft_influence/sweep.hpp"
#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "lang/languages.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"
#include "cli/eval_output.hpp"
#include "report/files.hpp"
#include "report/influence_report.hpp"
#include "report/plot.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

using namespace attnprop;
using numeric::arb_ball;
using numeric::mpfr_real;
using numeric::rational;
using numeric::undefined_error;

namespace {

namespace fs = std::filesystem;

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

model::model<rational> test_model(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_GOLDEN_DIR) + "/undefined/" + name + ".json");
}

bool is_tie(const std::string& w) {
    return std::count(w.begin(), w.end(), '0') == std::count(w.begin(), w.end(), '1');
}

/// Runs f, which must throw undefined_error; returns it.
template <class F> undefined_error undefined_of(F&& f) {
    try {
        f();
    } catch (const undefined_error& e) {
        return e;
    }
    FAIL("no undefined_error was thrown");
    return undefined_error("unreachable");
}

/// Whether an SVG text has a coordinate or attribute value that is NaN or infinite ("nan",
/// "-nan", "inf", "-inf" in any case, as printed by iostreams).
bool has_non_finite_number(const std::string& svg) {
    static const std::regex bad(R"((^|[="',\s;:(])[-+]?(nan|inf)($|[",'\s;:)]))", std::regex::icase);
    return std::regex_search(svg, bad);
}

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("attnprop-undefined-test-" + name);
    fs::remove_all(d);
    return d;
}

analysis::sweep_options sweep_opts(std::vector<long> ns, analysis::sweep_scalar scalar,
                                   std::uint64_t seed = 5) {
    analysis::sweep_options o;
    o.ns = std::move(ns);
    o.inputs = 2;
    o.positions = 0;
    o.seed = seed;
    o.threads = 1;
    o.scalar = scalar;
    o.precision = 128;
    o.precision_cap = 256;
    return o;
}

} // namespace

TEST_CASE("undefined_error: located() fills only the unknown fields; the message names them",
          "[undefined]") {
    undefined_error e("layer norm with eps = 0 at zero variance", {std::nullopt, "norm", std::nullopt, std::nullopt});
    REQUIRE(e.message() == "undefined at node 'norm' (layer norm with eps = 0 at zero variance)");
    const undefined_error f = e.located({2, "update", 4, 1});
    REQUIRE(f.where().layer == 2);
    REQUIRE(f.where().node == "norm"); // the inner (map's) node wins
    REQUIRE(f.where().position == std::size_t{4});
    REQUIRE(f.where().head == 1);
    REQUIRE(f.reason() == e.reason());
    REQUIRE_FALSE(f.precision_may_resolve());
    REQUIRE(f.message() ==
            "undefined at layer 2, node 'norm', head 1, position 4 (layer norm with eps = 0 at zero variance)");
    const undefined_error g = f.located({7, "x", 9, 3}); // nothing unknown left
    REQUIRE(g.message() == f.message());
    REQUIRE(undefined_error("r").message() == "undefined at unknown place (r)");
    // attention::place leaves 0 / nullptr unknown.
    const auto p = attention::place(3, nullptr, 0, 0);
    REQUIRE(p.layer == 3);
    REQUIRE(p.node.empty());
    REQUIRE_FALSE(p.position);
    REQUIRE_FALSE(p.head);
}

TEST_CASE("values that do not exist are undefined_error in every numeric kind, misuse is not",
          "[undefined]") {
    const numeric::context ctx{64};
    const mpfr_real one = numeric::one<mpfr_real>(ctx), zero = numeric::zero<mpfr_real>(ctx);
    REQUIRE(undefined_of([&] { (void)(one / zero); }).reason() == "division by zero");
    REQUIRE(undefined_of([&] { (void)numeric::log(zero); }).reason() == "log of a non-positive number");
    REQUIRE(undefined_of([&] { (void)numeric::sqrt(-one); }).reason() == "square root of a negative number");
    const mpfr_real nan = numeric::not_a_number<mpfr_real>(ctx);
    REQUIRE_THROWS_AS(numeric::compare(nan, one), undefined_error);
    REQUIRE_THROWS_AS(numeric::compare(std::nan(""), 1.0), undefined_error);
    // Non-finite values: double and MPFR cannot be resolved, balls may be.
    REQUIRE_FALSE(numeric::non_finite_error(std::numeric_limits<double>::infinity()).precision_may_resolve());
    arb_ball b(64);
    arb_indeterminate(b.raw());
    REQUIRE(numeric::non_finite_error(b).precision_may_resolve());
    REQUIRE_THROWS_AS(numeric::require_finite(b), undefined_error);
    REQUIRE_NOTHROW(numeric::require_finite(rational(1, 3)));
    // Formulas: a pole is undefined for every kind, with the formula and (i, n) in the reason.
    const auto pole = model::expr::parse("1/(i-2)");
    for (const auto& e : {undefined_of([&] { (void)pole.eval_rational(2, 5); }),
                          undefined_of([&] { (void)pole.eval<double>(2, 5, ctx); }),
                          undefined_of([&] { (void)pole.eval<mpfr_real>(2, 5, ctx); }),
                          undefined_of([&] { (void)pole.eval<arb_ball>(2, 5, ctx); })}) {
        INFO(e.message());
        REQUIRE(e.reason() == "division by zero in formula '1/(i-2)' at i=2, n=5");
    }
    REQUIRE_THROWS_AS(model::expr::parse("log(i-1)").eval<double>(1, 1, ctx), undefined_error);
    // Misuse stays a plain numeric_error: exact rationals cannot evaluate sin.
    try {
        (void)model::expr::parse("sin(i)").eval_rational(1, 1);
        FAIL("sin over exact rationals did not throw");
    } catch (const undefined_error&) {
        FAIL("a capability limit was reported as undefined");
    } catch (const numeric::numeric_error&) {
    }
}

TEST_CASE("a layer norm with eps = 0 at zero variance is undefined at its graph node for double, "
          "MPFR and balls; a ball that merely contains 0 may be resolved by precision",
          "[undefined]") {
    const auto m = bundled("soft-majority-ln0");
    const auto& update = m.layers.front().update;
    const numeric::context ctx{128};
    auto in = [&](const rational& b) { return std::vector<rational>{0, 0, b}; }; // (y, b1)
    auto check = [&](auto tag, const char* kind) {
        using S = decltype(tag);
        INFO(kind);
        const auto f = model::convert<S>(update, ctx);
        const auto e = undefined_of([&] { (void)model::evaluate(f, model::convert<S>(in(0), ctx), ctx); });
        REQUIRE(e.where().node == "norm");
        REQUIRE(e.reason() == "layer norm with eps = 0 at zero variance");
        REQUIRE_FALSE(e.precision_may_resolve());
        // Away from 0: LN(m, -m) = (sgn m, -sgn m).
        const auto y = model::evaluate(f, model::convert<S>(in(rational(-1, 7)), ctx), ctx);
        REQUIRE(std::abs(numeric::approx_double(y[0]) + 1) < 1e-12);
        REQUIRE(std::abs(numeric::approx_double(y[1]) - 1) < 1e-12);
    };
    check(double{}, "double");
    check(mpfr_real{}, "mpfr");
    check(arb_ball{}, "ball");
    // A ball around 0 that is not exactly 0: more precision may tell (may_resolve).
    const auto fb = model::convert<arb_ball>(update, ctx);
    std::vector<arb_ball> x = model::convert<arb_ball>(in(0), ctx);
    arb_add_error_2exp_si(x[2].raw(), -100);
    const auto e = undefined_of([&] { (void)model::evaluate(fb, x, ctx); });
    INFO(e.message());
    REQUIRE(e.precision_may_resolve());
    REQUIRE(e.where().node == "norm");
    REQUIRE(e.reason() == "layer norm with eps = 0: the variance enclosure contains 0 (undefined if it "
                          "is exactly 0, not resolved at 128 bits otherwise)");
}

TEST_CASE("soft-majority-ln0 is undefined exactly at ties, at layer 1, node 'norm', position n, "
          "for every scalar kind, and (sgn m, -sgn m) elsewhere",
          "[undefined][models]") {
    const auto m = bundled("soft-majority-ln0");
    const numeric::context ctx{128};
    const auto md = model::to_scalar<double>(m, ctx);
    const auto mm = model::to_scalar<mpfr_real>(m, ctx);
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    for (std::size_t len = 0; len <= 8; ++len)
        for (const auto& w : lang::all_words("01", len)) {
            INFO("input '" << w << "'");
            const auto x = model::parse_input(m, w);
            const std::size_t n = x.size();
            if (is_tie(w)) {
                for (const auto& e : {undefined_of([&] { (void)attention::soft_forward(md, x, ctx); }),
                                      undefined_of([&] { (void)attention::soft_forward(mm, x, ctx); }),
                                      undefined_of([&] { (void)attention::soft_forward(mb, x, ctx); })}) {
                    INFO(e.message());
                    REQUIRE(e.where().layer == 1);
                    REQUIRE(e.where().node == "norm");
                    REQUIRE(e.where().position == n);
                    REQUIRE_FALSE(e.where().head);
                    REQUIRE(e.message() == "undefined at layer 1, node 'norm', position " + std::to_string(n) +
                                               " (layer norm with eps = 0 at zero variance)");
                }
                // The full trace has the same first undefined value (layer 1 is the last layer,
                // but row n is the output's).
                attention::soft_options t;
                t.trace = true;
                REQUIRE_THROWS_AS(attention::soft_forward(mb, x, ctx, t), undefined_error);
                continue;
            }
            const long ones = std::count(w.begin(), w.end(), '1');
            const double sgn = 2 * ones > static_cast<long>(len) ? 1.0 : -1.0;
            const auto yb = attention::soft_forward(mb, x, ctx).y;
            REQUIRE(numeric::contains(yb[0], rational(static_cast<long>(sgn))));
            REQUIRE(numeric::contains(yb[1], rational(static_cast<long>(-sgn))));
            const auto yd = attention::soft_forward(md, x, ctx).y;
            REQUIRE(std::abs(yd[0] - sgn) < 1e-15);
            const auto ym = attention::soft_forward(mm, x, ctx).y;
            REQUIRE(std::abs(numeric::approx_double(ym[0]) - sgn) < 1e-30);
        }
}

TEST_CASE("a pole of a positional formula is undefined at layer 0, node 'positional embedding', "
          "position 2, also for the exact scalar",
          "[undefined]") {
    const auto m = test_model("hard-pole");
    const numeric::context ctx{64};
    for (const std::string w : {"0", "10", "0110"}) {
        INFO("input '" << w << "'");
        const auto x = model::parse_input(m, w);
        const auto exact = undefined_of([&] { (void)attention::hard_forward_exact(m, x, ctx); });
        const auto ref = undefined_of([&] {
            (void)attention::hard_forward(model::to_scalar<rational>(m, ctx), x, ctx);
        });
        const auto dbl = undefined_of([&] {
            (void)attention::hard_forward(model::to_scalar<double>(m, ctx), x, ctx);
        });
        const auto ball = undefined_of([&] {
            (void)attention::hard_forward(model::to_scalar<arb_ball>(m, ctx), x, ctx);
        });
        for (const auto* e : {&exact, &ref, &dbl, &ball}) {
            INFO(e->message());
            REQUIRE(e->where().layer == 0);
            REQUIRE(e->where().node == "positional embedding");
            REQUIRE(e->where().position == std::size_t{2});
            REQUIRE(e->reason() == "division by zero in formula '1/(i-2)' at i=2, n=" +
                                       std::to_string(x.size()));
        }
    }
    // n = 1 never reaches position 2.
    REQUIRE_NOTHROW(attention::hard_forward_exact(m, model::parse_input(m, ""), ctx));
}

TEST_CASE("eval reports the located result for every scalar kind (exact on a hard model)",
          "[undefined][eval]") {
    struct eval_case {
        std::string model;
        bool bundled_model;
        std::string input;
        analysis::scalar_choice scalar;
        std::string message;
    };
    const std::string ln = "undefined at layer 1, node 'norm', position 3 (layer norm with eps = 0 at zero variance)";
    const std::string hard_ln = "undefined at layer 1, node 'norm', position 1 (layer norm with eps = 0 at zero variance)";
    const std::string pole = "undefined at layer 0, node 'positional embedding', position 2 (division by "
                             "zero in formula '1/(i-2)' at i=2, n=3)";
    const std::vector<eval_case> cases = {
        {"soft-majority-ln0", true, "01", analysis::scalar_choice::of<double>(), ln},
        {"soft-majority-ln0", true, "10", analysis::scalar_choice::of<numeric::mpfr_real>(), ln},
        {"soft-majority-ln0", true, "01", analysis::scalar_choice::of<numeric::arb_ball>(), ln},
        {"soft-majority-ln0", true, "01", analysis::scalar_choice::automatic(), ln},
        {"hard-ln0", false, "", analysis::scalar_choice::of<double>(), hard_ln},
        {"hard-ln0", false, "", analysis::scalar_choice::of<numeric::mpfr_real>(), hard_ln},
        {"hard-ln0", false, "", analysis::scalar_choice::of<numeric::arb_ball>(), hard_ln},
        {"hard-pole", false, "01", analysis::scalar_choice::of<numeric::rational>(), pole},
        {"hard-pole", false, "01", analysis::scalar_choice::automatic(), pole},
        {"hard-pole", false, "01", analysis::scalar_choice::of<double>(), pole},
    };
    for (const auto& c : cases) {
        INFO(c.model << " on '" << c.input << "' with " << analysis::to_string(c.scalar));
        const auto m = c.bundled_model ? bundled(c.model) : test_model(c.model);
        analysis::eval_options opt;
        opt.scalar = c.scalar;
        opt.trace = true;
        const auto ev = analysis::evaluate(m, model::parse_input(m, c.input), opt);
        REQUIRE(ev.undefined);
        REQUIRE(ev.undefined->message() == c.message);
        REQUIRE(ev.y.empty());
        REQUIRE(ev.trace.empty());
        REQUIRE_FALSE(ev.accept);
        const std::string text = report::eval_to_text(ev);
        REQUIRE_THAT(text, Catch::Contains("result     " + c.message));
        const auto j = report::eval_to_json(ev);
        REQUIRE(j.find("y")->is_null());
        const auto* u = j.find("undefined");
        REQUIRE(u);
        REQUIRE(u->find("message")->as_string() == c.message);
        REQUIRE(u->find("layer")->raw_number() == std::to_string(*ev.undefined->where().layer));
        REQUIRE(u->find("node")->as_string() == ev.undefined->where().node);
        REQUIRE(u->find("position")->raw_number() == std::to_string(*ev.undefined->where().position));
        REQUIRE(u->find("head") == nullptr); // unknown fields are absent
        REQUIRE(u->find("reason")->as_string() == ev.undefined->reason());
        REQUIRE(j.find("accept") == nullptr);
        REQUIRE(j.find("probabilities") == nullptr);
    }
    // Defined inputs keep their readout.
    const auto m = bundled("soft-majority-ln0");
    const auto ev = analysis::evaluate(m, model::parse_input(m, "011"), {});
    REQUIRE_FALSE(ev.undefined);
    REQUIRE(ev.probabilities.size() == 2);
}

TEST_CASE("a row of the last layer that the output does not read may have no value: eval --trace "
          "shows it undefined and the result stays defined",
          "[undefined][eval]") {
    // cc-parity-ln0 (balls): y_1^(2) is a layer norm with eps = 0 of a vector whose variance
    // enclosure contains 0, but y_n^(2) does not depend on it.
    const auto m = bundled("cc-parity-ln0");
    analysis::eval_options opt;
    opt.scalar = analysis::scalar_choice::of<numeric::arb_ball>();
    opt.trace = true;
    const auto ev = analysis::evaluate(m, model::parse_input(m, "1101001"), opt);
    INFO((ev.undefined ? ev.undefined->message() : std::string("defined")));
    REQUIRE_FALSE(ev.undefined);
    REQUIRE(ev.trace.size() == 3);
    REQUIRE(ev.trace[2].y.front().front() == "undefined");
    REQUIRE(ev.trace[2].y.back().front() != "undefined");
    REQUIRE(ev.probabilities.size() == 2);
    REQUIRE_THAT(report::eval_to_text(ev), Catch::Contains("position 1  y = [undefined, undefined"));
}

TEST_CASE("an influence sweep keeps and marks undefined rows, for balls, MPFR and double; the "
          "verdict is undefined and the fit uses the defined rows only",
          "[undefined][sweep]") {
    const auto m = bundled("soft-majority-ln0");
    for (auto scalar : {analysis::sweep_scalar::of<numeric::arb_ball>(),
                        analysis::sweep_scalar::of<numeric::mpfr_real>(),
                        analysis::sweep_scalar::of<double>()}) {
        // n = 3: every pair meets a tie (x = 00 -> 10, 01, 10 ties, 11 -> 01); n = 4 and 6: n - 1 is
        // odd, so no input or one-symbol change is a tie.
        auto opt = sweep_opts({3, 4, 6}, scalar);
        INFO("scalar " << analysis::to_string(scalar) << ", seed " << opt.seed);
        const auto r = analysis::influence_sweep(m, opt);
        REQUIRE(r.rows.size() == 3);
        const auto& u = r.rows[0];
        REQUIRE(u.n == 3);
        REQUIRE(u.undefined);
        INFO(*u.undefined);
        REQUIRE_THAT(*u.undefined, Catch::StartsWith("undefined at layer 1, node 'norm', position 3 (layer "
                                                     "norm with eps = 0 at zero variance; input '"));
        REQUIRE(u.max_influence.empty());
        REQUIRE(u.n_max_influence.empty());
        REQUIRE(std::isnan(u.max_influence_approx));
        REQUIRE_FALSE(u.cross_entropy);
        REQUIRE(u.below_bound == verdict::not_applicable);
        REQUIRE(u.precision == 128); // exactly 0: no escalation
        for (std::size_t t = 1; t < 3; ++t) {
            REQUIRE_FALSE(r.rows[t].undefined);
            REQUIRE_FALSE(r.rows[t].max_influence.empty());
        }
        REQUIRE(r.verdict == verdict::undefined);
        REQUIRE_THAT(r.explanation, Catch::StartsWith("the model is undefined at n = 3: undefined at layer 1"));
        REQUIRE(r.fit_left_out == std::vector<long>{3});
        REQUIRE(is_indeterminate(r.influence_vanished));
        // The same rows with more threads (the first undefined item is reported).
        opt.threads = 3;
        const auto r3 = analysis::influence_sweep(m, opt);
        REQUIRE(r3.rows[0].undefined == u.undefined);
    }
}

TEST_CASE("an undefined ball row that precision may resolve is measured again up to the cap",
          "[undefined][sweep]") {
    // soft-majority-ln0 with token values +-1/3: at a tie the mean is a ball around 0 that is
    // not exactly 0 (1/3 is not dyadic), so every precision says "may resolve".
    auto m = bundled("soft-majority-ln0");
    m.token[static_cast<std::size_t>(m.sigma.index_of("0"))][0] = rational(-1, 3);
    m.token[static_cast<std::size_t>(m.sigma.index_of("1"))][0] = rational(1, 3);
    auto opt = sweep_opts({3}, analysis::sweep_scalar::of<numeric::arb_ball>());
    opt.precision_cap = 512;
    const auto r = analysis::influence_sweep(m, opt);
    INFO("seed " << opt.seed);
    REQUIRE(r.rows.front().undefined);
    INFO(*r.rows.front().undefined);
    REQUIRE(r.rows.front().precision == 512);
    REQUIRE_THAT(*r.rows.front().undefined, Catch::Contains("the variance enclosure contains 0") &&
                                                Catch::EndsWith("(not resolved up to 512 bits)"));
    REQUIRE(r.verdict == verdict::undefined);
}

TEST_CASE("decide_sweep: undefined rows give undefined unless a rigorous failure was found",
          "[undefined][sweep]") {
    auto defined_row = [](long n, double v, verdict c) {
        analysis::sweep_row r;
        r.n = n;
        r.max_influence_approx = v;
        r.below_bound = c;
        r.below_posterior = verdict::passed;
        return r;
    };
    analysis::sweep_row u;
    u.n = 16;
    u.undefined = "undefined at layer 1, node 'norm', position 16 (layer norm with eps = 0 at zero variance)";
    u.max_influence_approx = std::numeric_limits<double>::quiet_NaN();
    analysis::sweep_result r;
    for (const char* name : analysis::hypothesis_names) r.hypotheses.push_back({name, true, "constructed"});
    r.rows = {defined_row(8, 0.5, verdict::passed), u, defined_row(32, 0.125, verdict::passed),
              defined_row(64, 0.0625, verdict::passed)};
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::undefined);
    REQUIRE(r.explanation == "the model is undefined at n = 16: " + *u.undefined);
    REQUIRE(r.fit);
    REQUIRE(r.fit->points == 3);
    REQUIRE(r.fit_left_out == std::vector<long>{16});
    REQUIRE(std::string(word(r.verdict)) == "undefined");
    // A hypothesis failing does not outrank undefined: no verdict about vanishing.
    r.hypotheses.front().holds = false;
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::undefined);
    REQUIRE(is_indeterminate(r.influence_vanished));
    // A measurement certainly above its bound does.
    r.hypotheses.front().holds = true;
    r.rows[2].below_bound = verdict::failed;
    analysis::decide_sweep(r);
    REQUIRE(r.verdict == verdict::failed);
    REQUIRE_THAT(r.explanation, Catch::Contains("above its bound at n = 32") &&
                                    Catch::EndsWith("; the model is undefined at n = 16"));
    // No undefined row: nothing left out.
    r.rows.erase(r.rows.begin() + 1);
    analysis::decide_sweep(r);
    REQUIRE(r.fit_left_out.empty());
}

TEST_CASE("an undefined row survives rows.json: null numbers, the message, and old rows without "
          "the field read back as defined",
          "[undefined][sweep]") {
    analysis::sweep_row u;
    u.n = 3;
    u.inputs = 2;
    u.positions = 2;
    u.bound = "1.5";
    u.undefined = "undefined at layer 1, node 'norm', position 3 (layer norm with eps = 0 at zero variance; input '01')";
    u.max_influence_approx = u.n_max_influence_approx = std::numeric_limits<double>::quiet_NaN();
    u.precision = 128;
    const json::value j = report::row_to_json(u);
    REQUIRE(j.find("max_influence")->is_null());
    REQUIRE(j.find("n_max_influence")->is_null());
    REQUIRE(j.find("max_influence_approx")->is_null());
    REQUIRE(j.find("undefined")->as_string() == *u.undefined);
    const auto back = report::row_from_json(json::parse(json::dump(j, 2)));
    REQUIRE(back.undefined == u.undefined);
    REQUIRE(back.bound == u.bound);
    REQUIRE(back.max_influence.empty());
    REQUIRE(std::isnan(back.max_influence_approx));
    // A defined row: "undefined" is null, and a row written before the field existed reads
    // back defined.
    analysis::sweep_row d;
    d.n = 4;
    d.max_influence = "0.5";
    d.mean_influence = "0.25";
    d.n_max_influence = "2";
    json::value jd = report::row_to_json(d);
    REQUIRE(jd.find("undefined")->is_null());
    REQUIRE_FALSE(report::row_from_json(jd).undefined);
    std::string old = json::dump(jd, 0);
    old = std::regex_replace(old, std::regex(R"(,\s*"undefined":\s*null)"), "");
    REQUIRE(old.find("undefined") == std::string::npos);
    const auto old_row = report::row_from_json(json::parse(old));
    REQUIRE_FALSE(old_row.undefined);
    REQUIRE(old_row.max_influence == "0.5");
}

TEST_CASE("no SVG attnprop writes has a NaN or infinite coordinate; undefined rows are marked",
          "[undefined][report]") {
    // The written report of a real sweep with an undefined row.
    const auto m = bundled("soft-majority-ln0");
    auto opt = sweep_opts({3, 4, 6}, analysis::sweep_scalar::of<double>());
    opt.language = lang::language::parity; // a cross-entropy panel too
    INFO("seed " << opt.seed);
    const auto r = analysis::influence_sweep(m, opt);
    REQUIRE(r.verdict == verdict::undefined);
    const fs::path dir = fresh_dir("report");
    report::influence_meta meta;
    meta.model_file = "soft-majority-ln0";
    meta.fingerprint = "0000000000000000";
    meta.options = opt;
    report::write_influence_report(dir, r, meta);
    const std::string svg = read_text(dir / "influence.svg");
    INFO(svg);
    REQUIRE_FALSE(svg.empty());
    REQUIRE_FALSE(has_non_finite_number(svg));
    // The marker in the image; the caption that names the row in report.md (the figure carries
    // none unless asked, and then it does: the control).
    REQUIRE_THAT(svg, Catch::Contains(">undefined</text>"));
    REQUIRE(svg.find("Undefined at n = 3") == std::string::npos);
    REQUIRE_THAT(read_text(dir / "report.md"),
                 Catch::Contains("- Undefined at n = 3 (marked on the axis; no value is drawn)."));
    {
        const fs::path with_text = fresh_dir("report-figure-text");
        report::influence_meta asked = meta;
        asked.figure_text = true;
        report::write_influence_report(with_text, r, asked);
        REQUIRE_THAT(read_text(with_text / "influence.svg"), Catch::Contains("Undefined at n = 3"));
    }
    // The other files mark the row too, and the resume checkpoint reads it back.
    REQUIRE_THAT(read_text(dir / "influence.csv"),
                 Catch::Contains(",undefined\n") && Catch::Contains("\"undefined at layer 1, node 'norm', position 3"));
    REQUIRE_THAT(read_text(dir / "report.md"),
                 Catch::Contains("| 3 | 0 | undefined |") && Catch::Contains("1 undefined row left out of the slope fit (n = 3)"));
    const std::string rep = read_text(dir / "report.json");
    REQUIRE_THAT(rep, Catch::Contains("\"verdict\": \"undefined\"") && Catch::Contains("\"slope_left_out\": [3]"));
    std::string note;
    const auto rows = report::read_resume_rows(dir, meta.fingerprint, &note);
    INFO(note);
    REQUIRE(rows.size() == 3);
    REQUIRE(rows[0].undefined == r.rows[0].undefined);
    REQUIRE_FALSE(rows[1].undefined);
    const std::string text = report::influence_to_text(r, meta);
    REQUIRE_THAT(text, Catch::Contains("n = 3: undefined at layer 1") &&
                           Catch::Contains("verdict: undefined (the model is undefined at n = 3"));
    fs::remove_all(dir);

    // render_svg itself, with every kind of non-finite value and an undefined length.
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    report::plot_figure f;
    f.title = "t";
    f.marked_x = {4, nan};
    f.caption = {"undefined at n = 4"};
    report::plot_panel_spec a, b;
    a.series.push_back({"a", {2, 4, nan, 16, 32}, {1, nan, 3, inf, -inf}});
    b.log_y = true;
    b.series.push_back({"b", {2, 4, nan, 16, 32}, {nan, -1, 0, inf, nan}});
    f.panels = {a, b};
    const std::string s = report::render_svg(f);
    INFO(s);
    REQUIRE_FALSE(has_non_finite_number(s));
    REQUIRE_THAT(s, Catch::Contains("undefined at n = 4"));
    // The detector itself finds what it must.
    REQUIRE(has_non_finite_number("<circle cx=\"1\" cy=\"-nan\"/>"));
    REQUIRE(has_non_finite_number("points=\"1,inf 2,3\""));
    REQUIRE_FALSE(has_non_finite_number("<text>one-symbol influence</text>"));
}
