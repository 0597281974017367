#pragma once
/// @file interval.hpp
/// Closed double interval with outward rounding: the cheap filter of the exact hard-attention
/// path. Enclosure kind. An operation whose rounded result is exact keeps a point interval a
/// point, so integer-valued models decide their ties in the filter without the exact fallback.

#include "numeric/context.hpp"
#include "numeric/order.hpp"
#include "numeric/rational.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace attnprop::numeric {

/// [lo, hi] with lo <= hi, both doubles, possibly infinite. The whole line (-inf, inf) stands
/// for "anything" (overflow, an undefined operation). Never NaN.
class interval {
public:
    constexpr interval() = default;
    /// The point x (x finite).
    constexpr explicit interval(double x) : lo_(x), hi_(x) {}
    constexpr interval(double lo, double hi) : lo_(lo), hi_(hi) {}

    /// The tightest double interval containing q.
    static interval from_rational(const rational& q, const context& ctx);
    /// The whole real line.
    static constexpr interval entire() {
        return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    }

    constexpr double lo() const { return lo_; }
    constexpr double hi() const { return hi_; }
    constexpr bool is_point() const { return lo_ == hi_; }
    long precision() const { return 53; }

    interval& operator+=(const interval& b);
    interval& operator-=(const interval& b);
    interval& operator*=(const interval& b);
    interval& operator/=(const interval& b);

private:
    double lo_ = 0.0;
    double hi_ = 0.0;
};

interval operator+(const interval& a, const interval& b);
interval operator-(const interval& a, const interval& b);
interval operator*(const interval& a, const interval& b);
/// Division; a divisor containing 0 gives the whole line.
interval operator/(const interval& a, const interval& b);
inline interval operator-(const interval& a) { return {-a.hi(), -a.lo()}; }

/// less/greater when proved, equal when both are the same point, unknown otherwise.
inline order compare(const interval& a, const interval& b) {
    if (a.hi() < b.lo()) return order::less;
    if (a.lo() > b.hi()) return order::greater;
    if (a.is_point() && b.is_point() && a.lo() == b.lo()) return order::equal;
    return order::unknown;
}
inline void fma_acc(interval& acc, const interval& a, const interval& b) { acc += a * b; }
interval abs(const interval& x);
interval floor(const interval& x);

/// The exact value of a finite point interval.
std::optional<rational> exact_value(const interval& x);
/// Whether q lies in x.
bool contains(const interval& x, const rational& q);
double to_double(const interval& x);
std::string to_string(const interval& x);
std::size_t repr_hash(const interval& x);
inline bool same_value(const interval& a, const interval& b) {
    return a.lo() == b.lo() && a.hi() == b.hi();
}

} // namespace attnprop::numeric
