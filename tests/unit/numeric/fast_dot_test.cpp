// The fast interval primitives of the exact hard-attention filter: dot_rows / dot_all /
// dot_argmax (stage 1 of the score filter), dot_acc (the affine maps), the inlined interval
// operations, and the fast conversions from rationals. Every enclosure is checked against exact
// rational arithmetic on random inputs, at points sampled from the input intervals.
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace attnprop::numeric;

namespace {

const context ctx{};

/// Random inputs: doubles with random signs, mantissas and exponents in [emin, emax], intervals
/// of several shapes (points, tight enclosures of rationals, wide ones, ones around 0).
class sampler {
public:
    explicit sampler(std::uint64_t seed, int emin = -40, int emax = 40)
        : rng_(seed), emin_(emin), emax_(emax) {}

    double real() {
        double m = std::uniform_real_distribution<double>(0.5, 1.0)(rng_);
        int e = std::uniform_int_distribution<int>(emin_, emax_)(rng_);
        double x = std::ldexp(m, e);
        return coin() ? -x : x;
    }
    long integer(long bound) { return std::uniform_int_distribution<long>(-bound, bound)(rng_); }
    bool coin() { return (rng_() & 1u) != 0; }
    int pick(int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng_); }

    interval iv() {
        switch (pick(6)) {
        case 0: return interval(real());                                   // a point
        case 1: return interval(0.0);                                      // exact zero
        case 2: {                                                          // tight, non-dyadic
            long q = 3 + pick(20);
            rational r = rational(integer(1000), q) * rational_from_double(real());
            return interval::from_rational(r, ctx);
        }
        case 3: {                                                          // around zero
            double a = std::fabs(real()), b = std::fabs(real());
            return interval(-a, b);
        }
        default: {                                                         // one sign
            double a = real(), b = a + std::fabs(real()) * 1e-3;
            return interval(std::min(a, b), std::max(a, b));
        }
        }
    }
    std::vector<interval> ivs(std::size_t len) {
        std::vector<interval> v;
        for (std::size_t t = 0; t < len; ++t) v.push_back(iv());
        return v;
    }
    /// A rational point of x: an endpoint or an interior point.
    rational point(const interval& x) {
        rational lo = rational_from_double(x.lo()), hi = rational_from_double(x.hi());
        switch (pick(3)) {
        case 0: return lo;
        case 1: return hi;
        default: return lo + (hi - lo) * rational(1, 3);
        }
    }

private:
    std::mt19937_64 rng_;
    int emin_, emax_;
};

rational exact_dot(const std::vector<rational>& a, const std::vector<rational>& b) {
    rational s = 0;
    for (std::size_t t = 0; t < a.size(); ++t) s += a[t] * b[t];
    return s;
}

} // namespace

TEST_CASE("next_up and next_down are std::nextafter", "[numeric][interval][fast]") {
    const double inf = std::numeric_limits<double>::infinity();
    using lim = std::numeric_limits<double>;
    std::vector<double> xs = {0.0,         -0.0,        1.0,         -1.0,
                              lim::denorm_min(), -lim::denorm_min(), lim::min(), lim::max(),
                              -lim::max(), 0x1p-1022,   -0x1p-1022,  3.0};
    sampler s(1, -1074, 1023);
    for (int k = 0; k < 2000; ++k) xs.push_back(s.real());
    for (double x : xs) {
        INFO(x);
        REQUIRE(interval_detail::next_up(x) == std::nextafter(x, inf));
        REQUIRE(interval_detail::next_down(x) == std::nextafter(x, -inf));
    }
}

TEST_CASE("interval arithmetic contains every exact result", "[numeric][interval][fast]") {
    for (auto [seed, emin, emax] : {std::tuple{2, -40, 40}, std::tuple{3, -600, -450},
                                    std::tuple{4, 450, 520}}) {
        sampler s(static_cast<std::uint64_t>(seed), emin, emax);
        for (int k = 0; k < 3000; ++k) {
            interval a = s.iv(), b = s.iv();
            rational x = s.point(a), y = s.point(b);
            INFO(to_string(a) << " " << to_string(b));
            REQUIRE(contains(a + b, x + y));
            REQUIRE(contains(a - b, x - y));
            REQUIRE(contains(a * b, x * y));
            interval acc = s.iv();
            rational z = s.point(acc);
            fma_acc(acc, a, b);
            REQUIRE(contains(acc, z + x * y));
        }
    }
}

