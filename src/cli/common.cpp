#include "cli/common.hpp"
#include "dist/world.hpp"
#include "model/model_file.hpp"
#include "numeric/context.hpp"
#include "numeric/limits.hpp"

#include "numeric/interrupt.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace attnprop::cli {

namespace fs = std::filesystem;

int describe_failure(std::exception_ptr e, std::string& printed) {
    try {
        std::rethrow_exception(e);
    } catch (const dist::remote_failure& x) {
        printed = x.what();
        return x.exit_code;
    } catch (const numeric::limit_error& x) {
        printed = std::string("attnprop: error: ") + x.what();
    } catch (const std::bad_alloc&) {
        printed = "attnprop: error: out of memory" + activity_suffix() +
                  "; the input is too large for the memory available";
    } catch (const usage_error& x) {
        printed = std::string("attnprop: error: ") + x.what();
    } catch (const precondition_error& x) {
        // A library precondition the command line let through (a soft model to restrict, a
        // language the alphabet cannot spell): bad input, told in the library's words.
        printed = std::string("attnprop: error: ") + x.what();
    } catch (const model::model_file_error& x) {
        printed = x.what();
    } catch (const model::content_error& x) {
        // Located like a reader's error when the model came from a file.
        printed = x.file().empty() ? std::string("attnprop: error: ") + x.what() : x.what();
    } catch (const model::input_error& x) {
        printed = std::string("attnprop: error: ") + x.what();
    } catch (const numeric::undefined_error& x) {
        printed = "attnprop: " + x.message();
        return exit_undefined;
    } catch (const numeric::numeric_error& x) {
        printed = std::string("attnprop: error: ") + x.what();
    } catch (const std::exception& x) {
        printed = std::string("attnprop: internal error: ") + x.what();
        return exit_internal;
    } catch (...) {
        printed = "attnprop: internal error: an exception of unknown type";
        return exit_internal;
    }
    return exit_usage;
}

std::vector<fs::path> model_dirs() {
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("ATTNPROP_MODELS_DIR"); env && *env) dirs.emplace_back(env);
    dirs.emplace_back(ATTNPROP_MODELS_DIR);
    dirs.emplace_back(ATTNPROP_INSTALLED_MODELS_DIR);
    return dirs;
}

std::vector<fs::path> bundled_models() {
    for (const auto& d : model_dirs()) {
        std::error_code ec;
        if (!fs::is_directory(d, ec)) continue;
        std::vector<fs::path> out;
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
        std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
            return a.stem().string() < b.stem().string();
        });
        return out;
    }
    return {};
}

fs::path resolve_model(const std::string& arg) {
    std::error_code ec;
    const fs::file_status st = fs::status(arg, ec);
    if (fs::is_regular_file(st)) return arg;
    if (arg.find('/') == std::string::npos) {
        std::string file = arg.size() > 5 && arg.ends_with(".json") ? arg : arg + ".json";
        for (const auto& d : model_dirs())
            if (fs::is_regular_file(d / file, ec)) return d / file;
    }
    // Something is there, but no model file can be read from it (a FIFO would block).
    const char* what = fs::is_directory(st)        ? "a directory"
                       : fs::is_character_file(st) ? "a character device"
                       : fs::is_block_file(st)     ? "a block device"
                       : fs::is_fifo(st)           ? "a FIFO (named pipe)"
                       : fs::is_socket(st)         ? "a socket"
                       : fs::exists(st)            ? "not a regular file"
                                                   : nullptr;
    if (what) throw usage_error("--model " + arg + " is " + what + ", not a model file");
    std::string msg = "no model file or bundled model named '" + arg + "'";
    auto all = bundled_models();
    if (!all.empty()) {
        msg += " (bundled:";
        for (const auto& p : all) msg += " " + p.stem().string();
        msg += ")";
    }
    throw usage_error(msg);
}

CLI::Option* add_model_option(CLI::App* app, std::string& model) {
    return app->add_option("--model,-m", model, "Model file, or the name of a bundled model")->required();
}

CLI::Option* add_precision_option(CLI::App* app, long& bits, const std::string& what) {
    return app->add_option("--precision,-p", bits, what)
        ->transform(decimal_integer())->check(CLI::Range(numeric::min_precision_bits, numeric::max_precision_bits))
        ->capture_default_str();
}

