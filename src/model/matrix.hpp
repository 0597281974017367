#pragma once
/// @file matrix.hpp
/// Dense row-major matrices and affine maps over any scalar, with the nonzero pattern of the
/// exact source kept so that products skip exact zeros (paper constructions are mostly zeros).

#include "numeric/scalar.hpp"

#include <cstddef>
#include <type_traits>
#include <vector>

namespace attnprop::model {

using numeric::rational;

/// Vector of scalars.
template <class S> using vec = std::vector<S>;

/// rows x cols matrix, row-major; `nonzero[r]` lists the columns where row r is not exactly 0
/// (computed from the exact entries and carried through conversions).
template <class S> struct matrix {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<S> data;
    std::vector<std::vector<std::size_t>> nonzero;

    S& at(std::size_t r, std::size_t c) { return data[r * cols + c]; }
    const S& at(std::size_t r, std::size_t c) const { return data[r * cols + c]; }
    /// True when every entry is exactly zero.
    bool is_zero() const {
        for (const auto& row : nonzero)
            if (!row.empty()) return false;
        return true;
    }
};

/// A rows x cols exact matrix from row vectors (all of length cols), with its nonzero pattern.
matrix<rational> make_matrix(std::size_t rows, std::size_t cols, std::vector<rational> data);

/// Converts every entry with from_rational<S>, keeping the nonzero pattern.
template <numeric::Scalar S>
matrix<S> convert(const matrix<rational>& m, const numeric::context& ctx) {
    matrix<S> out;
    out.rows = m.rows;
    out.cols = m.cols;
    out.nonzero = m.nonzero;
    out.data.reserve(m.data.size());
    for (const auto& q : m.data) out.data.push_back(numeric::from_rational<S>(q, ctx));
    return out;
}

template <numeric::Scalar S> vec<S> convert(const vec<rational>& v, const numeric::context& ctx) {
    vec<S> out;
    out.reserve(v.size());
    for (const auto& q : v) out.push_back(numeric::from_rational<S>(q, ctx));
    return out;
}

/// x -> W x + b. An empty `b` means no bias.
template <class S> struct affine_map {
    matrix<S> W;
    vec<S> b;
    std::size_t in_dim() const { return W.cols; }
    std::size_t out_dim() const { return W.rows; }
    /// True when W and b are exactly zero.
    bool is_zero() const { return W.is_zero() && b_is_zero; }
    bool b_is_zero = true;
};

template <numeric::Scalar S>
affine_map<S> convert(const affine_map<rational>& a, const numeric::context& ctx) {
    return {convert<S>(a.W, ctx), convert<S>(a.b, ctx), a.b_is_zero};
}

/// out = W x (+ b), writing into `out` (resized). x points at W.cols scalars.
/// (numeric::dot_acc: repeated fma_acc, or a kind's faster rigorous overload; for intervals
/// the same as fma_acc term by term on points, one fast pass with a final error bound
/// otherwise.)
template <numeric::Scalar S>
void apply_affine(const affine_map<S>& a, const S* x, vec<S>& out, const numeric::context& ctx) {
    out.clear();
    out.reserve(a.W.rows);
    for (std::size_t r = 0; r < a.W.rows; ++r) {
        S acc = a.b.empty() ? numeric::zero<S>(ctx) : a.b[r];
        const S* w = a.W.data.data() + r * a.W.cols;
        const auto& nz = a.W.nonzero[r];
        acc = numeric::dot_acc(std::move(acc), w, x, nz.data(), nz.size());
        out.push_back(std::move(acc));
    }
}

template <numeric::Scalar S>
vec<S> apply_affine(const affine_map<S>& a, const vec<S>& x, const numeric::context& ctx) {
    vec<S> out;
    apply_affine(a, x.data(), out, ctx);
    return out;
}

/// Dot product of two vectors of equal length (0 for length 0).
template <numeric::Scalar S>
S dot(const S* a, const S* b, std::size_t len, const numeric::context& ctx) {
    return numeric::dot_acc(numeric::zero<S>(ctx), a, b, len);
}

} // namespace attnprop::model
