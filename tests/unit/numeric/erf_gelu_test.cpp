// erf, erfc and the exact GELU in every real scalar kind, against MPFR at 512 bits or more: the
// enclosure kinds (Arb balls, certified double intervals, differential balls) must contain the
// truth, the rounded kinds (double, MPFR) must be close to it. A negative control shows that
// the GELU written with erf (1 + erf(x / sqrt 2)) loses the relative accuracy that the erfc form
// keeps for negative arguments.
#include "numeric/elementary.hpp"
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

using namespace attnprop::numeric;

namespace {

constexpr std::uint64_t seed = 20261205;
const context ref_ctx{512};

/// The reference value of f(x) at 512 bits (x converted exactly; MPFR's erf and erfc are
/// correctly rounded).
using mpfr_fn = std::function<mpfr_real(const mpfr_real&)>;

mpfr_real ref_erf(const mpfr_real& x) { return erf(x); }
mpfr_real ref_erfc(const mpfr_real& x) { return erfc(x); }
/// x Phi(x) written as x (1 + erf(x / sqrt 2)) / 2, an independent formula (the kernel uses
/// erfc), at 512 + 0.75 x^2 bits: 1 + erf(x / sqrt 2) = erfc(-x / sqrt 2) ~ e^(-x^2 / 2) cancels
/// about 0.72 x^2 bits (at x = -37.5, 1 + erf ~ 3e-307).
mpfr_real ref_gelu(double xd) {
    const context c{512 + static_cast<long>(0.75 * xd * xd)};
    const mpfr_real x = mpfr_real::from_double(xd, c);
    const mpfr_real two = from_int<mpfr_real>(2, c);
    const mpfr_real one = from_int<mpfr_real>(1, c);
    return x * (one + erf(x / sqrt(two))) / two;
}

mpfr_real at_ref(double x) { return mpfr_real::from_double(x, ref_ctx); }

/// |a - b| / |b| (b != 0) as a double.
double rel_diff(const mpfr_real& a, const mpfr_real& b) {
    return std::fabs(to_double((a - b) / b));
}

std::vector<double> arguments() {
    std::mt19937_64 rng(seed);
    std::vector<double> xs;
    std::uniform_real_distribution<double> wide(-12, 12), narrow(-2, 2);
    for (int k = 0; k < 150; ++k) xs.push_back(wide(rng));
    for (int k = 0; k < 150; ++k) xs.push_back(narrow(rng));
    for (double x : {0.0, 1.0, -1.0, 1e-300, -1e-300, 5e-324, 1.4142135623730951,
                     -1.4142135623730951, -0.7517915241, 6.0, -6.0, 26.0, -26.0, -37.5, 40.0})
        xs.push_back(x);
    return xs;
}

} // namespace

TEST_CASE("erf and erfc: every kind against MPFR", "[numeric][erf]") {
    const context ball_ctx{128};
    for (double x : arguments()) {
        INFO("x = " << x << " (seed " << seed << ")");
        const mpfr_real rx = at_ref(x);
        for (auto [name, ref_fn] : {std::pair<const char*, mpfr_fn>{"erf", ref_erf},
                                    std::pair<const char*, mpfr_fn>{"erfc", ref_erfc}}) {
            INFO(name);
            const bool is_erf = std::string(name) == "erf";
            const mpfr_real truth = ref_fn(rx);
            // Arb balls contain the truth.
            const arb_ball b = arb_ball::from_double(x, ball_ctx);
            REQUIRE(contains(is_erf ? erf(b) : erfc(b), truth));
            // Certified intervals contain it.
            const dinterval di = is_erf ? erf(dinterval(x)) : erfc(dinterval(x));
            REQUIRE(contains(di, truth));
            REQUIRE(is_finite(di));
            // MPFR at 256 bits is correctly rounded; double is within a few ulps (libm).
            const mpfr_real m = is_erf ? erf(mpfr_real::from_double(x, context{256}))
                                       : erfc(mpfr_real::from_double(x, context{256}));
            if (mpfr_zero_p(truth.raw()) == 0) {
                REQUIRE(rel_diff(m, truth) < 0x1p-250);
                const double d = is_erf ? attnprop::numeric::erf(x) : attnprop::numeric::erfc(x);
                if (std::fabs(to_double(truth)) > 1e-300)
                    REQUIRE(rel_diff(mpfr_real::from_double(d, ref_ctx), truth) < 1e-14);
            }
        }
    }
    // Exact values and limits stay exact.
    REQUIRE(erf_enclosure(0.0).is_point());
    REQUIRE(erfc_enclosure(0.0).lo() == 1.0);
    REQUIRE(erf(dinterval::entire()).lo() == -1.0);
    REQUIRE(erf(dinterval::entire()).hi() == 1.0);
    REQUIRE(erfc(dinterval::entire()).lo() == 0.0);
    REQUIRE(erfc(dinterval::entire()).hi() == 2.0);
    // Monotone extensions: the image of [a, b] lies between the end points' values.
    const dinterval w = erf(dinterval(-0.5, 2.0));
    REQUIRE(w.lo() <= std::erf(-0.5));
    REQUIRE(w.hi() >= std::erf(2.0));
    REQUIRE(w.hi() - w.lo() < std::erf(2.0) - std::erf(-0.5) + 1e-15);
}

