#include "report/influence_report.hpp"

#include "model/model_file.hpp"
#include "numeric/ball_bounds.hpp"
#include "report/case_record.hpp"
#include "report/files.hpp"
#include "report/text_table.hpp"
#include "report/plot.hpp"
#include "report/sha256.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace attnprop::report {

namespace fs = std::filesystem;
using analysis::cross_entropy_row;
using analysis::sweep_row;
using json::value;

namespace {

using namespace json_out;

/// An approximate double of report.json: 6 significant digits (plots and the slopes only).
value dbl(double v) { return approx(v, report_approx_digits); }

const value& need(const value& o, const char* key) {
    const value* v = o.find(key);
    if (!v) throw std::runtime_error(std::string("rows.json: missing '") + key + "'");
    return *v;
}
std::string get_str(const value& o, const char* key) { return need(o, key).as_string(); }
std::optional<std::string> get_opt(const value& o, const char* key) {
    const value& v = need(o, key);
    if (v.is_null()) return std::nullopt;
    return v.as_string();
}
long get_long(const value& o, const char* key) { return std::stol(need(o, key).raw_number()); }
double get_double(const value& o, const char* key) {
    const value& v = need(o, key);
    if (v.is_null()) return 0.0;
    // strtod, not stod: a subnormal value reads back as itself (stod throws on underflow).
    const std::string& text = v.raw_number();
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(d))
        throw std::runtime_error(std::string("rows.json: '") + key + "' is not a finite number");
    return d;
}
/// A row's verdict against its bound; rows written before the verdict words were one say
/// below, above, n/a (verdict_of_any_word).
verdict get_cmp(const value& o, const char* key) {
    const std::string s = get_str(o, key);
    const auto v = verdict_of_any_word(s);
    if (!v || *v == verdict::undefined || *v == verdict::gave_up)
        throw std::runtime_error("rows.json: bad comparison '" + s + "'");
    return *v;
}

/// How a cross-entropy row's inputs were chosen.
const char* ce_kind(const cross_entropy_row& c) {
    if (c.exhaustive) return "whole cube";
    return c.language == lang::language::dyck2 ? "forced-bracket pairs" : "sampled";
}

value ce_to_json(const cross_entropy_row& c, int approx_digits = report_approx_digits) {
    value o = value::object();
    o.set("n", num(c.n));
    o.set("language", str(lang::to_string(c.language)));
    o.set("exhaustive", value::boolean(c.exhaustive));
    o.set("inputs", num(static_cast<long long>(c.inputs)));
    o.set("correct", num(static_cast<long long>(c.correct)));
    o.set("mean_ce_bits", str(c.mean_ce_bits));
    o.set("accuracy", str(c.accuracy));
    o.set("eta", str(c.eta));
    o.set("floor_bits", str(c.floor_bits));
    o.set("check", str(attnprop::to_string(c.check)));
    o.set("mean_ce_approx", approx(c.mean_ce_approx, approx_digits));
    o.set("certified", value::boolean(c.certified));
    o.set("certified_eta", opt_str(c.certified_eta));
    o.set("certified_floor_bits", opt_str(c.certified_floor_bits));
    return o;
}

cross_entropy_row ce_from_json(const value& o) {
    cross_entropy_row c;
    c.n = get_long(o, "n");
    auto l = lang::parse_language(get_str(o, "language"));
    if (!l) throw std::runtime_error("rows.json: bad language");
    c.language = *l;
    c.exhaustive = need(o, "exhaustive").as_bool();
    c.inputs = static_cast<std::size_t>(get_long(o, "inputs"));
    c.correct = static_cast<std::size_t>(get_long(o, "correct"));
    c.mean_ce_bits = get_str(o, "mean_ce_bits");
    c.accuracy = get_str(o, "accuracy");
    c.eta = get_str(o, "eta");
    c.floor_bits = get_str(o, "floor_bits");
    c.check = get_cmp(o, "check");
    c.mean_ce_approx = get_double(o, "mean_ce_approx");
    // Absent in rows written before the bounds over every input.
    if (const value* v = o.find("certified"); v && !v->is_null()) c.certified = v->as_bool();
    if (const value* v = o.find("certified_eta"); v && !v->is_null()) c.certified_eta = v->as_string();
    if (const value* v = o.find("certified_floor_bits"); v && !v->is_null()) c.certified_floor_bits = v->as_string();
    return c;
}

