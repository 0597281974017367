// Lengths and inputs of the property cases (generators.hpp: length, input, language_input).
#include "gen/generators.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace attnprop::gen {

rc::Gen<long> length(long max_n) {
    std::vector<long> ladder;
    for (long v = 1; v <= max_n; v *= 2) {
        ladder.push_back(v);
        if (v > max_n / 2) break;
    }
    if (ladder.empty()) ladder.push_back(1);
    return rc::gen::map(rc::gen::tuple(rc::gen::inRange(0, 8),
                                       rc::gen::inRange<std::size_t>(0, ladder.size()),
                                       rc::gen::inRange<long>(1, std::max(1L, max_n) + 1)),
                        [ladder](std::tuple<int, std::size_t, long> t) {
                            return std::get<0>(t) == 7 ? std::get<2>(t) : ladder[std::get<1>(t)];
                        });
}

namespace {

std::string symbol_chars(const model::alphabet& sigma) {
    std::string chars;
    for (const auto& s : sigma.symbols) chars += s.empty() ? '?' : s.front();
    return chars;
}

} // namespace

rc::Gen<std::string> input(const model::alphabet& sigma, long n) {
    const std::string chars = symbol_chars(sigma);
    const auto len = static_cast<std::size_t>(n > 1 ? n - 1 : 0);
    return rc::gen::map(
        rc::gen::container<std::vector<std::size_t>>(
            len, rc::gen::resize(rc::kNominalSize,
                                 rc::gen::inRange<std::size_t>(0, chars.size()))),
        [chars](const std::vector<std::size_t>& idx) {
            std::string w;
            w.reserve(idx.size());
            for (std::size_t k : idx) w += chars[k];
            return w;
        });
}

rc::Gen<std::string> language_input(lang::language l, const model::alphabet& sigma, long n) {
    const std::string chars = symbol_chars(sigma);
    const std::string lang_chars = lang::alphabet_of(l);
    const auto len = static_cast<std::size_t>(n > 1 ? n - 1 : 0);
    const bool dyck = l == lang::language::dyck1 || l == lang::language::dyck2;
    return rc::gen::map(
        rc::gen::resize(rc::kNominalSize,
                        rc::gen::tuple(rc::gen::inRange(0, 1 << 30), rc::gen::inRange(0, 2))),
        [=](std::tuple<int, int> t) {
            std::mt19937_64 rng(static_cast<std::uint64_t>(std::get<0>(t)));
            std::string w;
            if (dyck && std::get<1>(t) == 1) {
                w = lang::random_dyck_word(len - len % 2, l == lang::language::dyck1 ? 1 : 2, rng);
                if (len % 2 == 1) w += lang_chars.front();
            } else {
                w = lang::uniform_word(l, len, rng);
            }
            std::string out;
            out.reserve(w.size());
            for (char c : w) {
                const std::size_t k = lang_chars.find(c);
                out += chars[(k == std::string::npos ? 0 : k) % chars.size()];
            }
            return out;
        });
}

} // namespace attnprop::gen
