// The block kernels of the certified double kernel's fold of one-symbol changes
// (incremental_influence<dinterval>::fold_interval; docs/scalars.md, "The fold by blocks of
// rows"). Each runs across the B rows of one block (at most a block's capacity, `stride`): the
// loops vectorise. fold_kernels.cpp is compiled once for the baseline instruction set and, on
// x86-64, once more for AVX2; kernels() picks the AVX2 set where the processor has it. Both sets
// evaluate the same expressions in the same order (no contraction into fused multiply-adds,
// no reassociation), so their results are the same bits: only the width of the vectors differs.
#pragma once

#include <cstddef>

namespace attnprop::attention::fold {

/// K, the midpoints, the moved bound's partial sums and the per-row terms of the rows
/// [i0, i0 + B) of a block (block_rows). Arrays "per head" are indexed [h n + i], "per head and
/// coordinate" [(h d + c) s + i], "per coordinate" [c s + i] (s = block_stride): the pointers
/// are at row i0.
struct block_rows_args {
    const double* cm = nullptr;  ///< coefficient k = 3 h + t of row b at [k stride + b]
    const double* cr = nullptr;  ///< their radii, the same layout
    std::size_t stride = 0;      ///< a block's capacity
    const double* gb = nullptr;  ///< per head: B_k of A_h b_{i,h} (largest |midpoint|)
    const double* gt = nullptr;  ///< per head: T_k of A_h b_{i,h} (largest radius)
    const double* gm = nullptr;  ///< per head and coordinate: the midpoints of A_h b_{i,h}
    const double* ym = nullptr;  ///< per coordinate: the midpoints of y^(1)
    std::size_t n = 0;           ///< the stride of the arrays per head
    std::size_t block_stride = 0; ///< the stride of the arrays per coordinate
    const double* bm = nullptr;  ///< A_h v_p (s = 0), A_h v'_p (s = 1): c at [(2h + s) d + c]
    const double* bb = nullptr;  ///< their B_k at [2h + s]
    const double* bt = nullptr;  ///< their T_k at [2h + s]
    const double* yrsum = nullptr; ///< per row: the sum over c of y_r,c
    std::size_t heads = 0, d = 0;
    double g = 0;                ///< g_(3H + 1)
    bool drop = false;           ///< incremental_fault::drop_fold_bound (tests only)
    bool drop_moved = false;     ///< incremental_fault::drop_moved_radius (tests only)
    double* K = nullptr;         ///< out: K of row b at [b]
    double* mid = nullptr;       ///< out: M_c of row b at [c stride + b]
    /// out: 16 arrays of `stride`: the partial sums of (M_c - y_m,c)^2 (4), of |M_c| (4), the
    /// smallest nonzero |M_c - y_m,c| (4), then r1, trad, m1 and the moved bound per row.
    double* sums = nullptr;
    std::size_t B = 0;
};

/// coefficients() of the B rows of one head: e in [el[b], eh[b]], f in [flo[b], fhi[b]], D in
/// [dlo[b], dhi[b]]; coefficient t at cm[t stride + b] and its radius at cr[t stride + b]; the
/// pair bound's weight quotient's parts at w_num[b], w_den[b]; ok[b] set to 0 where the row does
/// not take them (left as it is elsewhere).
struct coefficient_args {
    const double *el = nullptr, *eh = nullptr, *flo = nullptr, *fhi = nullptr, *dlo = nullptr,
                 *dhi = nullptr;
    double *cm = nullptr, *cr = nullptr;
    std::size_t stride = 0;
    double *w_num = nullptr, *w_den = nullptr, *ok = nullptr;
    std::size_t B = 0;
    bool midpoint = false; ///< incremental_fault::midpoint_omega (tests only)
};

/// One instruction set's kernels.
struct kernel_set {
    const char* name; ///< "baseline" or "avx2"
    /// out[b] = fl(a . m_b) over d coordinates (m_b's coordinate c at m[c stride + b]), summed
    /// in index order from 0.0: the operations of soft_rows<dinterval>::sums in the same order.
    void (*block_scores)(const double* a, std::size_t d, const double* m, std::size_t stride,
                         double* out, std::size_t B);
    /// table_entry of B entries of one column where every tau is below 1/2 (e[b] the tabled
    /// E, glo/ghi the growth factors, zero the zero bound): their ends at lo[b], hi[b].
    void (*table_column)(const double* e, const double* glo, const double* ghi,
                         const double* zero, double* lo, double* hi, std::size_t B);
    void (*coefficient_rows)(const coefficient_args& a);
    /// w_num[b] = fl(w_num[b] / w_den[b]); returns the largest of q and those quotients, and
    /// clears `valid` when a pair fails weight_valid.
    double (*quotient_max)(double* w_num, const double* w_den, std::size_t B, double q,
                           bool& valid);
    void (*block_rows)(const block_rows_args& a);
    /// Row-major copy of a block's midpoints: rows[b d + c] = mid[c stride + b].
    void (*to_rows)(const double* mid, std::size_t stride, std::size_t d, double* rows,
                    std::size_t B);
    /// A running maximum per coordinate and row of the block: acc[c stride + b] =
    /// max(acc[c stride + b], |mid[c stride + b]|) where mask[b] != 0 (elementwise, no
    /// reduction: the loop vectorises; the caller takes the largest over b at the end, which
    /// for finite values is the same whatever the order).
    void (*abs_max)(const double* mid, std::size_t stride, std::size_t d, const double* mask,
                    double* acc, std::size_t B);
};

/// The kernels for this processor: the AVX2 set where it was built and the processor has AVX2,
/// else the baseline set; the baseline set always when the environment variable
/// ATTNPROP_FOLD_KERNELS is `baseline` (read once).
const kernel_set& kernels();
/// The baseline set (every processor).
const kernel_set& baseline_kernels();
/// The AVX2 set, or nullptr where it was not built or the processor lacks AVX2.
const kernel_set* avx2_kernels();

} // namespace attnprop::attention::fold
