// Explicit instantiation of the attention kernels for double.
#include "attention/hard.hpp"
#include "attention/soft.hpp"

namespace attnprop::attention {
template hard_output<double> hard_forward(const model::model<double>&, const input_sequence&,
                                          const numeric::context&, bool);
template soft_output<double> soft_forward(const model::model<double>&, const input_sequence&,
                                          const numeric::context&, soft_options);
} // namespace attnprop::attention
