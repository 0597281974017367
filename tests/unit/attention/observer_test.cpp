// The observer hooks of the forward passes (docs/architecture.md, "The forward passes and their
// observers"): an observed pass gives the same bits as the pass without an observer; the
// observer sees every computed row, layer after layer, rows ascending and heads in order, with
// the weights (soft) and the selected keys and scores (hard) that the pass's trace records; and
// an undefined value a hook throws is located like the pass's own. Random models from fixed
// seeds (printed); the negative controls: the same comparisons against a pass of another input,
// or against the trace of the other tie rule, must fail.
#include "attention/hard.hpp"
#include "attention/soft.hpp"
#include "gen/generators.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace attnprop;
using model::vec;
using numeric::arb_ball;
using numeric::rational;

namespace {

template <class S> bool same(const vec<S>& a, const vec<S>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t c = 0; c < a.size(); ++c)
        if (!numeric::same_value(a[c], b[c])) return false;
    return true;
}

model::input_sequence random_input(const model::model<rational>& m, std::size_t n,
                                   std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto sigma = static_cast<std::uint64_t>(m.sigma.symbols.size());
    model::input_sequence x(n);
    for (auto& s : x) s = static_cast<int>(rng() % sigma);
    x.back() = m.sigma.eos_index();
    return x;
}

/// Records what the soft pass shows.
template <class S> struct soft_recorder {
    static constexpr bool active = true;
    static constexpr bool wants_weights = true;
    struct head_seen {
        std::size_t layer, row, head;
        std::optional<vec<S>> weights;
        vec<S> output;
    };
    struct row_seen {
        std::size_t layer, row;
        vec<S> y;
    };
    std::vector<head_seen> heads;
    std::vector<row_seen> rows;
    /// Throws an undefined value at this row's update (layer, 0-based row), for the location.
    std::optional<std::pair<std::size_t, std::size_t>> fail_at;

    void head_row(const attention::soft_head_row<S>& r) {
        heads.push_back({r.layer, r.row, r.head,
                         r.weights ? std::optional<vec<S>>(*r.weights) : std::nullopt,
                         *r.output});
    }
    void row(std::size_t k, std::size_t i, const vec<S>& y) {
        if (fail_at && fail_at->first == k && fail_at->second == i)
            throw numeric::undefined_error("the observer's own test value");
        rows.push_back({k, i, y});
    }
};

/// Records what the hard pass shows.
template <class S> struct hard_recorder {
    static constexpr bool active = true;
    static constexpr bool wants_weights = false;
    struct head_seen {
        std::size_t layer, row, head;
        bool has_scores;
        std::vector<std::size_t> selected;
        vec<S> output;
    };
    std::vector<vec<S>> y0;
    std::vector<std::size_t> layers;
    std::size_t values_missing = 0;
    std::vector<head_seen> heads;
    std::vector<std::pair<std::size_t, std::size_t>> rows;
    std::vector<vec<S>> row_states;

    void initial(const std::vector<vec<S>>& y) { y0 = y; }
    void layer(const attention::hard_layer_view<S>& v) {
        layers.push_back(v.layer);
        for (const auto& head : *v.values)
            for (const auto& val : head) values_missing += val ? 0 : 1;
    }
    void head_row(const attention::hard_head_row<S>& r) {
        heads.push_back({r.layer, r.row, r.head, r.scores != nullptr, *r.selected, *r.output});
    }
    void row(std::size_t k, std::size_t i, const vec<S>& y) {
        rows.emplace_back(k, i);
        row_states.push_back(y);
    }
};

