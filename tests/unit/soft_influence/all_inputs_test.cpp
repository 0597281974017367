// The bounds over every input (soft_influence/all_inputs.hpp) against exhaustive enumeration:
// on random soft models and small n, every state of every input lies in its class's box, every
// one-symbol change moves every state by at most its bound (n |Δy_j| <= ε for j != p,
// |Δy_p| <= Δ), and the largest change of y_n and of p is below Δ̄(n) and η̄(n); the same over
// ranges of lengths (the bound for every n of the range at once); the bounds with one term
// dropped are caught (negative controls); and the bundled models' numbers. Every random case
// prints its seed and model.
#include "soft_influence/all_inputs.hpp"
#include "soft_influence/box_maps.hpp"
#include "soft_influence/position_classes.hpp"
#include "attention/soft.hpp"
#include "gen/generators.hpp"
#include "model/formula/class_range.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <cmath>
#include <sstream>
#include <string>

using namespace attnprop;
using numeric::dinterval;
using numeric::rational;

namespace {

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

std::string show(const model::model<rational>& m) {
    std::ostringstream os;
    model::showValue(m, os);
    return os.str();
}

/// What the enumeration found against the bound.
struct cube_check {
    std::size_t inputs = 0, changes = 0;
    std::size_t box_out = 0, eps_out = 0, delta_out = 0, final_out = 0, prob_out = 0;
    double max_n_dy = 0;   ///< the largest n ||Δy_n|| found (lower ends)
    std::string first;     ///< the first violation
};

double low_abs(const dinterval& x) {
    if (x.lo() > 0) return x.lo();
    if (x.hi() < 0) return -x.hi();
    return 0;
}

/// Every input of length n (|Σ|^(n-1) of them) and every one-symbol change against the bound
/// of a run whose lengths contain n (states kept).
void enumerate(const model::model<rational>& m, long n, const analysis::all_inputs_result& b, cube_check& out) {
    REQUIRE(b.states);
    const auto& st = *b.states;
    const numeric::context ctx{53};
    const auto mi = model::to_scalar<dinterval>(m, ctx);
    const std::size_t sig = m.sigma.symbols.size();
    const std::size_t L = m.layers.size();
    std::size_t count = 1;
    for (long j = 0; j + 1 < n; ++j) count *= sig;
    auto input_of = [&](std::size_t code) {
        model::input_sequence x;
        for (long j = 0; j + 1 < n; ++j) {
            x.push_back(static_cast<int>(code % sig));
            code /= sig;
        }
        x.push_back(m.sigma.eos_index());
        return x;
    };
    auto cls = [&](long i) {
        for (std::size_t c = 0; c < st.classes.size(); ++c)
            if (st.classes[c].contains(n, i)) return c;
        FAIL("position " << i << " of n = " << n << " is in no class");
        return std::size_t{0};
    };
    std::vector<std::size_t> class_of(static_cast<std::size_t>(n));
    for (long i = 1; i <= n; ++i) class_of[static_cast<std::size_t>(i - 1)] = cls(i);
    auto run = [&](const model::input_sequence& x) {
        attention::soft_options o;
        o.trace = true;
        return attention::soft_forward(mi, x, ctx, o);
    };
    auto probs = [&](const std::vector<dinterval>& y) {
        std::vector<dinterval> z = model::apply_affine(mi.out.logits, y, ctx);
        dinterval top = z.front();
        for (const auto& v : z) top = numeric::max_of(top, v);
        std::vector<dinterval> e;
        dinterval s(0.0);
        for (const auto& v : z) {
            e.push_back(numeric::exp(v - dinterval(top.hi())));
            s += e.back();
        }
        for (auto& v : e) v = v / s;
        return e;
    };
    const double nd = static_cast<double>(n);
    for (std::size_t code = 0; code < count; ++code) {
        const auto x = input_of(code);
        const auto fx = run(x);
        ++out.inputs;
        const auto& tr = *fx.trace;
        for (std::size_t k = 0; k <= L; ++k)
            for (long j = 1; j <= n; ++j) {
                if (k == L && j != n) continue;
                const std::size_t c = class_of[static_cast<std::size_t>(j - 1)];
                const std::size_t t = st.classes[c].eos ? 0 : static_cast<std::size_t>(x[static_cast<std::size_t>(j - 1)]);
                const auto& box = st.box[k][c][t];
                const auto& y = tr.y[k][static_cast<std::size_t>(j - 1)];
                for (std::size_t q = 0; q < y.size(); ++q)
                    if (y[q].hi() < box[q].lo() || y[q].lo() > box[q].hi()) {
                        if (out.first.empty())
                            out.first = "box: layer " + std::to_string(k) + " position " + std::to_string(j) +
                                        " coordinate " + std::to_string(q);
                        ++out.box_out;
                    }
            }
        for (long p = 1; p < n; ++p)
            for (std::size_t a = 0; a < sig; ++a) {
                if (static_cast<int>(a) == x[static_cast<std::size_t>(p - 1)]) continue;
                auto x2 = x;
                x2[static_cast<std::size_t>(p - 1)] = static_cast<int>(a);
                const auto f2 = run(x2);
                ++out.changes;
                const auto& t2 = *f2.trace;
                for (std::size_t k = 0; k <= L; ++k)
                    for (long j = 1; j <= n; ++j) {
                        if (k == L && j != n) continue;
                        const std::size_t c = class_of[static_cast<std::size_t>(j - 1)];
                        const std::size_t t = st.classes[c].eos ? 0 : static_cast<std::size_t>(x[static_cast<std::size_t>(j - 1)]);
                        const auto& y = tr.y[k][static_cast<std::size_t>(j - 1)];
                        const auto& y2 = t2.y[k][static_cast<std::size_t>(j - 1)];
                        for (std::size_t q = 0; q < y.size(); ++q) {
                            const double d = low_abs(y2[q] - y[q]);
                            if (j != p) {
                                const double bound = analysis::boxes::up_div(st.eps[k][c][t][q], nd);
                                if (d > bound) {
                                    if (out.first.empty())
                                        out.first = "eps: layer " + std::to_string(k) + " j " + std::to_string(j) +
                                                    " p " + std::to_string(p) + " coordinate " + std::to_string(q);
                                    ++out.eps_out;
                                }
                            } else if (d > st.Delta[k][c][q]) {
                                if (out.first.empty())
                                    out.first = "Delta: layer " + std::to_string(k) + " p " + std::to_string(p) +
                                                " coordinate " + std::to_string(q);
                                ++out.delta_out;
                            }
                        }
                    }
                double s = 0;
                for (std::size_t q = 0; q < fx.y.size(); ++q) {
                    const double d = low_abs(f2.y[q] - fx.y[q]);
                    s += d * d;
                }
                const double ndy = nd * std::sqrt(s) * (1 - 1e-12);
                out.max_n_dy = std::max(out.max_n_dy, ndy);
                if (ndy > b.n_influence) {
                    if (out.first.empty()) out.first = "final: p " + std::to_string(p);
                    ++out.final_out;
                }
                if (b.n_prob) {
                    const auto p1 = probs(fx.y), p2 = probs(f2.y);
                    for (std::size_t r = 0; r < p1.size(); ++r)
                        if (nd * low_abs(p2[r] - p1[r]) * (1 - 1e-12) > *b.n_prob) {
                            if (out.first.empty()) out.first = "prob: p " + std::to_string(p);
                            ++out.prob_out;
                        }
                }
            }
    }
}

std::size_t violations(const cube_check& c) {
    return c.box_out + c.eps_out + c.delta_out + c.final_out + c.prob_out;
}

gen::soft_bounds small_bounds() {
    gen::soft_bounds b;
    b.max_layers = 2;
    b.max_heads = 2;
    b.max_dim = 3;
    b.max_alphabet = 3;
    return b;
}

std::vector<model::model<rational>> sample_models(std::uint64_t seed, int count) {
    std::vector<model::model<rational>> out;
    rc::Random random(seed);
    const auto g = gen::soft_model(small_bounds());
    for (int k = 0; k < count; ++k) {
        rc::Random r = random.split();
        out.push_back(g(r, (k % 5 + 1) * rc::kNominalSize / 5).value());
    }
    return out;
}

} // namespace

