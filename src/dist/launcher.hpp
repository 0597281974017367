#pragma once
/// @file launcher.hpp
/// What both implementations of world.hpp share: whether an MPI launcher started this process,
/// and running units in this thread.

#include "dist/world.hpp"

#include <string>

namespace attnprop::dist {

/// Whether an MPI launcher (mpirun, mpiexec, srun with PMI or PMIx) started this process: one
/// of OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK, PMI_SIZE is set.
bool launched_by_mpi();

/// A description of the ranks a launcher asked for when it asked for more than one ("rank 1
/// of 3"), else empty: a build without MPI refuses to run as one of several ranks.
std::string several_ranks();

/// The units of `order` run in this thread, in order (those `wanted` declines skipped); a stop
/// request ends the loop between units, and a unit abandoned on one (unit_dropped,
/// numeric::interrupted_error) ends it too, without a result. Any other failure propagates.
/// `inputs` null: units without an input (`compute` gets id 0 and empty bytes). Returns the
/// units done.
std::vector<std::size_t> run_units_here(const std::vector<std::size_t>& order,
                                        const unit_inputs* inputs,
                                        const compute_with_input_fn& compute,
                                        const result_fn& on_result, const wanted_fn& wanted = {});

/// A compute_fn as a compute_with_input_fn that ignores the input.
compute_with_input_fn without_input(const compute_fn& compute);

} // namespace attnprop::dist
