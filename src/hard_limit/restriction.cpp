// The restriction builder of theory.md §1.3 (see restriction.hpp for the contract).
//
// Layout of the work at layer k. `prev_` holds D_{k-1}(j) and T_{k-1}(j) for every position j
// (exact rationals and their interval enclosures). For every head a `head_prep` holds what the
// score of (query entry, key entry) needs: interval keys in the fast dot_rows form, tight
// interval keys and exact keys (dot heads), or nothing (map heads, scored by the map). One row
// (i, h, z) is analysed by `row_analyser` (restriction_rows.cpp). Rows are independent given
// ρ, so the passes run on worker threads and write their results by row index: the result
// does not depend on the number of threads.
#include "hard_limit/restriction.hpp"

#include "attention/work.hpp"
#include "hard_limit/restriction_internal.hpp"
#include "hard_limit/restriction_rows.hpp"
#include "attention/common.hpp"
#include "numeric/interrupt.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

namespace attnprop::analysis {

using numeric::interval;
using numeric::order;

namespace detail {

std::size_t checked_power(std::size_t base, std::size_t exp, std::size_t cap) {
    std::size_t r = 1;
    for (std::size_t t = 0; t < exp; ++t) {
        if (base != 0 && r > cap / base) return cap + 1;
        r *= base;
    }
    return r;
}

} // namespace detail

namespace {

using namespace detail;

/// One unsatisfied triple of the greedy.
struct pending_triple {
    std::uint32_t row = 0, head = 0, z = 0;
    std::vector<achiever> achievers;
    std::size_t current = 0;
    bool done = false;
};

/// The analysis of one row at the final pass of a layer.
struct row_plan {
    std::vector<std::vector<std::vector<std::uint32_t>>> cand; // [h][z]
    std::vector<std::size_t> dep;
    std::size_t k_obs = 0;
    std::size_t triples = 0;
    std::size_t unsatisfied = 0;
};

class builder {
public:
    builder(const model::model<rational>& m, long n, const restriction_options& opt,
            std::vector<int> rho)
        : m_(m), ctx_{53}, mi_(model::to_scalar<interval>(m, ctx_)), n_(static_cast<std::size_t>(n)),
          s_(m.sigma.symbols.size()), L_(m.layers.size()), opt_(opt), rho_(std::move(rho)),
          threads_(detail::worker_count(opt.threads)) {
        pw_.assign(64, 0);
        std::size_t p = 1;
        for (std::size_t t = 0; t < pw_.size(); ++t) {
            pw_[t] = p;
            if (p > (std::size_t{1} << 62) / std::max<std::size_t>(s_, 1)) p = std::size_t{1} << 62;
            else p *= s_;
        }
        allowed_.assign(s_, opt.pin_symbols.empty() ? 1 : 0);
        for (int a : opt.pin_symbols) allowed_.at(static_cast<std::size_t>(a)) = 1;
        for (std::size_t a = 0; a < s_; ++a)
            if (allowed_[a]) allowed_list_.push_back(static_cast<int>(a));
    }

    /// Sets the free budget and runs every layer.
    restriction run(std::size_t target, std::size_t initially_free, int trial) {
        restriction r;
        r.n = static_cast<long>(n_);
        r.sigma = s_;
        r.layers = L_;
        r.free_target = target;
        r.initially_free = initially_free;
        r.free_fraction = opt_.free_fraction;
        r.trial = trial;
        target_ = target;
        free_ = static_cast<std::size_t>(std::count(rho_.begin(), rho_.end(), -1));
        build_layer0();
        for (std::size_t k = 1; k <= L_; ++k) {
            layer_figures f;
            f.layer = k;
            if (!build_layer(k, f, r)) {
                r.figures.push_back(f);
                r.status = restriction_status::too_large;
                break;
            }
            r.figures.push_back(f);
        }
        r.rho = rho_;
        r.free_count = static_cast<std::size_t>(std::count(rho_.begin(), rho_.end(), -1));
        if (r.status == restriction_status::complete) {
            r.dependency = prev_.dep[n_ - 1];
            r.table = prev_.y[n_ - 1];
            // The final layer's figures use the final ρ.
            if (!r.figures.empty()) r.figures.back().max_dependency = r.dependency.size();
        }
        for (const auto& note : notes_) r.notes.push_back(note);
        if (r.free_count < r.free_target)
            r.notes.push_back("the free budget is not met: " + std::to_string(r.free_count) +
                              " free < " + std::to_string(r.free_target) + " required");
        return r;
    }

private:
    // ---- layer 0 and restriction of tables ------------------------------------------------