namespace {

/// Whether this process prints the stop message: one process, or rank 0 of several (every
/// rank receives the signal mpirun forwards). Set before the handlers are installed.
volatile std::sig_atomic_t speaks_on_stop = 1;

extern "C" void on_stop_signal(int sig) {
    if (numeric::stop_requested()) {
        // The second one: the default action, now.
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    numeric::request_stop();
    if (!speaks_on_stop) return;
    static const char on_int[] =
        "\nattnprop: interrupted: finishing the work in progress and writing the results so far "
        "(Ctrl-C again to quit at once)\n";
    static const char on_usr1[] =
        "\nattnprop: stop requested (SIGUSR1): finishing the work in progress and writing the "
        "results so far (SIGUSR1 again to quit at once)\n";
    [[maybe_unused]] auto written = sig == SIGINT ? ::write(2, on_int, sizeof on_int - 1)
                                                  : ::write(2, on_usr1, sizeof on_usr1 - 1);
}

} // namespace

void stop_on_interrupt() {
    speaks_on_stop = dist::is_root() ? 1 : 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGUSR1, &sa, nullptr);
}

progress_line::progress_line() : tty_(::isatty(2) != 0) {}

progress_line::~progress_line() { clear(); }

void progress_line::show(const std::string& text, bool force) {
    if (!tty_) return;
    const long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count();
    if (!force && shown_ && now - last_ms_ < 200) return;
    last_ms_ = now;
    shown_ = true;
    std::cerr << "\r" << text << "\x1b[K" << std::flush;
}

void progress_line::clear() {
    if (!tty_ || !shown_) return;
    std::cerr << "\r\x1b[K" << std::flush;
    shown_ = false;
}

CLI::Validator decimal_integer() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const std::size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
            const bool digits = text.size() > sign &&
                                std::all_of(text.begin() + static_cast<std::ptrdiff_t>(sign), text.end(),
                                            [](char c) { return c >= '0' && c <= '9'; });
            if (!digits) return "'" + text + "' is not a decimal integer";
            // Leading zeros would make CLI11 read the rest in octal.
            std::size_t first = sign;
            while (first + 1 < text.size() && text[first] == '0') ++first;
            text = (sign && text.substr(first) != "0" ? "-" : "") + text.substr(first);
            return {};
        },
        "", "DECIMAL");
}

CLI::Option* add_seed_option(CLI::App* app, std::uint64_t& seed, const std::string& help) {
    CLI::Validator unsigned64(
        [](std::string& text) -> std::string {
            const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
                return c >= '0' && c <= '9';
            });
            if (!digits) return "the seed must be a decimal integer in [0, 2^64), got '" + text + "'";
            std::string_view v(text);
            while (v.size() > 1 && v.front() == '0') v.remove_prefix(1);
            constexpr std::string_view top = "18446744073709551615"; // 2^64 - 1
            if (v.size() > top.size() || (v.size() == top.size() && v > top))
                return "the seed must be below 2^64, got " + text;
            return {};
        },
        "SEED");
    return app->add_option("--seed", seed, help)
        ->transform(decimal_integer())
        ->check(unsigned64)
        ->capture_default_str();
}

model::input_sequence read_input_file(const model::model<numeric::rational>& m,
                                      const std::string& path) {
    const bool stdin_ = path == "-";
    std::FILE* f = stdin_ ? stdin : std::fopen(path.c_str(), "rb");
    if (!f) throw usage_error("--input-file: cannot open " + path + ": " + std::strerror(errno));
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned(stdin_ ? nullptr : f, &std::fclose);
    const std::string name = stdin_ ? std::string("standard input") : path;
    // Byte -> symbol index (-1: whitespace, -2: not a symbol).
    std::array<int, 256> code;
    code.fill(-2);
    for (unsigned char c : std::string(" \t\r\n\f\v")) code[c] = -1;
    for (std::size_t s = 0; s < m.sigma.symbols.size(); ++s)
        code[static_cast<unsigned char>(m.sigma.symbols[s][0])] = static_cast<int>(s);
    model::input_sequence x;
    std::vector<char> buf(1 << 16);
    std::size_t line = 1, column = 0;
    for (;;) {
        const std::size_t got = std::fread(buf.data(), 1, buf.size(), f);
        for (std::size_t k = 0; k < got; ++k) {
            const auto c = static_cast<unsigned char>(buf[k]);
            ++column;
            const int s = code[c];
            if (s >= 0) {
                x.push_back(s);
            } else if (c == '\n') {
                ++line;
                column = 0;
            } else if (s == -2) {
                std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c))
                                                          : "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) +
                                                                std::string(1, "0123456789abcdef"[c & 15]);
                std::string msg = name + ":" + std::to_string(line) + ":" + std::to_string(column) +
                                  ": symbol '" + shown + "' (input position " +
                                  std::to_string(x.size() + 1) + ") is not in the alphabet {";
                for (std::size_t t = 0; t < m.sigma.symbols.size(); ++t)
                    msg += (t ? ", " : "") + m.sigma.symbols[t];
                msg += "}";
                if (!m.sigma.eos.empty() && static_cast<char>(c) == m.sigma.eos[0])
                    msg += "; eos '" + m.sigma.eos + "' is appended, not written";
                throw model::input_error(msg);
            }
        }
        if (got < buf.size()) {
            if (std::ferror(f))
                throw usage_error("--input-file: cannot read " + name + ": " + std::strerror(errno));
            break;
        }
    }
    x.push_back(m.sigma.eos_index());
    return x;
}

