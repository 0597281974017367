#pragma once
/// @file restriction_rows.hpp
/// The row analysis of the restriction builder (not part of the public API): the dependency
/// sets and tables of one layer, what the scores of one head need, and the analysis of one
/// row (i, h, z) — score ranges of every key, whether the triple is satisfied, its sound
/// candidate set and the keys the greedy may pin (restriction.hpp has the rules).

#include "hard_limit/restriction.hpp"
#include "numeric/interval.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnprop::analysis::detail {

using numeric::interval;
using numeric::order;

constexpr std::size_t no_key = static_cast<std::size_t>(-1);

/// D and T of every position at one layer (rows not built stay empty).
struct layer_data {
    std::vector<std::vector<std::size_t>> dep;
    std::vector<std::vector<vec<rational>>> y;
    std::vector<std::vector<vec<interval>>> yi;
    std::vector<bool> built;
};

/// Digit t of entry w (mixed radix, base s, digit 0 least significant).
inline std::size_t digit(std::size_t w, std::size_t t, const std::vector<std::size_t>& pw,
                         std::size_t s) {
    return (w / pw[t]) % s;
}

/// Index over `sub` (a subset of `super`, both ascending) of entry w over `super`.
inline std::size_t project(std::size_t w, const std::vector<std::size_t>& super,
                    const std::vector<std::size_t>& sub, const std::vector<std::size_t>& pw,
                    std::size_t s) {
    std::size_t out = 0, u = 0;
    for (std::size_t t = 0; t < super.size() && u < sub.size(); ++t) {
        if (super[t] == sub[u]) {
            out += digit(w, t, pw, s) * pw[u];
            ++u;
        }
    }
    return out;
}

/// Positions of `sub`'s elements inside `super` (both ascending, sub ⊆ super).
inline std::vector<std::size_t> positions_in(const std::vector<std::size_t>& super,
                                             const std::vector<std::size_t>& sub) {
    std::vector<std::size_t> pos;
    pos.reserve(sub.size());
    std::size_t t = 0;
    for (std::size_t v : sub) {
        while (t < super.size() && super[t] != v) ++t;
        pos.push_back(t);
    }
    return pos;
}

/// Index over a subset of entry w, given the subset's positions (positions_in).
inline std::size_t project_fast(std::size_t w, const std::vector<std::size_t>& pos,
                                const std::vector<std::size_t>& pw, std::size_t s) {
    std::size_t out = 0;
    for (std::size_t u = 0; u < pos.size(); ++u) out += digit(w, pos[u], pw, s) * pw[u];
    return out;
}

/// Everything the scores of one head at one layer need.
struct head_prep {
    enum class kind { constant, dot, map } type = kind::dot;
    const model::head<rational>* exact = nullptr;
    const model::head<interval>* filter = nullptr;
    /// The layer's mask: row i ranks the keys [0, model::key_end(mask, i, n)) alone (theory.md
    /// §1.4: under a causal mask, the keys j <= i).
    model::mask_kind mask = model::mask_kind::none;
    std::vector<std::size_t> off;          // key j's entries are off[j] .. off[j+1)
    std::vector<std::uint32_t> id;         // entry off[j] + e -> its distinct key id
    // Per distinct id: the key vector (dot heads: K y + k_bias; map heads: y itself), as an
    // interval and exactly, and (dot) the fast form. Equal keys give equal scores, so every
    // score is computed once per row and distinct key.
    numeric::dot_rows fast;
    std::vector<vec<interval>> keys;
    std::vector<vec<rational>> keys_exact;
};

/// One candidate pin of the greedy: key j at entry a reaches G.
struct achiever {
    std::uint32_t key = 0;
    std::vector<std::uint32_t> entries;
};

/// The analysis of one (i, h, z).
struct row_outcome {
    std::vector<std::uint32_t> cand;
    bool satisfied = false;
    std::vector<achiever> achievers; // when unsatisfied and asked for
};

