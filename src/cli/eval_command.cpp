// attnprop eval: evaluate one model on one input.
#include "cli/evaluate.hpp"
#include "cli/commands.hpp"
#include "model/model_file.hpp"
#include "numeric/kinds.hpp"
#include "cli/eval_output.hpp"

#include <iostream>

namespace attnprop::cli {

namespace {

class eval_command final : public command {
public:
    explicit eval_command(CLI::App& parent) {
        app_ = parent.add_subcommand("eval", "Evaluate a model on one input (eos is appended)");
        add_model_option(app_, model_);
        auto* in = app_->add_option("--input,-i", input_,
                                    "Input string of single-character symbols of the alphabet; "
                                    "empty (`--input ''` or `--input=`) gives n = 1")
                       ->expected(0, 1);
        auto* file = app_->add_option("--input-file", input_file_,
                                      "Read the input from FILE ('-': standard input), for inputs "
                                      "of any length; whitespace (spaces, tabs, line breaks) is "
                                      "ignored, so the input may be wrapped over lines");
        in->excludes(file);
        file->excludes(in);
        in_opt_ = in;
        file_opt_ = file;
        app_->add_option("--scalar,-s", scalar_,
                         "Scalar kind: auto (exact for hard models when possible, else the cheapest of "
                         "interval, ball at rising precision that certifies --digits digits), " +
                             numeric::join_choice_names(numeric::choice_names(false), true))
            ->check(CLI::IsMember(numeric::choice_names(true)))
            ->capture_default_str();
        add_precision_option(app_, precision_, "Working precision in bits (mpfr, ball)");
        app_->add_option("--digits", digits_,
                         "Significant digits printed (default: what the precision supports; a ball's text "
                         "then shows only the digits its radius certifies, --digits D shows D)")
            ->transform(decimal_integer())->check(CLI::Range(1, 100000));
        app_->add_option("--precision-cap", precision_cap_,
                         "--scalar auto on a soft model: certified double intervals, then balls at "
                         "--precision doubled up to BITS, until every printed number certifies "
                         "--digits digits (default 12)")
            ->transform(decimal_integer())->check(CLI::Range(16L, 1L << 20))
            ->capture_default_str();
        app_->add_flag("--trace", trace_, "Print every layer's activations and attention");
        app_->add_flag("--prefixes", prefixes_,
                       "Also apply the readout at every position i (the prediction after x_1 .. "
                       "x_i of a causally masked model) and report the next-token cross-entropy "
                       "in bits where x_{i+1} is an output symbol");
        app_->add_flag("--json", json_, "Print one JSON object instead of text");
    }
    CLI::App* app() override { return app_; }

    int run(const report::provenance& /*made_by*/) override {
        if (in_opt_->count() == 0 && file_opt_->count() == 0)
            throw usage_error("eval needs --input STR or --input-file FILE");
        auto path = resolve_model(model_);
        model::model<numeric::rational> m = model::read_model_file(path.string());
        model::input_sequence x = file_opt_->count() ? read_input_file(m, input_file_)
                                                     : model::parse_input(m, input_);
        set_activity("evaluating " + m.name + " at n = " + std::to_string(x.size()) +
                     (trace_ ? " with --trace" : ""));
        analysis::eval_options opt;
        opt.scalar = *analysis::parse_scalar_choice(scalar_);
        opt.precision = precision_;
        opt.digits = digits_;
        opt.precision_cap = precision_cap_;
        opt.trace = trace_;
        opt.prefixes = prefixes_;
        analysis::evaluation ev = analysis::evaluate(m, x, opt);
        if (json_) std::cout << json::dump(report::eval_to_json(ev), 2) << "\n";
        else std::cout << report::eval_to_text(ev);
        return ev.undefined ? exit_undefined : exit_ok;
    }

private:
    CLI::App* app_ = nullptr;
    CLI::Option* in_opt_ = nullptr;
    CLI::Option* file_opt_ = nullptr;
    std::string model_, input_, input_file_, scalar_ = "auto";
    long precision_ = 256, precision_cap_ = 4096;
    int digits_ = 0;
    bool trace_ = false, prefixes_ = false, json_ = false;
};

} // namespace

std::unique_ptr<command> make_eval_command(CLI::App& parent) {
    return std::make_unique<eval_command>(parent);
}

} // namespace attnprop::cli
