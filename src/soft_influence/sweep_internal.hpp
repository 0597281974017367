#pragma once
/// @file sweep_internal.hpp
/// What the sweep's files share (sweep.cpp, sweep_units.cpp, cross_entropy.cpp): the seeds of
/// its inputs, the verdict of a measurement against its bound, the decimal form of its numbers,
/// and the readouts the cross-entropy corollary needs. Internal to soft_influence/.

#include "attention/soft.hpp"
#include "model/model.hpp"
#include "numeric/scalar.hpp"
#include "util/verdict.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace attnprop::analysis::sweep_detail {

using numeric::arb_ball;
using numeric::order;
using numeric::rational;

inline std::uint64_t splitmix(std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// The verdict of "a measurement is within its bound": passed when certainly within, failed
/// when certainly not, undecided otherwise.
inline verdict verdict_of(numeric::uncertain<bool> within) {
    return certainly(within) ? verdict::passed : possibly(within) ? verdict::undecided : verdict::failed;
}

/// Two verdicts of the same row: "every pair is within its bound", the three-valued
/// conjunction (failed wins, then undecided, then passed); a verdict that does not apply leaves
/// the other as it is.
inline verdict conjunction(verdict a, verdict b) {
    if (a == verdict::not_applicable) return b;
    if (b == verdict::not_applicable) return a;
    auto within = [](verdict c) {
        return c == verdict::undecided ? numeric::indeterminate
                                       : numeric::uncertain<bool>(c == verdict::passed);
    };
    return verdict_of(within(a) && within(b));
}

/// A cross-entropy compared with its floor: CE >= floor passes, CE < floor fails.
inline verdict floor_verdict(order o) { return verdict_of(numeric::is_greater_or_equal(o)); }

/// A measurement compared with its bound: measured <= bound passes.
inline verdict bound_verdict(order o) { return verdict_of(numeric::is_less_or_equal(o)); }

/// A ball holding the measured value: the value itself for balls, [lo, hi] exactly for
/// intervals, the exact value of a rounded number otherwise (compared as if exact).
template <class S> arb_ball as_ball(const S& x, const numeric::context& ctx) {
    return numeric::enclosing_ball(x, ctx);
}

/// A measurement for people and for the rows: the digits its enclosure certifies (at most 12)
/// and its radius, or a rounded kind's 12 digits (numeric::to_certified_display).
template <class S> std::string dec(const S& x) { return numeric::to_certified_display(x, 12); }

/// e with the input it was met on added to its reason (the place stays the same).
[[noreturn]] inline void rethrow_on_input(const numeric::undefined_error& e, const std::string& what) {
    throw numeric::undefined_error(e.reason() + "; " + what, e.where(), e.precision_may_resolve());
}

/// A softmax predictor over the input alphabet {0, 1} whose outputs include 0 and 1.
bool binary_alphabets(const model::model<rational>& m);

/// The index of output symbol `sym` in the readout (the number of symbols when absent).
inline std::size_t output_index(const model::model<rational>& m, const char* sym) {
    const auto& outs = m.out.symbols;
    return static_cast<std::size_t>(std::find(outs.begin(), outs.end(), sym) - outs.begin());
}

/// A softmax predictor of the next closing bracket of 2DYCK: the alphabet is the four brackets
/// and the readout's two symbols are ")" and "]".
bool dyck2_predictor(const model::model<rational>& m);

} // namespace attnprop::analysis::sweep_detail
