// The analysis of one row (i, h, z) of the restriction builder (restriction_rows.hpp): score
// ranges [lo_j, hi_j] of every key, first as cheap enclosures, refined to tight intervals and
// then to exact rationals only where a comparison needs it; the candidate set under the
// leftmost-argmax rule; the achievers the greedy may pin.
#include "hard_limit/restriction_rows.hpp"

#include "attention/common.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace attnprop::analysis::detail {

namespace {

interval tight_dot(const vec<interval>& q, const vec<interval>& k) {
    interval acc(0.0);
    for (std::size_t t = 0; t < q.size(); ++t) numeric::fma_acc(acc, q[t], k[t]);
    return acc;
}

} // namespace

bool& ignore_mask_for_testing() {
    static bool ignore = false;
    return ignore;
}

row_outcome row_analyser::analyse(std::size_t i, std::size_t z, bool want_achievers,
                    const std::vector<char>& allowed, bool unsound) {
    row_outcome out;
    if (hp_.type == head_prep::kind::constant) {
        // Every key has the same score: the leftmost key wins, always.
        out.cand = {0};
        out.satisfied = true;
        return out;
    }
    setup(i, z);
    // Row i's keys [0, end): every key, or j <= i under a causal mask.
    const std::size_t end = model::key_end(hp_.mask, i, n_);
    // Level-0 ranges and the lower bound of the largest lo.
    double lam = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < end; ++j) {
        range_at_level(j, hp_.type == head_prep::kind::dot ? 0 : 1);
        lam = std::max(lam, lo_[j].lo());
    }
    std::vector<std::size_t> W;
    for (std::size_t j = 0; j < end; ++j) {
        in_u_[j] = hi_[j].hi() >= lam;
        in_r_[j] = lo_[j].hi() >= lam;
        if (in_u_[j] || in_r_[j]) W.push_back(j);
    }
    // G: the largest hi, exactly (keys outside U have hi < Λ <= G).
    std::size_t g = no_key;
    for (std::size_t j : W)
        if (in_u_[j] && (g == no_key || cmp(j, true, g, true) == order::greater)) g = j;
    // Satisfied iff some p has lo_p = G (such p has lo_p >= Λ, so p is in R).
    std::size_t pstar = no_key;
    for (std::size_t j : W)
        if (in_r_[j] && cmp(j, false, g, true) == order::equal) {
            pstar = j;
            break;
        }
    out.satisfied = pstar != no_key;
    if (unsound && out.satisfied) {
        // NEGATIVE CONTROL: drop the keys j < p* with hi_j = G (violates the leftmost rule).
        out.cand = {static_cast<std::uint32_t>(pstar)};
    } else {
        // Left sweep: hi_j > max_{j' < j} lo_j'; right sweep: hi_j >= max_{j' > j} lo_j'.
        std::size_t pm = no_key;
        for (std::size_t j : W) {
            left_ok_[j] = true;
            if (in_u_[j] && pm != no_key) left_ok_[j] = cmp(j, true, pm, false) == order::greater;
            if (in_r_[j] && (pm == no_key || cmp(j, false, pm, false) == order::greater))
                pm = j;
        }
        std::size_t sm = no_key;
        for (auto it = W.rbegin(); it != W.rend(); ++it) {
            const std::size_t j = *it;
            bool right_ok = true;
            if (in_u_[j] && sm != no_key) right_ok = cmp(j, true, sm, false) != order::less;
            if (in_u_[j] && left_ok_[j] && right_ok)
                out.cand.push_back(static_cast<std::uint32_t>(j));
            if (in_r_[j] && (sm == no_key || cmp(j, false, sm, false) == order::greater))
                sm = j;
        }
        std::reverse(out.cand.begin(), out.cand.end());
    }
    if (out.cand.empty()) throw std::logic_error("restriction: empty candidate set");
    // Greedy: the achievers (keys that can reach G) left of p*, in position order. Pinning
    // the leftmost one to a maximising entry makes it the only candidate. A triple whose
    // leftmost achiever is p* itself already has Cand = {p*} and asks for nothing.
    if (want_achievers && out.cand.size() > 1) {
        for (std::size_t j : W) {
            if (pstar != no_key && j >= pstar) break;
            if (!in_u_[j] || cmp(j, true, g, true) != order::equal) continue;
            achiever a;
            a.key = static_cast<std::uint32_t>(j);
            for (std::uint32_t e : entries_of(j)) {
                if (!entry_allowed(j, e, allowed)) continue;
                if (compare_entry_to(j, e, g) == order::equal) a.entries.push_back(e);
            }
            if (!a.entries.empty()) out.achievers.push_back(std::move(a));
            if (out.achievers.size() >= 8) break;
        }
    }
    return out;
}

