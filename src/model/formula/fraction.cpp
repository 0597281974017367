#include "model/formula/exact.hpp"

#include <gmp.h>

#include <limits>
#include <numeric>
#include <utility>

namespace attnprop::model::formula {

namespace {

/// p/q with q > 0 in lowest terms and p != LLONG_MIN (so that negation and std::gcd are
/// safe); every operation fails (returns false) on overflow.
struct fraction {
    long long p = 0;
    long long q = 1;
};

constexpr long long min_ll = std::numeric_limits<long long>::min();

bool reduce(fraction& f) {
    if (f.p == min_ll)
        return false;
    long long g = std::gcd(f.p, f.q); // q > 0, so g > 0
    f.p /= g;
    f.q /= g;
    return true;
}

bool mul_to(long long a, long long b, long long& r) {
    return !__builtin_mul_overflow(a, b, &r);
}

bool add_fractions(fraction x, fraction y, bool subtract, fraction& r) {
    long long g = std::gcd(x.q, y.q);
    long long yq = y.q / g;
    long long xq = x.q / g;
    long long a = 0;
    long long b = 0;
    if (!mul_to(x.p, yq, a) || !mul_to(y.p, xq, b) || !mul_to(x.q, yq, r.q))
        return false;
    if (subtract ? __builtin_sub_overflow(a, b, &r.p) : __builtin_add_overflow(a, b, &r.p))
        return false;
    return reduce(r);
}

bool mul_fractions(fraction x, fraction y, fraction& r) {
    if (x.p == 0 || y.p == 0) {
        r = {0, 1};
        return true;
    }
    long long g1 = std::gcd(x.p, y.q);
    long long g2 = std::gcd(y.p, x.q);
    return mul_to(x.p / g1, y.p / g2, r.p) && mul_to(x.q / g2, y.q / g1, r.q) && r.p != min_ll;
}

/// 1/x; false for x = 0.
bool invert(fraction& x) {
    if (x.p == 0)
        return false;
    std::swap(x.p, x.q);
    if (x.q < 0) {
        x.p = -x.p;
        x.q = -x.q;
    }
    return true;
}

int compare_fractions(const fraction& x, const fraction& y, bool& ok) {
    long long a = 0;
    long long b = 0;
    ok = mul_to(x.p, y.q, a) && mul_to(y.p, x.q, b);
    return a < b ? -1 : (a > b ? 1 : 0);
}

struct small_evaluator {
    const std::vector<node>& nodes;
    long long i;
    long long n;

    bool run(std::uint32_t idx, fraction& out) const {
        const node& nd = nodes[idx];
        if (nd.small) {
            out = {nd.small_num, nd.small_den};
            return true;
        }
        if (nd.value || !nd.rational)
            return false;
        switch (nd.op) {
        case op::var_i:
            out = {i, 1};
            return i != min_ll;
        case op::var_n:
            out = {n, 1};
            return n != min_ll;
        case op::neg:
            if (!run(nd.lhs, out))
                return false;
            out.p = -out.p;
            return true;
        case op::add:
        case op::sub:
        case op::mul:
        case op::div: {
            fraction a;
            fraction b;
            if (!run(nd.lhs, a) || !run(nd.rhs, b))
                return false;
            switch (nd.op) {
            case op::add:
                return add_fractions(a, b, false, out);
            case op::sub:
                return add_fractions(a, b, true, out);
            case op::mul:
                return mul_fractions(a, b, out);
            default:
                return invert(b) && mul_fractions(a, b, out);
            }
        }
        case op::pow: {
            fraction e;
            fraction base;
            if (!run(nd.rhs, e) || e.q != 1 || !run(nd.lhs, base))
                return false;
            if (base.q == 1 && (base.p == 1 || base.p == -1)) {
                out = {(base.p == -1 && (e.p & 1) != 0) ? -1 : 1, 1};
                return true;
            }
            if (e.p == 0) {
                out = {1, 1};
                return true;
            }
            if (base.p == 0) {
                out = {0, 1};
                return e.p > 0;
            }
            if (e.p > 64 || e.p < -64)
                return false; // |base| >= 2 or <= 1/2: overflows
            fraction r{1, 1};
            for (long long k = 0; k < (e.p < 0 ? -e.p : e.p); ++k)
                if (!mul_fractions(r, base, r))
                    return false;
            if (e.p < 0 && !invert(r))
                return false;
            out = r;
            return true;
        }
        case op::abs:
            if (!run(nd.lhs, out))
                return false;
            if (out.p < 0)
                out.p = -out.p;
            return true;
        case op::floor: {
            if (!run(nd.lhs, out))
                return false;
            long long f = out.p / out.q;
            if (out.p % out.q != 0 && out.p < 0)
                --f;
            out = {f, 1};
            return true;
        }
        case op::eq:
        case op::ne:
        case op::lt:
        case op::le:
        case op::gt:
        case op::ge: {
            fraction a;
            fraction b;
            if (!run(nd.lhs, a) || !run(nd.rhs, b))
                return false;
            bool ok = false;
            int c = compare_fractions(a, b, ok);
            if (!ok)
                return false;
            numeric::order ord = c < 0 ? numeric::order::less
                                       : (c > 0 ? numeric::order::greater : numeric::order::equal);
            out = {relation_holds(nd.op, ord) ? 1 : 0, 1};
            return true;
        }
        default:
            return false;
        }
    }
};

} // namespace

bool fraction_value(const std::vector<node>& nodes, std::uint32_t idx, long i, long n,
                    long long& p, long long& q) noexcept {
    fraction f;
    if (!small_evaluator{nodes, i, n}.run(idx, f))
        return false;
    p = f.p;
    q = f.q;
    return true;
}

void set_small(node& nd) {
    mpq_srcptr v = nd.value->backend().data();
    if (mpz_sizeinbase(mpq_numref(v), 2) > 62 || mpz_sizeinbase(mpq_denref(v), 2) > 62)
        return;
    nd.small = true;
    nd.small_num = mpz_get_si(mpq_numref(v));
    nd.small_den = mpz_get_si(mpq_denref(v));
}

} // namespace attnprop::model::formula
