#pragma once
/// @file huge_pages.hpp
/// An allocator for large tables that asks the kernel for transparent huge pages.
///
/// A table of hundreds of megabytes in 4 KiB pages costs one page fault per page when first
/// written (the weight tables of the certified influence profile at n = 4096: 131072 faults)
/// and a TLB miss on most accesses of a column-strided pass. Blocks of at least 2 MiB are
/// allocated 2 MiB-aligned, in whole 2 MiB units, and advised MADV_HUGEPAGE (Linux; where the
/// kernel's transparent huge pages are "madvise" or "always", the faults and TLB entries drop
/// by a factor of 512). Smaller blocks, and every block elsewhere, come from operator new.
/// Elements are default-initialised: a vector<double> grows without writing its new elements
/// (no pass of zeros over a table that its owner writes in full before reading it).

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attnprop::util {

template <class T> struct huge_page_allocator {
    using value_type = T;
    static constexpr std::size_t huge = std::size_t{1} << 21;

    huge_page_allocator() = default;
    template <class U> huge_page_allocator(const huge_page_allocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < huge) return static_cast<T*>(::operator new(bytes));
        const std::size_t rounded = (bytes + huge - 1) / huge * huge;
        void* p = std::aligned_alloc(huge, rounded);
        if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        (void)::madvise(p, rounded, MADV_HUGEPAGE); // advice only: a refusal changes nothing
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) < huge) ::operator delete(p);
        else std::free(p);
    }

    /// Default-initialisation (no write for doubles); other construction as usual.
    template <class U> void construct(U* p) noexcept(noexcept(::new (static_cast<void*>(p)) U)) {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... A> void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }

    template <class U> bool operator==(const huge_page_allocator<U>&) const noexcept { return true; }
};

} // namespace attnprop::util