/// The soft checks on one model and input in kind S: the observed pass is the plain one bit for
/// bit; the observer saw every computed row in order, the traced weights and states; `other`
/// (the trace of another input) must not match (the negative control). Returns false with a
/// message in `why` at the first difference.
template <class S>
bool soft_agrees(const model::model<S>& m, const model::input_sequence& x, bool all_rows,
                 std::type_identity_t<const attention::soft_output<S>*> other,
                 std::string& why) {
    const numeric::context ctx{128};
    attention::soft_options plain;
    plain.all_rows = all_rows;
    const auto y = attention::soft_forward(m, x, ctx, plain).y;
    soft_recorder<S> rec;
    const auto observed = attention::soft_forward(m, x, ctx, plain, rec);
    if (!same(y, observed.y)) return why = "the observed output differs", false;
    const auto traced =
        other ? *other : attention::soft_forward(m, x, ctx, {.trace = true, .trace_weights = true});
    const std::size_t n = x.size(), L = m.layers.size();
    std::size_t at = 0, at_row = 0;
    for (std::size_t k = 1; k <= L; ++k) {
        const std::size_t first = k < L || all_rows ? 0 : n - 1;
        for (std::size_t i = first; i < n; ++i) {
            for (std::size_t h = 0; h < m.layers[k - 1].heads.size(); ++h, ++at) {
                if (at >= rec.heads.size()) return why = "a head row is missing", false;
                const auto& s = rec.heads[at];
                if (s.layer != k || s.row != i || s.head != h)
                    return why = "the head rows are out of order", false;
                const bool uniform = attention::constant_scores(m.layers[k - 1].heads[h]);
                if (uniform != !s.weights) return why = "weights of a uniform head", false;
                if (s.weights && !same(*s.weights, traced.trace->weights[k - 1][i][h]))
                    return why = "the weights differ from the trace's", false;
            }
            if (at_row >= rec.rows.size()) return why = "a row is missing", false;
            const auto& r = rec.rows[at_row++];
            if (r.layer != k || r.row != i) return why = "the rows are out of order", false;
            if (!same(r.y, traced.trace->y[k][i]))
                return why = "the row's state differs from the trace's", false;
        }
    }
    if (at != rec.heads.size() || at_row != rec.rows.size())
        return why = "the observer saw rows the pass does not compute", false;
    return true;
}

} // namespace

TEST_CASE("the soft pass shows its observer every computed row, the same bits as without one",
          "[attention][soft][observer]") {
    gen::soft_bounds sb;
    sb.max_layers = 2;
    int controls = 0, caught = 0;
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        const int size = static_cast<int>((seed * 37) % (rc::kNominalSize + 1));
        const auto m = gen::soft_model(sb)(rc::Random(seed), size).value();
        const auto x = random_input(m, 3 + seed % 9, seed);
        INFO("seed " << seed << ", model " << model::write_model(m) << ", input "
                     << model::format_input(m.sigma, x));
        const numeric::context ctx{128};
        std::string why;
        for (bool all_rows : {false, true}) {
            INFO("all rows " << all_rows);
            if (!soft_agrees(model::to_scalar<arb_ball>(m, ctx), x, all_rows, nullptr, why))
                FAIL("ball: " << why);
            if (!soft_agrees(model::to_scalar<numeric::dinterval>(m, ctx), x, all_rows, nullptr,
                             why))
                FAIL("interval: " << why);
            if (!soft_agrees(model::to_scalar<double>(m, ctx), x, all_rows, nullptr, why))
                FAIL("double: " << why);
            if (!soft_agrees(model::to_scalar<numeric::mpfr_real>(m, ctx), x, all_rows, nullptr,
                             why))
                FAIL("mpfr: " << why);
        }
        // Negative control: the trace of another input.
        auto x2 = x;
        x2[0] = (x2[0] + 1) % static_cast<int>(m.sigma.symbols.size());
        const auto md = model::to_scalar<double>(m, ctx);
        const auto other =
            attention::soft_forward(md, x2, ctx, {.trace = true, .trace_weights = true});
        ++controls;
        if (!soft_agrees(md, x, false, &other, why)) ++caught;
    }
    INFO(caught << " of " << controls << " controls caught");
    REQUIRE(caught * 2 >= controls);
}

TEST_CASE("an undefined value a soft observer throws is located at the row's update",
          "[attention][soft][observer]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/cc-parity.json");
    const numeric::context ctx{128};
    const auto mb = model::to_scalar<arb_ball>(m, ctx);
    const auto x = model::parse_input(m, "0110");
    soft_recorder<arb_ball> rec;
    rec.fail_at = std::pair<std::size_t, std::size_t>{1, 2};
    try {
        (void)attention::soft_forward(mb, x, ctx, {}, rec);
        FAIL("no undefined value");
    } catch (const numeric::undefined_error& e) {
        REQUIRE(e.where().layer == 1);
        REQUIRE(e.where().node == "update");
        REQUIRE(e.where().position == std::size_t{3});
    }
    // The last layer's row n: the pass's own place too.
    rec = {};
    rec.fail_at = std::pair<std::size_t, std::size_t>{2, 4};
    REQUIRE_THROWS_WITH(attention::soft_forward(mb, x, ctx, {}, rec),
                        Catch::Contains("layer 2, node 'update', position 5"));
}

