#pragma once
/// @file dinterval_raw.hpp
/// What the raw double kernels of the certified double kind share: an interval as a midpoint
/// and a radius.

#include "numeric/dinterval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnprop::numeric {

/// Midpoint m and radius r (rounded up) of x, so that [lo, hi] ⊆ [m − r, m + r]; false (m = 0,
/// r = +inf) when x is not finite.
inline bool mid_rad(const dinterval& x, double& m, double& r) {
    const double lo = x.lo(), hi = x.hi();
    if (!std::isfinite(lo) || !std::isfinite(hi)) {
        m = 0;
        r = std::numeric_limits<double>::infinity();
        return false;
    }
    if (lo == hi) {
        m = lo;
        r = 0;
        return true;
    }
    m = lo * 0.5 + hi * 0.5;
    if (m < lo) m = lo;
    if (m > hi) m = hi;
    r = interval_detail::next_up(std::max(hi - m, m - lo));
    return true;
}

} // namespace attnprop::numeric
