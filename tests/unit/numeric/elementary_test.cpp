// The certified elementary functions of the double kind (numeric/elementary.hpp): every
// enclosure contains the true value, decided against MPFR at 256 bits with directed rounding
// (the MPFR values below and above the truth must both lie inside), on random and adversarial
// arguments: near overflow and underflow, subnormals, ties of the range reduction, the
// boundaries between the methods. The proved error bounds of docs/scalars.md are checked as
// measured maxima, and a negative control shows that an enclosure without its error term is
// caught by the same check.
#include "numeric/dinterval.hpp"
#include "numeric/elementary.hpp"

#include <catch2/catch.hpp>
#include <mpfr.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

using namespace attnprop::numeric;
namespace ed = attnprop::numeric::elementary_detail;

namespace {

constexpr std::uint64_t seed = 20261204;
constexpr double u = 0x1p-53;

using mpfr_fn = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

/// The function at x at 256 bits rounded down and up (so the truth lies between).
struct reference {
    mpfr_t lo, hi, x;
    reference() {
        mpfr_inits2(256, lo, hi, x, static_cast<mpfr_ptr>(nullptr));
    }
    ~reference() { mpfr_clears(lo, hi, x, static_cast<mpfr_ptr>(nullptr)); }
    void eval(mpfr_fn f, double arg) {
        mpfr_set_d(x, arg, MPFR_RNDN); // exact
        f(lo, x, MPFR_RNDD);
        f(hi, x, MPFR_RNDU);
    }
    /// Whether [a, b] contains [lo, hi].
    bool inside(const interval& r) const {
        return mpfr_cmp_d(lo, r.lo()) >= 0 && mpfr_cmp_d(hi, r.hi()) <= 0;
    }
    /// |v - truth| / |truth| (for a nonzero truth), as a double.
    double rel_error(double v) const {
        mpfr_t d;
        mpfr_init2(d, 256);
        mpfr_sub_d(d, lo, v, MPFR_RNDN);
        mpfr_div(d, d, lo, MPFR_RNDN);
        const double r = std::fabs(mpfr_get_d(d, MPFR_RNDN));
        mpfr_clear(d);
        return r;
    }
};

int mpfr_expm1_fn(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) { return mpfr_expm1(r, x, rnd); }

/// Checks that f_enc(x) encloses the MPFR function at x for every x in xs.
void check_all(const char* name, mpfr_fn f, const std::function<interval(double)>& f_enc,
               const std::vector<double>& xs) {
    reference ref;
    for (double x : xs) {
        ref.eval(f, x);
        const interval r = f_enc(x);
        if (!ref.inside(r)) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "%s(%a) = [%a, %a] misses the truth (seed %llu)", name,
                          x, r.lo(), r.hi(), static_cast<unsigned long long>(seed));
            FAIL(buf);
        }
    }
}

std::vector<double> uniform(std::mt19937_64& rng, double a, double b, int count) {
    std::uniform_real_distribution<double> d(a, b);
    std::vector<double> out;
    for (int t = 0; t < count; ++t) out.push_back(d(rng));
    return out;
}

/// Random doubles with random exponents (log-uniform magnitudes), positive.
std::vector<double> log_uniform(std::mt19937_64& rng, int emin, int emax, int count) {
    std::uniform_real_distribution<double> m(1.0, 2.0);
    std::uniform_int_distribution<int> e(emin, emax);
    std::vector<double> out;
    for (int t = 0; t < count; ++t) out.push_back(std::ldexp(m(rng), e(rng)));
    return out;
}

/// Arguments at and around (k + 1/2) ln 2, where the range reduction's rounding of k ties.
std::vector<double> reduction_ties(int kmin, int kmax) {
    std::vector<double> out;
    for (int k = kmin; k <= kmax; k += 7) {
        const double x = (k + 0.5) * 0.6931471805599453;
        double y = x;
        for (int s = 0; s < 4; ++s) {
            out.push_back(y);
            y = std::nextafter(y, INFINITY);
        }
        y = x;
        for (int s = 0; s < 4; ++s) {
            y = std::nextafter(y, -INFINITY);
            out.push_back(y);
        }
    }
    return out;
}

} // namespace

