// Explicit instantiation of the attention kernels for certified double intervals.
#include "attention/hard.hpp"
#include "attention/soft.hpp"

namespace attnprop::attention {
using numeric::dinterval;
template hard_output<dinterval> hard_forward(const model::model<dinterval>&, const input_sequence&,
                                             const numeric::context&, bool);
template soft_output<dinterval> soft_forward(const model::model<dinterval>&, const input_sequence&,
                                             const numeric::context&, soft_options);
} // namespace attnprop::attention
