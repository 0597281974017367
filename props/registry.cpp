// The one list of suites. Adding a suite: write props/<suite>.cpp with its register function,
// call it here, add its rows to docs/properties.md and a test in tests/props.
#include "props/controls.hpp"
#include "props/semantics.hpp"

namespace attnprop::runner {

void register_all(registry& r) {
    props::register_semantics(r);
    props::register_controls(r);
}

} // namespace attnprop::runner