std::uint64_t fnv(std::uint64_t h, const std::string& s) {
    for (unsigned char ch : s) {
        h ^= ch;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/// "2 undefined rows left out of the slope fit (n = 3, 5)".
std::string left_out_note(const analysis::sweep_result& r) {
    std::string ns;
    for (long n : r.fit_left_out) ns += (ns.empty() ? "" : ", ") + std::to_string(n);
    const std::size_t k = r.fit_left_out.size();
    return std::to_string(k) + " undefined row" + (k == 1 ? "" : "s") +
           " left out of the slope fit (n = " + ns + ")";
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

/// max influence and n·max influence of a row for people: with the certified bounds of n·max
/// (balls), the digits those bounds pin down and the radius (numeric::certified_string);
/// otherwise the row's decimal string. "undefined" for an undefined row.
std::pair<std::string, std::string> certified_influence(const sweep_row& row) {
    if (row.undefined) return {"undefined", "-"};
    if (!row.n_max_lower || !row.n_max_upper) return {row.max_influence, row.n_max_influence};
    try {
        const auto lo = numeric::parse_rational(*row.n_max_lower);
        const auto hi = numeric::parse_rational(*row.n_max_upper);
        if (!lo || !hi || *hi < *lo) return {row.max_influence, row.n_max_influence};
        const numeric::rational n(row.n);
        return {numeric::certified_string(*lo / n, *hi / n, 12), numeric::certified_string(*lo, *hi, 12)};
    } catch (const std::exception&) {
        return {row.max_influence, row.n_max_influence};
    }
}

/// What measured a row, for the tables: with --scalar auto the kind (" (interval)" or " (ball,
/// 256 bits)"); otherwise the precision when it was raised (" (512 bits)"); else nothing.
/// An upper bound already rounded up, labelled for people ("≤ 0.0194"; "<= " in text tables,
/// which align by bytes); "-" when absent.
std::string upper_text(const std::optional<std::string>& b, bool unicode = true) {
    return numeric::bound_label(b.value_or("-"), numeric::bound_side::upper, unicode);
}

std::string measured_note(const sweep_row& row, const analysis::sweep_options& op) {
    if (op.scalar.is_automatic() && !row.measured_in.empty()) {
        const auto kind = numeric::kind_choice::parse(row.measured_in, false);
        return kind && kind->info().variable_precision
                   ? " (" + row.measured_in + ", " + std::to_string(row.precision) + " bits)"
                   : " (" + row.measured_in + ")";
    }
    if (row.precision > op.precision) return " (" + std::to_string(row.precision) + " bits)";
    return "";
}

std::string verdict_line(const analysis::sweep_result& r) {
    return std::string(attnprop::to_string(r.verdict)) + " (" + r.explanation + ")";
}

} // namespace

std::string influence_fingerprint(const std::string& model_bytes, const analysis::sweep_options& o) {
    std::uint64_t h = fnv(0xcbf29ce484222325ULL, model_bytes);
    std::ostringstream s;
    s << "inputs=" << o.inputs << ";positions=" << o.positions << ";language="
      << (o.language ? lang::to_string(*o.language) : "") << ";precision=" << o.precision
      << ";scalar=" << analysis::to_string(o.scalar) << ";seed=" << o.seed
      << ";divisor=" << o.bound_divisor << ";cap=" << o.exhaustive_cap << ";postmax=" << o.posterior_max_n << ";pcap=" << o.precision_cap << ";v1";
    // Rows since the printed digits are certified: the digits they were measured for.
    if (o.digits != 12) s << ";digits=" << o.digits;
    // 2DYCK sweeps gained the forced-bracket cross-entropy rows: older checkpoints lack them.
    if (o.language == lang::language::dyck2) s << ";forced";
    h = fnv(h, s.str());
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

value row_to_json(const sweep_row& r, int approx_digits) {
    value o = value::object();
    o.set("n", num(r.n));
    o.set("inputs", num(static_cast<long long>(r.inputs)));
    o.set("positions", num(static_cast<long long>(r.positions)));
    o.set("pairs", num(static_cast<long long>(r.pairs)));
    // An undefined row has no measured numbers: null.
    auto measured = [&r](const std::string& v) { return r.undefined ? value::null_value() : str(v); };
    o.set("max_influence", measured(r.max_influence));
    o.set("mean_influence", measured(r.mean_influence));
    o.set("n_max_influence", measured(r.n_max_influence));
    o.set("bound", opt_str(r.bound));
    o.set("posterior_bound", opt_str(r.posterior_bound));
    o.set("max_prob_change", opt_str(r.max_prob_change));
    o.set("prob_bound", opt_str(r.prob_bound));
    o.set("below_bound", str(attnprop::to_string(r.below_bound)));
    o.set("below_posterior", str(attnprop::to_string(r.below_posterior)));
    o.set("prob_below_bound", str(attnprop::to_string(r.prob_below_bound)));
    o.set("every_input_bound", opt_str(r.certified_bound));
    o.set("every_input_prob_bound", opt_str(r.certified_prob_bound));
    o.set("below_every_input_bound", str(attnprop::to_string(r.below_certified)));
    o.set("prob_below_every_input_bound", str(attnprop::to_string(r.prob_below_certified)));
    o.set("max_influence_approx", approx(r.max_influence_approx, approx_digits));
    o.set("n_max_influence_approx", approx(r.n_max_influence_approx, approx_digits));
    o.set("n_max_influence_lower", r.undefined ? value::null_value() : opt_str(r.n_max_lower));
    o.set("n_max_influence_upper", r.undefined ? value::null_value() : opt_str(r.n_max_upper));
    o.set("cross_entropy",
          r.cross_entropy ? ce_to_json(*r.cross_entropy, approx_digits) : value::null_value());
    o.set("witness_input", str(r.witness_input));
    o.set("witness_position", num(static_cast<long long>(r.witness_position)));
    o.set("witness_bound", str(r.witness_bound));
    o.set("reused", value::boolean(r.reused));
    o.set("precision", num(r.precision));
    o.set("measured_in", str(r.measured_in));
    o.set("undefined", opt_str(r.undefined));
    return o;
}

sweep_row row_from_json(const value& o) {
    sweep_row r;
    r.n = get_long(o, "n");
    r.inputs = static_cast<std::size_t>(get_long(o, "inputs"));
    r.positions = static_cast<std::size_t>(get_long(o, "positions"));
    r.pairs = static_cast<std::size_t>(get_long(o, "pairs"));
    r.max_influence = get_opt(o, "max_influence").value_or("");
    r.mean_influence = get_opt(o, "mean_influence").value_or("");
    r.n_max_influence = get_opt(o, "n_max_influence").value_or("");
    r.bound = get_opt(o, "bound");
    r.posterior_bound = get_opt(o, "posterior_bound");
    r.max_prob_change = get_opt(o, "max_prob_change");
    r.prob_bound = get_opt(o, "prob_bound");
    r.below_bound = get_cmp(o, "below_bound");
    r.below_posterior = get_cmp(o, "below_posterior");
    r.prob_below_bound = get_cmp(o, "prob_below_bound");
    // Absent in rows written before the bounds over every input.
    if (const value* v = o.find("every_input_bound"); v && !v->is_null()) r.certified_bound = v->as_string();
    if (const value* v = o.find("every_input_prob_bound"); v && !v->is_null()) r.certified_prob_bound = v->as_string();
    if (o.find("below_every_input_bound")) r.below_certified = get_cmp(o, "below_every_input_bound");
    if (o.find("prob_below_every_input_bound")) r.prob_below_certified = get_cmp(o, "prob_below_every_input_bound");
    r.max_influence_approx = get_double(o, "max_influence_approx");
    r.n_max_influence_approx = get_double(o, "n_max_influence_approx");
    // Absent in rows written before the certified bounds were kept.
    if (const value* v = o.find("n_max_influence_lower"); v && !v->is_null()) r.n_max_lower = v->as_string();
    if (const value* v = o.find("n_max_influence_upper"); v && !v->is_null()) r.n_max_upper = v->as_string();
    if (const value& c = need(o, "cross_entropy"); !c.is_null()) r.cross_entropy = ce_from_json(c);
    r.witness_input = get_str(o, "witness_input");
    r.witness_position = static_cast<std::size_t>(get_long(o, "witness_position"));
    r.witness_bound = get_str(o, "witness_bound");
    r.precision = get_long(o, "precision");
    // Absent in rows written before the interval filter existed.
    if (const value* v = o.find("measured_in"); v && !v->is_null()) r.measured_in = v->as_string();
    // Absent in rows written before undefined rows existed: a defined row.
    if (const value* u = o.find("undefined"); u && !u->is_null()) {
        r.undefined = u->as_string();
        r.max_influence_approx = r.n_max_influence_approx = std::numeric_limits<double>::quiet_NaN();
    }
    return r;
}

value influence_to_json(const analysis::sweep_result& r, const influence_meta& meta) {
    value o = value::object();
    o.set("format", str("attnprop-influence-report"));
    o.set("version", num(1));
    if (!meta.made_by.empty()) o.set("provenance", provenance_to_json(meta.made_by));
    o.set("model", str(r.model_name));
    o.set("model_file", str(meta.model_file));
    o.set("fingerprint", str(meta.fingerprint));
    const auto& op = meta.options;
    value opts = value::object();
    opts.set("inputs", num(static_cast<long long>(op.inputs)));
    opts.set("positions", op.positions ? num(static_cast<long long>(op.positions)) : str("all"));
    opts.set("language", op.language ? str(lang::to_string(*op.language)) : value::null_value());
    opts.set("precision", num(op.precision));
    opts.set("scalar", str(analysis::to_string(op.scalar)));
    opts.set("seed", str(std::to_string(op.seed)));
    opts.set("bound_divisor", num(op.bound_divisor));
    opts.set("posterior_max_n", num(op.posterior_max_n));
    opts.set("precision_cap", num(op.precision_cap));
    o.set("options", std::move(opts));
    value hyp = value::object();
    for (const auto& h : r.hypotheses) {
        value e = value::object();
        e.set("holds", is_certain(h.holds) ? value::boolean(h.holds.make_certain()) : value::null_value());
        e.set("reason", str(h.reason));
        hyp.set(h.name, std::move(e));
    }
    o.set("hypotheses", std::move(hyp));
    value rows = value::array(), ce = value::array();
    for (const auto& row : r.rows) {
        rows.push_back(row_to_json(row));
        if (row.cross_entropy) ce.push_back(ce_to_json(*row.cross_entropy));
    }
    o.set("rows", std::move(rows));
    o.set("slope", r.fit ? dbl(r.fit->slope) : value::null_value());
    o.set("slope_stderr", r.fit ? dbl(r.fit->slope_stderr) : value::null_value());
    o.set("slope_upper_half", r.fit_upper ? dbl(r.fit_upper->slope) : value::null_value());
    o.set("slope_upper_half_stderr", r.fit_upper ? dbl(r.fit_upper->slope_stderr) : value::null_value());
    value left_out = value::array();
    for (long n : r.fit_left_out) left_out.push_back(num(n));
    o.set("slope_left_out", std::move(left_out));
    o.set("cross_entropy", ce.empty() ? value::null_value() : std::move(ce));
    o.set("verdict", str(attnprop::to_string(r.verdict)));
    o.set("explanation", str(r.explanation));
    o.set("growth", r.growth ? str(*r.growth) : value::null_value());
    o.set("influence_vanished",
          is_certain(r.influence_vanished) ? value::boolean(r.influence_vanished.make_certain())
                                          : value::null_value());
    std::size_t reused = 0;
    for (const auto& row : r.rows) reused += row.reused ? 1 : 0;
    o.set("reused_rows", num(static_cast<long long>(reused)));
    return o;
}

std::string influence_to_text(const analysis::sweep_result& r, const influence_meta& meta) {
    std::ostringstream os;
    const auto& op = meta.options;
    os << "model        " << r.model_name << "\n";
    os << "measured in  " << analysis::to_string(op.scalar);
    if (op.scalar.is_automatic())
        os << " (certified double intervals; Arb balls from " << op.precision
           << " bits where undecided or where the a-posteriori bound is computed)";
    else if (!op.scalar.info().description.empty())
        os << " (" << op.scalar.info().description << ")";
    else if (op.scalar.info().variable_precision)
        os << " at " << op.precision << " bits";
    os << "; " << op.inputs << " inputs per n ("
       << (op.language ? std::string(lang::to_string(*op.language)) + " sampler" : std::string("uniform"))
       << "), positions " << (op.positions ? std::to_string(op.positions) + " evenly spread" : std::string("all"))
       << ", seed " << op.seed << "\n\n";
    const std::vector<std::string> head = {"n",         "pairs",  "max influence", "n*max",
                                           "bound",     "posterior", "every input", "max dp",
                                           "vs bounds"};
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : r.rows) {
        std::string vs = row.undefined ? std::string("undefined")
                                       : std::string(attnprop::to_string(row.below_bound)) + "/" +
                                             attnprop::to_string(row.below_posterior) + "/" +
                                             attnprop::to_string(row.prob_below_bound);
        if (!row.undefined && row.certified_bound) vs += "/" + std::string(attnprop::to_string(row.below_certified));
        if (row.reused) vs += " (reused)";
        vs += measured_note(row, op);
        const auto [mx, nmx] = certified_influence(row);
        rows.push_back({std::to_string(row.n), std::to_string(row.pairs), mx, nmx, row.bound.value_or("-"),
                        upper_text(row.posterior_bound, false), upper_text(row.certified_bound, false),
                        row.max_prob_change.value_or("-"), vs});
    }
    write_text_table(os, head, rows);
    os << "  (max influence, n*max, max dp: the largest over the sampled changes, certified; a lower "
          "bound on the worst case over every input)\n";
    os << "  (vs bounds: a-priori K(n)/n / a-posteriori pair bound / probability bound / the bound over "
          "every input of length n)\n";
    for (const auto& row : r.rows)
        if (row.undefined) os << "  n = " << row.n << ": " << *row.undefined << "\n";
    bool any_ce = false;
    for (const auto& row : r.rows)
        if (row.cross_entropy) {
            if (!any_ce) os << "\ncross-entropy (bits) against the language label, >= 1 - log2(1 + eta):\n";
            any_ce = true;
            const auto& c = *row.cross_entropy;
            os << "  n = " << c.n << ": CE " << c.mean_ce_bits << ", accuracy " << c.accuracy
               << ", eta " << c.eta << ", floor " << c.floor_bits;
            if (c.certified)
                os << "; over every input eta <= " << *c.certified_eta << ", so CE >= "
                   << *c.certified_floor_bits << " ("
                   << (c.check == verdict::passed ? "passed: certified floor"
                       : c.check == verdict::failed ? "failed: below the certified floor"
                                                    : "undecided")
                   << ")\n";
            else
                os << " (" << ce_kind(c) << ": " << attnprop::to_string(c.check) << ")\n";
        }
    os << "\n";
    if (r.fit) {
        os << "slope of log max influence against log n: " << std::setprecision(4) << r.fit->slope
           << " +/- " << r.fit->slope_stderr << " (" << r.fit->points << " points)";
        if (r.fit_upper) os << "; upper half " << r.fit_upper->slope << " +/- " << r.fit_upper->slope_stderr;
        os << "  (Lemma 5: <= -1)\n";
    } else {
        os << "slope: none (fewer than two positive measurements)\n";
    }
    if (!r.fit_left_out.empty()) os << "  " << left_out_note(r) << "\n";
    // For a kind Lemma 5 says nothing of, the hypotheses are those of its softmax reading.
    os << "hypotheses of Lemma 5" << (r.no_claim.empty() ? "" : " (of the model read with softmax attention)")
       << ":\n";
    for (const auto& h : r.hypotheses)
        os << "  " << std::left << std::setw(24) << h.name << std::setw(9)
           << (certainly(h.holds) ? "yes" : certainly(!h.holds) ? "no" : "unknown") << h.reason << "\n";
    os << "verdict: " << verdict_line(r) << "\n";
    return os.str();
}

namespace {

/// The integrity hash of a checkpoint: SHA-256 of its fingerprint, a line break and the compact
/// serialisation of its rows array.
std::string rows_hash(const std::string& fingerprint, const value& rows) {
    return sha256_hex(fingerprint + "\n" + json::dump(rows, -1));
}

} // namespace

void write_resume_rows(const fs::path& dir, const std::string& fingerprint,
                       const std::vector<sweep_row>& rows, const provenance& made_by) {
    fs::create_directories(dir);
    value o = value::object();
    o.set("format", str("attnprop-influence-rows"));
    o.set("version", num(1));
    if (!made_by.empty()) o.set("provenance", provenance_to_json(made_by));
    o.set("fingerprint", str(fingerprint));
    value arr = value::array();
    // Full precision: a resumed run computes its slopes and figures from these doubles, which
    // must be those of the run that measured them.
    for (const auto& r : rows) arr.push_back(row_to_json(r, exact_approx_digits));
    o.set("rows_sha256", str(rows_hash(fingerprint, arr)));
    o.set("rows", std::move(arr));
    write_file_atomic(dir / "rows.json", json::dump(o, 2) + "\n");
}

std::vector<sweep_row> read_resume_rows(const fs::path& dir, const std::string& fingerprint,
                                        std::string* note) {
    std::vector<sweep_row> out;
    const fs::path p = dir / "rows.json";
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
        if (note) *note = "";
        return out;
    }
    try {
        std::ifstream f(p, std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        const value doc = json::parse(ss.str());
        if (get_str(doc, "fingerprint") != fingerprint) {
            if (note)
                *note = "the rows in " + p.string() +
                        " were made with a different model or options (fingerprint " +
                        get_str(doc, "fingerprint") + ", now " + fingerprint + "): starting fresh";
            return out;
        }
        const value& rows = need(doc, "rows");
        const value* hash = doc.find("rows_sha256");
        if (!hash || !hash->is_string()) {
            if (note)
                *note = p.string() + " records no rows_sha256 (written by an earlier attnprop, or "
                        "edited): recomputing every row";
            return out;
        }
        if (hash->as_string() != rows_hash(fingerprint, rows)) {
            if (note)
                *note = "the rows in " + p.string() + " were edited since attnprop wrote them (their "
                        "SHA-256 is not the recorded rows_sha256): recomputing every row";
            return out;
        }
        for (const auto& e : rows.elements()) out.push_back(row_from_json(e));
        if (note) *note = "resuming: " + std::to_string(out.size()) + " rows found in " + p.string();
    } catch (const std::exception& e) {
        out.clear();
        if (note) *note = "cannot read " + p.string() + " (" + e.what() + "): starting fresh";
    }
    return out;
}

namespace {

/// A decimal string of a report as a double, for plotting only (NaN when absent or not a number).
double plot_value(const std::optional<std::string>& s) {
    if (!s || s->empty()) return std::numeric_limits<double>::quiet_NaN();
    const std::string t = s->substr(0, s->find(' ')); // "mid +/- rad" -> mid
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    return end && *end == '\0' ? v : std::numeric_limits<double>::quiet_NaN();
}

std::string short_number(double v, int digits = 3) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

std::string n_list(const std::vector<double>& ns) {
    std::string s;
    for (double n : ns) s += (s.empty() ? "" : ", ") + std::to_string(static_cast<long>(n));
    return s;
}

/// The cross-entropy panel: 1 - CE and 1 - floor (bits below chance) on a log axis, with the
/// captions it needs (constant CE, rows where 1 - CE <= 0). `missing` gets the defined rows
/// without a cross-entropy.
struct ce_panel {
    plot_panel_spec panel;
    std::vector<std::string> caption;
    std::vector<double> missing;
    bool any = false;
    std::string statement; ///< the corollary, as the panel shows it
    bool constant = false; ///< CE is the same at every n (the caption says so)
};

ce_panel make_ce_panel(const analysis::sweep_result& r) {
    ce_panel out;
    plot_series floor_gap{"1 − floor = log2(1 + η)", {}, {}, palette[4], plot_style::band, false};
    plot_series gap{"1 − CE", {}, {}, palette[3]};
    plot_series cert_gap{"1 − certified floor (η bounded over every input)", {}, {}, palette[5], plot_style::dashed};
    std::vector<double> ce_values, floor_ratio;
    std::vector<double> not_drawn;
    for (const auto& row : r.rows) {
        if (row.undefined) continue;
        const double n = static_cast<double>(row.n);
        if (!row.cross_entropy) {
            out.missing.push_back(n);
            continue;
        }
        const auto& c = *row.cross_entropy;
        const double ce = plot_value(c.mean_ce_bits);
        const double fl = plot_value(c.floor_bits);
        gap.x.push_back(n);
        gap.y.push_back(1 - ce);
        floor_gap.x.push_back(n);
        floor_gap.y.push_back(1 - fl);
        if (c.certified_floor_bits) {
            const double cf = plot_value(c.certified_floor_bits);
            cert_gap.x.push_back(n);
            cert_gap.y.push_back(1 - cf);
        }
        if (std::isfinite(ce)) ce_values.push_back(ce);
        if (1 - ce > 0 && 1 - fl > 0) floor_ratio.push_back((1 - ce) / (1 - fl));
        if (!(1 - ce > 0)) not_drawn.push_back(n);
    }
    out.any = !gap.x.empty();
    out.panel.y_label = "1 − mean cross-entropy CE: bits below chance";
    out.statement = "The corollary of Lemma 5: CE ≥ 1 − log2(1 + η) bits, η the largest change of the "
                    "output distribution; so 1 − CE stays at or below the band, and both fall "
                    "towards 0 (chance) as η shrinks like 1/n.";
    out.panel.log_y = true;
    out.panel.series = {floor_gap, gap};
    if (!cert_gap.x.empty()) {
        out.panel.series.push_back(cert_gap);
        out.statement += " The dashed line is the certified floor's gap, from η̄ bounded over every "
                         "input: 1 − CE(n) stays below it at every n, a theorem.";
    }
    if (ce_values.size() >= 2) {
        const auto [mn, mx] = std::minmax_element(ce_values.begin(), ce_values.end());
        if (*mx - *mn <= 1e-9 * std::max(1.0, std::fabs(*mx))) {
            // A constant CE (a layer norm with eps = 0 keeps its margin): the panel keeps its one
            // meaning, 1 - CE on a log axis, and the caption gives the value.
            out.constant = true;
            out.caption.push_back("The cross-entropy does not depend on n: CE = " + short_number(*mn, 9) +
                                  " bits at every n (to 9 digits): the model keeps its margin and "
                                  "never approaches chance.");
        }
    }
    if (!out.constant) {
        // How fast 1 - CE falls: the least-squares slope of log(1 - CE) against log n over the
        // drawn points (a measurement, like the influence's slope).
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        int k = 0;
        for (std::size_t t = 0; t < gap.x.size(); ++t)
            if (std::isfinite(gap.y[t]) && gap.y[t] > 0) {
                const double lx = std::log(gap.x[t]), ly = std::log(gap.y[t]);
                sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, ++k;
            }
        const double den = k * sxx - sx * sx;
        if (k >= 3 && den > 0) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.2f", (k * sxy - sx * sy) / den);
            std::string slope = buf;
            if (slope == "-0.00") slope = "0.00";
            if (!slope.empty() && slope[0] == '-') slope = "\xE2\x88\x92" + slope.substr(1);
            out.caption.push_back("1 − CE falls like n^" + slope + " (least-squares slope of log(1 − CE) "
                                  "against log n over the drawn points; a measurement).");
        }
    }
    if (!floor_ratio.empty()) {
        const auto [mn, mx] = std::minmax_element(floor_ratio.begin(), floor_ratio.end());
        if (*mn > 0.99 && *mx < 1.01)
            out.caption.push_back("CE equals its floor 1 − log2(1 + η) at every n (their distances to "
                                  "chance agree to within 1%): the model attains the floor.");
    }
    if (!not_drawn.empty())
        out.caption.push_back("CE ≥ 1 bit at n = " + n_list(not_drawn) + ": not drawn on the log axis.");
    if (!out.missing.empty())
        out.caption.push_back("No cross-entropy at n = " + n_list(out.missing) + " (marked on the axis).");
    return out;
}

std::string slope_text(const analysis::sweep_result& r) {
    if (!r.fit) return "";
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3f ± %.2g", r.fit->slope, r.fit->slope_stderr);
    std::string s = buf;
    if (s.rfind("-0.000 ", 0) == 0) s.erase(0, 1); // a slope that rounds to zero has no sign
    for (std::size_t at; (at = s.find('-')) != std::string::npos;) s.replace(at, 1, "\xE2\x88\x92");
    return s;
}

} // namespace

plot_figure influence_figure(const analysis::sweep_result& r) {
    plot_figure f;
    f.title = r.model_name + ": one-symbol influence against the input length n";
    f.x_label = "n (input length, eos included)";
    plot_series measured{"largest measured change Δ(n)", {}, {}, palette[0]};
    plot_series posterior{"largest a-posteriori pair bound", {}, {}, palette[1], plot_style::solid, false};
    plot_series apriori{r.masked ? "K (1 + ln n)^(L−1)/n (masked, theory.md §2.5)" : "K(n)/n (Lemma 5)",
                        {}, {}, palette[2], plot_style::solid, false};
    // Masked models: n times that bound beside n·Δ(n), where the log factor shows.
    plot_series n_apriori{"n · K (1 + ln n)^(L−1)/n", {}, {}, palette[2], plot_style::solid, false};
    plot_series nd{"n·Δ(n)", {}, {}, palette[0]};
    plot_series every{"bound over every input of length n", {}, {}, palette[5], plot_style::dashed};
    plot_series n_every{"n · the bound over every input", {}, {}, palette[5], plot_style::dashed};
    plot_series found{"largest change the search found", {}, {}, palette[6], plot_style::solid};
    plot_series n_found{"n · (the search's largest)", {}, {}, palette[6], plot_style::solid};
    for (const auto& [n, v] : r.searched) {
        if (!(std::isfinite(v) && v > 0)) continue;
        found.x.push_back(static_cast<double>(n));
        found.y.push_back(v / static_cast<double>(n));
        n_found.x.push_back(static_cast<double>(n));
        n_found.y.push_back(v);
    }
    double hi = 0;
    double k_lo = std::numeric_limits<double>::infinity(), k_hi = 0;
    double nd_lo = std::numeric_limits<double>::infinity(), nd_hi = 0;
    std::vector<double> zero_rows;
    for (const auto& row : r.rows) {
        const double n = static_cast<double>(row.n);
        if (row.undefined) {
            f.marked_x.push_back(n);
            continue;
        }
        const double d = row.max_influence_approx;
        if (std::isfinite(d) && d <= 0) zero_rows.push_back(n);
        measured.x.push_back(n);
        measured.y.push_back(d);
        nd.x.push_back(n);
        nd.y.push_back(row.n_max_influence_approx);
        if (std::isfinite(d) && d > 0) hi = std::max(hi, d);
        const double v = row.n_max_influence_approx;
        if (std::isfinite(v) && v > 0) {
            nd_lo = std::min(nd_lo, v);
            nd_hi = std::max(nd_hi, v);
        }
        posterior.x.push_back(n);
        posterior.y.push_back(plot_value(row.posterior_bound));
        if (row.certified_bound) {
            const double e = plot_value(row.certified_bound);
            if (std::isfinite(e) && e > 0) {
                every.x.push_back(n);
                every.y.push_back(e);
                n_every.x.push_back(n);
                n_every.y.push_back(e * n);
                nd_hi = std::max(nd_hi, e * n);
            }
        }
        const double k = plot_value(row.bound);
        apriori.x.push_back(n);
        apriori.y.push_back(k);
        if (r.masked && std::isfinite(k) && k > 0) {
            n_apriori.x.push_back(n);
            n_apriori.y.push_back(k * n);
        }
        if (std::isfinite(k) && k > 0) {
            k_lo = std::min(k_lo, k);
            k_hi = std::max(k_hi, k);
        }
    }
    f.missing_x = zero_rows;
    f.missing_label = "Δ = 0";
    plot_panel_spec p1;
    p1.y_label = "largest one-symbol change Δ(n) of y_n (output units)";
    p1.log_y = true;
    p1.series.push_back(measured);
    if (!every.x.empty()) p1.series.push_back(every);
    if (!found.x.empty()) p1.series.push_back(found);
    bool any_post = false;
    std::vector<double> no_post;
    for (std::size_t t = 0; t < posterior.y.size(); ++t) {
        if (std::isfinite(posterior.y[t]) && posterior.y[t] > 0) any_post = true;
        else no_post.push_back(posterior.x[t]);
    }
    if (any_post) {
        p1.series.push_back(posterior);
        if (!no_post.empty())
            p1.notes.push_back("No a-posteriori bound at n = " + n_list(no_post) +
                               " (it needs full traces, O(n²) per pair: computed up to --posterior-max-n).");
    }
    // K(n)/n is drawn when it is within six decades of the measurements (it is usually
    // astronomically larger: then a note says where it is).
    if (k_hi > 0 && hi > 0 && k_hi <= hi * 1e6) p1.series.push_back(apriori);
    else if (k_hi > 0)
        p1.notes.push_back(std::string(r.masked ? "The masked bound" : "K(n)/n (Lemma 5)") +
                           " lies between " + short_number(k_lo) + " and " + short_number(k_hi) +
                           ", above the panel.");
    // A dashed 1/n reference a factor 3 above the first measured point: beside the data, not
    // on it (through a point it would hide under a model whose influence falls exactly like 1/n).
    for (std::size_t t = 0; t < measured.x.size(); ++t)
        if (std::isfinite(measured.y[t]) && measured.y[t] > 0) {
            plot_series ref{"∝ 1/n (reference)", {}, {}, "#555555", plot_style::dashed, false};
            for (double n : measured.x) {
                ref.x.push_back(n);
                ref.y.push_back(3 * measured.y[t] * measured.x[t] / n);
            }
            p1.series.push_back(ref);
            break;
        }
    f.panels.push_back(p1);
    plot_panel_spec p2;
    p2.y_label = r.masked ? "n·Δ(n) (masked: at most K (1 + ln n)^(L−1))" : "n·Δ(n) (Lemma 5: at most K)";
    p2.series.push_back(nd);
    // The masked bound times n, when within six decades of n·Δ(n) (as K(n)/n in panel a).
    if (!n_apriori.x.empty() && nd_hi > 0 && n_apriori.y.back() <= nd_hi * 1e6) {
        p2.series.push_back(n_apriori);
        for (double v : n_apriori.y) nd_hi = std::max(nd_hi, v);
    }
    if (!n_every.x.empty()) p2.series.push_back(n_every);
    if (!n_found.x.empty()) p2.series.push_back(n_found);
    // A linear axis from 0 while n·Δ(n) stays within a factor 10; a log axis when it grows
    // (or shrinks) by more, where a linear one would show a power law as an exponential.
    if (nd_hi > 10 * nd_lo) p2.log_y = true;
    else p2.y_min = 0.0;
    f.panels.push_back(p2);
    const ce_panel ce = make_ce_panel(r);
    if (ce.any) {
        f.panels.push_back(ce.panel);
        for (auto& p : f.panels) p.height = 170;
    }
    std::string cap;
    if (r.fit)
        cap += "Slope of log Δ(n) against log n over the defined rows: " + slope_text(r) +
               " (a measurement; Lemma 5 gives −1). ";
    cap += "Verdict: " + std::string(attnprop::to_string(r.verdict)) + " — " + r.explanation + ".";
    f.caption.push_back(cap);
    if (!every.x.empty())
        f.caption.push_back("The dashed bound holds for every input of length n (docs/bounds.md); the "
                            "measured Δ(n)" + std::string(found.x.empty() ? "" : " and the search's largest change") +
                            " are attained, so the true worst case lies between.");
    if (!f.marked_x.empty())
        f.caption.push_back("Undefined at n = " + n_list(f.marked_x) + " (marked on the axis; no value is drawn).");
    if (!zero_rows.empty())
        f.caption.push_back("Δ(n) = 0 at n = " + n_list(zero_rows) + " (marked on the axis; not drawn on the log axis).");
    if (ce.any)
        for (const auto& c : ce.caption) f.caption.push_back("(c) " + c);
    return f;
}

std::optional<plot_figure> cross_entropy_figure(const analysis::sweep_result& r) {
    ce_panel ce = make_ce_panel(r);
    if (!ce.any) return std::nullopt;
    plot_figure f;
    f.title = r.model_name + ": mean cross-entropy against n, as its distance to chance (1 bit)";
    f.x_label = "n (input length, eos included)";
    for (const auto& row : r.rows)
        if (row.undefined) f.marked_x.push_back(static_cast<double>(row.n));
    f.missing_x = ce.missing;
    f.panels.push_back(ce.panel);
    f.caption.push_back(ce.statement);
    for (const auto& c : ce.caption) f.caption.push_back(c);
    if (!f.marked_x.empty())
        f.caption.push_back("Undefined at n = " + n_list(f.marked_x) + " (marked on the axis; no value is drawn).");
    return f;
}

void write_influence_report(const fs::path& dir, const analysis::sweep_result& r,
                            const influence_meta& meta) {
    fs::create_directories(dir);
    write_file_atomic(dir / "report.json", json::dump(influence_to_json(r, meta), 2) + "\n");
    std::ostringstream csv;
    csv << "n,inputs,positions,pairs,max_influence,mean_influence,n_max_influence,bound,"
           "posterior_bound,max_prob_change,prob_bound,below_bound,below_posterior,"
           "prob_below_bound,mean_ce_bits,accuracy,eta,ce_floor_bits,ce_check,every_input_bound,"
           "every_input_prob_bound,certified_ce_floor_bits,reused,precision,undefined\n";
    for (const auto& row : r.rows) {
        const auto* c = row.cross_entropy ? &*row.cross_entropy : nullptr;
        csv << row.n << "," << row.inputs << "," << row.positions << "," << row.pairs << ","
            << row.max_influence << "," << row.mean_influence << "," << row.n_max_influence << ","
            << row.bound.value_or("") << "," << row.posterior_bound.value_or("") << ","
            << row.max_prob_change.value_or("") << "," << row.prob_bound.value_or("") << ","
            << attnprop::to_string(row.below_bound) << "," << attnprop::to_string(row.below_posterior)
            << "," << attnprop::to_string(row.prob_below_bound) << "," << (c ? c->mean_ce_bits : "")
            << "," << (c ? c->accuracy : "") << "," << (c ? c->eta : "") << ","
            << (c ? c->floor_bits : "") << "," << (c ? attnprop::to_string(c->check) : "") << ","
            << row.certified_bound.value_or("") << "," << row.certified_prob_bound.value_or("") << ","
            << (c && c->certified_floor_bits ? *c->certified_floor_bits : "") << ","
            << (row.reused ? "yes" : "no") << "," << row.precision << ","
            << (row.undefined ? csv_field(*row.undefined) : "") << "\n";
    }
    write_file_atomic(dir / "influence.csv", csv.str());
    std::vector<std::string> figures, figure_notes;
    std::string figure_text;
    if (!r.rows.empty()) {
        plot_figure inf = influence_figure(r);
        inf.generator = figure_generator(meta.made_by);
        figure_text += take_figure_text(inf, "influence", meta.figure_text);
        for (auto& name : write_figure(dir, "influence", inf, figure_notes)) figures.push_back(name);
        if (auto ce = cross_entropy_figure(r)) {
            ce->generator = inf.generator;
            figure_text += take_figure_text(*ce, "cross_entropy", meta.figure_text);
            for (auto& name : write_figure(dir, "cross_entropy", *ce, figure_notes)) figures.push_back(name);
        }
    }
    write_resume_rows(dir, meta.fingerprint, r.rows, meta.made_by);
    std::ostringstream md;
    md << "# Influence sweep: " << r.model_name << "\n\n";
    md << "Hahn (2020), Lemma 5: one changed symbol moves y_n^(L) by at most K/n when the five "
          "hypotheses hold (theory.md §2, check S3). Fingerprint `" << meta.fingerprint << "`.\n\n";
    md << "Max influence, n·max and max Δp are the largest over the sampled changes (certified "
          "enclosures): lower bounds on the worst case over every input. A bound is printed rounded "
          "in its safe direction (≤, ≥).\n\n";
    md << "| n | pairs | max influence | n·max | bound K(n)/n | a-posteriori | every input | max Δp | "
          "η over every input | vs bounds |\n";
    md << "|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& row : r.rows) {
        const auto [mx, nmx] = certified_influence(row);
        md << "| " << row.n << " | " << row.pairs << " | " << mx << " | " << nmx << " | "
           << row.bound.value_or("-") << " | "
           << upper_text(row.posterior_bound) << " | " << upper_text(row.certified_bound) << " | "
           << row.max_prob_change.value_or("-") << " | " << upper_text(row.certified_prob_bound) << " | ";
        if (row.undefined)
            md << "undefined";
        else
            md << attnprop::to_string(row.below_bound) << " / " << attnprop::to_string(row.below_posterior)
               << " / " << attnprop::to_string(row.prob_below_bound)
               << (row.certified_bound ? " / " + std::string(attnprop::to_string(row.below_certified)) : "");
        md << (row.reused ? " (reused)" : "") << measured_note(row, meta.options) << " |\n";
    }
    if (std::any_of(r.rows.begin(), r.rows.end(), [](const sweep_row& row) { return row.undefined.has_value(); })) {
        md << "\nUndefined rows (a value of the model does not exist there):\n\n";
        for (const auto& row : r.rows)
            if (row.undefined) md << "- n = " << row.n << ": " << *row.undefined << "\n";
    }
    if (std::any_of(r.rows.begin(), r.rows.end(), [](const sweep_row& row) { return row.cross_entropy.has_value(); })) {
        md << "\nThe cross-entropy corollary (theory.md §2.2): the mean CE over every input is at least "
              "1 − log2(1 + η) bits, η the largest probability change of a label-swapping flip. η over "
              "every input (η̄, docs/bounds.md) makes the floor a theorem at n; the measured η only "
              "bounds the sampled inputs.\n\n";
        md << "| n | mean CE (bits) | accuracy | η | 1 − log2(1 + η) | η̄ (every input) | certified floor | check |\n"
              "|---|---|---|---|---|---|---|---|\n";
        for (const auto& row : r.rows)
            if (const auto& c = row.cross_entropy)
                md << "| " << c->n << " | " << c->mean_ce_bits << " | " << c->accuracy << " | " << c->eta
                   << " | " << c->floor_bits << " | " << upper_text(c->certified_eta) << " | "
                   << numeric::bound_label(c->certified_floor_bits.value_or("-"), numeric::bound_side::lower)
                   << " | " << attnprop::to_string(c->check)
                   << " (" << (c->certified ? "certified floor" : ce_kind(*c)) << ")" << " |\n";
    }
    md << "\nHypotheses" << (r.no_claim.empty() ? "" : " (of the model read with softmax attention)") << ":\n\n";
    for (const auto& h : r.hypotheses)
        md << "- " << h.name << ": " << (certainly(h.holds) ? "yes" : certainly(!h.holds) ? "no" : "unknown")
           << " — " << h.reason << "\n";
    if (r.fit) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "%.4f ± %.4f", r.fit->slope, r.fit->slope_stderr);
        md << "\nSlope of log max influence against log n: " << buf << " (Lemma 5: ≤ −1).\n";
    }
    if (!r.fit_left_out.empty()) md << "\n" << left_out_note(r) << ".\n";
    md << "\n**Verdict: " << verdict_line(r) << "**\n\n";
    md << "Files: `influence.csv`, `report.json`, `rows.json` (resume checkpoint)";
    for (const auto& name : figures) md << ", `" << name << "`";
    md << ".\n";
    if (!figures.empty())
        md << "\nFigures: `influence` draws the largest one-symbol change Δ(n) on log-log axes with "
              "the a-posteriori bound, K(n)/n (when within six decades of the data) and a dashed 1/n "
              "reference through the first point, then n·Δ(n)"
           << (std::find(figures.begin(), figures.end(), "cross_entropy.svg") != figures.end()
                   ? ", then 1 − CE with the floor's gap log2(1 + η); `cross_entropy` draws the last "
                     "panel alone"
                   : "")
           << ".\n";
    if (!figure_text.empty()) md << "\n" << figure_text;
    for (const auto& note : figure_notes) md << "\nNo PNG: " << note << ".\n";
    if (!meta.made_by.empty()) md << "\n" << provenance_to_markdown(meta.made_by);
    write_file_atomic(dir / "report.md", md.str());
}

