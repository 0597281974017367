// The request of `attnprop restrict` (report/restrict_report.hpp): its checks before any work,
// the options of a length and a length's run with the parameters case.json records. The
// command (which spreads lengths over processes and journals them) and the Python module both
// call it.
#include "report/restrict_report.hpp"

#include "attention/work.hpp"
#include "util/precondition.hpp"

namespace attnprop::report {

using numeric::rational;

void check_restrict(const model::model<rational>& m, const restrict_request& q) {
    if (!(q.free_fraction > 0 && q.free_fraction < 1))
        throw precondition_error("--free-fraction must lie strictly between 0 and 1, got " +
                                 numeric::to_exact_string(q.free_fraction));
    if (const model::attention_kind_info& a = model::info(m.attention); !a.hard_limit) {
        if (model::selects_maximum(a.kind))
            throw model::content_error(m.file, "/attention",
                                       "restrict needs a unique-hard model (Hahn's Theorem 1 "
                                       "is about the leftmost maximal score); " + m.name +
                                           " uses " + std::string(a.name) + " attention, which " +
                                           std::string(a.ties_in_words) + " and is not covered");
        throw model::content_error(m.file, "/attention",
                                   "restrict needs a hard-attention model; " + m.name + " is " +
                                       std::string(a.name));
    }
    if (!m.out.is_recognizer())
        throw model::content_error(m.file, "/readout/kind",
                                   "restrict needs a recognizer (threshold or map readout)");
    if (q.language) (void)analysis::language_symbols(m, *q.language);
    for (long n : q.ns) {
        model::check_length(m, n);
        attention::check_forward_work(m, static_cast<std::size_t>(n)); // all n, before any work
    }
}

analysis::language_options restrict_options(const restrict_request& q) {
    analysis::language_options lo;
    lo.restrict.free_fraction = q.free_fraction;
    lo.restrict.seed = q.seed;
    lo.restrict.trials = q.trials;
    lo.restrict.fan_out_pass = q.fan_out;
    lo.restrict.threads = q.threads;
    lo.certify.seed = q.seed;
    lo.certify.samples = q.samples;
    lo.certify.threads = q.threads;
    return lo;
}

restrict_run restrict_head(const model::model<rational>& m, const restrict_request& q, long n) {
    restrict_run r;
    r.model_name = m.name;
    r.n = n;
    r.params = {{"n", n},
                {"seed", static_cast<long>(q.seed)},
                {"c_num", numerator(q.free_fraction).convert_to<long>()},
                {"c_den", denominator(q.free_fraction).convert_to<long>()},
                {"trials", q.trials},
                {"samples", q.samples},
                {"fan_out", q.fan_out ? 1 : 0}};
    if (q.language) r.params["language"] = static_cast<long>(*q.language);
    return r;
}

restrict_run run_restrict_length(const model::model<rational>& m, const restrict_request& q, long n) {
    analysis::restrict_length_result x = analysis::restrict_length(m, n, q.language, restrict_options(q));
    restrict_run r = restrict_head(m, q, n);
    r.restr = std::move(x.restr);
    r.cert = std::move(x.cert);
    r.language = std::move(x.language);
    return r;
}

} // namespace attnprop::report
