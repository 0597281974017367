// A row of the sweep cut into units: blocks only where the set-up is a small part of the work,
// a row assembled from units measured apart equal to the sweep's row bit for bit, and the first
// undefined value in input and position order. Seeds are fixed and printed on failure.
#include "soft_influence/sweep_units.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"
#include "report/influence_report.hpp"
#include "sweep_fixtures.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

using namespace attnprop;

namespace {

using test::bundled;
using test::small;

/// The row at n measured unit by unit as the distributed sweep does (each unit alone, last unit
/// first, with `threads` threads), attempt after attempt up to the first that decides it.
analysis::sweep_row row_from_units(const model::model<numeric::rational>& m,
                                   const analysis::sweep_options& o, long n, unsigned threads) {
    const auto units = analysis::row_units(m, o, n);
    analysis::row_measurement meas;
    for (const auto& a : analysis::row_ladder(m, o, n)) {
        std::vector<analysis::unit_result> results(units.size());
        for (std::size_t j = units.size(); j-- > 0;)
            results[j] = analysis::measure_unit(m, o, n, a, units[j], threads);
        meas = analysis::assemble_row(m, o, n, a, results);
        if (analysis::attempt_decides(a, meas, o.digits)) break;
    }
    return analysis::finish_row(std::move(meas));
}

std::size_t blocks_of_first_input(const std::vector<analysis::row_unit>& units) {
    std::size_t b = 0;
    for (const auto& u : units) b += !u.cross_entropy && u.input == 0 ? 1 : 0;
    return b;
}

} // namespace

TEST_CASE("a row's units: an input's positions are cut into blocks only where its set-up is "
          "small beside its work", "[sweep]") {
    const auto m = bundled("cc-parity");
    auto o = small({64}, 3);
    o.inputs = 3;
    o.positions = 0; // every position: 63 changes, each an update of the incremental method
    o.scalar = analysis::sweep_scalar::of<numeric::mpfr_real>(); // updates costly beside the set-up
    const auto many = analysis::row_units(m, o, 64);
    REQUIRE(blocks_of_first_input(many) > 1);
    REQUIRE(blocks_of_first_input(many) <= 16);
    REQUIRE(many.size() == 3 * blocks_of_first_input(many));
    // The blocks cover the positions once, in order.
    std::size_t next = 0;
    for (const auto& u : many)
        if (u.input == 0) {
            REQUIRE(u.first == next);
            REQUIRE(u.last > u.first);
            next = u.last;
        }
    REQUIRE(next == 63);
    // Eight positions: the repeated set-up would cost more than a tenth of the input's work;
    // so it would in intervals (their updates are cheap) at every position.
    o.positions = 8;
    REQUIRE(blocks_of_first_input(analysis::row_units(m, o, 64)) == 1);
    o.positions = 0;
    o.scalar = analysis::sweep_scalar::of<numeric::dinterval>();
    REQUIRE(blocks_of_first_input(analysis::row_units(m, o, 64)) == 1);
    o.scalar = analysis::sweep_scalar::of<numeric::mpfr_real>();
    // The threads never change the units.
    o.positions = 0;
    o.threads = 5;
    REQUIRE(analysis::row_units(m, o, 64).size() == many.size());
}

TEST_CASE("a row assembled from units measured apart is the sweep's row, bit for bit, in every "
          "scalar", "[sweep]") {
    const auto m = bundled("cc-parity");
    for (auto scalar : {analysis::sweep_scalar::automatic(), analysis::sweep_scalar::of<numeric::arb_ball>(),
                        analysis::sweep_scalar::of<numeric::dinterval>(),
                        analysis::sweep_scalar::of<numeric::mpfr_real>(), analysis::sweep_scalar::of<double>()})
        for (long posterior_max_n : {4096L, 0L}) {
            auto o = small({8, 48}, 13);
            o.inputs = 2;
            o.positions = 0;
            o.language = lang::language::parity; // the cube at n = 8, sampled at n = 48
            o.scalar = scalar;
            o.precision_cap = 256;
            o.posterior_max_n = posterior_max_n; // the a-posteriori bound on, then off
            INFO("seed " << o.seed << ", scalar " << analysis::to_string(scalar)
                         << ", posterior-max-n " << posterior_max_n);
            const auto sweep = analysis::influence_sweep(m, o);
            if (scalar == analysis::sweep_scalar::of<numeric::mpfr_real>())
                REQUIRE(blocks_of_first_input(analysis::row_units(m, o, 48)) > 1);
            for (std::size_t i = 0; i < o.ns.size(); ++i) {
                const bool enclosure = scalar != analysis::sweep_scalar::of<numeric::mpfr_real>() &&
                                       scalar != analysis::sweep_scalar::of<double>();
                REQUIRE(sweep.rows[i].posterior_bound.has_value() == (enclosure && posterior_max_n > 0));
                REQUIRE(sweep.rows[i].cross_entropy.has_value());
                const auto direct = analysis::sweep_row_at(m, o, o.ns[i]);
                REQUIRE(json::dump(report::row_to_json(direct), 0) ==
                        json::dump(report::row_to_json(sweep.rows[i]), 0));
                for (unsigned threads : {1u, 3u}) {
                    INFO("n " << o.ns[i] << ", threads " << threads);
                    const auto row = row_from_units(m, o, o.ns[i], threads);
                    REQUIRE(json::dump(report::row_to_json(row), 0) ==
                            json::dump(report::row_to_json(direct), 0));
                    REQUIRE(std::memcmp(&row.max_influence_approx, &direct.max_influence_approx,
                                        sizeof(double)) == 0);
                }
            }
        }
}

TEST_CASE("units: the first undefined value in input and position order is the row's, "
          "whichever unit meets it first", "[sweep]") {
    const auto m = bundled("soft-majority-ln0");
    auto o = small({3, 6}, 2);
    o.inputs = 3;
    o.positions = 0;
    const auto sweep = analysis::influence_sweep(m, o);
    REQUIRE(sweep.rows[0].undefined);
    for (std::size_t i = 0; i < o.ns.size(); ++i) {
        const auto row = row_from_units(m, o, o.ns[i], 2);
        REQUIRE(row.undefined == sweep.rows[i].undefined);
        REQUIRE(json::dump(report::row_to_json(row), 0) == json::dump(report::row_to_json(sweep.rows[i]), 0));
    }
}
