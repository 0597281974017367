#include "soft_influence/position_classes.hpp"

#include "model/formula/class_range.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnprop::analysis {

namespace {

using numeric::dinterval;
using numeric::interval_detail::next_down;
using numeric::interval_detail::next_up;

constexpr double inf = std::numeric_limits<double>::infinity();

dinterval hull_of(const dinterval& a, const dinterval& b) {
    return {std::min(a.lo(), b.lo()), std::max(a.hi(), b.hi())};
}

/// Quotients rounded outward.
double div_lo(double a, double b) { return b == inf ? 0.0 : std::max(0.0, next_down(a / b)); }
double div_hi(double a, double b) { return b == inf ? 0.0 : next_up(a / b); }

/// The box of p_i over the points of a domain.
std::vector<dinterval> positional_box(const model::model<numeric::rational>& m,
                                      const model::formula::position_domain& dom) {
    const model::positional_spec& p = *m.positional;
    std::vector<dinterval> out;
    out.reserve(p.dim);
    const numeric::context ctx{53};
    switch (p.type) {
    case model::positional_spec::kind::formula:
        for (std::size_t c = 0; c < p.dim; ++c) {
            if (!p.formulas[c]) {
                out.emplace_back(0.0);
                continue;
            }
            out.push_back(model::formula::range_over_positions(p.formulas[c]->ast(), dom));
        }
        break;
    case model::positional_spec::kind::table: {
        const long rows = static_cast<long>(p.table.size());
        const long first = std::max(1L, static_cast<long>(std::floor(dom.i_lo)));
        const long last = dom.i_hi == inf ? rows : std::min(rows, static_cast<long>(std::ceil(dom.i_hi)));
        std::vector<std::optional<dinterval>> h(p.dim);
        for (long i = first; i <= last; ++i)
            for (std::size_t c = 0; c < p.dim; ++c) {
                const dinterval v =
                    dinterval::from_rational(p.table[static_cast<std::size_t>(i - 1)][c], ctx);
                h[c] = h[c] ? hull_of(*h[c], v) : v;
            }
        for (std::size_t c = 0; c < p.dim; ++c) out.push_back(h[c] ? *h[c] : dinterval::entire());
        break;
    }
    case model::positional_spec::kind::sinusoidal: {
        const dinterval lb = numeric::log(dinterval::from_rational(p.base, ctx));
        const dinterval pos(std::max(0.0, dom.i_lo - 1), dom.i_hi == inf ? inf : dom.i_hi - 1);
        for (std::size_t c = 0; c < p.dim; ++c) {
            const std::size_t k2 = c - (c % 2);
            const dinterval e = dinterval::from_rational(
                numeric::rational(static_cast<long>(k2), static_cast<long>(p.dim)), ctx);
            const dinterval freq = numeric::exp(-(e * lb));
            const dinterval arg = pos * freq;
            if (!numeric::is_finite(arg)) {
                out.emplace_back(-1.0, 1.0);
                continue;
            }
            out.push_back(c % 2 == 0 ? numeric::sin(arg) : numeric::cos(arg));
        }
        break;
    }
    }
    return out;
}

bool all_finite(const std::vector<dinterval>& v) {
    return std::all_of(v.begin(), v.end(), [](const dinterval& x) { return numeric::is_finite(x); });
}

long mod(long a, long p) { return ((a % p) + p) % p; }

// Products of a position and a cell count exceed 64 bits for n near 2^62.
__extension__ typedef __int128 wide;

} // namespace

std::string length_range::to_string() const {
    std::string s;
    if (single()) s = "n = " + std::to_string(lo);
    else if (hi) s = std::to_string(lo) + " <= n <= " + std::to_string(*hi);
    else s = "n >= " + std::to_string(lo);
    if (residue && period > 1)
        s += ", n = " + std::to_string(*residue) + " mod " + std::to_string(period);
    return s;
}

bool position_class::contains(long n, long i) const {
    switch (kind) {
    case shape::block: return i >= first && i <= last && mod(i - residue, period) == 0;
    case shape::head: return i == offset;
    case shape::tail: return i == n - offset;
    case shape::bulk:
        // k n / cells < i <= (k + 1) n / cells, in integers.
        return i > head && i < n - tail && mod(i - residue, period) == 0 &&
               static_cast<wide>(i) * cells > static_cast<wide>(cell) * n &&
               static_cast<wide>(i) * cells <= static_cast<wide>(cell + 1) * n;
    }
    return false;
}

