// The tuned attention kernels agree with the reference algorithms: the soft row kernels for
// double and MPFR give bit-identical results to generic_soft_row, the Arb one encloses it, the
// certified double one's rows of several queries equal its rows one by one, and the filtered
// exact hard path equals hard_forward<rational> on random models with and without ties.
#include "attention/hard.hpp"
#include "attention/hard_exact.hpp"
#include "attention/soft.hpp"
#include "numeric/dinterval_raw.hpp"
#include "test_models.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <sstream>

using namespace attnprop;
using numeric::arb_ball;
using numeric::mpfr_real;
using numeric::rational;

namespace {

/// Random rationals p/q with |p| <= range and q from `dens`.
struct rational_source {
    std::mt19937_64 rng;
    long range;
    std::vector<long> dens;
    rational next() {
        long p = std::uniform_int_distribution<long>(-range, range)(rng);
        long q = dens[std::uniform_int_distribution<std::size_t>(0, dens.size() - 1)(rng)];
        return rational(p, q);
    }
};

/// n random key/value rows and a query, as exact rationals; `repeat` makes rows repeat (so the
/// exp memo hits).
struct soft_instance {
    std::vector<std::vector<rational>> keys, values;
    std::vector<rational> query;
};

soft_instance make_instance(std::uint64_t seed, std::size_t n, std::size_t dk, std::size_t dv,
                            bool repeat) {
    rational_source r{std::mt19937_64(seed), 9, {1, 3, 7, 8}};
    soft_instance in;
    for (std::size_t j = 0; j < n; ++j) {
        if (repeat && j >= 3) {
            in.keys.push_back(in.keys[j % 3]);
        } else {
            std::vector<rational> k;
            for (std::size_t t = 0; t < dk; ++t) k.push_back(r.next());
            in.keys.push_back(k);
        }
        std::vector<rational> v;
        for (std::size_t c = 0; c < dv; ++c) v.push_back(r.next());
        in.values.push_back(v);
    }
    for (std::size_t t = 0; t < dk; ++t) in.query.push_back(r.next());
    return in;
}

template <class S> std::vector<model::vec<S>> convert_rows(const std::vector<std::vector<rational>>& rows,
                                                          const numeric::context& ctx) {
    std::vector<model::vec<S>> out;
    for (const auto& row : rows) out.push_back(model::convert<S>(row, ctx));
    return out;
}

/// Runs the kernel and the reference on the same instance.
template <class S> void run_both(const soft_instance& in, const numeric::context& ctx,
                                 model::vec<S>& kernel, model::vec<S>& kernel_w,
                                 model::vec<S>& reference, model::vec<S>& reference_w) {
    auto keys = convert_rows<S>(in.keys, ctx);
    auto values = convert_rows<S>(in.values, ctx);
    auto q = model::convert<S>(in.query, ctx);
    attention::soft_rows<S> rows(keys, values, ctx);
    kernel = rows.row(q, &kernel_w);
    model::vec<S> again = rows.row(q, nullptr); // scratch reuse gives the same answer
    REQUIRE(again.size() == kernel.size());
    for (std::size_t c = 0; c < kernel.size(); ++c) REQUIRE(numeric::same_value(again[c], kernel[c]));
    reference = attention::detail::generic_soft_row(q, keys, values, ctx, &reference_w);
}

/// A random hard model file: L layers, H heads of width dk, d = H dk, affine updates, entries
/// from `r`, a positional table of n rows.
std::string hard_model_json(rational_source& r, std::size_t n, std::size_t L, std::size_t H,
                            std::size_t dk) {
    const std::size_t d = H * dk;
    auto vec = [&](std::size_t len) {
        std::string s = "[";
        for (std::size_t t = 0; t < len; ++t)
            s += (t ? ", \"" : "\"") + numeric::to_exact_string(r.next()) + "\"";
        return s + "]";
    };
    auto mat = [&](std::size_t rows, std::size_t cols) {
        std::string s = "[";
        for (std::size_t i = 0; i < rows; ++i) s += (i ? ", " : "") + vec(cols);
        return s + "]";
    };
    std::ostringstream o;
    o << R"({"format": "attnprop-model", "version": 1, "name": "random-hard", "attention": "hard",
      "alphabet": ["0", "1"], "eos": "$", "d": )"
      << d << R"(, "token_embedding": {"0": )" << vec(d) << R"(, "1": )" << vec(d)
      << R"(, "$": )" << vec(d) << R"(}, "positional": {"kind": "table", "rows": )"
      << mat(n, d) << R"(}, "input": "add", "layers": [)";
    for (std::size_t k = 0; k < L; ++k) {
        o << (k ? ", " : "") << R"({"heads": [)";
        for (std::size_t h = 0; h < H; ++h)
            o << (h ? ", " : "") << R"({"score": {"kind": "dot", "Q": )" << mat(dk, d)
              << R"(, "K": )" << mat(dk, d) << R"(}, "value": {"kind": "linear", "V": )"
              << mat(dk, d) << "}}";
        o << R"(], "update": {"kind": "affine", "W": )" << mat(d, 2 * d) << R"(, "b": )" << vec(d)
          << "}}";
    }
    o << R"(], "readout": {"kind": "threshold", "w": )" << vec(d) << R"(, "t": 0}})";
    return o.str();
}

} // namespace

