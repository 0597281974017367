// The process group over MPI (ATTNPROP_MPI on). Only the C API, only from the main thread
// (MPI_THREAD_FUNNELED): rank 0's second thread computes units and never calls MPI.
//
// Protocol (tags below). A worker sends READY with the number of the run_units call and its
// key, then after each unit RESULT, FAILED or DROPPED; each of those is answered by UNIT (the
// next unit; for units with inputs also the input's id and, the first time this call sends
// that id to this worker, its bytes), END (no more work of this call) or EXIT (rank 0 ended
// the run). A command may call run_units several times: a worker told END goes on to its next
// call and may send that call's READY while rank 0 is still in the last one; rank 0 keeps it
// unanswered until its own next call. At finish a worker that has not seen EXIT sends DONE
// and waits for EXIT, which carries rank 0's exit code. Every wait polls with a short sleep: a
// blocking MPI receive spins a core, which a shared or oversubscribed machine cannot spare.
#include "dist/launcher.hpp"
#include "dist/world.hpp"
#include "numeric/interrupt.hpp"

#include <flint/flint.h>
#include <mpfr.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <set>
#include <thread>

namespace attnprop::dist {

namespace {

enum tag : int {
    tag_ready = 1,   // worker -> 0: key
    tag_result = 2,  // worker -> 0: unit, result bytes
    tag_failed = 3,  // worker -> 0: unit, exit code, message
    tag_dropped = 4, // worker -> 0: unit (stop request)
    tag_done = 5,    // worker -> 0: the worker is at finish
    tag_unit = 6,    // 0 -> worker: unit
    tag_end = 7,     // 0 -> worker: no more work
    tag_exit = 8     // 0 -> worker: exit code
};

bool launched_ = false;
int rank_ = 0, size_ = 1;
bool exit_received_ = false; // a worker that has seen EXIT
int exit_code_ = 0;
failure_describer describer_;

/// What rank 0 knows of each worker, so that finish() answers each exactly once. ready_next:
/// told END by this call, it sent the next call's READY (kept in next_ready_), not answered.
enum class peer { not_started, owed_reply, computing, ended, ready_next, at_finish, answered };
std::vector<peer> peers_;
std::vector<std::string> next_ready_; // a ready_next worker's key
std::uint64_t calls_ = 0;             // run_units calls made by this process

std::string u64_bytes(std::uint64_t v) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
}
std::uint64_t read_u64(const std::string& s, std::size_t at) {
    if (s.size() < at + 8) throw std::runtime_error("attnprop: truncated message between ranks");
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<std::size_t>(i)]);
    return v;
}

void send(int dest, int t, const std::string& bytes) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
        throw std::runtime_error("a unit's result of " + std::to_string(bytes.size()) +
                                 " bytes exceeds the 2 GiB an MPI message may hold");
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, t, MPI_COMM_WORLD);
}

struct message {
    int source = 0;
    int t = 0;
    std::string bytes;
};

std::optional<message> poll(int source) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return std::nullopt;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    message m;
    m.source = st.MPI_SOURCE;
    m.t = st.MPI_TAG;
    m.bytes.assign(static_cast<std::size_t>(count), '\0');
    MPI_Recv(m.bytes.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return m;
}

/// Sleeps a little longer each time nothing happened (50 us up to 0.5 ms: a unit of a few
/// milliseconds, a batch of cheap cases, then waits little for its reply).
class backoff {
public:
    void idle() {
        std::this_thread::sleep_for(std::chrono::microseconds(us_));
        us_ = std::min(us_ * 2, 500);
    }
    void busy() { us_ = 50; }

private:
    int us_ = 50;
};

message wait_from(int source) {
    backoff b;
    for (;;) {
        if (auto m = poll(source)) return *m;
        b.idle();
    }
}

int describe(std::exception_ptr e, std::string& printed) {
    if (describer_) return describer_(e, printed);
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        printed = std::string("attnprop: internal error: ") + x.what();
    } catch (...) {
        printed = "attnprop: internal error: unknown exception";
    }
    return 3;
}

bool is_dropped(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const unit_dropped&) {
        return true;
    } catch (const numeric::interrupted_error&) {
        return true;
    } catch (...) {
        return false;
    }
}