CLI::Option* add_limit_option(CLI::App* app, std::vector<std::string>& limits) {
    std::string help = "Raise (or lower) a resource limit, NAME=VALUE with an optional suffix "
                       "K, M, G, T (repeatable; also ATTNPROP_LIMITS=NAME=VALUE,...). Limits and "
                       "defaults:";
    for (const auto& sp : numeric::limit_specs())
        help += " " + std::string(sp.name) + " (" + std::to_string(sp.default_value) + " " +
                std::string(sp.unit) + ")";
    return app->add_option("--limit", limits, help)->type_name("NAME=VALUE");
}

namespace {
std::string& activity_text() {
    static std::string text;
    return text;
}
} // namespace

void set_activity(std::string what) { activity_text() = std::move(what); }

std::string activity_suffix() {
    return activity_text().empty() ? std::string() : " while " + activity_text();
}

std::vector<std::pair<std::string, std::string>> option_values(CLI::App& app) {
    std::vector<std::pair<std::string, std::string>> out;
    for (CLI::Option* o : app.get_options()) {
        if (o == app.get_help_ptr() || o == app.get_help_all_ptr()) continue;
        std::string name = !o->get_lnames().empty()   ? "--" + o->get_lnames().front()
                           : !o->get_snames().empty() ? "-" + o->get_snames().front()
                                                      : o->get_name();
        std::string v;
        if (o->get_expected_max() == 0 || o->get_type_size_max() == 0) {
            v = o->count() > 0 ? "true" : "false";
        } else if (o->get_expected_max() >= CLI::detail::expected_max_vector_size) {
            for (const auto& r : o->results()) v += (v.empty() ? "" : ",") + r;
        } else {
            o->capture_default_str(); // the bound variable, as parsed or defaulted
            v = o->get_default_str();
        }
        out.emplace_back(std::move(name), std::move(v));
    }
    return out;
}

/// Parses "64", "16,64,256" or a geometric range "16:4096:x2".
std::vector<long> parse_length_list(const std::string& text) {
    auto to_long = [&](const std::string& s) {
        std::size_t used = 0;
        long v = 0;
        try {
            v = std::stol(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != s.size() || s.empty()) throw usage_error("--n: '" + s + "' is not an integer");
        if (v < 2) throw usage_error("--n: n must be at least 2 (one input and eos), got " + s);
        if (v > (1L << 20)) throw usage_error("--n: n = " + s + " is above 2^20");
        return v;
    };
    std::vector<long> out;
    if (text.find(':') != std::string::npos) {
        const auto a = text.find(':'), b = text.find(':', a + 1);
        if (b == std::string::npos || b + 2 > text.size() || text[b + 1] != 'x')
            throw usage_error("--n: a range is FROM:TO:xFACTOR, e.g. 16:4096:x2");
        const long from = to_long(text.substr(0, a)), to = to_long(text.substr(a + 1, b - a - 1));
        long factor = 0;
        try {
            factor = std::stol(text.substr(b + 2));
        } catch (const std::exception&) {
            factor = 0;
        }
        if (factor < 2) throw usage_error("--n: the range factor must be an integer >= 2");
        if (to < from) throw usage_error("--n: the range must increase");
        for (long v = from; v <= to; v *= factor) out.push_back(v);
        return out;
    }
    std::size_t start = 0;
    while (start <= text.size()) {
        auto comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        const long v = to_long(text.substr(start, comma - start));
        // The same n twice would measure (and report) the same row twice.
        if (std::find(out.begin(), out.end(), v) != out.end())
            throw usage_error("--n: n = " + std::to_string(v) + " is listed twice");
        out.push_back(v);
        start = comma + 1;
    }
    return out;
}

} // namespace attnprop::cli
