// The units of `attnprop restrict` over several lengths (restrict_plan.hpp).
#include "hard_limit/restrict_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnprop::analysis {

restrict_length_result restrict_length(const model::model<rational>& m, long n,
                                       const std::optional<lang::language>& l,
                                       const language_options& lo) {
    restrict_length_result out;
    if (l) {
        auto run = run_language(m, n, *l, lo);
        out.restr = std::move(run.restr);
        out.cert = std::move(run.cert);
        out.language = std::move(run.result);
    } else {
        out.restr = build_restriction(m, n, lo.restrict);
        out.cert = certify(m, out.restr, lo.certify);
    }
    return out;
}

restrict_plan::restrict_plan(const model::model<rational>& m, const language_options& lo,
                             std::optional<lang::language> l, const std::vector<long>& ns)
    : m_(m), lo_(lo), lang_(l), ns_(ns), lengths_(ns.size()) {}

restriction restrict_plan::restriction_unit(std::size_t i) const {
    const long n = ns_.at(i);
    return build_restriction(m_, n,
                             lang_ ? language_restriction_options(m_, n, *lang_, lo_) : lo_.restrict);
}

language_result restrict_plan::language_unit(const restriction& r) const {
    if (!lang_) throw std::runtime_error("attnprop: a language part without a language");
    return analyse_language(m_, r, *lang_, lo_);
}

std::vector<vec<rational>> restrict_plan::block_unit(const restriction& r, std::size_t b) const {
    const auto [first, count] = block(certificate_inputs(r, lo_.certify), b);
    return certificate_outputs(m_, r, lo_.certify, first, count);
}

std::shared_ptr<const restriction>
restrict_plan::hold_restriction(std::size_t i, const std::function<restriction()>& make) {
    if (i >= ns_.size())
        throw std::runtime_error("attnprop: restrict length " + std::to_string(i) + " of " +
                                 std::to_string(ns_.size()));
    std::lock_guard<std::mutex> lock(mu_);
    auto& r = lengths_[i].r;
    if (!r) r = std::make_shared<const restriction>(make());
    return r;
}

void restrict_plan::add_restriction(std::size_t i, restriction r, double seconds) {
    if (r.n != ns_.at(i))
        throw std::runtime_error("it holds the restriction of n = " + std::to_string(r.n) +
                                 " as n = " + std::to_string(ns_[i]));
    auto held = std::make_shared<const restriction>(std::move(r));
    length& x = lengths_[i];
    x.outputs.assign(blocks(certificate_inputs(*held, lo_.certify)), std::nullopt);
    x.seconds += seconds;
    std::lock_guard<std::mutex> lock(mu_);
    x.r = std::move(held);
}

const restriction& restrict_plan::held(std::size_t i, const char* what) const {
    if (i >= ns_.size() || !lengths_[i].r)
        throw std::runtime_error(std::string(what) + " of n = " +
                                 (i < ns_.size() ? std::to_string(ns_[i]) : "?") +
                                 " comes before its restriction");
    return *lengths_[i].r;
}

void restrict_plan::expect_part(std::size_t i, std::size_t k) const {
    (void)held(i, "a part");
    if (k == 0) {
        if (!lang_) throw std::runtime_error("a language part of a run without a language");
    } else if (k - 1 >= lengths_[i].outputs.size()) {
        throw std::runtime_error("block " + std::to_string(k - 1) + " of " +
                                 std::to_string(lengths_[i].outputs.size()));
    }
}

void restrict_plan::add_language(std::size_t i, language_result r, double seconds) {
    expect_part(i, 0);
    lengths_[i].lang = std::move(r);
    lengths_[i].seconds += seconds;
}

void restrict_plan::add_block(std::size_t i, std::size_t b, std::vector<vec<rational>> outputs,
                              double seconds) {
    expect_part(i, 1 + b);
    const restriction& r = *lengths_[i].r;
    length& x = lengths_[i];
    const std::size_t count = block(certificate_inputs(r, lo_.certify), b).second;
    if (outputs.size() != count)
        throw std::runtime_error("block " + std::to_string(b) + " holds " +
                                 std::to_string(outputs.size()) + " outputs, not " +
                                 std::to_string(count));
    x.outputs[b] = std::move(outputs);
    x.seconds += seconds;
}

void restrict_plan::clear() {
    std::lock_guard<std::mutex> lock(mu_);
    lengths_.assign(ns_.size(), length{});
}

bool restrict_plan::started(std::size_t i) const { return lengths_.at(i).r != nullptr; }

std::vector<std::size_t> restrict_plan::restriction_order(const std::vector<bool>& done) const {
    std::vector<std::size_t> order;
    for (std::size_t i : by_length())
        if (!done[i] && !lengths_[i].r) order.push_back(i);
    return order;
}

std::vector<std::size_t> restrict_plan::part_order(const std::vector<bool>& done) const {
    std::vector<std::size_t> order;
    for (std::size_t i : by_length()) {
        const length& x = lengths_[i];
        if (done[i] || !x.r) continue;
        if (lang_ && !x.lang) order.push_back(i * per_length);
        for (std::size_t b = 0; b < x.outputs.size(); ++b)
            if (!x.outputs[b]) order.push_back(i * per_length + 1 + b);
    }
    return order;
}

std::optional<restrict_length_result> restrict_plan::assemble(std::size_t i) const {
    const length& x = lengths_.at(i);
    if (!x.r || (lang_ && !x.lang)) return std::nullopt;
    for (const auto& ys : x.outputs)
        if (!ys) return std::nullopt;
    std::vector<vec<rational>> all;
    for (const auto& ys : x.outputs) all.insert(all.end(), ys->begin(), ys->end());
    restrict_length_result out;
    out.cert = certify_outputs(m_, *x.r, lo_.certify, all);
    out.restr = *x.r;
    out.language = x.lang;
    return out;
}

std::pair<std::size_t, std::size_t> restrict_plan::block(std::size_t count, std::size_t b) {
    const std::size_t nb = blocks(count);
    if (b >= nb)
        throw std::runtime_error("attnprop: block " + std::to_string(b) + " of " +
                                 std::to_string(nb));
    const std::size_t first = b * count / nb, end = (b + 1) * count / nb;
    return {first, end - first};
}

std::vector<std::size_t> restrict_plan::by_length() const {
    std::vector<std::size_t> order(ns_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ns_[a] > ns_[b]; });
    return order;
}

} // namespace attnprop::analysis
