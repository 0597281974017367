// Least-squares log-log fit (loglog_fit.hpp).
#include "soft_influence/loglog_fit.hpp"
#include "util/precondition.hpp"

#include <cmath>
#include <stdexcept>

namespace attnprop::analysis {

std::optional<loglog_fit> fit_loglog(const std::vector<double>& n, const std::vector<double>& y) {
    if (n.size() != y.size()) throw precondition_error("fit_loglog: n and y differ in length");
    std::vector<double> lx, ly;
    for (std::size_t k = 0; k < n.size(); ++k) {
        if (!(n[k] > 0) || !(y[k] > 0) || !std::isfinite(n[k]) || !std::isfinite(y[k])) continue;
        lx.push_back(std::log(n[k]));
        ly.push_back(std::log(y[k]));
    }
    const std::size_t m = lx.size();
    if (m < 2) return std::nullopt;
    double mx = 0, my = 0;
    for (std::size_t k = 0; k < m; ++k) {
        mx += lx[k];
        my += ly[k];
    }
    mx /= static_cast<double>(m);
    my /= static_cast<double>(m);
    double sxx = 0, sxy = 0;
    for (std::size_t k = 0; k < m; ++k) {
        sxx += (lx[k] - mx) * (lx[k] - mx);
        sxy += (lx[k] - mx) * (ly[k] - my);
    }
    if (!(sxx > 0)) return std::nullopt;
    loglog_fit f;
    f.points = m;
    f.slope = sxy / sxx;
    f.intercept = my - f.slope * mx;
    if (m > 2) {
        double rss = 0;
        for (std::size_t k = 0; k < m; ++k) {
            const double r = ly[k] - (f.intercept + f.slope * lx[k]);
            rss += r * r;
        }
        f.slope_stderr = std::sqrt(rss / static_cast<double>(m - 2) / sxx);
    }
    return f;
}

} // namespace attnprop::analysis
