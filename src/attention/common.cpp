#include "attention/common.hpp"

namespace attnprop::attention {

const char* to_string(verdict v) {
    switch (v) {
    case verdict::accept: return "accept";
    case verdict::reject: return "reject";
    case verdict::undecided: return "undecided";
    }
    return "?";
}

} // namespace attnprop::attention