TEST_CASE("all inputs: every state lies in its box and every change within its bound (cube)", "[all_inputs]") {
    const std::uint64_t seed = 20260101;
    const auto models = sample_models(seed, 24);
    std::size_t checked = 0;
    for (std::size_t k = 0; k < models.size(); ++k) {
        const auto& m = models[k];
        for (long n : {2L, 3L, 6L}) {
            double cube = 1;
            for (long j = 0; j + 1 < n; ++j) cube *= static_cast<double>(m.sigma.symbols.size());
            if (cube > 250) continue;
            analysis::all_inputs_options opt;
            opt.keep_states = true;
            opt.threads = 1;
            for (bool ball : {false, true}) {
                analysis::length_range r;
                r.lo = n;
                r.hi = n;
                const auto b = ball ? analysis::all_inputs_bound<numeric::arb_ball>(m, r, opt, numeric::context{128})
                                    : analysis::all_inputs_bound<dinterval>(m, r, opt, numeric::context{53});
                REQUIRE(b.applies);
                cube_check c;
                enumerate(m, n, b, c);
                INFO("seed " << seed << " model " << k << " n = " << n << " (" << (ball ? "ball" : "interval")
                              << "): " << c.first << "\n" << show(m));
                CHECK(violations(c) == 0);
                ++checked;
            }
        }
    }
    CHECK(checked >= 80);
}