TEST_CASE("exact point operations stay points", "[numeric][interval][fast]") {
    sampler s(5);
    for (int k = 0; k < 1000; ++k) {
        long p = s.integer(1L << 26), q = s.integer(1L << 26);
        interval a(static_cast<double>(p)), b(static_cast<double>(q));
        REQUIRE((a * b).is_point());
        REQUIRE((a * b).lo() == static_cast<double>(p * q));
        REQUIRE((a + b).is_point());
        REQUIRE((a - b).lo() == static_cast<double>(p - q));
    }
    // A point times a non-point is not a point, but contains the product.
    interval third = interval::from_rational(rational(1, 3), ctx);
    REQUIRE(contains(interval(3.0) * third, rational(1)));
}

TEST_CASE("from_rational gives the tightest enclosure, for doubles the nearest",
          "[numeric][fast]") {
    sampler s(6);
    std::vector<rational> qs = {rational(0), rational(1), rational(-1, 3), rational(22, 7),
                                rational(1, 1024), rational((1L << 53) + 1, 3),
                                rational(1, (1L << 53) + 1)};
    for (int k = 0; k < 3000; ++k) {
        long den = 1 + std::labs(s.integer(1L << (1 + s.pick(60))));
        qs.push_back(rational(s.integer(1L << (1 + s.pick(60))), den));
    }
    for (const auto& q : qs) {
        INFO(to_exact_string(q));
        interval x = interval::from_rational(q, ctx);
        REQUIRE(contains(x, q));
        if (x.is_point()) {
            REQUIRE(rational_from_double(x.lo()) == q);
        } else {
            REQUIRE(x.hi() == std::nextafter(x.lo(), INFINITY)); // no double strictly inside
        }
        REQUIRE(from_rational<double>(q, ctx) == to_double_nearest(q));
    }
}

TEST_CASE("dot_all and dot_acc contain every exact dot product", "[numeric][fast]") {
    for (auto [seed, emin, emax] : {std::tuple{7, -30, 30}, std::tuple{8, -540, -480},
                                    std::tuple{9, 230, 260}}) {
        sampler s(static_cast<std::uint64_t>(seed), emin, emax);
        for (std::size_t w : {1u, 3u, 8u, 16u, 70u}) {
            for (int round = 0; round < 20; ++round) {
                std::vector<interval> q = s.ivs(w);
                dot_rows rows(w);
                std::vector<std::vector<interval>> keys;
                for (int j = 0; j < 10; ++j) {
                    keys.push_back(s.ivs(w));
                    rows.push_back(keys.back().data());
                }
                std::vector<interval> out(keys.size());
                dot_all(q.data(), rows, out.data());
                for (std::size_t j = 0; j < keys.size(); ++j) {
                    interval acc0 = s.iv();
                    interval acc = dot_acc(acc0, q.data(), keys[j].data(), w);
                    for (int sample = 0; sample < 4; ++sample) {
                        std::vector<rational> qa, ka;
                        for (std::size_t t = 0; t < w; ++t) {
                            qa.push_back(s.point(q[t]));
                            ka.push_back(s.point(keys[j][t]));
                        }
                        rational d = exact_dot(qa, ka);
                        INFO("w = " << w << ", j = " << j);
                        REQUIRE(contains(out[j], d));
                        REQUIRE(contains(acc, s.point(acc0) + d));
                    }
                }
            }
        }
    }
}

