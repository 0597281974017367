// Explicit instantiation of the attention kernels for exact rationals.
#include "attention/hard.hpp"

namespace attnprop::attention {
template hard_output<rational> hard_forward(const model::model<rational>&, const input_sequence&,
                                            const numeric::context&, bool);
template hard_output<numeric::interval> hard_forward(const model::model<numeric::interval>&,
                                                     const input_sequence&,
                                                     const numeric::context&, bool);
} // namespace attnprop::attention
