#pragma once
/// @file allocation.hpp
/// Allocation failures inside GMP, MPFR and FLINT/Arb as C++ exceptions.
///
/// By default GMP prints "GNU MP: Cannot allocate memory" and aborts when malloc fails, and
/// FLINT aborts likewise, so an exact computation that outgrows memory would end the process
/// with SIGABRT and no message of attnprop's. install_allocation_guard() routes their
/// allocations through malloc/realloc/free wrappers that throw std::bad_alloc instead, which
/// the commands report with exit code 2 naming what was too large.
///
/// A throw from inside a GMP function may leave temporaries of that function unreleased (GMP
/// does not unwind its own scratch space) and the value being written in its previous state;
/// every value stays valid to destroy. That is acceptable for the one purpose of the guard: to
/// end the command cleanly. The limits of numeric/limits.hpp (exact-bits above all) stop
/// growing computations well before memory runs out; the guard is the backstop.

#include <cstddef>

namespace attnprop::numeric {

/// Installs the throwing allocation functions in GMP (used by MPFR too) and FLINT. Idempotent;
/// call it once at start-up, before starting threads. Values allocated before stay valid
/// (the wrappers use the same malloc and free).
void install_allocation_guard();

/// Whether install_allocation_guard() has run.
bool allocation_guard_installed() noexcept;

} // namespace attnprop::numeric