TEST_CASE("the double soft row kernel is bit-identical to the reference", "[attention][soft]") {
    const numeric::context ctx{};
    for (bool repeat : {false, true}) {
        auto in = make_instance(repeat ? 2 : 1, 40, 5, 3, repeat);
        model::vec<double> k, kw, r, rw;
        run_both(in, ctx, k, kw, r, rw);
        REQUIRE(k == r);
        REQUIRE(kw == rw);
    }
}

TEST_CASE("the MPFR soft row kernel is bit-identical to the reference", "[attention][soft]") {
    for (long prec : {64L, 256L}) {
        const numeric::context ctx{prec};
        for (bool repeat : {false, true}) {
            auto in = make_instance(repeat ? 4 : 3, 40, 5, 3, repeat);
            model::vec<mpfr_real> k, kw, r, rw;
            run_both(in, ctx, k, kw, r, rw);
            REQUIRE(k.size() == r.size());
            for (std::size_t c = 0; c < k.size(); ++c) {
                REQUIRE(numeric::same_value(k[c], r[c]));
                REQUIRE(k[c].precision() == r[c].precision());
            }
            REQUIRE(kw.size() == rw.size());
            for (std::size_t j = 0; j < kw.size(); ++j) REQUIRE(numeric::same_value(kw[j], rw[j]));
        }
    }
}

TEST_CASE("the Arb soft row kernel encloses the exact row", "[attention][soft]") {
    const numeric::context ctx{128}, hi{512};
    for (bool repeat : {false, true}) {
        auto in = make_instance(repeat ? 6 : 5, 40, 5, 3, repeat);
        model::vec<arb_ball> k, kw, r, rw;
        run_both(in, ctx, k, kw, r, rw);
        model::vec<mpfr_real> m, mw, m2, mw2;
        run_both(in, hi, m, mw, m2, mw2);
        for (std::size_t c = 0; c < k.size(); ++c) {
            REQUIRE(numeric::contains(k[c], m[c]));
            REQUIRE(numeric::radius_as_double(k[c]) < 1e-30);
        }
        for (std::size_t j = 0; j < kw.size(); ++j) REQUIRE(numeric::contains(kw[j], mw[j]));
    }
}

