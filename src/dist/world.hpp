#pragma once
/// @file world.hpp
/// The process group a command runs in, and the one way work crosses it: units handed out by
/// rank 0. Built over MPI (world_mpi.cpp) when ATTNPROP_MPI is on, else over one process
/// (world_single.cpp); commands call the same functions either way and never test for MPI.
///
/// MPI is started only when a launcher started the process (mpirun, mpiexec, srun with PMI or
/// PMIx): a plain `attnprop ...` never initialises MPI and behaves exactly as without it.
///
/// The model of a distributed command (docs/cli.md, "Running under MPI"): every rank parses
/// the same command line and reads the same files; rank 0 alone writes files and prints; the
/// work is cut into units whose result depends on the unit alone (never on the rank that ran
/// it or the order), rank 0 hands the units out on request, largest first, computes some
/// itself in a second thread, and assembles the results in unit order.

#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnprop::dist {

/// Starts the process group when a launcher started this process (MPI_Init_thread with
/// MPI_THREAD_FUNNELED); otherwise, or in a build without MPI, one process. Call once, first
/// thing in main. Throws std::runtime_error when a launcher started several ranks of a build
/// without MPI (each would run the whole command and write the same files).
void start(int* argc, char*** argv);

/// Whether MPI was started (the process runs under a launcher, even as a single rank).
bool launched();
/// This process's rank (0 without MPI).
int rank();
/// The number of ranks (1 without MPI).
int size();
/// Rank 0: the rank that prints, writes files and decides the exit code.
inline bool is_root() { return rank() == 0; }

/// Ends the process group: every rank calls it once, last thing in main, with the exit code it
/// would return; every rank returns rank 0's code (so mpirun exits with it). Rank 0 first
/// answers every worker still waiting for work. Without MPI it returns `code`.
int finish(int code);

/// Thrown in a worker (rank > 0) waiting for work when rank 0 ended the run (it failed before
/// or while handing units out): main returns `code` quietly, rank 0 has said why.
class ended_by_root : public std::runtime_error {
public:
    explicit ended_by_root(int root_code) : std::runtime_error("ended by rank 0"), code(root_code) {}
    int code;
};

/// Rethrown on rank 0 for a unit that failed on another rank: the exit code and the message
/// main would have printed there (describe_failure in the command layer).
class remote_failure : public std::runtime_error {
public:
    remote_failure(int code, const std::string& printed)
        : std::runtime_error(printed), exit_code(code) {}
    int exit_code;
};

/// What a failed unit becomes on the wire: the exit code and the message main prints for the
/// exception. Set by the command layer (src/cli/main.cpp) before any unit runs; the default
/// says "internal error" with what().
using failure_describer = std::function<int(std::exception_ptr, std::string& printed)>;
void set_failure_describer(failure_describer d);

/// Computes one unit and returns its result, serialised (any bytes). Must depend on the unit
/// alone. May throw: the unit's failure (see run_units).
using compute_fn = std::function<std::string(std::size_t unit)>;
/// Receives one unit's result on rank 0 (in the main thread, in arrival order).
using result_fn = std::function<void(std::size_t unit, const std::string& result)>;
/// Asked by rank 0 (from any of its threads) before it hands a unit out: false skips the unit
/// (not computed, no result), for work that results received since made unnecessary. Must be
/// safe to call while `on_result` runs in another thread.
using wanted_fn = std::function<bool(std::size_t unit)>;

/// Thrown inside compute_fn to say the unit was abandoned on a stop request
/// (numeric::interrupted_error is mapped to it by the commands): the unit is not done, which is
/// no failure.
class unit_dropped : public std::runtime_error {
public:
    unit_dropped() : std::runtime_error("unit dropped on a stop request") {}
};

/// Runs units over the ranks; every rank calls it the same number of times per command (each
/// time with the same `key` and `compute` on every rank; rank 0 may pass an empty `order`).
/// - `key`: a digest of everything the units depend on (the model file's bytes, the options);
///   a worker whose key differs from rank 0's is refused (it read another file) and the run
///   fails on rank 0 with a message naming that rank.
/// - `order` (rank 0; ignored elsewhere): the units to run, in the order they are handed out
///   (largest cost first).
/// Rank 0 hands the next unit to whichever rank asks (dynamic balancing), computes units
/// itself in a second thread, and calls `on_result` for each result as it arrives. After a
/// stop request (numeric::stop_requested) it hands out nothing more and waits for the units
/// in progress. When units fail it hands out nothing more, waits for those in progress, and
/// rethrows the failure of the first failed unit in `order` (remote ones as remote_failure).
/// Rank 0 returns the units whose result it received, in `order`'s order (all of them unless
/// a stop was requested); workers return an empty list when rank 0 says the work is done, and
/// throw ended_by_root when rank 0 ended the run instead. Not launched (no MPI): the units run
/// in order in this thread, and a stop request ends the loop between units. With `wanted`
/// (rank 0), a unit it declines when its turn comes is skipped and not in the list returned.
std::vector<std::size_t> run_units(const std::string& key, const std::vector<std::size_t>& order,
                                   const compute_fn& compute, const result_fn& on_result,
                                   const wanted_fn& wanted = {});

/// What some units read besides the command line and its files: a value only rank 0 has, such
/// as a result of an earlier run_units call (a restriction whose certificate samples are the
/// units), named by an id. Rank 0 sends a worker each id's bytes once per call, with the first
/// unit that needs it; a worker keeps them until the call ends. Both functions are called on
/// rank 0 only, from any of its threads (never two at once); `bytes_of` once per id.
struct unit_inputs {
    std::function<std::size_t(std::size_t unit)> id_of;
    std::function<std::string(std::size_t id)> bytes_of;
};
/// Computes one unit from its input's id and bytes (see compute_fn).
using compute_with_input_fn =
    std::function<std::string(std::size_t unit, std::size_t id, const std::string& input)>;

/// run_units for units that read an input of `inputs` (every unit one): the same contract, and
/// `compute` gets the unit's input on every rank.
std::vector<std::size_t> run_units(const std::string& key, const std::vector<std::size_t>& order,
                                   const unit_inputs& inputs, const compute_with_input_fn& compute,
                                   const result_fn& on_result, const wanted_fn& wanted = {});

} // namespace attnprop::dist
