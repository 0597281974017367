#pragma once
/// @file interval.hpp
/// Closed double interval with outward rounding: the cheap filter of the exact hard-attention
/// path. Enclosure kind. An operation whose rounded result is exact keeps a point interval a
/// point, so integer-valued models decide their ties in the filter without the exact fallback.
///
/// Addition, subtraction and multiplication are inline (they run d^2 times per position in the
/// filter). `dot_rows` / `dot_all` give a much cheaper, never-tight enclosure of many dot
/// products against one vector: the first stage of the hard-attention score filter.

#include "numeric/context.hpp"
#include "numeric/order.hpp"
#include "numeric/rational.hpp"
#include "numeric/traits.hpp"

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

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

namespace interval_detail {

inline constexpr double inf = std::numeric_limits<double>::infinity();

/// The next double above a finite x: std::nextafter(x, +inf), inlined.
inline double next_up(double x) {
    if (x == 0) return std::numeric_limits<double>::denorm_min();
    const auto b = std::bit_cast<std::uint64_t>(x);
    return std::bit_cast<double>(x > 0 ? b + 1 : b - 1);
}
/// The next double below a finite x: std::nextafter(x, -inf), inlined.
inline double next_down(double x) { return -next_up(-x); }

inline constexpr double max_double = std::numeric_limits<double>::max();

/// The rounded-down value of an operation whose result rounded to nearest is s, when s
/// overflowed: an overflow to +inf of finite operands still has a finite exact result, above
/// DBL_MAX, so DBL_MAX bounds it from below; -inf is a valid lower bound. NaN is the whole line.
inline double overflow_down(double s, bool finite_operands) {
    if (std::isnan(s)) return -inf;
    return s > 0 && finite_operands ? max_double : s;
}
/// The same for rounding up: a -inf overflow of finite operands is bounded by -DBL_MAX.
inline double overflow_up(double s, bool finite_operands) {
    if (std::isnan(s)) return inf;
    return s < 0 && finite_operands ? -max_double : s;
}

/// a + b rounded down / up, using the exact error term of TwoSum to stay tight when exact.
inline double add_down(double a, double b) {
    const double s = a + b;
    if (!std::isfinite(s)) return overflow_down(s, std::isfinite(a) && std::isfinite(b));
    const double bb = s - a;
    const double err = (a - (s - bb)) + (b - bb);
    return err < 0 ? next_down(s) : s;
}
inline double add_up(double a, double b) {
    const double s = a + b;
    if (!std::isfinite(s)) return overflow_up(s, std::isfinite(a) && std::isfinite(b));
    const double bb = s - a;
    const double err = (a - (s - bb)) + (b - bb);
    return err > 0 ? next_up(s) : s;
}

/// a * b rounded down / up, using the exact error term of the fused multiply-add. A zero factor
/// gives 0 (also against an infinite one: the point 0 times any real is 0). Products below
/// 1e-290 in magnitude are widened by one ulp (their error term may underflow).
inline double mul_down(double a, double b) {
    if (a == 0 || b == 0) return 0.0;
    const double p = a * b;
    if (!std::isfinite(p)) return overflow_down(p, std::isfinite(a) && std::isfinite(b));
    if (std::fabs(p) < 1e-290) return next_down(p);
    return std::fma(a, b, -p) < 0 ? next_down(p) : p;
}
inline double mul_up(double a, double b) {
    if (a == 0 || b == 0) return 0.0;
    const double p = a * b;
    if (!std::isfinite(p)) return overflow_up(p, std::isfinite(a) && std::isfinite(b));
    if (std::fabs(p) < 1e-290) return next_up(p);
    return std::fma(a, b, -p) > 0 ? next_up(p) : p;
}

/// a * b rounded down / up without the exactness test: always one ulp outward. For products
/// of non-point intervals, whose result is not a point anyway (saves the fma call).
inline double mul_down_loose(double a, double b) {
    if (a == 0 || b == 0) return 0.0;
    const double p = a * b;
    if (!std::isfinite(p)) return overflow_down(p, std::isfinite(a) && std::isfinite(b));
    return next_down(p);
}
inline double mul_up_loose(double a, double b) {
    if (a == 0 || b == 0) return 0.0;
    const double p = a * b;
    if (!std::isfinite(p)) return overflow_up(p, std::isfinite(a) && std::isfinite(b));
    return next_up(p);
}

inline interval normalise(double lo, double hi) {
    if (std::isnan(lo) || std::isnan(hi) || lo > hi) return interval::entire();
    return {lo, hi};
}

} // namespace interval_detail