    void build_layer0() {
        prev_ = {};
        prev_.dep.assign(n_, {});
        prev_.y.assign(n_, {});
        prev_.yi.assign(n_, {});
        prev_.built.assign(n_, true);
        const long n = static_cast<long>(n_);
        for (std::size_t j = 0; j < n_; ++j) {
            if (j % 4096 == 0) numeric::throw_if_stop_requested(); // O(n |Σ|) states at n = 2^20
            const long pos = static_cast<long>(j + 1);
            if (j == n_ - 1) {
                prev_.y[j].push_back(attention::initial_state(m_, m_.sigma.eos_index(), pos, n, ctx_));
            } else if (rho_[j] >= 0) {
                prev_.y[j].push_back(attention::initial_state(m_, rho_[j], pos, n, ctx_));
            } else {
                prev_.dep[j] = {j};
                for (std::size_t a = 0; a < s_; ++a)
                    prev_.y[j].push_back(
                        attention::initial_state(m_, static_cast<int>(a), pos, n, ctx_));
            }
            for (const auto& v : prev_.y[j]) prev_.yi[j].push_back(enclose(v));
        }
        rebuild_occurrences(prev_);
    }

    vec<interval> enclose(const vec<rational>& v) const { return model::convert<interval>(v, ctx_); }

    void rebuild_occurrences(const layer_data& d) {
        occ_.assign(n_, {});
        for (std::size_t j = 0; j < d.dep.size(); ++j)
            for (std::size_t t : d.dep[j]) occ_[t].push_back(j);
    }

    /// Removes the pinned inputs from row j of d, keeping the entries consistent with ρ.
    void restrict_row(layer_data& d, std::size_t j) {
        const auto& dep = d.dep[j];
        bool any = false;
        for (std::size_t t : dep) any = any || rho_[t] >= 0;
        if (!any) return;
        std::vector<std::size_t> keep;
        std::size_t fixed_part = 0;
        for (std::size_t t = 0; t < dep.size(); ++t) {
            if (rho_[dep[t]] >= 0) fixed_part += static_cast<std::size_t>(rho_[dep[t]]) * pw_[t];
            else keep.push_back(t);
        }
        std::vector<std::size_t> new_dep;
        for (std::size_t t : keep) new_dep.push_back(dep[t]);
        const std::size_t count = checked_power(s_, keep.size(), std::size_t{1} << 62);
        std::vector<vec<rational>> y;
        std::vector<vec<interval>> yi;
        y.reserve(count);
        yi.reserve(count);
        for (std::size_t w = 0; w < count; ++w) {
            std::size_t old = fixed_part;
            for (std::size_t u = 0; u < keep.size(); ++u) old += digit(w, u, pw_, s_) * pw_[keep[u]];
            y.push_back(std::move(d.y[j][old]));
            yi.push_back(std::move(d.yi[j][old]));
        }
        d.dep[j] = std::move(new_dep);
        d.y[j] = std::move(y);
        d.yi[j] = std::move(yi);
    }

    /// Fixes input t to symbol a (t free, budget checked by the caller).
    void pin(std::size_t t, int a) {
        if (rho_[t] >= 0) throw std::logic_error("restriction: input pinned twice");
        rho_[t] = a;
        --free_;
        newly_pinned_.push_back(t);
    }

    /// Restricts every row of prev_ (and `cur` if given) that contains a newly pinned input.
    void apply_pins(layer_data* cur) {
        std::vector<char> touched(n_, 0);
        for (std::size_t t : newly_pinned_)
            for (std::size_t j : occ_[t]) touched[j] = 1;
        for (std::size_t j = 0; j < n_; ++j)
            if (touched[j]) restrict_row(prev_, j);
        if (cur) {
            for (std::size_t j = 0; j < n_; ++j)
                if (cur->built[j]) restrict_row(*cur, j);
        }
        newly_pinned_.clear();
    }

    // ---- one layer --------------------------------------------------------------------------