interval row_analyser::tight_score(std::size_t i, std::size_t z, std::size_t j, std::uint32_t e) {
    const vec<interval>& yq = prev_.yi[i][z];
    const auto& k = hp_.keys[hp_.id[hp_.off[j] + e]];
    if (hp_.type == head_prep::kind::dot)
        return tight_dot(attention::query(*hp_.filter, yq, ctx_), k);
    return attention::map_score(*hp_.filter, yq, k, ctx_);
}

rational row_analyser::exact_score(std::size_t i, std::size_t z, std::size_t j, std::uint32_t e) {
    const vec<rational>& yq = prev_.y[i][z];
    const auto& k = hp_.keys_exact[hp_.id[hp_.off[j] + e]];
    if (hp_.type == head_prep::kind::dot) {
        const vec<rational> q = attention::query(*hp_.exact, yq, ctx_);
        return model::dot(q.data(), k.data(), q.size(), ctx_);
    }
    return attention::map_score(*hp_.exact, yq, k, ctx_);
}

void row_analyser::setup(std::size_t i, std::size_t z) {
    i_ = i;
    z_ = z;
    if (hi_.size() != n_) {
        hi_.assign(n_, interval(0.0));
        lo_.assign(n_, interval(0.0));
        level_.assign(n_, 0);
        hi_e_.assign(n_, rational(0));
        lo_e_.assign(n_, rational(0));
        in_u_.assign(n_, false);
        in_r_.assign(n_, false);
        left_ok_.assign(n_, false);
        shared_slot_.assign(n_, -1);
    }
    for (std::size_t j : shared_keys_) shared_slot_[j] = -1;
    shared_keys_.clear();
    shared_entries_.clear();
    // Keys sharing free inputs with D_{k-1}(i): only their entries consistent with z count.
    const auto& di = prev_.dep[i];
    for (std::size_t t = 0; t < di.size(); ++t) {
        const std::size_t input = di[t];
        const std::size_t sym = digit(z, t, pw_, s_);
        for (std::size_t j : occ_[input]) {
            const auto& dj = prev_.dep[j];
            auto it = std::lower_bound(dj.begin(), dj.end(), input);
            if (it == dj.end() || *it != input) continue; // stale occurrence
            const std::size_t tj = static_cast<std::size_t>(it - dj.begin());
            if (shared_slot_[j] < 0) {
                shared_slot_[j] = static_cast<int>(shared_entries_.size());
                shared_keys_.push_back(j);
                std::vector<std::uint32_t> all(prev_.y[j].size());
                for (std::size_t e = 0; e < all.size(); ++e) all[e] = static_cast<std::uint32_t>(e);
                shared_entries_.push_back(std::move(all));
            }
            auto& list = shared_entries_[static_cast<std::size_t>(shared_slot_[j])];
            std::erase_if(list, [&](std::uint32_t e) { return digit(e, tj, pw_, s_) != sym; });
        }
    }
    if (hp_.type == head_prep::kind::dot) {
        q_ = attention::query(*hp_.filter, prev_.yi[i][z], ctx_);
        fast_.resize(hp_.fast.size());
        numeric::dot_all(q_.data(), hp_.fast, fast_.data());
        qe_valid_ = false;
    }
    if (++generation_ == 0) {
        std::fill(tight_gen_.begin(), tight_gen_.end(), 0);
        std::fill(exact_gen_.begin(), exact_gen_.end(), 0);
        generation_ = 1;
    }
    if (tight_gen_.size() != hp_.keys.size()) {
        tight_gen_.assign(hp_.keys.size(), 0);
        exact_gen_.assign(hp_.keys.size(), 0);
        tight_.assign(hp_.keys.size(), interval(0.0));
        exact_.assign(hp_.keys.size(), rational(0));
    }
    std::fill(level_.begin(), level_.end(), 0);
}

std::vector<std::uint32_t> row_analyser::all_entries(std::size_t j) const {
    std::vector<std::uint32_t> all(prev_.y[j].size());
    for (std::size_t e = 0; e < all.size(); ++e) all[e] = static_cast<std::uint32_t>(e);
    return all;
}

