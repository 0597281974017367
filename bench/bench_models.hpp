#pragma once
/// @file bench_models.hpp
/// Random benchmark models (fixed seeds) written as model-file JSON, so that the benchmarks go
/// through the same parser and conversions as a user's model, and random inputs.

#include "model/model.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnprop::bench {

/// Shape of a random benchmark model: `layers` layers of `heads` dot-product heads of width
/// d / heads (linear values), an affine update F(y, b) = W (y, b_1, ..., b_H) + c, token
/// embeddings and a positional table of `positions` random rows, all random rationals. With
/// `ffn`, the update is a transformer block instead: an output projection of b, a residual,
/// and a ReLU feed-forward layer of width 2d with its own residual (a graph map).
struct model_shape {
    std::size_t d = 16;
    std::size_t heads = 2;
    std::size_t layers = 1;
    std::size_t positions = 256;
    bool ffn = false;
};

/// A random soft model (default scale 1/sqrt(d_k), softmax readout). Entries are p / (2 q) with
/// q in {7, 11, 13} and 0 < |p| <= q, so weights lie in [-1/2, 1/2] and scores are O(1).
std::string random_soft_model_json(const model_shape& shape, std::uint64_t seed);

/// A random hard model (threshold readout). Entries are p / q with q in {7, 11, 13} and
/// 0 < |p| <= q: nothing is dyadic, so scores are never exact doubles and ties are unlikely.
std::string random_hard_model_json(const model_shape& shape, std::uint64_t seed);

/// n - 1 uniformly random symbols of {0, 1} followed by eos (symbol index 2).
model::input_sequence random_input(std::size_t n, std::uint64_t seed);

/// A benchmark case: a random exact model of a shape and one random input of its length.
struct random_case {
    model::model<numeric::rational> exact;
    model::input_sequence x;
};

enum class bench_kind { soft, hard };

/// The case of (kind, shape, seeds), with x of length shape.positions, built on first use and
/// kept for the life of the process (benchmarks of every scalar share it; building is never
/// timed).
const random_case& cached_case(bench_kind kind, const model_shape& shape, std::uint64_t model_seed,
                              std::uint64_t input_seed);

} // namespace attnprop::bench
