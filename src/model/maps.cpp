#include "model/maps.hpp"

#include <cstdio>
#include <stdexcept>

namespace attnprop::model {

bool map_features::uses(activation a) const {
    for (auto b : activations)
        if (b == a) return true;
    return false;
}

namespace {

constexpr std::uint64_t fnv_offset = 14695981039346656037ULL;
constexpr std::uint64_t fnv_prime = 1099511628211ULL;

void fnv1a(std::uint64_t& h, std::string_view bytes) {
    for (char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= fnv_prime;
    }
}

std::uint64_t splitmix64_finalize(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

} // namespace

std::vector<rational> hash_output(const hash_map& h, std::size_t out_dim,
                                  const std::vector<rational>& input) {
    if (h.range < 0 || h.denominator < 1)
        throw std::invalid_argument("hash map with a negative range or a denominator below 1");
    // The input part of the hashed text is the same for every coordinate.
    std::string values;
    for (const auto& q : input) {
        values += ';';
        values += numeric::to_exact_string(q);
    }
    char seed_hex[17];
    std::snprintf(seed_hex, sizeof seed_hex, "%016llx", static_cast<unsigned long long>(h.seed));
    const std::uint64_t modulus = 2 * static_cast<std::uint64_t>(h.range) + 1;
    std::vector<rational> out;
    out.reserve(out_dim);
    for (std::size_t c = 0; c < out_dim; ++c) {
        std::uint64_t x = fnv_offset;
        fnv1a(x, seed_hex);
        fnv1a(x, ";" + std::to_string(c));
        fnv1a(x, values);
        x = splitmix64_finalize(x);
        // r - range computed without overflow: both differences below are in [0, range].
        const std::uint64_t r = x % modulus;
        const auto range = static_cast<std::uint64_t>(h.range);
        long v = r >= range ? static_cast<long>(r - range) : -static_cast<long>(range - r);
        out.emplace_back(v, h.denominator);
    }
    return out;
}

} // namespace attnprop::model
