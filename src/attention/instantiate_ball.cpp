// Explicit instantiation of the attention kernels for Arb balls.
#include "attention/hard.hpp"
#include "attention/soft.hpp"

namespace attnprop::attention {
using numeric::arb_ball;
template hard_output<arb_ball> hard_forward(const model::model<arb_ball>&, const input_sequence&,
                                            const numeric::context&, bool);
template soft_output<arb_ball> soft_forward(const model::model<arb_ball>&, const input_sequence&,
                                            const numeric::context&, soft_options);
} // namespace attnprop::attention
