#pragma once
/// @file real.hpp
/// Evaluation of a formula tree in a real scalar kind S (double, MPFR, Arb, ...): maximal
/// rational subtrees exactly (exact.hpp) and converted once, the rest in S; values of constant
/// non-rational subtrees cached per scalar type and precision.

#include "model/formula/ast.hpp"
#include "model/formula/exact.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <variant>
#include <vector>

namespace attnprop::model::formula {

/// Values of constant non-rational subtrees, per node, scalar type and precision.
struct constant_cache {
    struct entry {
        std::uint32_t node;
        long precision;
        std::variant<double, numeric::mpfr_real, numeric::arb_ball> value;
    };
    std::mutex mutex;
    std::vector<std::unique_ptr<entry>> entries; // stable addresses: no variant moves
};

/// The fraction p/q (q > 0) converted with from_rational<S>; doubles divide directly when
/// both fit in 53 bits (a correctly rounded division of exact operands).
template <numeric::Scalar S>
S from_fraction(long long p, long long q, const numeric::context& ctx) {
    if constexpr (std::is_same_v<S, double>) {
        constexpr long long limit = 1LL << 53;
        if (p <= limit && p >= -limit && q <= limit)
            return static_cast<double>(p) / static_cast<double>(q);
    }
    return numeric::from_rational<S>(numeric::rational(p, q), ctx);
}

/// x^k for an integer k, in the arithmetic of x; 0^negative is a numeric::undefined_error (Arb:
/// an unbounded ball).
double int_pow(double x, long k, const numeric::context& ctx);
numeric::mpfr_real int_pow(const numeric::mpfr_real& x, long k, const numeric::context& ctx);
numeric::arb_ball int_pow(const numeric::arb_ball& x, long k, const numeric::context& ctx);
/// Generic fallback: binary powering.
template <numeric::ExpScalar S> S int_pow(const S& x, long k, const numeric::context& ctx) {
    if (k < 0) {
        if (numeric::sign(x, ctx) == numeric::order::equal)
            throw numeric::undefined_error("zero raised to a negative power");
        return numeric::one<S>(ctx) / int_pow(x, -k, ctx);
    }
    S result = numeric::one<S>(ctx);
    S base = x;
    for (unsigned long e = static_cast<unsigned long>(k); e != 0; e >>= 1) {
        if (e & 1UL)
            result = result * base;
        if (e > 1)
            base = base * base;
    }
    return result;
}

/// a^b for a real exponent b. A negative base, or a zero base with an exponent that is not
/// positive, is a numeric::undefined_error for double and MPFR; Arb returns an indeterminate
/// ball.
double real_pow(double a, double b, const numeric::context& ctx);
numeric::mpfr_real real_pow(const numeric::mpfr_real& a, const numeric::mpfr_real& b,
                            const numeric::context& ctx);
numeric::arb_ball real_pow(const numeric::arb_ball& a, const numeric::arb_ball& b,
                           const numeric::context& ctx);
/// Generic fallback: exp(b log a).
template <numeric::ExpScalar S> S real_pow(const S& a, const S& b, const numeric::context&) {
    return numeric::exp(b * numeric::log(a));
}

/// Throws numeric::undefined_error when a rounded result is NaN or infinite
/// (numeric::require_finite); no-op for enclosures (an indeterminate ball is returned, and the
/// positional embedding that uses the formula reports it).
void check_finite(double x);
void check_finite(const numeric::mpfr_real& x);
inline void check_finite(const numeric::arb_ball&) {}
template <class S> void check_finite(const S&) {}

/// The value of a tree's nodes at one point (i, n) in S. Errors as expr::eval<S> documents,
/// without the formula and point in their messages.
template <numeric::ExpScalar S> class real_evaluator {
public:
    /// cache may be null (nothing cached).
    real_evaluator(const tree& t, constant_cache* cache, long i, long n,
                   const numeric::context& ctx)
        : t_(t), cache_(cache), i_(i), n_(n), ctx_(ctx) {}

    /// The value of node idx: exactly when it is rational and representable, else in S.
    S at(std::uint32_t idx) const;

private:
    /// The value of node idx computed in S from its children.
    S compute(std::uint32_t idx) const;

    const tree& t_;
    constant_cache* cache_;
    long i_;
    long n_;
    const numeric::context& ctx_;
};

template <numeric::ExpScalar S> S real_evaluator<S>::at(std::uint32_t idx) const {
    const node& nd = t_[idx];
    if (nd.rational) {
        long long p = 0;
        long long d = 1;
        if (fraction_value(t_.nodes, idx, i_, n_, p, d))
            return from_fraction<S>(p, d, ctx_);
        numeric::rational q;
        try {
            if (exact_value(t_.nodes, idx, i_, n_, q, false))
                return numeric::from_rational<S>(q, ctx_);
        } catch (const numeric::limit_error&) {
            // Too large to compute exactly (2^(10^6 i)): S computes it in its own arithmetic.
        }
    }
    constexpr bool cacheable = std::is_same_v<S, double> || std::is_same_v<S, numeric::mpfr_real> ||
                               std::is_same_v<S, numeric::arb_ball>;
    if constexpr (cacheable) {
        if (nd.constant && !nd.rational && cache_) {
            {
                std::lock_guard<std::mutex> lock(cache_->mutex);
                for (const auto& e : cache_->entries)
                    if (e->node == idx && e->precision == ctx_.precision_bits &&
                        std::holds_alternative<S>(e->value))
                        return std::get<S>(e->value);
            }
            S v = compute(idx);
            std::lock_guard<std::mutex> lock(cache_->mutex);
            if (cache_->entries.size() >= 256)
                cache_->entries.clear();
            cache_->entries.push_back(std::make_unique<constant_cache::entry>(
                constant_cache::entry{idx, ctx_.precision_bits, v}));
            return v;
        }
    }
    return compute(idx);
}

template <numeric::ExpScalar S> S real_evaluator<S>::compute(std::uint32_t idx) const {
    const node& nd = t_[idx];
    switch (nd.op) {
    case op::number:
    case op::var_i:
    case op::var_n: {
        numeric::rational q;
        exact_value(t_.nodes, idx, i_, n_, q, true);
        return numeric::from_rational<S>(q, ctx_);
    }
    case op::pi:
        return numeric::pi<S>(ctx_);
    case op::neg:
        return -at(nd.lhs);
    case op::add:
        return at(nd.lhs) + at(nd.rhs);
    case op::sub:
        return at(nd.lhs) - at(nd.rhs);
    case op::mul:
        return at(nd.lhs) * at(nd.rhs);
    case op::div: {
        S a = at(nd.lhs);
        S b = at(nd.rhs);
        if constexpr (std::is_same_v<S, double>) {
            if (b == 0.0)
                throw numeric::undefined_error("division by zero");
        }
        return a / b;
    }
    case op::pow: {
        const node& e = t_[nd.rhs];
        numeric::rational q;
        if (e.rational && exact_value(t_.nodes, nd.rhs, i_, n_, q, false)) {
            S base = at(nd.lhs);
            long k = 0;
            if (small_integer(q, k))
                return int_pow(base, k, ctx_);
            return real_pow(base, numeric::from_rational<S>(q, ctx_), ctx_);
        }
        return real_pow(at(nd.lhs), at(nd.rhs), ctx_);
    }
    case op::sin:
        return numeric::sin(at(nd.lhs));
    case op::cos:
        return numeric::cos(at(nd.lhs));
    case op::exp:
        return numeric::exp(at(nd.lhs));
    case op::log: {
        S a = at(nd.lhs);
        if constexpr (std::is_same_v<S, double>) {
            if (!(a > 0.0))
                throw numeric::undefined_error("log of a non-positive number");
        }
        return numeric::log(a);
    }
    case op::sqrt: {
        S a = at(nd.lhs);
        if constexpr (std::is_same_v<S, double>) {
            if (!(a >= 0.0))
                throw numeric::undefined_error("square root of a negative number");
        }
        return numeric::sqrt(a);
    }
    case op::abs:
        return numeric::abs(at(nd.lhs));
    case op::floor:
        return numeric::floor(at(nd.lhs));
    case op::eq:
    case op::ne:
    case op::lt:
    case op::le:
    case op::gt:
    case op::ge: {
        numeric::order ord = numeric::compare(at(nd.lhs), at(nd.rhs));
        if (ord == numeric::order::unknown) {
            if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::enclosure)
                return numeric::unit_enclosure<S>(ctx_);
            else
                throw numeric::numeric_error("undecided comparison in an Iverson bracket");
        }
        return relation_holds(nd.op, ord) ? numeric::one<S>(ctx_) : numeric::zero<S>(ctx_);
    }
    }
    throw numeric::numeric_error("corrupt formula node");
}

} // namespace attnprop::model::formula