    void prepare_heads(std::size_t k) {
        heads_.clear();
        const auto& lay = m_.layers[k - 1];
        const auto& layi = mi_.layers[k - 1];
        for (std::size_t h = 0; h < lay.heads.size(); ++h) {
            head_prep hp;
            hp.mask = detail::ignore_mask_for_testing() ? model::mask_kind::none : lay.mask;
            hp.exact = &lay.heads[h];
            hp.filter = &layi.heads[h];
            if (attention::constant_scores(lay.heads[h])) {
                hp.type = head_prep::kind::constant;
            } else {
                const bool dot = lay.heads[h].score.type == model::score_spec<rational>::kind::dot;
                hp.type = dot ? head_prep::kind::dot : head_prep::kind::map;
                hp.off.assign(n_ + 1, 0);
                for (std::size_t j = 0; j < n_; ++j) hp.off[j + 1] = hp.off[j] + prev_.y[j].size();
                hp.id.reserve(hp.off[n_]);
                std::map<vec<rational>, std::uint32_t> ids;
                for (std::size_t j = 0; j < n_; ++j) {
                    if (j % 4096 == 0) numeric::throw_if_stop_requested(); // seconds at n = 2^20
                    for (std::size_t e = 0; e < prev_.y[j].size(); ++e) {
                        vec<rational> kv = dot ? attention::key(*hp.exact, prev_.y[j][e], ctx_) : prev_.y[j][e];
                        auto [it, fresh] = ids.emplace(std::move(kv), static_cast<std::uint32_t>(ids.size()));
                        if (fresh) {
                            hp.keys_exact.push_back(it->first);
                            hp.keys.push_back(enclose(it->first));
                        }
                        hp.id.push_back(it->second);
                    }
                }
                if (dot) {
                    hp.fast = numeric::dot_rows(lay.heads[h].score.K.out_dim());
                    hp.fast.reserve(hp.keys.size());
                    for (const auto& kv : hp.keys) hp.fast.push_back(kv.data());
                }
            }
            heads_.push_back(std::move(hp));
        }
    }

    std::vector<std::size_t> rows_of_layer(std::size_t k) const {
        std::vector<std::size_t> rows;
        if (k < L_) {
            for (std::size_t i = 0; i < n_; ++i) rows.push_back(i);
        } else {
            rows.push_back(n_ - 1);
        }
        return rows;
    }

    std::vector<std::unique_ptr<row_analyser>> make_analysers(std::size_t h) {
        std::vector<std::unique_ptr<row_analyser>> out;
        for (int w = 0; w < threads_; ++w)
            out.push_back(std::make_unique<row_analyser>(prev_, heads_[h], ctx_, n_, s_, pw_, occ_));
        return out;
    }

    /// Stage-1 analogue before layer k (and the counting identity H5, always).
    void fan_out(std::size_t k, layer_figures& f) {
        std::size_t c = 0;
        for (const auto& d : prev_.dep) c = std::max(c, d.size());
        f.c_prev = c;
        std::vector<std::size_t> count(n_, 0);
        for (const auto& d : prev_.dep)
            for (std::size_t t : d) ++count[t];
        const rational& C = opt_.free_fraction;
        f.fan_out_threshold = rational(static_cast<long>(c)) / (opt_.eta * C);
        f.fan_out_limit = opt_.eta * C * rational(static_cast<long>(n_));
        std::vector<std::size_t> high;
        for (std::size_t t = 0; t + 1 < n_; ++t)
            if (rational(static_cast<long>(count[t])) > f.fan_out_threshold) high.push_back(t);
        f.high_fan_out = high.size();
        f.counting_holds = rational(static_cast<long>(high.size())) <= f.fan_out_limit;
        if (!opt_.fan_out_pass) return;
        (void)k;
        for (std::size_t t : high) {
            if (rho_[t] >= 0 || free_ <= target_) continue;
            pin(t, allowed_list_.front());
            ++f.pinned_fan_out;
        }
        apply_pins(nullptr);
    }

    /// The greedy pinning of layer k (Stage-2 analogue).
    void greedy(std::size_t k, layer_figures& f) {
        const std::vector<std::size_t> rows = rows_of_layer(k);
        const std::size_t H = heads_.size();
        // Rows that still have unsatisfied triples (all at first).
        std::vector<char> active(n_, 0);
        for (std::size_t i : rows) active[i] = 1;
        for (int round = 0; round < opt_.max_rounds; ++round) {
            std::vector<std::size_t> todo;
            for (std::size_t i : rows)
                if (active[i]) todo.push_back(i);
            if (todo.empty() || free_ <= target_) break;
            ++f.rounds;
            // Pass: every unsatisfied triple with its achievers.
            std::vector<std::vector<pending_triple>> found(todo.size());
            for (std::size_t h = 0; h < H; ++h) {
                if (heads_[h].type == head_prep::kind::constant) continue;
                auto an = make_analysers(h);
                detail::parallel_for(todo.size(), threads_, [&](std::size_t t, int w) {
                    const std::size_t i = todo[t];
                    for (std::size_t z = 0; z < prev_.y[i].size(); ++z) {
                        row_outcome o = an[static_cast<std::size_t>(w)]->analyse(i, z, true, allowed_, false);
                        if (o.achievers.empty()) continue;
                        pending_triple p;
                        p.row = static_cast<std::uint32_t>(i);
                        p.head = static_cast<std::uint32_t>(h);
                        p.z = static_cast<std::uint32_t>(z);
                        p.achievers = std::move(o.achievers);
                        found[t].push_back(std::move(p));
                    }
                });
            }
            std::vector<pending_triple> triples;
            std::fill(active.begin(), active.end(), 0);
            for (auto& v : found)
                for (auto& p : v) {
                    active[p.row] = 1;
                    triples.push_back(std::move(p));
                }
            if (triples.empty()) break;
            const std::size_t pinned = vote_and_pin(triples);
            f.pinned_greedy += pinned;
            if (pinned == 0) break;
            apply_pins(nullptr);
            prepare_heads(k);
        }
    }

