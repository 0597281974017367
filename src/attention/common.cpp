#include "attention/common.hpp"

namespace attnprop::attention {

numeric::undefined_location place(std::size_t layer, const char* node, std::size_t position,
                                  std::size_t head) {
    numeric::undefined_location at;
    at.layer = static_cast<int>(layer);
    if (node) at.node = node;
    if (position) at.position = position;
    if (head) at.head = static_cast<int>(head);
    return at;
}

const char* to_string(verdict v) {
    switch (v) {
    case verdict::accept: return "accept";
    case verdict::reject: return "reject";
    case verdict::undecided: return "undecided";
    }
    return "?";
}

} // namespace attnprop::attention
