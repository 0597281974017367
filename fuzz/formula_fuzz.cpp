// libFuzzer target: the formula parser and evaluator (model/expr.hpp). Any text either parses
// or throws expr_error. A parsed formula is evaluated at a few points exactly (when rational),
// in doubles and in Arb balls; values that do not exist are numeric errors, never crashes. The
// static analysis must be sound on those points: a formula proven defined everywhere has a
// value at each of them (exactly, when it is rational).
#include "model/expr.hpp"
#include "numeric/allocation.hpp"
#include "numeric/limits.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    attnprop::numeric::install_allocation_guard();
    // Formulas such as 9^9^9 stop at the exact-size limit; keep it small so each input is
    // fast (the limit is what is being exercised, not GMP).
    attnprop::numeric::set_limit(attnprop::numeric::limit::exact_bits, 1 << 14);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnprop;
    if (size > 4096) return 0; // formulas are short; long ones only slow the search down
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::optional<model::expr> parsed;
    try {
        parsed = model::expr::parse(text);
    } catch (const model::expr_error&) {
        return 0;
    }
    const model::expr& f = *parsed;
    (void)f.bounded();
    const numeric::context ctx{64};
    const long points[][2] = {{1, 1}, {1, 2}, {2, 2}, {3, 7}, {7, 7}, {1, 1000}};
    for (const auto& p : points) {
        const long i = p[0], n = p[1];
        if (f.is_rational()) {
            try {
                (void)f.eval_rational(i, n);
            } catch (const numeric::undefined_error&) {
                if (f.defined_everywhere()) std::abort(); // the analysis claimed a value here
            } catch (const numeric::numeric_error&) {
            } catch (const numeric::limit_error&) {
            }
        }
        try {
            (void)f.eval<double>(i, n, ctx);
        } catch (const numeric::numeric_error&) {
        } catch (const numeric::limit_error&) {
        }
        try {
            (void)f.eval<numeric::arb_ball>(i, n, ctx);
        } catch (const numeric::numeric_error&) {
        } catch (const numeric::limit_error&) {
        }
    }
    return 0;
}