    /// Whether entry e of key j agrees with ρ on its inputs (after pins of this round).
    bool entry_consistent(std::size_t j, std::uint32_t e) const {
        const auto& dj = prev_.dep[j];
        for (std::size_t t = 0; t < dj.size(); ++t)
            if (rho_[dj[t]] >= 0 && static_cast<std::size_t>(rho_[dj[t]]) != digit(e, t, pw_, s_))
                return false;
        return true;
    }
    bool key_touched(std::size_t j) const {
        for (std::size_t t : prev_.dep[j])
            if (rho_[t] >= 0) return true;
        return false;
    }

    /// One round of votes: each triple votes for its current achiever's entries; the pin with
    /// most votes (ties: smaller |D(j)|, leftmost j, smaller entry) is applied, its voters move
    /// on. Returns the number of inputs pinned.
    std::size_t vote_and_pin(std::vector<pending_triple>& triples) {
        using pin_key = std::pair<std::uint32_t, std::uint32_t>;
        std::map<pin_key, long> votes;
        std::set<std::tuple<long, std::size_t, std::uint32_t, std::uint32_t>> queue;
        std::map<std::uint32_t, std::vector<std::size_t>> voters;
        auto dsize = [&](std::uint32_t j) { return prev_.dep[j].size(); };
        auto change = [&](std::uint32_t j, std::uint32_t e, long delta) {
            long& v = votes[{j, e}];
            if (v > 0) queue.erase({-v, dsize(j), j, e});
            v += delta;
            if (v > 0) queue.insert({-v, dsize(j), j, e});
        };
        auto add_votes = [&](std::size_t t) {
            auto& p = triples[t];
            const achiever& a = p.achievers[p.current];
            for (std::uint32_t e : a.entries) change(a.key, e, +1);
            voters[a.key].push_back(t);
        };
        auto remove_votes = [&](std::size_t t) {
            auto& p = triples[t];
            const achiever& a = p.achievers[p.current];
            for (std::uint32_t e : a.entries) change(a.key, e, -1);
        };
        for (std::size_t t = 0; t < triples.size(); ++t) add_votes(t);
        std::set<std::uint32_t> blocked;
        std::size_t pinned = 0;
        while (!queue.empty()) {
            auto [neg, ds, j, e] = *queue.begin();
            (void)neg;
            if (key_touched(j) || ds == 0 || free_ < target_ + ds) {
                // Its inputs were pinned this round, or the budget does not allow it: drop the
                // key for this round (its voters wait for the next pass).
                blocked.insert(j);
                for (auto it = queue.begin(); it != queue.end();) {
                    if (std::get<2>(*it) == j) it = queue.erase(it);
                    else ++it;
                }
                continue;
            }
            const auto& dj = prev_.dep[j];
            for (std::size_t t = 0; t < dj.size(); ++t) pin(dj[t], static_cast<int>(digit(e, t, pw_, s_)));
            pinned += dj.size();
            std::vector<std::size_t> vs = std::move(voters[j]);
            voters.erase(j);
            for (std::size_t t : vs) {
                auto& p = triples[t];
                if (p.done || p.achievers[p.current].key != j) continue;
                const auto& ents = p.achievers[p.current].entries;
                const bool hit = std::find(ents.begin(), ents.end(), e) != ents.end();
                remove_votes(t);
                if (hit) {
                    p.done = true;
                    continue;
                }
                // Move on to the next achiever whose key is untouched and not blocked.
                for (++p.current; p.current < p.achievers.size(); ++p.current) {
                    const std::uint32_t j2 = p.achievers[p.current].key;
                    if (!key_touched(j2) && !blocked.count(j2)) break;
                }
                if (p.current < p.achievers.size()) add_votes(t);
                else p.done = true; // recomputed in the next pass
            }
            if (free_ <= target_) break;
        }
        return pinned;
    }

