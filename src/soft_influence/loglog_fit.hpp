#pragma once
/// @file loglog_fit.hpp
/// Least-squares fit of log y against log n: the empirical exponent of a quantity measured
/// along a ladder of lengths (theory.md §7, S3). The fit is a statistic of measurements, not a
/// claim about the model, so it runs in double: the measured values are rounded once to
/// double (their relative error, at most 2^-53, moves the slope by far less than its standard
/// error).

#include <cstddef>
#include <optional>
#include <vector>

namespace attnprop::analysis {

/// y ≈ exp(intercept) · n^slope.
struct loglog_fit {
    double slope = 0;
    double intercept = 0;
    /// Standard error of the slope from the residuals (0 for an exact fit; needs >= 3 points,
    /// and is reported as 0 with exactly two).
    double slope_stderr = 0;
    std::size_t points = 0;
};

/// Fits log y = intercept + slope · log n over the pairs with n > 0 and y > 0 (others are
/// skipped: a zero influence has no logarithm). std::nullopt with fewer than two usable
/// points or when every usable n is the same.
std::optional<loglog_fit> fit_loglog(const std::vector<double>& n, const std::vector<double>& y);

} // namespace attnprop::analysis