namespace {

/// The case of a sweep's counterexample folder: what every such folder shares.
case_record sweep_case(const influence_meta& meta) {
    case_record c;
    c.seed = c.base_seed = meta.options.seed;
    c.scalar_kinds = {"ball"};
    c.precision = c.precision_cap = meta.options.precision;
    c.verdict = verdict::failed;
    c.numbers_from = "influence";
    c.made_by = meta.made_by;
    return c;
}

} // namespace

fs::path write_influence_counterexample(const fs::path& dir, const model::model<numeric::rational>& m,
                                        const sweep_row& row, const influence_meta& meta) {
    case_record c = sweep_case(meta);
    const bool prob = row.witness_bound == "probability";
    c.property = prob ? prob_change_property : influence_property;
    c.statement = prob ? "every one-symbol change moves the output distribution by at most the "
                         "bounds of theory.md §2.2 (divided by bound_divisor)"
                       : "every one-symbol change moves y_n^(L) by at most the a-posteriori pair "
                         "bound and K(n)/n (divided by bound_divisor)";
    c.inputs = {row.witness_input};
    c.params = {{"n", row.n},
                {"position", static_cast<long>(row.witness_position)},
                {"bound_divisor", meta.options.bound_divisor}};
    c.message = "a one-symbol change at position " + std::to_string(row.witness_position) +
                " is above the " + row.witness_bound + " bound at n = " + std::to_string(row.n);
    c.numbers = {{"max_influence", row.max_influence},
                 {"bound", row.bound},
                 {"posterior_bound", row.posterior_bound},
                 {"max_prob_change", row.max_prob_change},
                 {"bound_divisor", std::to_string(meta.options.bound_divisor)}};
    return write_case_folder(dir, model::write_model(m), c);
}

