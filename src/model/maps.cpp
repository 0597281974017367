#include "model/maps.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>

#include <gmp.h>

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

// Appends to_exact_string(q) to out: "p" or "p/q" in decimal. Numbers of a long each are
// written without a temporary string (hash maps are evaluated once per row and layer, and the
// text of their inputs was a tenth of a hard model's exact pass); the others as before.
void append_exact_text(std::string& out, const rational& q) {
    mpq_srcptr v = q.backend().data();
    if (mpz_fits_slong_p(mpq_numref(v)) && mpz_fits_slong_p(mpq_denref(v))) {
        char buf[48];
        char* end = std::to_chars(buf, buf + sizeof buf, mpz_get_si(mpq_numref(v))).ptr;
        const long den = mpz_get_si(mpq_denref(v));
        if (den != 1) {
            *end++ = '/';
            end = std::to_chars(end, buf + sizeof buf, den).ptr;
        }
        out.append(buf, end);
        return;
    }
    out += numeric::to_exact_string(q);
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
    values.reserve(8 * input.size());
    for (const auto& q : input) {
        values += ';';
        append_exact_text(values, q);
    }
    char seed_hex[17];
    std::snprintf(seed_hex, sizeof seed_hex, "%016llx", static_cast<unsigned long long>(h.seed));
    // The hashed text is seed_hex ";" c values: its prefix is hashed once.
    std::uint64_t seeded = fnv_offset;
    fnv1a(seeded, std::string_view(seed_hex, 16));
    const std::uint64_t modulus = 2 * static_cast<std::uint64_t>(h.range) + 1;
    std::vector<rational> out;
    out.reserve(out_dim);
    for (std::size_t c = 0; c < out_dim; ++c) {
        std::uint64_t x = seeded;
        char index[24];
        index[0] = ';';
        char* end = std::to_chars(index + 1, index + sizeof index, c).ptr;
        fnv1a(x, std::string_view(index, static_cast<std::size_t>(end - index)));
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
