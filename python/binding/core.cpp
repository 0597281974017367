// attnprop._core: the library's entry points for Python (pybind11). The package around it
// (python/binding/attnprop) gives the values their Python types (fractions.Fraction, Interval,
// float, numpy arrays) and the reports their reprs; this file only calls the library, with the
// GIL released, Ctrl-C turned into the library's stop request, and the library's errors turned
// into the package's exceptions with the messages the command line prints.
#include "cli/evaluate.hpp"
#include "lang/languages.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"
#include "numeric/context.hpp"
#include "numeric/interrupt.hpp"
#include "numeric/limits.hpp"
#include "report/bound_report.hpp"
#include "report/influence_report.hpp"
#include "report/overlay.hpp"
#include "report/restrict_report.hpp"
#include "report/simulate_report.hpp"
#include "soft_influence/all_inputs.hpp"
#include "soft_influence/sweep.hpp"
#include "util/precondition.hpp"

#include <functional>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace attnprop;
using exact_model = model::model<numeric::rational>;

namespace {

// ---------------------------------------------------------------------------------------------
// Errors: the package's exception classes, set by attnprop/__init__.py through set_errors.

py::object error_class, undefined_class, limit_class;

/// Raises the Python exception of the library's exception `e` (the command line's message,
/// without its "attnprop: error: " prefix); KeyboardInterrupt for a stop.
void raise_python(std::exception_ptr e) {
    auto raise = [](const py::object& cls, const std::string& msg) {
        PyErr_SetString(cls ? cls.ptr() : PyExc_RuntimeError, msg.c_str());
    };
    try {
        std::rethrow_exception(e);
    } catch (const numeric::interrupted_error&) {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
    } catch (const numeric::limit_error& x) {
        raise(limit_class, x.what());
    } catch (const std::bad_alloc&) {
        PyErr_SetString(PyExc_MemoryError, "out of memory; the input is too large for the memory available");
    } catch (const numeric::undefined_error& x) {
        raise(undefined_class, x.message());
    } catch (const model::model_file_error& x) {
        raise(error_class, x.what());
    } catch (const model::content_error& x) {
        raise(error_class, x.what());
    } catch (const model::input_error& x) {
        raise(error_class, x.what());
    } catch (const precondition_error& x) {
        raise(error_class, x.what());
    } catch (const numeric::numeric_error& x) {
        raise(error_class, x.what());
    } catch (const json::parse_error& x) {
        raise(error_class, x.what());
    }
}

// ---------------------------------------------------------------------------------------------
// Ctrl-C. While the library computes, Python runs no bytecode and so never looks at its own
// SIGINT flag: a handler of ours asks the library to stop (numeric::request_stop, polled between
// units of work) and the call then raises KeyboardInterrupt.

void on_sigint(int) noexcept { numeric::request_stop(); }

/// Releases the GIL for a computation and, in the main thread, routes SIGINT to the library's
/// stop request; restores both afterwards.
class computation {
public:
    computation() {
        numeric::clear_stop_request();
        const py::object threading = py::module_::import("threading");
        main_thread_ = threading.attr("current_thread")().is(threading.attr("main_thread")());
        if (main_thread_) {
            struct sigaction sa {};
            sa.sa_handler = on_sigint;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGINT, &sa, &previous_);
        }
        release_.emplace();
    }
    ~computation() {
        release_.reset();
        if (main_thread_) sigaction(SIGINT, &previous_, nullptr);
    }
    computation(const computation&) = delete;
    computation& operator=(const computation&) = delete;

    /// Whether the computation was stopped (Ctrl-C or a callback's exception); clears it.
    static bool stopped() {
        const bool s = numeric::stop_requested();
        numeric::clear_stop_request();
        return s;
    }

private:
    bool main_thread_ = false;
    struct sigaction previous_ {};
    std::optional<py::gil_scoped_release> release_;
};

/// Runs f() as a computation; a library exception becomes the package's Python exception, a
/// stop becomes KeyboardInterrupt (or the callback's exception that asked for it, `pending`).
template <class F>
auto compute(F&& f, std::shared_ptr<py::object> pending = nullptr) -> decltype(f()) {
    std::exception_ptr failure;
    std::optional<decltype(f())> out;
    bool stopped = false;
    {
        computation c;
        try {
            out.emplace(f());
        } catch (...) {
            failure = std::current_exception();
        }
        stopped = computation::stopped();
    }
    if (pending && *pending) {
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(pending->ptr())), pending->ptr());
        throw py::error_already_set();
    }
    if (failure) {
        raise_python(failure);
        if (PyErr_Occurred()) throw py::error_already_set();
        std::rethrow_exception(failure);
    }
    if (stopped) {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        throw py::error_already_set();
    }
    return std::move(*out);
}

