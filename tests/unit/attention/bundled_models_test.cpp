// The bundled models: hard models against their language oracles on every short string, and
// the Chiang & Cholak constructions against their closed forms at high precision.
#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "lang/languages.hpp"
#include "model/model_file.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace attnprop;
using numeric::arb_ball;
using numeric::mpfr_real;
using numeric::rational;

namespace {

model::model<rational> bundled(const std::string& name) {
    return model::read_model_file(std::string(ATTNPROP_MODELS_DIR) + "/" + name + ".json");
}

bool accepts(const model::model<rational>& m, const std::string& w) {
    const numeric::context ctx{64};
    auto r = attention::hard_forward_exact(m, model::parse_input(m, w), ctx);
    auto v = attention::recognize(m.out, r.y, ctx);
    REQUIRE(v != attention::verdict::undecided);
    return v == attention::verdict::accept;
}

// z = logit("1") - logit("0") of a softmax readout at y_n^(L).
template <class S> S logit_gap(const model::model<S>& m, const std::vector<S>& y, const numeric::context& ctx) {
    auto z = attention::readout_logits(m.out, y, ctx);
    return z[1] - z[0];
}

std::string random_bits(std::size_t len, std::mt19937_64& rng) {
    return lang::uniform_word(lang::language::parity, len, rng);
}

} // namespace

TEST_CASE("hard-first and hard-contains-one agree with their oracles on every string up to n = 12",
          "[models][hard]") {
    auto first = bundled("hard-first");
    auto any = bundled("hard-contains-one");
    for (std::size_t len = 0; len <= 11; ++len)
        for (const auto& w : lang::all_words("01", len)) {
            INFO("input '" << w << "'");
            REQUIRE(accepts(first, w) == lang::member(lang::language::first, w));
            REQUIRE(accepts(any, w) == lang::member(lang::language::contains_one, w));
        }
}

TEST_CASE("hard-parity-attempt is right up to n = 9 and wrong somewhere at n = 10, 11, 12",
          "[models][hard]") {
    auto m = bundled("hard-parity-attempt");
    for (std::size_t len = 0; len <= 11; ++len) {
        std::size_t wrong = 0;
        std::string example;
        for (const auto& w : lang::all_words("01", len))
            if (accepts(m, w) != lang::member(lang::language::parity, w)) {
                ++wrong;
                if (example.empty()) example = w;
            }
        INFO("n = " << len + 1 << ", wrong on " << wrong << " strings, e.g. '" << example << "'");
        if (len + 1 <= 9) REQUIRE(wrong == 0);
        else REQUIRE(wrong > 0);
    }
}

TEST_CASE("cc-first without layer norm equals its closed form to 60 digits", "[models][soft][cc]") {
    // With eos at the end, the eos query scores position 1 with b = 1/sqrt(6) and every other
    // position with 0; the value is x_1 - 1/2 at position 1 and 0 elsewhere, so
    // z = (x_1 - 1/2) e^b / (e^b + n - 1).
    auto m = bundled("cc-first");
    const numeric::context ctx{256};
    auto mm = model::to_scalar<mpfr_real>(m, ctx);
    const numeric::context hi{512};
    std::mt19937_64 rng(7);
    for (long n : {10L, 100L, 1000L, 10000L, 100000L}) {
        std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
        INFO("n = " << n << ", x_1 = " << w[0]);
        auto r = attention::soft_forward(mm, model::parse_input(m, w), ctx);
        mpfr_real z = logit_gap(mm, r.y, ctx);
        mpfr_real b = numeric::one<mpfr_real>(hi) / numeric::sqrt(numeric::from_int<mpfr_real>(6, hi));
        mpfr_real eb = numeric::exp(b);
        mpfr_real sign = numeric::from_rational<mpfr_real>(w[0] == '1' ? rational(1, 2) : rational(-1, 2), hi);
        mpfr_real want = sign * eb / (eb + numeric::from_int<mpfr_real>(n - 1, hi));
        mpfr_real rel = numeric::abs((z - want) / want);
        REQUIRE(numeric::to_double(rel) < 1e-60);
    }
}

