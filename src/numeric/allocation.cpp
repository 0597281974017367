#include "numeric/allocation.hpp"

#include <flint/flint.h>
#include <gmp.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace attnprop::numeric {

namespace {

std::atomic<bool> installed{false};

// GMP's interface: the sizes of the old block are passed but not needed by malloc/free.
void* gmp_allocate(std::size_t size) {
    void* p = std::malloc(size);
    if (!p) throw std::bad_alloc();
    return p;
}

void* gmp_reallocate(void* ptr, std::size_t /*old_size*/, std::size_t new_size) {
    void* p = std::realloc(ptr, new_size);
    if (!p) throw std::bad_alloc(); // ptr is still valid and owned by the caller's value
    return p;
}

void gmp_free(void* ptr, std::size_t /*size*/) { std::free(ptr); }

void* flint_allocate(std::size_t size) {
    void* p = std::malloc(size ? size : 1);
    if (!p) throw std::bad_alloc();
    return p;
}

void* flint_callocate(std::size_t count, std::size_t size) {
    void* p = std::calloc(count ? count : 1, size ? size : 1);
    if (!p) throw std::bad_alloc();
    return p;
}

void* flint_reallocate(void* ptr, std::size_t size) {
    void* p = std::realloc(ptr, size ? size : 1);
    if (!p) throw std::bad_alloc();
    return p;
}

void flint_release(void* ptr) { std::free(ptr); }

} // namespace

void install_allocation_guard() {
    if (installed.exchange(true)) return;
    mp_set_memory_functions(&gmp_allocate, &gmp_reallocate, &gmp_free);
    __flint_set_memory_functions(&flint_allocate, &flint_callocate, &flint_reallocate,
                                 &flint_release);
}

bool allocation_guard_installed() noexcept { return installed.load(); }

} // namespace attnprop::numeric