    /// Analyses every row of layer k with the final ρ of the greedy: candidate sets and D_k.
    void plan_rows(const std::vector<std::size_t>& rows, std::vector<row_plan>& plans) {
        const std::size_t H = heads_.size();
        for (std::size_t t = 0; t < rows.size(); ++t) {
            plans[t] = {};
            plans[t].cand.assign(H, {});
        }
        for (std::size_t h = 0; h < H; ++h) {
            auto an = make_analysers(h);
            detail::parallel_for(rows.size(), threads_, [&](std::size_t t, int w) {
                const std::size_t i = rows[t];
                auto& plan = plans[t];
                plan.cand[h].resize(prev_.y[i].size());
                for (std::size_t z = 0; z < prev_.y[i].size(); ++z) {
                    row_outcome o = an[static_cast<std::size_t>(w)]->analyse(
                        i, z, false, allowed_, opt_.unsound_ignore_ties_for_testing);
                    ++plan.triples;
                    if (!o.satisfied) ++plan.unsatisfied;
                    plan.cand[h][z] = std::move(o.cand);
                }
            });
        }
        for (std::size_t t = 0; t < rows.size(); ++t) finish_plan(rows[t], plans[t]);
    }

    /// D_k(i) from the candidate sets (with the current, possibly restricted, D_{k-1}).
    void finish_plan(std::size_t i, row_plan& plan) {
        std::vector<std::size_t> dep = prev_.dep[i];
        plan.k_obs = 0;
        for (const auto& per_z : plan.cand)
            for (const auto& c : per_z) {
                plan.k_obs = std::max(plan.k_obs, c.size());
                for (std::uint32_t j : c) dep.insert(dep.end(), prev_.dep[j].begin(), prev_.dep[j].end());
            }
        std::sort(dep.begin(), dep.end());
        dep.erase(std::unique(dep.begin(), dep.end()), dep.end());
        plan.dep = std::move(dep);
    }

    /// Builds T_k(i) from its plan. Per (h, z) the scores of every candidate entry are
    /// enclosed once; per table entry the leftmost maximum among the candidates' entries is
    /// decided on those enclosures (exact rationals, memoised, where they overlap), and value
    /// vectors and updates are memoised by their exact arguments.
    void build_table(std::size_t k, std::size_t i, const row_plan& plan, row_analyser* const* an,
                     layer_data& cur) {
        const auto& lay = m_.layers[k - 1];
        const std::size_t H = heads_.size();
        const auto& D = plan.dep;
        const std::size_t count = checked_power(s_, D.size(), opt_.max_table_entries);
        const auto zpos = positions_in(D, prev_.dep[i]);
        const std::size_t nz = prev_.y[i].size();
        // Per (h, z): candidate positions-in-D, score enclosures and exact memo per entry.
        struct cand_scores {
            std::vector<std::vector<std::size_t>> pos;        // [t] positions of D(c_t) in D
            std::vector<std::vector<interval>> sc;            // [t][e]
            std::vector<std::vector<std::optional<rational>>> ex; // [t][e]
        };
        std::vector<std::vector<std::optional<cand_scores>>> cs(H, std::vector<std::optional<cand_scores>>(nz));
        auto scores_for = [&](std::size_t h, std::size_t z) -> cand_scores& {
            auto& slot = cs[h][z];
            if (!slot) {
                cand_scores c;
                for (std::uint32_t j : plan.cand[h][z]) {
                    c.pos.push_back(positions_in(D, prev_.dep[j]));
                    std::vector<interval> v;
                    for (std::size_t e = 0; e < prev_.y[j].size(); ++e)
                        v.push_back(an[h]->tight_score(i, z, j, static_cast<std::uint32_t>(e)));
                    c.ex.emplace_back(v.size());
                    c.sc.push_back(std::move(v));
                }
                slot = std::move(c);
            }
            return *slot;
        };
        std::map<std::tuple<std::size_t, std::size_t, std::size_t>, vec<rational>> values;
        std::map<std::vector<std::size_t>, std::size_t> updates; // key -> index into y
        std::vector<vec<rational>> y;
        std::vector<std::size_t> entry_of(count);
        std::vector<vec<rational>> b(H);
        std::vector<std::size_t> key(1 + 2 * H);
        std::vector<std::size_t> ke;
        for (std::size_t w = 0; w < count; ++w) {
            const std::size_t z = project_fast(w, zpos, pw_, s_);
            key[0] = z;
            for (std::size_t h = 0; h < H; ++h) {
                std::size_t jstar = 0, estar = 0;
                if (heads_[h].type == head_prep::kind::constant) {
                    estar = project(w, D, prev_.dep[0], pw_, s_);
                } else {
                    const auto& c = plan.cand[h][z];
                    auto& sc = scores_for(h, z);
                    ke.resize(c.size());
                    for (std::size_t t = 0; t < c.size(); ++t) ke[t] = project_fast(w, sc.pos[t], pw_, s_);
                    // Leftmost maximum: keep the best so far; an overlap is decided exactly.
                    std::size_t best = 0;
                    for (std::size_t t = 1; t < c.size(); ++t) {
                        order o = numeric::compare(sc.sc[t][ke[t]], sc.sc[best][ke[best]]);
                        if (o == order::unknown) {
                            for (std::size_t u : {t, best})
                                if (!sc.ex[u][ke[u]])
                                    sc.ex[u][ke[u]] = an[h]->exact_score(i, z, c[u], static_cast<std::uint32_t>(ke[u]));
                            o = numeric::compare(*sc.ex[t][ke[t]], *sc.ex[best][ke[best]]);
                        }
                        if (o == order::greater) best = t;
                    }
                    jstar = c[best];
                    estar = ke[best];
                }
                key[1 + 2 * h] = jstar;
                key[2 + 2 * h] = estar;
            }
            auto it = updates.find(key);
            if (it == updates.end()) {
                for (std::size_t h = 0; h < H; ++h) {
                    auto vk = std::make_tuple(h, key[1 + 2 * h], key[2 + 2 * h]);
                    auto vit = values.find(vk);
                    if (vit == values.end())
                        vit = values.emplace(vk, attention::value(lay.heads[h], prev_.y[key[1 + 2 * h]][key[2 + 2 * h]], ctx_)).first;
                    b[h] = vit->second;
                }
                y.push_back(attention::update(lay, prev_.y[i][z], b, ctx_));
                it = updates.emplace(key, y.size() - 1).first;
            }
            entry_of[w] = it->second;
        }
        std::vector<vec<interval>> yi_distinct;
        yi_distinct.reserve(y.size());
        for (const auto& v : y) yi_distinct.push_back(enclose(v));
        cur.dep[i] = D;
        cur.y[i].resize(count);
        cur.yi[i].resize(count);
        for (std::size_t w = 0; w < count; ++w) {
            cur.y[i][w] = y[entry_of[w]];
            cur.yi[i][w] = yi_distinct[entry_of[w]];
        }
        cur.built[i] = true;
    }