/// A progress hook for the library (empty when `progress` is None) that calls `progress` with
/// convert(args...) under the GIL. An exception the callable raises is kept in *raised, asks the
/// computation to stop, and is raised by compute(f, pending) after it; later calls do nothing.
/// The hook may be copied and dropped on worker threads: it holds pointers to Python objects of
/// the caller's frame, never references it would count.
template <class... A, class Convert>
std::function<void(A...)> progress_hook(const py::object& progress, py::object* raised,
                                        Convert convert) {
    if (progress.is_none()) return {};
    const py::object* callback = &progress;
    return [callback, raised, convert](A... args) {
        py::gil_scoped_acquire gil;
        if (*raised) return;
        try {
            (*callback)(convert(args...));
        } catch (py::error_already_set& e) {
            *raised = e.value();
            numeric::request_stop();
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Models.

/// The models of an installation the package belongs to (PREFIX/share/attnprop/models), set by
/// the package; empty in the build tree.
std::string package_models_dir;

/// Where bundled names are looked up, as on the command line ($ATTNPROP_MODELS_DIR, the source
/// tree's models/, the installed ones), with the package's installation first after the
/// variable: an installed module finds its own models wherever it was installed.
std::vector<fs::path> model_dirs() {
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("ATTNPROP_MODELS_DIR"); env && *env) dirs.emplace_back(env);
    if (!package_models_dir.empty()) dirs.emplace_back(package_models_dir);
    dirs.emplace_back(ATTNPROP_MODELS_DIR);
    dirs.emplace_back(ATTNPROP_INSTALLED_MODELS_DIR);
    return dirs;
}

/// The bundled models (name, path) of the first models directory that exists, by name.
std::vector<std::pair<std::string, std::string>> bundled() {
    for (const auto& d : model_dirs()) {
        std::error_code ec;
        if (!fs::is_directory(d, ec)) continue;
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.is_regular_file() && e.path().extension() == ".json")
                out.emplace_back(e.path().stem().string(), e.path().string());
        std::sort(out.begin(), out.end());
        return out;
    }
    return {};
}

struct py_model {
    std::shared_ptr<const exact_model> m;
    std::string source; ///< the file read, or "<dict>"
};

py_model load_path(const std::string& arg) {
    std::error_code ec;
    std::string path;
    if (fs::is_regular_file(arg, ec)) {
        path = arg;
    } else if (arg.find('/') == std::string::npos) {
        const std::string stem = arg.size() > 5 && arg.ends_with(".json") ? arg.substr(0, arg.size() - 5) : arg;
        for (const auto& [name, p] : bundled())
            if (name == stem) path = p;
    }
    if (path.empty()) {
        std::string msg = "no model file or bundled model named '" + arg + "'";
        const auto all = bundled();
        if (!all.empty()) {
            msg += " (bundled:";
            for (const auto& b : all) msg += " " + b.first;
            msg += ")";
        }
        PyErr_SetString(error_class ? error_class.ptr() : PyExc_ValueError, msg.c_str());
        throw py::error_already_set();
    }
    auto m = compute([&] { return std::make_shared<const exact_model>(model::read_model_file(path)); });
    return {std::move(m), path};
}

py_model load_text(const std::string& text, const std::string& file_name) {
    auto m = compute([&] { return std::make_shared<const exact_model>(model::parse_model(text, file_name)); });
    return {std::move(m), file_name};
}

// ---------------------------------------------------------------------------------------------
// Evaluation: the strings of analysis::evaluation, typed by the package.

py::dict evaluate(const py_model& pm, const std::string& input, const std::string& scalar,
                  long precision, int digits) {
    const auto choice = analysis::parse_scalar_choice(scalar);
    if (!choice) {
        std::string known;
        for (const auto& n : numeric::choice_names(true)) known += (known.empty() ? "" : ", ") + n;
        throw py::value_error("scalar: unknown kind '" + scalar + "' (known: " + known + ")");
    }
    analysis::eval_options o;
    o.scalar = *choice;
    o.precision = precision;
    o.digits = digits;
    analysis::evaluation ev = compute([&] {
        numeric::require_working_precision(precision);
        const model::input_sequence x = model::parse_input(*pm.m, input);
        return analysis::evaluate(*pm.m, x, o);
    });
    py::dict d;
    d["model"] = ev.model_name;
    d["input"] = ev.input;
    d["n"] = ev.n;
    d["scalar"] = ev.scalar;
    d["precision"] = ev.precision;
    d["digits"] = ev.digits;
    d["y_mid"] = ev.y_mid;
    d["y_rad"] = ev.y_rad;
    d["y_text"] = ev.y_text;
    d["y"] = ev.y;
    d["recognizer"] = ev.recognizer;
    if (ev.accept) d["accept"] = std::string(to_string(*ev.accept));
    else d["accept"] = py::none();
    d["undecided"] = ev.undecided ? py::object(py::str("an argmax the enclosure could not decide"))
                                  : py::object(py::none());
    d["undefined"] = ev.undefined ? py::object(py::str(ev.undefined->message())) : py::object(py::none());
    d["notes"] = ev.notes;
    d["output_symbols"] = ev.output_symbols;
    d["logits_mid"] = ev.logits_mid;
    d["logits_rad"] = ev.logits_rad;
    d["logits_text"] = ev.logits_text;
    d["logits"] = ev.logits;
    d["probabilities_mid"] = ev.probabilities_mid;
    d["probabilities_rad"] = ev.probabilities_rad;
    d["probabilities_text"] = ev.probabilities_text;
    d["probabilities"] = ev.probabilities;
    return d;
}

// ---------------------------------------------------------------------------------------------
// Reports: the JSON documents the commands write, as text (the package parses it).

std::vector<long> lengths(const std::vector<long>& ns) {
    for (long n : ns)
        if (n < 2) throw py::value_error("n: every length (eos included) must be at least 2, got " + std::to_string(n));
    return ns;
}

std::pair<std::string, std::string> bound(const py_model& pm, const std::vector<long>& ns_in,
                                          long precision, std::size_t classes, bool every_n) {
    const std::vector<long> ns = lengths(ns_in);
    report::bound_options o;
    o.precision = precision;
    o.classes = classes;
    o.every_n = every_n;
    const report::bound_run r = compute([&] {
        numeric::require_working_precision(precision);
        return report::run_bound(*pm.m, ns, o);
    });
    std::size_t hmax = 0;
    for (const auto& l : pm.m->layers) hmax = std::max(hmax, l.heads.size());
    return {json::dump(report::bound_run_to_json(r), 2),
            report::bound_to_text(r.lemma, hmax, pm.m->d) + report::every_input_text(r.every_input, r.lemma)};
}

std::pair<std::string, std::string> influence(const py_model& pm, const std::vector<long>& ns_in,
                                              std::size_t inputs, std::size_t positions,
                                              const std::string& language, long precision,
                                              long precision_cap, const std::string& scalar,
                                              std::uint64_t seed, unsigned threads, bool every_input,
                                              const std::string& out, bool figure_text,
                                              py::object progress) {
    analysis::sweep_options o;
    o.ns = lengths(ns_in);
    o.inputs = inputs;
    o.positions = positions;
    if (!language.empty()) {
        o.language = lang::parse_language(language);
        if (!o.language)
            throw py::value_error("unknown language '" + language +
                                  "' (known: " + lang::language_names() + ")");
    }
    const auto sc = analysis::sweep_scalar::parse(scalar);
    if (!sc) throw py::value_error("scalar: 'auto', 'interval' or 'ball', got '" + scalar + "'");
    o.scalar = *sc;
    o.precision = precision;
    o.precision_cap = precision_cap;
    o.seed = seed;
    o.threads = threads;
    auto pending = std::make_shared<py::object>();
    o.on_row = progress_hook<const analysis::sweep_row&>(progress, pending.get(), [](const auto& row) {
        return json::dump(report::row_to_json(row), -1);
    });
    report::influence_meta meta;
    meta.model_file = pm.source;
    meta.figure_text = figure_text;
    const auto r = compute(
        [&] {
            numeric::require_working_precision(precision);
            if (std::string why = analysis::influence_refusal(*pm.m); !why.empty())
                throw model::content_error(pm.m->file, "/attention", why);
            for (long n : o.ns) model::check_length(*pm.m, n);
            meta.fingerprint = report::influence_fingerprint(model::write_model(*pm.m), o);
            meta.options = o;
            analysis::sweep_result res = analysis::influence_sweep(*pm.m, o);
            // The bounds over every input at each measured n, as the command adds them; a stop
            // during them leaves the rows without them (and the call raises).
            if (every_input && analysis::bounds_for(pm.m->attention).every_input && !res.rows.empty() &&
                !numeric::stop_requested()) {
                try {
                    (void)analysis::add_every_input_bounds(*pm.m, res, analysis::all_inputs_options{},
                                                           o.slope_tolerance);
                } catch (const numeric::interrupted_error&) {
                }
            }
            if (!out.empty()) report::write_influence_report(out, res, meta);
            return res;
        },
        pending);
    return {json::dump(report::influence_to_json(r, meta), 2), report::influence_to_text(r, meta)};
}

std::pair<std::string, std::string> simulate(const py_model& pm, const std::vector<std::string>& betas,
                                             const std::vector<long>& ns_in,
                                             const std::vector<std::string>& patterns, bool cube,
                                             int inputs, std::uint64_t seed, long precision,
                                             long precision_cap, bool interval, bool every_input,
                                             const std::string& out, bool figure_text,
                                             py::object progress) {
    report::simulate_request q;
    q.betas = betas;
    q.ns = lengths(ns_in);
    q.patterns = patterns;
    q.cube = cube;
    q.random_inputs = inputs;
    q.seed = seed;
    q.precision = precision;
    q.precision_cap = precision_cap;
    q.interval = interval;
    q.every_input = every_input;
    auto pending = std::make_shared<py::object>();
    q.on_length = progress_hook<long>(progress, pending.get(), [](long n) { return n; });
    const report::simulate_run run = compute(
        [&] {
            numeric::require_working_precision(precision);
            // Between lengths, a stop (Ctrl-C, the callback's exception) ends the run.
            auto stop_between = q.on_length;
            q.on_length = [stop_between](long n) {
                if (stop_between) stop_between(n);
                numeric::throw_if_stop_requested();
            };
            report::simulate_run r = report::run_simulate(*pm.m, q);
            if (!out.empty()) report::write_simulate_report(out, r, {}, figure_text);
            return r;
        },
        pending);
    return {json::dump(report::simulate_to_json(run), 2), report::simulate_to_text(run)};
}

std::pair<std::string, std::string> restrict_runs(const py_model& pm, const std::vector<long>& ns_in,
                                                  const std::string& free_fraction,
                                                  const std::string& language, std::uint64_t seed,
                                                  int trials, int samples, bool fan_out, int threads,
                                                  const std::string& out, bool figure_text) {
    report::restrict_request q;
    q.ns = lengths(ns_in);
    if (q.ns.empty()) throw py::value_error("n: give at least one length");
    std::string err;
    const auto c = numeric::parse_rational(free_fraction, &err);
    if (!c) throw py::value_error("free_fraction: '" + free_fraction + "' is not a number");
    q.free_fraction = *c;
    if (!language.empty()) {
        q.language = lang::parse_language(language);
        if (!q.language)
            throw py::value_error("unknown language '" + language +
                                  "' (known: " + lang::language_names() + ")");
    }
    q.seed = seed;
    q.trials = trials;
    q.samples = samples;
    q.fan_out = fan_out;
    q.threads = threads;
    const std::vector<report::restrict_run> runs = compute([&] {
        report::check_restrict(*pm.m, q);
        std::vector<report::restrict_run> rs;
        for (long n : q.ns) {
            numeric::throw_if_stop_requested();
            rs.push_back(report::run_restrict_length(*pm.m, q, n));
        }
        if (!out.empty()) report::write_restrict_sweep(out, *pm.m, rs, {}, figure_text);
        return rs;
    });
    json::value j = json::value::object();
    j.set("model", json::value::string(pm.m->name));
    json::value arr = json::value::array();
    std::string text;
    for (const auto& r : runs) {
        arr.push_back(report::restrict_to_json(*pm.m, r));
        text += report::restrict_to_text(*pm.m, r);
    }
    j.set("runs", std::move(arr));
    return {json::dump(j, 2), text};
}

std::pair<std::vector<std::string>, std::vector<std::string>>
plot(const std::vector<std::string>& dirs, const std::string& out, const std::string& stem,
     const std::string& title, bool caption, double width) {
    if (width < 360 || width > 2000) throw py::value_error("width: between 360 and 2000 pixels");
    if (stem.find('/') != std::string::npos || (!stem.empty() && stem[0] == '.'))
        throw py::value_error("name: a file name without a folder, got '" + stem + "'");
    report::overlay_options o;
    o.stem = stem;
    o.title = title;
    o.caption = caption;
    o.width = width;
    std::vector<fs::path> paths(dirs.begin(), dirs.end());
    const auto r = compute([&] { return report::write_overlay(paths, out, o); });
    return {r.files, r.notes};
}

} // namespace

