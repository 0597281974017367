// Suite `hard-limit`: Hahn (2020), Theorem 1 for random hard models at concrete n.
//
//  certificate-valid  T_L(n) = exact forward pass; y_n^(L) independent of Free \ D_L(n)  [exact]
//  free-fraction      |Free| = #* in ρ >= ⌈C n⌉ (undecided when the size guard pinned)   [exact]
//  parity-half        PARITY accuracy on the ρ-subcube is exactly 1/2 when Free ⊋ D     [exact]
//  parity-pair        the PARITY pair has equal outputs and different parity             [exact]
//
// Cases: a model from gen::hard_model (arbitrary maps), n from the length ladder, and params
// n, seed, c_num / c_den (C in {1/4, 1/2, 3/4}). Lengths are capped (256, resp. 16 for the
// exhaustive parity-half) so the suite stays within about a minute at 100 cases.
#include "props/hard_limit.hpp"

#include "attention/hard_exact.hpp"
#include "lang/languages.hpp"

#include "hard_limit/restriction_rows.hpp"

#include <limits>

namespace attnprop::props {

namespace {

rc::Gen<test_case> restriction_case(rc::Gen<model::model<rational>> models, const run_config& cfg,
                                    long n_cap) {
    return rc::gen::mapcat(
        rc::gen::pair(models_of(cfg, std::move(models)), lengths_of(cfg, std::max(2L, n_cap), 2)),
        [](const auto& mn) {
            const auto& m = mn.first; // not a structured binding: clang 14 cannot capture one
            const long n = std::max(2L, mn.second);
            return rc::gen::map(rc::gen::pair(rc::gen::inRange(0L, 1000L), rc::gen::inRange(0L, 3L)),
                                [m, n](const std::pair<long, long>& p) {
                                    test_case c;
                                    c.model = m;
                                    c.inputs.push_back(std::string(static_cast<std::size_t>(n - 1),
                                                                   m.sigma.symbols.front()[0]));
                                    static const long nums[] = {1, 1, 3};
                                    static const long dens[] = {4, 2, 4};
                                    c.params["n"] = n;
                                    c.params["seed"] = p.first;
                                    c.params["c_num"] = nums[p.second];
                                    c.params["c_den"] = dens[p.second];
                                    return c;
                                });
        });
}

gen::hard_bounds binary_bounds() {
    gen::hard_bounds b;
    b.max_alphabet = 2;
    return b;
}

long param(const test_case& c, const char* name, long fallback) {
    auto it = c.params.find(name);
    return it == c.params.end() ? fallback : it->second;
}

std::string positions(const std::vector<std::size_t>& v) {
    std::string s;
    for (std::size_t t = 0; t < v.size(); ++t) s += (t ? "," : "") + std::to_string(v[t] + 1);
    return "{" + s + "}";
}

/// check --model: the restriction lemma is about a recognizer, whose output is a symbol read
/// from y_n (a threshold or map readout); a softmax readout gives probabilities, of which the
/// lemma says nothing.
std::optional<std::string> recognizer_applies(const model::model<rational>& m) {
    if (!m.out.is_recognizer())
        return std::string("the restriction is of a recognizer (threshold or map readout); the "
                           "model's readout is softmax");
    return std::nullopt;
}

/// check --model: PARITY over the model's alphabet, classified by a recognizer readout.
std::optional<std::string> parity_applies(const model::model<rational>& m) {
    try {
        (void)analysis::language_symbols(m, lang::language::parity);
    } catch (const std::invalid_argument& e) {
        return std::string("needs the PARITY symbols: ") + e.what();
    }
    if (!m.out.is_recognizer())
        return std::string("classifying PARITY needs a recognizer readout (threshold or map); the "
                           "model's readout is softmax");
    return std::nullopt;
}

} // namespace

runner::case_shape restriction_shape(bool language_required, bool parity) {
    runner::case_shape s;
    s.model = runner::model_requirement::hard;
    s.min_inputs = 0;
    s.max_inputs = 2;
    const long most = std::numeric_limits<long>::max();
    s.params = {n_param(true),
                seed_param(false),
                {"c_num", 1, most, false, "with c_den the --free-fraction C, 0 < C < 1"},
                {"c_den", 2, most, false, "with c_num the --free-fraction C, 0 < C < 1"},
                {"trials", 0, 1000, false, "the range of --trials"},
                {"samples", 2, 100000, false, "the range of --samples"},
                {"fan_out", 0, 1, false, "--fan-out: 0 or 1"},
                {"language", 0, static_cast<long>(lang::all_languages().size()) - 1, language_required,
                 "a language: 0 parity, 1 first, 2 majority, 3 contains-one, 4 1dyck, 5 2dyck"}};
    s.relations = [parity](const test_case& c) -> std::optional<runner::case_problem> {
        const bool num = c.params.count("c_num") != 0, den = c.params.count("c_den") != 0;
        if (num != den)
            return runner::case_problem{"/params", std::string("c_num and c_den come together (C = "
                                                               "c_num / c_den); the case has only ") +
                                                       (num ? "c_num" : "c_den")};
        if (num && c.params.at("c_num") >= c.params.at("c_den"))
            return runner::case_problem{"/params/c_num", "C = c_num / c_den = " +
                                                             std::to_string(c.params.at("c_num")) + "/" +
                                                             std::to_string(c.params.at("c_den")) +
                                                             " is not below 1 (--free-fraction)"};
        std::vector<std::pair<lang::language, std::string>> needed;
        if (auto it = c.params.find("language"); it != c.params.end())
            needed.emplace_back(static_cast<lang::language>(it->second), "/params/language");
        if (parity) needed.emplace_back(lang::language::parity, "/model");
        for (const auto& [l, where] : needed) {
            try {
                (void)analysis::language_symbols(c.model, l);
            } catch (const std::invalid_argument& e) {
                return runner::case_problem{where, e.what()};
            }
            if (!c.model.out.is_recognizer())
                return runner::case_problem{"/model", std::string("classifying ") + lang::to_string(l) +
                                                          " needs a recognizer readout (threshold or "
                                                          "map); the model's readout is softmax"};
        }
        return std::nullopt;
    };
    return s;
}

analysis::certificate_options certificate_options_of(const test_case& c) {
    analysis::certificate_options o;
    o.seed = static_cast<std::uint64_t>(param(c, "seed", 1));
    o.samples = static_cast<int>(param(c, "samples", 16));
    o.threads = 1;
    return o;
}

analysis::language_options language_options_of(const test_case& c) {
    analysis::language_options lo;
    lo.restrict = restriction_options_of(c);
    lo.certify = certificate_options_of(c);
    return lo;
}

analysis::restriction_options restriction_options_of(const test_case& c) {
    analysis::restriction_options o;
    o.free_fraction = rational(param(c, "c_num", 1), param(c, "c_den", 2));
    o.seed = static_cast<std::uint64_t>(param(c, "seed", 1));
    o.trials = static_cast<int>(param(c, "trials", 0));
    o.fan_out_pass = param(c, "fan_out", 0) != 0;
    o.threads = 1;
    if (auto it = c.params.find("language"); it != c.params.end()) {
        const auto l = static_cast<lang::language>(it->second);
        o.pin_symbols = analysis::language_symbols(c.model, l);
    }
    return o;
}

runner::property certificate_valid(bool unsound, bool masked) {
    runner::property p;
    p.suite = "hard-limit";
    p.name = masked ? "masked-certificate-valid" : "certificate-valid";
    p.statement = masked ? "the restriction certificate of a hard model whose every layer is "
                           "causally masked is valid (theory.md 1.4): T_L(n) equals the exact "
                           "masked forward pass and y_n^(L) is bit-identical under re-assignments "
                           "of Free \\ D_L(n); the growth and counting checks hold"
                         : "the restriction certificate of a hard model is valid: the dependency "
                           "table T_L(n) equals the exact forward pass and y_n^(L) is "
                           "bit-identical under re-assignments of Free \\ D_L(n); the growth and "
                           "counting checks hold";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.negative_control = masked ? "a builder that ignores the mask (ranks every key of a masked "
                                  "row: analysis::detail::ignore_mask_for_testing)"
                                : "a candidate rule that ignores ties (drops the keys j < p* with "
                                  "hi_j = G: restriction_options::unsound_ignore_ties_for_testing)";
    p.generator = [masked](const run_config& cfg) {
        if (masked) return restriction_case(gen::causally_masked(gen::hard_model()), cfg, 1024);
        return restriction_case(gen::hard_model(), cfg, 256);
    };
    p.takes_masked = true;
    p.check = [unsound, masked](const test_case& c, const numeric::context&) {
        const long n = param(c, "n", 2);
        auto ro = restriction_options_of(c);
        // The masked property's control ignores the mask; the other's ignores ties.
        ro.unsound_ignore_ties_for_testing = unsound && !masked;
        struct mask_control {
            bool was;
            explicit mask_control(bool on) : was(analysis::detail::ignore_mask_for_testing()) {
                analysis::detail::ignore_mask_for_testing() = on;
            }
            ~mask_control() { analysis::detail::ignore_mask_for_testing() = was; }
            mask_control(const mask_control&) = delete;
            mask_control& operator=(const mask_control&) = delete;
        } control(unsound && masked);
        analysis::restriction r;
        analysis::certificate cert;
        if (auto it = c.params.find("language"); it != c.params.end()) {
            analysis::language_options lo = language_options_of(c);
            lo.restrict = ro;
            auto run = analysis::run_language(c.model, n, static_cast<lang::language>(it->second), lo);
            r = std::move(run.restr);
            cert = std::move(run.cert);
        } else {
            r = analysis::build_restriction(c.model, n, ro);
            cert = analysis::certify(c.model, r, certificate_options_of(c));
        }
        if (!cert.complete)
            return check_result::undecided("restriction incomplete: " + r.stop_reason);
        if (!cert.valid) {
            std::string msg;
            for (const auto& ch : cert.checks)
                if (ch.soundness && !ch.passed) msg += (msg.empty() ? "" : "; ") + ch.name + ": " + ch.detail;
            auto res = check_result::violated("invalid certificate: " + msg);
            res.with("n", std::to_string(n))
                .with("rho", r.rho_string(c.model.sigma))
                .with("dependency", positions(r.dependency));
            for (std::size_t t = 0; t < cert.failing_inputs.size(); ++t)
                res.with("input_" + std::to_string(t + 1), cert.failing_inputs[t])
                    .with("y_" + std::to_string(t + 1), show_vector(cert.failing_outputs[t]));
            if (!cert.expected.empty()) res.with("table_entry", show_vector(cert.expected));
            return res;
        }
        return check_result::holds();
    };
    if (masked)
        p.applies = [](const model::model<rational>& m) -> std::optional<std::string> {
            if (!model::all_causal(m)) return std::string("needs every layer causally masked");
            return recognizer_applies(m);
        };
    else
        p.applies = recognizer_applies;
    p.shape = restriction_shape();
    p.tag = case_class;
    return p;
}

runner::property free_fraction(restriction_fn builder) {
    if (!builder) builder = analysis::build_restriction;
    runner::property p;
    p.suite = "hard-limit";
    p.name = "free-fraction";
    p.takes_masked = true; // the builder ranks the keys j <= i of a masked row
    p.statement = "the restriction keeps |Free| >= ceil(C n) free inputs and counts them right "
                  "(|Free| = the number of * in rho); undecided when the size guard had to pin "
                  "below the budget and says so";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.negative_control = "a builder that reports one free input more than rho has";
    p.generator = [](const run_config& cfg) {
        return restriction_case(gen::hard_model(), cfg, 256);
    };
    p.check = [builder](const test_case& c, const numeric::context&) {
        const long n = param(c, "n", 2);
        const auto r = builder(c.model, n, restriction_options_of(c));
        std::size_t stars = 0;
        for (int v : r.rho) stars += v < 0 ? 1 : 0;
        if (stars != r.free_count)
            return check_result::violated("the reported free count differs from rho")
                .with("free_count", std::to_string(r.free_count))
                .with("stars_in_rho", std::to_string(stars))
                .with("rho", r.rho_string(c.model.sigma));
        if (r.free_budget_met()) return check_result::holds();
        std::size_t size_pins = 0;
        for (const auto& f : r.figures) size_pins += f.pinned_for_size;
        bool said = false;
        for (const auto& note : r.notes) said = said || note.find("free budget is not met") != std::string::npos;
        if (size_pins > 0 && said)
            return check_result::undecided("the size guard pinned " + std::to_string(size_pins) +
                                           " inputs below the budget (reported)");
        return check_result::violated("the budget is not met and the run does not say why")
            .with("free", std::to_string(r.free_count))
            .with("required", std::to_string(r.free_target));
    };
    p.applies = recognizer_applies;
    p.shape = restriction_shape();
    p.tag = case_class;
    return p;
}

runner::property parity_half(bool ignore_precondition) {
    runner::property p;
    p.suite = "hard-limit";
    p.name = "parity-half";
    p.takes_masked = true; // the restriction and the exact pass honour the mask
    p.statement = "PARITY accuracy of a binary hard model on the rho-subcube over {0,1} is "
                  "exactly 1/2 whenever Free is a proper superset of D_L(n) (exhaustive with the "
                  "exact forward pass on subcubes of at most 1024 inputs)";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.negative_control = "the same measurement without the precondition Free ⊋ D_L(n)";
    p.generator = [](const run_config& cfg) {
        return restriction_case(gen::hard_model(binary_bounds()), cfg, 16);
    };
    p.applies = parity_applies;
    p.check = [ignore_precondition](const test_case& c, const numeric::context&) {
        const long n = param(c, "n", 2);
        auto ro = restriction_options_of(c);
        ro.pin_symbols = analysis::language_symbols(c.model, lang::language::parity);
        const auto r = analysis::build_restriction(c.model, n, ro);
        if (r.status != analysis::restriction_status::complete)
            return check_result::undecided("restriction incomplete");
        std::vector<std::size_t> F;
        for (std::size_t t = 0; t < r.rho.size(); ++t)
            if (r.rho[t] < 0) F.push_back(t);
        if (F.size() == r.dependency.size() && !ignore_precondition)
            return check_result::holds("Free = D_L(n): not applicable");
        if (F.size() > 10) {
            analysis::language_options lo;
            lo.certify = certificate_options_of(c);
            auto res = analysis::analyse_language(c.model, r, lang::language::parity, lo);
            if (!res.accuracy || *res.accuracy != rational(1, 2) ||
                res.pairs_checked != static_cast<std::size_t>(lo.samples))
                return check_result::violated("PARITY accuracy on the subcube is not 1/2")
                    .with("accuracy", res.accuracy ? numeric::to_exact_string(*res.accuracy) : "none")
                    .with("pairs_confirmed", std::to_string(res.pairs_checked));
            return check_result::holds();
        }
        const int zero = c.model.sigma.index_of("0"), one = c.model.sigma.index_of("1");
        model::input_sequence x;
        for (int v : r.rho) x.push_back(v < 0 ? zero : v);
        x.push_back(c.model.sigma.eos_index());
        long correct = 0;
        const long total = 1L << F.size();
        for (long a = 0; a < total; ++a) {
            for (std::size_t u = 0; u < F.size(); ++u) x[F[u]] = (a >> u) & 1 ? one : zero;
            auto y = attention::hard_forward_exact(c.model, x, numeric::context{53}).y;
            const bool acc = attention::recognize(c.model.out, y, numeric::context{53}) ==
                             attention::verdict::accept;
            correct += acc == lang::member(lang::language::parity, model::format_input(c.model.sigma, x)) ? 1 : 0;
        }
        if (rational(correct, total) != rational(1, 2))
            return check_result::violated("PARITY accuracy on the subcube is not 1/2")
                .with("accuracy", numeric::to_exact_string(rational(correct, total)))
                .with("rho", r.rho_string(c.model.sigma))
                .with("dependency", positions(r.dependency));
        return check_result::holds();
    };
    p.shape = restriction_shape(false, true);
    p.tag = case_class;
    return p;
}

runner::property parity_pair(parity_pair_fn finder) {
    if (!finder)
        finder = [](const model::model<rational>& m, const analysis::restriction& r) {
            analysis::language_options lo;
            lo.samples = 4;
            lo.certify.threads = 1;
            return analysis::analyse_language(m, r, lang::language::parity, lo);
        };
    runner::property p;
    p.suite = "hard-limit";
    p.name = "parity-pair";
    p.takes_masked = true; // the restriction and the exact pass honour the mask
    p.statement = "the reported PARITY counterexample pair has equal outputs (recomputed with the "
                  "exact forward pass) and different parity, and the input named wrong is "
                  "misclassified";
    p.kinds = runner::kinds_of<numeric::rational>();
    p.negative_control = "a pair finder that flips a position inside D_L(n)";
    p.generator = [](const run_config& cfg) {
        return restriction_case(gen::hard_model(binary_bounds()), cfg, 256);
    };
    p.applies = parity_applies;
    p.check = [finder](const test_case& c, const numeric::context&) {
        const long n = param(c, "n", 2);
        auto ro = restriction_options_of(c);
        ro.pin_symbols = analysis::language_symbols(c.model, lang::language::parity);
        const auto r = analysis::build_restriction(c.model, n, ro);
        if (r.status != analysis::restriction_status::complete)
            return check_result::undecided("restriction incomplete");
        const auto res = finder(c.model, r);
        if (res.verdict != analysis::language_verdict::counterexample) {
            // Free ⊋ D_L(n) means a bit outside the dependency set exists, and flipping it is a
            // PARITY pair with equal outputs (theory.md §1.2): failing to report one is a bug.
            if (r.free_count > r.dependency.size())
                return check_result::violated("Free is a proper superset of D_L(n) but no PARITY "
                                              "pair was reported: " + res.explanation)
                    .with("rho", r.rho_string(c.model.sigma))
                    .with("dependency", positions(r.dependency));
            return check_result::holds("not applicable: Free = D_L(n) at this n");
        }
        numeric::context ctx{53};
        model::vec<rational> y[2];
        bool acc[2], mem[2];
        for (int t = 0; t < 2; ++t) {
            auto x = model::parse_input(c.model, res.inputs[t]);
            y[t] = attention::hard_forward_exact(c.model, x, ctx).y;
            acc[t] = attention::recognize(c.model.out, y[t], ctx) == attention::verdict::accept;
            mem[t] = lang::member(lang::language::parity, res.inputs[t]);
        }
        if (y[0] != y[1] || mem[0] == mem[1] || res.wrong < 0 || acc[res.wrong] == mem[res.wrong])
            return check_result::violated("the PARITY pair is not a counterexample")
                .with("input_1", res.inputs[0])
                .with("input_2", res.inputs[1])
                .with("y_1", show_vector(y[0]))
                .with("y_2", show_vector(y[1]))
                .with("wrong", std::to_string(res.wrong + 1));
        return check_result::holds();
    };
    p.shape = restriction_shape(false, true);
    p.tag = case_class;
    return p;
}

void register_hard_limit(runner::registry& r) {
    r.add(certificate_valid());
    r.add(free_fraction());
    r.add(parity_half());
    r.add(parity_pair());
}

} // namespace attnprop::props
