// `attnprop plot`: influence report folders overlaid on shared axes, for papers.
#include "report/overlay.hpp"

#include "model/model.hpp"
#include "report/files.hpp"
#include "util/read_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

namespace attnprop::report {

namespace fs = std::filesystem;
using json::value;

namespace {

constexpr const char* plot_format = "attnprop-plot-report";

[[noreturn]] void bad(const fs::path& file, const std::string& pointer, const std::string& what) {
    throw model::content_error(file.string(), pointer, what);
}

/// The approximate double of a member: a JSON number, a decimal string, or null (NaN).
double number_of(const value* v, const fs::path& file, const std::string& pointer) {
    if (!v || v->is_null()) return std::numeric_limits<double>::quiet_NaN();
    const std::string& text = v->is_number() ? v->raw_number() : v->is_string() ? v->as_string() : std::string();
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) bad(file, pointer, "expected a number");
    return d;
}

std::string member_string(const value& o, const char* key) {
    const value* v = o.find(key);
    return v && v->is_string() ? v->as_string() : std::string();
}

std::string short_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

} // namespace

namespace {

/// DIR/report.json parsed (an object), or content_error naming it.
value read_report(const fs::path& dir) {
    const fs::path file = dir / "report.json";
    std::string text;
    if (std::string why = util::read_regular_file(file, text); !why.empty())
        bad(file, "", "a report folder holds report.json; " + file.string() + " " + why);
    value doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        bad(file, "", e.what());
    }
    if (!doc.is_object()) bad(file, "", "expected an attnprop report (a JSON object)");
    return doc;
}

} // namespace

std::string overlay_kind(const fs::path& dir) {
    const value doc = read_report(dir);
    const std::string format = member_string(doc, "format");
    for (const char* k : {"influence", "simulate", "restrict"})
        if (format == std::string("attnprop-") + k + "-report") return k;
    bad(dir / "report.json", "/format",
        "plot draws the reports of `attnprop influence`, `simulate` and `restrict`; this is " +
            (format.empty() ? std::string("no attnprop report") : "a report of format '" + format + "'"));
}

overlay_input read_overlay_input(const fs::path& dir) {
    const fs::path file = dir / "report.json";
    std::string text;
    if (std::string why = util::read_regular_file(file, text); !why.empty())
        bad(file, "", "an influence report folder holds report.json; " + file.string() + " " + why);
    value doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        bad(file, "", e.what());
    }
    if (!doc.is_object()) bad(file, "", "expected an influence report (a JSON object)");
    const std::string format = member_string(doc, "format");
    if (format != "attnprop-influence-report")
        bad(file, "/format",
            "plot draws the reports of `attnprop influence`; this is " +
                (format.empty() ? std::string("no attnprop report") : "a report of format '" + format + "'"));
    overlay_input in;
    in.dir = dir;
    in.model = member_string(doc, "model");
    in.verdict = member_string(doc, "verdict");
    in.explanation = member_string(doc, "explanation");
    if (const value* s = doc.find("slope"); s && s->is_number()) in.slope = number_of(s, file, "/slope");
    const value* rows = doc.find("rows");
    if (!rows || !rows->is_array()) bad(file, "/rows", "expected the array of rows");
    for (std::size_t i = 0; i < rows->size(); ++i) {
        const value& r = (*rows)[i];
        const std::string at = "/rows/" + std::to_string(i);
        if (!r.is_object()) bad(file, at, "expected a row (an object)");
        overlay_input::row row;
        const value* n = r.find("n");
        if (!n || !n->is_number()) bad(file, at + "/n", "expected the length n");
        const double nd = number_of(n, file, at + "/n");
        if (!(nd >= 2 && nd == std::floor(nd) && nd < 9.2e18)) bad(file, at + "/n", "expected a length n >= 2");
        row.n = static_cast<long>(nd);
        const value* u = r.find("undefined");
        row.undefined = u && !u->is_null();
        row.max_influence = number_of(r.find("max_influence_approx"), file, at + "/max_influence_approx");
        row.n_max_influence = number_of(r.find("n_max_influence_approx"), file, at + "/n_max_influence_approx");
        if (const value* ce = r.find("cross_entropy"); ce && ce->is_object()) {
            row.mean_ce_bits = number_of(ce->find("mean_ce_approx"), file, at + "/cross_entropy/mean_ce_approx");
            const value* cf = ce->find("certified_floor_bits");
            const value* f = cf && !cf->is_null() ? cf : ce->find("floor_bits");
            const double fl = number_of(f, file, at + "/cross_entropy/floor_bits");
            if (std::isfinite(fl)) row.floor_bits = fl;
        }
        in.rows.push_back(row);
    }
    return in;
}

