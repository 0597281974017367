// The incremental one-symbol kernel on causally masked models (incremental_influence.hpp, the
// masked layer 1 of L = 2) against full forward passes: random soft models and random
// affine-update models with layer 1, layer 2 or both masked, every position p (p = 0 and
// p = n - 2, the last before eos, included) and every replacement, in every kind the kernel
// takes: MPFR-256 within 2^-200 of the MPFR-512 pass, double within 1e-9, Arb-256 balls and
// certified double intervals containing the MPFR-512 value and overlapping the full pass of
// their own kind, balls within 1e-60 and intervals within 4 times the full pass's width plus
// 1e-9 (relative to max(1, |value|)). A change at p corrects the rows i > p alone. Negative control: a kernel
// that corrects the rows i < p as well (incremental_fault::ignore_mask) fails the comparison.
#include "attention/incremental_influence.hpp"
#include "attention/soft.hpp"
#include "gen/generators.hpp"
#include "model/model_file.hpp"
#include "soft_influence/influence.hpp"
#include "incremental_models.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace attnprop;
using attention::incremental_fault;
using attention::incremental_influence;
using model::vec;
using numeric::arb_ball;
using numeric::dinterval;
using numeric::mpfr_real;
using numeric::rational;
using test::close;
using test::pow2_inverse;
using test::random_input;

namespace {

const numeric::context ctx53{53};
const numeric::context ctx256{256};
const numeric::context ctx512{512};

/// Which layers get a causal mask.
enum class masked_layers { first, last, all };

model::model<rational> masked(model::model<rational> m, masked_layers which) {
    for (std::size_t k = 0; k < m.layers.size(); ++k) {
        const bool on = which == masked_layers::all || (which == masked_layers::first && k == 0) ||
                        (which == masked_layers::last && k + 1 == m.layers.size());
        m.layers[k].mask = on ? model::mask_kind::causal : model::mask_kind::none;
    }
    return m;
}

model::model<rational> random_model(std::uint64_t seed) {
    gen::soft_bounds sb;
    sb.max_layers = 2;
    sb.max_heads = 2;
    sb.max_dim = 4;
    const int size = static_cast<int>((seed * 37) % (rc::kNominalSize + 1));
    return gen::soft_model(sb)(rc::Random(seed), size).value();
}

/// The outcome of comparing every change of one model and input in every kind.
struct comparison {
    bool ok = true;
    int changes = 0;
    std::string first_failure;
};

/// Compares the kernel with full passes on every position and replacement of x. `fault` goes
/// to every kernel (the negative control). Without `interval_width` the certified double
/// intervals are checked for containment and overlap alone: under nearly hard attention the
/// generic interval rows of a masked layer are wider than the certified rows of the full pass
/// (2.5e-4 against 2.3e-6 on the Q x 4096 model).
comparison compare_masked(const model::model<rational>& m, const model::input_sequence& x,
                          incremental_fault fault = incremental_fault::none,
                          bool interval_width = true) {
    comparison out;
    const auto m256 = model::to_scalar<mpfr_real>(m, ctx256);
    const auto m512 = model::to_scalar<mpfr_real>(m, ctx512);
    const auto mb = model::to_scalar<arb_ball>(m, ctx256);
    const auto md = model::to_scalar<double>(m, ctx53);
    const auto mi = model::to_scalar<dinterval>(m, ctx53);
    const incremental_influence<mpfr_real> inc256(m256, x, ctx256, fault);
    const incremental_influence<arb_ball> incb(mb, x, ctx256, fault);
    const incremental_influence<double> incd(md, x, ctx53, fault);
    const incremental_influence<dinterval> inci(mi, x, ctx53, fault);
    const rational tol = pow2_inverse(200);
    auto fail = [&](const std::string& what, std::size_t p, int a, std::size_t c) {
        if (out.ok) {
            std::ostringstream os;
            os << what << " at position " << p << " -> " << a << ", coordinate " << c;
            out.first_failure = os.str();
        }
        out.ok = false;
    };
    // p = n - 1 stands for the unchanged input (the kernels' base()).
    const int symbols = static_cast<int>(m.sigma.symbols.size());
    model::input_sequence x2 = x;
    for (std::size_t p = 0; p < x.size(); ++p) {
        const bool base = p + 1 == x.size();
        for (int a = 0; a < symbols; ++a) {
            if (base ? a != 0 : a == x[p]) continue;
            if (!base) x2[p] = a;
            const vec<mpfr_real> ref = attention::soft_forward(m512, x2, ctx512).y;
            const vec<arb_ball> full_b = attention::soft_forward(mb, x2, ctx256).y;
            const vec<dinterval> full_i = attention::soft_forward(mi, x2, ctx53).y;
            const vec<mpfr_real> r256 = base ? inc256.base() : inc256.changed(p, a);
            const vec<arb_ball> rb = base ? incb.base() : incb.changed(p, a);
            const vec<double> rd = base ? incd.base() : incd.changed(p, a);
            const vec<dinterval> ri = base ? inci.base() : inci.changed(p, a);
            for (std::size_t c = 0; c < ref.size(); ++c) {
                const double r = numeric::to_double(ref[c]);
                const double mag = std::max(1.0, std::fabs(r));
                if (!close(r256[c], ref[c], tol)) fail("mpfr-256", p, a, c);
                if (!(std::fabs(rd[c] - r) <= 1e-9 * mag)) fail("double", p, a, c);
                if (!numeric::contains(rb[c], ref[c]) || !arb_overlaps(rb[c].raw(), full_b[c].raw()) ||
                    !(numeric::radius_as_double(rb[c]) <= 1e-60 * mag))
                    fail("ball", p, a, c);
                if (!numeric::contains(ri[c], ref[c]) || ri[c].lo() > full_i[c].hi() ||
                    full_i[c].lo() > ri[c].hi() ||
                    (interval_width &&
                     !(ri[c].hi() - ri[c].lo() <= 4 * (full_i[c].hi() - full_i[c].lo()) + 1e-9 * mag))) {
                    std::ostringstream os;
                    os.precision(17);
                    os << "interval [" << ri[c].lo() << ", " << ri[c].hi() << "] (full pass ["
                       << full_i[c].lo() << ", " << full_i[c].hi() << "], value " << r << ")";
                    fail(os.str(), p, a, c);
                }
            }
            if (!base) ++out.changes;
        }
        x2[p] = x[p];
    }
    return out;
}

} // namespace

