// util::huge_page_allocator: blocks of at least 2 MiB 2 MiB-aligned and writable in full,
// smaller ones from operator new, vectors that grow without writing and keep what is written.
#include "util/huge_pages.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <new>
#include <vector>

using attnprop::util::huge_page_allocator;

TEST_CASE("huge_page_allocator aligns large blocks to 2 MiB and serves small ones as new does",
          "[util][huge-pages]") {
    huge_page_allocator<double> a;
    const std::size_t big = (std::size_t{3} << 20) / sizeof(double); // 3 MiB: two 2 MiB units
    double* p = a.allocate(big);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % (std::size_t{1} << 21) == 0);
    p[0] = 1.0;
    p[big - 1] = 2.0; // the whole block is writable
    CHECK(p[0] + p[big - 1] == 3.0);
    a.deallocate(p, big);
    double* t = a.allocate(16);
    t[15] = 3.0;
    CHECK(t[15] == 3.0);
    a.deallocate(t, 16);
    CHECK_THROWS_AS(a.allocate(static_cast<std::size_t>(-1) / 4), std::bad_array_new_length);
    // In a vector: default-initialised growth, values kept, copies equal.
    std::vector<double, huge_page_allocator<double>> v;
    v.resize(big);
    for (std::size_t i = 0; i < big; ++i) v[i] = static_cast<double>(i % 8192); // all written
    const auto w = v;
    CHECK(w[4096] == 4096.0);
    CHECK(w == v);
}
