// attnprop format: read a model file and print (or write) its canonical form.
#include "cli/commands.hpp"
#include "model/model_file.hpp"

#include <iostream>

namespace attnprop::cli {

namespace {

class format_command final : public command {
public:
    explicit format_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "format", "Read a model file, check it, and print its canonical form (the form "
                      "attnprop writes: exact numbers, fixed key order; docs/model-format.md)");
        add_model_option(app_, model_);
        app_->add_option("--out", out_,
                         "Write the canonical form to this file instead of standard output "
                         "(it may be the model file itself)");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& /*made_by*/) override {
        auto path = resolve_model(model_);
        // Read completely before writing: --out may name the file being read.
        model::model<numeric::rational> m = model::read_model_file(path.string());
        if (out_.empty()) std::cout << model::write_model(m);
        else model::write_model_file(m, out_);
        return exit_ok;
    }

private:
    CLI::App* app_ = nullptr;
    std::string model_;
    std::string out_;
};

} // namespace

std::unique_ptr<command> make_format_command(CLI::App& parent) {
    return std::make_unique<format_command>(parent);
}

} // namespace attnprop::cli
