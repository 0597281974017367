// Explicit instantiation of the attention kernels for MPFR reals.
#include "attention/hard.hpp"
#include "attention/soft.hpp"

namespace attnprop::attention {
using numeric::mpfr_real;
template hard_output<mpfr_real> hard_forward(const model::model<mpfr_real>&, const input_sequence&,
                                             const numeric::context&, bool);
template soft_output<mpfr_real> soft_forward(const model::model<mpfr_real>&, const input_sequence&,
                                             const numeric::context&, soft_options);
} // namespace attnprop::attention