inline interval operator+(const interval& a, const interval& b) {
    using namespace interval_detail;
    return normalise(add_down(a.lo(), b.lo()), add_up(a.hi(), b.hi()));
}
inline interval operator-(const interval& a, const interval& b) {
    using namespace interval_detail;
    return normalise(add_down(a.lo(), -b.hi()), add_up(a.hi(), -b.lo()));
}
namespace interval_detail {
/// Product of two points: the exact product when it is a double (kept a point), else the two
/// doubles around it.
inline interval mul_points(double a, double b) {
    if (a == 0 || b == 0) return interval(0.0);
    const double p = a * b;
    if (!std::isfinite(p) || std::fabs(p) < 1e-290) return normalise(mul_down(a, b), mul_up(a, b));
    const double err = std::fma(a, b, -p);
    return {err < 0 ? next_down(p) : p, err > 0 ? next_up(p) : p};
}
} // namespace interval_detail

/// Product by the signs of the endpoints: two directed products unless both factors contain 0
/// in their interior (then four). A point times a point stays a point when the product is
/// exact; otherwise every endpoint product is rounded one ulp outward (the result is not a
/// point anyway).
inline interval operator*(const interval& a, const interval& b) {
    using namespace interval_detail;
    const double al = a.lo(), ah = a.hi(), bl = b.lo(), bh = b.hi();
    if (al == ah && bl == bh) return mul_points(al, bl);
    // Sign classes: nonnegative (lo >= 0), nonpositive (hi <= 0), or mixed.
    const int sa = al >= 0 ? 1 : (ah <= 0 ? -1 : 0);
    const int sb = bl >= 0 ? 1 : (bh <= 0 ? -1 : 0);
    double xl, yl, xh, yh; // lo = xl * yl, hi = xh * yh
    if (sa == 1) {
        if (sb == 1) xl = al, yl = bl, xh = ah, yh = bh;
        else if (sb == -1) xl = ah, yl = bl, xh = al, yh = bh;
        else xl = ah, yl = bl, xh = ah, yh = bh;
    } else if (sa == -1) {
        if (sb == 1) xl = al, yl = bh, xh = ah, yh = bl;
        else if (sb == -1) xl = ah, yl = bh, xh = al, yh = bl;
        else xl = al, yl = bh, xh = al, yh = bl;
    } else {
        if (sb == 1) xl = al, yl = bh, xh = ah, yh = bh;
        else if (sb == -1) xl = ah, yl = bl, xh = al, yh = bl;
        else {
            const double l1 = mul_down_loose(al, bh), l2 = mul_down_loose(ah, bl);
            const double h1 = mul_up_loose(al, bl), h2 = mul_up_loose(ah, bh);
            return normalise(l1 < l2 ? l1 : l2, h1 > h2 ? h1 : h2);
        }
    }
    return normalise(mul_down_loose(xl, yl), mul_up_loose(xh, yh));
}
/// Division; a divisor containing 0 gives the whole line.
interval operator/(const interval& a, const interval& b);
inline interval operator-(const interval& a) { return {-a.hi(), -a.lo()}; }

inline interval& interval::operator+=(const interval& b) { return *this = *this + b; }
inline interval& interval::operator-=(const interval& b) { return *this = *this - b; }
inline interval& interval::operator*=(const interval& b) { return *this = *this * b; }

/// less/greater when proved, equal when both are the same point, unknown otherwise.
inline order compare(const interval& a, const interval& b) {
    if (a.hi() < b.lo()) return order::less;
    if (a.lo() > b.hi()) return order::greater;
    if (a.is_point() && b.is_point() && a.lo() == b.lo()) return order::equal;
    return order::unknown;
}
inline void fma_acc(interval& acc, const interval& a, const interval& b) { acc += a * b; }

/// An enclosure of acc + a[0] b[0] + ... + a[len-1] b[len-1] (the dot products of the filter's
/// affine maps). When acc and every factor are points: repeated fma_acc, so an exact result
/// stays a point. Otherwise one branch-free pass in double arithmetic (corner products,
/// rounding to nearest) with one error bound for the whole sum at the end: a little wider than
/// repeated fma_acc (relative width about (len + 2) 2^-52), several times faster.
interval dot_acc(interval acc, const interval* a, const interval* b, std::size_t len);
/// The same over the terms idx[0 .. count) (a sparse row).
interval dot_acc(interval acc, const interval* a, const interval* b, const std::size_t* idx,
                 std::size_t count);
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

// --- fast enclosure of many dot products ----------------------------------------------------

