#include "util/thread_pool.hpp"

#include "numeric/interrupt.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attnprop::util {

int worker_count(int requested, int cap) {
    if (requested > 0) return requested;
    const int hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    return cap > 0 ? std::min(hw, cap) : hw;
}

void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t, int)>& fn,
                  const parallel_options& opt) {
    const std::size_t chunk = std::max<std::size_t>(opt.chunk, 1);
    const int workers =
        static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(std::max(threads, 1), count)));
    if (workers <= 1) {
        for (std::size_t t = 0; t < count; ++t) {
            numeric::throw_if_stop_requested();
            fn(t, 0);
        }
        return;
    }
    std::atomic<std::size_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto body = [&](int w) {
        try {
            for (;;) {
                const std::size_t start = next.fetch_add(chunk);
                if (start >= count) break;
                const std::size_t stop = std::min(count, start + chunk);
                numeric::throw_if_stop_requested();
                for (std::size_t t = start; t < stop; ++t) fn(t, w);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            next.store(count); // the others take no more work
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(workers - 1));
    for (int w = 1; w < workers; ++w)
        pool.emplace_back([&, w] {
            body(w);
            if (opt.on_thread_exit) opt.on_thread_exit();
        });
    body(0);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

} // namespace attnprop::util
