#pragma once
/// @file restrict_plan.hpp
/// The work of `attnprop restrict` over a list of lengths, cut into units (docs/cli.md,
/// "Running under MPI"): for each length n its restriction, then its language analysis and up
/// to `max_blocks` blocks of its certificate's inputs, which read that restriction. A length
/// is assembled once every part is in, and the parts are those of one process's run
/// (restrict_length), so the result is the same however the units were computed. The command
/// moves the units between processes and journals them; this file decides what they are, in
/// which order they are handed out, what each computes and how a length is assembled.

#include "hard_limit/restriction.hpp"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace attnprop::analysis {

/// What one length of `restrict` computes: the restriction, its certificate and, with a
/// language, the language analysis.
struct restrict_length_result {
    restriction restr;
    certificate cert;
    std::optional<language_result> language;
};

/// One length in one piece: with a language run_language(m, n, l, lo), else
/// build_restriction(m, n, lo.restrict) and its certificate (lo.certify). Throws like them.
restrict_length_result restrict_length(const model::model<rational>& m, long n,
                                       const std::optional<lang::language>& l,
                                       const language_options& lo);

/// The lengths of one `restrict` run cut into units, and their parts as they arrive.
///
/// Units of the first call: length i's restriction (unit i). Units of the second call: part k
/// of length i is unit i * per_length + k, k = 0 its language analysis and k = 1 + b block b
/// of its certificate's inputs. Everything computed depends on the model, the options, n and
/// the unit alone. The parts a length holds are guarded by a mutex, so units may be computed
/// by several threads while one thread adds what arrives; adding parts and reading a length
/// are not meant to run concurrently with each other.
class restrict_plan {
public:
    static constexpr std::size_t max_blocks = 16;
    static constexpr std::size_t per_length = 1 + max_blocks;

    /// `m`, `lo` and `ns` must outlive the plan.
    restrict_plan(const model::model<rational>& m, const language_options& lo,
                  std::optional<lang::language> l, const std::vector<long>& ns);

    std::size_t lengths() const { return ns_.size(); }
    long n(std::size_t i) const { return ns_.at(i); }

    /// Unit i of the first call: the restriction of length i (with the language's pinned
    /// symbols and pre-fixed edges when there is a language).
    restriction restriction_unit(std::size_t i) const;

    /// Part k of a unit of the second call (0: language, 1 + b: block b) and its length.
    static std::size_t length_of(std::size_t u) { return u / per_length; }
    static std::size_t part_of(std::size_t u) { return u % per_length; }

    /// The language analysis of a length whose restriction is r. Throws std::runtime_error
    /// when the run has no language.
    language_result language_unit(const restriction& r) const;
    /// The exact outputs of block b of r's certificate inputs. Throws std::runtime_error for a
    /// block out of range.
    std::vector<vec<rational>> block_unit(const restriction& r, std::size_t b) const;

    /// Length i's restriction, held once: `make` is called (under the lock) only when the
    /// plan does not hold it yet (a process computing parts decodes it from its unit's input
    /// once). Throws std::runtime_error for a length out of range.
    std::shared_ptr<const restriction> hold_restriction(std::size_t i,
                                                        const std::function<restriction()>& make);

    /// Records length i's restriction, with the seconds it took. Throws std::runtime_error
    /// when it is the restriction of another n.
    void add_restriction(std::size_t i, restriction r, double seconds);
    /// Throws std::runtime_error unless part k of length i may be added now: its restriction
    /// is in, and it is the language analysis of a run with a language or a block in range.
    void expect_part(std::size_t i, std::size_t k) const;
    /// Records the language analysis of length i. Throws std::runtime_error before its
    /// restriction or without a language.
    void add_language(std::size_t i, language_result r, double seconds);
    /// Records block b of length i. Throws std::runtime_error before its restriction, for a
    /// block out of range or with the wrong number of outputs.
    void add_block(std::size_t i, std::size_t b, std::vector<vec<rational>> outputs,
                   double seconds);

    /// Forgets every part.
    void clear();

    /// Whether some part of length i is in.
    bool started(std::size_t i) const;

    /// The lengths not `done` whose restriction is still to build, largest n first.
    std::vector<std::size_t> restriction_order(const std::vector<bool>& done) const;
    /// The parts still to compute of the lengths not `done`, largest n first; within a length
    /// the language analysis first.
    std::vector<std::size_t> part_order(const std::vector<bool>& done) const;

    /// Length i once every part is in: its restriction, the certificate assembled from the
    /// blocks (certify_outputs) and the language analysis.
    std::optional<restrict_length_result> assemble(std::size_t i) const;
    /// The seconds length i's parts took, added up.
    double seconds(std::size_t i) const { return lengths_.at(i).seconds; }

    /// The certificate's `count` inputs in blocks: min(count, max_blocks) of them, of sizes
    /// differing by at most one; a function of count alone. block returns (first, count) of
    /// block b and throws std::runtime_error for b out of range.
    static std::size_t blocks(std::size_t count) { return std::min(count, max_blocks); }
    static std::pair<std::size_t, std::size_t> block(std::size_t count, std::size_t b);

private:
    struct length {
        std::shared_ptr<const restriction> r;
        std::optional<language_result> lang;
        std::vector<std::optional<std::vector<vec<rational>>>> outputs; ///< by block
        double seconds = 0;
    };

    /// Length i's restriction, or a std::runtime_error naming the part that came before it.
    const restriction& held(std::size_t i, const char* what) const;
    std::vector<std::size_t> by_length() const;

    const model::model<rational>& m_;
    const language_options& lo_;
    std::optional<lang::language> lang_;
    const std::vector<long>& ns_;
    std::vector<length> lengths_;
    mutable std::mutex mu_; ///< guards each length's `r` (a second thread may compute parts)
};

} // namespace attnprop::analysis