    /// Layer k: fan-out pass, greedy, candidate sets, size guard, tables. False when stopped.
    bool build_layer(std::size_t k, layer_figures& f, restriction& r) {
        fan_out(k, f);
        prepare_heads(k);
        greedy(k, f);
        prepare_heads(k); // the greedy restricted the tables
        const std::vector<std::size_t> rows = rows_of_layer(k);
        f.rows = rows.size();
        std::vector<row_plan> plans(rows.size());
        plan_rows(rows, plans);
        // Size guard: pin inputs of rows whose table would be too large, then re-plan the rows
        // whose own dependency set (hence their z) changed.
        for (;;) {
            std::vector<std::size_t> big;
            for (std::size_t t = 0; t < rows.size(); ++t)
                if (checked_power(s_, plans[t].dep.size(), opt_.max_table_entries) >
                    opt_.max_table_entries)
                    big.push_back(t);
            if (big.empty()) break;
            for (std::size_t t : big) {
                const auto& D = plans[t].dep;
                // Inputs ordered by how many candidate keys (and the query) they feed.
                std::map<std::size_t, std::size_t> feed;
                for (std::size_t in : prev_.dep[rows[t]]) feed[in] += 1;
                for (const auto& per_z : plans[t].cand)
                    for (const auto& c : per_z)
                        for (std::uint32_t j : c)
                            for (std::size_t in : prev_.dep[j]) feed[in] += 1;
                std::vector<std::pair<std::size_t, std::size_t>> order_;
                for (std::size_t in : D)
                    if (rho_[in] < 0) order_.push_back({feed[in], in});
                std::sort(order_.begin(), order_.end(), [](auto a, auto b) {
                    return a.first != b.first ? a.first > b.first : a.second > b.second;
                });
                std::size_t keep = D.size();
                for (const auto& [cnt, in] : order_) {
                    if (checked_power(s_, keep, opt_.max_table_entries) <= opt_.max_table_entries)
                        break;
                    (void)cnt;
                    pin(in, allowed_list_.front());
                    ++f.pinned_for_size;
                    --keep;
                }
            }
            std::vector<char> changed(n_, 0);
            for (std::size_t in : newly_pinned_)
                for (std::size_t j : occ_[in]) changed[j] = 1;
            apply_pins(nullptr);
            prepare_heads(k);
            std::vector<std::size_t> redo_rows;
            std::vector<std::size_t> redo_index;
            for (std::size_t t = 0; t < rows.size(); ++t) {
                if (changed[rows[t]]) {
                    redo_rows.push_back(rows[t]);
                    redo_index.push_back(t);
                } else {
                    finish_plan(rows[t], plans[t]);
                }
            }
            if (!redo_rows.empty()) {
                std::vector<row_plan> again(redo_rows.size());
                plan_rows(redo_rows, again);
                for (std::size_t u = 0; u < redo_rows.size(); ++u)
                    plans[redo_index[u]] = std::move(again[u]);
            }
        }
        if (f.pinned_for_size > 0)
            notes_.push_back("layer " + std::to_string(k) + ": " + std::to_string(f.pinned_for_size) +
                             " inputs pinned because a dependency table would exceed " +
                             std::to_string(opt_.max_table_entries) + " entries");
        std::size_t total = 0, c_prev = 0;
        for (const auto& d : prev_.dep) c_prev = std::max(c_prev, d.size());
        for (const auto& p : plans) {
            total += checked_power(s_, p.dep.size(), opt_.max_table_entries);
            f.k_obs = std::max(f.k_obs, p.k_obs);
            f.max_dependency = std::max(f.max_dependency, p.dep.size());
            f.triples += p.triples;
            f.unsatisfied += p.unsatisfied;
            if (total > opt_.max_layer_entries) {
                r.stop_reason = "dependency set too large: the tables of layer " + std::to_string(k) +
                                " would exceed " + std::to_string(opt_.max_layer_entries) +
                                " entries in total";
                return false;
            }
        }
        // Growth (Lemma 4's shape) per row, with the c_{k-1} the row was built from.
        f.c_prev = c_prev;
        const std::size_t H = heads_.size();
        rational worst = -1;
        for (std::size_t t = 0; t < rows.size(); ++t) {
            const auto& p = plans[t];
            const std::size_t pow_c = checked_power(s_, c_prev, std::size_t{1} << 40);
            const rational bound = rational(static_cast<long>(c_prev)) *
                                   (1 + rational(static_cast<long>(H)) *
                                            rational(static_cast<long>(pow_c)) *
                                            rational(static_cast<long>(p.k_obs)));
            const rational size(static_cast<long>(p.dep.size()));
            if (size > bound) f.growth_holds = false;
            const rational slack = size - bound;
            if (worst == -1 || slack > worst) {
                worst = slack;
                f.growth_detail = "row " + std::to_string(rows[t] + 1) + ": |D| = " +
                                  std::to_string(p.dep.size()) + " <= " +
                                  numeric::to_exact_string(bound) + " = c (1 + H |S|^c k_obs), c = " +
                                  std::to_string(c_prev) + ", k_obs = " + std::to_string(p.k_obs);
            }
        }
        // Tables.
        layer_data cur;
        cur.dep.assign(n_, {});
        cur.y.assign(n_, {});
        cur.yi.assign(n_, {});
        cur.built.assign(n_, false);
        std::vector<std::vector<std::unique_ptr<row_analyser>>> an(H);
        for (std::size_t h = 0; h < H; ++h) an[h] = make_analysers(h);
        std::vector<std::vector<row_analyser*>> per_worker(static_cast<std::size_t>(threads_));
        for (int w = 0; w < threads_; ++w)
            for (std::size_t h = 0; h < H; ++h)
                per_worker[static_cast<std::size_t>(w)].push_back(an[h][static_cast<std::size_t>(w)].get());
        detail::parallel_for(rows.size(), threads_, [&](std::size_t t, int w) {
            build_table(k, rows[t], plans[t], per_worker[static_cast<std::size_t>(w)].data(), cur);
        });
        prev_ = std::move(cur);
        rebuild_occurrences(prev_);
        return true;
    }

