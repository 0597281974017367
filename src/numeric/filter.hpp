#pragma once
/// @file filter.hpp
/// The one precision filter of attnprop, after CGAL's Filtered_predicate: a question is first
/// answered by a cheap computation (an enclosure at low precision); only an answer that is not
/// certain is asked again, along a ladder of rungs (a scalar kind at a working precision), up to
/// a cap. The question's owner says what "certain" means (the judge); the filter owns the order
/// of the rungs, when to stop and the statistics (attempts per rung, which rung decided).
///
/// Its users (docs/architecture.md, "One filter"):
/// - the exact hard path's argmax (attention/hard_exact.cpp): midpoint-radius intervals, outward
///   intervals of every score, tight intervals of the candidates, exact rationals of the
///   candidates, in the compile-time form filter_cascade (once per argmax: a hot loop);
/// - the pair and ladder properties (props/soft_influence.cpp): certified double intervals, then
///   Arb balls at the same precision;
/// - a row of the influence sweep (soft_influence/sweep_units.cpp): intervals, then balls at the
///   sweep's precision doubled up to --precision-cap;
/// - the runner (runner/property.cpp): a property's check at --precision doubled up to
///   --precision-cap.

#include "numeric/kinds.hpp"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace attnprop::numeric {

/// One rung of a ladder: a scalar kind at a working precision. `automatic` stands for the
/// kinds the computation itself chooses (the runner's check: the property's kinds).
struct rung {
    kind_choice kind = kind_choice::automatic();
    long bits = 0;
    friend bool operator==(const rung&, const rung&) = default;
};

/// The rungs `kind` at `bits`, then at doubled precision while it stays <= cap (only the first
/// when cap < 2 bits).
inline std::vector<rung> doubling_ladder(kind_choice kind, long bits, long cap) {
    std::vector<rung> out{{kind, bits}};
    for (long b = bits; b > 0 && b <= cap / 2;) {
        b *= 2;
        out.push_back({kind, b});
    }
    return out;
}

/// What the judge of a filter says about an answer.
enum class filter_step {
    decided,  ///< certain: the filter stops with this answer
    escalate, ///< not certain, and a later rung may decide it
    stop      ///< not certain, and no later rung would change that (the answer stands)
};

/// Why a filter stopped.
enum class filter_end {
    decided, ///< a rung's answer was certain
    stopped, ///< undecided, and the judge said more rungs would not help
    top      ///< undecided at the last rung
};

/// Attempts and decisions per rung, summed over the questions a filter answered: what the cheap
/// rungs decide, and what reaches the expensive ones.
class filter_stats {
public:
    filter_stats() = default;
    /// With `rungs` rungs counted (more are added as they are attempted).
    explicit filter_stats(std::size_t rungs) : attempts_(rungs, 0), decided_(rungs, 0) {}

    /// A question was asked at rung r.
    void attempted(std::size_t r) {
        if (r >= attempts_.size()) grow(r + 1);
        ++attempts_[r];
    }
    /// Rung r's answer was certain.
    void decided(std::size_t r) {
        if (r >= decided_.size()) grow(r + 1);
        ++decided_[r];
    }
    /// A question no rung decided.
    void undecided() { ++undecided_; }

    std::size_t rungs() const { return attempts_.size(); }
    std::size_t attempts(std::size_t r) const { return r < attempts_.size() ? attempts_[r] : 0; }
    std::size_t decisions(std::size_t r) const { return r < decided_.size() ? decided_[r] : 0; }
    /// Decisions at rungs [first, last).
    std::size_t decisions(std::size_t first, std::size_t last) const {
        std::size_t s = 0;
        for (std::size_t r = first; r < last && r < decided_.size(); ++r) s += decided_[r];
        return s;
    }
    std::size_t undecided_count() const { return undecided_; }

    filter_stats& operator+=(const filter_stats& o) {
        if (o.rungs() > rungs()) grow(o.rungs());
        for (std::size_t r = 0; r < o.rungs(); ++r) {
            attempts_[r] += o.attempts_[r];
            decided_[r] += o.decided_[r];
        }
        undecided_ += o.undecided_;
        return *this;
    }

private:
    void grow(std::size_t n) {
        attempts_.resize(n, 0);
        decided_.resize(n, 0);
    }
    std::vector<std::size_t> attempts_, decided_;
    std::size_t undecided_ = 0;
};

/// The answer of a filter: the answer of the last rung tried, that rung's index and why the
/// filter stopped there.
template <class R> struct filtered {
    R answer;
    std::size_t rung = 0;
    filter_end end = filter_end::decided;
};

/// Asks `attempt(rung, index)` along `ladder`, in order, until `judge(answer, index)` says
/// decided or stop, or the ladder ends. `attempt` returns std::optional<R>: std::nullopt when the
/// rung gave no answer that stands (an enclosure that met an undefined value more precision may
/// resolve), which escalates; the last rung must answer (std::logic_error otherwise). Exceptions
/// of `attempt` and `judge` propagate. `stats` (optional) counts every attempt and the rung that
/// decided. Precondition: a ladder of at least one rung.
template <class Attempt, class Judge>
auto run_filter(const std::vector<rung>& ladder, Attempt&& attempt, Judge&& judge,
                filter_stats* stats = nullptr)
    -> filtered<typename std::invoke_result_t<Attempt&, const rung&, std::size_t>::value_type> {
    using R = typename std::invoke_result_t<Attempt&, const rung&, std::size_t>::value_type;
    if (ladder.empty()) throw std::logic_error("run_filter: an empty ladder");
    for (std::size_t i = 0; i < ladder.size(); ++i) {
        if (stats) stats->attempted(i);
        std::optional<R> answer = attempt(ladder[i], i);
        const bool last = i + 1 == ladder.size();
        if (!answer) {
            if (last) throw std::logic_error("run_filter: the last rung gave no answer");
            continue;
        }
        const filter_step s = judge(static_cast<const R&>(*answer), i);
        if (s == filter_step::decided) {
            if (stats) stats->decided(i);
            return {std::move(*answer), i, filter_end::decided};
        }
        if (s == filter_step::stop || last) {
            if (stats) stats->undecided();
            return {std::move(*answer), i, s == filter_step::stop ? filter_end::stopped : filter_end::top};
        }
    }
    throw std::logic_error("run_filter: unreachable");
}

/// One stage of filter_cascade: rung `rung` of its filter's ladder, and a callable returning
/// true when its answer is certain.
template <class F> struct cascade_stage {
    std::size_t rung;
    F decide;
};
template <class F> cascade_stage<F> at_rung(std::size_t rung, F decide) {
    return {rung, std::move(decide)};
}

/// The index returned by filter_cascade when no stage decided.
inline constexpr std::size_t no_rung = static_cast<std::size_t>(-1);

/// The compile-time form of run_filter for hot loops (no ladder, no allocation): the stages are
/// called in order until one returns true (its answer is certain, kept by the callables in
/// their captures); returns that stage's rung, or no_rung. A later stage may read what an earlier
/// one left undecided (its candidates). `stats` (optional) counts the attempts and the decision.
template <class... F> std::size_t filter_cascade(filter_stats* stats, cascade_stage<F>... stage) {
    std::size_t by = no_rung;
    const auto run = [&](auto& s) {
        if (stats) stats->attempted(s.rung);
        if (!s.decide()) return false;
        if (stats) stats->decided(s.rung);
        by = s.rung;
        return true;
    };
    if (!(run(stage) || ...) && stats) stats->undecided();
    return by;
}

} // namespace attnprop::numeric
