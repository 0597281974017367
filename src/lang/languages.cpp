#include "lang/languages.hpp"
#include "util/precondition.hpp"

#include <algorithm>
#include <stdexcept>

namespace attnprop::lang {

const std::vector<language>& all_languages() {
    static const std::vector<language> all = {language::parity,       language::first,
                                              language::majority,     language::contains_one,
                                              language::dyck1,        language::dyck2};
    return all;
}

const char* to_string(language l) {
    switch (l) {
    case language::parity: return "parity";
    case language::first: return "first";
    case language::majority: return "majority";
    case language::contains_one: return "contains-one";
    case language::dyck1: return "1dyck";
    case language::dyck2: return "2dyck";
    }
    return "?";
}

std::optional<language> parse_language(std::string_view name) {
    for (auto l : all_languages())
        if (name == to_string(l)) return l;
    return std::nullopt;
}

std::string language_names() {
    std::string out;
    for (auto l : all_languages()) {
        if (!out.empty()) out += ", ";
        out += to_string(l);
    }
    return out;
}

std::string alphabet_of(language l) {
    switch (l) {
    case language::dyck1: return "()";
    case language::dyck2: return "()[]";
    default: return "01";
    }
}

namespace {

bool balanced(std::string_view w, std::string_view open, std::string_view close) {
    std::vector<char> stack;
    for (char c : w) {
        if (auto p = open.find(c); p != std::string_view::npos) {
            stack.push_back(close[p]);
        } else if (close.find(c) != std::string_view::npos) {
            if (stack.empty() || stack.back() != c) return false;
            stack.pop_back();
        } else {
            return false;
        }
    }
    return stack.empty();
}

bool binary(std::string_view w) {
    return std::all_of(w.begin(), w.end(), [](char c) { return c == '0' || c == '1'; });
}

} // namespace

bool member(language l, std::string_view w) {
    switch (l) {
    case language::parity:
        return binary(w) && std::count(w.begin(), w.end(), '1') % 2 == 1;
    case language::first: return binary(w) && !w.empty() && w.front() == '1';
    case language::majority: {
        if (!binary(w)) return false;
        auto ones = std::count(w.begin(), w.end(), '1');
        return 2 * ones > static_cast<long>(w.size());
    }
    case language::contains_one: return binary(w) && w.find('1') != std::string_view::npos;
    case language::dyck1: return balanced(w, "(", ")");
    case language::dyck2: return balanced(w, "([", ")]");
    }
    return false;
}

std::string uniform_word(language l, std::size_t length, std::mt19937_64& rng) {
    std::string a = alphabet_of(l);
    std::uniform_int_distribution<std::size_t> pick(0, a.size() - 1);
    std::string w;
    w.reserve(length);
    for (std::size_t t = 0; t < length; ++t) w += a[pick(rng)];
    return w;
}

std::string random_dyck_word(std::size_t length, int types, std::mt19937_64& rng) {
    if (length % 2 != 0) throw precondition_error("a Dyck word has even length");
    if (types != 1 && types != 2) throw precondition_error("1 or 2 bracket types");
    // Uniform over Dyck paths: choose an up-step with probability proportional to the number
    // of completions (ballot numbers), computed incrementally as a ratio.
    const std::size_t half = length / 2;
    std::string w;
    std::vector<char> stack;
    std::size_t opens = 0, depth = 0;
    std::uniform_int_distribution<int> type(0, types - 1);
    for (std::size_t pos = 0; pos < length; ++pos) {
        const std::size_t remaining = length - pos;
        bool can_open = opens < half;
        bool can_close = depth > 0;
        bool open = false;
        if (can_open && !can_close) open = true;
        else if (can_open && can_close) {
            // Number of paths from (remaining, depth) to (0,0) staying >= 0 after a step:
            // N(r, h) = (h + 1) / (r + 1) * C(r + 1, (r - h) / 2) ... use the ratio
            // P(open) = (h + 2)(r - h) / (2 r (h + 1)) for a uniform Dyck path.
            double r = static_cast<double>(remaining), h = static_cast<double>(depth);
            double p_open = (h + 2.0) * (r - h) / (2.0 * r * (h + 1.0));
            open = std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p_open;
        }
        if (open) {
            int t = type(rng);
            w += t == 0 ? '(' : '[';
            stack.push_back(t == 0 ? ')' : ']');
            ++opens;
            ++depth;
        } else {
            w += stack.back();
            stack.pop_back();
            --depth;
        }
    }
    return w;
}

std::vector<std::string> all_words(std::string_view alphabet, std::size_t length) {
    std::vector<std::string> out{""};
    for (std::size_t t = 0; t < length; ++t) {
        std::vector<std::string> next;
        next.reserve(out.size() * alphabet.size());
        for (const auto& w : out)
            for (char c : alphabet) next.push_back(w + c);
        out = std::move(next);
    }
    return out;
}

} // namespace attnprop::lang
