#include "numeric/limits.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>

namespace attnprop::numeric {

namespace {

constexpr std::array<limit_spec, 11> specs{{
    {limit::exact_bits, "exact-bits", std::uint64_t{1} << 16, "bits",
     "bits of a numerator or denominator during exact evaluation"},
    {limit::readout_symbols, "readout-symbols", 4096, "symbols",
     "output symbols of a softmax readout"},
    {limit::graph_nodes, "graph-nodes", 10000, "nodes", "nodes of one graph map"},
    {limit::table_entries, "table-entries", std::uint64_t{1} << 16, "entries",
     "entries of one table map, rows of a positional table"},
    {limit::trace_bytes, "trace-bytes", std::uint64_t{1} << 30, "bytes",
     "estimated memory of eval --trace"},
    {limit::attention_work, "attention-work", std::uint64_t{1} << 40, "score terms",
     "score terms of one forward pass (sum over layers of H n^2 d_k)"},
    {limit::layers, "layers", 1024, "layers", "layers of a model"},
    {limit::heads, "heads", 1024, "heads", "heads of one layer"},
    {limit::mlp_layers, "mlp-layers", 1024, "layers", "layers of one mlp map"},
    {limit::width, "width", std::uint64_t{1} << 14, "coordinates",
     "the width d and every dimension a model file sets or a graph node makes"},
    {limit::model_numbers, "model-numbers", 1,
     "x the file's bytes, and at least 2^18 numbers",
     "numbers a model file holds once read (every matrix entry, however written), per byte of "
     "the file; a file of any size may hold 2^18"},
}};

std::array<std::atomic<std::uint64_t>, specs.size()> values{};

std::uint64_t parse_value(std::string_view name, std::string_view text) {
    auto bad = [&](const std::string& why) {
        return std::invalid_argument(std::string(name) + ": " + why);
    };
    if (text.empty()) throw bad("missing value (NAME=VALUE, e.g. exact-bits=1M)");
    unsigned shift = 0;
    switch (text.back()) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: break;
    }
    std::string_view digits = shift ? text.substr(0, text.size() - 1) : text;
    if (digits.empty() || digits.size() > 19)
        throw bad("'" + std::string(text) + "' is not a positive integer (suffixes K, M, G, T)");
    std::uint64_t v = 0;
    for (char c : digits) {
        if (c < '0' || c > '9')
            throw bad("'" + std::string(text) + "' is not a positive integer (suffixes K, M, G, T)");
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (v == 0) throw bad("the value must be at least 1");
    if (shift && v > (~std::uint64_t{0} >> shift)) throw bad("'" + std::string(text) + "' is too large");
    return v << shift;
}

void apply_limit_text(std::string_view text);
void apply_limits_text(std::string_view text);

std::string known_names() {
    std::string s;
    for (const auto& sp : specs) s += (s.empty() ? "" : ", ") + std::string(sp.name);
    return s;
}

// Defaults, then ATTNPROP_LIMITS, exactly once before the first read or write.
void ensure_initialised() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (std::size_t k = 0; k < specs.size(); ++k)
            values[k].store(specs[k].default_value, std::memory_order_relaxed);
        if (const char* env = std::getenv("ATTNPROP_LIMITS"); env && *env) {
            try {
                apply_limits_text(env);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(std::string("ATTNPROP_LIMITS: ") + e.what());
            }
        }
    });
}

void apply_limit_text(std::string_view text) {
    const auto eq = text.find('=');
    const std::string_view name = text.substr(0, eq);
    const limit_spec* found = nullptr;
    for (const auto& sp : specs)
        if (sp.name == name) found = &sp;
    if (!found)
        throw std::invalid_argument("unknown limit '" + std::string(name) + "' (known: " +
                                    known_names() + ")");
    if (eq == std::string_view::npos)
        throw std::invalid_argument(std::string(name) +
                                    ": missing value (NAME=VALUE, e.g. exact-bits=1M)");
    const std::uint64_t v = parse_value(name, text.substr(eq + 1));
    values[static_cast<std::size_t>(found->id)].store(v, std::memory_order_relaxed);
}

void apply_limits_text(std::string_view text) {
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        std::string_view item = text.substr(start, comma - start);
        if (!item.empty()) apply_limit_text(item);
        start = comma + 1;
    }
}

} // namespace

std::span<const limit_spec> limit_specs() { return specs; }

const limit_spec& spec_of(limit which) { return specs[static_cast<std::size_t>(which)]; }

std::uint64_t limit_value(limit which) {
    ensure_initialised();
    return values[static_cast<std::size_t>(which)].load(std::memory_order_relaxed);
}

void set_limit(limit which, std::uint64_t value) {
    ensure_initialised();
    values[static_cast<std::size_t>(which)].store(value < 1 ? 1 : value, std::memory_order_relaxed);
}

void set_limit_text(std::string_view text) {
    ensure_initialised();
    apply_limit_text(text);
}

void set_limits_text(std::string_view text) {
    ensure_initialised();
    apply_limits_text(text);
}

void reset_limits() {
    ensure_initialised();
    for (std::size_t k = 0; k < specs.size(); ++k)
        values[k].store(specs[k].default_value, std::memory_order_relaxed);
}

std::string how_to_raise(limit which) {
    const std::string name(spec_of(which).name);
    return "--limit " + name + "=N (or ATTNPROP_LIMITS=" + name + "=N)";
}

limit_error::limit_error(limit which, std::uint64_t value, const std::string& what)
    : std::runtime_error(what + ", above the limit " + std::string(spec_of(which).name) + " = " +
                         std::to_string(limit_value(which)) + " " +
                         std::string(spec_of(which).unit) + "; raise it with " +
                         how_to_raise(which)),
      which_(which), value_(value), quantity_(what) {}

limit_error limit_error::located(const std::string& where) const {
    return limit_error(which_, value_, quantity_ + where);
}

std::uint64_t model_numbers_budget(std::uint64_t file_bytes) {
    constexpr std::uint64_t floor = std::uint64_t{1} << 18;
    const std::uint64_t per_byte = limit_value(limit::model_numbers);
    const std::uint64_t scaled = file_bytes != 0 && per_byte > ~std::uint64_t{0} / file_bytes
                                     ? ~std::uint64_t{0}
                                     : per_byte * file_bytes;
    return std::max(floor, scaled);
}

void check_limit(limit which, std::uint64_t value, const std::string& what) {
    if (value > limit_value(which)) throw limit_error(which, value, what);
}

} // namespace attnprop::numeric