std::vector<std::size_t> run_worker(std::uint64_t call, const std::string& key,
                                    const compute_with_input_fn& compute) {
    send(0, tag_ready, u64_bytes(call) + key);
    std::map<std::uint64_t, std::string> inputs; // by id: what rank 0 sent with a unit
    const std::string none;
    for (;;) {
        const message m = wait_from(0);
        if (m.t == tag_end) return {};
        if (m.t == tag_exit) {
            exit_received_ = true;
            exit_code_ = static_cast<int>(read_u64(m.bytes, 0));
            throw ended_by_root(exit_code_);
        }
        if (m.t != tag_unit) throw std::runtime_error("attnprop: unexpected message from rank 0");
        const std::uint64_t unit = read_u64(m.bytes, 0);
        std::uint64_t id = 0;
        const std::string* input = &none;
        if (m.bytes.size() > 8) { // a unit with an input: its id, then its bytes the first time
            id = read_u64(m.bytes, 8);
            if (m.bytes.size() < 17)
                throw std::runtime_error("attnprop: truncated message between ranks");
            if (m.bytes[16]) inputs[id] = m.bytes.substr(17);
            const auto it = inputs.find(id);
            if (it == inputs.end())
                throw std::runtime_error("attnprop: rank 0 sent a unit without its input");
            input = &it->second;
        }
        std::string reply;
        int t = tag_result;
        try {
            reply = u64_bytes(unit) +
                    compute(static_cast<std::size_t>(unit), static_cast<std::size_t>(id), *input);
        } catch (...) {
            const std::exception_ptr e = std::current_exception();
            if (is_dropped(e)) {
                t = tag_dropped;
                reply = u64_bytes(unit);
            } else {
                std::string printed;
                const int code = describe(e, printed);
                t = tag_failed;
                reply = u64_bytes(unit) + u64_bytes(static_cast<std::uint64_t>(code)) + printed;
            }
        }
        send(0, t, reply);
    }
}

/// A unit that did not give a result: its failure, local (exception) or remote.
struct failure {
    std::exception_ptr local;
    int code = 0;
    std::string printed;
};