std::vector<std::uint32_t> row_analyser::entries_of(std::size_t j) const {
    if (shared_slot_[j] >= 0) return shared_entries_[static_cast<std::size_t>(shared_slot_[j])];
    return all_entries(j);
}

bool row_analyser::entry_allowed(std::size_t j, std::uint32_t e, const std::vector<char>& allowed) const {
    const auto& dj = prev_.dep[j];
    for (std::size_t t = 0; t < dj.size(); ++t)
        if (!allowed[digit(e, t, pw_, s_)]) return false;
    return true;
}

const interval& row_analyser::score_tight(std::size_t j, std::uint32_t e) {
    const std::uint32_t id = hp_.id[hp_.off[j] + e];
    if (tight_gen_[id] != generation_) {
        tight_gen_[id] = generation_;
        tight_[id] = hp_.type == head_prep::kind::dot
                         ? tight_dot(q_, hp_.keys[id])
                         : attention::map_score(*hp_.filter, prev_.yi[i_][z_], hp_.keys[id], ctx_);
    }
    return tight_[id];
}

const rational& row_analyser::score_exact(std::size_t j, std::uint32_t e) {
    const std::uint32_t id = hp_.id[hp_.off[j] + e];
    if (exact_gen_[id] != generation_) {
        exact_gen_[id] = generation_;
        if (hp_.type == head_prep::kind::dot) {
            if (!qe_valid_) {
                qe_ = attention::query(*hp_.exact, prev_.y[i_][z_], ctx_);
                qe_valid_ = true;
            }
            exact_[id] = model::dot(qe_.data(), hp_.keys_exact[id].data(), qe_.size(), ctx_);
        } else {
            exact_[id] = attention::map_score(*hp_.exact, prev_.y[i_][z_], hp_.keys_exact[id], ctx_);
        }
    }
    return exact_[id];
}

void row_analyser::range_at_level(std::size_t j, int level) {
    bool first = true;
    if (level == 2) {
        for_entries(j, [&](std::uint32_t e) {
            const rational& v = score_exact(j, e);
            if (first || v > hi_e_[j]) hi_e_[j] = v;
            if (first || v < lo_e_[j]) lo_e_[j] = v;
            first = false;
        });
        hi_[j] = interval::from_rational(hi_e_[j], ctx_);
        lo_[j] = interval::from_rational(lo_e_[j], ctx_);
    } else {
        double hl = 0, hh = 0, ll = 0, lh = 0;
        for_entries(j, [&](std::uint32_t e) {
            const interval v = level == 0 ? fast_[hp_.id[hp_.off[j] + e]] : score_tight(j, e);
            if (first) {
                hl = hh = v.lo();
                hh = v.hi();
                ll = v.lo();
                lh = v.hi();
            } else {
                hl = std::max(hl, v.lo());
                hh = std::max(hh, v.hi());
                ll = std::min(ll, v.lo());
                lh = std::min(lh, v.hi());
            }
            first = false;
        });
        hi_[j] = interval(hl, hh);
        lo_[j] = interval(ll, lh);
    }
    if (first) throw std::logic_error("restriction: a key has no consistent entry");
    level_[j] = static_cast<std::uint8_t>(level);
}

void row_analyser::ensure(std::size_t j, int level) {
    if (level_[j] < level) range_at_level(j, level);
}

order row_analyser::cmp(std::size_t a, bool ahi, std::size_t b, bool bhi) {
    order o = numeric::compare(val(a, ahi), val(b, bhi));
    if (o != order::unknown) return o;
    for (int level = 1; level <= 2; ++level) {
        ensure(a, level);
        ensure(b, level);
        if (level == 2) return numeric::compare(val_e(a, ahi), val_e(b, bhi));
        o = numeric::compare(val(a, ahi), val(b, bhi));
        if (o != order::unknown) return o;
    }
    return o;
}

order row_analyser::compare_entry_to(std::size_t j, std::uint32_t e, std::size_t g) {
    ensure(g, 1);
    interval v = score_tight(j, e);
    order o = numeric::compare(v, hi_[g]);
    if (o != order::unknown) return o;
    ensure(g, 2);
    return numeric::compare(score_exact(j, e), hi_e_[g]);
}

} // namespace attnprop::analysis::detail