TEST_CASE("dot_acc keeps exact integer dot products points; dot_all does not claim to",
          "[numeric][fast]") {
    sampler s(10);
    for (int round = 0; round < 200; ++round) {
        const std::size_t w = 1 + static_cast<std::size_t>(s.pick(20));
        std::vector<interval> a, b;
        rational exact = 0;
        for (std::size_t t = 0; t < w; ++t) {
            long x = s.integer(1000), y = s.integer(1000);
            a.emplace_back(static_cast<double>(x));
            b.emplace_back(static_cast<double>(y));
            exact += rational(x) * rational(y);
        }
        interval r = dot_acc(interval(5.0), a.data(), b.data(), w);
        REQUIRE(r.is_point());
        REQUIRE(rational_from_double(r.lo()) == exact + 5);
        std::vector<std::size_t> idx;
        for (std::size_t t = 0; t < w; t += 2) idx.push_back(t);
        interval sparse = dot_acc(interval(0.0), a.data(), b.data(), idx.data(), idx.size());
        REQUIRE(sparse.is_point());
        dot_rows rows(w);
        rows.push_back(b.data());
        interval fast;
        dot_all(a.data(), rows, &fast);
        REQUIRE(contains(fast, exact));
    }
}

TEST_CASE("dot_acc and dot_all handle unbounded and huge inputs rigorously", "[numeric][fast]") {
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<interval> a = {interval(1.0, 2.0), interval(-inf, 0.0)};
    std::vector<interval> b = {interval(3.0), interval(0.5, 1.0)};
    interval r = dot_acc(interval(0.0), a.data(), b.data(), 2);
    REQUIRE(r.lo() == -inf);
    REQUIRE(contains(r, rational(6)));
    dot_rows rows(2);
    rows.push_back(b.data());
    interval out;
    dot_all(a.data(), rows, &out);
    REQUIRE(out.lo() == -inf);
    REQUIRE(out.hi() == inf);
    REQUIRE(dot_argmax(a.data(), rows) == 1); // undecided: the row count
    // Overflowing products.
    std::vector<interval> big = {interval(1e300, 2e300), interval(1e300)};
    interval o = dot_acc(interval(0.0), big.data(), big.data(), 2);
    REQUIRE(o.hi() == inf);
}

TEST_CASE("dot_argmax decides only true unique maxima, never ties", "[numeric][fast]") {
    sampler s(11, -3, 3);
    int decided = 0;
    for (int round = 0; round < 300; ++round) {
        const std::size_t w = 1 + static_cast<std::size_t>(s.pick(10));
        const std::size_t n = 1 + static_cast<std::size_t>(s.pick(30));
        std::vector<interval> q = s.ivs(w);
        dot_rows rows(w);
        std::vector<std::vector<interval>> keys;
        for (std::size_t j = 0; j < n; ++j) {
            // Sometimes a duplicate of an earlier key: an exact tie that must stay undecided.
            if (j > 0 && s.pick(8) == 0)
                keys.push_back(keys[static_cast<std::size_t>(s.pick(static_cast<int>(j)))]);
            else
                keys.push_back(s.ivs(w));
            rows.push_back(keys.back().data());
        }
        std::size_t j_star = dot_argmax(q.data(), rows);
        if (j_star == n) continue;
        ++decided;
        for (int sample = 0; sample < 5; ++sample) {
            std::vector<rational> qa;
            for (std::size_t t = 0; t < w; ++t) qa.push_back(s.point(q[t]));
            std::vector<rational> d;
            for (const auto& k : keys) {
                std::vector<rational> ka;
                for (std::size_t t = 0; t < w; ++t) ka.push_back(s.point(k[t]));
                d.push_back(exact_dot(qa, ka));
            }
            for (std::size_t j = 0; j < n; ++j)
                if (j != j_star) REQUIRE(d[j] < d[j_star]);
        }
    }
    REQUIRE(decided > 50); // the test exercises the decided branch
    // Identical keys tie exactly: never decided.
    std::vector<interval> q = {interval(1.0), interval(2.0)};
    std::vector<interval> k = {interval(3.0), interval(4.0)};
    dot_rows rows(2);
    rows.push_back(k.data());
    rows.push_back(k.data());
    REQUIRE(dot_argmax(q.data(), rows) == 2);
}