std::vector<std::size_t> run_root(std::uint64_t call, const std::string& key,
                                  const std::vector<std::size_t>& order, const unit_inputs* inputs,
                                  const compute_with_input_fn& compute, const result_fn& on_result,
                                  const wanted_fn& wanted) {
    std::map<std::size_t, std::size_t> position; // unit -> index in order
    for (std::size_t i = 0; i < order.size(); ++i) position.emplace(order[i], i);
    std::mutex mu;                 // guards queue, closed, local_done, local_finished
    std::deque<std::size_t> queue(order.begin(), order.end());
    bool closed = false;           // hand out nothing more (failure or stop)
    struct local_result {
        std::size_t unit;
        std::string bytes;
        std::exception_ptr error;
    };
    std::deque<local_result> local_done;
    bool local_finished = false;
    auto take = [&]() -> std::optional<std::size_t> {
        std::lock_guard<std::mutex> lock(mu);
        while (!closed && !queue.empty()) {
            const std::size_t u = queue.front();
            queue.pop_front();
            if (!wanted || wanted(u)) return u;
        }
        return std::nullopt;
    };
    // The units' inputs, each made once (from either thread) and sent once to each worker.
    using input_ptr = std::shared_ptr<const std::string>;
    std::mutex input_mu;
    std::map<std::size_t, input_ptr> input_bytes; // by id
    std::vector<std::set<std::size_t>> input_sent(static_cast<std::size_t>(size_)); // by worker
    const input_ptr none = std::make_shared<const std::string>();
    auto input_of = [&](std::size_t u) -> std::pair<std::size_t, input_ptr> {
        if (!inputs) return {0, none};
        std::lock_guard<std::mutex> lock(input_mu);
        const std::size_t id = inputs->id_of(u);
        auto it = input_bytes.find(id);
        if (it == input_bytes.end())
            it = input_bytes.emplace(id, std::make_shared<const std::string>(inputs->bytes_of(id)))
                     .first;
        return {id, it->second};
    };
    auto close_queue = [&] {
        std::lock_guard<std::mutex> lock(mu);
        closed = true;
    };
    // Rank 0 computes too: a second thread takes units from the same queue.
    std::thread local([&] {
        while (auto u = take()) {
            local_result r{*u, {}, nullptr};
            try {
                const auto [id, input] = input_of(*u);
                r.bytes = compute(*u, id, *input);
            } catch (...) {
                r.error = std::current_exception();
            }
            std::lock_guard<std::mutex> lock(mu);
            local_done.push_back(std::move(r));
        }
        flint_cleanup(); // Arb's and MPFR's per-thread caches
        mpfr_free_cache();
        std::lock_guard<std::mutex> lock(mu);
        local_finished = true;
    });
    struct joiner {
        std::thread& t;
        std::function<void()> stop;
        ~joiner() {
            if (t.joinable()) {
                stop();
                t.join();
            }
        }
    } join_guard{local, close_queue};

    std::map<std::size_t, failure> failures; // by position in order
    std::vector<bool> received(order.size(), false);
    auto record = [&](std::size_t unit, failure f) {
        const auto it = position.find(unit);
        failures.emplace(it == position.end() ? order.size() + failures.size() : it->second, std::move(f));
        close_queue();
    };
    auto reply_next = [&](int w) {
        if (auto u = take()) {
            std::string msg = u64_bytes(*u);
            if (inputs) {
                const auto [id, input] = input_of(*u);
                const bool first = input_sent[static_cast<std::size_t>(w)].insert(id).second;
                msg += u64_bytes(id) + (first ? '\1' + *input : std::string(1, '\0'));
            }
            send(w, tag_unit, msg);
            peers_[static_cast<std::size_t>(w)] = peer::computing;
        } else {
            send(w, tag_end, {});
            peers_[static_cast<std::size_t>(w)] = peer::ended;
        }
    };
    auto accept = [&](std::size_t unit, const std::string& bytes) {
        const auto it = position.find(unit);
        if (it == position.end() || received[it->second])
            throw std::runtime_error("attnprop: a rank returned a unit it was not given");
        on_result(unit, bytes);
        received[it->second] = true;
    };
    // A worker's READY for this call: checked against rank 0's key and answered.
    auto ready = [&](int w, const std::string& worker_key) {
        peers_[static_cast<std::size_t>(w)] = peer::owed_reply;
        if (worker_key != key)
            record(order.size(), failure{nullptr, 2,
                                         "attnprop: error: rank " + std::to_string(w) +
                                             " read another model file or other options "
                                             "than rank 0 (every rank must see the same "
                                             "files at the same paths)"});
        reply_next(w);
    };
    // The workers as the last call left them: told END (their READY for this call is still
    // to come), or already waiting with it.
    for (std::size_t w = 1; w < peers_.size(); ++w) {
        if (peers_[w] == peer::ended) peers_[w] = peer::not_started;
        else if (peers_[w] == peer::ready_next) ready(static_cast<int>(w), next_ready_[w]);
    }
    backoff b;
    for (;;) {
        bool busy = false;
        if (numeric::stop_requested()) close_queue();
        std::deque<local_result> mine;
        bool local_over = false;
        {
            std::lock_guard<std::mutex> lock(mu);
            mine.swap(local_done);
            local_over = local_finished;
        }
        for (auto& r : mine) {
            busy = true;
            if (!r.error) accept(r.unit, r.bytes);
            else if (!is_dropped(r.error)) record(r.unit, failure{r.error, 0, {}});
        }
        while (auto m = poll(MPI_ANY_SOURCE)) {
            busy = true;
            const int w = m->source;
            auto& st = peers_[static_cast<std::size_t>(w)];
            switch (m->t) {
            case tag_ready: {
                const std::uint64_t c = read_u64(m->bytes, 0);
                if (c == call) {
                    ready(w, m->bytes.substr(8));
                } else if (c == call + 1 && st == peer::ended) {
                    st = peer::ready_next; // answered by the next call
                    next_ready_[static_cast<std::size_t>(w)] = m->bytes.substr(8);
                } else {
                    throw std::runtime_error("attnprop: rank " + std::to_string(w) +
                                             " is out of step with rank 0 (call " + std::to_string(c) +
                                             ", rank 0 at " + std::to_string(call) + ")");
                }
                break;
            }
            case tag_result: {
                st = peer::owed_reply;
                const std::uint64_t unit = read_u64(m->bytes, 0);
                accept(static_cast<std::size_t>(unit), m->bytes.substr(8));
                reply_next(w);
                break;
            }
            case tag_failed: {
                st = peer::owed_reply;
                const std::uint64_t unit = read_u64(m->bytes, 0);
                const int code = static_cast<int>(read_u64(m->bytes, 8));
                record(static_cast<std::size_t>(unit), failure{nullptr, code, m->bytes.substr(16)});
                reply_next(w);
                break;
            }
            case tag_dropped:
                st = peer::owed_reply;
                reply_next(w);
                break;
            case tag_done:
                // After END, the worker is at finish: normal. Before READY, it ended before it
                // took part (it failed where rank 0 did not).
                if (st == peer::ended) {
                    st = peer::at_finish;
                    break;
                }
                st = peer::at_finish;
                record(order.size(), failure{nullptr, 3,
                                             "attnprop: internal error: rank " + std::to_string(w) +
                                                 " ended before it took part in the run"});
                break;
            default: throw std::runtime_error("attnprop: unexpected message from rank " + std::to_string(w));
            }
        }
        const bool workers_over = std::all_of(peers_.begin() + 1, peers_.end(), [](peer p) {
            return p == peer::ended || p == peer::ready_next || p == peer::at_finish;
        });
        if (local_over && workers_over) {
            std::lock_guard<std::mutex> lock(mu);
            if (local_done.empty()) break;
        }
        if (busy) b.busy();
        else b.idle();
    }
    local.join();
    if (!failures.empty()) {
        failure& f = failures.begin()->second;
        if (f.local) std::rethrow_exception(f.local);
        throw remote_failure(f.code, f.printed);
    }
    std::vector<std::size_t> done;
    for (std::size_t i = 0; i < order.size(); ++i)
        if (received[i]) done.push_back(order[i]);
    return done;
}

} // namespace

