#include "bench_models.hpp"

#include "model/model_file.hpp"

#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <tuple>

namespace attnprop::bench {

namespace {

/// Writes random rationals p / (mult q) with q in {7, 11, 13} and 0 < |p| <= q.
class rational_source {
public:
    rational_source(std::uint64_t seed, long mult) : rng_(seed), mult_(mult) {}

    std::string next() {
        static constexpr long dens[] = {7, 11, 13};
        const long q = dens[pick(0, 2)];
        long p = pick(1, q);
        if (pick(0, 1) == 0) p = -p;
        std::string s = "\"";
        s += std::to_string(p);
        s += '/';
        s += std::to_string(q * mult_);
        s += '"';
        return s;
    }
    /// A JSON array of `len` random rationals.
    std::string vector(std::size_t len) {
        std::string s = "[";
        for (std::size_t t = 0; t < len; ++t) {
            if (t) s += ", ";
            s += next();
        }
        return s + "]";
    }
    /// A JSON matrix (rows of arrays).
    std::string matrix(std::size_t rows, std::size_t cols) {
        std::string s = "[";
        for (std::size_t r = 0; r < rows; ++r) {
            if (r) s += ",\n  ";
            s += vector(cols);
        }
        return s + "]";
    }

private:
    long pick(long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng_); }
    std::mt19937_64 rng_;
    long mult_;
};

std::string model_json(const model_shape& sh, std::uint64_t seed, bool soft) {
    rational_source r(seed, soft ? 2 : 1);
    const std::size_t dk = sh.d / sh.heads;
    std::ostringstream o;
    o << R"({"format": "attnprop-model", "version": 1, "name": "bench-random", "attention": ")"
      << (soft ? "soft" : "hard") << R"(", "alphabet": ["0", "1"], "eos": "$", "d": )" << sh.d
      << ",\n\"token_embedding\": {\"0\": " << r.vector(sh.d) << ", \"1\": " << r.vector(sh.d)
      << ", \"$\": " << r.vector(sh.d) << "},\n\"positional\": {\"kind\": \"table\", \"rows\": "
      << r.matrix(sh.positions, sh.d) << "},\n\"input\": \"add\",\n\"layers\": [";
    for (std::size_t k = 0; k < sh.layers; ++k) {
        o << (k ? ",\n" : "") << "{\"heads\": [";
        for (std::size_t h = 0; h < sh.heads; ++h) {
            o << (h ? ",\n" : "") << R"({"score": {"kind": "dot", "Q": )" << r.matrix(dk, sh.d)
              << ", \"K\": " << r.matrix(dk, sh.d)
              << R"(, "scale": "default"}, "value": {"kind": "linear", "V": )"
              << r.matrix(dk, sh.d) << "}}";
        }
        if (sh.ffn) {
            o << "],\n\"update\": {\"kind\": \"graph\", \"nodes\": [\n"
              << R"({"id": "attn", "op": "linear", "in": "b", "W": )" << r.matrix(sh.d, sh.heads * dk)
              << "},\n"
              << R"({"id": "res", "op": "add", "in": ["y", "attn"]},)" << "\n"
              << R"({"id": "h", "op": "linear", "in": "res", "W": )" << r.matrix(2 * sh.d, sh.d)
              << ", \"b\": " << r.vector(2 * sh.d) << "},\n"
              << R"({"id": "act", "op": "relu", "in": "h"},)" << "\n"
              << R"({"id": "f", "op": "linear", "in": "act", "W": )" << r.matrix(sh.d, 2 * sh.d)
              << "},\n"
              << R"({"id": "out", "op": "add", "in": ["res", "f"]}], "output": "out"}})";
        } else {
            o << "],\n\"update\": {\"kind\": \"affine\", \"W\": "
              << r.matrix(sh.d, sh.d + sh.heads * dk) << ", \"b\": " << r.vector(sh.d) << "}}";
        }
    }
    o << "],\n";
    if (soft) {
        o << R"("readout": {"kind": "softmax", "symbols": ["0", "1"], "W": )" << r.matrix(2, sh.d)
          << R"(, "c": [0, 0]}})";
    } else {
        o << R"("readout": {"kind": "threshold", "w": )" << r.vector(sh.d) << R"(, "t": 0}})";
    }
    return o.str();
}

} // namespace

std::string random_soft_model_json(const model_shape& shape, std::uint64_t seed) {
    return model_json(shape, seed, true);
}

std::string random_hard_model_json(const model_shape& shape, std::uint64_t seed) {
    return model_json(shape, seed, false);
}

model::input_sequence random_input(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    model::input_sequence x(n, 2);
    for (std::size_t i = 0; i + 1 < n; ++i) x[i] = static_cast<int>(rng() & 1u);
    return x;
}

const random_case& cached_case(bench_kind kind, const model_shape& shape, std::uint64_t model_seed,
                              std::uint64_t input_seed) {
    using key = std::tuple<int, std::size_t, std::size_t, std::size_t, std::size_t, bool,
                           std::uint64_t, std::uint64_t>;
    static std::map<key, std::unique_ptr<random_case>> cache;
    auto& slot = cache[key{static_cast<int>(kind), shape.d, shape.heads, shape.layers,
                           shape.positions, shape.ffn, model_seed, input_seed}];
    if (!slot) {
        const bool soft = kind == bench_kind::soft;
        slot = std::make_unique<random_case>(random_case{
            model::parse_model(soft ? random_soft_model_json(shape, model_seed)
                                    : random_hard_model_json(shape, model_seed),
                               soft ? "bench-soft" : "bench-hard"),
            random_input(shape.positions, input_seed)});
    }
    return *slot;
}

} // namespace attnprop::bench