TEST_CASE("cc-first-logn equals its closed form (x_1 - 1/2) n^2/(n^2 + n - 1) to 60 digits",
          "[models][soft][cc]") {
    // Layer 2 scores eos against position 1 with 2 ln n, so e^{score} = n^2: the weight on
    // position 1 is n^2/(n^2 + n - 1). The same model without the length scaling scores with
    // 2 and must miss the closed form (the factor is really applied).
    auto m = bundled("cc-first-logn");
    auto unscaled = m;
    unscaled.layers[1].heads[0].score.length_scale =
        model::score_spec<rational>::length_scaling::none;
    unscaled.layers[1].heads[0].score.beta.reset(); // ln n is the inverse temperature log(n)
    const numeric::context ctx{256};
    auto mm = model::to_scalar<mpfr_real>(m, ctx);
    auto mu = model::to_scalar<mpfr_real>(unscaled, ctx);
    std::mt19937_64 rng(11);
    for (long n : {2L, 10L, 1000L, 100000L}) {
        std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
        INFO("n = " << n << ", x_1 = " << w[0]);
        const auto x = model::parse_input(m, w);
        mpfr_real z = logit_gap(mm, attention::soft_forward(mm, x, ctx).y, ctx);
        const rational n2 = rational(n) * rational(n);
        const rational want_q = (w[0] == '1' ? rational(1, 2) : rational(-1, 2)) * n2 / (n2 + n - 1);
        const mpfr_real want = numeric::from_rational<mpfr_real>(want_q, ctx);
        REQUIRE(numeric::to_double(numeric::abs((z - want) / want)) < 1e-60);
        mpfr_real zu = logit_gap(mu, attention::soft_forward(mu, x, ctx).y, ctx);
        REQUIRE(numeric::to_double(numeric::abs((zu - want) / want)) > 1e-3);
    }
    // n = 1 (the empty input): ln 1 = 0, one position, a finite output.
    auto r1 = attention::soft_forward(mm, model::parse_input(m, ""), ctx);
    REQUIRE(std::isfinite(numeric::to_double(logit_gap(mm, r1.y, ctx))));
}

TEST_CASE("soft-positional-i equals its closed form sum_j w_j (x_j - 1/2), w_j ~ e^-j",
          "[models][soft]") {
    auto m = bundled("soft-positional-i");
    const numeric::context ctx{256};
    auto mm = model::to_scalar<mpfr_real>(m, ctx);
    std::mt19937_64 rng(12);
    for (long n : {2L, 10L, 300L, 3000L}) {
        std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
        INFO("n = " << n);
        mpfr_real z = logit_gap(mm, attention::soft_forward(mm, model::parse_input(m, w), ctx).y, ctx);
        mpfr_real num = numeric::zero<mpfr_real>(ctx), den = numeric::zero<mpfr_real>(ctx);
        for (long j = 1; j <= n; ++j) {
            mpfr_real e = numeric::exp(numeric::from_int<mpfr_real>(-(j - 1), ctx));
            den = den + e;
            if (j < n) num = num + e * numeric::from_rational<mpfr_real>(
                                          w[static_cast<std::size_t>(j - 1)] == '1' ? rational(1, 2)
                                                                                    : rational(-1, 2),
                                          ctx);
        }
        const mpfr_real want = num / den;
        REQUIRE(numeric::to_double(numeric::abs((z - want) / want)) < 1e-60);
        // The sign is x_1's: the other weights sum to less than w_1.
        REQUIRE((numeric::to_double(z) > 0) == (w[0] == '1'));
    }
}

TEST_CASE("soft-step-update adds [z > 0] to cc-first's logit z", "[models][soft][cc]") {
    auto step = bundled("soft-step-update");
    auto first = bundled("cc-first");
    const numeric::context ctx{256};
    auto ms = model::to_scalar<mpfr_real>(step, ctx);
    auto mf = model::to_scalar<mpfr_real>(first, ctx);
    std::mt19937_64 rng(13);
    for (long n : {2L, 10L, 1000L, 100000L}) {
        std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
        INFO("n = " << n << ", x_1 = " << w[0]);
        const auto x = model::parse_input(first, w);
        mpfr_real zf = logit_gap(mf, attention::soft_forward(mf, x, ctx).y, ctx);
        mpfr_real zs = logit_gap(ms, attention::soft_forward(ms, x, ctx).y, ctx);
        const double jump = w[0] == '1' ? 1.0 : 0.0;
        REQUIRE(numeric::to_double(numeric::abs(zs - zf - numeric::from_int<mpfr_real>(w[0] == '1', ctx))) < 1e-60);
        REQUIRE(numeric::to_double(zs) - numeric::to_double(zf) == Approx(jump));
    }
}