fs::path write_cross_entropy_counterexample(const fs::path& dir, const model::model<numeric::rational>& m,
                                            const sweep_row& row, const influence_meta& meta) {
    const auto& ce = *row.cross_entropy;
    case_record c = sweep_case(meta);
    if (ce.language == lang::language::dyck2) {
        // The sweep's forced-bracket pairs: forced_pair(m, n, k, seed) for k < inputs.
        c.property = forced_bracket_property;
        c.statement = "the mean cross-entropy over the 2DYCK forced-bracket pairs is >= "
                      "1 - log2(1 + eta/D) bits (theory.md §2.2), D = eta_divisor";
        c.params = {{"n", row.n},
                    {"seed", static_cast<long>(meta.options.seed)},
                    {"pairs", static_cast<long>(row.inputs)},
                    {"eta_divisor", meta.options.bound_divisor}};
        c.message = "the mean cross-entropy over the forced-bracket pairs is below 1 - log2(1 + eta/" +
                    std::to_string(meta.options.bound_divisor) + ") at n = " + std::to_string(row.n);
    } else {
        c.property = cross_entropy_property;
        c.statement = "the mean cross-entropy over the whole cube {0,1}^(n-1) is >= "
                      "1 - log2(1 + eta/D) bits (theory.md §2.2), D = eta_divisor";
        c.params = {{"n", row.n},
                    {"language", ce.language == lang::language::first ? 1L : 0L},
                    {"eta_divisor", meta.options.bound_divisor}};
        c.message = "the mean " + std::string(lang::to_string(ce.language)) +
                    " cross-entropy over the cube is below 1 - log2(1 + eta/" +
                    std::to_string(meta.options.bound_divisor) + ") at n = " + std::to_string(row.n);
    }
    c.precision = c.precision_cap = std::max(meta.options.precision, row.precision);
    c.numbers = {{"mean_ce_bits", ce.mean_ce_bits},
                 {"floor_bits", ce.floor_bits},
                 {"eta", ce.eta},
                 {"accuracy", ce.accuracy},
                 {"eta_divisor", std::to_string(meta.options.bound_divisor)}};
    return write_case_folder(dir, model::write_model(m), c);
}

} // namespace attnprop::report
