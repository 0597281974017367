#include "dist/launcher.hpp"

#include "numeric/interrupt.hpp"

#include <cstdlib>
#include <map>

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
                                        const unit_inputs* inputs,
                                        const compute_with_input_fn& compute,
                                        const result_fn& on_result, const wanted_fn& wanted) {
    std::vector<std::size_t> done;
    std::map<std::size_t, std::string> input_bytes; // by id, each made once
    const std::string none;
    for (std::size_t u : order) {
        if (numeric::stop_requested()) break;
        if (wanted && !wanted(u)) continue;
        std::size_t id = 0;
        const std::string* input = &none;
        if (inputs) {
            id = inputs->id_of(u);
            auto it = input_bytes.find(id);
            if (it == input_bytes.end()) it = input_bytes.emplace(id, inputs->bytes_of(id)).first;
            input = &it->second;
        }
        std::string bytes;
        try {
            bytes = compute(u, id, *input);
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

compute_with_input_fn without_input(const compute_fn& compute) {
    return [&compute](std::size_t unit, std::size_t, const std::string&) { return compute(unit); };
}

} // namespace attnprop::dist