TEST_CASE("all inputs: the bound over a range of lengths holds at every length of it (cube)", "[all_inputs]") {
    const std::uint64_t seed = 20260102;
    gen::soft_bounds sb = small_bounds();
    sb.max_alphabet = 2;
    rc::Random random(seed);
    const auto g = gen::soft_model(sb);
    std::size_t checked = 0;
    for (int k = 0; k < 6; ++k) {
        rc::Random rr = random.split();
        const auto m = g(rr, rc::kNominalSize).value();
        analysis::all_inputs_options opt;
        opt.keep_states = true;
        opt.threads = 1;
        opt.classes.head = 1;
        opt.classes.tail = 1;
        opt.classes.cells = 2;
        analysis::length_range r;
        r.lo = 8;
        r.hi = 10;
        r.period = analysis::positional_period(m);
        for (long res = 0; res < r.period; ++res) {
            if (r.period > 1) r.residue = res;
            const auto b = analysis::all_inputs_bound<dinterval>(m, r, opt, numeric::context{53});
            REQUIRE(b.applies);
            for (long n = 8; n <= 10; ++n) {
                if (r.period > 1 && n % r.period != res) continue;
                cube_check c;
                enumerate(m, n, b, c);
                INFO("seed " << seed << " model " << k << " " << r.to_string() << " at n = " << n << ": "
                             << c.first << "\n" << show(m));
                CHECK(violations(c) == 0);
                ++checked;
            }
        }
    }
    CHECK(checked >= 9);
}

TEST_CASE("all inputs: a bound with one term dropped is caught by the cube (negative controls)", "[all_inputs]") {
    const std::uint64_t seed = 20260103;
    const auto models = sample_models(seed, 60);
    for (auto drop : {analysis::dropped_term::changed_key, analysis::dropped_term::weight_change}) {
        std::size_t caught = 0;
        for (const auto& m : models) {
            for (long n : {3L, 5L}) {
                analysis::all_inputs_options opt;
                opt.keep_states = true;
                opt.threads = 1;
                opt.drop = drop;
                const auto b = analysis::all_inputs_at(m, n, opt);
                cube_check c;
                enumerate(m, n, b, c);
                caught += c.final_out + c.prob_out + c.eps_out + c.delta_out;
            }
            if (caught > 0) break;
        }
        INFO("seed " << seed << ": dropping " << analysis::to_string(drop));
        CHECK(caught > 0);
    }
}

