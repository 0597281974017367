#include "model/formula/exact.hpp"

#include <gmp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

namespace attnprop::model::formula {

using numeric::numeric_error;
using numeric::rational;

namespace {

/// out = out^e for an integer e (given as a rational with denominator 1).
void exact_int_pow(rational& out, const rational& e) {
    mpq_ptr b = out.backend().data();
    mpz_srcptr k = mpq_numref(e.backend().data());
    int ks = mpz_sgn(k);
    if (mpz_sgn(mpq_numref(b)) == 0) {
        if (ks < 0)
            throw numeric::undefined_error("zero raised to a negative power");
        if (ks == 0)
            out = 1; // 0^0 = 1
        return;
    }
    if (ks == 0) {
        out = 1;
        return;
    }
    if (mpz_cmp_ui(mpq_denref(b), 1) == 0 && mpz_cmpabs_ui(mpq_numref(b), 1) == 0) {
        // +-1: only the parity matters, whatever the size of the exponent.
        if (mpz_sgn(mpq_numref(b)) < 0 && mpz_even_p(k))
            out = 1;
        return;
    }
    // The result has at least (bits - 1) * |k| bits: refuse it before computing it.
    const std::size_t bits = numeric::exact_bits(out);
    const std::uint64_t limit = numeric::limit_value(numeric::limit::exact_bits);
    const std::uint64_t least = std::max<std::uint64_t>(bits - 1, 1);
    if (mpz_sizeinbase(k, 2) > 62 || mpz_get_ui(k) > limit / least) {
        const std::string power = mpz_sizeinbase(k, 2) > 62
                                      ? std::string("more than 2^62")
                                      : std::to_string(mpz_get_ui(k) * least);
        throw numeric::limit_error(numeric::limit::exact_bits, limit + 1,
                                   "an exact power would have " + power + " bits");
    }
    unsigned long ku = mpz_get_ui(k); // |k|
    mpz_pow_ui(mpq_numref(b), mpq_numref(b), ku);
    mpz_pow_ui(mpq_denref(b), mpq_denref(b), ku);
    if (ks < 0)
        mpq_inv(b, b);
}

struct exact_evaluator {
    const std::vector<node>& nodes;
    long i;
    long n;
    bool strict;

    bool run(std::uint32_t idx, rational& out) const {
        const node& nd = nodes[idx];
        if (nd.value) {
            out = *nd.value;
            return true;
        }
        switch (nd.op) {
        case op::var_i:
            out = i;
            return true;
        case op::var_n:
            out = n;
            return true;
        case op::neg:
            if (!run(nd.lhs, out))
                return false;
            mpq_neg(out.backend().data(), out.backend().data());
            return true;
        case op::add:
        case op::sub:
        case op::mul:
        case op::div: {
            rational b;
            if (!run(nd.lhs, out) || !run(nd.rhs, b))
                return false;
            switch (nd.op) {
            case op::add:
                out += b;
                break;
            case op::sub:
                out -= b;
                break;
            case op::mul:
                out *= b;
                break;
            default:
                if (b == 0)
                    throw numeric::undefined_error("division by zero");
                out /= b;
                break;
            }
            numeric::check_exact_size(out);
            return true;
        }
        case op::pow: {
            rational e;
            if (!run(nd.rhs, e))
                return false;
            if (mpz_cmp_ui(mpq_denref(e.backend().data()), 1) != 0) {
                if (strict)
                    throw numeric_error("non-integer exponent " + numeric::to_exact_string(e));
                return false;
            }
            if (!run(nd.lhs, out))
                return false;
            exact_int_pow(out, e);
            return true;
        }
        case op::abs:
            if (!run(nd.lhs, out))
                return false;
            mpq_abs(out.backend().data(), out.backend().data());
            return true;
        case op::floor:
            if (!run(nd.lhs, out))
                return false;
            out = numeric::floor(out);
            return true;
        case op::eq:
        case op::ne:
        case op::lt:
        case op::le:
        case op::gt:
        case op::ge: {
            rational b;
            if (!run(nd.lhs, out) || !run(nd.rhs, b))
                return false;
            bool holds = relation_holds(nd.op, numeric::compare(out, b));
            out = holds ? 1 : 0;
            return true;
        }
        default:
            throw numeric_error("internal error: exact evaluation of a non-rational node");
        }
    }
};

} // namespace

bool exact_value(const std::vector<node>& nodes, std::uint32_t idx, long i, long n, rational& out,
                 bool strict) {
    return exact_evaluator{nodes, i, n, strict}.run(idx, out);
}

} // namespace attnprop::model::formula
