#include "cli/common.hpp"

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

} // namespace attnprop::cli
