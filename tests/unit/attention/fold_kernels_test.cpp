// The fold's block kernels (attention/fold_kernels.hpp): the AVX2 set gives the baseline
// set's bits (NaN as NaN) on random and special inputs (zeros, subnormals, infinities, NaN,
// huge values), for block sizes up to the capacity; the simple kernels match a loop written out
// here.
#include "attention/fold_kernels.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace fold = attnprop::attention::fold;

namespace {

constexpr std::size_t cap = 64; // a block's capacity, as fold_interval's
constexpr std::uint64_t seed = 20261206;

/// Random doubles: mostly ordinary values of mixed sign and scale, with `special` of them
/// zeros, subnormals, infinities, NaN and values near the largest double.
std::vector<double> values(std::mt19937_64& rng, std::size_t count, bool nonnegative,
                           double special = 0.1) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<int> scale(-30, 30), kind(0, 5);
    std::vector<double> v(count);
    for (auto& x : v) {
        if (unit(rng) < special) {
            const double picks[6] = {0.0, 0x1p-1070, std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN(), 0x1.fffp1023,
                                     0x1p-600};
            x = picks[kind(rng)];
        } else {
            x = std::ldexp(unit(rng), scale(rng));
        }
        if (!nonnegative && unit(rng) < 0.5) x = -x;
    }
    return v;
}

/// The same bits, or both NaN (a NaN's sign and payload may follow the order of an
/// instruction's operands, which the two sets need not share; a NaN only ever means "not
/// finite" to the fold).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i]) &&
            !(std::isnan(a[i]) && std::isnan(b[i])))
            return false;
    return true;
}

/// The sets to compare with the baseline: the AVX2 set where this processor has it.
const fold::kernel_set* other_set() {
    const fold::kernel_set* k = fold::avx2_kernels();
    if (!k) WARN("no AVX2 kernel set on this build or processor: the baseline set alone runs");
    return k;
}

} // namespace

TEST_CASE("fold kernels: the set in use is AVX2 exactly where it is available", "[fold]") {
    const fold::kernel_set* avx2 = fold::avx2_kernels();
    CHECK(&fold::kernels() == (avx2 ? avx2 : &fold::baseline_kernels()));
    CHECK(std::string(fold::baseline_kernels().name) == "baseline");
    if (avx2) CHECK(std::string(avx2->name) == "avx2");
}