    const model::model<rational>& m_;
    numeric::context ctx_;
    model::model<interval> mi_;
    std::size_t n_, s_, L_;
    restriction_options opt_;
    std::vector<int> rho_;
    int threads_;
    std::vector<std::size_t> pw_;
    std::vector<char> allowed_;
    std::vector<int> allowed_list_;
    std::size_t free_ = 0, target_ = 0;
    layer_data prev_;
    std::vector<std::vector<std::size_t>> occ_;
    std::vector<head_prep> heads_;
    std::vector<std::size_t> newly_pinned_;
    std::vector<std::string> notes_;
};

std::size_t ceil_times(const rational& c, std::size_t m) {
    rational v = c * rational(static_cast<long>(m));
    numeric::integer num = numerator(v), den = denominator(v);
    numeric::integer q = num / den;
    if (q * den < num) q += 1;
    return static_cast<std::size_t>(q.convert_to<unsigned long>());
}

bool better(const restriction& a, const restriction& b) {
    auto key = [](const restriction& r) {
        return std::make_tuple(r.status == restriction_status::complete ? 1 : 0,
                               r.free_budget_met() ? 1 : 0, -static_cast<long>(r.c_obs()),
                               static_cast<long>(r.free_count));
    };
    return key(a) > key(b);
}

} // namespace

std::string restriction::rho_string(const model::alphabet& a) const {
    std::string s;
    for (int v : rho) s += v < 0 ? std::string("*") : a.name(v);
    return s;
}

std::size_t restriction::table_index(const std::vector<int>& x) const {
    std::size_t w = 0, p = 1;
    for (std::size_t t : dependency) {
        w += static_cast<std::size_t>(x.at(t)) * p;
        p *= sigma;
    }
    return w;
}

restriction build_restriction(const model::model<rational>& m, long n,
                              const restriction_options& opt) {
    if (const model::attention_kind_info& a = model::info(m.attention); !a.hard_limit) {
        if (model::selects_maximum(a.kind))
            throw precondition_error(
                "the restriction needs a unique-hard attention model: Hahn's Theorem 1 and its "
                "restriction argument are about the leftmost maximal score; " +
                std::string(a.name) + " attention " + std::string(a.ties_in_words) +
                " and is not covered");
        throw precondition_error("the restriction needs a hard-attention model");
    }
    if (n < 2) throw precondition_error("n must be at least 2 (one input and eos)");
    if (!(opt.free_fraction > 0 && opt.free_fraction < 1))
        throw precondition_error("the free fraction C must lie strictly between 0 and 1");
    if (!m.out.is_recognizer())
        throw model::content_error(m.file, "/readout/kind",
                                   "the restriction needs a recognizer (threshold or map readout)");
    model::check_length(m, n);
    // The row analyses of a layer weigh every key against every query, like a forward pass.
    attention::check_forward_work(m, static_cast<std::size_t>(n));
    model::require_exact(m, "the exact scalar cannot evaluate this model");
    const std::size_t s = m.sigma.symbols.size();
    for (int a : opt.pin_symbols)
        if (a < 0 || static_cast<std::size_t>(a) >= s)
            throw precondition_error("pin symbol index out of range");
    std::vector<int> rho0(static_cast<std::size_t>(n - 1), -1);
    if (!opt.initial.empty()) {
        if (opt.initial.size() != rho0.size())
            throw precondition_error("the initial restriction must have n - 1 entries");
        for (std::size_t t = 0; t < rho0.size(); ++t) {
            const int v = opt.initial[t];
            if (v < -1 || (v >= 0 && static_cast<std::size_t>(v) >= s))
                throw precondition_error("initial restriction: bad symbol index");
            rho0[t] = v;
        }
    }
    const std::size_t initially_free = static_cast<std::size_t>(std::count(rho0.begin(), rho0.end(), -1));
    const std::size_t m_count = opt.initial.empty() ? static_cast<std::size_t>(n) : initially_free;
    const std::size_t target = std::min(initially_free, ceil_times(opt.free_fraction, m_count));
    if (opt.trials <= 0) {
        builder b(m, n, opt, rho0);
        return b.run(target, initially_free, -1);
    }
    std::vector<int> allowed = opt.pin_symbols;
    if (allowed.empty())
        for (std::size_t a = 0; a < s; ++a) allowed.push_back(static_cast<int>(a));
    std::optional<restriction> best;
    for (int trial = 0; trial < opt.trials; ++trial) {
        std::mt19937_64 rng(opt.seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(trial) + 1);
        std::vector<int> rho = rho0;
        std::size_t free = initially_free;
        const double q = numeric::to_double_nearest(opt.random_fix_probability);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        std::uniform_int_distribution<std::size_t> pick(0, allowed.size() - 1);
        for (auto& v : rho) {
            if (v >= 0) continue;
            const bool fix = u(rng) < q;
            const int sym = allowed[pick(rng)];
            if (fix && free > target) {
                v = sym;
                --free;
            }
        }
        builder b(m, n, opt, rho);
        restriction r = b.run(target, initially_free, trial);
        if (!best || better(r, *best)) best = std::move(r);
    }
    best->notes.push_back("kept random trial " + std::to_string(best->trial) + " of " +
                          std::to_string(opt.trials) + " (q = " +
                          numeric::to_exact_string(opt.random_fix_probability) + ")");
    return std::move(*best);
}

} // namespace attnprop::analysis
