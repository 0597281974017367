// attnprop bound: the hypotheses of Hahn's Lemma 5 and the explicit a-priori constant K.
#include "cli/commands.hpp"
#include "model/json.hpp"
#include "model/model_file.hpp"
#include "report/bound_report.hpp"

#include <algorithm>
#include <iostream>

namespace attnprop::cli {

namespace {

class bound_command final : public command {
public:
    explicit bound_command(CLI::App& parent) {
        app_ = parent.add_subcommand(
            "bound", "Check the hypotheses of Hahn's Lemma 5 (soft attention) on a model and "
                     "compute the explicit constant K: one symbol changes y_n^(L) by <= K/n");
        add_model_option(app_, model_);
        app_->add_option("--n", n_text_,
                         "Lengths (eos included): one value, a list 100,1000 or a range 16:4096:x4. At "
                         "each n: K(n) and delta_L(n) = K(n)/n, and the bounds over every input of "
                         "that length (docs/bounds.md); without --n: K = K(1)");
        app_->add_flag("--no-every-n", no_every_n_,
                       "Skip the constant K* valid for every n (the ranges of lengths take a few seconds)");
        app_->add_option("--classes", classes_,
                         "Classes of positions at one n: single positions up to this n, blocks above")
            ->transform(decimal_integer())->check(CLI::Range(16, 1 << 16))
            ->capture_default_str();
        add_precision_option(app_, precision_, "Working precision of the Arb balls in bits");
        app_->add_flag("--json", json_, "Print one JSON object instead of text");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& /*made_by*/) override {
        auto path = resolve_model(model_);
        model::model<numeric::rational> m = model::read_model_file(path.string());
        std::vector<long> ns;
        if (!n_text_.empty()) ns = parse_length_list(n_text_);
        report::bound_options o;
        o.precision = precision_;
        o.classes = static_cast<std::size_t>(classes_);
        o.every_n = !no_every_n_;
        o.on_activity = [](const std::string& what) { set_activity(what); };
        const report::bound_run r = report::run_bound(m, ns, o);
        if (json_) {
            std::cout << json::dump(report::bound_run_to_json(r), 2) << "\n";
        } else {
            std::size_t hmax = 0;
            for (const auto& l : m.layers) hmax = std::max(hmax, l.heads.size());
            std::cout << report::bound_to_text(r.lemma, hmax, m.d)
                      << report::every_input_text(r.every_input, r.lemma);
        }
        return exit_ok;
    }

private:
    CLI::App* app_ = nullptr;
    std::string model_, n_text_;
    long precision_ = 256;
    int classes_ = 512;
    bool json_ = false, no_every_n_ = false;
};

} // namespace

std::unique_ptr<command> make_bound_command(CLI::App& parent) {
    return std::make_unique<bound_command>(parent);
}

} // namespace attnprop::cli