TEST_CASE("fold kernels: block_scores, to_rows, abs_max, table_column and quotient_max match "
          "their loops, in every set",
          "[fold]") {
    std::mt19937_64 rng(seed);
    const fold::kernel_set& base = fold::baseline_kernels();
    const fold::kernel_set* other = other_set();
    for (std::size_t B : {std::size_t{1}, std::size_t{3}, std::size_t{17}, cap}) {
        for (std::size_t d : {std::size_t{1}, std::size_t{5}, std::size_t{16}}) {
            INFO("seed " << seed << ", B = " << B << ", d = " << d);
            const auto a = values(rng, d, false), m = values(rng, d * cap, false);
            // block_scores: out[b] = sum_c a[c] m[c cap + b] in index order from 0.
            std::vector<double> want(B, 0.0), got(B), got2(B);
            for (std::size_t b = 0; b < B; ++b) {
                double acc = 0.0;
                for (std::size_t c = 0; c < d; ++c) acc += a[c] * m[c * cap + b];
                want[b] = acc;
            }
            base.block_scores(a.data(), d, m.data(), cap, got.data(), B);
            CHECK(same_bits(got, want));
            if (other) {
                other->block_scores(a.data(), d, m.data(), cap, got2.data(), B);
                CHECK(same_bits(got2, want));
            }
            // to_rows: the transposition.
            std::vector<double> rows(B * d), rows2(B * d), rows_want(B * d);
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t c = 0; c < d; ++c) rows_want[b * d + c] = m[c * cap + b];
            base.to_rows(m.data(), cap, d, rows.data(), B);
            CHECK(same_bits(rows, rows_want));
            if (other) {
                other->to_rows(m.data(), cap, d, rows2.data(), B);
                CHECK(same_bits(rows2, rows_want));
            }
            // abs_max: a running maximum per coordinate and row over the masked rows (finite
            // values, as the fold's folded rows are).
            auto fin = values(rng, d * cap, false, 0.0);
            std::vector<double> mask(cap);
            for (auto& x : mask) x = (rng() % 3 == 0) ? 0.0 : 1.0;
            std::vector<double> v0 = values(rng, d * cap, true, 0.0), vw = v0, v1 = v0, v2 = v0;
            for (std::size_t c = 0; c < d; ++c)
                for (std::size_t b = 0; b < B; ++b)
                    if (mask[b] != 0)
                        vw[c * cap + b] = std::max(vw[c * cap + b], std::fabs(fin[c * cap + b]));
            base.abs_max(fin.data(), cap, d, mask.data(), v1.data(), B);
            CHECK(same_bits(v1, vw));
            if (other) {
                other->abs_max(fin.data(), cap, d, mask.data(), v2.data(), B);
                CHECK(same_bits(v2, vw));
            }
        }
        INFO("seed " << seed << ", B = " << B);
        // table_column (every tau below 1/2: growth factors in (1/2, 1] and (1, 3/2]).
        std::uniform_real_distribution<double> lo_f(0.5, 1.0), hi_f(1.0, 1.5);
        std::vector<double> e = values(rng, cap, true), glo(cap), ghi(cap), zero(cap);
        for (std::size_t b = 0; b < cap; ++b) {
            if (!std::isfinite(e[b]) || e[b] > 1e300) e[b] = 0.0; // tabled E are finite
            glo[b] = std::nextafter(lo_f(rng), 2.0);
            ghi[b] = std::nextafter(hi_f(rng), 2.0);
            zero[b] = std::ldexp(1.0, -700);
        }
        std::vector<double> lo(B), hi(B), lo2(B), hi2(B), lo_w(B), hi_w(B);
        for (std::size_t b = 0; b < B; ++b) {
            lo_w[b] = e[b] > 0 ? std::nextafter(e[b] * glo[b], 0.0) : 0.0;
            hi_w[b] = e[b] > 0 ? std::nextafter(e[b] * ghi[b], HUGE_VAL) : zero[b];
        }
        base.table_column(e.data(), glo.data(), ghi.data(), zero.data(), lo.data(), hi.data(), B);
        CHECK(same_bits(lo, lo_w));
        CHECK(same_bits(hi, hi_w));
        if (other) {
            other->table_column(e.data(), glo.data(), ghi.data(), zero.data(), lo2.data(),
                                hi2.data(), B);
            CHECK(same_bits(lo2, lo_w));
            CHECK(same_bits(hi2, hi_w));
        }
        // quotient_max: the quotients in place, their largest, and validity.
        for (int finite_only = 0; finite_only < 2; ++finite_only) {
            const auto num = values(rng, cap, true, finite_only ? 0.0 : 0.1);
            const auto den = values(rng, cap, true, finite_only ? 0.0 : 0.1);
            std::vector<double> q_w(num.begin(), num.begin() + static_cast<std::ptrdiff_t>(B));
            double qmax_w = 0.5;
            bool valid_w = true;
            for (std::size_t b = 0; b < B; ++b) {
                valid_w = valid_w && num[b] <= std::numeric_limits<double>::max() &&
                          den[b] > 0 && den[b] <= std::numeric_limits<double>::max();
                q_w[b] = num[b] / den[b];
                qmax_w = std::max(qmax_w, q_w[b]);
            }
            for (const fold::kernel_set* k : {&base, other}) {
                if (!k) continue;
                std::vector<double> q(num.begin(), num.begin() + static_cast<std::ptrdiff_t>(B));
                bool valid = true;
                const double qmax = k->quotient_max(q.data(), den.data(), B, 0.5, valid);
                CHECK(same_bits(q, q_w));
                CHECK(std::bit_cast<std::uint64_t>(qmax) == std::bit_cast<std::uint64_t>(qmax_w));
                CHECK(valid == valid_w);
            }
        }
    }
}

