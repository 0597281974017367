// Resource limits, the exact-size check, the working-precision guard and the allocation guard.
#include "numeric/allocation.hpp"
#include "numeric/arb_ball.hpp"
#include "numeric/limits.hpp"
#include "numeric/mpfr_real.hpp"
#include "numeric/rational.hpp"
#include "numeric/scalar.hpp"

#include <catch2/catch.hpp>

#include <flint/flint.h>
#include <gmp.h>

#include <limits>
#include <new>

using namespace attnprop::numeric;

namespace {

/// Restores the defaults when a test ends, whatever it set.
struct limits_reset {
    limits_reset() { reset_limits(); }
    ~limits_reset() { reset_limits(); }
};

} // namespace

TEST_CASE("limits: names, defaults and NAME=VALUE", "[numeric][limits]") {
    limits_reset guard;
    REQUIRE(limit_specs().size() == 11);
    for (const auto& sp : limit_specs()) {
        REQUIRE(&spec_of(sp.id) == &sp);
        REQUIRE(limit_value(sp.id) == sp.default_value);
    }
    REQUIRE(limit_value(limit::exact_bits) == 65536);
    set_limit_text("exact-bits=1000");
    REQUIRE(limit_value(limit::exact_bits) == 1000);
    set_limit_text("trace-bytes=2G");
    REQUIRE(limit_value(limit::trace_bytes) == (std::uint64_t{2} << 30));
    set_limits_text("graph-nodes=1k,table-entries=3M");
    REQUIRE(limit_value(limit::graph_nodes) == 1024);
    REQUIRE(limit_value(limit::table_entries) == 3 * (std::uint64_t{1} << 20));
    REQUIRE_THROWS_WITH(set_limit_text("nope=3"),
                        Catch::Contains("unknown limit 'nope'") && Catch::Contains("exact-bits"));
    REQUIRE_THROWS_WITH(set_limit_text("exact-bits"), Catch::Contains("missing value"));
    REQUIRE_THROWS_WITH(set_limit_text("exact-bits=0"), Catch::Contains("at least 1"));
    REQUIRE_THROWS_WITH(set_limit_text("exact-bits=-1"), Catch::Contains("not a positive integer"));
    REQUIRE_THROWS_WITH(set_limit_text("exact-bits=12x"), Catch::Contains("not a positive integer"));
    REQUIRE_THROWS_WITH(set_limit_text("exact-bits=99999999999999999T"), Catch::Contains("too large"));
    // A refused value leaves the limit as it was.
    REQUIRE(limit_value(limit::exact_bits) == 1000);
    reset_limits();
    REQUIRE(limit_value(limit::exact_bits) == 65536);
}

TEST_CASE("limits: the budget of a model file's numbers", "[numeric][limits]") {
    limits_reset guard;
    // 2^18 numbers whatever the size; beyond, one number per byte of the file.
    REQUIRE(model_numbers_budget(0) == (std::uint64_t{1} << 18));
    REQUIRE(model_numbers_budget(1000) == (std::uint64_t{1} << 18));
    REQUIRE(model_numbers_budget(std::uint64_t{1} << 20) == (std::uint64_t{1} << 20));
    set_limit_text("model-numbers=16");
    REQUIRE(model_numbers_budget(std::uint64_t{1} << 20) == (std::uint64_t{16} << 20));
    // Saturates instead of wrapping.
    set_limit_text("model-numbers=1T");
    REQUIRE(model_numbers_budget(std::uint64_t{1} << 40) == ~std::uint64_t{0});
}

TEST_CASE("limits: the error names the value, the limit and how to raise it", "[numeric][limits]") {
    limits_reset guard;
    set_limit(limit::readout_symbols, 10);
    REQUIRE_NOTHROW(check_limit(limit::readout_symbols, 10, "x"));
    try {
        check_limit(limit::readout_symbols, 11, "the readout has 11 symbols");
        FAIL("no limit_error");
    } catch (const limit_error& e) {
        REQUIRE(e.which() == limit::readout_symbols);
        REQUIRE(e.value() == 11);
        REQUIRE(std::string(e.what()) ==
                "the readout has 11 symbols, above the limit readout-symbols = 10 symbols; raise "
                "it with --limit readout-symbols=N (or ATTNPROP_LIMITS=readout-symbols=N)");
        REQUIRE(std::string(e.located(" in file f").what()).starts_with("the readout has 11 symbols in file f, above"));
    }
}

