// Differential enclosures: every operation encloses both runs' values and their change, keeps
// an exact zero change exact, and the soft kernel run on a pair agrees with two passes.
#include "attention/soft_change.hpp"
#include "model/model_file.hpp"
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <random>

using namespace attnprop;
using numeric::arb_ball;
using numeric::diff_ball;
using numeric::rational;

namespace {

const numeric::context lo{96};
const numeric::context hi{512};

bool overlaps(const arb_ball& a, const arb_ball& b) { return arb_overlaps(a.raw(), b.raw()) != 0; }

diff_ball pair_of(const rational& x, const rational& y) {
    return diff_ball(arb_ball::from_rational(x, lo), arb_ball::from_rational(y, lo),
                     arb_ball::from_rational(rational(y - x), lo));
}

/// f on the pair against f on each value at 512 bits: the first and second values and the
/// change must each overlap the reference (both enclose the same true number).
void require_encloses(const std::function<diff_ball(const diff_ball&)>& fd,
                      const std::function<arb_ball(const arb_ball&)>& fb, const rational& x,
                      const rational& y) {
    INFO("x = " << numeric::to_exact_string(x) << ", y = " << numeric::to_exact_string(y));
    const diff_ball r = fd(pair_of(x, y));
    const arb_ball rx = fb(arb_ball::from_rational(x, hi));
    const arb_ball ry = fb(arb_ball::from_rational(y, hi));
    REQUIRE(overlaps(r.first(), rx));
    REQUIRE(overlaps(r.second(), ry));
    REQUIRE(overlaps(r.change(), ry - rx));
    REQUIRE(numeric::is_finite(r));
}

} // namespace

TEST_CASE("diff_ball: every operation encloses both runs and their change", "[numeric][diff]") {
    std::mt19937_64 rng(20261203);
    std::uniform_int_distribution<long> num(-40, 40), den(1, 9);
    const auto ctx = lo;
    for (int k = 0; k < 200; ++k) {
        const rational x(num(rng), den(rng));
        // Small, large and zero changes.
        const rational dy = k % 3 == 0 ? rational(0) : k % 3 == 1 ? rational(1, 1000000) : rational(num(rng), 7);
        const rational y = x + dy;
        require_encloses([](const diff_ball& a) { return numeric::exp(a); },
                         [](const arb_ball& a) { return numeric::exp(a); }, x, y);
        require_encloses([](const diff_ball& a) { return numeric::tanh(a); },
                         [](const arb_ball& a) { return numeric::tanh(a); }, x, y);
        require_encloses([](const diff_ball& a) { return numeric::sin(a); },
                         [](const arb_ball& a) { return numeric::sin(a); }, x, y);
        require_encloses([](const diff_ball& a) { return numeric::cos(a); },
                         [](const arb_ball& a) { return numeric::cos(a); }, x, y);
        require_encloses([&](const diff_ball& a) { return numeric::relu(a, ctx); },
                         [&](const arb_ball& a) { return numeric::relu(a, ctx); }, x, y);
        require_encloses([](const diff_ball& a) { return numeric::abs(a); },
                         [](const arb_ball& a) { return numeric::abs(a); }, x, y);
        require_encloses([](const diff_ball& a) { return a * a - a; },
                         [](const arb_ball& a) { return a * a - a; }, x, y);
        if (x > 0 && y > 0) {
            require_encloses([](const diff_ball& a) { return numeric::log(a); },
                             [](const arb_ball& a) { return numeric::log(a); }, x, y);
            require_encloses([](const diff_ball& a) { return numeric::sqrt(a); },
                             [](const arb_ball& a) { return numeric::sqrt(a); }, x, y);
        }
        if (x != 0 && y != 0)
            require_encloses([&](const diff_ball& a) { return numeric::one<diff_ball>(ctx) / a; },
                             [&](const arb_ball& a) { return numeric::one<arb_ball>(hi) / a; }, x, y);
    }
}

TEST_CASE("diff_ball: a small change keeps relative accuracy, a zero change stays exact",
          "[numeric][diff]") {
    // exp(x + 2^-200) - exp(x) at 96 bits: the difference of two balls cannot tell it from 0.
    const rational x(3, 7);
    const rational y = x + rational(1) / rational(boost::multiprecision::pow(boost::multiprecision::mpz_int(2), 200));
    const diff_ball e = numeric::exp(pair_of(x, y));
    REQUIRE(arb_rel_accuracy_bits(e.change().raw()) > 80);
    const arb_ball naive = numeric::exp(arb_ball::from_rational(y, lo)) - numeric::exp(arb_ball::from_rational(x, lo));
    REQUIRE(arb_rel_accuracy_bits(naive.raw()) < 0);
    // A wrong rule for the change (d e^x instead of e^x expm1(d)) misses the true change of a
    // large step: the enclosure test above would catch it.
    const diff_ball big = pair_of(rational(0), rational(1));
    const arb_ball wrong = numeric::exp(big.first()) * big.change();
    const arb_ball truth = numeric::exp(arb_ball::from_rational(rational(1), hi)) - numeric::one<arb_ball>(hi);
    REQUIRE_FALSE(overlaps(wrong, truth));
    // Unchanged values stay unchanged through every operation.
    const diff_ball s = diff_ball::same(arb_ball::from_rational(x, lo));
    for (const diff_ball& r : {numeric::exp(s), numeric::tanh(s) * s, s / (s + s), numeric::sqrt(s),
                               numeric::relu(s, lo), numeric::max_of(s, -s)})
        REQUIRE(r.unchanged());
}

TEST_CASE("soft_change: the pair run agrees with two forward passes and proves zero changes",
          "[numeric][diff]") {
    const auto m = model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/cc-parity.json");
    const numeric::context ctx{128};
    attention::soft_change_model ch(m, ctx);
    const auto mb = model::to_scalar<arb_ball>(m, hi);
    model::input_sequence x = {1, 0, 1, 1, 0, m.sigma.eos_index()};
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
        INFO("position " << i + 1);
        auto x2 = x;
        x2[i] = 1 - x[i];
        const auto r = ch.change(x, i, x2[i]);
        const auto y1 = attention::soft_forward(mb, x, hi).y;
        const auto y2 = attention::soft_forward(mb, x2, hi).y;
        for (std::size_t c = 0; c < y1.size(); ++c) {
            REQUIRE(overlaps(r.y[c], y1[c]));
            REQUIRE(overlaps(r.dy[c], y2[c] - y1[c]));
        }
    }
    // The same symbol again: no change, proved.
    const auto same = ch.change(x, 2, x[2]);
    for (const auto& d : same.dy) REQUIRE(arb_is_zero(d.raw()));
    for (const auto& d : *same.dp) REQUIRE(arb_is_zero(d.raw()));
}
