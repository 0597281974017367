#pragma once
/// @file baselines.hpp
/// The "straightforward loops" of the budgets in docs/performance.md: one soft layer (dot-product
/// heads, linear values, affine update), every position computed, written directly against
/// doubles, MPFR and Arb with every buffer preallocated. attnprop's kernels are measured
/// against these. Weights and initial states are copied from attnprop's converted model, so
/// both compute the same function from the same numbers.

#include "model/model.hpp"

#include <arb.h>
#include <mpfr.h>

#include <cstddef>
#include <vector>

namespace attnprop::bench {

/// Dimensions of the benchmark layer.
struct layer_dims {
    std::size_t n = 0;  ///< positions
    std::size_t d = 0;  ///< width of y
    std::size_t H = 0;  ///< heads
    std::size_t dk = 0; ///< query/key width per head
    std::size_t dv = 0; ///< value width per head
    std::size_t du() const { return d + H * dv; } ///< input width of the update
};

/// Plain C++ double loops: scores, max shift, std::exp, weighted sum, affine update.
class double_soft_baseline {
public:
    double_soft_baseline(const model::model<double>& m, const std::vector<model::vec<double>>& y0);
    /// Computes y^(1) at every position; returns y_n^(1) (d values).
    const double* run();
    const layer_dims& dims() const { return dm_; }

private:
    layer_dims dm_;
    double scale_ = 1;
    std::vector<double> y_, y1_, q_w_, k_w_, v_w_, u_w_, u_b_;
    std::vector<double> keys_, values_, q_, s_, num_, in_;
};

/// Owns `count` mpfr_t initialised at a given precision (set to 0).
class mpfr_array {
public:
    mpfr_array(std::size_t count, long precision_bits);
    ~mpfr_array();
    mpfr_array(const mpfr_array&) = delete;
    mpfr_array& operator=(const mpfr_array&) = delete;
    mpfr_ptr operator[](std::size_t t) { return &v_[t]; }
    mpfr_srcptr operator[](std::size_t t) const { return &v_[t]; }

private:
    std::vector<__mpfr_struct> v_;
};

/// A straightforward MPFR loop: mpfr_t arrays preallocated at the working precision,
/// mpfr_fma for every product, mpfr_exp, no allocation in the loop.
class mpfr_soft_baseline {
public:
    mpfr_soft_baseline(const model::model<numeric::mpfr_real>& m,
                       const std::vector<model::vec<numeric::mpfr_real>>& y0, long precision_bits);
    /// Computes y^(1) at every position; returns y_n^(1) as doubles (for checking).
    std::vector<double> run();

private:
    layer_dims dm_;
    mpfr_array scale_, y_, y1_, q_w_, k_w_, v_w_, u_w_, u_b_;
    mpfr_array keys_, values_, q_, s_, num_, in_, den_, e_, t_;
};

/// Owns a contiguous Arb vector (so that arb_dot can run over it with a stride).
class arb_array {
public:
    explicit arb_array(std::size_t count);
    ~arb_array();
    arb_array(const arb_array&) = delete;
    arb_array& operator=(const arb_array&) = delete;
    arb_ptr operator[](std::size_t t) { return v_ + t; }
    arb_srcptr operator[](std::size_t t) const { return v_ + t; }

private:
    arb_ptr v_;
    std::size_t size_;
};

/// A straightforward Arb loop: contiguous arb_t arrays, arb_dot for every dot product (the
/// projections, the scores and the strided weighted sum), arb_exp.
class arb_soft_baseline {
public:
    arb_soft_baseline(const model::model<numeric::arb_ball>& m,
                      const std::vector<model::vec<numeric::arb_ball>>& y0, long precision_bits);
    /// Computes y^(1) at every position; returns the midpoints of y_n^(1) (for checking).
    std::vector<double> run();

private:
    layer_dims dm_;
    long prec_;
    arb_array scale_, y_, y1_, q_w_, k_w_, v_w_, u_w_, u_b_;
    arb_array keys_, values_, q_, s_, e_, num_, in_, den_, shift_, t_;
};

} // namespace attnprop::bench