plot_figure overlay_figure(const std::vector<overlay_input>& in, const overlay_options& o,
                           std::vector<std::string>& notes) {
    plot_figure f;
    f.title = o.title;
    f.width = o.width;
    f.x_label = "n (input length, eos included)";
    plot_panel_spec pa, pb, pc;
    pa.y_label = "Δ(n), largest one-symbol change of y_n";
    pa.log_y = true;
    pb.y_label = "n·Δ(n)";
    pc.y_label = "1 − CE (bits)";
    pc.log_y = true;
    double nd_lo = std::numeric_limits<double>::infinity(), nd_hi = 0;
    // The 1/n reference runs a factor 3 above the model whose fitted slope is closest to -1
    // (the first one without slopes), beside its data instead of on it: a reference through a
    // point of a model whose influence falls exactly like 1/n would hide under that model.
    std::size_t anchor = 0;
    for (std::size_t i = 0; i < in.size(); ++i)
        if (in[i].slope && (!in[anchor].slope || std::fabs(*in[i].slope + 1) < std::fabs(*in[anchor].slope + 1)))
            anchor = i;
    double ref_c = 0;
    long n_min = std::numeric_limits<long>::max(), n_max = 0;
    bool any_ce = false;
    std::set<double> undefined_n, ce_not_drawn;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const auto& s = in[i];
        const std::string colour = palette[i % 7];
        plot_series d{s.label, {}, {}, colour}, nd{s.label, {}, {}, colour};
        plot_series ce{s.label, {}, {}, colour};
        plot_series floor{s.label + ": certified bound", {}, {}, colour, plot_style::dashed, false};
        for (const auto& r : s.rows) {
            const double n = static_cast<double>(r.n);
            n_min = std::min(n_min, r.n);
            n_max = std::max(n_max, r.n);
            if (r.undefined) {
                undefined_n.insert(n);
                continue;
            }
            d.x.push_back(n);
            d.y.push_back(r.max_influence > 0 ? r.max_influence : std::numeric_limits<double>::quiet_NaN());
            nd.x.push_back(n);
            nd.y.push_back(r.n_max_influence);
            if (std::isfinite(r.n_max_influence) && r.n_max_influence > 0) {
                nd_lo = std::min(nd_lo, r.n_max_influence);
                nd_hi = std::max(nd_hi, r.n_max_influence);
            }
            if (r.mean_ce_bits) {
                any_ce = true;
                const double gap = 1 - *r.mean_ce_bits;
                ce.x.push_back(n);
                ce.y.push_back(gap > 0 ? gap : std::numeric_limits<double>::quiet_NaN());
                if (!(gap > 0)) ce_not_drawn.insert(n);
                if (r.floor_bits && 1 - *r.floor_bits > 0) {
                    floor.x.push_back(n);
                    floor.y.push_back(1 - *r.floor_bits);
                }
            }
        }
        // The anchor's first drawable point.
        for (std::size_t t = 0; i == anchor && ref_c == 0 && t < d.x.size(); ++t)
            if (std::isfinite(d.y[t])) ref_c = d.y[t] * d.x[t];
        pa.series.push_back(d);
        pb.series.push_back(nd);
        if (!ce.x.empty()) pc.series.push_back(ce);
        if (!floor.x.empty()) pc.series.push_back(floor);
    }
    if (ref_c > 0 && n_max > n_min) {
        plot_series ref{"∝ 1/n (reference)", {}, {}, "#555555", plot_style::dashed, false};
        for (double n : {static_cast<double>(n_min), static_cast<double>(n_max)}) {
            ref.x.push_back(n);
            ref.y.push_back(3 * ref_c / n);
        }
        pa.series.push_back(ref);
    }
    // n·Δ(n): a linear axis from 0 while it stays within a factor 10, else a log axis.
    if (nd_hi > 10 * nd_lo) pb.log_y = true;
    else pb.y_min = 0.0;
    f.panels.push_back(pa);
    f.panels.push_back(pb);
    if (any_ce) f.panels.push_back(pc);
    for (auto& p : f.panels) p.height = any_ce ? 170 : 220;
    f.marked_x.assign(undefined_n.begin(), undefined_n.end());

    notes.push_back("(a) The largest change of y_n caused by changing one symbol, against n; the dashed grey "
                    "line falls like 1/n (Lemma 5's rate), drawn a factor 3 above the first point of " +
                    in[anchor].label + " (the fitted slope closest to −1).");
    notes.push_back(std::string("(b) n·Δ(n): bounded when the influence falls like 1/n.") +
                    (any_ce ? " (c) The mean cross-entropy's distance to chance (1 bit), 1 − CE; dashed, in the "
                              "model's colour: the bound its certified floor gives (1 − floor)."
                            : ""));
    for (const auto& s : in) {
        std::string line = s.label + ": " + s.verdict;
        if (s.slope) line += ", fitted slope of log Δ(n) against log n " + short_number(*s.slope);
        if (!s.explanation.empty()) line += " (" + s.explanation + ")";
        notes.push_back(line + ".");
    }
    if (!undefined_n.empty()) {
        std::string ns;
        for (double n : undefined_n) ns += (ns.empty() ? "" : ", ") + short_number(n);
        notes.push_back("Undefined rows (marked on the axis, not drawn) at n = " + ns + ".");
    }
    if (!ce_not_drawn.empty()) {
        std::string ns;
        for (double n : ce_not_drawn) ns += (ns.empty() ? "" : ", ") + short_number(n);
        notes.push_back("CE ≥ 1 bit at n = " + ns + ": not drawn on the log axis.");
    }
    if (o.caption) f.caption = notes;
    return f;
}