TEST_CASE("all inputs: class ranges of positional formulas", "[all_inputs]") {
    using model::formula::position_domain;
    auto range = [](const std::string& f, const position_domain& d) {
        return model::formula::range_over_positions(model::expr::parse(f).ast(), d);
    };
    position_domain d;
    d.n_lo = 1000;
    d.n_hi = std::numeric_limits<double>::infinity();
    d.i_lo = d.i_hi = 1;
    d.d_lo = 999;
    d.d_hi = d.n_hi;
    d.t_lo = 0;
    d.t_hi = 1e-3;
    CHECK(range("[i==1]", d).lo() == 1);
    CHECK(range("[i==1]", d).hi() == 1);
    d.period = 2;
    d.i_residue = 1;
    d.n_residue = 0;
    CHECK(range("(-1)^(i-1)", d).lo() == 1);
    CHECK(range("(-1)^(i-1)", d).hi() == 1);
    CHECK(range("cos(pi*i)", d).lo() == -1);
    CHECK(range("cos(pi*i)", d).hi() == -1);
    // A tail position n - 2 of an even n: (-1)^(i-1) = -1 and (n-i)/n tends to 0.
    position_domain t;
    t.n_lo = 64;
    t.n_hi = std::numeric_limits<double>::infinity();
    t.i_lo = 62;
    t.i_hi = t.n_hi;
    t.d_lo = t.d_hi = 2;
    t.t_lo = 1 - 2.0 / 64;
    t.t_hi = 1;
    t.period = 2;
    t.n_residue = 0;
    t.i_residue = 0;
    CHECK(range("(-1)^(i-1)", t).hi() == -1);
    CHECK(range("i - 2*floor(i/2)", t).lo() == 0);
    CHECK(range("i - 2*floor(i/2)", t).hi() == 0);
    const auto q = range("(n-i)/n", t);
    CHECK(q.lo() >= -1e-12);
    CHECK(q.hi() <= 2.0 / 64 + 1e-12);
    // A bulk cell of t = i/n.
    position_domain b;
    b.n_lo = 1024;
    b.n_hi = 2047;
    b.t_lo = 0.25;
    b.t_hi = 0.3125;
    b.i_lo = 255;
    b.i_hi = 641;
    b.d_lo = 700;
    b.d_hi = 1800;
    const auto r = range("(i-1)/n", b);
    CHECK(r.lo() >= 0.25 - 1.0 / 1024 - 1e-12);
    CHECK(r.hi() <= 0.3125 + 1e-12);
    CHECK(model::formula::residue_period(model::expr::parse("(-1)^i + floor(i/3)").ast()) == 6);
}

TEST_CASE("all inputs: the bundled models", "[all_inputs]") {
    // cc-first at n = 1024: the bound equals the largest change (x_1 flipped) to 6 digits.
    const auto first = analysis::all_inputs_at(bundled("cc-first"), 1024);
    CHECK(first.n_influence >= 1.5034);
    CHECK(first.n_influence <= 1.52);
    const auto parity = analysis::all_inputs_at(bundled("cc-parity"), 1000);
    CHECK(parity.n_influence > 1);
    CHECK(parity.n_influence < 25);
    REQUIRE(parity.n_prob);
    // The certified cross-entropy floor at n = 1e5 is within 1e-4 bits of chance.
    const auto far = analysis::all_inputs_at(bundled("cc-parity"), 100000);
    const double eta = *far.prob_at(100000);
    CHECK(numeric::to_double(analysis::cross_entropy_floor(eta)) >= 1 - 1e-4);
    // Every n: K* for cc-first is within 1% of the change of x_1 at n = 1024; none for a
    // positional embedding that grows with n.
    const auto every = analysis::every_n_bound(bundled("cc-first"));
    REQUIRE(every.found);
    CHECK(every.K_star >= 1.5034);
    CHECK(every.K_star <= 1.53);
    const auto grows = analysis::every_n_bound(bundled("soft-positional-i"));
    CHECK_FALSE(grows.found);
}
