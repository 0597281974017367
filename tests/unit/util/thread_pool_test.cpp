// util::parallel_for: results by index independent of the number of threads, the first
// exception rethrown, a stop request honoured, per-thread cleanup run by started threads only.
#include "numeric/interrupt.hpp"
#include "util/thread_pool.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

using namespace attnprop;

namespace {

/// A value of the index alone (what a unit of work computes).
std::uint64_t value_of(std::size_t t) { return (t + 1) * 0x9e3779b97f4a7c15ULL; }

} // namespace

TEST_CASE("parallel_for: every index once, results independent of the thread count",
          "[util][thread_pool]") {
    for (std::size_t count : {0u, 1u, 7u, 100u}) {
        std::vector<std::uint64_t> reference;
        for (int threads : {1, 2, 3, 8}) {
            for (std::size_t chunk : {1u, 8u}) {
                INFO("count " << count << ", threads " << threads << ", chunk " << chunk);
                std::vector<std::uint64_t> out(count, 0);
                std::vector<std::atomic<int>> seen(count);
                std::atomic<int> max_worker{0};
                util::parallel_options opt;
                opt.chunk = chunk;
                util::parallel_for(count, threads, [&](std::size_t t, int w) {
                    out[t] = value_of(t);
                    ++seen[t];
                    int m = max_worker.load();
                    while (w > m && !max_worker.compare_exchange_weak(m, w)) {
                    }
                }, opt);
                for (auto& s : seen) REQUIRE(s.load() == 1);
                REQUIRE(max_worker.load() < std::max(threads, 1));
                if (threads == 1 && chunk == 1) reference = out;
                REQUIRE(out == reference);
            }
        }
    }
}

TEST_CASE("parallel_for: the first exception is rethrown after every worker joined",
          "[util][thread_pool]") {
    for (int threads : {1, 2, 4}) {
        INFO("threads " << threads);
        std::atomic<int> exits{0};
        util::parallel_options opt;
        opt.on_thread_exit = [&] { ++exits; };
        REQUIRE_THROWS_WITH(util::parallel_for(50, threads, [](std::size_t t, int) {
            if (t == 17) throw std::runtime_error("unit 17");
        }, opt), "unit 17");
        // Cleanup ran in each started thread (never in the calling one), the error
        // notwithstanding.
        REQUIRE(exits.load() == threads - 1);
    }
}

TEST_CASE("parallel_for: a stop request ends the loop with interrupted_error", "[util][thread_pool]") {
    for (int threads : {1, 3}) {
        INFO("threads " << threads);
        std::atomic<int> ran{0};
        numeric::request_stop();
        REQUIRE_THROWS_AS(util::parallel_for(20, threads, [&](std::size_t, int) { ++ran; }),
                          numeric::interrupted_error);
        numeric::clear_stop_request();
        REQUIRE(ran.load() == 0);
    }
}

TEST_CASE("worker_count: requested, else the hardware capped", "[util][thread_pool]") {
    REQUIRE(util::worker_count(3) == 3);
    REQUIRE(util::worker_count(5, 2) == 5);
    REQUIRE(util::worker_count(0, 2) >= 1);
    REQUIRE(util::worker_count(0, 2) <= 2);
    REQUIRE(util::worker_count(0) >= 1);
}
