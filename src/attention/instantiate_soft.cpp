// Explicit instantiation of the soft-attention kernel for every user kind (exact rationals for
// the exact normalisers; numeric/kind_list.hpp); soft_change.cpp instantiates it for
// differential enclosures.
#include "attention/soft.hpp"

namespace attnprop::attention {
#define ATTNPROP_INSTANTIATE(S)                                                                    \
    template soft_output<S> soft_forward(const model::model<S>&, const input_sequence&,            \
                                         const numeric::context&, soft_options);
ATTNPROP_USER_KINDS(ATTNPROP_INSTANTIATE)
#undef ATTNPROP_INSTANTIATE
} // namespace attnprop::attention