TEST_CASE("cc-parity without layer norm equals its closed form to 60 digits", "[models][soft][cc]") {
    // Head weights at the eos query are proportional to e^{+-beta c_i}, c_i = (-1)^(i-1),
    // beta = 1/sqrt(5); dim 7 is 1/n at position k + 1 (k = number of ones) and 0 elsewhere, so
    // z = (e^{-beta c}/Z2 - e^{beta c}/Z1) / n with c = (-1)^k,
    // Z1 = E e^beta + O e^-beta, Z2 = E e^-beta + O e^beta, E = ceil(n/2), O = floor(n/2).
    auto m = bundled("cc-parity");
    const numeric::context ctx{256};
    auto mm = model::to_scalar<mpfr_real>(m, ctx);
    const numeric::context hi{512};
    std::mt19937_64 rng(11);
    for (long n : {10L, 100L, 1000L, 10000L, 100000L}) {
        std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
        long k = static_cast<long>(std::count(w.begin(), w.end(), '1'));
        INFO("n = " << n << ", ones = " << k);
        auto r = attention::soft_forward(mm, model::parse_input(m, w), ctx);
        mpfr_real z = logit_gap(mm, r.y, ctx);
        mpfr_real beta = numeric::one<mpfr_real>(hi) / numeric::sqrt(numeric::from_int<mpfr_real>(5, hi));
        mpfr_real ep = numeric::exp(beta), em = numeric::exp(-beta);
        mpfr_real E = numeric::from_int<mpfr_real>((n + 1) / 2, hi), O = numeric::from_int<mpfr_real>(n / 2, hi);
        mpfr_real Z1 = E * ep + O * em, Z2 = E * em + O * ep;
        mpfr_real w2 = (k % 2 == 0 ? em : ep) / Z2, w1 = (k % 2 == 0 ? ep : em) / Z1;
        mpfr_real want = (w2 - w1) / numeric::from_int<mpfr_real>(n, hi);
        mpfr_real rel = numeric::abs((z - want) / want);
        REQUIRE(numeric::to_double(rel) < 1e-60);
        REQUIRE(numeric::compare(z, numeric::zero<mpfr_real>(ctx)) ==
                (k % 2 == 1 ? numeric::order::greater : numeric::order::less));
    }
}

TEST_CASE("cc-parity-ln0 gives the logit +-sqrt(10) for every n", "[models][soft][cc]") {
    auto m = bundled("cc-parity-ln0");
    const numeric::context ctx{256};
    auto mm = model::to_scalar<mpfr_real>(m, ctx);
    mpfr_real s10 = numeric::sqrt(numeric::from_int<mpfr_real>(10, ctx));
    std::mt19937_64 rng(13);
    for (long n : {10L, 100L, 1000L, 10000L}) {
        std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
        bool odd = lang::member(lang::language::parity, w);
        INFO("n = " << n);
        auto r = attention::soft_forward(mm, model::parse_input(m, w), ctx);
        mpfr_real z = logit_gap(mm, r.y, ctx);
        mpfr_real err = numeric::abs(z - (odd ? s10 : -s10));
        REQUIRE(numeric::to_double(err) < 1e-60);
    }
}

TEST_CASE("cc-first-ln0 gives the logit +-sqrt(6) for every n", "[models][soft][cc]") {
    auto m = bundled("cc-first-ln0");
    const numeric::context ctx{256};
    auto mm = model::to_scalar<mpfr_real>(m, ctx);
    mpfr_real s6 = numeric::sqrt(numeric::from_int<mpfr_real>(6, ctx));
    std::mt19937_64 rng(17);
    for (long n : {10L, 100L, 1000L, 10000L}) {
        std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
        INFO("n = " << n);
        auto r = attention::soft_forward(mm, model::parse_input(m, w), ctx);
        mpfr_real z = logit_gap(mm, r.y, ctx);
        mpfr_real err = numeric::abs(z - (w[0] == '1' ? s6 : -s6));
        REQUIRE(numeric::to_double(err) < 1e-60);
    }
}

TEST_CASE("the Chiang & Cholak models have accuracy 1 on sampled strings up to n = 10^4",
          "[models][soft][cc]") {
    const numeric::context ctx{128};
    std::mt19937_64 rng(19);
    for (const char* name : {"cc-parity", "cc-first", "cc-parity-ln0", "cc-first-ln0",
                             "cc-parity-ln5", "cc-first-ln5"}) {
        auto m = bundled(name);
        auto mb = model::to_scalar<arb_ball>(m, ctx);
        bool parity = std::string(name).find("parity") != std::string::npos;
        for (long n : {2L, 3L, 10L, 100L, 1000L, 10000L}) {
            int samples = n >= 10000 ? 3 : 10;
            for (int s = 0; s < samples; ++s) {
                std::string w = random_bits(static_cast<std::size_t>(n - 1), rng);
                bool label = lang::member(parity ? lang::language::parity : lang::language::first, w);
                INFO(name << ", n = " << n << ", sample " << s);
                auto r = attention::soft_forward(mb, model::parse_input(m, w), ctx);
                arb_ball z = logit_gap(mb, r.y, ctx);
                REQUIRE(numeric::compare(z, numeric::zero<arb_ball>(ctx)) ==
                        (label ? numeric::order::greater : numeric::order::less));
            }
        }
    }
}
