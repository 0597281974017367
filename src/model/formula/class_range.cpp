#include "model/formula/class_range.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace attnprop::model::formula {

namespace {

using numeric::dinterval;
using numeric::rational;

constexpr double inf = std::numeric_limits<double>::infinity();

dinterval point(const rational& q) { return dinterval::from_rational(q, numeric::context{53}); }
dinterval whole() { return dinterval::entire(); }
dinterval span(double lo, double hi) { return dinterval(lo, hi); }
bool is_zero_point(const dinterval& x) { return x.lo() == 0 && x.hi() == 0; }

dinterval intersect(const dinterval& x, const dinterval& y) {
    const double lo = std::max(x.lo(), y.lo()), hi = std::min(x.hi(), y.hi());
    if (lo > hi) return x; // empty only through an empty class: keep one enclosure
    return {lo, hi};
}
dinterval hull_of(const dinterval& x, const dinterval& y) {
    return {std::min(x.lo(), y.lo()), std::max(x.hi(), y.hi())};
}

bool is_integer(const rational& q) { return boost::multiprecision::denominator(q) == 1; }

/// A value as a·i + b·n + c + r (a, b, c exact; r an interval, `exact_r` when it is the point
/// 0), or, with `times_pi`, exactly π·(a·i + b·n + c) (r is then 0).
struct form {
    rational a = 0, b = 0, c = 0;
    dinterval r;
    bool exact_r = true;
    bool times_pi = false;

    bool exact_constant() const { return !times_pi && a == 0 && b == 0 && exact_r; }
    bool exact_affine() const { return !times_pi && exact_r; }
};

form constant(const rational& q) { return form{0, 0, q, dinterval(), true, false}; }
form pure(const dinterval& v) { return form{0, 0, 0, v, false, false}; }

/// The class's facts and the operations that depend on them.
class evaluator {
public:
    explicit evaluator(const position_domain& d)
        : d_(d), I_(span(d.i_lo, d.i_hi)), N_(span(d.n_lo, d.n_hi)), D_(span(d.d_lo, d.d_hi)),
          T_(span(d.t_lo, d.t_hi)) {}

    /// The range of a·i + b·n over the class: the intersection of four enclosures.
    dinterval affine_range(const rational& a, const rational& b) const {
        if (a == 0 && b == 0) return dinterval(0.0);
        const dinterval A = point(a), B = point(b), AB = point(a + b);
        auto term = [](const rational& q, const dinterval& Q, const dinterval& X) {
            return q == 0 ? dinterval(0.0) : Q * X;
        };
        dinterval v = term(a, A, I_) + term(b, B, N_);
        v = intersect(v, term(a + b, AB, I_) + term(b, B, D_));
        v = intersect(v, term(a + b, AB, N_) - term(a, A, D_));
        v = intersect(v, N_ * (term(a, A, T_) + B));
        return v;
    }

    dinterval collapse(const form& f) const {
        dinterval v = affine_range(f.a, f.b) + point(f.c);
        if (f.times_pi) return numeric::pi_interval() * v;
        return f.exact_r ? v : v + f.r;
    }

    /// (a i + b n) mod 2 for integer a, b when the residues decide it.
    std::optional<long> parity(const rational& a, const rational& b) const {
        auto term = [&](const rational& q, const std::optional<long>& res) -> std::optional<long> {
            if (!is_integer(q)) return std::nullopt;
            const bool odd = boost::multiprecision::numerator(q) % 2 != 0;
            if (!odd) return 0;
            if (!res || d_.period % 2 != 0) return std::nullopt;
            return *res % 2;
        };
        const auto pa = term(a, d_.i_residue), pb = term(b, d_.n_residue);
        if (!pa || !pb) return std::nullopt;
        return (*pa + *pb) % 2;
    }