long positional_period(const model::model<numeric::rational>& m) {
    const model::positional_spec& p = *m.positional;
    if (p.type != model::positional_spec::kind::formula) return 1;
    long P = 1;
    for (const auto& f : p.formulas)
        if (f) P = std::lcm(P, model::formula::residue_period(f->ast()));
    return P <= 12 ? P : 1;
}

std::vector<position_class> classes_at(const model::model<numeric::rational>& m, long n,
                                       const class_options& opt) {
    if (n < 2) throw precondition_error("classes of positions need n >= 2, got " + std::to_string(n));
    std::vector<position_class> out;
    const numeric::context ctx{53};
    auto single = [&](long i) {
        position_class c;
        c.eos = i == n;
        c.position = i;
        c.first = c.last = i;
        c.label = i == n ? "i = n (eos)" : "i = " + std::to_string(i);
        c.positional = m.positional->at<dinterval>(i, n, ctx);
        c.bounded = all_finite(c.positional);
        out.push_back(std::move(c));
    };
    if (static_cast<std::size_t>(n) <= opt.max_classes) {
        for (long i = 1; i <= n; ++i) single(i);
        return out;
    }
    const long P = positional_period(m);
    const long head = std::max(1L, opt.head), tail = std::max(1L, opt.tail);
    for (long i = 1; i <= head; ++i) single(i);
    // The bulk head < i < n - tail in blocks of consecutive positions, each cut by residue.
    const long first = head + 1, last = n - tail - 1;
    const long budget = std::max(1L, (static_cast<long>(opt.max_classes) - head - tail - 1) / P);
    const long width = std::max(P, (last - first + budget) / budget);
    for (long b0 = first; b0 <= last; b0 += width) {
        const long b1 = std::min(last, b0 + width - 1);
        for (long r = 0; r < P; ++r) {
            // Members: b0 <= i <= b1 with i = r mod P.
            const long i0 = b0 + mod(r - b0, P);
            if (i0 > b1) continue;
            const long i1 = b1 - mod(b1 - r, P);
            const long count = (i1 - i0) / P + 1;
            position_class c;
            c.first = i0;
            c.last = i1;
            c.residue = r;
            c.period = P;
            c.count_lo = c.count_hi = static_cast<double>(count);
            c.one = count == 1;
            if (count == 1) c.position = i0;
            c.label = "i in [" + std::to_string(i0) + ", " + std::to_string(i1) + "]" +
                      (P > 1 ? ", i = " + std::to_string(r) + " mod " + std::to_string(P) : "");
            model::formula::position_domain dom;
            dom.n_lo = dom.n_hi = static_cast<double>(n);
            dom.i_lo = static_cast<double>(i0);
            dom.i_hi = static_cast<double>(i1);
            dom.d_lo = static_cast<double>(n - i1);
            dom.d_hi = static_cast<double>(n - i0);
            dom.t_lo = div_lo(static_cast<double>(i0), static_cast<double>(n));
            dom.t_hi = std::min(1.0, div_hi(static_cast<double>(i1), static_cast<double>(n)));
            dom.period = P;
            dom.i_residue = r;
            dom.n_residue = mod(n, P);
            c.positional = positional_box(m, dom);
            c.bounded = all_finite(c.positional);
            out.push_back(std::move(c));
        }
    }
    for (long i = n - tail; i <= n; ++i) single(i);
    return out;
}

