#include "dist/launcher.hpp"

#include "numeric/interrupt.hpp"

#include <cstdlib>

namespace attnprop::dist {

namespace {

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

} // namespace

bool launched_by_mpi() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
        if (env(name)) return true;
    return false;
}

std::string several_ranks() {
    for (const char* size : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
        if (const char* v = env(size); v && std::atol(v) > 1) return std::string(size) + "=" + v;
    for (const char* rank : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
        if (const char* v = env(rank); v && std::atol(v) > 0) return std::string(rank) + "=" + v;
    return {};
}

std::vector<std::size_t> run_units_here(const std::vector<std::size_t>& order,
                                        const compute_fn& compute, const result_fn& on_result,
                                        const wanted_fn& wanted) {
    std::vector<std::size_t> done;
    for (std::size_t u : order) {
        if (numeric::stop_requested()) break;
        if (wanted && !wanted(u)) continue;
        std::string bytes;
        try {
            bytes = compute(u);
        } catch (const unit_dropped&) {
            break;
        } catch (const numeric::interrupted_error&) {
            break;
        }
        on_result(u, bytes);
        done.push_back(u);
    }
    return done;
}

} // namespace attnprop::dist
