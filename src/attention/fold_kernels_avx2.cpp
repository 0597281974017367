// The fold's block kernels compiled for AVX2 (CMakeLists.txt adds -mavx2 to this file alone):
// the same source as the baseline set, in namespace fold::avx2 (fold_kernels.cpp).
#define ATTNPROP_FOLD_AVX2 1
#include "attention/fold_kernels.cpp"