void start(int* argc, char*** argv) {
    if (!launched_by_mpi()) return;
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    launched_ = true;
    peers_.assign(static_cast<std::size_t>(size_), peer::not_started);
    next_ready_.assign(static_cast<std::size_t>(size_), {});
}

bool launched() { return launched_; }
int rank() { return rank_; }
int size() { return size_; }

void set_failure_describer(failure_describer d) { describer_ = std::move(d); }

std::vector<std::size_t> run_units(const std::string& key, const std::vector<std::size_t>& order,
                                   const compute_fn& compute, const result_fn& on_result,
                                   const wanted_fn& wanted) {
    if (!launched_)
        return run_units_here(order, nullptr, without_input(compute), on_result, wanted);
    const std::uint64_t call = calls_++;
    if (rank_ != 0) return run_worker(call, key, without_input(compute));
    return run_root(call, key, order, nullptr, without_input(compute), on_result, wanted);
}

std::vector<std::size_t> run_units(const std::string& key, const std::vector<std::size_t>& order,
                                   const unit_inputs& inputs, const compute_with_input_fn& compute,
                                   const result_fn& on_result, const wanted_fn& wanted) {
    if (!launched_) return run_units_here(order, &inputs, compute, on_result, wanted);
    const std::uint64_t call = calls_++;
    if (rank_ != 0) return run_worker(call, key, compute);
    return run_root(call, key, order, &inputs, compute, on_result, wanted);
}

int finish(int code) {
    if (!launched_) return code;
    if (rank_ == 0) {
        const std::string c = u64_bytes(static_cast<std::uint64_t>(code));
        for (int w = 1; w < size_; ++w) {
            peer& st = peers_[static_cast<std::size_t>(w)];
            // Every worker sends exactly one more message unless it waits for an answer now.
            if (st != peer::owed_reply && st != peer::ready_next && st != peer::at_finish)
                (void)wait_from(w);
            send(w, tag_exit, c);
            st = peer::answered;
        }
    } else if (!exit_received_) {
        send(0, tag_done, {});
        for (;;) {
            const message m = wait_from(0);
            if (m.t == tag_exit) {
                code = static_cast<int>(read_u64(m.bytes, 0));
                break;
            }
        }
    } else {
        code = exit_code_;
    }
    MPI_Finalize();
    launched_ = false;
    return code;
}

} // namespace attnprop::dist