TEST_CASE("fold kernels: coefficient_rows and block_rows give the baseline set's bits in the "
          "AVX2 set",
          "[fold]") {
    const fold::kernel_set* other = other_set();
    if (!other) return;
    const fold::kernel_set& base = fold::baseline_kernels();
    std::mt19937_64 rng(seed + 1);
    for (int round = 0; round < 40; ++round) {
        const std::size_t H = 1 + static_cast<std::size_t>(round % 3), d = 1 + rng() % 18;
        const std::size_t B = round % 4 == 0 ? cap : 1 + rng() % cap, n = cap + 5;
        const bool midpoint = round % 5 == 1, drop = round % 7 == 2, drop_moved = round % 7 == 3;
        INFO("seed " << seed + 1 << ", round " << round << ", H = " << H << ", d = " << d
                     << ", B = " << B);
        // coefficient_rows: e in [el, eh], f in [flo, fhi], D in [dlo, dhi] (ordered ends
        // mostly, with specials among them).
        auto el = values(rng, cap, true, 0.05), flo = values(rng, cap, true, 0.05),
             dlo = values(rng, cap, true, 0.05);
        std::vector<double> eh(cap), fhi(cap), dhi(cap);
        std::uniform_real_distribution<double> w(0.0, 1e-6);
        for (std::size_t b = 0; b < cap; ++b) {
            eh[b] = el[b] * (1 + w(rng));
            fhi[b] = flo[b] * (1 + w(rng));
            dhi[b] = (dlo[b] + el[b]) * (1 + w(rng));
            dlo[b] = dlo[b] + el[b];
        }
        std::vector<double> outs[2][5];
        for (int s = 0; s < 2; ++s) {
            const fold::kernel_set& k = s == 0 ? base : *other;
            auto& o = outs[s];
            o[0].assign(3 * cap, 0.0);
            o[1].assign(3 * cap, 0.0);
            o[2].assign(cap, 0.0);
            o[3].assign(cap, 0.0);
            o[4].assign(cap, 1.0);
            fold::coefficient_args ca;
            ca.el = el.data();
            ca.eh = eh.data();
            ca.flo = flo.data();
            ca.fhi = fhi.data();
            ca.dlo = dlo.data();
            ca.dhi = dhi.data();
            ca.cm = o[0].data();
            ca.cr = o[1].data();
            ca.stride = cap;
            ca.w_num = o[2].data();
            ca.w_den = o[3].data();
            ca.ok = o[4].data();
            ca.B = B;
            ca.midpoint = midpoint;
            k.coefficient_rows(ca);
        }
        for (int t = 0; t < 5; ++t) CHECK(same_bits(outs[0][t], outs[1][t]));
        // block_rows on random coefficients, rows and bounds.
        const auto cm = values(rng, 3 * H * cap, false), cr = values(rng, 3 * H * cap, true);
        const auto gb = values(rng, H * n, true), gt = values(rng, H * n, true);
        const auto gm = values(rng, H * d * n, false), ym = values(rng, d * n, false);
        const auto bm = values(rng, 2 * H * d, false), bb = values(rng, 2 * H, true),
                   bt = values(rng, 2 * H, true), yrsum = values(rng, n, true);
        std::vector<double> res[2][3];
        for (int s = 0; s < 2; ++s) {
            const fold::kernel_set& k = s == 0 ? base : *other;
            auto& r = res[s];
            r[0].assign(cap, -1.0);
            r[1].assign(d * cap, -1.0);
            r[2].assign(16 * cap, -1.0);
            fold::block_rows_args a;
            a.cm = cm.data();
            a.cr = cr.data();
            a.stride = cap;
            a.gb = gb.data() + 3;
            a.gt = gt.data() + 3;
            a.gm = gm.data() + 3;
            a.ym = ym.data() + 3;
            a.n = n;
            a.block_stride = n;
            a.bm = bm.data();
            a.bb = bb.data();
            a.bt = bt.data();
            a.yrsum = yrsum.data() + 3;
            a.heads = H;
            a.d = d;
            a.g = static_cast<double>(3 * H + 2) * 0x1p-52;
            a.drop = drop;
            a.drop_moved = drop_moved;
            a.K = r[0].data();
            a.mid = r[1].data();
            a.sums = r[2].data();
            a.B = B;
            k.block_rows(a);
        }
        for (int t = 0; t < 3; ++t) CHECK(same_bits(res[0][t], res[1][t]));
    }
}