    form visit(const node& nd, const std::vector<form>& done) const {
        auto x = [&]() -> const form& { return done[nd.lhs]; };
        auto y = [&]() -> const form& { return done[nd.rhs]; };
        switch (nd.op) {
        case op::number: return constant(*nd.value);
        case op::var_i: return form{1, 0, 0, dinterval(), true, false};
        case op::var_n: return form{0, 1, 0, dinterval(), true, false};
        case op::pi: return form{0, 0, 1, dinterval(), true, true};
        case op::neg: return scale(x(), -1);
        case op::add: return add(x(), y());
        case op::sub: return add(x(), scale(y(), -1));
        case op::mul: return mul(x(), y());
        case op::div: return div(x(), y());
        case op::pow: return pow(x(), y());
        case op::sin: return trig(x(), true);
        case op::cos: return trig(x(), false);
        case op::exp: return pure(numeric::exp(collapse(x())));
        case op::log: {
            const dinterval v = collapse(x());
            if (!(v.hi() > 0)) return pure(whole());
            const double lo = v.lo() > 0 ? numeric::log(dinterval(v.lo())).lo() : -inf;
            return pure(dinterval(lo, numeric::log(dinterval(v.hi())).hi()));
        }
        case op::sqrt: {
            const dinterval v = collapse(x());
            if (v.hi() < 0) return pure(whole());
            return pure(numeric::sqrt(dinterval(std::max(0.0, v.lo()), v.hi())));
        }
        case op::abs: {
            const dinterval v = collapse(x());
            if (v.lo() >= 0) return x();
            if (v.hi() <= 0) return scale(x(), -1);
            return pure(numeric::abs(v));
        }
        case op::floor: return floor(x());
        case op::eq:
        case op::ne:
        case op::lt:
        case op::le:
        case op::gt:
        case op::ge: return relation(nd.op, x(), y());
        }
        return pure(whole());
    }

private:
    form scale(const form& f, const rational& q) const {
        if (q == 0) return constant(0);
        form g = f;
        g.a *= q;
        g.b *= q;
        g.c *= q;
        if (!g.exact_r) g.r = g.r * point(q);
        return g;
    }
    form add(const form& x, const form& y) const {
        if (x.times_pi != y.times_pi) return pure(collapse(x) + collapse(y));
        form f{x.a + y.a, x.b + y.b, x.c + y.c, dinterval(), x.exact_r && y.exact_r, x.times_pi};
        if (!f.exact_r) f.r = (x.exact_r ? dinterval(0.0) : x.r) + (y.exact_r ? dinterval(0.0) : y.r);
        return f;
    }
    form mul(const form& x, const form& y) const {
        if (x.exact_constant()) return scale(y, x.c);
        if (y.exact_constant()) return scale(x, y.c);
        // pi times an exact affine form: a multiple of pi that sin and cos can read.
        auto pi_times = [&](const form& p, const form& f) -> std::optional<form> {
            if (!p.times_pi || p.a != 0 || p.b != 0 || !f.exact_affine()) return std::nullopt;
            form g = scale(f, p.c);
            g.times_pi = true;
            return g;
        };
        if (auto g = pi_times(x, y)) return *g;
        if (auto g = pi_times(y, x)) return *g;
        return pure(collapse(x) * collapse(y));
    }
    form div(const form& x, const form& y) const {
        if (y.exact_constant()) {
            if (y.c == 0) return pure(whole()); // defined nowhere
            return scale(x, rational(1) / y.c);
        }
        dinterval q = collapse(x) / collapse(y);
        if (!x.times_pi && !y.times_pi) q = intersect(q, tu_quotient(x, y));
        return pure(q);
    }
    /// (a1 t + b1 + (c1 + R1) u) / (a2 t + b2 + (c2 + R2) u), t = i/n in T, u = 1/n, on eight
    /// slices of T.
    dinterval tu_quotient(const form& x, const form& y) const {
        if (!std::isfinite(d_.t_lo) || !std::isfinite(d_.t_hi)) return whole();
        using numeric::interval_detail::next_down;
        using numeric::interval_detail::next_up;
        // u = 1/n in [1/n_hi, 1/n_lo], rounded outward.
        const double u_lo = d_.n_hi == inf ? 0.0 : std::max(0.0, next_down(1.0 / d_.n_hi));
        const dinterval U_out(u_lo, next_up(1.0 / d_.n_lo));
        auto rest = [&](const form& f) {
            dinterval k = point(f.c);
            if (!f.exact_r) k = k + f.r;
            return k * U_out;
        };
        const dinterval rx = rest(x), ry = rest(y);
        const dinterval a1 = point(x.a), b1 = point(x.b), a2 = point(y.a), b2 = point(y.b);
        constexpr int slices = 8;
        std::optional<dinterval> out;
        const double w = (d_.t_hi - d_.t_lo) / slices;
        for (int s = 0; s < slices; ++s) {
            const double lo = s == 0 ? d_.t_lo : next_down(d_.t_lo + w * s);
            const double hi = s + 1 == slices ? d_.t_hi : next_up(d_.t_lo + w * (s + 1));
            const dinterval T(std::max(d_.t_lo, lo), std::min(d_.t_hi, hi));
            const dinterval num = a1 * T + b1 + rx, den = a2 * T + b2 + ry;
            const dinterval q = num / den;
            if (!numeric::is_finite(q)) return whole();
            out = out ? hull_of(*out, q) : q;
        }
        return *out;
    }
    form pow(const form& x, const form& y) const {
        if (y.exact_constant()) {
            const rational& q = y.c;
            if (is_integer(q) && numeric::abs(q) <= 4096) {
                const long k = boost::multiprecision::numerator(q).convert_to<long>();
                if (k == 0) return constant(1);
                if (k == 1) return x;
                if (x.exact_constant() && (k > 0 || x.c != 0)) {
                    rational base = k < 0 ? rational(1) / x.c : x.c, r = 1;
                    for (long t = 0; t < std::labs(k); ++t) r *= base;
                    return constant(r);
                }
                return pure(pow_int(collapse(x), k));
            }
            return pure(pow_real(collapse(x), point(q)));
        }
        if (x.exact_constant()) {
            const rational& c = x.c;
            if (c == 1) return constant(1);
            if (c == 0) return pure(dinterval(0.0, 1.0));
            if (c == -1) {
                if (y.exact_affine() && is_integer(y.c))
                    if (auto p = parity(y.a, y.b)) {
                        const long m = (*p + (boost::multiprecision::numerator(y.c) % 2 != 0 ? 1 : 0)) % 2;
                        return constant(m == 0 ? 1 : -1);
                    }
                return pure(dinterval(-1.0, 1.0));
            }
        }
        return pure(pow_real(collapse(x), collapse(y)));
    }
    static dinterval pow_int(const dinterval& x, long k) {
        if (k < 0) return dinterval(1.0) / pow_int(x, -k);
        const dinterval base = (k % 2 == 0) ? numeric::abs(x) : x;
        // x^k is increasing in x for odd k and in |x| >= 0 for even k: the end points' powers.
        const dinterval lo(base.lo()), hi(base.hi());
        dinterval pl(1.0), ph(1.0);
        for (long t = 0; t < k; ++t) {
            pl = pl * lo;
            ph = ph * hi;
        }
        return hull_of(pl, ph);
    }
    /// |x|^e as exp(e log|x|); [-M, M] unless x >= 0.
    static dinterval pow_real(const dinterval& x, const dinterval& e) {
        const dinterval m = numeric::abs(x);
        if (m.hi() == 0) return dinterval(0.0, 1.0);
        const double llo = m.lo() > 0 ? numeric::log(dinterval(m.lo())).lo() : -inf;
        const dinterval lg(llo, numeric::log(dinterval(m.hi())).hi());
        const dinterval p = numeric::exp(e * lg);
        if (x.lo() >= 0) return p;
        return dinterval(-p.hi(), p.hi());
    }
    form trig(const form& x, bool is_sin) const {
        if (x.times_pi && is_integer(x.a) && is_integer(x.b))
            if (auto m = parity(x.a, x.b)) {
                // sin/cos(pi (m' + c)) = (-1)^m' sin/cos(pi c) for an integer m' = a i + b n.
                const rational& c = x.c;
                form v;
                if (is_integer(c)) {
                    const long cm = boost::multiprecision::numerator(c) % 2 != 0 ? 1 : 0;
                    v = is_sin ? constant(0) : constant(cm == 0 ? 1 : -1);
                } else if (is_integer(c * 2)) {
                    // c = k + 1/2: cos = 0, sin = (-1)^k.
                    const rational k = c - rational(1, 2);
                    const long km = boost::multiprecision::numerator(k) % 2 != 0 ? 1 : 0;
                    v = is_sin ? constant(km == 0 ? 1 : -1) : constant(0);
                } else {
                    const dinterval a = numeric::pi_interval() * point(c);
                    v = pure(is_sin ? numeric::sin(a) : numeric::cos(a));
                }
                return *m == 0 ? v : scale(v, -1);
            }
        const dinterval a = collapse(x);
        if (!numeric::is_finite(a)) return pure(dinterval(-1.0, 1.0));
        return pure(is_sin ? numeric::sin(a) : numeric::cos(a));
    }
    form floor(const form& x) const {
        const dinterval v = collapse(x);
        if (numeric::is_finite(v) && std::floor(v.lo()) == std::floor(v.hi()))
            return constant(rational_of(std::floor(v.lo())));
        if (x.exact_affine()) {
            // x = s + (P a) k + (P b) k' with s = a r_i + b r_n + c: floor(x) = x - frac(s).
            const rational P(d_.period);
            bool ok = true;
            rational s = x.c;
            if (x.a != 0) {
                ok = ok && d_.i_residue && is_integer(x.a * P);
                if (ok) s += x.a * rational(*d_.i_residue);
            }
            if (x.b != 0) {
                ok = ok && d_.n_residue && is_integer(x.b * P);
                if (ok) s += x.b * rational(*d_.n_residue);
            }
            if (ok) {
                form g = x;
                g.c = x.c - (s - numeric::floor(s));
                return g;
            }
        }
        form g = x;
        if (g.times_pi) g = pure(collapse(x));
        g.r = (g.exact_r ? dinterval(0.0) : g.r) + dinterval(-1.0, 0.0);
        g.exact_r = false;
        return g;
    }
    static rational rational_of(double v) { return numeric::rational_from_double(v); }
    form relation(op rel, const form& x, const form& y) const {
        const dinterval z = collapse(add(x, scale(y, -1)));
        const bool pos = z.lo() > 0, neg = z.hi() < 0, zero = is_zero_point(z);
        const bool nonneg = z.lo() >= 0, nonpos = z.hi() <= 0;
        std::optional<bool> v;
        switch (rel) {
        case op::eq: if (pos || neg) v = false; else if (zero) v = true; break;
        case op::ne: if (pos || neg) v = true; else if (zero) v = false; break;
        case op::lt: if (neg) v = true; else if (nonneg) v = false; break;
        case op::le: if (nonpos) v = true; else if (pos) v = false; break;
        case op::gt: if (pos) v = true; else if (nonpos) v = false; break;
        case op::ge: if (nonneg) v = true; else if (neg) v = false; break;
        default: break;
        }
        if (v) return constant(*v ? 1 : 0);
        return pure(dinterval(0.0, 1.0));
    }