TEST_CASE("gelu: every kind against MPFR", "[numeric][gelu]") {
    const context ball_ctx{128};
    const context mp_ctx{256};
    for (double x : arguments()) {
        INFO("x = " << x << " (seed " << seed << ")");
        const mpfr_real truth = ref_gelu(x);
        REQUIRE(contains(gelu(arb_ball::from_double(x, ball_ctx), ball_ctx), truth));
        REQUIRE(contains(gelu(dinterval(x), mp_ctx), truth));
        if (x == 0) {
            REQUIRE(mpfr_zero_p(truth.raw()) != 0);
            continue;
        }
        // The erfc form keeps relative accuracy everywhere, also far left (gelu(-37.5) ~ 1e-307).
        REQUIRE(rel_diff(gelu(mpfr_real::from_double(x, mp_ctx), mp_ctx), truth) < 0x1p-245);
        const double g = gelu(x, mp_ctx);
        if (std::fabs(to_double(truth)) > 1e-290)
            REQUIRE(rel_diff(mpfr_real::from_double(g, ref_ctx), truth) < 1e-13);
        // The certified interval is narrow: a few ulps of the value times its condition number
        // (about x^2 for x << 0, where gelu(x) ~ x erfc(-x / sqrt 2) / 2 varies like e^(-x^2/2)).
        const dinterval gi = gelu(dinterval(x), mp_ctx);
        if (std::fabs(to_double(truth)) > 1e-290)
            REQUIRE(gi.hi() - gi.lo() <= 1e-15 * (4 + x * x) * std::fabs(to_double(truth)));
    }
    // PyTorch's reference values (torch.nn.functional.gelu in float64).
    REQUIRE(gelu(1.0, mp_ctx) == Approx(0.8413447460685429).epsilon(1e-15));
    REQUIRE(gelu(-1.0, mp_ctx) == Approx(-0.15865525393145707).epsilon(1e-15));
}

TEST_CASE("negative control: gelu as x (1 + erf(x / sqrt 2)) / 2 cancels for x << 0",
          "[numeric][gelu]") {
    const context mp_ctx{256};
    const double x = -30.0;
    const mpfr_real truth = ref_gelu(x);
    const mpfr_real xm = mpfr_real::from_double(x, mp_ctx);
    const mpfr_real two = from_int<mpfr_real>(2, mp_ctx);
    const mpfr_real naive = xm * (from_int<mpfr_real>(1, mp_ctx) + erf(xm / sqrt(two))) / two;
    // 1 + erf(-30 / sqrt 2) = erfc(21.2) ~ 1e-197 is below 2^-256 of 1: the naive form is 0.
    REQUIRE(rel_diff(naive, truth) > 0.5);
    REQUIRE(rel_diff(gelu(xm, mp_ctx), truth) < 0x1p-245);
}

TEST_CASE("diff_ball: erf, erfc and gelu enclose both runs and the change",
          "[numeric][diff][gelu]") {
    const context lo{96}, hi{512};
    std::mt19937_64 rng(seed + 1);
    std::uniform_int_distribution<long> num(-60, 60), den(1, 13);
    for (int k = 0; k < 150; ++k) {
        const rational x(num(rng), den(rng));
        const rational dy = k % 3 == 0 ? rational(0) : k % 3 == 1 ? rational(1, 1000000)
                                                                 : rational(num(rng), 7);
        const rational y = x + dy;
        INFO("x = " << to_exact_string(x) << ", y = " << to_exact_string(y) << " (seed "
                    << seed + 1 << ")");
        const diff_ball p(arb_ball::from_rational(x, lo), arb_ball::from_rational(y, lo),
                          arb_ball::from_rational(rational(y - x), lo));
        auto check = [&](const diff_ball& r, const arb_ball& rx, const arb_ball& ry) {
            REQUIRE(arb_overlaps(r.first().raw(), rx.raw()));
            REQUIRE(arb_overlaps(r.second().raw(), ry.raw()));
            REQUIRE(arb_overlaps(r.change().raw(), (ry - rx).raw()));
            REQUIRE(is_finite(r));
            if (dy == 0) REQUIRE(r.unchanged());
        };
        const arb_ball bx = arb_ball::from_rational(x, hi), by = arb_ball::from_rational(y, hi);
        check(erf(p), erf(bx), erf(by));
        check(erfc(p), erfc(bx), erfc(by));
        check(gelu(p, lo), gelu(bx, hi), gelu(by, hi));
    }
    // A tiny change keeps its relative accuracy (a difference of two balls would not).
    const rational x(1, 3);
    namespace mp = boost::multiprecision;
    const rational tiny = rational(1) / rational(mp::pow(mp::mpz_int(2), 200));
    const rational y = x + tiny;
    const diff_ball p(arb_ball::from_rational(x, lo), arb_ball::from_rational(y, lo),
                      arb_ball::from_rational(rational(y - x), lo));
    REQUIRE(arb_rel_accuracy_bits(erf(p).change().raw()) > 60);
    REQUIRE(arb_rel_accuracy_bits(gelu(p, lo).change().raw()) > 60);
}