TEST_CASE("limits: exact values larger than exact-bits are refused", "[numeric][limits]") {
    limits_reset guard;
    set_limit(limit::exact_bits, 100);
    rational small(integer(1) << 99, 3);
    REQUIRE(exact_bits(small) == 100);
    REQUIRE(exact_bits(rational(0)) == 0);
    REQUIRE_NOTHROW(check_exact_size(small));
    REQUIRE_NOTHROW(require_finite(small));
    rational big(integer(1) << 100);
    REQUIRE(exact_bits(big) == 101);
    REQUIRE_THROWS_AS(check_exact_size(big), limit_error);
    REQUIRE_THROWS_AS(require_finite(big), limit_error);
    // The denominator counts too.
    REQUIRE_THROWS_WITH(check_exact_size(rational(integer(1), integer(1) << 200)),
                        Catch::Contains("201 bits") && Catch::Contains("exact-bits = 100"));
    // Squaring doubles the size: the check stops a repeated squaring after a few steps.
    set_limit(limit::exact_bits, 1 << 16);
    rational x(3);
    int steps = 0;
    REQUIRE_THROWS_AS(
        [&] {
            for (; steps < 64; ++steps) {
                x = x * x;
                check_exact_size(x);
            }
        }(),
        limit_error);
    REQUIRE(steps == 15); // 3^(2^16) has 103872 bits; 3^(2^15) has 51936
}

TEST_CASE("working precision outside [2, 2^24] is an error, never an abort", "[numeric][limits]") {
    for (long bits : {0L, -5L, 1L, (1L << 24) + 1, 1L << 40}) {
        CAPTURE(bits);
        REQUIRE_THROWS_AS(arb_ball(bits), precision_error);
        REQUIRE_THROWS_AS(mpfr_real(bits), numeric_error);
        REQUIRE_THROWS_WITH(from_rational<arb_ball>(rational(1, 3), context{bits}),
                            Catch::Contains("working precision " + std::to_string(bits) + " bits"));
        REQUIRE_THROWS_AS(from_rational<mpfr_real>(rational(1, 3), context{bits}), numeric_error);
    }
    REQUIRE_NOTHROW(arb_ball(2));
    REQUIRE_NOTHROW(mpfr_real(2));
    arb_ball b(64);
    REQUIRE_THROWS_AS(b.set_precision(0), numeric_error);
    REQUIRE(b.precision() == 64);
}

TEST_CASE("an allocation GMP or FLINT cannot get is std::bad_alloc, not an abort",
          "[numeric][limits]") {
    install_allocation_guard();
    REQUIRE(allocation_guard_installed());
    install_allocation_guard(); // idempotent
    // More than any address space: malloc returns null (the unit tests' ctest properties let
    // AddressSanitizer's allocator return null too, instead of reporting).
    const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
    void* (*gmp_alloc)(std::size_t) = nullptr;
    void* (*gmp_realloc)(void*, std::size_t, std::size_t) = nullptr;
    void (*gmp_free)(void*, std::size_t) = nullptr;
    mp_get_memory_functions(&gmp_alloc, &gmp_realloc, &gmp_free);
    REQUIRE_THROWS_AS(gmp_alloc(huge), std::bad_alloc);
    void* p = gmp_alloc(16);
    REQUIRE(p != nullptr);
    REQUIRE_THROWS_AS(gmp_realloc(p, 16, huge), std::bad_alloc);
    gmp_free(p, 16); // still owned after the failed realloc
    void* (*f_alloc)(std::size_t) = nullptr;
    void* (*f_calloc)(std::size_t, std::size_t) = nullptr;
    void* (*f_realloc)(void*, std::size_t) = nullptr;
    void (*f_free)(void*) = nullptr;
    __flint_get_memory_functions(&f_alloc, &f_calloc, &f_realloc, &f_free);
    REQUIRE_THROWS_AS(f_alloc(huge), std::bad_alloc);
    REQUIRE_THROWS_AS(f_calloc(huge, 4), std::bad_alloc);
    // GMP values keep working through the guard.
    mpz_t z;
    mpz_init_set_ui(z, 7);
    mpz_mul_2exp(z, z, 100000);
    mpz_tdiv_q_2exp(z, z, 100000);
    REQUIRE(mpz_cmp_ui(z, 7) == 0);
    mpz_clear(z);
}