TEST_CASE("ln 2 = ln2_hi + ln2_lo to within 2^-80, and k ln2_hi is exact", "[numeric][elementary]") {
    mpfr_t l, s;
    mpfr_inits2(512, l, s, static_cast<mpfr_ptr>(nullptr));
    mpfr_const_log2(l, MPFR_RNDN);
    mpfr_set_d(s, ed::ln2_hi, MPFR_RNDN);
    mpfr_add_d(s, s, ed::ln2_lo, MPFR_RNDN);
    mpfr_sub(l, l, s, MPFR_RNDN);
    REQUIRE(std::fabs(mpfr_get_d(l, MPFR_RNDN)) <= 0x1p-80);
    mpfr_clears(l, s, static_cast<mpfr_ptr>(nullptr));
    // 32 significant bits: k ln2_hi exact for |k| <= 1100.
    for (int k = -1100; k <= 1100; ++k) {
        const double p = k * ed::ln2_hi;
        REQUIRE(std::fma(k, ed::ln2_hi, -p) == 0.0);
    }
}

TEST_CASE("exp_fast meets its proved relative error bound", "[numeric][elementary]") {
    std::mt19937_64 rng(seed);
    std::vector<double> xs = uniform(rng, ed::exp_fast_min, ed::exp_fast_max, 20000);
    auto ties = reduction_ties(-1020, 1022);
    xs.insert(xs.end(), ties.begin(), ties.end());
    for (double x : {0.0, -0.0, 1e-300, -1e-300, 0.34657359027997264, -0.34657359027997264,
                     ed::exp_fast_min, ed::exp_fast_max, 1.0, -1.0, 700.0, -700.0})
        xs.push_back(x);
    reference ref;
    double worst = 0;
    for (double x : xs) {
        ref.eval(mpfr_exp, x);
        worst = std::max(worst, ref.rel_error(ed::exp_fast(x)));
    }
    INFO("largest relative error " << worst / u << " u (seed " << seed << ")");
    REQUIRE(worst <= 4.3 * u); // the proved bound; exp_fast_rel_error = 8 u leaves room
    REQUIRE(ed::exp_fast(0.0) == 1.0); // the row maximum's weight is exactly 1
}

