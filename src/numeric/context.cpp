#include "numeric/context.hpp"

namespace attnprop::numeric {

void throw_bad_precision(long bits) {
    throw precision_error("working precision " + std::to_string(bits) + " bits is outside [" +
                        std::to_string(min_working_precision_bits) + ", " +
                        std::to_string(max_working_precision_bits) + "]");
}

std::string to_string(const undefined_location& where) {
    std::string s;
    auto part = [&s](const std::string& p) { s += (s.empty() ? "" : ", ") + p; };
    if (where.layer) part("layer " + std::to_string(*where.layer));
    if (!where.node.empty()) part("node '" + where.node + "'");
    if (where.head) part("head " + std::to_string(*where.head));
    if (where.position) part("position " + std::to_string(*where.position));
    return s.empty() ? "unknown place" : s;
}

undefined_error::undefined_error(std::string reason, undefined_location where,
                                 bool precision_may_resolve)
    : numeric_error("undefined at " + to_string(where) + " (" + reason + ")"),
      reason_(std::move(reason)), where_(std::move(where)), may_resolve_(precision_may_resolve) {}

undefined_error undefined_error::located(const undefined_location& outer) const {
    undefined_location w = where_;
    if (!w.layer) w.layer = outer.layer;
    if (w.node.empty()) w.node = outer.node;
    if (!w.position) w.position = outer.position;
    if (!w.head) w.head = outer.head;
    return undefined_error(reason_, std::move(w), may_resolve_);
}

std::string undefined_error::message() const { return what(); }

} // namespace attnprop::numeric