PYBIND11_MODULE(_core, mod) {
    mod.doc() = "attnprop's library (the package attnprop wraps it)";
    mod.def("set_errors", [](py::object error, py::object undefined, py::object limit) {
        error_class = std::move(error);
        undefined_class = std::move(undefined);
        limit_class = std::move(limit);
    });
    // The stored exception classes are released before the interpreter ends.
    py::module_::import("atexit").attr("register")(py::cpp_function([] {
        error_class = py::object();
        undefined_class = py::object();
        limit_class = py::object();
    }));
    mod.def("set_package_models_dir", [](std::string dir) { package_models_dir = std::move(dir); });
    mod.def("bundled", &bundled, "The bundled models: (name, path) pairs, by name");
    mod.def("scalar_names", [] { return numeric::choice_names(true); });

    py::class_<py_model>(mod, "Model")
        .def_property_readonly("name", [](const py_model& p) { return p.m->name; })
        .def_property_readonly("source", [](const py_model& p) { return p.source; })
        .def_property_readonly("attention", [](const py_model& p) { return std::string(model::to_string(p.m->attention)); })
        .def_property_readonly("alphabet", [](const py_model& p) { return p.m->sigma.symbols; })
        .def_property_readonly("eos", [](const py_model& p) { return p.m->sigma.eos; })
        .def_property_readonly("d", [](const py_model& p) { return p.m->d; })
        .def_property_readonly("layers", [](const py_model& p) { return p.m->layers.size(); })
        .def_property_readonly("description", [](const py_model& p) { return p.m->description; })
        .def("to_json", [](const py_model& p) { return model::write_model(*p.m); });

    mod.def("load_path", &load_path, py::arg("path"));
    mod.def("load_text", &load_text, py::arg("text"), py::arg("file_name"));
    mod.def("evaluate", &evaluate, py::arg("model"), py::arg("input"), py::arg("scalar"),
            py::arg("precision"), py::arg("digits"));
    mod.def("bound", &bound, py::arg("model"), py::arg("n"), py::arg("precision"), py::arg("classes"),
            py::arg("every_n"));
    mod.def("influence", &influence, py::arg("model"), py::arg("n"), py::arg("inputs"),
            py::arg("positions"), py::arg("language"), py::arg("precision"), py::arg("precision_cap"),
            py::arg("scalar"), py::arg("seed"), py::arg("threads"), py::arg("every_input"), py::arg("out"),
            py::arg("figure_text"), py::arg("progress"));
    mod.def("simulate", &simulate, py::arg("model"), py::arg("betas"), py::arg("n"), py::arg("patterns"),
            py::arg("cube"), py::arg("inputs"), py::arg("seed"), py::arg("precision"),
            py::arg("precision_cap"), py::arg("interval"), py::arg("every_input"), py::arg("out"),
            py::arg("figure_text"), py::arg("progress"));
    mod.def("restrict", &restrict_runs, py::arg("model"), py::arg("n"), py::arg("free_fraction"),
            py::arg("language"), py::arg("seed"), py::arg("trials"), py::arg("samples"),
            py::arg("fan_out"), py::arg("threads"), py::arg("out"), py::arg("figure_text"));
    // check and replay run in the attnprop executable (the package starts it): the property
    // engine links Debian's RapidCheck, a static library that is not position independent.
    mod.def("binaries", [] { return std::vector<std::string>{ATTNPROP_BUILD_BINARY, ATTNPROP_INSTALLED_BINARY}; },
            "Where the attnprop executable of this module is: the build tree's, the installed one");
    mod.def("plot", &plot, py::arg("dirs"), py::arg("out"), py::arg("name"), py::arg("title"),
            py::arg("caption"), py::arg("width"));
}