namespace {

/// A simulate or restrict report as its overlay draws it: per n, two values (simulate: the
/// smallest β certified over every input and over the sampled inputs; restrict: |Free|/n and
/// c_obs; NaN where there is none) and the n marked on the axis (simulate: no β up to 2^40
/// certifies every input; restrict: the search stopped).
struct run_input {
    fs::path dir;
    std::string model, label;
    std::vector<double> n, a, b, marked;
};

/// The length n of a row (an integer >= 2).
double length_of(const value& r, const fs::path& file, const std::string& at) {
    const value* n = r.find("n");
    if (!n || !n->is_number()) bad(file, at + "/n", "expected the length n");
    const double nd = number_of(n, file, at + "/n");
    if (!(nd >= 2 && nd == std::floor(nd) && nd < 9.2e18)) bad(file, at + "/n", "expected a length n >= 2");
    return nd;
}

/// An exact fraction "p/q" (or a number) as a double.
double fraction_of(const value* v, const fs::path& file, const std::string& pointer) {
    if (!v || !v->is_string()) return number_of(v, file, pointer);
    const std::string& t = v->as_string();
    const auto slash = t.find('/');
    if (slash == std::string::npos) return number_of(v, file, pointer);
    const value p = value::string(t.substr(0, slash)), q = value::string(t.substr(slash + 1));
    const double den = number_of(&q, file, pointer);
    if (!(den > 0)) bad(file, pointer, "expected a fraction with a positive denominator");
    return number_of(&p, file, pointer) / den;
}

run_input read_run_input(const fs::path& dir, const std::string& kind) {
    const value doc = read_report(dir);
    const fs::path file = dir / "report.json";
    run_input in;
    in.dir = dir;
    in.model = member_string(doc, "model");
    const char* member = kind == "simulate" ? "rows" : "runs";
    const value* rows = doc.find(member);
    if (!rows || !rows->is_array()) bad(file, std::string("/") + member, std::string("expected the array of ") + member);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < rows->size(); ++i) {
        const value& r = (*rows)[i];
        const std::string at = std::string("/") + member + "/" + std::to_string(i);
        if (!r.is_object()) bad(file, at, "expected an object");
        const double n = length_of(r, file, at);
        double a = nan, b = nan;
        if (kind == "simulate") {
            b = number_of(r.find("smallest_certified_beta"), file, at + "/smallest_certified_beta");
            if (const value* ev = r.find("every_input"); ev && ev->is_object()) {
                a = number_of(ev->find("smallest_certified_beta"), file, at + "/every_input/smallest_certified_beta");
                if (!std::isfinite(a)) in.marked.push_back(n);
            }
        } else if (member_string(r, "status") != "complete") {
            in.marked.push_back(n);
        } else {
            a = fraction_of(r.find("free_ratio"), file, at + "/free_ratio");
            b = number_of(r.find("c_obs"), file, at + "/c_obs");
        }
        in.n.push_back(n);
        in.a.push_back(a);
        in.b.push_back(b);
    }
    return in;
}

std::string n_text(const std::vector<double>& ns) {
    std::string out;
    for (double n : ns) out += (out.empty() ? "" : ", ") + short_number(n);
    return out;
}

