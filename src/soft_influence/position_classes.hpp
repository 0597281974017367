#pragma once
/// @file position_classes.hpp
/// Classes of positions for the bounds over every input (all_inputs.hpp, docs/bounds.md "Every
/// input, every n"): a partition of the positions 1..n of every length n of a range into
/// classes, each with bounds on its size that are affine in n and a box that holds the
/// positional embedding p_i of each of its members at each of those lengths.
///
/// At one length the classes are single positions (exact p_i) or, for long inputs, blocks of
/// consecutive positions of one residue modulo the formulas' period. Over a range of lengths
/// n_lo <= n <= n_hi (n_hi possibly infinite) they are the head positions i = 1..a, the tail
/// positions i = n - b..n (eos at n), and the bulk a < i < n - b cut into cells of t = i/n and
/// residues of i; the bulk cell (k/m, (k+1)/m] of residue r holds between
/// n/(m P) - (a + b + 1)/P - 1 and n/(m P) + 1 positions at every n. The positional boxes come
/// from model/formula/class_range.hpp (formulas), the rows a block or range can reach (tables)
/// and the arguments' ranges (sinusoids).

#include "model/model.hpp"
#include "numeric/dinterval.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attnprop::analysis {

/// The lengths n_lo <= n <= n_hi (n_hi absent: every n >= n_lo), of residue `residue` modulo
/// `period` when given.
struct length_range {
    long lo = 2;
    std::optional<long> hi;
    long period = 1;
    std::optional<long> residue;
    bool single() const { return hi && *hi == lo; }
    /// "n = 100", "64 <= n <= 127", "n >= 65536", with ", n = 1 mod 2" when a residue is set.
    std::string to_string() const;
};

/// One class of positions: at every length n of its range it holds between
/// slope_lo·n + count_lo and slope_hi·n + count_hi positions (the lower bound >= 0 on the
/// range; slope_lo <= slope_hi differ only by the rounding of 1/(m P)).
struct position_class {
    double slope_lo = 0, slope_hi = 0, count_lo = 1, count_hi = 1;
    bool eos = false;              ///< the class {n} (eos, never changed)
    bool one = true;               ///< exactly one position at every length
    std::optional<long> position;  ///< at one length: the 1-based position of a one-member class
    std::string label;             ///< "i = 3", "i = n - 1", "i/n in (1/4, 5/16], i = 1 mod 2"
    std::vector<numeric::dinterval> positional; ///< box of p_i over the members and lengths
    bool bounded = true;           ///< every coordinate of the box is finite
    /// Membership: at one length the positions first..last of residue `residue` mod `period`;
    /// over a range a head position (i = offset), a tail position (i = n - offset) or a bulk
    /// cell (cell k of `cells`: k n/cells < i <= (k+1) n/cells, head < i < n - tail, residue).
    enum class shape { block, head, tail, bulk } kind = shape::block;
    long first = 0, last = 0, offset = 0, cell = 0, cells = 1, residue = 0, period = 1;
    long head = 0, tail = 0;
    /// Whether position i (1-based) of length n belongs to the class (n in its range).
    bool contains(long n, long i) const;
};

struct class_options {
    /// At one length: single positions up to n <= this, else about this many classes.
    std::size_t max_classes = 512;
    /// Over a range: head and tail positions kept single (i = 1..head, i = n - tail..n).
    long head = 4, tail = 4;
    /// Over a range: at most this many cells of t = i/n (fewer when n_lo is too small for
    /// every cell to be non-empty).
    std::size_t cells = 128;
};

/// The period P of the model's positional formulas (formula::residue_period over every
/// coordinate, their least common multiple, at most 12): residues of i and n modulo P make
/// (-1)^i, cos(pi i) and floor(i/2) exact on a class. 1 for tables and sinusoids.
long positional_period(const model::model<numeric::rational>& m);

/// The classes at one length n >= 2, in position order (eos last). Precondition: n within a
/// finite positional table.
std::vector<position_class> classes_at(const model::model<numeric::rational>& m, long n,
                                       const class_options& opt = {});

/// The classes over a range of lengths (r.lo >= head + tail + 2), with the number of bulk cells
/// reduced until every cell is non-empty at r.lo; std::nullopt when not even one cell fits.
/// Head first, then the bulk cells by t and residue, then the tail (eos last).
std::optional<std::vector<position_class>> classes_over(const model::model<numeric::rational>& m,
                                                        const length_range& r,
                                                        const class_options& opt = {});

} // namespace attnprop::analysis
