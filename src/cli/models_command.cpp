// attnprop models: list the bundled model files.
#include "cli/commands.hpp"
#include "model/model_file.hpp"

#include <iomanip>
#include <iostream>

namespace attnprop::cli {

namespace {

std::string first_sentence(const std::string& s) {
    auto p = s.find(". ");
    std::string out = p == std::string::npos ? s : s.substr(0, p + 1);
    if (out.size() > 100) out = out.substr(0, 97) + "...";
    return out;
}

class models_command final : public command {
public:
    explicit models_command(CLI::App& parent) {
        app_ = parent.add_subcommand("models", "List the bundled model files");
        app_->add_flag("--json", json_, "Print a JSON array");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& /*made_by*/) override {
        auto files = bundled_models();
        json::value arr = json::value::array();
        std::vector<model::model<numeric::rational>> models;
        // Columns as wide as their longest entry, so that names never run into the kind.
        std::size_t name_w = 0, kind_w = 0;
        for (const auto& f : files) {
            models.push_back(model::read_model_file(f.string()));
            name_w = std::max(name_w, f.stem().string().size());
            kind_w = std::max(kind_w, std::string(model::to_string(models.back().attention)).size());
        }
        for (std::size_t at = 0; at < files.size(); ++at) {
            const auto& f = files[at];
            const model::model<numeric::rational>& m = models[at];
            std::size_t heads = m.layers.empty() ? 0 : m.layers.front().heads.size();
            if (json_) {
                json::value o = json::value::object();
                o.set("name", json::value::string(f.stem().string()));
                o.set("file", json::value::string(f.string()));
                o.set("attention", json::value::string(model::to_string(m.attention)));
                o.set("layers", json::value::number(static_cast<long long>(m.layers.size())));
                o.set("heads", json::value::number(static_cast<long long>(heads)));
                o.set("d", json::value::number(static_cast<long long>(m.d)));
                json::value alphabet = json::value::array();
                for (const auto& sym : m.sigma.symbols) alphabet.push_back(json::value::string(sym));
                o.set("alphabet", std::move(alphabet));
                o.set("eos", json::value::string(m.sigma.eos));
                o.set("description", json::value::string(m.description));
                o.set("source", json::value::string(m.source));
                arr.push_back(std::move(o));
            } else {
                std::cout << std::left << std::setw(static_cast<int>(name_w + 2)) << f.stem().string()
                          << std::setw(static_cast<int>(kind_w)) << model::to_string(m.attention)
                          << " L=" << m.layers.size()
                          << " H=" << heads << " d=" << std::setw(3) << m.d << "  "
                          << first_sentence(m.description) << "\n";
            }
        }
        if (json_) std::cout << json::dump(arr, 2) << "\n";
        else if (files.empty()) std::cout << "no bundled models found\n";
        return exit_ok;
    }

private:
    CLI::App* app_ = nullptr;
    bool json_ = false;
};

} // namespace

std::unique_ptr<command> make_models_command(CLI::App& parent) {
    return std::make_unique<models_command>(parent);
}

} // namespace attnprop::cli