/// The overlay of simulate folders (the smallest certified β against n) or of restrict folders
/// (|Free|/n and c_obs against n); `notes` receives the caption's lines.
plot_figure runs_figure(const std::vector<run_input>& in, const std::string& kind,
                        const overlay_options& o, std::vector<std::string>& notes) {
    plot_figure f;
    f.title = o.title;
    f.width = o.width;
    f.x_label = "n (input length, eos included)";
    plot_panel_spec pa, pb;
    if (kind == "simulate") {
        pa.y_label = "smallest β certifying the readout";
        pa.log_y = true;
    } else {
        pa.y_label = "free inputs |Free| / n (fraction of n)";
        pa.y_min = 0.0;
        pa.y_max = 1.0;
        pb.y_label = "c_obs = |D_L(n)| (inputs)";
        pb.y_min = 0.0;
    }
    std::set<double> marked;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const auto& s = in[i];
        const std::string colour = palette[i % 7];
        plot_series a{s.label, {}, {}, colour};
        plot_series b{kind == "simulate" ? s.label + ": the sampled inputs" : s.label, {}, {}, colour,
                      kind == "simulate" ? plot_style::dashed : plot_style::solid, kind != "simulate"};
        for (std::size_t t = 0; t < s.n.size(); ++t) {
            if (std::isfinite(s.a[t])) {
                a.x.push_back(s.n[t]);
                a.y.push_back(s.a[t]);
            }
            if (std::isfinite(s.b[t])) {
                b.x.push_back(s.n[t]);
                b.y.push_back(s.b[t]);
            }
        }
        marked.insert(s.marked.begin(), s.marked.end());
        if (!a.x.empty()) pa.series.push_back(a);
        if (!b.x.empty()) (kind == "simulate" ? pa : pb).series.push_back(b);
        if (!s.marked.empty())
            notes.push_back(s.label + (kind == "simulate" ? ": no β up to 2^40 certifies every input at n = "
                                                          : ": the search stopped at n = ") +
                            n_text(s.marked) + " (marked on the axis).");
    }
    f.panels.push_back(pa);
    if (kind != "simulate") f.panels.push_back(pb);
    f.marked_x.assign(marked.begin(), marked.end());
    f.marked_label = kind == "simulate" ? "none" : "stopped";
    if (kind == "simulate")
        notes.insert(notes.begin(),
                     "Solid: the smallest β that certifies the soft counterpart's readout on every input of "
                     "length n (docs/theory.md §4.5); dashed, in the model's colour: on the sampled inputs "
                     "only, at or below it.");
    else
        notes.insert(notes.begin(),
                     "(a) The fraction of inputs the restriction leaves free (Hahn's Theorem 1: at least C·n "
                     "for every C < 1). (b) c_obs, the inputs the output still depends on (Theorem 1: at "
                     "most a constant c).");
    if (o.caption) f.caption = notes;
    return f;
}

/// Legend entries: the model's name, or with the folder's when two folders hold the same model.
template <class Input>
void set_labels(std::vector<Input>& in) {
    for (auto& s : in) {
        const auto same = std::count_if(in.begin(), in.end(), [&](const Input& t) { return t.model == s.model; });
        s.label = same > 1 ? s.model + " (" + s.dir.filename().string() + ")" : s.model;
    }
}

/// The output folder, created (refused when it is a file).
void make_out_folder(const fs::path& out) {
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec)) bad(out, "", "--out is not a folder");
    fs::create_directories(out, ec);
    if (ec) bad(out, "", "cannot create the folder: " + ec.message());
}

/// One input folder of an overlay as the record lists it: its third column (the verdict for
/// influence folders, the lengths for simulate and restrict folders).
struct record_row {
    std::string dir, model, label, column;
};

/// What report.md and report.json of an overlay say besides the figure.
struct record_text {
    std::string title, column_name;
    std::string kind;        ///< "" for influence overlays (their report.json has no "kind")
    bool column_in_json;     ///< the third column is the input's "verdict" in report.json
    std::vector<record_row> rows;
    std::vector<std::string> notes;
};