TEST_CASE("the filtered exact hard path equals hard_forward<rational> on random models",
          "[attention][hard]") {
    const numeric::context ctx{};
    // Non-dyadic weights (no ties), small integers (many exact ties), and halves and thirds
    // (ties that only rationals decide are rare but possible).
    std::vector<std::pair<long, std::vector<long>>> kinds = {
        {13, {7, 11, 13}}, {1, {1}}, {2, {1, 2, 3}}};
    std::uint64_t seed = 100;
    for (const auto& [range, dens] : kinds) {
        for (int round = 0; round < 4; ++round) {
            rational_source r{std::mt19937_64(++seed), range, dens};
            const std::size_t n = 12 + static_cast<std::size_t>(round) * 7;
            auto m = model::parse_model(hard_model_json(r, n, 2, 2, 3), "random-hard");
            std::mt19937_64 rng(seed);
            model::input_sequence x(n, 2);
            for (std::size_t i = 0; i + 1 < n; ++i) x[i] = static_cast<int>(rng() & 1u);
            auto ref = attention::hard_forward(m, x, ctx, true);
            auto fast = attention::hard_forward_exact(m, x, ctx, true);
            REQUIRE(fast.y == ref.y);
            REQUIRE(fast.trace->choice == ref.trace->choice);
            REQUIRE(fast.trace->y == ref.trace->y);
        }
    }
}

TEST_CASE("the certified double soft rows of several queries over one pass equal the rows one by "
          "one, and the row from per-row sums encloses the exact row",
          "[attention][soft]") {
    using numeric::dinterval;
    using rows_t = attention::soft_rows<dinterval>;
    const numeric::context ctx{53};
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        for (std::size_t n : {1, 5, 64, 67, 200}) {
            INFO("seed " << seed << ", n " << n);
            const auto in = make_instance(seed, n, 6, 6, false);
            const auto keys = convert_rows<dinterval>(in.keys, ctx);
            const auto values = convert_rows<dinterval>(in.values, ctx);
            std::vector<std::vector<rational>> rq;
            std::vector<model::vec<dinterval>> qs;
            for (std::uint64_t k = 0; k < 3; ++k) {
                rq.push_back(make_instance(seed * 31 + k, 1, 6, 1, false).query);
                qs.push_back(model::convert<dinterval>(rq.back(), ctx));
            }
            rows_t one(keys, values, ctx), many(keys, values, ctx);
            std::vector<rows_t::row_sums> out(3);
            const model::vec<dinterval>* ptrs[3] = {&qs[0], &qs[1], &qs[2]};
            REQUIRE(many.sums_many(ptrs, 3, out.data()));
            for (std::size_t h = 0; h < 3; ++h) {
                rows_t::row_sums rs;
                REQUIRE(one.sums(qs[h], rs));
                CHECK(rs.shift == out[h].shift);
                CHECK(rs.tau == out[h].tau);
                CHECK(rs.den.lo() == out[h].den.lo());
                CHECK(rs.den.hi() == out[h].den.hi());
                for (std::size_t c = 0; c < rs.num.size(); ++c) {
                    CHECK(rs.num[c].lo() == out[h].num[c].lo());
                    CHECK(rs.num[c].hi() == out[h].num[c].hi());
                }
                for (std::size_t j = 0; j < n; ++j) CHECK(rs.exp_mid[j] == out[h].exp_mid[j]);
            }
            // Keys and values one set of rows, described by per-row sums (the constructor of
            // the certified profile's top row): the quotient encloses the exact row.
            std::vector<double> mid(n * 6), m1(n, 0.0), r1(n, 0.0), vrad(6, 0.0), vabs(6, 0.0);
            for (std::size_t j = 0; j < n; ++j)
                for (std::size_t c = 0; c < 6; ++c) {
                    double m = 0, r = 0;
                    REQUIRE(numeric::mid_rad(keys[j][c], m, r));
                    r += 0x1p-30; // a wider radius than the interval's: any upper bound
                    mid[j * 6 + c] = m;
                    m1[j] += std::fabs(m);
                    r1[j] += r;
                    vrad[c] = std::max(vrad[c], r);
                    vabs[c] = std::max(vabs[c], std::fabs(m));
                }
            rows_t from_sums(keys, mid.data(), 6, m1.data(), r1.data(), vrad.data(), vabs.data(),
                             ctx);
            rows_t::row_sums rs;
            REQUIRE(from_sums.sums(qs[0], rs));
            const numeric::context ctx512{512};
            const auto exact = attention::detail::generic_soft_row<mpfr_real>(
                model::convert<mpfr_real>(rq[0], ctx512), convert_rows<mpfr_real>(in.keys, ctx512),
                convert_rows<mpfr_real>(in.keys, ctx512), ctx512, nullptr);
            REQUIRE(exact.size() == 6);
            for (std::size_t c = 0; c < 6; ++c) {
                INFO("coordinate " << c);
                CHECK(numeric::contains(dinterval(rs.num[c] / rs.den), exact[c]));
            }
        }
    }
}