std::optional<std::vector<position_class>> classes_over(const model::model<numeric::rational>& m,
                                                        const length_range& r,
                                                        const class_options& opt) {
    const long head = std::max(1L, opt.head), tail = std::max(1L, opt.tail);
    if (r.lo < head + tail + 2)
        throw precondition_error("a range of lengths for classes needs n >= " +
                                 std::to_string(head + tail + 2));
    if (const auto max = m.positional->max_length(); max && (!r.hi || *r.hi > *max)) return std::nullopt;
    const long P = std::max(1L, r.period);
    const double n_lo = static_cast<double>(r.lo), n_hi = r.hi ? static_cast<double>(*r.hi) : inf;
    // Cells: every cell non-empty at n_lo. Cell k covers (k n/m, (k+1) n/m] of the bulk
    // head < i <= n - tail - 1: the first loses the head, the last the tail and n - tail, the
    // others are whole once n/m >= max(head, tail + 1); a half-open interval of length L holds
    // between L/P - 1 and L/P + 1 integers of one residue.
    const long edge = std::max(head, tail + 1);
    const long fit = r.lo / (edge + P);
    const long cells = std::min(static_cast<long>(opt.cells), fit);
    if (cells < 1) return std::nullopt;
    std::vector<position_class> out;
    auto base_domain = [&] {
        model::formula::position_domain dom;
        dom.n_lo = n_lo;
        dom.n_hi = n_hi;
        dom.period = P;
        if (r.residue) dom.n_residue = mod(*r.residue, P);
        return dom;
    };
    auto finish = [&](position_class c, const model::formula::position_domain& dom) {
        c.positional = positional_box(m, dom);
        c.bounded = all_finite(c.positional);
        out.push_back(std::move(c));
    };
    for (long a = 1; a <= head; ++a) {
        auto dom = base_domain();
        dom.i_lo = dom.i_hi = static_cast<double>(a);
        dom.d_lo = n_lo - static_cast<double>(a);
        dom.d_hi = n_hi - static_cast<double>(a);
        dom.t_lo = div_lo(static_cast<double>(a), n_hi);
        dom.t_hi = div_hi(static_cast<double>(a), n_lo);
        dom.i_residue = mod(a, P);
        position_class c;
        c.kind = position_class::shape::head;
        c.offset = a;
        c.label = "i = " + std::to_string(a);
        finish(std::move(c), dom);
    }
    const double mP = static_cast<double>(cells * P);
    for (long k = 0; k < cells; ++k)
        for (long res = 0; res < P; ++res) {
            auto dom = base_domain();
            const double t0 = static_cast<double>(k) / static_cast<double>(cells);
            const double t1 = static_cast<double>(k + 1) / static_cast<double>(cells);
            dom.t_lo = std::max(0.0, next_down(t0));
            dom.t_hi = std::min(1.0, next_up(t1));
            // t0 n < i <= t1 n; one unit of slack absorbs the rounding of the products.
            dom.i_lo = std::max(static_cast<double>(head + 1), std::floor(t0 * n_lo) - 1);
            dom.i_hi = n_hi == inf ? inf : std::min(n_hi - static_cast<double>(tail + 1), std::ceil(t1 * n_hi) + 1);
            dom.d_lo = std::max(static_cast<double>(tail + 1), std::floor((1 - t1) * n_lo) - 1);
            dom.d_hi = n_hi == inf ? inf : n_hi - static_cast<double>(head + 1);
            dom.i_residue = res;
            position_class c;
            c.kind = position_class::shape::bulk;
            c.cell = k;
            c.cells = cells;
            c.residue = res;
            c.period = P;
            c.head = head;
            c.tail = tail;
            c.one = false;
            c.slope_lo = next_down(1.0 / mP);
            c.slope_hi = next_up(1.0 / mP);
            const double cut = k == 0 ? static_cast<double>(head) : 0.0;
            const double cut_end = k + 1 == cells ? static_cast<double>(tail + 1) : 0.0;
            c.count_lo = next_down(-(cut + cut_end) / static_cast<double>(P) - 1.0);
            c.count_hi = 1.0;
            c.label = "i/n in (" + std::to_string(k) + "/" + std::to_string(cells) + ", " +
                      std::to_string(k + 1) + "/" + std::to_string(cells) + "]" +
                      (P > 1 ? ", i = " + std::to_string(res) + " mod " + std::to_string(P) : "");
            finish(std::move(c), dom);
        }
    for (long b = tail; b >= 0; --b) {
        auto dom = base_domain();
        dom.i_lo = n_lo - static_cast<double>(b);
        dom.i_hi = n_hi == inf ? inf : n_hi - static_cast<double>(b);
        dom.d_lo = dom.d_hi = static_cast<double>(b);
        dom.t_lo = std::max(0.0, next_down(1.0 - div_hi(static_cast<double>(b), n_lo)));
        dom.t_hi = std::min(1.0, next_up(1.0 - div_lo(static_cast<double>(b), n_hi)));
        if (r.residue) dom.i_residue = mod(*r.residue - b, P);
        position_class c;
        c.kind = position_class::shape::tail;
        c.offset = b;
        c.eos = b == 0;
        c.label = b == 0 ? "i = n (eos)" : "i = n - " + std::to_string(b);
        finish(std::move(c), dom);
    }
    return out;
}

} // namespace attnprop::analysis