/// Writes the figure (SVG, PNG, PDF where a renderer is found), then report.md and report.json:
/// one writer for every kind of overlay.
overlay_result write_record(const fs::path& out, const std::string& stem, const plot_figure& fig,
                            const record_text& t) {
    overlay_result res;
    res.files = write_figure(out, stem, fig, res.notes);
    const fs::path svg = out / (stem + ".svg"), pdf = out / (stem + ".pdf");
    const png_result p = render_pdf(svg.string(), pdf.string());
    const std::vector<std::string> png_notes = res.notes;
    if (p.written) {
        res.files.push_back(pdf.filename().string());
    } else {
        std::error_code ec;
        fs::remove(pdf, ec);
        res.notes.push_back(p.note);
    }
    std::ostringstream md;
    md << "# " << t.title << "\n\n";
    md << "| folder | model | " << t.column_name << " |\n|---|---|---|\n";
    for (const auto& r : t.rows) md << "| " << r.dir << " | " << r.model << " | " << r.column << " |\n";
    md << "\n";
    for (const auto& n : t.notes) md << n << "\n\n";
    md << "Figures:";
    for (const auto& f : res.files) md << " `" << f << "`";
    md << "\n";
    for (const auto& n : png_notes) md << "\nNo PNG: " << n << ".\n";
    if (!p.written) md << "\nNo PDF: " << p.note << ".\n";
    write_file_atomic(out / "report.md", md.str());

    value j = value::object();
    j.set("format", json_out::str(plot_format));
    j.set("version", json_out::num(1));
    if (!t.kind.empty()) j.set("kind", json_out::str(t.kind));
    j.set("title", json_out::str(t.title));
    value inputs = value::array();
    for (const auto& r : t.rows) {
        value e = value::object();
        e.set("dir", json_out::str(r.dir));
        e.set("model", json_out::str(r.model));
        e.set("label", json_out::str(r.label));
        if (t.column_in_json) e.set("verdict", json_out::str(r.column));
        inputs.push_back(std::move(e));
    }
    j.set("inputs", std::move(inputs));
    j.set("figures", json_out::string_array(res.files));
    j.set("notes", json_out::string_array(t.notes));
    write_file_atomic(out / "report.json", json::dump(j, 2) + "\n");
    return res;
}

overlay_result write_runs_overlay(const std::vector<fs::path>& dirs, const fs::path& out,
                                  const overlay_options& o, const std::string& kind) {
    std::vector<run_input> in;
    for (const auto& d : dirs) in.push_back(read_run_input(d, kind));
    set_labels(in);
    make_out_folder(out);
    const std::string stem = !o.stem.empty() ? o.stem : kind == "simulate" ? "beta" : "restrict";
    record_text t;
    const plot_figure fig = runs_figure(in, kind, o, t.notes);
    t.title = o.title;
    if (t.title.empty()) {
        for (const auto& s : in) t.title += (t.title.empty() ? "" : " and ") + s.label;
        t.title = (kind == "simulate" ? "Smallest certified inverse temperature against n: "
                                      : "Restrictions keeping C·n inputs free, against n: ") + t.title;
    }
    t.column_name = "lengths";
    t.kind = kind;
    t.column_in_json = false;
    for (const auto& s : in) t.rows.push_back({s.dir.string(), s.model, s.label, n_text(s.n)});
    return write_record(out, stem, fig, t);
}

} // namespace

overlay_result write_overlay(const std::vector<fs::path>& dirs, const fs::path& out,
                             const overlay_options& o) {
    if (dirs.empty()) throw model::content_error("", "", "plot needs at least one influence report folder");
    // Never over another command's report (an input folder, say).
    const fs::path own = out / "report.json";
    std::string existing;
    std::error_code ec;
    if (fs::exists(own, ec) && util::read_regular_file(own, existing).empty()) {
        bool ours = false;
        try {
            const value v = json::parse(existing);
            ours = v.is_object() && member_string(v, "format") == plot_format;
        } catch (const json::parse_error&) {
        }
        if (!ours)
            bad(own, "", "the folder holds the report of another run; give plot another --out");
    }
    const std::string kind = overlay_kind(dirs.front());
    for (const auto& d : dirs)
        if (const std::string k = overlay_kind(d); k != kind)
            bad(d / "report.json", "/format",
                "plot overlays the reports of one command; this is a report of `attnprop " + k + "`, " +
                    dirs.front().string() + " one of `attnprop " + kind + "`");
    if (kind != "influence") return write_runs_overlay(dirs, out, o, kind);
    overlay_options oi = o;
    if (oi.stem.empty()) oi.stem = "influence";
    std::vector<overlay_input> in;
    for (const auto& d : dirs) in.push_back(read_overlay_input(d));
    set_labels(in);
    make_out_folder(out);
    record_text t;
    const plot_figure fig = overlay_figure(in, oi, t.notes);
    t.title = oi.title;
    if (t.title.empty()) {
        for (const auto& s : in) t.title += (t.title.empty() ? "" : " and ") + s.label;
        t.title = "One-symbol influence against n: " + t.title;
    }
    t.column_name = "verdict";
    t.column_in_json = true;
    for (const auto& s : in) t.rows.push_back({s.dir.string(), s.model, s.label, s.verdict});
    return write_record(out, oi.stem, fig, t);
}

} // namespace attnprop::report
