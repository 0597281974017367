#pragma once
/// @file real.hpp
/// Evaluation of a formula tree in a real scalar kind S (double, MPFR, Arb, ...): maximal
/// rational subtrees exactly (exact.hpp) and converted once, the rest in S; values of constant
/// non-rational subtrees cached per scalar type and precision. What differs between kinds (a
/// faster fraction, the powers, the domain of division, log and sqrt, whether constants are
/// cached) is the kind's hook (numeric/scalar.hpp and the kind's header).

#include "model/formula/ast.hpp"
#include "model/formula/exact.hpp"
#include "numeric/kinds.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <variant>
#include <vector>

namespace attnprop::model::formula {

/// The kinds whose formula constants are cached: the user kinds that say so
/// (numeric::caches_constants: double, MPFR, balls).
namespace detail {
template <class L> struct cached_variant;
template <class... S> struct cached_variant<numeric::kind_list<S...>> {
    template <class V, class T> struct add;
    template <class... A, class T> struct add<std::variant<A...>, T> {
        using type = std::conditional_t<numeric::caches_constants<T>(), std::variant<A..., T>,
                                        std::variant<A...>>;
    };
    template <class V, class... T> struct fold {
        using type = V;
    };
    template <class V, class T, class... R> struct fold<V, T, R...> {
        using type = typename fold<typename add<V, T>::type, R...>::type;
    };
    using type = typename fold<std::variant<std::monostate>, S...>::type;
};
} // namespace detail

/// Values of constant non-rational subtrees, per node, scalar type and precision.
struct constant_cache {
    struct entry {
        std::uint32_t node;
        long precision;
        typename detail::cached_variant<numeric::user_kinds>::type value;
    };
    std::mutex mutex;
    std::vector<std::unique_ptr<entry>> entries; // stable addresses: no variant moves
};

/// Throws numeric::undefined_error when a rounded result is NaN or infinite
/// (numeric::require_finite); no-op for enclosures (an indeterminate ball is returned, and the
/// positional embedding that uses the formula reports it) and exact values.
template <class S> void check_finite(const S& x) {
    if constexpr (numeric::scalar_traits<S>::kind == numeric::scalar_kind::rounded)
        numeric::require_finite(x);
    else
        (void)x;
}

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
            return numeric::from_fraction<S>(p, d, ctx_);
        numeric::rational q;
        try {
            if (exact_value(t_.nodes, idx, i_, n_, q, false))
                return numeric::from_rational<S>(q, ctx_);
        } catch (const numeric::limit_error&) {
            // Too large to compute exactly (2^(10^6 i)): S computes it in its own arithmetic.
        }
    }
    if constexpr (numeric::caches_constants<S>()) {
        if (nd.constant && !nd.rational && cache_) {
            {
                std::lock_guard<std::mutex> lock(cache_->mutex);
                // An entry of this node and precision computed in S (the variant's S).
                for (const auto& e : cache_->entries)
                    if (e->node == idx && e->precision == ctx_.precision_bits)
                        if (const S* value = std::get_if<S>(&e->value)) return *value;
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
        return numeric::checked_div(a, b);
    }
    case op::pow: {
        const node& e = t_[nd.rhs];
        numeric::rational q;
        if (e.rational && exact_value(t_.nodes, nd.rhs, i_, n_, q, false)) {
            S base = at(nd.lhs);
            long k = 0;
            if (small_integer(q, k))
                return numeric::int_pow(base, k, ctx_);
            return numeric::real_pow(base, numeric::from_rational<S>(q, ctx_), ctx_);
        }
        return numeric::real_pow(at(nd.lhs), at(nd.rhs), ctx_);
    }
    case op::sin:
        return numeric::sin(at(nd.lhs));
    case op::cos:
        return numeric::cos(at(nd.lhs));
    case op::exp:
        return numeric::exp(at(nd.lhs));
    case op::log:
        return numeric::checked_log(at(nd.lhs));
    case op::sqrt:
        return numeric::checked_sqrt(at(nd.lhs));
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
