#include "dist/units.hpp"

#include "dist/wire.hpp"
#include "model/model_file.hpp"
#include "numeric/context.hpp"
#include "numeric/limits.hpp"

#include <new>
#include <stdexcept>
#include <variant>

namespace attnprop::dist {

namespace {

using attnprop::verdict;

template <class E> void put_enum(writer& w, E e) { w.i64(static_cast<long long>(e)); }
template <class E> E get_enum(reader& r) { return static_cast<E>(r.i64()); }

/// A row's verdict against a bound (passed, failed, undecided or not-applicable) as the number
/// the row comparisons were written as before they were verdicts (below 0, above 1, undecided 2,
/// n/a 3), so units journaled before read back as they meant.
void put_row_verdict(writer& w, verdict v) {
    switch (v) {
    case verdict::passed: w.i64(0); return;
    case verdict::failed: w.i64(1); return;
    case verdict::undecided: w.i64(2); return;
    case verdict::not_applicable: w.i64(3); return;
    case verdict::undefined:
    case verdict::gave_up: break;
    }
    throw std::logic_error(std::string("a row's verdict against a bound cannot be ") + to_string(v));
}
verdict get_row_verdict(reader& r) {
    switch (r.i64()) {
    case 0: return verdict::passed;
    case 1: return verdict::failed;
    case 2: return verdict::undecided;
    case 3: return verdict::not_applicable;
    default: throw std::runtime_error("a row's verdict out of range");
    }
}

void put_size(writer& w, std::size_t v) { w.u64(v); }
std::size_t get_size(reader& r) { return static_cast<std::size_t>(r.u64()); }

void put_sizes(writer& w, const std::vector<std::size_t>& v) {
    w.u64(v.size());
    for (std::size_t x : v) w.u64(x);
}
std::vector<std::size_t> get_sizes(reader& r) {
    std::vector<std::size_t> v(r.count());
    for (auto& x : v) x = get_size(r);
    return v;
}

void put_ints(writer& w, const std::vector<int>& v) {
    w.u64(v.size());
    for (int x : v) w.i64(x);
}
std::vector<int> get_ints(reader& r) {
    std::vector<int> v(r.count());
    for (auto& x : v) x = static_cast<int>(r.i64());
    return v;
}

void put_rat_rows(writer& w, const std::vector<model::vec<numeric::rational>>& v) {
    w.u64(v.size());
    for (const auto& row : v) w.rats(row);
}
std::vector<model::vec<numeric::rational>> get_rat_rows(reader& r) {
    std::vector<model::vec<numeric::rational>> v(r.count());
    for (auto& row : v) row = r.rats();
    return v;
}

// --- influence ------------------------------------------------------------------------------

void put_ce(writer& w, const analysis::cross_entropy_row& c) {
    w.i64(c.n);
    put_enum(w, c.language);
    w.boolean(c.exhaustive);
    put_size(w, c.inputs);
    put_size(w, c.correct);
    w.str(c.mean_ce_bits);
    w.str(c.accuracy);
    w.str(c.eta);
    w.str(c.floor_bits);
    put_row_verdict(w, c.check);
    w.boolean(c.eta_zero_exactly);
    w.f64(c.mean_ce_approx);
}

analysis::cross_entropy_row get_ce(reader& r) {
    analysis::cross_entropy_row c;
    c.n = static_cast<long>(r.i64());
    c.language = get_enum<lang::language>(r);
    c.exhaustive = r.boolean();
    c.inputs = get_size(r);
    c.correct = get_size(r);
    c.mean_ce_bits = r.str();
    c.accuracy = r.str();
    c.eta = r.str();
    c.floor_bits = r.str();
    c.check = get_row_verdict(r);
    c.eta_zero_exactly = r.boolean();
    c.mean_ce_approx = r.f64();
    return c;
}

// --- check ----------------------------------------------------------------------------------

/// An outcome: its alternative's index, then what that alternative carries.
void put_outcome(writer& w, const runner::outcome& o) {
    w.u64(o.index());
    if (const auto* u = std::get_if<runner::outcomes::undecided>(&o)) {
        w.boolean(u->precision_helps);
        w.boolean(u->sides_agree);
    } else if (const auto* g = std::get_if<runner::outcomes::gave_up>(&o)) {
        w.str(g->description);
    } else if (const auto* e = std::get_if<runner::outcomes::error>(&o)) {
        w.str(e->description);
    }
}

runner::outcome get_outcome(reader& r) {
    namespace o = runner::outcomes;
    switch (r.u64()) {
    case 0: return o::passed{};
    case 1: return o::failed{};
    case 2: {
        o::undecided u;
        u.precision_helps = r.boolean();
        u.sides_agree = r.boolean();
        return u;
    }
    case 3: return o::undefined{};
    case 4: return o::gave_up{r.str()};
    case 5: return o::error{r.str()};
    case 6: return o::interrupted{};
    }
    throw std::runtime_error("an outcome of unknown kind from another rank");
}

void put_check_result(writer& w, const runner::check_result& c) {
    put_outcome(w, c.result);
    w.str(c.message);
    w.string_pairs(c.numbers);
    w.boolean(c.measured.has_value());
    if (c.measured) {
        w.str(c.measured->name);
        w.str(c.measured->label);
        w.str(c.measured->detail);
    }
}

runner::check_result get_check_result(reader& r) {
    runner::check_result c;
    c.result = get_outcome(r);
    c.message = r.str();
    c.numbers = r.string_pairs();
    if (r.boolean()) {
        runner::measurement m;
        m.name = r.str();
        m.label = r.str();
        m.detail = r.str();
        c.measured = std::move(m);
    }
    return c;
}

void put_recorded(writer& w, const runner::recorded_case& c) {
    w.str(model::write_model(c.value.model));
    w.strings(c.value.inputs);
    w.long_map(c.value.params);
    put_check_result(w, c.result);
    w.i64(c.precision);
}

/// A counterexample's model from its canonical file form. A case that ended without one (a
/// property stopped by a limit while it shrank) holds the empty model, which no model file can
/// be (the format refuses an empty alphabet): that is recognised by its text.
model::model<numeric::rational> get_model(reader& r) {
    const std::string text = r.str();
    static const std::string empty = model::write_model(model::model<numeric::rational>{});
    if (text == empty) return {};
    return model::parse_model(text, "a counterexample's model from another rank");
}

runner::recorded_case get_recorded(reader& r) {
    runner::recorded_case c;
    c.value.model = get_model(r);
    c.value.inputs = r.strings();
    c.value.params = r.long_map();
    c.result = get_check_result(r);
    c.precision = static_cast<long>(r.i64());
    return c;
}

void put_cx(writer& w, const std::optional<runner::counterexample>& cx) {
    w.boolean(cx.has_value());
    if (!cx) return;
    put_recorded(w, cx->original);
    put_recorded(w, cx->shrunk);
    w.str(cx->reproduce);
    w.i64(cx->shrink_steps);
    w.str(cx->description);
}

std::optional<runner::counterexample> get_cx(reader& r) {
    if (!r.boolean()) return std::nullopt;
    runner::counterexample cx;
    cx.original = get_recorded(r);
    cx.shrunk = get_recorded(r);
    cx.reproduce = r.str();
    cx.shrink_steps = static_cast<int>(r.i64());
    cx.description = r.str();
    return cx;
}

// --- restrict -------------------------------------------------------------------------------

void put_figures(writer& w, const analysis::layer_figures& f) {
    for (std::size_t v : {f.layer, f.rows, f.c_prev, f.max_dependency, f.k_obs, f.triples,
                          f.unsatisfied, f.pinned_greedy, f.pinned_fan_out, f.pinned_for_size,
                          f.rounds, f.high_fan_out})
        put_size(w, v);
    w.boolean(f.growth_holds);
    w.str(f.growth_detail);
    w.rat(f.fan_out_threshold);
    w.rat(f.fan_out_limit);
    w.boolean(f.counting_holds);
}

analysis::layer_figures get_figures(reader& r) {
    analysis::layer_figures f;
    for (std::size_t* v : {&f.layer, &f.rows, &f.c_prev, &f.max_dependency, &f.k_obs, &f.triples,
                           &f.unsatisfied, &f.pinned_greedy, &f.pinned_fan_out, &f.pinned_for_size,
                           &f.rounds, &f.high_fan_out})
        *v = get_size(r);
    f.growth_holds = r.boolean();
    f.growth_detail = r.str();
    f.fan_out_threshold = r.rat();
    f.fan_out_limit = r.rat();
    f.counting_holds = r.boolean();
    return f;
}

void put_restriction(writer& w, const analysis::restriction& x) {
    w.i64(x.n);
    put_size(w, x.sigma);
    put_size(w, x.layers);
    put_ints(w, x.rho);
    put_size(w, x.free_count);
    put_size(w, x.free_target);
    put_size(w, x.initially_free);
    w.rat(x.free_fraction);
    put_enum(w, x.status);
    w.str(x.stop_reason);
    w.strings(x.notes);
    w.u64(x.figures.size());
    for (const auto& f : x.figures) put_figures(w, f);
    put_sizes(w, x.dependency);
    put_rat_rows(w, x.table);
    w.i64(x.trial);
}

analysis::restriction get_restriction(reader& r) {
    analysis::restriction x;
    x.n = static_cast<long>(r.i64());
    x.sigma = get_size(r);
    x.layers = get_size(r);
    x.rho = get_ints(r);
    x.free_count = get_size(r);
    x.free_target = get_size(r);
    x.initially_free = get_size(r);
    x.free_fraction = r.rat();
    x.status = get_enum<analysis::restriction_status>(r);
    x.stop_reason = r.str();
    x.notes = r.strings();
    x.figures.resize(r.count());
    for (auto& f : x.figures) f = get_figures(r);
    x.dependency = get_sizes(r);
    x.table = get_rat_rows(r);
    x.trial = static_cast<int>(r.i64());
    return x;
}

void put_certificate(writer& w, const analysis::certificate& c) {
    w.boolean(c.complete);
    w.boolean(c.valid);
    w.u64(c.checks.size());
    for (const auto& k : c.checks) {
        w.str(k.name);
        w.boolean(k.passed);
        w.boolean(k.soundness);
        w.str(k.detail);
    }
    put_size(w, c.assignments);
    w.boolean(c.exhaustive);
    w.strings(c.failing_inputs);
    put_rat_rows(w, c.failing_outputs);
    w.rats(c.expected);
}

analysis::certificate get_certificate(reader& r) {
    analysis::certificate c;
    c.complete = r.boolean();
    c.valid = r.boolean();
    c.checks.resize(r.count());
    for (auto& k : c.checks) {
        k.name = r.str();
        k.passed = r.boolean();
        k.soundness = r.boolean();
        k.detail = r.str();
    }
    c.assignments = get_size(r);
    c.exhaustive = r.boolean();
    c.failing_inputs = r.strings();
    c.failing_outputs = get_rat_rows(r);
    c.expected = r.rats();
    return c;
}

void put_language(writer& w, const analysis::language_result& l) {
    put_enum(w, l.language);
    put_enum(w, l.verdict);
    w.str(l.explanation);
    for (int i = 0; i < 2; ++i) {
        w.str(l.inputs[i]);
        w.rats(l.outputs[i]);
        w.boolean(l.accepted[i]);
        w.boolean(l.member[i]);
    }
    w.i64(l.wrong);
    w.boolean(l.accuracy.has_value());
    if (l.accuracy) w.rat(*l.accuracy);
    w.boolean(l.accuracy_exhaustive);
    put_size(w, l.pairs_checked);
}

analysis::language_result get_language(reader& r) {
    analysis::language_result l;
    l.language = get_enum<lang::language>(r);
    l.verdict = get_enum<analysis::language_verdict>(r);
    l.explanation = r.str();
    for (int i = 0; i < 2; ++i) {
        l.inputs[i] = r.str();
        l.outputs[i] = r.rats();
        l.accepted[i] = r.boolean();
        l.member[i] = r.boolean();
    }
    l.wrong = static_cast<int>(r.i64());
    if (r.boolean()) l.accuracy = r.rat();
    l.accuracy_exhaustive = r.boolean();
    l.pairs_checked = get_size(r);
    return l;
}

} // namespace

std::string encode_sweep_row(const analysis::sweep_row& x) {
    writer w;
    w.i64(x.n);
    put_size(w, x.inputs);
    put_size(w, x.positions);
    put_size(w, x.pairs);
    w.str(x.max_influence);
    w.str(x.mean_influence);
    w.str(x.n_max_influence);
    w.opt_str(x.bound);
    w.opt_str(x.posterior_bound);
    w.opt_str(x.max_prob_change);
    w.opt_str(x.prob_bound);
    put_row_verdict(w, x.below_bound);
    put_row_verdict(w, x.below_posterior);
    put_row_verdict(w, x.prob_below_bound);
    w.opt_str(x.n_max_lower);
    w.opt_str(x.n_max_upper);
    w.f64(x.max_influence_approx);
    w.f64(x.n_max_influence_approx);
    w.boolean(x.cross_entropy.has_value());
    if (x.cross_entropy) put_ce(w, *x.cross_entropy);
    w.str(x.witness_input);
    put_size(w, x.witness_position);
    w.str(x.witness_bound);
    w.boolean(x.reused);
    w.i64(x.precision);
    w.str(x.measured_in);
    w.opt_str(x.undefined);
    return w.take();
}

analysis::sweep_row decode_sweep_row(std::string_view bytes) {
    reader r(bytes);
    analysis::sweep_row x;
    x.n = static_cast<long>(r.i64());
    x.inputs = get_size(r);
    x.positions = get_size(r);
    x.pairs = get_size(r);
    x.max_influence = r.str();
    x.mean_influence = r.str();
    x.n_max_influence = r.str();
    x.bound = r.opt_str();
    x.posterior_bound = r.opt_str();
    x.max_prob_change = r.opt_str();
    x.prob_bound = r.opt_str();
    x.below_bound = get_row_verdict(r);
    x.below_posterior = get_row_verdict(r);
    x.prob_below_bound = get_row_verdict(r);
    x.n_max_lower = r.opt_str();
    x.n_max_upper = r.opt_str();
    x.max_influence_approx = r.f64();
    x.n_max_influence_approx = r.f64();
    if (r.boolean()) x.cross_entropy = get_ce(r);
    x.witness_input = r.str();
    x.witness_position = get_size(r);
    x.witness_bound = r.str();
    x.reused = r.boolean();
    x.precision = static_cast<long>(r.i64());
    x.measured_in = r.str();
    x.undefined = r.opt_str();
    r.finish();
    return x;
}

std::string encode_unit_result(const analysis::unit_result& u) {
    writer w;
    w.u64(u.pairs.size());
    for (const auto& p : u.pairs) {
        put_size(w, p.position);
        w.str(p.dy);
        w.opt_str(p.dp_max);
        w.opt_str(p.posterior);
    }
    w.boolean(u.probabilities.has_value());
    if (u.probabilities) w.strings(*u.probabilities);
    w.boolean(u.cross_entropy.has_value());
    if (u.cross_entropy) put_ce(w, *u.cross_entropy);
    w.boolean(u.undefined.has_value());
    if (u.undefined) {
        w.str(u.undefined->message);
        w.boolean(u.undefined->may_resolve);
    }
    return w.take();
}

analysis::unit_result decode_unit_result(std::string_view bytes) {
    reader r(bytes);
    analysis::unit_result u;
    u.pairs.resize(r.count());
    for (auto& p : u.pairs) {
        p.position = get_size(r);
        p.dy = r.str();
        p.dp_max = r.opt_str();
        p.posterior = r.opt_str();
    }
    if (r.boolean()) u.probabilities = r.strings();
    if (r.boolean()) u.cross_entropy = get_ce(r);
    if (r.boolean()) {
        analysis::unit_undefined x;
        x.message = r.str();
        x.may_resolve = r.boolean();
        u.undefined = std::move(x);
    }
    r.finish();
    return u;
}

std::string encode_property_report(const runner::property_report& p) {
    writer w;
    w.str(p.suite);
    w.str(p.name);
    w.str(p.statement);
    w.strings(p.kinds);
    w.boolean(p.expected_to_fail);
    w.u64(p.seed);
    for (int v : {p.passed, p.undecided, p.undecided_equal, p.undefined}) w.i64(v);
    put_outcome(w, p.end);
    w.int_map(p.n_buckets);
    put_size(w, p.lengths.size());
    for (const auto& [n, cases] : p.lengths) {
        w.i64(n);
        w.i64(cases);
    }
    w.int_map(p.classes);
    w.strings(p.undecided_reasons);
    w.strings(p.undefined_reasons);
    w.int_map(p.measurements);
    put_cx(w, p.cx);
    w.f64(p.seconds);
    return w.take();
}

runner::property_report decode_property_report(std::string_view bytes) {
    reader r(bytes);
    runner::property_report p;
    p.suite = r.str();
    p.name = r.str();
    p.statement = r.str();
    p.kinds = r.strings();
    p.expected_to_fail = r.boolean();
    p.seed = r.u64();
    for (int* v : {&p.passed, &p.undecided, &p.undecided_equal, &p.undefined})
        *v = static_cast<int>(r.i64());
    p.end = get_outcome(r);
    p.n_buckets = r.int_map();
    const std::size_t lengths = get_size(r);
    if (lengths > bytes.size()) throw std::runtime_error("malformed result between ranks: lengths");
    for (std::size_t i = 0; i < lengths; ++i) {
        const long n = static_cast<long>(r.i64());
        p.lengths[n] = static_cast<int>(r.i64());
    }
    p.classes = r.int_map();
    p.undecided_reasons = r.strings();
    p.undefined_reasons = r.strings();
    p.measurements = r.int_map();
    p.cx = get_cx(r);
    p.seconds = r.f64();
    r.finish();
    return p;
}

namespace {

/// A refusal by its kind (0 a limit, 1 an unusable precision, 2 an allocation failure), so
/// that the receiving rank rethrows the same error, with the same message and exit code.
void put_refusal(writer& w, const std::exception_ptr& e) {
    try {
        if (e) std::rethrow_exception(e);
        throw std::runtime_error("a refused attempt without its error");
    } catch (const numeric::limit_error& x) {
        w.u64(0);
        w.i64(static_cast<long long>(x.which()));
        w.u64(x.value());
        w.str(x.quantity());
    } catch (const numeric::precision_error& x) {
        w.u64(1);
        w.str(x.what());
    } catch (const std::bad_alloc&) {
        w.u64(2);
    }
}

std::exception_ptr get_refusal(reader& r) {
    switch (r.u64()) {
    case 0: {
        const auto which = static_cast<numeric::limit>(r.i64());
        const std::uint64_t value = r.u64();
        return std::make_exception_ptr(numeric::limit_error(which, value, r.str()));
    }
    case 1: return std::make_exception_ptr(numeric::precision_error(r.str()));
    case 2: return std::make_exception_ptr(std::bad_alloc());
    }
    throw std::runtime_error("a refusal of unknown kind from another rank");
}

} // namespace

std::string encode_case_batch(const runner::case_batch& b) {
    writer w;
    w.u64(b.first);
    put_size(w, b.attempts.size());
    for (const auto& a : b.attempts) {
        put_enum(w, a.what);
        w.boolean(a.sides_agree);
        w.str(a.bucket);
        w.i64(a.n);
        w.str(a.tag);
        w.str(a.measurement);
        w.str(a.message);
        if (a.what == runner::attempt::kind::refused) put_refusal(w, a.refusal);
    }
    put_cx(w, b.cx);
    w.f64(b.seconds);
    return w.take();
}

runner::case_batch decode_case_batch(std::string_view bytes) {
    reader r(bytes);
    runner::case_batch b;
    b.first = r.u64();
    const std::size_t count = get_size(r);
    if (count > bytes.size()) throw std::runtime_error("malformed result between ranks: attempts");
    for (std::size_t i = 0; i < count; ++i) {
        runner::attempt a;
        a.what = get_enum<runner::attempt::kind>(r);
        if (a.what > runner::attempt::kind::stopped)
            throw std::runtime_error("an attempt of unknown kind from another rank");
        a.sides_agree = r.boolean();
        a.bucket = r.str();
        a.n = static_cast<long>(r.i64());
        a.tag = r.str();
        a.measurement = r.str();
        a.message = r.str();
        if (a.what == runner::attempt::kind::refused) a.refusal = get_refusal(r);
        b.attempts.push_back(std::move(a));
    }
    b.cx = get_cx(r);
    b.seconds = r.f64();
    r.finish();
    return b;
}

std::string encode_restrict_run(const report::restrict_run& x, double seconds) {
    writer w;
    w.str(x.model_name);
    w.i64(x.n);
    put_restriction(w, x.restr);
    put_certificate(w, x.cert);
    w.boolean(x.language.has_value());
    if (x.language) put_language(w, *x.language);
    w.long_map(x.params);
    w.f64(seconds);
    return w.take();
}

report::restrict_run decode_restrict_run(std::string_view bytes, double* seconds) {
    reader r(bytes);
    report::restrict_run x;
    x.model_name = r.str();
    x.n = static_cast<long>(r.i64());
    x.restr = get_restriction(r);
    x.cert = get_certificate(r);
    if (r.boolean()) x.language = get_language(r);
    x.params = r.long_map();
    const double s = r.f64();
    if (seconds) *seconds = s;
    r.finish();
    return x;
}

namespace {

/// A part's bytes: its value (put), then the seconds it took.
template <class Put> std::string with_seconds(Put put, double seconds) {
    writer w;
    put(w);
    w.f64(seconds);
    return w.take();
}

template <class Get> auto read_with_seconds(std::string_view bytes, double* seconds, Get get) {
    reader r(bytes);
    auto x = get(r);
    const double s = r.f64();
    if (seconds) *seconds = s;
    r.finish();
    return x;
}

} // namespace

std::string encode_restriction(const analysis::restriction& x, double seconds) {
    return with_seconds([&](writer& w) { put_restriction(w, x); }, seconds);
}

analysis::restriction decode_restriction(std::string_view bytes, double* seconds) {
    return read_with_seconds(bytes, seconds, [](reader& r) { return get_restriction(r); });
}

std::string encode_outputs(const std::vector<model::vec<numeric::rational>>& ys, double seconds) {
    return with_seconds([&](writer& w) { put_rat_rows(w, ys); }, seconds);
}

std::vector<model::vec<numeric::rational>> decode_outputs(std::string_view bytes, double* seconds) {
    return read_with_seconds(bytes, seconds, [](reader& r) { return get_rat_rows(r); });
}

std::string encode_language_result(const analysis::language_result& x, double seconds) {
    return with_seconds([&](writer& w) { put_language(w, x); }, seconds);
}

analysis::language_result decode_language_result(std::string_view bytes, double* seconds) {
    return read_with_seconds(bytes, seconds, [](reader& r) { return get_language(r); });
}

} // namespace attnprop::dist