/// Per-thread state for analysing rows (i, h, z) of one head at one layer.
class row_analyser {
public:
    row_analyser(const layer_data& prev, const head_prep& hp, const numeric::context& ctx,
                 std::size_t n, std::size_t s, const std::vector<std::size_t>& pw,
                 const std::vector<std::vector<std::size_t>>& occ)
        : prev_(prev), hp_(hp), ctx_(ctx), n_(n), s_(s), pw_(pw), occ_(occ) {}

    /// Analyses query row i at entry z of T_{k-1}(i).
    row_outcome analyse(std::size_t i, std::size_t z, bool want_achievers,
                        const std::vector<char>& allowed, bool unsound);

    /// The score of key j at entry e for the query entry z of row i: an enclosure (interval
    /// arithmetic keeping exact points exact) and the exact value.
    interval tight_score(std::size_t i, std::size_t z, std::size_t j, std::uint32_t e);
    rational exact_score(std::size_t i, std::size_t z, std::size_t j, std::uint32_t e);

private:
    void setup(std::size_t i, std::size_t z);

    std::vector<std::uint32_t> all_entries(std::size_t j) const;

    std::vector<std::uint32_t> entries_of(std::size_t j) const;

    template <class F> void for_entries(std::size_t j, F&& f) const {
        if (shared_slot_[j] >= 0) {
            for (std::uint32_t e : shared_entries_[static_cast<std::size_t>(shared_slot_[j])]) f(e);
        } else {
            const std::size_t count = prev_.y[j].size();
            for (std::size_t e = 0; e < count; ++e) f(static_cast<std::uint32_t>(e));
        }
    }

    bool entry_allowed(std::size_t j, std::uint32_t e, const std::vector<char>& allowed) const;

    const interval& score_tight(std::size_t j, std::uint32_t e);

    const rational& score_exact(std::size_t j, std::uint32_t e);

    /// Sets hi/lo of key j at `level` (0 fast, 1 tight, 2 exact).
    void range_at_level(std::size_t j, int level);

    void ensure(std::size_t j, int level);

    const interval& val(std::size_t j, bool hi) const { return hi ? hi_[j] : lo_[j]; }
    const rational& val_e(std::size_t j, bool hi) const { return hi ? hi_e_[j] : lo_e_[j]; }

    /// Exact comparison of (hi or lo of a) with (hi or lo of b), refining on demand.
    order cmp(std::size_t a, bool ahi, std::size_t b, bool bhi);

    /// Exact comparison of the score of key j at entry e with hi_g.
    order compare_entry_to(std::size_t j, std::uint32_t e, std::size_t g);

    const layer_data& prev_;
    const head_prep& hp_;
    numeric::context ctx_;
    std::size_t n_, s_;
    const std::vector<std::size_t>& pw_;
    const std::vector<std::vector<std::size_t>>& occ_;

    std::size_t i_ = 0, z_ = 0;
    vec<interval> q_;
    vec<rational> qe_;
    bool qe_valid_ = false;
    std::vector<interval> fast_;
    std::uint32_t generation_ = 0;
    std::vector<std::uint32_t> tight_gen_, exact_gen_;
    std::vector<interval> tight_;
    std::vector<rational> exact_;
    std::vector<interval> hi_, lo_;
    std::vector<std::uint8_t> level_;
    std::vector<rational> hi_e_, lo_e_;
    std::vector<char> in_u_, in_r_, left_ok_;
    std::vector<int> shared_slot_;
    std::vector<std::size_t> shared_keys_;
    std::vector<std::vector<std::uint32_t>> shared_entries_;
};

/// Testing only: when set, the builder ranks every key of a masked row, as if the layer had no
/// mask: the negative control of hard-limit/masked-certificate-valid, which the certificate
/// (checked against the masked exact pass) must catch.
bool& ignore_mask_for_testing();

} // namespace attnprop::analysis::detail
