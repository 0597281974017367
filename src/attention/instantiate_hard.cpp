// Explicit instantiation of the hard-attention kernel for every user kind (numeric/kind_list.hpp)
// and the interval filter of the exact path.
#include "attention/hard.hpp"

namespace attnprop::attention {
#define ATTNPROP_INSTANTIATE(S)                                                                    \
    template hard_output<S> hard_forward(const model::model<S>&, const input_sequence&,            \
                                         const numeric::context&, bool);
ATTNPROP_USER_KINDS(ATTNPROP_INSTANTIATE)
ATTNPROP_INSTANTIATE(numeric::interval)
#undef ATTNPROP_INSTANTIATE
} // namespace attnprop::attention