    const position_domain& d_;
    dinterval I_, N_, D_, T_;
};

/// What residue_period needs of a node: whether it is an exact affine form a·i + b·n + c (or
/// π times one), and the period its constructs ask for.
struct period_info {
    bool affine = false, pi_affine = false;
    rational a = 0, b = 0;
    long need = 1;
};

long den_of(const rational& q) {
    const auto d = boost::multiprecision::denominator(q);
    return d > 1000 ? 0 : d.convert_to<long>();
}

} // namespace

numeric::dinterval range_over_positions(const tree& t, const position_domain& dom) {
    try {
        const evaluator ev(dom);
        const std::vector<form> forms = fold<form>(
            t, [&ev](std::uint32_t, const node& nd, const std::vector<form>& done) { return ev.visit(nd, done); });
        const dinterval v = ev.collapse(forms[t.root]);
        return v;
    } catch (const std::exception&) {
        return whole();
    }
}

long residue_period(const tree& t, long cap) {
    const std::vector<period_info> info = fold<period_info>(
        t, [&t](std::uint32_t, const node& nd, const std::vector<period_info>& done) {
            period_info p;
            auto lcm = [](long x, long y) { return x == 0 || y == 0 ? 0 : std::lcm(x, y); };
            if (nd.lhs != no_child) p.need = lcm(p.need, done[nd.lhs].need);
            if (nd.rhs != no_child) p.need = lcm(p.need, done[nd.rhs].need);
            const period_info* x = nd.lhs != no_child ? &done[nd.lhs] : nullptr;
            const period_info* y = nd.rhs != no_child ? &done[nd.rhs] : nullptr;
            const bool xc = x && x->affine && x->a == 0 && x->b == 0 && nd.lhs != no_child &&
                            t[nd.lhs].value.has_value();
            const bool yc = y && y->affine && y->a == 0 && y->b == 0 && nd.rhs != no_child &&
                            t[nd.rhs].value.has_value();
            switch (nd.op) {
            case op::number: p.affine = true; break;
            case op::var_i: p.affine = true; p.a = 1; break;
            case op::var_n: p.affine = true; p.b = 1; break;
            case op::pi: p.pi_affine = true; break;
            case op::neg:
                p.affine = x->affine; p.pi_affine = x->pi_affine; p.a = -x->a; p.b = -x->b;
                break;
            case op::add:
            case op::sub: {
                const rational s = nd.op == op::add ? 1 : -1;
                p.affine = x->affine && y->affine;
                p.pi_affine = x->pi_affine && y->pi_affine;
                p.a = x->a + s * y->a;
                p.b = x->b + s * y->b;
                break;
            }
            case op::mul:
                if (xc && y->affine) { p = *y; p.a *= *t[nd.lhs].value; p.b *= *t[nd.lhs].value; }
                else if (yc && x->affine) { p = *x; p.a *= *t[nd.rhs].value; p.b *= *t[nd.rhs].value; }
                else if (x->pi_affine && y->affine) { p.pi_affine = true; p.a = y->a; p.b = y->b; }
                else if (y->pi_affine && x->affine) { p.pi_affine = true; p.a = x->a; p.b = x->b; }
                p.need = lcm(lcm(p.need, x->need), y->need);
                break;
            case op::div:
                if (yc && x->affine && *t[nd.rhs].value != 0) {
                    p = *x;
                    p.a /= *t[nd.rhs].value;
                    p.b /= *t[nd.rhs].value;
                    p.need = lcm(p.need, x->need);
                }
                break;
            case op::pow:
                if (xc && *t[nd.lhs].value == -1 && y->affine) p.need = lcm(p.need, 2);
                break;
            case op::sin:
            case op::cos:
                if (x->pi_affine) p.need = lcm(p.need, 2);
                break;
            case op::floor:
                if (x->affine) {
                    p = *x;
                    p.need = lcm(lcm(p.need, den_of(x->a)), den_of(x->b));
                }
                break;
            default: break;
            }
            return p;
        });
    const long need = info[t.root].need;
    return need >= 1 && need <= cap ? need : 1;
}

} // namespace attnprop::model::formula