namespace {

/// The candidate scans of leftmost_argmax and maximal_positions written out by their
/// definitions with compare() on every pair (O(n^2)): the reference of their one-pass forms.
std::vector<std::size_t> leftmost_candidates(const std::vector<numeric::interval>& s) {
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < s.size(); ++j) {
        bool excluded = false;
        for (std::size_t k = 0; k < s.size() && !excluded; ++k) {
            const numeric::order o = numeric::compare(s[k], s[j]);
            excluded = k < j ? numeric::certainly_not_less(o) : (k > j && o == numeric::order::greater);
        }
        if (!excluded) out.push_back(j);
    }
    return out;
}

std::vector<std::size_t> maximal_candidates(const std::vector<numeric::interval>& s) {
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < s.size(); ++j) {
        bool excluded = false;
        for (std::size_t k = 0; k < s.size() && !excluded; ++k)
            excluded = numeric::compare(s[k], s[j]) == numeric::order::greater;
        if (!excluded) out.push_back(j);
    }
    return out;
}

} // namespace

TEST_CASE("the candidate scans of interval rows equal their pairwise definitions",
          "[attention][hard]") {
    // Rows of points and narrow intervals drawn from few values, so that equal points,
    // overlapping intervals and touching ends are frequent, and long rows of overlapping
    // scores (where the pairwise scan is quadratic) occur.
    const std::uint64_t seed = 90210;
    std::mt19937_64 rng(seed);
    std::size_t undecided = 0, rows = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const std::size_t n = 1 + rng() % (trial % 10 == 0 ? 300 : 12);
        const int levels = 1 + static_cast<int>(rng() % 4);
        std::vector<numeric::interval> s;
        for (std::size_t j = 0; j < n; ++j) {
            const double v = static_cast<double>(rng() % static_cast<unsigned>(levels));
            switch (rng() % 4) {
            case 0: s.emplace_back(v); break;
            case 1: s.emplace_back(v, v + 0.5); break;
            case 2: s.emplace_back(v - 0.5, v); break;
            default: s.emplace_back(v - 0.25, v + 0.25); break;
            }
        }
        INFO("seed " << seed << ", trial " << trial << ", n " << n);
        ++rows;
        const auto want = leftmost_candidates(s);
        const auto got = attention::leftmost_argmax(s);
        if (want.size() == 1) {
            REQUIRE(got.decided);
            REQUIRE(got.index == want.front());
        } else {
            ++undecided;
            REQUIRE_FALSE(got.decided);
            REQUIRE(got.candidates == want);
        }
        const auto all = maximal_candidates(s);
        const auto got_all = attention::maximal_positions(s);
        REQUIRE(got_all.positions == all);
        // Decided: one candidate, or every candidate certainly equal to the first.
        bool equal = true;
        for (std::size_t t = 1; t < all.size(); ++t)
            equal = equal && numeric::compare(s[all[t]], s[all.front()]) == numeric::order::equal;
        REQUIRE(got_all.decided == equal);
    }
    INFO(undecided << " of " << rows << " rows undecided");
    CHECK(undecided * 4 > rows);
}