/// Interval vectors of one width in midpoint-radius form, prepared for `dot_all`: each row
/// keeps its midpoints (contiguous, so the score loop is a plain double dot product) and two
/// norm bounds from which the radius of a dot product follows in O(1).
class dot_rows {
public:
    /// Rows of `width` entries; width must be below 2^20.
    explicit dot_rows(std::size_t width = 0);
    /// Appends the interval vector v[0 .. width).
    void push_back(const interval* v);
    std::size_t size() const { return mid_terms_.size(); }
    std::size_t width() const { return width_; }
    void reserve(std::size_t rows);

    /// Midpoints of row j.
    const double* mid(std::size_t j) const { return mids_.data() + j * width_; }
    /// gamma_w ||m_j||_1 + ||r_j||_1 (infinite for a row with an unbounded entry).
    double mid_term(std::size_t j) const { return mid_terms_[j]; }
    /// ||m_j||_1 + ||r_j||_1 (infinite for a row with an unbounded entry).
    double rad_term(std::size_t j) const { return rad_terms_[j]; }
    /// gamma_w = (width + 1) 2^-52, at least twice the classical bound w u / (1 - w u) on the
    /// relative rounding error of a w-term double dot product.
    double gamma() const { return gamma_; }

private:
    std::size_t width_;
    double gamma_;
    std::vector<double> mids_;
    std::vector<double> mid_terms_, rad_terms_;
};

/// Encloses q . k_j for every row k_j of `rows` into out[j] (q has rows.width() entries, out
/// rows.size()). Every enclosure is rigorous and costs one double dot product of the midpoints
/// plus O(1): the radius is |q_m|_inf (gamma |k_m|_1 + |k_r|_1) + |q_r|_inf (|k_m|_1 +
/// |k_r|_1), inflated for its own rounding, plus 2^-1000 for underflow. Never tight: even exact
/// data give a non-point enclosure (relative width about 1e-15), so exact ties need the
/// generic interval dot product (which keeps exact points exact) or rationals. With `end`, the
/// rows [0, min(end, rows.size())) alone (a masked row's keys).
void dot_all(const interval* q, const dot_rows& rows, interval* out,
             std::size_t end = static_cast<std::size_t>(-1));

/// The index j* when the enclosures of dot_all prove that q . k_j* is larger than every other
/// q . k_j (then j* is also the leftmost argmax); the number of rows looked at when they do not
/// (then use dot_all and a candidate scan). One pass, no storage. With `end`, the rows [0,
/// min(end, rows.size())) alone.
std::size_t dot_argmax(const interval* q, const dot_rows& rows,
                       std::size_t end = static_cast<std::size_t>(-1));

// The hooks of scalar.hpp's generic helpers (display, exact values, finiteness).
inline interval representative(const interval& x) { return interval(to_double(x)); }
inline std::optional<rational> exact_of(const interval& x) { return exact_value(x); }
inline bool is_nan(const interval&) { return false; }
inline bool is_finite(const interval& x) { return std::isfinite(x.lo()) && std::isfinite(x.hi()); }
std::string to_display_string(const interval& x, int digits);
std::string to_certified_display(const interval& x, int digits, bool force_digits = false);
std::string to_decimal(const interval& x, int digits);
std::string radius_string(const interval& x);
inline double approx_double(const interval& x) { return to_double(x); }

template <> struct scalar_traits<interval> {
    static constexpr scalar_kind kind = scalar_kind::enclosure;
    static constexpr std::string_view name = "filter-interval";
    static constexpr bool expensive_exp = false;
    static constexpr bool variable_precision = false;
    /// The filter of the exact hard path may widen to the whole line legitimately: exact
    /// arithmetic decides what it cannot.
    static constexpr bool checks_finite = false;
    static interval from_rational(const rational& q, const context& ctx) {
        return interval::from_rational(q, ctx);
    }
    static interval from_long(long v, const context& ctx) {
        // |v| <= 2^53 is an exact double: the point (what from_rational gives, without GMP).
        if (v >= -(1L << 53) && v <= (1L << 53)) return interval(static_cast<double>(v));
        return interval::from_rational(rational(v), ctx);
    }
    static long precision(const interval&) { return 53; }
    static interval unit(const context&) { return interval(0.0, 1.0); }
    static interval hull(const interval& a, const interval& b) {
        return interval(std::min(a.lo(), b.lo()), std::max(a.hi(), b.hi()));
    }
    static interval nonnegative_part(const interval& x) {
        return interval(std::max(0.0, x.lo()), std::max(0.0, x.hi()));
    }
};

} // namespace attnprop::numeric
