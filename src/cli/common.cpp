#include "cli/common.hpp"
#include "numeric/context.hpp"

#include <algorithm>
#include <cstdlib>

namespace attnprop::cli {

namespace fs = std::filesystem;

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
    if (fs::is_regular_file(arg, ec)) return arg;
    if (arg.find('/') == std::string::npos) {
        std::string file = arg.size() > 5 && arg.ends_with(".json") ? arg : arg + ".json";
        for (const auto& d : model_dirs())
            if (fs::is_regular_file(d / file, ec)) return d / file;
    }
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
        ->check(CLI::Range(numeric::min_precision_bits, numeric::max_precision_bits))
        ->capture_default_str();
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
        out.push_back(to_long(text.substr(start, comma - start)));
        start = comma + 1;
    }
    return out;
}

} // namespace attnprop::cli
