// The process group of a build without MPI (ATTNPROP_MPI off): one rank, units run in order.
#include "dist/launcher.hpp"
#include "dist/world.hpp"

namespace attnprop::dist {

void start(int*, char***) {
    // Several copies of a build without MPI would each run the whole command and write the
    // same files: refused rather than raced.
    if (const std::string r = several_ranks(); !r.empty())
        throw std::runtime_error("attnprop was built without MPI (ATTNPROP_MPI=OFF), but a launcher "
                                 "started it as one of several ranks (" + r +
                                 "): each would run the whole command; rebuild with "
                                 "-DATTNPROP_MPI=ON or run one process");
}

bool launched() { return false; }
int rank() { return 0; }
int size() { return 1; }
int finish(int code) { return code; }
void set_failure_describer(failure_describer) {}

std::vector<std::size_t> run_units(const std::string&, const std::vector<std::size_t>& order,
                                   const compute_fn& compute, const result_fn& on_result,
                                   const wanted_fn& wanted) {
    return run_units_here(order, nullptr, without_input(compute), on_result, wanted);
}

std::vector<std::size_t> run_units(const std::string&, const std::vector<std::size_t>& order,
                                   const unit_inputs& inputs, const compute_with_input_fn& compute,
                                   const result_fn& on_result, const wanted_fn& wanted) {
    return run_units_here(order, &inputs, compute, on_result, wanted);
}

} // namespace attnprop::dist