TEST_CASE("incremental one-symbol updates of causally masked models agree with full passes in "
          "every kind",
          "[analysis][influence][incremental][mask]") {
    int seen[3] = {0, 0, 0};
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const auto base = random_model(seed);
        for (masked_layers which : {masked_layers::first, masked_layers::last, masked_layers::all}) {
            const auto m = masked(base, which);
            REQUIRE(analysis::incremental_applies(m));
            ++seen[m.layers.size()];
            for (std::size_t n : {2, 3, 17}) {
                const auto x = random_input(m, n, seed * 7919 + n);
                INFO("seed " << seed << " mask " << static_cast<int>(which) << " n " << n
                             << " input " << model::format_input(m.sigma, x)
                             << "\nmodel: " << model::write_model(m));
                const auto r = compare_masked(m, x);
                INFO(r.first_failure);
                REQUIRE(r.changes > 0);
                REQUIRE(r.ok);
            }
        }
    }
    REQUIRE(seen[1] > 0);
    REQUIRE(seen[2] > 0);
}

TEST_CASE("incremental updates of masked affine-update models (the folded rows) agree with full "
          "passes",
          "[analysis][influence][incremental][mask]") {
    for (std::uint64_t seed = 1; seed <= 3; ++seed)
        for (const auto& [q_scale, den] : {std::pair{1, 8}, std::pair{1, 7}, std::pair{4096, 7}}) {
            const auto m = masked(model::parse_model(test::affine_model(seed, 2, q_scale, den), "affine"),
                                  masked_layers::all);
            REQUIRE(analysis::incremental_applies(m));
            const auto x = random_input(m, 13, seed * 31 + static_cast<std::uint64_t>(q_scale));
            INFO("seed " << seed << " q_scale " << q_scale << " den " << den << " input "
                         << model::format_input(m.sigma, x));
            const auto r = compare_masked(m, x, incremental_fault::none, q_scale == 1);
            INFO(r.first_failure);
            REQUIRE(r.ok);
        }
}

TEST_CASE("a change at p corrects the masked layer-1 rows i > p alone",
          "[analysis][influence][incremental][mask]") {
    const auto m = masked(model::parse_model(test::affine_model(2, 2), "affine"), masked_layers::first);
    const auto md = model::to_scalar<double>(m, ctx53);
    const std::size_t n = 40, H = m.layers.front().heads.size();
    const auto x = random_input(m, n, 77);
    const incremental_influence<double> inc(md, x, ctx53);
    for (std::size_t p : {std::size_t{0}, std::size_t{17}, n - 2}) {
        const auto before = inc.stats();
        (void)inc.changed(p, 1 - x[p]);
        const auto after = inc.stats();
        INFO("p " << p);
        REQUIRE(after.rank1_rows + after.recomputed_rows - before.rank1_rows - before.recomputed_rows ==
                H * (n - 1 - p));
    }
    // Unmasked, every row other than p is corrected.
    const auto mu = model::to_scalar<double>(masked(m, masked_layers::last), ctx53);
    const incremental_influence<double> incu(mu, x, ctx53);
    (void)incu.changed(17, 1 - x[17]);
    REQUIRE(incu.stats().rank1_rows + incu.stats().recomputed_rows == H * (n - 1));
}

TEST_CASE("the masked comparison detects a kernel that ignores the mask (negative control)",
          "[analysis][influence][incremental][mask]") {
    int caught = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const auto m = masked(random_model(seed), masked_layers::all);
        if (m.layers.size() != 2) continue;
        const auto x = random_input(m, 17, seed * 7919 + 17);
        INFO("seed " << seed);
        REQUIRE(compare_masked(m, x).ok);
        if (!compare_masked(m, x, incremental_fault::ignore_mask).ok) ++caught;
    }
    const auto aff = masked(model::parse_model(test::affine_model(1, 2), "affine"), masked_layers::all);
    const auto xa = random_input(aff, 13, 5);
    REQUIRE(compare_masked(aff, xa).ok);
    REQUIRE_FALSE(compare_masked(aff, xa, incremental_fault::ignore_mask).ok);
    REQUIRE(caught > 0);
}