TEST_CASE("exp, expm1, log, sqrt, tanh enclose the truth", "[numeric][elementary]") {
    std::mt19937_64 rng(seed + 1);
    SECTION("exp") {
        std::vector<double> xs = uniform(rng, -750, 712, 5000);
        auto t = reduction_ties(-1020, 1022);
        xs.insert(xs.end(), t.begin(), t.end());
        for (double x : {709.78, 709.7827128933840, 709.79, 710.0, -745.13, -745.2, -746.0, -707.5,
                         -708.0, 709.5, 0.0, 5e-324, -5e-324, 1e-310})
            xs.push_back(x);
        check_all("exp", mpfr_exp, exp_enclosure, xs);
        REQUIRE(exp_enclosure(0.0).is_point());
        REQUIRE(exp_enclosure(800.0).hi() == INFINITY);
        REQUIRE(exp_enclosure(-800.0).lo() == 0.0);
    }
    SECTION("expm1") {
        std::vector<double> xs = uniform(rng, -0.7, 0.7, 5000);
        auto small = log_uniform(rng, -1074, -1, 2000);
        for (double x : small) {
            xs.push_back(x);
            xs.push_back(-x);
        }
        auto wide = uniform(rng, -40, 40, 1000);
        xs.insert(xs.end(), wide.begin(), wide.end());
        for (double x : {0.7, -0.7, std::nextafter(0.7, 1.0), std::nextafter(-0.7, -1.0), 5e-324})
            xs.push_back(x);
        check_all("expm1", mpfr_expm1_fn, expm1_enclosure, xs);
    }
    SECTION("log") {
        std::vector<double> xs = log_uniform(rng, -1074, 1023, 5000);
        for (double x : {1.0, std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0), 2.0, 0.5,
                         0.70710678118654752, 0.7071067811865475, 1.4142135623730951, DBL_MAX,
                         DBL_MIN, 5e-324, 1e-310, 3.0, 10.0})
            xs.push_back(x);
        check_all("log", mpfr_log, log_enclosure, xs);
        REQUIRE(log_enclosure(1.0).is_point());
        REQUIRE(!std::isfinite(log_enclosure(0.0).lo()));
        REQUIRE(!std::isfinite(log_enclosure(-1.0).lo()));
    }
    SECTION("sqrt") {
        std::vector<double> xs = log_uniform(rng, -1074, 1023, 5000);
        for (double x : {4.0, 2.0, 0.25, DBL_MAX, 5e-324}) xs.push_back(x);
        check_all("sqrt", mpfr_sqrt, sqrt_enclosure, xs);
        REQUIRE(sqrt_enclosure(4.0).is_point());
        REQUIRE(sqrt_enclosure(0.25).is_point());
    }
    SECTION("tanh") {
        std::vector<double> xs = uniform(rng, -25, 25, 5000);
        auto small = log_uniform(rng, -1074, -2, 2000);
        for (double x : small) {
            xs.push_back(x);
            xs.push_back(-x);
        }
        for (double x : {0.35, std::nextafter(0.35, 1.0), -0.35, 20.0, std::nextafter(20.0, 0.0),
                         19.999, 1e300, -1e300})
            xs.push_back(x);
        check_all("tanh", mpfr_tanh, tanh_enclosure, xs);
        REQUIRE(tanh_enclosure(0.0).is_point());
    }
    SECTION("sin and cos, points and wide intervals") {
        std::vector<double> xs = uniform(rng, -1e5, 1e5, 2000);
        auto near = uniform(rng, -10, 10, 2000);
        xs.insert(xs.end(), near.begin(), near.end());
        check_all("sin", mpfr_sin, [](double x) { return sin_enclosure(interval(x)); }, xs);
        check_all("cos", mpfr_cos, [](double x) { return cos_enclosure(interval(x)); }, xs);
        // [0, 4] contains the maximum of sin at pi/2 and the minimum of cos at pi.
        REQUIRE(sin_enclosure(interval(0.0, 4.0)).hi() >= 1.0);
        REQUIRE(cos_enclosure(interval(0.0, 4.0)).lo() <= -1.0);
    }
}

TEST_CASE("negative control: an exp enclosure without its error term is caught",
          "[numeric][elementary]") {
    std::mt19937_64 rng(seed + 2);
    const std::vector<double> xs = uniform(rng, -700, 700, 2000);
    reference ref;
    int misses = 0;
    for (double x : xs) {
        ref.eval(mpfr_exp, x);
        if (!ref.inside(interval(ed::exp_fast(x)))) ++misses;
    }
    INFO("seed " << seed + 2);
    REQUIRE(misses > 1000); // a point is almost never the true value
}

TEST_CASE("certified intervals: monotone extensions and undefined domains", "[numeric][dinterval]") {
    const dinterval x(0.5, 2.0);
    const dinterval e = exp(x);
    REQUIRE(e.lo() <= std::exp(0.5));
    REQUIRE(e.hi() >= std::exp(2.0));
    REQUIRE(!is_finite(log(dinterval(-1.0, 1.0))));
    REQUIRE(!is_finite(sqrt(dinterval(-1.0, 1.0))));
    REQUIRE(is_finite(sqrt_nonneg(dinterval(-1e-20, 1.0))));
    REQUIRE(!is_finite(dinterval(1.0) / dinterval(-1.0, 1.0)));
    const dinterval t = tanh(dinterval(-1.0, 1.0));
    REQUIRE(t.lo() <= std::tanh(-1.0));
    REQUIRE(t.hi() >= std::tanh(1.0));
    // Display goes through the ball with the same reals.
    REQUIRE(contains(to_ball(dinterval(1.0, 3.0)), rational(2)));
    REQUIRE(contains(from_ball(to_ball(dinterval(1.0, 3.0))), rational(3)));
}
