// The one list of suites. Adding a suite: write props/<suite>.cpp with its register function,
// call it here, add its rows to docs/properties.md and a test in tests/props.
#include "props/controls.hpp"
#include "props/every_input.hpp"
#include "props/hard_limit.hpp"
#include "props/masked.hpp"
#include "props/semantics.hpp"
#include "props/soft_hard.hpp"
#include "props/soft_influence.hpp"

namespace attnprop::runner {

void register_all(registry& r) {
    props::register_semantics(r);
    props::register_controls(r);
    props::register_hard_limit(r);
    props::register_soft_influence(r);
    props::register_soft_hard(r);
    props::register_every_input(r);
    props::register_masked(r);
}

} // namespace attnprop::runner