TEST_CASE("the hard pass shows its observer every computed row, its scores and selected keys",
          "[attention][hard][observer]") {
    gen::hard_bounds hb;
    int controls = 0, caught = 0;
    for (std::uint64_t seed = 1; seed <= 24; ++seed) {
        const int size = static_cast<int>((seed * 41) % (rc::kNominalSize + 1));
        auto m = gen::hard_model(hb)(rc::Random(seed), size).value();
        if (seed % 2 == 0) m.attention = model::attention_kind::average_hard;
        const auto x = random_input(m, 2 + seed % 11, seed);
        INFO("seed " << seed << ", model " << model::write_model(m) << ", input "
                     << model::format_input(m.sigma, x));
        const numeric::context ctx{64};
        const auto plain = attention::hard_forward(m, x, ctx);
        const auto traced = attention::hard_forward(m, x, ctx, true);
        for (bool all_rows : {false, true}) {
            INFO("all rows " << all_rows);
            hard_recorder<rational> rec;
            attention::hard_options opt;
            opt.all_rows = all_rows;
            opt.all_values = true;
            const auto observed = attention::hard_forward(m, x, ctx, opt, rec);
            REQUIRE(observed.y == plain.y);
            REQUIRE(rec.y0 == traced.trace->y[0]);
            REQUIRE(rec.values_missing == 0);
            const std::size_t n = x.size(), L = m.layers.size();
            REQUIRE(rec.layers.size() == L);
            std::size_t at = 0, at_row = 0;
            for (std::size_t k = 1; k <= L; ++k) {
                REQUIRE(rec.layers[k - 1] == k);
                const std::size_t first = k < L || all_rows ? 0 : n - 1;
                for (std::size_t i = first; i < n; ++i) {
                    for (std::size_t h = 0; h < m.layers[k - 1].heads.size(); ++h, ++at) {
                        REQUIRE(at < rec.heads.size());
                        const auto& s = rec.heads[at];
                        REQUIRE(s.layer == k);
                        REQUIRE(s.row == i);
                        REQUIRE(s.head == h);
                        REQUIRE(s.has_scores ==
                                !attention::constant_scores(m.layers[k - 1].heads[h]));
                        if (model::averages_ties(m.attention))
                            REQUIRE(s.selected == traced.trace->ties[k - 1][i][h]);
                        else
                            REQUIRE(s.selected == std::vector<std::size_t>{
                                                      traced.trace->choice[k - 1][i][h]});
                    }
                    REQUIRE(at_row < rec.rows.size());
                    REQUIRE(rec.rows[at_row] == std::pair<std::size_t, std::size_t>{k, i});
                    REQUIRE(rec.row_states[at_row] == traced.trace->y[k][i]);
                    ++at_row;
                }
            }
            REQUIRE(at == rec.heads.size());
            REQUIRE(at_row == rec.rows.size());
        }
        // Negative control: the same model read with the other tie rule selects other keys
        // somewhere (or the comparison above could not fail).
        auto other = m;
        other.attention = model::averages_ties(m.attention) ? model::attention_kind::hard
                                                            : model::attention_kind::average_hard;
        hard_recorder<rational> rec;
        (void)attention::hard_forward(other, x, ctx, {}, rec);
        ++controls;
        bool differs = false;
        std::size_t at = 0;
        for (std::size_t k = 1; k <= m.layers.size(); ++k) {
            const std::size_t first = k < m.layers.size() ? 0 : x.size() - 1;
            for (std::size_t i = first; i < x.size(); ++i)
                for (std::size_t h = 0; h < m.layers[k - 1].heads.size(); ++h, ++at) {
                    const auto& want = model::averages_ties(m.attention)
                                           ? traced.trace->ties[k - 1][i][h]
                                           : std::vector<std::size_t>{
                                                 traced.trace->choice[k - 1][i][h]};
                    differs = differs || rec.heads.at(at).selected != want;
                }
        }
        if (differs) ++caught;
    }
    INFO(caught << " of " << controls << " controls caught");
    REQUIRE(caught * 3 >= controls);
}
